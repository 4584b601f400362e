//! Settings in layers: built-in defaults → TOML file → `APE_CHAT_*`
//! environment variables → command-line flags. The CLI parses flags and env
//! (clap), then fills what is still unset from the file; built-in defaults
//! apply last. The file lives in the platform config dir
//! (`~/.config/ape-chat/config.toml` on Linux; `APE_CHAT_CONFIG` overrides)
//! and is written, fully commented, on first run.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The TOML file's settings; every key is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    /// Folders you chat with; the first is used when no DIR is given.
    pub folders: Vec<PathBuf>,
    pub model: Option<PathBuf>,
    pub embed_model: Option<PathBuf>,
    pub ort_lib: Option<PathBuf>,
    pub temperature_ape: Option<f32>,
    pub scale_ape: Option<f32>,
    pub system_prompt: Option<String>,
    pub chunk_tokens: Option<usize>,
    pub top_k: Option<usize>,
    pub cache_budget_gb: Option<f64>,
    pub threads: Option<usize>,
    pub gpu_layers: Option<u32>,
}

/// A config file that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// Where the config file is read from.
pub fn path() -> PathBuf {
    if let Some(p) = std::env::var_os("APE_CHAT_CONFIG") {
        return PathBuf::from(p);
    }
    directories::ProjectDirs::from("", "", "ape-chat")
        .map(|d| d.config_dir().join("config.toml"))
        .unwrap_or_else(|| PathBuf::from("ape-chat.toml"))
}

/// Loads the config file, writing the commented template if there is none
/// (best effort: a read-only home just means no file).
pub fn load() -> Result<FileConfig, ConfigError> {
    load_from(&path())
}

/// [`load`] for an explicit path.
pub fn load_from(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let _ = crate::fsutil::write_atomic(path, &[TEMPLATE.as_bytes()]);
            return Ok(FileConfig::default());
        }
        Err(source) => {
            return Err(ConfigError::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// The file written on first run: every setting, commented out, with its
/// default and the environment variable that overrides it.
pub const TEMPLATE: &str = r#"# ape-chat configuration. Precedence: built-in defaults < this file <
# APE_CHAT_* environment variables < command-line flags.

# Folders you chat with; the first is used when no DIR is given.
# folders = ["~/docs"]

# Chat model (GGUF). Default: the model installed by scripts/setup.sh.  [APE_CHAT_MODEL]
# model = "/path/to/model.gguf"

# Sentence-embedding model directory and ONNX Runtime library.  [APE_CHAT_EMBED_MODEL, ORT_DYLIB_PATH]
# embed_model = "/path/to/all-MiniLM-L6-v2"
# ort_lib = "/path/to/libonnxruntime.so"

# APE attention temperature T and scale S.  [APE_CHAT_TEMPERATURE_APE, APE_CHAT_SCALE_APE]
# temperature_ape = 0.9
# scale_ape = 0.9

# System prompt: part of the shared prefix every chunk state is encoded
# after; changing it re-encodes the cache.  [APE_CHAT_SYSTEM_PROMPT]
# system_prompt = "You are a helpful assistant. ..."

# Chunk size in model tokens and chunks retrieved per question.  [APE_CHAT_CHUNK_TOKENS, APE_CHAT_TOP_K]
# chunk_tokens = 256
# top_k = 5

# KV-state cache budget in GB (least recently used states are evicted).  [APE_CHAT_CACHE_BUDGET_GB]
# cache_budget_gb = 20.0

# CPU threads and GPU layers (CUDA builds).  [APE_CHAT_THREADS, APE_CHAT_GPU_LAYERS]
# threads = 4
# gpu_layers = 0
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_run_writes_a_template_that_parses_to_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub/config.toml");
        assert_eq!(load_from(&p).expect("load"), FileConfig::default());
        assert!(std::fs::read_to_string(&p)
            .expect("written")
            .contains("# top_k = 5"));
        assert_eq!(load_from(&p).expect("reload"), FileConfig::default());
    }

    #[test]
    fn values_typos_and_syntax_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "top_k = 3\nfolders = [\"/srv/docs\"]\n").expect("write");
        let c = load_from(&p).expect("load");
        assert_eq!((c.top_k, c.folders.len()), (Some(3), 1));
        std::fs::write(&p, "topk = 3\n").expect("write");
        let e = load_from(&p).expect_err("unknown key").to_string();
        assert!(e.contains("c.toml") && e.contains("topk"), "{e}");
        std::fs::write(&p, "top_k = \n").expect("write");
        assert!(load_from(&p).is_err());
    }
}
