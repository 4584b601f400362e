//! An open folder: the model's prompt states, the folder's index and the
//! embedder, and the units of work that keep them current. The folder
//! service ([`crate::service`]) drives one for the TUI, `watch`, `index`
//! and the server; `--ask` uses one directly (text stage, one answer).
//!
//! Indexing is staged ([`crate::index::update`]): [`Workspace::open`] and
//! [`Workspace::refresh_text`] make the folder answerable within seconds;
//! [`Workspace::step`] then does the rest one unit at a time (a batch of
//! vectors, or one chunk's state), so a caller can answer a question
//! between any two units. Units and answers share one machine-wide compute
//! budget ([`crate::compute`]): questions first, and an announced question
//! stops a state encoding in flight.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::answer::{self, Answer, AskOptions, Exchange};
use crate::compute::Budget;
use crate::engine::{Engine, EngineError, Piece, PromptLayout, Session};
use crate::index::dense::{EmbedOptions, Embedder};
use crate::index::dry_run::DryRun;
use crate::index::manifest::ChunkId;
use crate::index::TopK;
use crate::index::{FolderIndex, IndexError, IndexProgress, UpdateReport};
use crate::ingest::{Extraction, Filters};
use crate::kvstore::KvStore;
use crate::states::{Preloaded, States};

/// Everything that decides how a folder is indexed and answered from.
#[derive(Clone, Debug)]
pub struct FolderOptions {
    pub chunk_tokens: usize,
    pub system_prompt: String,
    pub prefix_newlines: usize,
    pub embed: EmbedOptions,
    pub filters: Filters,
    /// KV-state cache budget (least recently used states evicted beyond).
    pub budget_bytes: u64,
    /// Where the heavier formats are read: a worker process under memory
    /// and time caps (what the command line sets up), or this one.
    pub extraction: Extraction,
}

/// Why a folder cannot be opened or refreshed.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("--chunk-tokens must be at least 16")]
    ChunkTokens,
    #[error("cannot index {folder}: {error}")]
    Open { folder: String, error: IndexError },
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("compute lock: {0}")]
    Lock(#[from] std::io::Error),
}

impl WorkspaceError {
    /// Whether the question asked for what cannot be, rather than the
    /// folder or the machine failing: a file the index does not have, more
    /// cells than the memory budget, a question past the model's window.
    pub fn is_the_request(&self) -> bool {
        self.code().is_some()
    }

    /// The cause of a question's failure that its asker can fix, named as
    /// OpenAI's errors name it where it has a name; `None` when the folder
    /// or the machine failed.
    pub fn code(&self) -> Option<&'static str> {
        // An answer's engine errors reach here through the index's error
        // (`answer::ask` returns it) or directly: the same cause either way.
        let engine = match self {
            WorkspaceError::Index(IndexError::NoSuchFile { .. }) => return Some("file_not_found"),
            WorkspaceError::Index(IndexError::TooManyChunks { .. }) => {
                return Some("too_many_chunks")
            }
            WorkspaceError::Index(IndexError::Engine(e)) | WorkspaceError::Engine(e) => e,
            _ => return None,
        };
        match engine {
            EngineError::PastWindow { .. } | EngineError::RecomputePastWindow { .. } => {
                Some("context_length_exceeded")
            }
            EngineError::OverBudget { .. } => Some("over_memory_budget"),
            _ => None,
        }
    }
}

/// One unit of background work done by [`Workspace::step`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Vectors embedded, and how many chunks still lack one.
    Vectors { done: usize, left: usize },
    /// A chunk state encoded (or found present), and how many are left.
    State { encoded: bool, left: usize },
    /// A chunk whose state cannot be encoded (`chunk` names its file and
    /// lines): skipped until the next start, the others go on.
    Unencodable {
        chunk: String,
        reason: String,
        left: usize,
    },
    /// A question waits somewhere on the machine: nothing was done (a
    /// state encoding it stopped is done again later).
    Yielded,
    /// A stored state looked at by preloading ([`Workspace::preload_step`]):
    /// `left` of `total` to go.
    Preload { left: usize, total: usize },
    /// Preloading ended, with what it did.
    Preloaded(PreloadReport),
}

/// What preloading the memory tiers did since the last text pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PreloadReport {
    /// States read from disk into a memory tier.
    pub loaded: usize,
    /// Bytes those reads cost.
    pub bytes: u64,
    /// States a tier held already.
    pub held: usize,
    /// The tiers ran out of free room: the rest are read when asked for.
    pub full: bool,
}

