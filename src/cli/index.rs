//! `ape-chat index DIR`: bring a folder's index and KV-state cache up to
//! date through the folder service, with progress per stage (stderr) or a
//! JSON report (stdout).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;

use clap::Args;

use super::output::{print_summary, Followed, Follower, IndexBar};
use super::style::{bold, dim};
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
    /// List what would be read (chunks and tokens per file) and what is
    /// passed over and why, with what reading it would cost; index nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(model: &ModelArgs, args: &IndexArgs) -> anyhow::Result<ExitCode> {
    if args.dry_run {
        return dry_run(model, args);
    }
    let service = Service::new(ServiceOptions::indexing(!args.no_states), Budget::default());
    let handle = service.handle();
    let (tx, events) = mpsc::channel();
    super::start_service(model, 2048, &args.dir, &args.folder, service, tx)?;
    let mut bar = IndexBar::for_json(args.json);
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

/// `--dry-run`: the plan, as a table of reasons or as JSON.
fn dry_run(model: &ModelArgs, args: &IndexArgs) -> anyhow::Result<ExitCode> {
    let engine = model.load(2048)?;
    let mut bar = IndexBar::for_json(args.json);
    let plan = crate::workspace::dry_run(&engine, &args.dir, &args.folder.options(), &mut |p| {
        bar.show(p)
    })?;
    bar.finish();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {} files: {} chunks, {} tokens",
        bold("would read"),
        plan.read.len(),
        plan.chunks,
        plan.tokens
    );
    // Reasons grouped, most files first; each with what it would cost.
    let mut by_reason: std::collections::BTreeMap<&str, (usize, usize, usize)> = Default::default();
    for s in &plan.skipped {
        let e = by_reason.entry(s.reason.as_str()).or_default();
        e.0 += 1;
        e.1 += s.chunks.unwrap_or(0);
        e.2 += s.tokens.unwrap_or(0);
    }
    let mut reasons: Vec<_> = by_reason.into_iter().collect();
    reasons.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    println!(
        "{} {} files (reading those that are not documents would add {} chunks, {} tokens: --all-files)",
        bold("would pass over"),
        plan.skipped.len(),
        plan.passed_over_chunks,
        plan.passed_over_tokens
    );
    for (reason, (files, chunks, tokens)) in reasons {
        let cost = if tokens > 0 {
            format!(" · {chunks} chunks, {tokens} tokens")
        } else {
            String::new()
        };
        println!("  {files:>6} {reason}{}", dim(&cost));
    }
    println!(
        "{}",
        dim("each file with its reason: --dry-run --json (skipped[].path, reason)")
    );
    Ok(ExitCode::SUCCESS)
}
