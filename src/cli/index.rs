//! `ape-chat index DIR`: bring a folder's index and KV-state cache up to
//! date through the folder service, with progress per stage (stderr) or a
//! JSON report (stdout).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;

use clap::Args;

use super::output::{print_summary, Followed, Follower, IndexBar};
use super::style::dim;
use super::{FolderArgs, ModelArgs};
use crate::compute::Budget;
use crate::service::{Service, ServiceOptions};

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
    let mut follow = Follower::new(events, handle);
    let report = loop {
        match follow.next(&mut bar)? {
            Followed::Indexed(report, _) => break report,
            Followed::Note(message) => bar.note(&message),
            Followed::Stopped => anyhow::bail!("the folder service stopped"),
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
