//! `ape-chat [DIR]`: the interactive UI. The UI thread never touches the
//! engine: a worker thread owns the model, the folder and the watcher, and
//! both sides talk through messages (one channel each way). Chat history
//! persists per folder.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::output::{eta, stage_name};
use super::{AskArgs, FolderArgs, ModelArgs};
use crate::answer::AskOptions;
use crate::compute::{Budget, Held};
use crate::index::{IndexProgress, Stage};
use crate::kvstore::KvStore;
use crate::tui::{self, Effect, Model, Msg, SourceView, Status, Turn};
use crate::watch::{FolderWatcher, WatchMsg};
use crate::workspace::{context_size, Step, Workspace};

pub fn run(
    model: &ModelArgs,
    ask_args: &AskArgs,
    folder: &FolderArgs,
    dir: &Path,
) -> anyhow::Result<ExitCode> {
    let dir = dir
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    let options = ask_args.options(true)?;
    let history = crate::index::index_dir(&dir).join("chat.json");
    let turns: Vec<Turn> = std::fs::read(&history)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let status = Status {
        model: model
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        mode: format!("{} · {}", ask_args.setting_label(), options.mode),
        ..Status::default()
    };

    let (tx, rx) = mpsc::channel();
    let (events_tx, events_rx) = mpsc::channel::<Event>();
    let cancel = Arc::new(AtomicBool::new(false));
    let worker = Worker {
        model: model.clone(),
        folder: folder.clone(),
        options,
        dir: dir.clone(),
        tx: tx.clone(),
        cancel: Arc::clone(&cancel),
    };
    let watch_tx = events_tx.clone();
    std::thread::spawn(move || worker.run(events_rx, watch_tx));
    let save = |turns: &[Turn]| {
        if let Ok(json) = serde_json::to_vec(turns) {
            let _ = crate::fsutil::write_atomic(&history, &[&json]);
        }
    };
    let end = tui::run(
        Model::new(turns, status),
        &dir,
        tx,
        rx,
        |m, effect| match effect {
            Effect::Ask(q) => {
                cancel.store(false, Ordering::SeqCst);
                // Announced now, so background encoding (here or in another
                // process) stops before the worker even reads the question.
                let announced = Budget::default().announce().ok();
                let _ = events_tx.send(Event::Ask(q, announced));
            }
            Effect::Cancel => cancel.store(true, Ordering::SeqCst),
            Effect::Save => save(&m.turns),
            Effect::Quit | Effect::Open(_) | Effect::Copy(_) => {}
        },
    )?;
    save(&end.turns);
    Ok(ExitCode::SUCCESS)
}

/// What the worker hears, on one channel: questions from the UI and
/// batches from the folder watcher.
enum Event {
    /// A question, and its announcement to the compute budget (held until
    /// it is answered).
    Ask(String, Option<Held>),
    Watch(WatchMsg),
}

/// Owns everything that computes; reports through `tx`.
struct Worker {
    model: ModelArgs,
    folder: FolderArgs,
    options: AskOptions,
    dir: PathBuf,
    tx: Sender<Msg>,
    cancel: Arc<AtomicBool>,
}

impl Worker {
    fn send(&self, m: Msg) {
        let _ = self.tx.send(m);
    }

    fn run(self, events: Receiver<Event>, watch_tx: Sender<Event>) {
        if let Err(e) = self.serve(&events, watch_tx) {
            self.send(Msg::Activity(format!("error: {e:#}")));
            // Keep answering requests with the error so the UI never hangs.
            while let Ok(ev) = events.recv() {
                if let Event::Ask(..) = ev {
                    self.send(Msg::Failed(format!("{e:#}")));
                }
            }
        }
    }

