//! `ape-chat bench follow-ups`: flags → [`crate::bench::follow_ups`] →
//! report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::bench::follow_ups::{follow_ups, FollowUpOptions, Rates};
use crate::cli::style::{bold, dim};
use crate::cli::{AskArgs, FolderArgs, ModelArgs};
use crate::workspace::context_size;

#[derive(Debug, Args)]
pub struct FollowUpArgs {
    /// SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data].
    #[arg(long, value_name = "FILE")]
    squad: Option<PathBuf>,
    /// Two-turn pairs (from the evaluation articles, spread over them).
    #[arg(long, default_value_t = 60, value_name = "N")]
    pairs: usize,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    #[command(flatten)]
    pub(super) answer: AskArgs,
}

pub fn run(model: &ModelArgs, args: &FollowUpArgs) -> anyhow::Result<ExitCode> {
    let ask = args.answer.options(false)?;
    let engine = model.load(context_size(
        ask.top_k,
        args.folder.chunk_tokens(),
        ask.generate.max_tokens,
    ))?;
    let o = FollowUpOptions {
        squad_file: args.squad.clone().unwrap_or_else(crate::paths::squad_file),
        folder: args.folder.options(),
        ask,
        pairs: args.pairs,
    };
    let json = args.json;
    let r = follow_ups(&engine, &o, &mut |done, total| {
        if !json {
            eprint!("\r{}", dim(&format!("pair {done}/{total}")));
        }
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!();
    println!("{}", bold("ape-chat bench follow-ups"));
    println!(
        "  {} two-turn pairs over {} SQuAD v2 evaluation articles · top {} · {}",
        r.pairs, r.articles, r.k, r.mode
    );
    let line = |what: &str, x: &Rates| {
        println!(
            "  {what:<10} first turn {:.3} · follow-up alone {:.3} · with the conversation {:.3} · gain {:+.3} [{:+.3}, {:+.3}]",
            x.first_turn,
            x.follow_up_alone,
            x.follow_up_with_history,
            x.gain.value,
            x.gain.lo,
            x.gain.hi
        )
    };
    line(&format!("recall@{}", r.k), &r.recall);
    line("contains", &r.contains);
    println!("  {}", dim(&format!("rows: {}", r.results.display())));
    Ok(ExitCode::SUCCESS)
}
