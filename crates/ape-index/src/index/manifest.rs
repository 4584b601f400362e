//! What the index knows about each file: size, mtime and content hash, and
//! the chunks it produced. Written last in every commit, so after a crash it
//! never claims work that did not reach the other stores.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fsutil::write_atomic;
use crate::ingest::Place;

/// Bump when the manifest's meaning changes; an older manifest is rebuilt.
pub const MANIFEST_VERSION: u32 = 1;

/// Stable id of a chunk in this index (BM25 doc, vector and manifest key).
pub type ChunkId = u64;

/// Everything recorded per indexed file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    pub size: u64,
    pub mtime_ns: u128,
    /// blake3 of the file's bytes.
    pub hash: String,
    pub chunks: Vec<ChunkId>,
    /// How it was read ([`crate::ingest::extract::reading`]): a file read
    /// the way an older build read it is read again.
    #[serde(default)]
    pub reading: u32,
    /// The signature of what it says ([`crate::ingest::documents::text_signature`]),
    /// by which a later file that says the same is known as its copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A chunk's metadata (its text lives in the BM25 store).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredChunk")]
pub struct ChunkRecord {
    pub path: String,
    pub lines: (usize, usize),
    pub heading: Vec<String>,
    /// Its page, slide, sheet rows, chapter… where the format has units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
    /// Tokens the chunk encodes to.
    pub tokens: usize,
    /// Key of its KV state in the state store.
    pub state: String,
}

/// A [`ChunkRecord`] as read: manifests written before places were
/// recorded have a PDF's `pages` instead of `place`, read into it.
#[derive(Deserialize)]
struct StoredChunk {
    path: String,
    lines: (usize, usize),
    heading: Vec<String>,
    #[serde(default)]
    place: Option<Place>,
    #[serde(default)]
    pages: Option<(usize, usize)>,
    tokens: usize,
    state: String,
}

impl From<StoredChunk> for ChunkRecord {
    fn from(c: StoredChunk) -> Self {
        Self {
            path: c.path,
            lines: c.lines,
            heading: c.heading,
            place: c.place.or(c.pages.map(Place::pages)),
            tokens: c.tokens,
            state: c.state,
        }
    }
}

/// The index's persistent bookkeeping.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    /// What the chunks depend on: LLM identity, chunk size, shared prefix.
    pub model: String,
    pub chunk_tokens: usize,
    pub prefix: String,
    pub next_id: ChunkId,
    pub files: BTreeMap<String, FileRecord>,
    pub chunks: BTreeMap<ChunkId, ChunkRecord>,
    /// Files that could not be read, and why: not read again (a reader
    /// that took a minute to fail would take it on every pass) until their
    /// size, mtime or reader changes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, SkippedFile>,
}

/// A file that could not be read, as it was when it failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub size: u64,
    pub mtime_ns: u128,
    pub reading: u32,
    pub reason: String,
    /// The indexed file this one copies: it is read again when that one
    /// changes or goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<String>,
}

impl Manifest {
    /// An empty manifest for this model, chunk size and prefix.
    pub fn new(model: String, chunk_tokens: usize, prefix: String) -> Self {
        Self {
            version: MANIFEST_VERSION,
            model,
            chunk_tokens,
            prefix,
            next_id: 1,
            files: BTreeMap::new(),
            chunks: BTreeMap::new(),
            skipped: BTreeMap::new(),
        }
    }

    /// Loads the manifest at `path`; `None` if absent, unreadable, of another
    /// version, or made for another model/chunk size (the caller rebuilds).
    pub fn load(path: &Path, model: &str, chunk_tokens: usize) -> Option<Self> {
        let bytes = std::fs::read(path).ok()?;
        let m: Manifest = serde_json::from_slice(&bytes).ok()?;
        (m.version == MANIFEST_VERSION && m.model == model && m.chunk_tokens == chunk_tokens)
            .then_some(m)
    }

    /// Writes atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        write_atomic(path, &[&json])
    }

    /// Forgets `path` and its chunks; returns the removed chunk ids.
    pub fn remove_file(&mut self, path: &str) -> Vec<ChunkId> {
        let ids = self
            .files
            .remove(path)
            .map(|f| f.chunks)
            .unwrap_or_default();
        for id in &ids {
            self.chunks.remove(id);
        }
        ids
    }

    /// A fresh chunk id.
    pub fn allocate(&mut self) -> ChunkId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_or_foreign_manifests_are_not_loaded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("manifest.json");
        let mut m = Manifest::new("m1".into(), 256, "p".into());
        let id = m.allocate();
        m.files.insert(
            "a.md".into(),
            FileRecord {
                chunks: vec![id],
                ..Default::default()
            },
        );
        m.save(&p).expect("save");
        assert!(Manifest::load(&p, "m1", 256).is_some());
        assert!(Manifest::load(&p, "m2", 256).is_none());
        assert!(Manifest::load(&p, "m1", 128).is_none());
        std::fs::write(&p, "{ not json").expect("write");
        assert!(Manifest::load(&p, "m1", 256).is_none());
    }

    #[test]
    fn page_ranges_of_older_manifests_read_as_places() {
        let old =
            r#"{"path":"r.pdf","lines":[1,9],"heading":[],"pages":[2,3],"tokens":9,"state":"k"}"#;
        let c: ChunkRecord = serde_json::from_str(old).expect("old record");
        assert_eq!(
            c.place.as_ref().map(|p| p.to_string()).as_deref(),
            Some("pp. 2–3")
        );
        let again: ChunkRecord =
            serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("new record");
        assert_eq!(again, c);
        assert!(!serde_json::to_string(&c).expect("json").contains("pages"));
    }
}
