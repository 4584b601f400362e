//! `ape-chat watch DIR`: keep a folder's index and KV states current in the
//! background (the TUI runs the same loop on its own thread).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::output::{print_summary, IndexBar};
use super::style::dim;
use super::{FolderArgs, ModelArgs, CANCEL};
use crate::index::UpdateReport;
use crate::kvstore::KvStore;
use crate::watch::{FolderWatcher, WatchMsg};
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The folder to keep indexed.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Quiet time after the last change before re-indexing.
    #[arg(long, default_value_t = 1500, value_name = "MS")]
    debounce_ms: u64,
    /// JSON Lines on stdout: `update` records (index reports) and `error`s.
    #[arg(long)]
    json: bool,
}

pub fn run(model: &ModelArgs, args: &WatchArgs) -> anyhow::Result<ExitCode> {
    let engine = model.load(2048)?;
    // Watch first: a change made while the initial update runs is queued,
    // never missed.
    let (tx, rx) = mpsc::channel();
    let debounce = Duration::from_millis(args.debounce_ms.max(50));
    let _watcher = FolderWatcher::start(&args.dir, debounce, crate::paths::cache_dir(), move |m| {
        let _ = tx.send(m);
    })
    .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", args.dir.display()))?;
    let mut ws = Workspace::open(
        &engine,
        &args.dir,
        &args.folder.options(),
        KvStore::default_location(),
    )?;
    // Every unit of the refresh yields to questions anywhere on the machine
    // (the compute budget), so a TUI or `--ask` is never starved by this.
    let refresh = |ws: &mut Workspace<'_>| {
        let mut bar = IndexBar::new(args.json);
        let r = ws.refresh(true, &CANCEL, &mut |p| bar.show(p));
        bar.finish();
        r
    };
    emit(args.json, &refresh(&mut ws)?, 0);
    if !args.json {
        eprintln!(
            "{}",
            dim(&format!("watching {} (Ctrl-C to stop)", args.dir.display()))
        );
    }
    while !CANCEL.load(Ordering::Relaxed) {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(WatchMsg::Changed(mut paths)) => {
                // Coalesce whatever else arrived while we were busy.
                while let Ok(WatchMsg::Changed(more)) = rx.try_recv() {
                    paths.extend(more);
                }
                match refresh(&mut ws) {
                    Ok(r) => emit(args.json, &r, paths.len()),
                    Err(e) => error(args.json, &format!("re-indexing failed: {e}")),
                }
            }
            Ok(WatchMsg::Error(e)) => error(args.json, &format!("watcher: {e}")),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn emit(json: bool, r: &UpdateReport, events: usize) {
    if json {
        let mut v = serde_json::to_value(r).unwrap_or_default();
        v["type"] = json!("update");
        v["events"] = json!(events);
        println!("{v}");
    } else if events == 0 || r.files_indexed + r.files_removed > 0 {
        print_summary(r);
    }
}

fn error(json: bool, msg: &str) {
    if json {
        println!("{}", json!({"type": "error", "message": msg}));
    } else {
        eprintln!("{msg}");
    }
}
