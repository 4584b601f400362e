//! Where ape-chat keeps things: models and KV states live in the per-user
//! cache directory (`~/.cache/ape-chat` on Linux), never in the working tree.

use std::path::PathBuf;

/// File name of the default chat model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M)
/// as `scripts/setup.sh` installs it.
pub const DEFAULT_MODEL_FILE: &str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
/// File name of the tiny test model (SmolLM2-135M-Instruct Q4_1).
pub const TINY_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The cache root: `$APE_CHAT_CACHE_DIR`, else the platform cache dir.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("APE_CHAT_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("", "", "ape-chat")
        .map(|d| d.cache_dir().to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("ape-chat"))
}

/// Directory of model files installed by `scripts/setup.sh`.
pub fn models_dir() -> PathBuf {
    cache_dir().join("models")
}

/// The model used when none is given: `$APE_CHAT_MODEL`, else the default.
pub fn default_model() -> PathBuf {
    std::env::var_os("APE_CHAT_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| models_dir().join(DEFAULT_MODEL_FILE))
}