/// Where preloading stands since the last text pass.
enum Preloading {
    NotStarted,
    Running {
        keys: std::collections::VecDeque<String>,
        total: usize,
        report: PreloadReport,
    },
    Done,
}

/// An open folder.
pub struct Workspace<'e> {
    pub states: States<'e>,
    pub index: FolderIndex,
    pub embedder: Embedder,
    options: FolderOptions,
    budget: Budget,
    /// Chunks retrieved for questions since opening: their states first.
    wanted: Vec<ChunkId>,
    /// Chunks whose state failed to encode (the chunk's own fault, not the
    /// machine's) since opening: skipped by the backlog, so one bad chunk
    /// never holds up the others; tried again by the next process.
    unencodable: std::collections::HashSet<ChunkId>,
    session: Option<Session<'e>>,
    preloading: Preloading,
}

/// KV cells a context needs to answer with `top_k` chunks of about
/// `chunk_tokens` each: prefix, chunks (tokens run a little over the
/// target), re-read chunks, question and answer. The engine's default
/// context (what encoding uses too): an answer over more chunks than 16
/// sizes its own ([`crate::engine::Engine::session_for`]).
pub fn context_size(top_k: TopK, chunk_tokens: usize, max_tokens: usize) -> u32 {
    let k = match top_k {
        TopK::Best(k) => k.min(16),
        TopK::All => 16,
    };
    let chunk = chunk_tokens * 3 / 2 + 64;
    let cells = 1024 + 2 * k * chunk + max_tokens;
    cells.next_multiple_of(256) as u32
}

impl<'e> Workspace<'e> {
    /// Opens (or creates) the index of `folder` for `engine`. Nothing is
    /// indexed yet: call [`Self::refresh_text`] (or [`Self::refresh`]).
    pub fn open(
        engine: &'e Engine,
        folder: &Path,
        o: &FolderOptions,
        store: KvStore,
    ) -> Result<Self, WorkspaceError> {
        Self::open_in(engine, folder, None, o, store)
    }

    /// [`Self::open`] with the index kept in `index_dir` instead of the
    /// cache (benchmarks work in scratch directories).
    pub fn open_in(
        engine: &'e Engine,
        folder: &Path,
        index_dir: Option<std::path::PathBuf>,
        o: &FolderOptions,
        store: KvStore,
    ) -> Result<Self, WorkspaceError> {
        if o.chunk_tokens < 16 {
            return Err(WorkspaceError::ChunkTokens);
        }
        let layout = PromptLayout::new(engine, &o.system_prompt)?.pad(engine, o.prefix_newlines);
        let states = States::new(engine, layout, store)?;
        let embedder = Embedder::load(&o.embed)?;
        let opened = match index_dir {
            None => FolderIndex::open(folder, &states, o.chunk_tokens),
            Some(dir) => folder
                .canonicalize()
                .map_err(|e| IndexError::io(folder, e))
                .and_then(|f| FolderIndex::open_at(&f, dir, &states, o.chunk_tokens)),
        };
        let mut index = opened.map_err(|error| WorkspaceError::Open {
            folder: folder.display().to_string(),
            error,
        })?;
        index.set_filters(o.filters.clone());
        index.set_extraction(o.extraction.clone());
        Ok(Self {
            states,
            index,
            embedder,
            options: o.clone(),
            budget: Budget::default(),
            wanted: Vec::new(),
            unencodable: std::collections::HashSet::new(),
            session: None,
            preloading: Preloading::NotStarted,
        })
    }

