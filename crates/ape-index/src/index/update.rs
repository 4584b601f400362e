//! Keeping a folder's index in step with its files, in three stages so that
//! a new folder answers questions within seconds:
//!
//! 1. **text** ([`FolderIndex::update_text`]): walk, read, chunk, BM25 and
//!    the manifest, committed before it returns: questions are answered
//!    from here on (BM25, with on-demand chunk states);
//! 2. **vectors** ([`FolderIndex::embed_chunks`]): dense vectors for chunks
//!    that lack one, a batch at a time, each batch committed;
//! 3. **states** ([`FolderIndex::encode_chunk_state`]): KV states for
//!    chunks whose state is not in the store, one chunk at a time, each
//!    stored atomically (recently changed files first).
//!
//! The manifest is the truth and is written last: a killed run resumes
//! each stage where it stopped (stage 1 redoes the files whose manifest
//! entry did not land; 2 and 3 redo exactly what is missing).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::manifest::{ChunkId, ChunkRecord, FileRecord, SkippedFile};
use super::{FolderIndex, IndexError};
use crate::engine::Session;
use crate::ingest::documents::{copy_reason, html_copy, text_signature, NOT_A_DOCUMENT};
use crate::ingest::extract::{kind, reading, Kind};
use crate::ingest::{chunk_document, walk, Chunk, Document, Extraction, FileEntry, Skipped};
use crate::states::States;

/// The three stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Text,
    Vectors,
    States,
    /// Stored states loaded into the memory tiers (after indexing).
    Memory,
}

/// Long work, reported as it happens.
#[derive(Clone, Debug)]
pub enum IndexProgress {
    /// A file could not be indexed.
    Skipped(Skipped),
    /// `done` of `total` units of `stage` (files, vectors or states).
    Stage {
        stage: Stage,
        done: usize,
        total: usize,
    },
}

/// A file that was indexed with a remark.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Noted {
    pub path: String,
    pub note: String,
}

/// What an update did, for people (`index`) and scripts (`index --json`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct UpdateReport {
    pub files_seen: usize,
    pub files_indexed: usize,
    pub files_unchanged: usize,
    pub files_removed: usize,
    pub files_skipped: Vec<Skipped>,
    /// Files read with a remark (another text encoding, characters
    /// replaced): indexed, and said so.
    pub files_noted: Vec<Noted>,
    pub chunks: usize,
    pub chunks_added: usize,
    pub chunks_removed: usize,
    pub tokens: usize,
    pub chunks_embedded: usize,
    pub chunks_encoded: usize,
    /// Chunks whose state could not be encoded (`path` names the file and
    /// lines): skipped, the rest encoded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunks_unencodable: Vec<Skipped>,
    /// Added chunks whose state was already in the store.
    pub cache_hits: usize,
    /// States still to be encoded (later, in the background, or on first
    /// use: `index --no-states`).
    pub states_deferred: usize,
    pub bytes_on_disk: u64,
    /// What the cache budget check after the update removed.
    pub gc: Option<crate::kvstore::GcReport>,
    pub cancelled: bool,
    /// Another process was updating this folder: its index was used as it
    /// last committed it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub busy: bool,
    pub timings_ms: StageTimes,
}

/// A file's chunks as the text stage reads them (`rel` names it in each
/// chunk's header line), with the reader's note, or why it is not read: a
/// web page that copies others (a print page) or only points on is no
/// document of its own while `documents_only`.
pub(crate) fn read_chunks(
    abs: &Path,
    rel: &str,
    bytes: &[u8],
    documents_only: bool,
    extraction: &Extraction,
    chunk_tokens: usize,
    count: &dyn Fn(&str) -> usize,
) -> Result<(Vec<Chunk>, Option<String>), String> {
    if documents_only && kind(abs) == Some(Kind::Html) {
        if let Some(why) = html_copy(&String::from_utf8_lossy(bytes)) {
            return Err(format!("{NOT_A_DOCUMENT}: {why}"));
        }
    }
    let x = extraction.extract(abs, bytes)?;
    let doc = Document {
        path: rel.to_string(),
        text: x.text,
        sections: x.sections,
    };
    Ok((chunk_document(&doc, chunk_tokens, count), x.note))
}

