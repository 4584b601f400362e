//! A folder's persistent index: BM25 (tantivy) + dense vectors + a manifest,
//! kept in step with the files incrementally, and every chunk's KV state in
//! the state store.
//!
//! Commit order is BM25 → vectors → manifest: the manifest is the truth, so a
//! crash leaves at worst extra BM25 documents or vectors that the next run
//! replaces (delete-by-path) or prunes, and a resumed run redoes only the
//! files whose manifest entry did not land.

pub mod bm25;
pub mod dense;
pub mod hybrid;
pub mod manifest;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::engine::{EngineError, Session};
use crate::ingest::{
    chunk_document, extract::extract, walk, Chunk, Document, FileEntry, Filters, Skipped,
};
use crate::states::States;
use bm25::Bm25;
use dense::{Embedder, VectorStore};
pub use hybrid::Hit;
use manifest::{ChunkId, ChunkRecord, FileRecord, Manifest};

/// Index failures callers branch on (`Cancelled` is a clean stop).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("BM25 index: {0}")]
    Bm25(String),
    #[error("another ape-chat process is updating this folder's index")]
    Busy,
    #[error("embeddings: {0}")]
    Embed(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl IndexError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Long work, reported as it happens.
pub enum IndexProgress<'a> {
    /// A file could not be indexed.
    Skipped(&'a Skipped),
    /// Chunks embedded and states encoded so far, of `total` new chunks.
    Chunks { done: usize, total: usize },
}

/// What an update did, for people (`index`) and scripts (`index --json`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct UpdateReport {
    pub files_seen: usize,
    pub files_indexed: usize,
    pub files_unchanged: usize,
    pub files_removed: usize,
    pub files_skipped: Vec<Skipped>,
    pub chunks: usize,
    pub chunks_added: usize,
    pub chunks_removed: usize,
    pub tokens: usize,
    pub chunks_embedded: usize,
    pub chunks_encoded: usize,
    pub cache_hits: usize,
    /// States left to be encoded on first use (`index --no-states`).
    pub states_deferred: usize,
    pub bytes_on_disk: u64,
    /// What the cache budget check after the update removed.
    pub gc: Option<crate::kvstore::GcReport>,
    pub cancelled: bool,
    pub timings_ms: StageTimes,
}

/// Milliseconds per stage.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTimes {
    pub walk: f64,
    pub extract_chunk: f64,
    pub bm25: f64,
    pub embed: f64,
    pub encode: f64,
    pub commit: f64,
    pub total: f64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A changed file, read and chunked, waiting for its per-file commit.
struct Pending {
    entry: FileEntry,
    hash: String,
    chunks: Vec<Chunk>,
}

/// One folder's index.
pub struct FolderIndex {
    /// Encode missing KV states during updates (else: on first use).
    encode_states: bool,
    filters: Filters,
    folder: PathBuf,
    dir: PathBuf,
    manifest: Manifest,
    bm25: Bm25,
    vectors: VectorStore,
}