    /// The compute budget this folder's work runs under.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Uses `budget`'s locks instead of the machine's (tests).
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// The text stage: BM25 and the manifest in line with the folder, in
    /// seconds. Another process updating the same folder is not an error:
    /// the index is used as that process last committed it.
    pub fn refresh_text(
        &mut self,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(IndexProgress),
    ) -> Result<UpdateReport, WorkspaceError> {
        // What changed may have states to preload.
        self.preloading = Preloading::NotStarted;
        match self.index.update_text(&self.states, cancel, progress) {
            Ok(r) => Ok(r),
            Err(IndexError::Busy) => {
                self.index = self.index.reopen(&self.states)?;
                Ok(UpdateReport {
                    busy: true,
                    ..UpdateReport::default()
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Vectors and states still to do (less the chunks that cannot be
    /// encoded).
    pub fn backlog(&self) -> crate::index::Backlog {
        let mut b = self.index.backlog(&self.states, &self.wanted);
        b.states.retain(|id| !self.unencodable.contains(id));
        b
    }

    /// One unit of the remaining background work, under the compute budget
    /// (a question anywhere on the machine makes it yield); `None` when
    /// the index is complete (`with_states: false`: when only states are
    /// left).
    pub fn step(&mut self, with_states: bool) -> Result<Option<Step>, WorkspaceError> {
        let backlog = self.backlog();
        if backlog.vectors.is_empty() && (!with_states || backlog.states.is_empty()) {
            return Ok(None);
        }
        let Some(_held) = self.budget.background()? else {
            return Ok(Some(Step::Yielded));
        };
        if !backlog.vectors.is_empty() {
            let batch = &backlog.vectors[..backlog.vectors.len().min(16)];
            let done = self.index.embed_chunks(&mut self.embedder, batch)?;
            return Ok(Some(Step::Vectors {
                done,
                left: backlog.vectors.len() - batch.len(),
            }));
        }
        let id = backlog.states[0];
        let session = match self.session.as_mut() {
            Some(s) => s,
            None => {
                let mut s = self.states.engine.session()?;
                s.set_interrupt(Some(self.budget.interrupt()));
                self.session.insert(s)
            }
        };
        match self.index.encode_chunk_state(&self.states, session, id) {
            Ok(encoded) => Ok(Some(Step::State {
                encoded,
                left: backlog.states.len() - 1,
            })),
            Err(IndexError::Engine(EngineError::Interrupted)) => Ok(Some(Step::Yielded)),
            Err(IndexError::Engine(e)) if e.is_the_input() => {
                // The next unit goes on with the rest; a context the error
                // may have left half-used is made afresh.
                self.session = None;
                self.unencodable.insert(id);
                let place = self
                    .index
                    .chunk(id)
                    .map(|c| format!("{} (lines {}-{})", c.path, c.lines.0, c.lines.1))
                    .unwrap_or_else(|| format!("chunk {id:?}"));
                Ok(Some(Step::Unencodable {
                    chunk: place,
                    reason: e.to_string(),
                    left: backlog.states.len() - 1,
                }))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Whether preloading has work left (it starts afresh after each text
    /// pass).
    pub fn preload_pending(&self) -> bool {
        !matches!(self.preloading, Preloading::Done)
    }

    /// One unit of preloading: the next stored state not in a memory tier
    /// is read into the tiers' free room ([`crate::engine::Preload`]),
    /// under the compute budget like every background unit. Ends, with its
    /// report, when every state is held or the tiers are full; `None` after.
    /// Run it once the index is complete: states encoded later are kept by
    /// the questions that need them.
    pub fn preload_step(&mut self) -> Result<Option<Step>, WorkspaceError> {
        if let Preloading::NotStarted = self.preloading {
            // Held states are counted here, not visited one unit each.
            let (held, keys): (
                std::collections::VecDeque<String>,
                std::collections::VecDeque<String>,
            ) = self
                .index
                .state_keys()
                .into_iter()
                .filter(|k| self.states.has(k))
                .partition(|k| self.states.in_memory(k));
            self.preloading = Preloading::Running {
                total: keys.len(),
                keys,
                report: PreloadReport {
                    held: held.len(),
                    ..PreloadReport::default()
                },
            };
        }
        if let Preloading::Done = self.preloading {
            return Ok(None);
        }
        let held = match self.budget.background() {
            Ok(held) => held,
            Err(e) => {
                self.preloading = Preloading::Done; // not retried in a loop
                return Err(e.into());
            }
        };
        let Preloading::Running {
            keys,
            total,
            report,
        } = &mut self.preloading
        else {
            return Ok(None);
        };
        let Some(key) = keys.pop_front() else {
            let done = *report;
            self.preloading = Preloading::Done;
            return Ok(Some(Step::Preloaded(done)));
        };
        let Some(_held) = held else {
            keys.push_front(key);
            return Ok(Some(Step::Yielded));
        };
        match self.states.preload(&key) {
            Preloaded::Loaded(bytes) => {
                report.loaded += 1;
                report.bytes += bytes;
            }
            Preloaded::Held => report.held += 1,
            Preloaded::Missing => {}
            Preloaded::NoRoom => {
                report.full = true;
                keys.clear();
            }
        }
        Ok(Some(Step::Preload {
            left: keys.len(),
            total: *total,
        }))
    }

    /// Closes a pass of `r`: the cache budget check (states beyond it
    /// removed, unreferenced ones first, then the least recently used; within
    /// it none), then the index's figures.
    pub fn settle(&mut self, r: &mut UpdateReport) {
        r.states_deferred = self.backlog().states.len();
        // This folder's states are in use even when its index lives
        // outside the cache dir (benchmarks' scratch), where
        // `referenced_states` does not look.
        let mut referenced = crate::index::referenced_states();
        referenced.extend(self.index.state_keys());
        r.gc = Some(self.states.store.gc(
            &referenced,
            self.options.budget_bytes,
            crate::kvstore::Unreferenced::Keep,
        ));
        r.chunks = self.index.len();
        r.bytes_on_disk = self.index.bytes_on_disk(&self.states);
    }

    /// Answers `question` after the earlier turns of `history` (retrieval,
    /// states cached or encoded now, APE), holding the machine's compute
    /// budget from the first state to the last token: background work
    /// anywhere waits.
    pub fn ask(
        &mut self,
        question: &str,
        history: &[Exchange],
        options: &AskOptions,
        on_text: &mut dyn FnMut(&Piece<'_>) -> bool,
    ) -> Result<Answer, WorkspaceError> {
        let _held = self.budget.question()?;
        let a = answer::ask(
            &self.states,
            &self.index,
            &mut self.embedder,
            question,
            history,
            options,
            on_text,
        )?;
        for id in a.sources.iter().map(|s| s.hit.id) {
            if !self.wanted.contains(&id) {
                self.wanted.push(id);
            }
        }
        let engine = self.states.engine;
        let model = engine.path().file_name().map(|n| n.to_string_lossy());
        let shared = self.states.store.shared().map(|s| s.stats());
        crate::kvstore::publish_tiers(&model.unwrap_or_default(), &engine.tier_stats(), shared);
        Ok(a)
    }
}

/// What indexing `folder` with `o` would read and pass over, read and
/// chunked as the text stage reads it, nothing written (`index --dry-run`).
pub fn dry_run(
    engine: &Engine,
    folder: &Path,
    o: &FolderOptions,
    progress: &mut dyn FnMut(IndexProgress),
) -> Result<DryRun, WorkspaceError> {
    if o.chunk_tokens < 16 {
        return Err(WorkspaceError::ChunkTokens);
    }
    let layout = PromptLayout::new(engine, &o.system_prompt)?.pad(engine, o.prefix_newlines);
    let count = |t: &str| engine.tokenize(t).len();
    let encoded = |t: &str| layout.chunk(engine, t).len();
    Ok(crate::index::dry_run::dry_run(
        folder,
        &o.filters,
        &o.extraction,
        o.chunk_tokens,
        &count,
        &encoded,
        &mut |_| {},
        progress,
    )?)
}

impl Drop for Workspace<'_> {
    fn drop(&mut self) {
        crate::kvstore::unpublish_tiers();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_question_asked_for_is_the_request_at_fault() {
        let no_file = WorkspaceError::Index(IndexError::NoSuchFile {
            path: "a.md".into(),
            hint: String::new(),
        });
        let past = WorkspaceError::Engine(EngineError::PastWindow {
            positions: 9000,
            window: 8192,
        });
        assert!(no_file.is_the_request() && past.is_the_request());
        // As an answer returns it: the engine's error inside the index's.
        let inside = WorkspaceError::Index(IndexError::Engine(EngineError::PastWindow {
            positions: 9000,
            window: 8192,
        }));
        assert_eq!(inside.code(), Some("context_length_exceeded"));
        let budget = WorkspaceError::Index(IndexError::Engine(EngineError::OverBudget {
            need: crate::engine::memory::MemoryNeed {
                cells: 9000,
                kv_bytes: 1 << 30,
                scratch_bytes: 1 << 20,
            },
            budget: crate::engine::memory::MemoryBudget {
                bytes: 1 << 20,
                source: crate::engine::memory::BudgetSource::Configured,
                held_by_states: 0,
            },
        }));
        assert_eq!(budget.code(), Some("over_memory_budget"));
        let decode = WorkspaceError::Index(IndexError::Engine(EngineError::Decode("x".into())));
        assert_eq!(decode.code(), None, "a failed decode is the server's");
        let lock = WorkspaceError::Lock(std::io::Error::other("busy"));
        assert!(!lock.is_the_request());
        assert!(!WorkspaceError::Index(IndexError::Busy).is_the_request());
        assert!(!WorkspaceError::ChunkTokens.is_the_request());
    }
}