/// Milliseconds per stage.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StageTimes {
    pub walk: f64,
    pub extract_chunk: f64,
    pub bm25: f64,
    /// Until the text stage was committed: when questions can be answered.
    pub text_ready: f64,
    pub embed: f64,
    pub encode: f64,
    pub commit: f64,
    pub total: f64,
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// What the vector and state stages still owe.
#[derive(Clone, Debug, Default)]
pub struct Backlog {
    /// Chunks without a dense vector.
    pub vectors: Vec<ChunkId>,
    /// Chunks whose state is not in the store, most wanted first.
    pub states: Vec<ChunkId>,
}

impl Backlog {
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty() && self.states.is_empty()
    }
}

/// A changed file, read and chunked, waiting for its per-file commit.
struct Pending {
    entry: FileEntry,
    hash: String,
    chunks: Vec<Chunk>,
    /// Its text signature, while only documents are read.
    text: Option<String>,
}

/// Indexed files by what they say ([`text_signature`]): how a copy is known.
type Texts = HashMap<String, String>;

/// What reading one file came to.
#[derive(Default)]
struct Read {
    /// Its chunks, to index.
    pending: Option<Pending>,
    /// The manifest changed (a file touched, skipped, or skipped no more).
    changed: bool,
}

/// Commits at least this often during long stages.
const COMMIT_EVERY: Duration = Duration::from_secs(2);

