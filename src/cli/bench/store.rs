//! `ape-chat bench store --state-store URL [DIR]`: flags →
//! [`crate::bench::store`] → report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::bench::store::{store_bench, StoreBenchOptions};
use crate::cli::style::{bold, dim};
use crate::cli::{AskArgs, FolderArgs, ModelArgs};
use crate::engine::Engine;
use crate::workspace::context_size;

/// The sample folder's questions, each about another file.
const QUESTIONS: [&str; 4] = [
    "How long are nightly snapshots kept?",
    "Where are the encryption keys kept?",
    "When was Orbit 4.2 released?",
    "When does a new engineer join the on-call rotation?",
];

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The folder to ask about [default: the sample documents].
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// A question (repeatable) [default: four about the sample documents].
    #[arg(long = "question", value_name = "TEXT")]
    questions: Vec<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    #[command(flatten)]
    pub(super) answer: AskArgs,
}

pub fn run(model: &ModelArgs, args: &StoreArgs) -> anyhow::Result<ExitCode> {
    let Some(url) = args.folder.state_store.clone().filter(|u| !u.is_empty()) else {
        anyhow::bail!("give the store to measure: --state-store redis://host:port/db");
    };
    let ask = args.answer.options(false)?;
    let mut o = model.engine_options(context_size(
        ask.top_k,
        args.folder.chunk_tokens(),
        ask.generate.max_tokens,
    ));
    // No memory tier: each answer reads its states from where it is timed.
    o.tiers.ram_bytes = Some(0);
    o.tiers.vram_bytes = Some(0);
    o.tiers.pinned_bytes = Some(0);
    let engine = Engine::load(&model.path(), o)?;
    let folder = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/sample"));
    let questions = if args.questions.is_empty() {
        QUESTIONS.iter().map(|q| q.to_string()).collect()
    } else {
        args.questions.clone()
    };
    let json = args.json;
    let r = store_bench(
        &engine,
        &StoreBenchOptions {
            folder,
            folder_options: args.folder.options(),
            ask,
            questions,
            url,
        },
        &mut |m| {
            if !json {
                eprintln!("{}", dim(m));
            }
        },
    )?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", bold("ape-chat bench store"));
    println!("  {} · {} · {} · {}", r.machine, r.model, r.mode, r.store);
    println!(
        "  {:<52} {:>7} {:>10} {:>10} {:>10}",
        "question", "states", "encode ms", "store ms", "disk ms"
    );
    for q in &r.questions {
        println!(
            "  {:<52} {:>7} {:>10.0} {:>10.0} {:>10.0}{}",
            q.question,
            q.states,
            q.encode_ttft_ms,
            q.store_ttft_ms,
            q.disk_ttft_ms,
            if q.same_answer {
                ""
            } else {
                "  (answers differ!)"
            }
        );
    }
    println!(
        "  median TTFT: {:.0} ms encoding, {:.0} ms from the store ({:.1}× faster), {:.0} ms from disk",
        r.median_encode_ms,
        r.median_store_ms,
        r.median_encode_ms / r.median_store_ms.max(1e-9),
        r.median_disk_ms
    );
    println!(
        "  store reads: {:.0} MB/s · {:.0} bytes of state per token",
        r.store_read_mb_per_s, r.state_bytes_per_token
    );
    Ok(if r.questions.iter().all(|q| q.same_answer) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
