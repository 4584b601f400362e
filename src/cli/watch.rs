//! `ape-chat watch DIR`: keep a folder's index and KV states current in the
//! background: the folder service with its watcher, its events printed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::output::{print_summary, Followed, Follower, IndexBar};
use super::style::dim;
use super::{FolderArgs, ModelArgs};
use crate::compute::Budget;
use crate::index::UpdateReport;
use crate::service::{Service, ServiceOptions, Until};

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
    // Every unit of background work yields to questions anywhere on the
    // machine (the compute budget), so a TUI or `--ask` is never starved.
    let service = Service::new(
        ServiceOptions {
            watch: Some(Duration::from_millis(args.debounce_ms.max(50))),
            until: Until::Shutdown,
            ..ServiceOptions::indexing(true)
        },
        Budget::default(),
    );
    let handle = service.handle();
    let (tx, events) = mpsc::channel();
    super::start_service(model, 2048, &args.dir, &args.folder, service, tx)?;
    let mut bar = IndexBar::for_json(args.json);
    let mut first = true;
    let mut follow = Follower::new(events, handle);
    loop {
        match follow.next(&mut bar)? {
            Followed::Indexed(report, changes) => {
                bar.finish();
                if report.cancelled {
                    break;
                }
                emit(args.json, &report, changes);
                if std::mem::take(&mut first) && !args.json {
                    eprintln!(
                        "{}",
                        dim(&format!("watching {} (Ctrl-C to stop)", args.dir.display()))
                    );
                }
                bar = IndexBar::for_json(args.json);
            }
            Followed::Note(message) => error(args.json, &message),
            Followed::Stopped => break,
        }
    }
    bar.finish();
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
