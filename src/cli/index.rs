//! `ape-chat index DIR`: bring a folder's index and KV-state cache up to
//! date, with progress per stage (stderr) or a JSON report (stdout).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::output::{print_summary, IndexBar};
use super::{FolderArgs, ModelArgs, CANCEL};
use crate::kvstore::KvStore;
use crate::workspace::Workspace;

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
    let engine = model.load(2048)?;
    let mut ws = Workspace::open(
        &engine,
        &args.dir,
        &args.folder.options(),
        KvStore::default_location(),
    )?;
    let mut bar = IndexBar::new(args.json);
    let r = ws.refresh(!args.no_states, &CANCEL, &mut |p| bar.show(p))?;
    bar.finish();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_summary(&r);
    }
    Ok(if r.cancelled {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
