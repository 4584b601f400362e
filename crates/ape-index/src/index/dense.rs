//! Dense retrieval: sentence embeddings (fastembed, all-MiniLM-L6-v2 by
//! default, run by an ONNX Runtime loaded at run time) in a flat vector file,
//! searched by brute-force cosine similarity.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fastembed::{
    EmbeddingModel, InitOptionsUserDefined, Pooling, TextEmbedding, TextInitOptions,
    TokenizerFiles, UserDefinedEmbeddingModel,
};

use super::manifest::ChunkId;
use super::IndexError;
use crate::fsutil::write_atomic;

/// Where the embedding model and ONNX Runtime come from.
#[derive(Clone, Debug)]
pub struct EmbedOptions {
    /// Directory with `model.onnx`, `tokenizer.json`, `config.json`,
    /// `special_tokens_map.json`, `tokenizer_config.json`.
    pub model_dir: PathBuf,
    /// `libonnxruntime.so`; found automatically when `None`.
    pub ort_lib: Option<PathBuf>,
    /// ONNX Runtime intra-op threads: every core by default, as llama.cpp
    /// gets them. The vectors stage is a unit of background work like a
    /// state encoding, never beside one, so the two never share cores.
    pub threads: usize,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self {
            // The CLI passes `--embed-model` / APE_CHAT_EMBED_MODEL (clap
            // reads the variable); the library only knows the default.
            model_dir: crate::paths::embed_model_dir(),
            ort_lib: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// The given library (the CLI's `--ort-lib` / `ORT_DYLIB_PATH`), next to
/// the binary, then the cache's `lib/`.
fn find_ort(explicit: Option<&Path>) -> Result<PathBuf, IndexError> {
    let mut candidates: Vec<PathBuf> = explicit.map(Path::to_path_buf).into_iter().collect();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.push(dir.join("libonnxruntime.so"));
    }
    candidates.push(crate::paths::onnxruntime_lib());
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        IndexError::Embed(
            "ONNX Runtime (libonnxruntime.so ≥ 1.24) not found: run scripts/setup.sh, or set ORT_DYLIB_PATH".into(),
        )
    })
}

/// ONNX Runtime can be loaded once per process.
fn environment(lib: &Path) -> Result<ort::environment::Environment, IndexError> {
    static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        ort::init_from(lib)
            .map_err(|e| format!("loading ONNX Runtime from {}: {e}", lib.display()))?
            .with_name("ape-chat")
            .build()
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(IndexError::Embed)
}

/// A loaded sentence-embedding model.
pub struct Embedder {
    model: TextEmbedding,
}

impl Embedder {
    /// Loads the model from `model_dir`; if that directory is absent, falls
    /// back to fastembed's own download (into our cache dir) for users online.
    pub fn load(o: &EmbedOptions) -> Result<Self, IndexError> {
        let env = environment(&find_ort(o.ort_lib.as_deref())?)?;
        let model = if o.model_dir.join("model.onnx").is_file() {
            let read = |name: &str| {
                let p = o.model_dir.join(name);
                std::fs::read(&p).map_err(|e| IndexError::io(&p, e))
            };
            let files = TokenizerFiles {
                tokenizer_file: read("tokenizer.json")?,
                config_file: read("config.json")?,
                special_tokens_map_file: read("special_tokens_map.json")?,
                tokenizer_config_file: read("tokenizer_config.json")?,
            };
            let user = UserDefinedEmbeddingModel::new(read("model.onnx")?, files)
                .with_pooling(Pooling::Mean);
            let init = InitOptionsUserDefined::new()
                .with_environment(env)
                .with_intra_threads(o.threads);
            TextEmbedding::try_new_from_user_defined(user, init)
        } else {
            let init = TextInitOptions::new(EmbeddingModel::AllMiniLML6V2)
                .with_cache_dir(crate::paths::fastembed_dir())
                .with_environment(env)
                .with_intra_threads(o.threads)
                .with_show_download_progress(false);
            TextEmbedding::try_new(init)
        }
        .map_err(|e| {
            IndexError::Embed(format!("embedding model {}: {e}", o.model_dir.display()))
        })?;
        Ok(Self { model })
    }

