//! What can go wrong with a folder's index.

use std::path::{Path, PathBuf};

use crate::engine::EngineError;

/// Index failures callers branch on (`Cancelled` is a clean stop).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("BM25 index: {0}")]
    Bm25(String),
    #[error("another ape-chat process is updating this folder's index")]
    Busy,
    #[error("{path} is not an indexed file of this folder{hint}")]
    NoSuchFile { path: String, hint: String },
    #[error("this question would read {chunks} chunks; at most {max} are allowed per request here (ask for fewer, or raise --max-request-chunks)")]
    TooManyChunks { chunks: usize, max: usize },
    #[error("embeddings: {0}")]
    Embed(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl IndexError {
    pub fn io(path: &Path, error: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}
