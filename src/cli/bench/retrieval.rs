//! `ape-chat bench retrieval`: flags → [`crate::bench::retrieval`] → report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::bench::retrieval::retrieval;
use crate::cli::style::bold;
use crate::cli::{FolderArgs, ModelArgs};

#[derive(Debug, Args)]
pub struct RetrievalArgs {
    /// SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data].
    #[arg(long, value_name = "FILE")]
    squad: Option<PathBuf>,
    /// Answerable questions evaluated (spread evenly over the dataset).
    #[arg(long, default_value_t = 200, value_name = "N")]
    questions: usize,
    /// Recall cut-off.
    #[arg(long, default_value_t = 10, value_name = "K")]
    k: usize,
    /// Vectors in the synthetic brute-force search timing (0 skips it).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    vectors: usize,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(model: &ModelArgs, args: &RetrievalArgs) -> anyhow::Result<ExitCode> {
    let engine = model.load(2048)?;
    let squad = args.squad.clone().unwrap_or_else(crate::paths::squad_file);
    let r = retrieval(
        &engine,
        &squad,
        &args.folder.options(),
        args.questions,
        args.k,
        args.vectors,
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", bold("ape-chat bench retrieval"));
    println!(
        "  SQuAD v2 dev: {} paragraphs as files → {} chunks · {} answerable questions",
        r.paragraphs, r.chunks, r.questions
    );
    println!(
        "  recall@{}  hybrid {:.3}  ·  BM25 {:.3}  ·  dense {:.3}",
        r.k, r.recall_hybrid, r.recall_bm25, r.recall_dense
    );
    println!(
        "  hybrid MRR@{} {:.3} · {:.1} ms per query (all three rankings)",
        r.k, r.mrr_hybrid, r.mean_query_ms
    );
    if let Some(ms) = r.brute_force_search_ms {
        println!(
            "  brute-force cosine top-50 over {} 384-d vectors: {:.1} ms",
            r.brute_force_vectors, ms
        );
    }
    Ok(ExitCode::SUCCESS)
}