    /// L2-normalised embeddings of `texts`.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, IndexError> {
        let mut out = self
            .model
            .embed(texts, Some(16))
            .map_err(|e| IndexError::Embed(e.to_string()))?;
        out.iter_mut().for_each(|v| normalize(v));
        Ok(out)
    }
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

const MAGIC: &[u8; 8] = b"APEVEC01";

/// Chunk vectors, persisted as one checksummed file. A damaged file loads as
/// empty and the index re-embeds (vectors are derived data).
pub struct VectorStore {
    path: PathBuf,
    vectors: BTreeMap<ChunkId, Vec<f32>>,
}

impl VectorStore {
    /// Loads `path` (empty if absent or damaged).
    pub fn load(path: &Path) -> Self {
        let vectors = std::fs::read(path)
            .ok()
            .and_then(|b| decode(&b))
            .unwrap_or_default();
        Self {
            path: path.to_path_buf(),
            vectors,
        }
    }

    pub fn contains(&self, id: ChunkId) -> bool {
        self.vectors.contains_key(&id)
    }

    pub fn insert(&mut self, id: ChunkId, v: Vec<f32>) {
        self.vectors.insert(id, v);
    }

    /// Drops vectors whose chunk no longer exists.
    pub fn retain(&mut self, keep: impl Fn(ChunkId) -> bool) {
        self.vectors.retain(|id, _| keep(*id));
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Ids of the `k` vectors most similar to `query` (normalised).
    pub fn search(&self, query: &[f32], k: usize) -> Vec<ChunkId> {
        let mut scored: Vec<(f32, ChunkId)> = self
            .vectors
            .iter()
            .map(|(id, v)| (v.iter().zip(query).map(|(a, b)| a * b).sum(), *id))
            .collect();
        let k = k.min(scored.len());
        if k == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(k);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, id)| id).collect()
    }

    /// Writes atomically.
    pub fn save(&self) -> std::io::Result<()> {
        let dim = self.vectors.values().next().map_or(0, Vec::len);
        let mut body = Vec::with_capacity(self.vectors.len() * (8 + 4 * dim));
        for (id, v) in &self.vectors {
            body.extend_from_slice(&id.to_le_bytes());
            v.iter()
                .for_each(|x| body.extend_from_slice(&x.to_le_bytes()));
        }
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&(dim as u32).to_le_bytes());
        head.extend_from_slice(&(self.vectors.len() as u64).to_le_bytes());
        head.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        write_atomic(&self.path, &[&head, &body])
    }
}

fn decode(b: &[u8]) -> Option<BTreeMap<ChunkId, Vec<f32>>> {
    if b.len() < 24 || &b[..8] != MAGIC {
        return None;
    }
    let dim = u32::from_le_bytes(b[8..12].try_into().ok()?) as usize;
    let n = u64::from_le_bytes(b[12..20].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(b[20..24].try_into().ok()?);
    let body = &b[24..];
    if body.len() != n.checked_mul(8 + 4 * dim)? || crc32fast::hash(body) != crc {
        return None;
    }
    Some(
        body.chunks_exact(8 + 4 * dim)
            .filter_map(|r| {
                let id = u64::from_le_bytes(r[..8].try_into().ok()?);
                let v = r[8..]
                    .chunks_exact(4)
                    .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
                    .collect();
                Some((id, v))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_and_damage_loads_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("v.bin");
        let mut s = VectorStore::load(&p);
        s.insert(3, vec![1.0, 0.0]);
        s.insert(9, vec![0.6, 0.8]);
        s.insert(5, vec![0.0, 1.0]);
        s.save().expect("save");
        let back = VectorStore::load(&p);
        assert_eq!(back.search(&[0.0, 1.0], 2), [5, 9]);
        let mut bytes = std::fs::read(&p).expect("read");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&p, bytes).expect("write");
        assert!(VectorStore::load(&p).is_empty());
    }
}
