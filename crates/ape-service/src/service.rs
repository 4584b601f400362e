//! The life of an open folder, in one place: questions first, watcher
//! batches coalesced into one text pass, background stages (vectors, then
//! states) one unit at a time between answers, all under one compute
//! budget. Every front end is a thin client: the TUI, `watch` (prints the
//! events), `index` (runs it until indexed), `bench first-answer`, the
//! HTTP server.
//!
//! Requests go in through a [`Handle`] (cloneable, any thread); folder
//! events come out through the caller's sink, and each question's events
//! through its own channel, so several clients can wait on one service.
//! A question announces itself to the compute budget the moment it is
//! handed in, so a state encoding in flight (here or in another process)
//! stops before the service even reads it.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::answer::{Answer, AskOptions, Exchange};
use crate::compute::{Budget, Held};
use crate::engine::{Engine, TokenLogprob};
use crate::index::{IndexProgress, Stage, UpdateReport};
use crate::ingest::Filters;
use crate::kvstore::KvStore;
use crate::watch::{FolderWatcher, WatchMsg};
use crate::workspace::{FolderOptions, PreloadReport, Step, Workspace, WorkspaceError};

/// When [`Service::run`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// On [`Handle::shutdown`] (after the questions already queued).
    Shutdown,
    /// Once every stage is done (`index`), or on shutdown.
    Indexed,
}

/// How the service runs.
#[derive(Clone, Debug)]
pub struct ServiceOptions {
    /// How questions are answered unless a question says otherwise.
    pub ask: AskOptions,
    /// Encode every chunk's state in the background (else only vectors:
    /// states are encoded when an answer first needs them).
    pub with_states: bool,
    /// Watch the folder, re-reading a batch once it has been quiet this
    /// long.
    pub watch: Option<Duration>,
    pub until: Until,
    /// Once indexed, fill the engine's memory tiers with the folder's
    /// stored states, between questions, if the engine's
    /// [`Preload`](crate::engine::Preload) setting says so: for front ends
    /// that live to answer questions (the TUI, the server).
    pub preload: bool,
    /// Questions that may wait for the model; past it [`Handle::ask`]
    /// refuses at once ([`AskRefused::Busy`]).
    pub queue: usize,
}

impl ServiceOptions {
    /// Index everything once and stop: what `index` and benchmarks run.
    pub fn indexing(with_states: bool) -> Self {
        Self {
            ask: AskOptions::default(),
            with_states,
            watch: None,
            until: Until::Indexed,
            preload: false,
            queue: 0,
        }
    }
}

/// Where [`Service::spawn`] opens the folder.
pub struct FolderSpec {
    pub folder: PathBuf,
    pub options: FolderOptions,
    pub store: KvStore,
    /// The index somewhere else than the cache (benchmarks' scratch).
    pub index_dir: Option<PathBuf>,
}

/// A question for the service.
#[derive(Clone, Debug, Default)]
pub struct Question {
    pub text: String,
    /// The conversation so far, oldest first.
    pub history: Vec<Exchange>,
    /// Instead of the service's own (a server's per-request settings).
    pub options: Option<AskOptions>,
    /// Files read whole besides the best chunks (the TUI's `@path`).
    pub files: Vec<String>,
}

/// What happens to one question, in order: `Started`, `Token`s, then
/// `Answered` or `Failed`.
pub enum AnswerEvent {
    /// The service took the question up, after `waited` in the queue (and
    /// for the unit of background work in flight to stop).
    Started {
        waited: Duration,
    },
    /// Answer text as it is shown, with the tokens whose text begins in it
    /// (their log-probabilities, for a server's `logprobs`).
    Token {
        text: String,
        tokens: Vec<TokenLogprob>,
    },
    Answered(Box<Answered>),
    Failed(Failure),
}

/// Why a question was not answered.
#[derive(Clone, Debug)]
pub struct Failure {
    pub message: String,
    /// What the question itself asked for that cannot be (a file the
    /// folder does not have, more than the memory budget holds, past the
    /// model's window), named as OpenAI's error `code` names it
    /// (`context_length_exceeded`, …); `None` when the folder or the
    /// machine failed.
    pub code: Option<&'static str>,
}

