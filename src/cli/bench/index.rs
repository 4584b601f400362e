//! `ape-chat bench index DIR`: flags → [`crate::bench::index`] → report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::bench::index::{index_bench, IndexBenchOptions, Selection};
use crate::cli::style::{bold, dim};
use crate::cli::{FolderArgs, ModelArgs};

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The folder to time.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Chunks embedded with each thread count.
    #[arg(long, default_value_t = 256, value_name = "N")]
    vector_sample: usize,
    /// Chunks whose state is encoded.
    #[arg(long, default_value_t = 16, value_name = "N")]
    state_sample: usize,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
}

pub fn run(model: &ModelArgs, args: &IndexArgs) -> anyhow::Result<ExitCode> {
    let engine = model.load(2048)?;
    let json = args.json;
    let r = index_bench(
        &engine,
        &IndexBenchOptions {
            folder: args.dir.clone(),
            folder_options: args.folder.options(),
            vector_sample: args.vector_sample,
            state_sample: args.state_sample,
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
    println!("{} {}", bold("ape-chat bench index"), r.folder);
    println!(
        "  {:<16} {:>6} {:>7} {:>8} {:>10} {:>8} {:>8} {:>10}",
        "files read", "files", "skipped", "chunks", "tokens", "scan s", "read s", "ready s"
    );
    let row = |name: &str, s: &Selection| {
        println!(
            "  {:<16} {:>6} {:>7} {:>8} {:>10} {:>8.2} {:>8.2} {:>10.0}",
            name, s.files, s.skipped, s.chunks, s.tokens, s.scan_s, s.read_s, s.ready_s
        )
    };
    row("documents", &r.documents);
    row("every text file", &r.all_files);
    for v in &r.vectors {
        println!(
            "  vectors, {} thread(s): {} chunks in {:.2} s, {:.1} chunks/s",
            v.threads, v.chunks, v.seconds, v.chunks_per_s
        );
    }
    if let [one, all] = &r.vectors[..] {
        println!(
            "  {} threads embed {:.2}× as fast as 1",
            all.threads,
            all.chunks_per_s / one.chunks_per_s.max(1e-9)
        );
    }
    let s = &r.states;
    println!(
        "  states: {} chunks, {} tokens in {:.1} s, {:.0} tokens/s, {:.0} KB per 1,000 tokens",
        s.chunks,
        s.tokens,
        s.seconds,
        s.tokens_per_s,
        s.bytes as f64 / 1e3 / (s.tokens as f64 / 1e3).max(1e-9)
    );
    println!(
        "{}",
        dim("  ready s: scan + read, then every vector at the fastest rate and every state at the measured rate")
    );
    Ok(ExitCode::SUCCESS)
}
