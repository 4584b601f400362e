//! What ape-chat needs to know about a GGUF model before trusting APE on it,
//! and the identity that keys cached KV states to the exact model file.

use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Serialize;

/// Content identity of a model file: its size, the whole GGUF header (every
/// metadata key and tensor description), and 256 blocks sampled evenly
/// through the tensor data. Renaming or moving the file keeps it; two
/// fine-tunes of one base model differ in every sampled block, so they never
/// share cached states. Reads about 4 MiB whatever the model's size.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModelId(pub [u8; 32]);

impl ModelId {
    const SAMPLES: u64 = 256;
    const BLOCK: u64 = 16 << 10;
    /// Headers are hashed whole up to this size (GGUF vocabularies make them
    /// megabytes); a malformed one is hashed to here.
    const MAX_HEADER: u64 = 64 << 20;

    /// Reads the identity of the file at `path`.
    pub fn of_file(path: &Path) -> std::io::Result<Self> {
        let mut f = File::open(path)?;
        let size = f.metadata()?.len();
        let header = gguf_header_len(&mut f)
            .unwrap_or(8 << 20)
            .min(Self::MAX_HEADER)
            .min(size);
        let mut h = blake3::Hasher::new();
        h.update(b"ape-chat model id v2");
        h.update(&size.to_le_bytes());
        f.seek(SeekFrom::Start(0))?;
        let mut buf = vec![0u8; header as usize];
        f.read_exact(&mut buf)?;
        h.update(&buf);
        let data = size - header;
        buf.resize(Self::BLOCK.min(data) as usize, 0);
        for i in 0..Self::SAMPLES.min(data) {
            let at = header + (data - buf.len() as u64) * i / (Self::SAMPLES - 1).max(1);
            f.seek(SeekFrom::Start(at))?;
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

/// Bytes from the start of a GGUF file to the end of its tensor
/// descriptions (magic, version, counts, every metadata key and value, every
/// tensor's name, shape, type and offset); `None` if it is not one.
fn gguf_header_len(f: &mut File) -> Option<u64> {
    let mut r = std::io::BufReader::new(f);
    let mut n = [0u8; 8];
    let mut u64_ = |r: &mut std::io::BufReader<&mut File>| -> Option<u64> {
        r.read_exact(&mut n).ok()?;
        Some(u64::from_le_bytes(n))
    };
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).ok()?;
    if &magic[..4] != b"GGUF" {
        return None;
    }
    let (tensors, kvs) = (u64_(&mut r)?, u64_(&mut r)?);
    let mut skip = |r: &mut std::io::BufReader<&mut File>, bytes: u64| -> Option<()> {
        std::io::copy(&mut r.by_ref().take(bytes), &mut std::io::sink())
            .ok()
            .filter(|&c| c == bytes)
            .map(|_| ())
    };
    fn u32_(r: &mut impl Read) -> Option<u32> {
        let mut b = [0u8; 4];
        r.read_exact(&mut b).ok()?;
        Some(u32::from_le_bytes(b))
    }
    // Skips one value of GGUF type `t` (arrays recursively).
    fn value(
        r: &mut std::io::BufReader<&mut File>,
        t: u32,
        skip: &mut dyn FnMut(&mut std::io::BufReader<&mut File>, u64) -> Option<()>,
    ) -> Option<()> {
        let mut b8 = [0u8; 8];
        match (t, fixed_size(t)) {
            (_, Some(n)) => skip(r, n),
            (8, _) => {
                r.read_exact(&mut b8).ok()?;
                skip(r, u64::from_le_bytes(b8))
            }
            (9, _) => {
                let inner = u32_(r)?;
                r.read_exact(&mut b8).ok()?;
                let count = u64::from_le_bytes(b8);
                match fixed_size(inner) {
                    Some(n) => skip(r, n.checked_mul(count)?),
                    None => (0..count).try_for_each(|_| value(r, inner, skip)),
                }
            }
            _ => None,
        }
    }
    fn fixed_size(t: u32) -> Option<u64> {
        match t {
            0 | 1 | 7 => Some(1),
            2 | 3 => Some(2),
            4..=6 => Some(4),
            10..=12 => Some(8),
            _ => None,
        }
    }
    for _ in 0..kvs {
        value(&mut r, 8, &mut skip)?; // key
        let t = u32_(&mut r)?;
        value(&mut r, t, &mut skip)?;
    }
    for _ in 0..tensors {
        value(&mut r, 8, &mut skip)?; // name
        let dims = u32_(&mut r)?;
        skip(&mut r, 8 * u64::from(dims) + 4 + 8)?; // shape, type, offset
    }
    r.stream_position().ok()
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

    /// A GGUF file: one string key, one tensor description, then `data`.
    fn gguf(value: &str, data: &[u8]) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&1u64.to_le_bytes()); // tensors
        b.extend_from_slice(&2u64.to_le_bytes()); // keys
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend_from_slice(&(s.len() as u64).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
        };
        string(&mut b, "general.name");
        b.extend_from_slice(&8u32.to_le_bytes());
        string(&mut b, value);
        string(&mut b, "tokenizer.ggml.scores");
        b.extend_from_slice(&9u32.to_le_bytes());
        b.extend_from_slice(&6u32.to_le_bytes());
        b.extend_from_slice(&3u64.to_le_bytes());
        b.extend_from_slice(&[0u8; 12]);
        string(&mut b, "token_embd.weight");
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&[4u8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&[0u8; 12]); // type, offset
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn the_gguf_header_is_measured_exactly() {
        let file = gguf("base", &[9u8; 100]);
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("m.gguf");
        std::fs::write(&p, &file).expect("write");
        let len = gguf_header_len(&mut File::open(&p).expect("open"));
        assert_eq!(len, Some(file.len() as u64 - 100));
        std::fs::write(&p, b"not a model").expect("write");
        assert_eq!(gguf_header_len(&mut File::open(&p).expect("open")), None);
    }

    #[test]
    fn identity_depends_on_content_not_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let data: Vec<u8> = (0..40u32 << 20).map(|i| (i % 251) as u8).collect();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).expect("write");
            ModelId::of_file(&p).expect("id")
        };
        let base = write("a.gguf", &gguf("base", &data));
        assert_eq!(base, write("renamed.gguf", &gguf("base", &data)));
        // Different metadata, same tensors.
        assert_ne!(base, write("b.gguf", &gguf("tuned", &data)));
        // Same metadata, a fine-tune's tensors: differ from the middle on
        // (neither the header nor the first and last 8 MiB see it).
        let mut tuned = data.clone();
        tuned[16 << 20..24 << 20].iter_mut().for_each(|b| *b ^= 1);
        assert_ne!(base, write("c.gguf", &gguf("base", &tuned)));
        // Not GGUF at all still gets an identity.
        assert_ne!(write("d", &data), write("e", &tuned));
    }
}