impl Failure {
    /// The question was at fault: a server answers 400, not 500.
    pub fn by_request(&self) -> bool {
        self.code.is_some()
    }
}

/// A finished answer and its sources' texts (for previews), in source
/// order.
pub struct Answered {
    pub answer: Answer,
    pub texts: Vec<String>,
}

/// What the folder does, for status lines and logs.
#[derive(Debug)]
pub enum FolderEvent {
    /// The model is loaded ([`Service::spawn`] only).
    Loaded { ms: f64 },
    /// A text pass committed: questions are answered from this index.
    TextReady {
        report: UpdateReport,
        files: usize,
        chunks: usize,
    },
    /// Progress of a stage (a bar's worth: `done` of `total`).
    Progress(IndexProgress),
    /// Every stage done for what changed: the report of the whole pass,
    /// from the text stage to the last state, and how many changed paths
    /// the watcher reported for it (0: the first pass).
    Indexed {
        report: UpdateReport,
        changes: usize,
    },
    /// Preloading ended ([`ServiceOptions::preload`]): first questions
    /// over these states read nothing from disk.
    Preloaded(PreloadReport),
    /// Something the user should know (a watcher problem); work goes on.
    Note(String),
    /// A failure: `fatal` ends the service (every later question fails
    /// with it).
    Error { message: String, fatal: bool },
}

/// Why a question was not taken.
#[derive(Debug, thiserror::Error)]
pub enum AskRefused {
    #[error("{0} questions are already waiting for the model")]
    Busy(usize),
    #[error("the service has stopped")]
    Stopped,
    /// The service could not start or stopped on a fatal error (a model
    /// that does not load, a folder that cannot be read): every question
    /// gets it at once.
    #[error("{0}")]
    Failed(String),
}

/// Why the service stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
}

enum Request {
    Ask(Box<Pending>),
    Changed(Vec<PathBuf>),
    /// The watcher's trouble, passed on as a note.
    Note(String),
    Shutdown,
}

struct Pending {
    question: Question,
    events: Sender<AnswerEvent>,
    cancel: Arc<AtomicBool>,
    queued: Instant,
    /// The question's announcement to the compute budget, held until it
    /// is answered.
    _announced: Option<Held>,
}

/// Talks to a running service; cheap to clone.
#[derive(Clone)]
pub struct Handle {
    tx: Sender<Request>,
    waiting: Arc<AtomicUsize>,
    queue: usize,
    budget: Budget,
    /// Set once on a fatal error: questions are refused with it.
    failed: Arc<OnceLock<String>>,
}

/// A question handed in: its events, and a switch that stops it (dropping
/// `events` stops it too, at the next token).
pub struct Ticket {
    pub events: Receiver<AnswerEvent>,
    pub cancel: Arc<AtomicBool>,
}