    /// Loads the model, makes the folder answerable (the text stage, in
    /// seconds), then answers questions as they come and, between them, does
    /// the rest of the indexing one unit at a time: a question stops a state
    /// encoding in flight (an embedding batch in flight ends first).
    fn serve(&self, events: &Receiver<Event>, watch_tx: Sender<Event>) -> anyhow::Result<()> {
        self.send(Msg::Activity("loading model…".into()));
        let o = &self.options;
        let engine = self.model.load(context_size(
            o.top_k,
            self.folder.chunk_tokens(),
            o.generate.max_tokens,
        ))?;
        let _watcher = FolderWatcher::start(
            &self.dir,
            Duration::from_millis(1500),
            crate::paths::cache_dir(),
            move |m| {
                let _ = watch_tx.send(Event::Watch(m));
            },
        )
        .map_err(|e| self.send(Msg::Activity(format!("watcher unavailable: {e}"))))
        .ok();
        let mut ws = Workspace::open(
            &engine,
            &self.dir,
            &self.folder.options(),
            KvStore::default_location(),
        )?;
        self.refresh_text(&mut ws)?;
        let mut background = Background::new(&ws);
        // How long to wait for an event before the next background unit:
        // none, unless the last unit yielded to a question elsewhere.
        let mut wait = Duration::ZERO;
        loop {
            let event = if background.done {
                match events.recv() {
                    Ok(e) => Some(e),
                    Err(_) => return Ok(()),
                }
            } else {
                match events.recv_timeout(wait) {
                    Ok(e) => Some(e),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                }
            };
            wait = Duration::ZERO;
            match event {
                Some(Event::Ask(q, announced)) => {
                    self.answer(&q, &mut ws);
                    drop(announced);
                }
                Some(Event::Watch(WatchMsg::Changed(_))) => {
                    // Coalesce what else arrived meanwhile; one text pass
                    // covers all of it.
                    self.send(Msg::Activity("re-reading changed files…".into()));
                    match self.refresh_text(&mut ws) {
                        Ok(()) => background = Background::new(&ws),
                        Err(e) => self.send(Msg::Activity(format!("re-indexing failed: {e}"))),
                    }
                }
                Some(Event::Watch(WatchMsg::Error(e))) => {
                    self.send(Msg::Activity(format!("watcher: {e}")))
                }
                None => match ws.step(true) {
                    Ok(Some(Step::Yielded)) => wait = Duration::from_millis(100),
                    Ok(Some(step)) => self.send(Msg::Activity(background.after(step))),
                    Ok(None) => {
                        background.done = true;
                        self.send(Msg::Activity("ready · every chunk state cached".into()));
                    }
                    Err(e) => {
                        background.done = true;
                        self.send(Msg::Activity(format!("background indexing failed: {e}")));
                    }
                },
            }
        }
    }

    /// The text stage, with the status bar following it.
    fn refresh_text(&self, ws: &mut Workspace<'_>) -> anyhow::Result<()> {
        let never = AtomicBool::new(false);
        let r = ws.refresh_text(&never, &mut |p| {
            if let IndexProgress::Stage { stage, done, total } = p {
                self.send(Msg::Activity(format!(
                    "{} {done}/{total}",
                    stage_name(stage)
                )));
            }
        })?;
        self.send(Msg::Index {
            files: ws.index.files(),
            chunks: ws.index.len(),
        });
        if r.files_indexed + r.files_removed > 0 {
            self.send(Msg::Activity(format!(
                "answers ready · {} files read, {} removed",
                r.files_indexed, r.files_removed
            )));
        } else {
            self.send(Msg::Activity("answers ready".into()));
        }
        Ok(())
    }

    fn answer(&self, q: &str, ws: &mut Workspace<'_>) {
        let cancel = &self.cancel;
        let result = ws.ask(q, &self.options, &mut |piece| {
            self.send(Msg::Token(piece.to_string()));
            !cancel.load(Ordering::SeqCst)
        });
        match result {
            Ok(a) => {
                if !a.notes.is_empty() {
                    self.send(Msg::Activity(format!("note: {}", a.notes.join("; "))));
                }
                let sources = a
                    .sources
                    .iter()
                    .map(|s| SourceView {
                        path: s.chunk.path.clone(),
                        lines: s.chunk.lines,
                        heading: s.chunk.heading.join(" › "),
                        share: s.attention_share,
                        preview: ws.index.text(s.hit.id).ok().flatten().unwrap_or_default(),
                        place: s.chunk.place.as_ref().map(ToString::to_string),
                        editable: s.chunk.place.is_none()
                            && crate::ingest::extract::lines_are_the_files(Path::new(
                                &s.chunk.path,
                            )),
                    })
                    .collect();
                let g = &a.generated;
                self.send(Msg::Answered {
                    sources,
                    ttft_ms: a.ttft.as_secs_f64() * 1e3,
                    tokens_per_s: g.decode_tokens_per_s(),
                });
            }
            Err(e) => self.send(Msg::Failed(e.to_string())),
        }
    }
}

/// Progress of the background stages, for the status bar.
struct Background {
    done: bool,
    vectors: (usize, Instant),
    states: (usize, Instant),
}

impl Background {
    fn new(ws: &Workspace<'_>) -> Self {
        let b = ws.backlog();
        Self {
            done: b.is_empty(),
            vectors: (b.vectors.len(), Instant::now()),
            states: (b.states.len(), Instant::now()),
        }
    }

    /// The status line after `step`: the stage, how far, and an ETA.
    fn after(&mut self, step: Step) -> String {
        let (stage, left, (total, started)) = match step {
            Step::Vectors { left, .. } => (Stage::Vectors, left, &mut self.vectors),
            Step::State { left, .. } => (Stage::States, left, &mut self.states),
            Step::Yielded => return String::new(),
        };
        if left >= *total {
            // The backlog grew (a question's chunks): restart the count.
            (*total, *started) = (left + 1, Instant::now());
        }
        let done = *total - left;
        format!(
            "answers ready · {} {done}/{}{}",
            stage_name(stage),
            *total,
            eta(*started, done, *total)
        )
    }
}
