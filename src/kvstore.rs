//! Content-addressed store of chunk KV states on disk.
//!
//! The key hashes everything that changes a state: the prefix identity (which
//! covers model identity, KV type and prefix tokens), the chunk tokens and the
//! file format version. Identical chunks in different files share one entry.
//! An entry that is corrupt, truncated, stale or foreign is deleted and
//! reported, so the caller re-encodes it: never used.

use std::path::PathBuf;

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

    /// The key of the state of `tokens` after `prefix`.
    pub fn key(&self, prefix: &PrefixState, tokens: &[TokenId]) -> String {
        let mut h = blake3::Hasher::new();
        h.update(&FORMAT_VERSION.to_le_bytes());
        h.update(&prefix.id().0);
        tokens.iter().for_each(|t| {
            h.update(&t.to_le_bytes());
        });
        h.finalize().to_hex().to_string()
    }

    /// Where the entry for `key` lives.
    pub fn path(&self, key: &str) -> PathBuf {
        self.root
            .join(key.get(..2).unwrap_or("xx"))
            .join(format!("{key}.kvstate"))
    }

    /// Loads entry `key`, checked end to end: checksums, model and prefix
    /// identity, and that its tokens hash to `key`.
    pub fn get(&self, prefix: &PrefixState, key: &str) -> Lookup {
        let path = self.path(key);
        let reject = |e: StateError| {
            let _ = std::fs::remove_file(&path);
            Lookup::Rejected(e)
        };
        match ChunkState::load(&path, prefix) {
            Ok(s) if self.key(prefix, s.tokens()) == key => Lookup::Hit(s),
            Ok(_) => reject(StateError::OtherPrefix { path: path.clone() }),
            Err(StateError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                Lookup::Miss
            }
            Err(e) => reject(e),
        }
    }

    /// Stores a state atomically under its key.
    pub fn put(&self, prefix: &PrefixState, state: &ChunkState) -> Result<String, StateError> {
        let key = self.key(prefix, state.tokens());
        state.save(&self.path(&key))?;
        Ok(key)
    }
}