impl Handle {
    /// Queues `question`, or refuses at once when the queue is full.
    pub fn ask(&self, question: Question) -> Result<Ticket, AskRefused> {
        if let Some(message) = self.failed.get() {
            return Err(AskRefused::Failed(message.clone()));
        }
        let waiting = self.waiting.fetch_add(1, Ordering::SeqCst);
        if waiting >= self.queue.max(1) {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(AskRefused::Busy(waiting));
        }
        let (events, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let pending = Pending {
            question,
            events,
            cancel: Arc::clone(&cancel),
            queued: Instant::now(),
            // Announced now: background work anywhere yields at once.
            _announced: self.budget.announce().ok(),
        };
        if self.tx.send(Request::Ask(Box::new(pending))).is_err() {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(AskRefused::Stopped);
        }
        Ok(Ticket { events: rx, cancel })
    }

    /// The fatal error the service stopped on, if it did.
    pub fn failed(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// Questions waiting or being answered.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Files changed (the built-in watcher does this itself).
    pub fn changed(&self, paths: Vec<PathBuf>) {
        let _ = self.tx.send(Request::Changed(paths));
    }

    /// Stops after the questions already queued are answered; background
    /// work stops after its unit in flight (it resumes exactly next time).
    pub fn shutdown(&self) {
        let _ = self.tx.send(Request::Shutdown);
    }
}

/// A folder's service before it runs.
pub struct Service {
    options: ServiceOptions,
    handle: Handle,
    rx: Receiver<Request>,
}

impl Service {
    pub fn new(options: ServiceOptions, budget: Budget) -> Self {
        let (tx, rx) = mpsc::channel();
        let handle = Handle {
            tx,
            waiting: Arc::new(AtomicUsize::new(0)),
            queue: options.queue,
            budget,
            failed: Arc::new(OnceLock::new()),
        };
        Self {
            options,
            handle,
            rx,
        }
    }

    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Loads the model with `load` and opens `spec` on a thread of its
    /// own, then runs there; events go to `events`. If loading or opening
    /// fails, the error is sent as a fatal event and every question gets
    /// it, so no client hangs.
    pub fn spawn<L, E>(
        self,
        load: L,
        spec: FolderSpec,
        events: Sender<FolderEvent>,
    ) -> std::io::Result<JoinHandle<()>>
    where
        L: FnOnce() -> Result<Engine, E> + Send + 'static,
        E: std::fmt::Display,
    {
        std::thread::Builder::new()
            .name("folder-service".into())
            .spawn(move || {
                let sink = events.clone();
                let rx_failed = |this: Self, message: String| {
                    let _ = sink.send(FolderEvent::Error {
                        message: message.clone(),
                        fatal: true,
                    });
                    this.refuse_all(&message);
                };
                let t = Instant::now();
                let engine = match load() {
                    Ok(e) => e,
                    Err(e) => return rx_failed(self, format!("{e:#}")),
                };
                let _ = events.send(FolderEvent::Loaded {
                    ms: t.elapsed().as_secs_f64() * 1e3,
                });
                let opened = Workspace::open_in(
                    &engine,
                    &spec.folder,
                    spec.index_dir.clone(),
                    &spec.options,
                    spec.store,
                );
                let mut ws = match opened {
                    // Answers and background units under the budget the
                    // handle announces questions to.
                    Ok(ws) => ws.with_budget(self.handle.budget.clone()),
                    Err(e) => return rx_failed(self, e.to_string()),
                };
                let mut emit = |e| {
                    let _ = events.send(e);
                };
                let (rx, handle) = (&self.rx, self.handle.clone());
                let options = self.options.clone();
                if let Err(e) = run_loop(&options, &handle, rx, &mut ws, &mut emit) {
                    drop(ws);
                    rx_failed(self, e.to_string());
                }
            })
    }

    /// Runs over an open folder on this thread until shut down (or, with
    /// [`Until::Indexed`], indexed).
    pub fn run(
        self,
        ws: &mut Workspace<'_>,
        events: &mut dyn FnMut(FolderEvent),
    ) -> Result<(), ServiceError> {
        run_loop(&self.options, &self.handle, &self.rx, ws, events)
    }

    /// After a fatal error: every question, queued or later, fails with it
    /// (later ones at [`Handle::ask`], without queueing), until shut down.
    fn refuse_all(self, message: &str) {
        let _ = self.handle.failed.set(message.to_string());
        // Handed in before the error was set: they fail here.
        while let Ok(r) = self.rx.recv() {
            match r {
                Request::Ask(p) => {
                    let _ = p.events.send(AnswerEvent::Failed(Failure {
                        message: message.to_string(),
                        code: None,
                    }));
                    self.handle.waiting.fetch_sub(1, Ordering::SeqCst);
                }
                Request::Shutdown => return,
                Request::Changed(_) | Request::Note(_) => {}
            }
        }
    }
}

/// Indexes `ws` completely (text, vectors, and states if `with_states`)
/// through the service, on this thread; progress as it goes.
pub fn index(
    ws: &mut Workspace<'_>,
    with_states: bool,
    progress: &mut dyn FnMut(IndexProgress),
) -> Result<UpdateReport, ServiceError> {
    let service = Service::new(ServiceOptions::indexing(with_states), ws.budget().clone());
    let mut report = None;
    service.run(ws, &mut |e| match e {
        FolderEvent::Progress(p) => progress(p),
        FolderEvent::Indexed { report: r, .. } => report = Some(r),
        _ => {}
    })?;
    Ok(report.unwrap_or_default())
}

/// One pass over what changed: the text stage's report, then the
/// background units added to it, until every stage is done.
struct Pass {
    report: UpdateReport,
    started: Instant,
    changes: usize,
    /// Units still to do per stage when counting started.
    vectors_total: usize,
    states_total: usize,
    /// Units still to do per stage, as the last unit said.
    vectors_left: usize,
    states_left: usize,
    /// The stage last announced, so each is announced as it starts (before
    /// its first unit, which may take seconds), not after.
    opened: Option<Stage>,
    background_started: Option<Instant>,
    reported: bool,
}

impl Pass {
    fn new(report: UpdateReport, started: Instant, changes: usize, ws: &Workspace<'_>) -> Self {
        let b = ws.backlog();
        Self {
            report,
            started,
            changes,
            vectors_total: b.vectors.len(),
            states_total: b.states.len(),
            vectors_left: b.vectors.len(),
            states_left: b.states.len(),
            opened: None,
            background_started: None,
            reported: false,
        }
    }

    /// Folds a later text pass (a watcher batch mid-pass) into this one.
    fn absorb(&mut self, r: UpdateReport, changes: usize, ws: &Workspace<'_>) {
        let p = &mut self.report;
        p.files_seen = r.files_seen;
        p.files_indexed += r.files_indexed;
        p.files_unchanged = r.files_unchanged;
        p.files_removed += r.files_removed;
        p.files_skipped = r.files_skipped;
        p.files_noted.extend(r.files_noted);
        p.chunks_added += r.chunks_added;
        p.chunks_removed += r.chunks_removed;
        p.chunks_unencodable.extend(r.chunks_unencodable);
        p.tokens = r.tokens;
        p.cache_hits += r.cache_hits;
        p.busy |= r.busy;
        self.changes += changes;
        let b = ws.backlog();
        (self.vectors_total, self.states_total) = (b.vectors.len(), b.states.len());
        (self.vectors_left, self.states_left) = (b.vectors.len(), b.states.len());
        self.opened = None;
        self.reported = false;
    }

    /// The stage the next unit belongs to, announced once as it opens.
    fn opening(&mut self, with_states: bool) -> Option<IndexProgress> {
        let (stage, left, total) = if self.vectors_left > 0 {
            (Stage::Vectors, self.vectors_left, self.vectors_total)
        } else if with_states && self.states_left > 0 {
            (Stage::States, self.states_left, self.states_total)
        } else {
            return None;
        };
        if self.opened == Some(stage) {
            return None;
        }
        self.opened = Some(stage);
        let total = total.max(left);
        Some(IndexProgress::Stage {
            stage,
            done: total - left,
            total,
        })
    }

    /// Counts a unit and says how far its stage is.
    fn unit(&mut self, step: Step) -> Option<IndexProgress> {
        self.background_started.get_or_insert_with(Instant::now);
        let (stage, left, total) = match step {
            Step::Vectors { done, left } => {
                self.report.chunks_embedded += done;
                self.vectors_left = left;
                (Stage::Vectors, left, &mut self.vectors_total)
            }
            Step::State { encoded, left } => {
                self.report.chunks_encoded += usize::from(encoded);
                self.states_left = left;
                (Stage::States, left, &mut self.states_total)
            }
            Step::Unencodable {
                chunk,
                reason,
                left,
            } => {
                self.report.chunks_unencodable.push(crate::ingest::Skipped {
                    path: chunk,
                    reason,
                });
                self.states_left = left;
                (Stage::States, left, &mut self.states_total)
            }
            Step::Yielded | Step::Preload { .. } | Step::Preloaded(_) => return None,
        };
        // The backlog grew (a question's chunks go first): count afresh.
        if left >= *total {
            *total = left + 1;
        }
        Some(IndexProgress::Stage {
            stage,
            done: *total - left,
            total: *total,
        })
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The service's one loop: see the module comment.
fn run_loop(
    o: &ServiceOptions,
    handle: &Handle,
    rx: &Receiver<Request>,
    ws: &mut Workspace<'_>,
    emit: &mut dyn FnMut(FolderEvent),
) -> Result<(), ServiceError> {
    // Watch first: a change made while the first pass runs is queued,
    // never missed.
    let _watcher = match o.watch {
        Some(debounce) => watcher(
            ws.index.folder(),
            ws.index.filters(),
            debounce,
            handle,
            emit,
        ),
        None => None,
    };
    let started = Instant::now();
    let mut pass = Pass::new(text_pass(ws, emit)?, started, 0, ws);
    let mut asks: VecDeque<Box<Pending>> = VecDeque::new();
    let (mut changes, mut shutdown) = (0usize, false);
    // How long to wait for a request before the next background unit.
    let mut wait = Duration::ZERO;
    let mut idle = false;
    let preloads = o.preload && ws.states.engine.preloads();
    loop {
        // Take in everything that arrived; block only when there is
        // nothing else to do.
        let resting = idle && !(preloads && ws.preload_pending());
        let mut first = if asks.is_empty() && changes == 0 && !shutdown && resting {
            // The service keeps a handle itself, so this waits for a request.
            match rx.recv() {
                Ok(r) => Some(r),
                Err(_) => return Ok(()),
            }
        } else if wait > Duration::ZERO {
            rx.recv_timeout(wait).ok()
        } else {
            None
        };
        wait = Duration::ZERO;
        loop {
            let r = match first.take() {
                Some(r) => r,
                None => match rx.try_recv() {
                    Ok(r) => r,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => break,
                },
            };
            match r {
                Request::Ask(p) => asks.push_back(p),
                Request::Changed(paths) => changes += paths.len().max(1),
                Request::Note(n) => emit(FolderEvent::Note(n)),
                Request::Shutdown => shutdown = true,
            }
        }
        // Questions first.
        if let Some(p) = asks.pop_front() {
            answer(ws, o, *p);
            handle.waiting.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        if shutdown {
            if !pass.reported {
                pass.report.cancelled = true;
                finish(ws, &mut pass, emit);
            }
            return Ok(());
        }
        if changes > 0 {
            let t = Instant::now();
            match text_pass(ws, emit) {
                Ok(r) if pass.reported => pass = Pass::new(r, t, changes, ws),
                Ok(r) => pass.absorb(r, changes, ws),
                Err(e) => emit(FolderEvent::Error {
                    message: format!("re-indexing failed: {e}"),
                    fatal: false,
                }),
            }
            changes = 0;
            idle = false;
            continue;
        }
        if idle {
            if preloads {
                wait = preload_unit(ws, emit);
            }
            continue;
        }
        if let Some(p) = pass.opening(o.with_states) {
            emit(FolderEvent::Progress(p));
        }
        let stepped = ws.step(o.with_states);
        // The shared store's notes (down, back, a bad value), as they come.
        for n in ws.states.store.take_notes() {
            emit(FolderEvent::Note(n));
        }
        match stepped {
            Ok(Some(Step::Yielded)) => wait = Duration::from_millis(100),
            Ok(Some(step)) => {
                if let Step::Unencodable { chunk, reason, .. } = &step {
                    emit(FolderEvent::Note(format!(
                        "{chunk}: its state cannot be encoded ({reason}); skipped"
                    )));
                }
                if let Some(p) = pass.unit(step) {
                    emit(FolderEvent::Progress(p));
                }
            }
            Ok(None) => {
                finish(ws, &mut pass, emit);
                idle = true;
                if o.until == Until::Indexed {
                    return Ok(());
                }
            }
            Err(e) => {
                // The pass is over for now; the next batch retries.
                emit(FolderEvent::Error {
                    message: format!("background indexing failed: {e}"),
                    fatal: false,
                });
                pass.report.cancelled = true;
                finish(ws, &mut pass, emit);
                idle = true;
                if o.until == Until::Indexed {
                    return Err(e.into());
                }
            }
        }
    }
}

/// One unit of preloading, reported; how long to wait before the next.
fn preload_unit(ws: &mut Workspace<'_>, emit: &mut dyn FnMut(FolderEvent)) -> Duration {
    match ws.preload_step() {
        Ok(Some(Step::Yielded)) => return Duration::from_millis(100),
        Ok(Some(Step::Preload { left, total })) => {
            emit(FolderEvent::Progress(IndexProgress::Stage {
                stage: Stage::Memory,
                done: total - left,
                total,
            }))
        }
        // Nothing to say for a folder without stored states.
        Ok(Some(Step::Preloaded(r))) if r.loaded + r.held > 0 || r.full => {
            emit(FolderEvent::Preloaded(r))
        }
        Ok(_) => {}
        // Only speed is lost: questions read their states from disk.
        Err(e) => emit(FolderEvent::Note(format!("preloading states stopped: {e}"))),
    }
    Duration::ZERO
}

/// Starts the folder's watcher, its batches sent to the service itself.
fn watcher(
    folder: &Path,
    filters: &Filters,
    debounce: Duration,
    handle: &Handle,
    emit: &mut dyn FnMut(FolderEvent),
) -> Option<FolderWatcher> {
    let handle = handle.clone();
    let started = FolderWatcher::start(
        folder,
        filters,
        debounce,
        crate::paths::cache_dir(),
        move |m| match m {
            WatchMsg::Changed(paths) => handle.changed(paths),
            WatchMsg::Error(e) => {
                let _ = handle.tx.send(Request::Note(format!("watcher: {e}")));
            }
        },
    );
    match started {
        Ok(w) => Some(w),
        Err(e) => {
            emit(FolderEvent::Note(format!(
                "watcher unavailable ({e}): changes are picked up on the next start"
            )));
            None
        }
    }
}

/// The text stage, reported as it goes and when committed.
fn text_pass(
    ws: &mut Workspace<'_>,
    emit: &mut dyn FnMut(FolderEvent),
) -> Result<UpdateReport, WorkspaceError> {
    let never = AtomicBool::new(false);
    let r = ws.refresh_text(&never, &mut |p| emit(FolderEvent::Progress(p)))?;
    emit(FolderEvent::TextReady {
        report: r.clone(),
        files: ws.index.files(),
        chunks: ws.index.len(),
    });
    Ok(r)
}

/// Ends a pass: the cache budget check, the figures, the event.
fn finish(ws: &mut Workspace<'_>, pass: &mut Pass, emit: &mut dyn FnMut(FolderEvent)) {
    let r = &mut pass.report;
    if let Some(t) = pass.background_started {
        r.timings_ms.embed = ms(t.elapsed());
    }
    ws.settle(r);
    r.timings_ms.total = ms(pass.started.elapsed());
    pass.reported = true;
    emit(FolderEvent::Indexed {
        report: r.clone(),
        changes: pass.changes,
    });
}

/// Answers one question, its events to its own channel; a client that
/// went away (or cancelled) stops the answer at the next token.
fn answer(ws: &mut Workspace<'_>, o: &ServiceOptions, p: Pending) {
    let Pending {
        question,
        events,
        cancel,
        queued,
        _announced,
    } = p;
    if cancel.load(Ordering::SeqCst)
        || events
            .send(AnswerEvent::Started {
                waited: queued.elapsed(),
            })
            .is_err()
    {
        return; // nobody waits for it any more
    }
    let mut options = question.options.unwrap_or_else(|| o.ask.clone());
    options.files.extend(question.files);
    let result = ws.ask(&question.text, &question.history, &options, &mut |piece| {
        let token = AnswerEvent::Token {
            text: piece.text.to_string(),
            tokens: piece.tokens.to_vec(),
        };
        events.send(token).is_ok() && !cancel.load(Ordering::SeqCst)
    });
    match result {
        Ok(answer) => {
            let texts = answer
                .sources
                .iter()
                .map(|s| ws.index.text(s.hit.id).ok().flatten().unwrap_or_default())
                .collect();
            let _ = events.send(AnswerEvent::Answered(Box::new(Answered { answer, texts })));
        }
        Err(e) => {
            let _ = events.send(AnswerEvent::Failed(Failure {
                message: e.to_string(),
                code: e.code(),
            }));
        }
    }
}
