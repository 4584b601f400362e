//! What ape-chat needs to know about a GGUF model before trusting APE on it,
//! and the identity that keys cached KV states to the exact model file.

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Serialize;

/// Content identity of a model file: size plus a hash of its first and last
/// 8 MiB (the GGUF header, metadata and the outer tensors). Renaming or moving
/// the file keeps it; re-quantising or editing the file changes it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModelId(pub [u8; 32]);

impl ModelId {
    const SAMPLE: u64 = 8 << 20;

    /// Reads the identity of the file at `path`.
    pub fn of_file(path: &Path) -> std::io::Result<Self> {
        let mut f = File::open(path)?;
        let size = f.metadata()?.len();
        let mut h = blake3::Hasher::new();
        h.update(b"ape-chat model id v1");
        h.update(&size.to_le_bytes());
        let mut buf = vec![0u8; Self::SAMPLE.min(size) as usize];
        f.read_exact(&mut buf)?;
        h.update(&buf);
        if size > Self::SAMPLE {
            let tail = Self::SAMPLE.min(size - Self::SAMPLE);
            f.seek(SeekFrom::Start(size - tail))?;
            buf.resize(tail as usize, 0);
            f.read_exact(&mut buf)?;
            h.update(&buf);
        }
        Ok(Self(*h.finalize().as_bytes()))
    }

    /// Short hex form for messages and file names.
    pub fn short(&self) -> String {
        self.to_string()[..16].to_string()
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ModelId({})", self.short())
    }
}

impl Serialize for ModelId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Architectures whose attention ape-chat has verified: plain causal
/// attention, softmax scale `1/sqrt(head_dim)`, no sliding window, no
/// soft-capping.
pub const APE_ARCHITECTURES: &[&str] = &["llama", "qwen2", "qwen3"];

/// The facts about a loaded model that decide whether APE is safe on it.
#[derive(Clone, Debug, Serialize)]
pub struct ModelInfo {
    pub architecture: String,
    pub name: Option<String>,
    pub n_layer: u32,
    pub n_head: u32,
    pub n_head_kv: u32,
    pub head_dim: u32,
    pub n_ctx_train: u32,
    pub n_vocab: i32,
    pub n_params: u64,
    pub file_bytes: u64,
    pub sliding_window: Option<u32>,
    pub attn_softcap: Option<f32>,
    pub has_chat_template: bool,
    pub id: ModelId,
}

impl ModelInfo {
    /// The scale llama.cpp's softmax applies to `kq` for this model.
    pub fn kq_scale(&self) -> f32 {
        1.0 / (self.head_dim as f32).sqrt()
    }

    /// Whether APE's attention edit is known to be exact for this model, and
    /// if not, why not. The eval callback re-checks the softmax at run time.
    pub fn ape_support(&self) -> Result<(), String> {
        if !APE_ARCHITECTURES.contains(&self.architecture.as_str()) {
            return Err(format!(
                "architecture `{}` is not verified for APE (supported: {})",
                self.architecture,
                APE_ARCHITECTURES.join(", ")
            ));
        }
        if let Some(w) = self.sliding_window {
            return Err(format!(
                "sliding-window attention (window {w}) is not supported"
            ));
        }
        if let Some(c) = self.attn_softcap {
            return Err(format!(
                "attention logit soft-capping ({c}) is not supported"
            ));
        }
        Ok(())
    }
}

/// Checks the GGUF magic so a wrong file gets a clear error before llama.cpp
/// sees it.
pub fn is_gguf(path: &Path) -> std::io::Result<bool> {
    let mut magic = [0u8; 4];
    let mut f = File::open(path)?;
    Ok(f.read_exact(&mut magic).is_ok() && &magic == b"GGUF")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(arch: &str) -> ModelInfo {
        ModelInfo {
            architecture: arch.into(),
            name: None,
            n_layer: 2,
            n_head: 4,
            n_head_kv: 2,
            head_dim: 64,
            n_ctx_train: 4096,
            n_vocab: 100,
            n_params: 1,
            file_bytes: 1,
            sliding_window: None,
            attn_softcap: None,
            has_chat_template: true,
            id: ModelId([0; 32]),
        }
    }

    #[test]
    fn only_plain_attention_of_known_architectures_is_supported() {
        assert!(info("qwen2").ape_support().is_ok());
        assert_eq!(info("qwen2").kq_scale(), 0.125);
        let e = info("gemma3").ape_support().unwrap_err();
        assert!(e.contains("gemma3"), "{e}");
        let mut swa = info("llama");
        swa.sliding_window = Some(4096);
        assert!(swa.ape_support().unwrap_err().contains("sliding-window"));
        let mut capped = info("llama");
        capped.attn_softcap = Some(50.0);
        assert!(capped.ape_support().unwrap_err().contains("soft-capping"));
    }

    #[test]
    fn identity_depends_on_content_not_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&a, vec![7u8; 20 << 20]).expect("write");
        std::fs::copy(&a, &b).expect("copy");
        let mut other = vec![7u8; 20 << 20];
        other[(20 << 20) - 1] = 8; // last byte differs
        std::fs::write(&c, other).expect("write");
        let id = |p: &Path| ModelId::of_file(p).expect("id");
        assert_eq!(id(&a), id(&b));
        assert_ne!(id(&a), id(&c));
    }
}