/// Where the index of `folder` lives: one directory per canonical folder path.
pub fn index_dir(folder: &Path) -> PathBuf {
    let hash = blake3::hash(folder.to_string_lossy().as_bytes()).to_hex();
    crate::paths::cache_dir().join("indexes").join(&hash[..16])
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
        Self::open_at(&folder, index_dir(&folder), states, chunk_tokens)
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
            encode_states: true,
            filters: Filters::default(),
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

    /// Include/exclude globs for the next updates; files they leave out are
    /// removed from the index like deleted files.
    pub fn set_filters(&mut self, filters: Filters) {
        self.filters = filters;
    }

    /// Whether updates encode missing KV states (default) or leave them to
    /// be encoded when an answer first needs them (fast text-only indexing).
    pub fn set_encode_states(&mut self, on: bool) {
        self.encode_states = on;
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

    /// Brings the index and the state cache in line with the folder.
    /// `cancel` stops after the current file, with everything done so far
    /// committed.
    pub fn update(
        &mut self,
        states: &States<'_>,
        embedder: &mut Embedder,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(IndexProgress<'_>),
    ) -> Result<UpdateReport, IndexError> {
        let start = Instant::now();
        let mut r = UpdateReport::default();
        let t = Instant::now();
        let (files, skipped) =
            walk(&self.folder, &self.filters).map_err(|e| IndexError::io(&self.folder, e))?;
        r.timings_ms.walk = ms(t.elapsed());
        r.files_seen = files.len() + skipped.len();
        r.files_skipped = skipped;

        // Deleted (or now unreadable) files.
        let present: std::collections::HashSet<&str> =
            files.iter().map(|f| f.rel.as_str()).collect();
        let gone: Vec<String> = self
            .manifest
            .files
            .keys()
            .filter(|p| !present.contains(p.as_str()))
            .cloned()
            .collect();
        for path in &gone {
            self.bm25.delete_path(path)?;
            r.chunks_removed += self.manifest.remove_file(path).len();
        }
        r.files_removed = gone.len();

        let t = Instant::now();
        let pending = self.changed_files(files, states, &mut r)?;
        r.timings_ms.extract_chunk = ms(t.elapsed());
        for s in &r.files_skipped {
            progress(IndexProgress::Skipped(s));
        }
        let prefix = prefix_hex(states);
        let dirty = !gone.is_empty() || !pending.is_empty() || self.manifest.prefix != prefix;
        // Before the new prefix is recorded: a changed prefix makes every state missing.
        let missing = self.missing(states);
        self.manifest.prefix = prefix;

        let total = pending.iter().map(|p| p.chunks.len()).sum::<usize>() + missing.len();
        if total > 0 {
            progress(IndexProgress::Chunks { done: 0, total });
        }
        let mut done = 0;
        let mut last_commit = Instant::now();
        let mut session = states.engine.session()?;
        for p in pending {
            if cancel.load(Ordering::Relaxed) {
                r.cancelled = true;
                break;
            }
            done += self.index_file(p, states, &mut session, embedder, &mut r, &mut |n| {
                progress(IndexProgress::Chunks {
                    done: done + n,
                    total,
                })
            })?;
            if last_commit.elapsed() > Duration::from_secs(2) {
                self.commit(&mut r)?;
                last_commit = Instant::now();
            }
        }
        if !r.cancelled {
            self.repair(states, &mut session, embedder, missing, &mut r, &mut |n| {
                progress(IndexProgress::Chunks {
                    done: done + n,
                    total,
                })
            })?;
        }
        if dirty || r.chunks_embedded + r.chunks_encoded > 0 {
            self.commit(&mut r)?;
        }
        r.chunks = self.manifest.chunks.len();
        r.tokens = self.manifest.chunks.values().map(|c| c.tokens).sum();
        r.bytes_on_disk = self.bytes_on_disk(states);
        r.timings_ms.total = ms(start.elapsed());
        Ok(r)
    }

    /// Files that are new or whose content changed, read and chunked. Files
    /// whose size and mtime match the manifest are not even opened.
    fn changed_files(
        &mut self,
        files: Vec<FileEntry>,
        states: &States<'_>,
        r: &mut UpdateReport,
    ) -> Result<Vec<Pending>, IndexError> {
        let mut pending = Vec::new();
        let budget = self.manifest.chunk_tokens;
        for f in files {
            if let Some(rec) = self.manifest.files.get(&f.rel) {
                if rec.size == f.size && rec.mtime_ns == f.mtime_ns {
                    r.files_unchanged += 1;
                    continue;
                }
            }
            let bytes = match std::fs::read(&f.abs) {
                Ok(b) => b,
                Err(e) => {
                    r.files_skipped.push(Skipped {
                        path: f.rel.clone(),
                        reason: e.to_string(),
                    });
                    continue;
                }
            };
            let hash = blake3::hash(&bytes).to_hex().to_string();
            if let Some(rec) = self.manifest.files.get_mut(&f.rel) {
                if rec.hash == hash {
                    (rec.size, rec.mtime_ns) = (f.size, f.mtime_ns); // touched, not changed
                    r.files_unchanged += 1;
                    continue;
                }
            }
            match extract(&f.abs, &bytes) {
                Ok(x) => {
                    let doc = Document {
                        path: f.rel.clone(),
                        text: x.text,
                        page_starts: x.page_starts,
                    };
                    let chunks = chunk_document(&doc, budget, &|t| states.engine.tokenize(t).len());
                    pending.push(Pending {
                        entry: f,
                        hash,
                        chunks,
                    });
                }
                Err(reason) => {
                    // An indexed file that became unusable leaves the index.
                    if self.manifest.files.contains_key(&f.rel) {
                        self.bm25.delete_path(&f.rel)?;
                        r.chunks_removed += self.manifest.remove_file(&f.rel).len();
                        r.files_removed += 1;
                    }
                    r.files_skipped.push(Skipped {
                        path: f.rel,
                        reason,
                    });
                }
            }
        }
        r.files_skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(pending)
    }

    /// Replaces one file's chunks everywhere; returns how many it added.
    fn index_file(
        &mut self,
        p: Pending,
        states: &States<'_>,
        session: &mut Session<'_>,
        embedder: &mut Embedder,
        r: &mut UpdateReport,
        tick: &mut dyn FnMut(usize),
    ) -> Result<usize, IndexError> {
        let rel = p.entry.rel.clone();
        let t = Instant::now();
        self.bm25.delete_path(&rel)?;
        r.chunks_removed += self.manifest.remove_file(&rel).len();
        let mut ids = Vec::with_capacity(p.chunks.len());
        for c in &p.chunks {
            let id = self.manifest.allocate();
            self.bm25.add(id, &rel, &c.text)?;
            ids.push(id);
        }
        r.timings_ms.bm25 += ms(t.elapsed());

        let texts: Vec<&str> = p.chunks.iter().map(|c| c.text.as_str()).collect();
        self.embed(embedder, &ids, &texts, r)?;
        for (i, (c, &id)) in p.chunks.iter().zip(&ids).enumerate() {
            let (state, tokens) = self.ensure_state(states, session, &c.text, r)?;
            self.manifest.chunks.insert(
                id,
                ChunkRecord {
                    path: rel.clone(),
                    lines: c.lines,
                    heading: c.heading.clone(),
                    pages: c.pages,
                    tokens,
                    state,
                },
            );
            tick(i + 1);
        }
        self.manifest.files.insert(
            rel,
            FileRecord {
                size: p.entry.size,
                mtime_ns: p.entry.mtime_ns,
                hash: p.hash,
                chunks: ids,
            },
        );
        r.files_indexed += 1;
        r.chunks_added += p.chunks.len();
        Ok(p.chunks.len())
    }

    fn embed(
        &mut self,
        embedder: &mut Embedder,
        ids: &[ChunkId],
        texts: &[&str],
        r: &mut UpdateReport,
    ) -> Result<(), IndexError> {
        let t = Instant::now();
        for (id, v) in ids.iter().zip(embedder.embed(texts)?) {
            self.vectors.insert(*id, v);
        }
        r.chunks_embedded += ids.len();
        r.timings_ms.embed += ms(t.elapsed());
        Ok(())
    }

    /// The state key of `text`, encoding and storing the state unless an
    /// entry for it exists (identical chunks anywhere share one entry).
    fn ensure_state(
        &self,
        states: &States<'_>,
        session: &mut Session<'_>,
        text: &str,
        r: &mut UpdateReport,
    ) -> Result<(String, usize), IndexError> {
        let tokens = states.chunk_tokens(text);
        let key = states.key(&tokens, false);
        if states.has(&key) {
            r.cache_hits += 1;
        } else if !self.encode_states {
            r.states_deferred += 1;
        } else {
            let t = Instant::now();
            let (_, stored) = states.encode(session, &tokens, false)?;
            stored.map_err(|e| IndexError::Engine(e.into()))?;
            r.chunks_encoded += 1;
            r.timings_ms.encode += ms(t.elapsed());
        }
        Ok((key, tokens.len()))
    }

    /// Chunks whose vector is missing or whose state entry is gone (evicted,
    /// rejected as corrupt, or made for an older prefix).
    fn missing(&self, states: &States<'_>) -> Vec<ChunkId> {
        let prefix_changed = self.manifest.prefix != prefix_hex(states);
        self.manifest
            .chunks
            .iter()
            .filter(|(id, c)| {
                prefix_changed
                    || !self.vectors.contains(**id)
                    || (self.encode_states && !states.has(&c.state))
            })
            .map(|(id, _)| *id)
            .collect()
    }

    fn repair(
        &mut self,
        states: &States<'_>,
        session: &mut Session<'_>,
        embedder: &mut Embedder,
        missing: Vec<ChunkId>,
        r: &mut UpdateReport,
        tick: &mut dyn FnMut(usize),
    ) -> Result<(), IndexError> {
        for (i, id) in missing.into_iter().enumerate() {
            if !self.manifest.chunks.contains_key(&id) {
                continue; // its file changed or went away since
            }
            let Some(text) = self.bm25.text(id)? else {
                continue;
            };
            if !self.vectors.contains(id) {
                self.embed(embedder, &[id], &[&text], r)?;
            }
            let (state, tokens) = self.ensure_state(states, session, &text, r)?;
            if let Some(c) = self.manifest.chunks.get_mut(&id) {
                (c.state, c.tokens) = (state, tokens);
            }
            tick(i + 1);
        }
        Ok(())
    }

    fn commit(&mut self, r: &mut UpdateReport) -> Result<(), IndexError> {
        let t = Instant::now();
        self.bm25.commit()?;
        self.vectors
            .retain(|id| self.manifest.chunks.contains_key(&id));
        let vpath = self.dir.join("vectors.bin");
        self.vectors.save().map_err(|e| IndexError::io(&vpath, e))?;
        let mpath = self.dir.join("manifest.json");
        self.manifest
            .save(&mpath)
            .map_err(|e| IndexError::io(&mpath, e))?;
        r.timings_ms.commit += ms(t.elapsed());
        Ok(())
    }

    fn bytes_on_disk(&self, states: &States<'_>) -> u64 {
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

    /// The `k` best chunks for `question`: BM25 and dense rankings fused.
    pub fn search(
        &self,
        embedder: &mut Embedder,
        question: &str,
        k: usize,
    ) -> Result<Vec<(Hit, ChunkRecord)>, IndexError> {
        let depth = (k * 4).max(50);
        let lexical = self.bm25.search(question, depth)?;
        let q = embedder.embed(&[question])?.pop().unwrap_or_default();
        let dense = self.vectors.search(&q, depth);
        Ok(hybrid::fuse(&lexical, &dense, usize::MAX)
            .into_iter()
            .filter_map(|h| self.manifest.chunks.get(&h.id).map(|c| (h, c.clone())))
            .take(k)
            .collect())
    }

    /// BM25-only and dense-only rankings (for retrieval evaluation).
    pub fn rankings(
        &self,
        embedder: &mut Embedder,
        question: &str,
        k: usize,
    ) -> Result<(Vec<ChunkId>, Vec<ChunkId>), IndexError> {
        let q = embedder.embed(&[question])?.pop().unwrap_or_default();
        Ok((self.bm25.search(question, k)?, self.vectors.search(&q, k)))
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

fn prefix_hex(states: &States<'_>) -> String {
    states
        .prefix
        .id()
        .0
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    let root = crate::paths::cache_dir().join("indexes");
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read(d.path().join("manifest.json")).ok())
        .filter_map(|b| serde_json::from_slice::<Manifest>(&b).ok())
        .flat_map(|m| m.chunks.into_values().map(|c| c.state))
        .collect()
}
