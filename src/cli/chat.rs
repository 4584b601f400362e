//! `ape-chat [DIR]`: the interactive UI. The UI thread never touches the
//! engine: a worker thread owns the model, the index and the watcher, and
//! both sides talk through messages. Chat history persists per folder.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use super::ask::AskArgs;
use super::index::{prepare, update, FolderArgs};
use super::ModelArgs;
use crate::answer::{ask, AskOptions};
use crate::tui::{self, Effect, Model, Msg, SourceView, Status, Turn};
use crate::watch::{FolderWatcher, WatchMsg};

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
    let (req_tx, req_rx) = mpsc::channel::<String>();
    let cancel = Arc::new(AtomicBool::new(false));
    let worker = Worker {
        model: model.clone(),
        folder: folder.clone(),
        options,
        dir: dir.clone(),
        tx: tx.clone(),
        cancel: Arc::clone(&cancel),
    };
    std::thread::spawn(move || worker.run(req_rx));
    let save = |turns: &[Turn]| {
        if let Ok(json) = serde_json::to_vec(turns) {
            let _ = crate::fsutil::write_atomic(&history, &[&json]);
        }
    };
    let end = tui::run(
        Model::new(turns, status),
        tx,
        rx,
        |m, effect| match effect {
            Effect::Ask(q) => {
                cancel.store(false, Ordering::SeqCst);
                let _ = req_tx.send(q);
            }
            Effect::Cancel => cancel.store(true, Ordering::SeqCst),
            Effect::Save => save(&m.turns),
            Effect::Quit => {}
        },
    )?;
    save(&end.turns);
    Ok(ExitCode::SUCCESS)
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

    fn run(self, requests: Receiver<String>) {
        if let Err(e) = self.serve(&requests) {
            self.send(Msg::Activity(format!("error: {e:#}")));
            // Keep answering requests with the error so the UI never hangs.
            while requests.recv().is_ok() {
                self.send(Msg::Failed(format!("{e:#}")));
            }
        }
    }

    fn serve(&self, requests: &Receiver<String>) -> anyhow::Result<()> {
        self.send(Msg::Activity("loading model…".into()));
        let ctx = 1024
            + self.options.top_k * (self.folder.chunk_tokens() * 3 / 2 + 64)
            + self.options.generate.max_tokens;
        let engine = self.model.load(ctx.next_multiple_of(256) as u32)?;
        let (wtx, wrx) = mpsc::channel();
        let _watcher = FolderWatcher::start(
            &self.dir,
            Duration::from_millis(1500),
            crate::paths::cache_dir(),
            wtx,
        )
        .map_err(|e| self.send(Msg::Activity(format!("watcher unavailable: {e}"))))
        .ok();
        self.send(Msg::Activity("indexing…".into()));
        let mut p = prepare(&engine, &self.folder, &self.dir, true, true)?;
        self.send(Msg::Index {
            files: p.index.files(),
            chunks: p.index.len(),
        });
        self.send(Msg::Activity("ready".into()));
        loop {
            match requests.recv_timeout(Duration::from_millis(200)) {
                Ok(q) => self.answer(&q, &mut p),
                Err(RecvTimeoutError::Timeout) => self.on_watch(&wrx, &mut p),
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
    }

    fn answer(&self, q: &str, p: &mut super::index::Prepared<'_>) {
        let cancel = &self.cancel;
        let result = ask(
            &p.states,
            &p.index,
            &mut p.embedder,
            q,
            &self.options,
            &mut |piece| {
                self.send(Msg::Token(piece.to_string()));
                !cancel.load(Ordering::SeqCst)
            },
        );
        match result {
            Ok(a) => {
                let sources = a
                    .sources
                    .iter()
                    .map(|s| SourceView {
                        path: s.chunk.path.clone(),
                        lines: s.chunk.lines,
                        heading: s.chunk.heading.join(" › "),
                        share: s.attention_share,
                        preview: p.index.text(s.hit.id).ok().flatten().unwrap_or_default(),
                    })
                    .collect();
                let g = &a.generated;
                self.send(Msg::Answered {
                    sources,
                    ttft_ms: g.ttft.as_secs_f64() * 1e3,
                    tokens_per_s: g.decode_tokens_per_s(),
                });
            }
            Err(e) => self.send(Msg::Failed(e.to_string())),
        }
    }

    fn on_watch(&self, wrx: &Receiver<WatchMsg>, p: &mut super::index::Prepared<'_>) {
        let mut changed = 0;
        for msg in wrx.try_iter() {
            match msg {
                WatchMsg::Changed(paths) => changed += paths.len(),
                WatchMsg::Error(e) => self.send(Msg::Activity(format!("watcher: {e}"))),
            }
        }
        if changed == 0 {
            return;
        }
        self.send(Msg::Activity("re-indexing changed files…".into()));
        match update(&mut p.index, &p.states, &mut p.embedder, &self.folder, true) {
            Ok(r) => {
                self.send(Msg::Index {
                    files: p.index.files(),
                    chunks: p.index.len(),
                });
                self.send(Msg::Activity(format!(
                    "re-indexed: {} updated, {} removed",
                    r.files_indexed, r.files_removed
                )));
            }
            Err(e) => self.send(Msg::Activity(format!("re-indexing failed: {e}"))),
        }
    }
}
