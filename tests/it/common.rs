//! Shared fixtures: the tiny model, loaded once per test binary.

use std::path::PathBuf;
use std::sync::OnceLock;

use ape_chat::engine::{Engine, EngineOptions, PromptLayout};

/// Path of the tiny test model (`APE_CHAT_TEST_MODEL` overrides).
pub fn tiny_model_path() -> PathBuf {
    let path = std::env::var_os("APE_CHAT_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| ape_chat::paths::models_dir().join(ape_chat::paths::TINY_MODEL_FILE));
    assert!(
        path.is_file(),
        "test model {} missing: run scripts/setup.sh --tiny",
        path.display()
    );
    path
}

/// The tiny model, shared by every test in this binary.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let opts = EngineOptions {
            ctx_tokens: 4096,
            threads: 2,
            ..EngineOptions::default()
        };
        Engine::load(&tiny_model_path(), opts).expect("load tiny model")
    })
}

/// The default prompt layout of the tiny model.
pub fn layout() -> PromptLayout {
    PromptLayout::new(engine(), ape_chat::engine::prompt::DEFAULT_SYSTEM_PROMPT).expect("layout")
}

/// The embedding model installed by `scripts/setup.sh` (tests that isolate
/// the cache dir must point the binary at it).
pub fn embed_model_dir() -> PathBuf {
    ape_chat::paths::cache_dir().join("embed/all-MiniLM-L6-v2")
}

/// The ONNX Runtime library installed by `scripts/setup.sh`.
pub fn ort_lib() -> PathBuf {
    ape_chat::paths::cache_dir().join("lib/libonnxruntime.so.1.31.1")
}
