//! A folder's persistent index: BM25 (tantivy) + dense vectors + a manifest,
//! kept in step with the files incrementally ([`update`], in stages), and
//! queried for the chunks that answer a question ([`search`]).
//!
//! Commit order is BM25 → vectors → manifest: the manifest is the truth, so a
//! crash leaves at worst extra BM25 documents or vectors that the next run
//! replaces (delete-by-path) or prunes, and a resumed run redoes only the
//! files whose manifest entry did not land.

pub mod bm25;
pub mod dense;
pub mod dry_run;
mod error;
pub mod hybrid;
pub mod manifest;
pub mod search;
pub mod update;

use std::path::{Path, PathBuf};

use crate::ingest::{walk, Extraction, Filters};
use crate::states::States;
use bm25::Bm25;
use dense::VectorStore;
pub use error::IndexError;
pub use hybrid::Hit;
use manifest::{ChunkId, ChunkRecord, Manifest};
pub use search::{Retrieval, TopK};
pub use update::{Backlog, IndexProgress, Stage, StageTimes, UpdateReport};

/// One folder's index.
pub struct FolderIndex {
    filters: Filters,
    extraction: Extraction,
    folder: PathBuf,
    dir: PathBuf,
    manifest: Manifest,
    bm25: Bm25,
    vectors: VectorStore,
}

impl FolderIndex {
    /// Opens (or creates) the index of `folder` for chunks of `chunk_tokens`
    /// made with `states`. An index made for another model or chunk size, or a
    /// damaged one, starts over.
    pub fn open(
        folder: &Path,
        states: &States<'_>,
        chunk_tokens: usize,
    ) -> Result<Self, IndexError> {
        let folder = folder
            .canonicalize()
            .map_err(|e| IndexError::io(folder, e))?;
        Self::open_at(
            &folder,
            crate::paths::index_dir(&folder),
            states,
            chunk_tokens,
        )
    }

    /// [`Self::open`] with the index kept in `dir` rather than the cache
    /// (benchmarks index scratch folders without touching the user's cache).
    pub fn open_at(
        folder: &Path,
        dir: PathBuf,
        states: &States<'_>,
        chunk_tokens: usize,
    ) -> Result<Self, IndexError> {
        let folder = folder.to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| IndexError::io(&dir, e))?;
        let _ = std::fs::write(dir.join("folder.txt"), folder.to_string_lossy().as_bytes());
        let model = states.engine.info().id.to_string();
        let (bm25, fresh) = Bm25::open(&dir.join("bm25"))?;
        let loaded = if fresh {
            None
        } else {
            Manifest::load(&dir.join("manifest.json"), &model, chunk_tokens)
        };
        let rebuilt = loaded.is_none();
        let manifest = loaded.unwrap_or_else(|| Manifest::new(model, chunk_tokens, String::new()));
        let mut vectors = VectorStore::load(&dir.join("vectors.bin"));
        vectors.retain(|id| manifest.chunks.contains_key(&id));
        let mut index = Self {
            filters: Filters::default(),
            extraction: Extraction::default(),
            folder,
            dir,
            manifest,
            bm25,
            vectors,
        };
        if rebuilt {
            // Documents from a manifest we no longer trust must go.
            let (stale, _) = walk(&index.folder, &Filters::default())
                .map_err(|e| IndexError::io(&index.folder, e))?;
            for f in &stale {
                index.bm25.delete_path(&f.rel)?;
            }
        }
        Ok(index)
    }

    /// The same index opened afresh (after another process committed).
    pub fn reopen(&self, states: &States<'_>) -> Result<Self, IndexError> {
        let mut index = Self::open_at(
            &self.folder,
            self.dir.clone(),
            states,
            self.manifest.chunk_tokens,
        )?;
        index.set_filters(self.filters.clone());
        index.set_extraction(self.extraction.clone());
        Ok(index)
    }

    /// The include/exclude globs in force.
    pub fn filters(&self) -> &Filters {
        &self.filters
    }

    /// How files are read from the next update on: in a worker process
    /// with memory and time caps, or in this one.
    pub fn set_extraction(&mut self, extraction: Extraction) {
        self.extraction = extraction;
    }

    /// Include/exclude globs for the next updates; files they leave out are
    /// removed from the index like deleted files.
    pub fn set_filters(&mut self, filters: Filters) {
        self.filters = filters;
    }

    /// The indexed folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Number of files indexed.
    pub fn files(&self) -> usize {
        self.manifest.files.len()
    }

    /// Number of chunks indexed.
    pub fn len(&self) -> usize {
        self.manifest.chunks.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.manifest.chunks.is_empty()
    }

    pub fn bytes_on_disk(&self, states: &States<'_>) -> u64 {
        let keys: std::collections::BTreeSet<&str> = self
            .manifest
            .chunks
            .values()
            .map(|c| c.state.as_str())
            .collect();
        let state_bytes: u64 = keys
            .iter()
            .filter_map(|k| std::fs::metadata(states.store.path(k)).ok())
            .map(|m| m.len())
            .sum();
        dir_size(&self.dir) + state_bytes
    }

    /// A chunk's metadata.
    pub fn chunk(&self, id: ChunkId) -> Option<&ChunkRecord> {
        self.manifest.chunks.get(&id)
    }

    /// A chunk's text.
    pub fn text(&self, id: ChunkId) -> Result<Option<String>, IndexError> {
        self.bm25.text(id)
    }
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// State keys referenced by any folder index in the cache (what `cache gc`
/// must keep unless the budget forces eviction).
pub fn referenced_states() -> std::collections::HashSet<String> {
    let root = crate::paths::indexes_dir();
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read(d.path().join("manifest.json")).ok())
        .filter_map(|b| serde_json::from_slice::<Manifest>(&b).ok())
        .flat_map(|m| m.chunks.into_values().map(|c| c.state))
        .collect()
}
