//! `ape-chat index DIR`: bring a folder's index and KV-state cache up to
//! date through the folder service, with progress per stage (stderr) or a
//! JSON report (stdout).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use clap::Args;

use super::output::{print_summary, IndexBar};
use super::style::dim;
use super::{FolderArgs, ModelArgs, CANCEL};
use crate::compute::Budget;
use crate::service::{FolderEvent, Service, ServiceOptions};

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The folder to index.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Index text and vectors only; KV states are encoded when an answer
    /// first needs them.
    #[arg(long)]
    no_states: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(model: &ModelArgs, args: &IndexArgs) -> anyhow::Result<ExitCode> {
    let service = Service::new(ServiceOptions::indexing(!args.no_states), Budget::default());
    let handle = service.handle();
    let (tx, events) = mpsc::channel();
    super::start_service(model, 2048, &args.dir, &args.folder, service, tx)?;
    let mut bar = IndexBar::new(args.json);
    let mut asked_to_stop = false;
    let report = loop {
        match events.recv_timeout(Duration::from_millis(200)) {
            Ok(FolderEvent::Progress(p)) => bar.show(p),
            Ok(FolderEvent::Indexed { report, .. }) => break report,
            Ok(FolderEvent::Error {
                message,
                fatal: true,
            }) => {
                bar.finish();
                anyhow::bail!(message);
            }
            Ok(FolderEvent::Error { message, .. } | FolderEvent::Note(message)) => {
                bar.note(&message)
            }
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => {
                if CANCEL.load(Ordering::Relaxed) && !asked_to_stop {
                    asked_to_stop = true;
                    handle.shutdown();
                }
            }
            Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the folder service stopped"),
        }
    };
    bar.finish();
    if report.busy && !args.json {
        eprintln!(
            "{}",
            dim("another ape-chat process is updating this folder: its index was used as it is")
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_summary(&report);
    }
    Ok(if report.cancelled {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