impl FolderIndex {
    /// Stage 1: brings the text of the index (BM25 and manifest) in line
    /// with the folder and commits it. `cancel` stops after the current
    /// file, with everything done so far committed. Seconds even for
    /// thousands of files: nothing here runs a model but the tokenizer.
    pub fn update_text(
        &mut self,
        states: &States<'_>,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(IndexProgress),
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
        let present: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
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

        // A new prefix (system prompt, padding, model) gives every chunk a
        // new state key; the text and vectors stay.
        let prefix = prefix_hex(states);
        let rekey = self.manifest.prefix != prefix;
        if rekey {
            self.rekey(states)?;
            self.manifest.prefix = prefix;
        }
        // Skipped files that are gone are forgotten.
        let before = self.manifest.skipped.len();
        self.manifest
            .skipped
            .retain(|p, _| present.contains(p.as_str()));
        // Copies whose original left the index are read again: they may be
        // the only copy now.
        let files_now = &self.manifest.files;
        self.manifest
            .skipped
            .retain(|_, s| s.copy_of.as_ref().is_none_or(|o| files_now.contains_key(o)));
        let mut dirty = rekey || !gone.is_empty() || self.manifest.skipped.len() != before;
        let mut texts: Texts = self
            .manifest
            .files
            .iter()
            .filter_map(|(p, rec)| Some((rec.text.clone()?, p.clone())))
            .collect();
        let entries: HashMap<String, FileEntry> =
            files.iter().map(|f| (f.rel.clone(), f.clone())).collect();
        let mut indexed_now = HashSet::new();
        // Each changed file is read, chunked and indexed in turn, with a
        // commit every few seconds: a pass stopped halfway (killed, out of
        // power) keeps what it did, and one file that cannot be read only
        // skips itself.
        let candidates: Vec<FileEntry> = files
            .into_iter()
            .filter(|f| !self.unchanged(f, &mut r))
            .collect();
        let total = candidates.len();
        let mut last_commit = Instant::now();
        for (i, f) in candidates.into_iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                r.cancelled = true;
                break;
            }
            progress(IndexProgress::Stage {
                stage: Stage::Text,
                done: i,
                total,
            });
            let t = Instant::now();
            let read = self.read_file(f, states, &texts, &mut r)?;
            r.timings_ms.extract_chunk += ms(t.elapsed());
            dirty |= read.changed;
            if let Some(p) = read.pending {
                indexed_now.insert(p.entry.rel.clone());
                self.index_file(p, states, &mut texts, &mut r)?;
                dirty = true;
            }
            if dirty && last_commit.elapsed() > COMMIT_EVERY {
                self.commit(&mut r)?;
                last_commit = Instant::now();
            }
        }
        // Copies of a file read again now are read again too: what they
        // copied may say something else now.
        let recopied: Vec<String> = self
            .manifest
            .skipped
            .iter()
            .filter(|(_, s)| {
                s.copy_of.as_ref().is_some_and(|o| {
                    indexed_now.contains(o) || !self.manifest.files.contains_key(o)
                })
            })
            .map(|(p, _)| p.clone())
            .collect();
        for rel in recopied {
            let Some(f) = entries.get(&rel).cloned() else {
                continue;
            };
            self.manifest.skipped.remove(&rel);
            r.files_skipped.retain(|s| s.path != rel);
            let read = self.read_file(f, states, &texts, &mut r)?;
            if let Some(p) = read.pending {
                self.index_file(p, states, &mut texts, &mut r)?;
            }
            dirty = true;
        }
        r.files_skipped.sort_by(|a, b| a.path.cmp(&b.path));
        for s in &r.files_skipped {
            progress(IndexProgress::Skipped(s.clone()));
        }
        if dirty {
            self.commit(&mut r)?;
        }
        if total > 0 && !r.cancelled {
            progress(IndexProgress::Stage {
                stage: Stage::Text,
                done: total,
                total,
            });
        }
        r.chunks = self.manifest.chunks.len();
        r.tokens = self.manifest.chunks.values().map(|c| c.tokens).sum();
        r.timings_ms.text_ready = ms(start.elapsed());
        r.timings_ms.total = r.timings_ms.text_ready;
        Ok(r)
    }

    /// Work stages 2 and 3 still owe. States come in the order they are most
    /// likely to be asked for: chunks in `wanted` (retrieved before), then
    /// the most recently modified files first. None on a model APE does not
    /// support: every answer there is a sequential prefill, which uses none.
    pub fn backlog(&self, states: &States<'_>, wanted: &[ChunkId]) -> Backlog {
        let vectors = self
            .manifest
            .chunks
            .keys()
            .filter(|id| !self.vectors.contains(**id))
            .copied()
            .collect();
        let missing = |id: &ChunkId| {
            self.manifest
                .chunks
                .get(id)
                .is_some_and(|c| !states.has(&c.state))
        };
        if states.engine.info().ape_support().is_err() {
            return Backlog {
                vectors,
                states: Vec::new(),
            };
        }
        let mut seen = HashSet::new();
        let states = wanted
            .iter()
            .chain(self.chunks_newest_first())
            .filter(|id| missing(id) && seen.insert(**id))
            .copied()
            .collect();
        Backlog { vectors, states }
    }

    /// Every chunk, files most recently modified first: the order states
    /// are encoded and preloaded in.
    fn chunks_newest_first(&self) -> impl Iterator<Item = &ChunkId> {
        let mut files: Vec<&FileRecord> = self.manifest.files.values().collect();
        files.sort_by_key(|f| std::cmp::Reverse(f.mtime_ns));
        files.into_iter().flat_map(|f| f.chunks.iter())
    }

    /// The store keys of every chunk's state, as the states stage orders
    /// them (newest files first), each once (whether stored or not).
    pub fn state_keys(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.chunks_newest_first()
            .filter_map(|id| self.manifest.chunks.get(id))
            .filter(|c| seen.insert(c.state.as_str()))
            .map(|c| c.state.clone())
            .collect()
    }

    /// Stage 2, one batch: embeds `ids` (those still indexed and without a
    /// vector) and commits the vectors. Returns how many it embedded.
    pub fn embed_chunks(
        &mut self,
        embedder: &mut crate::index::dense::Embedder,
        ids: &[ChunkId],
    ) -> Result<usize, IndexError> {
        let mut todo = Vec::new();
        let mut texts = Vec::new();
        for &id in ids {
            if self.manifest.chunks.contains_key(&id) && !self.vectors.contains(id) {
                if let Some(text) = self.bm25.text(id)? {
                    todo.push(id);
                    texts.push(text);
                }
            }
        }
        if todo.is_empty() {
            return Ok(0);
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (id, v) in todo.iter().zip(embedder.embed(&refs)?) {
            self.vectors.insert(*id, v);
        }
        let path = self.dir.join("vectors.bin");
        self.vectors.save().map_err(|e| IndexError::io(&path, e))?;
        Ok(todo.len())
    }

    /// Stage 3, one chunk: encodes and stores its state if the store lacks
    /// it. Returns whether it encoded. A chunk whose text is gone from the
    /// index (its file changed since) is skipped, never encoded empty.
    pub fn encode_chunk_state(
        &self,
        states: &States<'_>,
        session: &mut Session<'_>,
        id: ChunkId,
    ) -> Result<bool, IndexError> {
        let Some(c) = self.manifest.chunks.get(&id) else {
            return Ok(false);
        };
        if states.has(&c.state) || states.store.fetch_shared(&states.prefix, &c.state) {
            return Ok(false); // here, or now fetched from the shared store
        }
        let Some(text) = self.bm25.text(id)? else {
            return Ok(false);
        };
        let tokens = states.chunk_tokens(&text);
        if states.key(&tokens, false) != c.state {
            return Ok(false); // re-keyed since: the next backlog has it
        }
        let (_, stored) = states.encode(session, &tokens, false)?;
        stored.map_err(|e| IndexError::Engine(e.into()))?;
        Ok(true)
    }

    /// Whether `f` is as the manifest last saw it (indexed, or skipped
    /// with a reason), counted so; such a file is not even opened.
    fn unchanged(&self, f: &FileEntry, r: &mut UpdateReport) -> bool {
        let read_as = reading(&f.abs, self.filters.documents_only());
        if let Some(rec) = self.manifest.files.get(&f.rel) {
            if rec.size == f.size && rec.mtime_ns == f.mtime_ns && rec.reading == read_as {
                r.files_unchanged += 1;
                return true;
            }
        }
        if let Some(s) = self.manifest.skipped.get(&f.rel) {
            if s.size == f.size && s.mtime_ns == f.mtime_ns && s.reading == read_as {
                r.files_skipped.push(Skipped {
                    path: f.rel.clone(),
                    reason: s.reason.clone(),
                });
                return true;
            }
        }
        false
    }

    /// A new or changed file, read and chunked; a file that cannot be read
    /// leaves the index (if it was in it) and is remembered as skipped.
    fn read_file(
        &mut self,
        f: FileEntry,
        states: &States<'_>,
        texts: &Texts,
        r: &mut UpdateReport,
    ) -> Result<Read, IndexError> {
        let documents_only = self.filters.documents_only();
        let read_as = reading(&f.abs, documents_only);
        let bytes = match std::fs::read(&f.abs) {
            Ok(b) => b,
            Err(e) => {
                // Not remembered: a file being written now reads next time.
                r.files_skipped.push(Skipped {
                    path: f.rel.clone(),
                    reason: e.to_string(),
                });
                return Ok(Read::default());
            }
        };
        let hash = blake3::hash(&bytes).to_hex().to_string();
        if let Some(rec) = self.manifest.files.get_mut(&f.rel) {
            if rec.hash == hash && rec.reading == read_as {
                (rec.size, rec.mtime_ns) = (f.size, f.mtime_ns); // touched, not changed
                r.files_unchanged += 1;
                return Ok(Read {
                    pending: None,
                    changed: true,
                });
            }
        }
        let count = |t: &str| states.engine.tokenize(t).len();
        let read = read_chunks(
            &f.abs,
            &f.rel,
            &bytes,
            documents_only,
            &self.extraction,
            self.manifest.chunk_tokens,
            &count,
        );
        // A document that says what an indexed one says is its copy.
        let text = match &read {
            Ok((chunks, _)) if documents_only => {
                text_signature(chunks.iter().map(|c| c.text.as_str()))
            }
            _ => None,
        };
        let original = text.as_ref().and_then(|t| {
            let o = texts.get(t)?;
            let same = self.manifest.files.get(o)?.text.as_ref() == Some(t);
            (same && *o != f.rel).then(|| o.clone())
        });
        let read = match &original {
            Some(o) => Err(copy_reason(o)),
            None => read,
        };
        match read {
            Ok((chunks, note)) => {
                let was_skipped = self.manifest.skipped.remove(&f.rel).is_some();
                if let Some(note) = note {
                    r.files_noted.push(Noted {
                        path: f.rel.clone(),
                        note,
                    });
                }
                Ok(Read {
                    pending: Some(Pending {
                        entry: f,
                        hash,
                        chunks,
                        text,
                    }),
                    changed: was_skipped,
                })
            }
            Err(reason) => {
                // An indexed file that became unusable leaves the index.
                if self.manifest.files.contains_key(&f.rel) {
                    self.bm25.delete_path(&f.rel)?;
                    r.chunks_removed += self.manifest.remove_file(&f.rel).len();
                    r.files_removed += 1;
                }
                self.manifest.skipped.insert(
                    f.rel.clone(),
                    SkippedFile {
                        size: f.size,
                        mtime_ns: f.mtime_ns,
                        reading: read_as,
                        reason: reason.clone(),
                        copy_of: original,
                    },
                );
                r.files_skipped.push(Skipped {
                    path: f.rel,
                    reason,
                });
                Ok(Read {
                    pending: None,
                    changed: true,
                })
            }
        }
    }

    /// Replaces one file's chunks in BM25 and the manifest.
    fn index_file(
        &mut self,
        p: Pending,
        states: &States<'_>,
        texts: &mut Texts,
        r: &mut UpdateReport,
    ) -> Result<(), IndexError> {
        let rel = p.entry.rel.clone();
        let rel_key = rel.clone();
        let t = Instant::now();
        self.bm25.delete_path(&rel)?;
        r.chunks_removed += self.manifest.remove_file(&rel).len();
        let mut ids = Vec::with_capacity(p.chunks.len());
        for c in &p.chunks {
            let id = self.manifest.allocate();
            self.bm25.add(id, &rel, &c.text)?;
            let tokens = states.chunk_tokens(&c.text);
            let state = states.key(&tokens, false);
            r.cache_hits += usize::from(states.has(&state));
            self.manifest.chunks.insert(
                id,
                ChunkRecord {
                    path: rel.clone(),
                    lines: c.lines,
                    heading: c.heading.clone(),
                    place: c.place.clone(),
                    tokens: tokens.len(),
                    state,
                },
            );
            ids.push(id);
        }
        r.timings_ms.bm25 += ms(t.elapsed());
        self.manifest.files.insert(
            rel,
            FileRecord {
                size: p.entry.size,
                mtime_ns: p.entry.mtime_ns,
                hash: p.hash,
                chunks: ids,
                reading: reading(&p.entry.abs, self.filters.documents_only()),
                text: p.text.clone(),
            },
        );
        if let Some(t) = p.text {
            texts.insert(t, rel_key);
        }
        r.files_indexed += 1;
        r.chunks_added += p.chunks.len();
        Ok(())
    }

    /// New state keys for every chunk after a prefix change.
    fn rekey(&mut self, states: &States<'_>) -> Result<(), IndexError> {
        let ids: Vec<ChunkId> = self.manifest.chunks.keys().copied().collect();
        let mut keys = HashMap::new();
        for id in ids {
            if let Some(text) = self.bm25.text(id)? {
                keys.insert(id, states.key(&states.chunk_tokens(&text), false));
            }
        }
        for (id, key) in keys {
            if let Some(c) = self.manifest.chunks.get_mut(&id) {
                c.state = key;
            }
        }
        Ok(())
    }

    pub(super) fn commit(&mut self, r: &mut UpdateReport) -> Result<(), IndexError> {
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
