//! Where ape-chat keeps things: models and KV states live in the per-user
//! cache directory (`~/.cache/ape-chat` on Linux), never in the working tree.

use std::path::PathBuf;

/// File name of the default chat model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M)
/// as `scripts/setup.sh` installs it: chosen over the 0.5B by the rule in
/// docs/results.md ("The reader: 0.5B against 1.5B"). The 0.5B, installed
/// beside it, is one `--model` away.
pub const DEFAULT_MODEL_FILE: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";
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

/// Makes the cache and the config private to the user (0700 directories,
/// 0600 files): the indexes hold document text and the KV states encode it.
/// Run at every start, so caches made before this existed are tightened.
/// The config file's directory is tightened only when it is ape-chat's own
/// (`own_config_dir`), never a directory a user pointed `APE_CHAT_CONFIG` into.
pub fn make_private(config_file: &std::path::Path, own_config_dir: bool) -> std::io::Result<()> {
    crate::fsutil::private_dir(&cache_dir())?;
    if own_config_dir {
        if let Some(dir) = config_file.parent().filter(|d| d.exists()) {
            crate::fsutil::private_dir(dir)?;
        }
    }
    crate::fsutil::private_file(config_file)
}

/// Directory of model files installed by `scripts/setup.sh`.
pub fn models_dir() -> PathBuf {
    cache_dir().join("models")
}

/// The sentence-embedding model `scripts/setup.sh` installs.
pub fn embed_model_dir() -> PathBuf {
    cache_dir().join("embed/all-MiniLM-L6-v2")
}

/// ONNX Runtime as `scripts/setup.sh` installs it.
pub fn onnxruntime_lib() -> PathBuf {
    cache_dir().join("lib/libonnxruntime.so.1.31.1")
}

/// fastembed's own download cache (only for models it fetches itself).
pub fn fastembed_dir() -> PathBuf {
    cache_dir().join("fastembed")
}

/// Chunk states of indexed folders.
pub fn kv_dir() -> PathBuf {
    cache_dir().join("kv")
}

/// Chunk states of evaluation and calibration runs (index GC never
/// touches them).
pub fn eval_kv_dir() -> PathBuf {
    cache_dir().join("kv-eval")
}

/// The index of one (canonical) folder: named by a hash of its path.
pub fn index_dir(folder: &std::path::Path) -> PathBuf {
    let hash = blake3::hash(folder.to_string_lossy().as_bytes()).to_hex();
    indexes_dir().join(&hash[..16])
}

/// The TUI's saved conversation of a (canonical) folder, beside its index.
pub fn chat_history(folder: &std::path::Path) -> PathBuf {
    index_dir(folder).join("chat.json")
}

/// One directory per indexed folder.
pub fn indexes_dir() -> PathBuf {
    cache_dir().join("indexes")
}

/// Evaluation results (resumable JSON Lines).
pub fn eval_results_dir() -> PathBuf {
    cache_dir().join("eval")
}

/// What each model's calibration used (for evaluation's overlap warning).
pub fn calibrations_dir() -> PathBuf {
    cache_dir().join("calibrations")
}

/// Evaluation data from `scripts/setup.sh --eval-data`.
pub fn squad_file() -> PathBuf {
    cache_dir().join("data/squad-v2-dev.json")
}

/// SQuAD written out as a folder of paragraph files (retrieval benchmark).
pub fn squad_folder() -> PathBuf {
    cache_dir().join("data/squad-v2-dev-folder")
}

/// What each running process holds in its memory tiers (`cache stats`).
pub fn tiers_dir() -> PathBuf {
    cache_dir().join("tiers")
}

/// The machine-wide compute locks ([`crate::compute`]).
pub fn locks_dir() -> PathBuf {
    cache_dir().join("locks")
}

/// The model used when none is given (the CLI reads `--model` and
/// `APE_CHAT_MODEL` first).
pub fn default_model() -> PathBuf {
    models_dir().join(DEFAULT_MODEL_FILE)
}
