//! Content-addressed store of chunk KV states on disk.
//!
//! The key hashes everything that changes a state: the prefix identity (which
//! covers model identity, KV type and prefix tokens), the chunk tokens and the
//! file format version. Identical chunks in different files share one entry.
//! An entry that is corrupt, truncated, stale or foreign is deleted and
//! reported as missing, so the caller re-encodes it: never used.

use std::path::{Path, PathBuf};

use crate::engine::state::FORMAT_VERSION;
use crate::engine::{ChunkState, PrefixState, StateError, TokenId};

/// What a lookup found.
pub enum Lookup {
    Hit(ChunkState),
    Miss,
    /// An unusable entry was found and removed; the reason is for the report.
    Rejected(StateError),
}

/// A directory of `<key>.kvstate` files.
pub struct KvStore {
    root: PathBuf,
}

impl KvStore {
    /// Opens (lazily creates) the store at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The store under the user's cache directory.
    pub fn default_location() -> Self {
        Self::new(crate::paths::cache_dir().join("kv"))
    }

    /// Where the state of `tokens` after `prefix` lives.
    pub fn path_for(&self, prefix: &PrefixState, tokens: &[TokenId]) -> PathBuf {
        let mut h = blake3::Hasher::new();
        h.update(&FORMAT_VERSION.to_le_bytes());
        h.update(&prefix.id().0);
        tokens.iter().for_each(|t| {
            h.update(&t.to_le_bytes());
        });
        let hex = h.finalize().to_hex();
        self.root.join(&hex[..2]).join(format!("{hex}.kvstate"))
    }

    /// Loads the state of `tokens`, checking it end to end.
    pub fn get(&self, prefix: &PrefixState, tokens: &[TokenId]) -> Lookup {
        let path = self.path_for(prefix, tokens);
        match ChunkState::load(&path, prefix) {
            Ok(s) if s.tokens() == tokens => Lookup::Hit(s),
            Ok(_) => self.reject(&path, StateError::OtherPrefix { path: path.clone() }),
            Err(StateError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Lookup::Miss
            }
            Err(e) => self.reject(&path, e),
        }
    }

    fn reject(&self, path: &Path, e: StateError) -> Lookup {
        let _ = std::fs::remove_file(path);
        Lookup::Rejected(e)
    }

    /// Stores a state atomically.
    pub fn put(&self, prefix: &PrefixState, state: &ChunkState) -> Result<PathBuf, StateError> {
        let path = self.path_for(prefix, state.tokens());
        state.save(&path)?;
        Ok(path)
    }
}
