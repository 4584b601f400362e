//! `ape-chat bench …`: measurements taken side by side in one run.

mod retrieval;
mod ttft;

use std::process::ExitCode;

use clap::Subcommand;

use super::ModelArgs;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time to first token and decode speed: sequential vs parallel vs APE.
    Ttft(ttft::TtftArgs),
    /// Retrieval quality on SQuAD v2: recall@k of hybrid vs BM25 vs dense,
    /// plus brute-force vector search latency at scale.
    Retrieval(retrieval::RetrievalArgs),
}

pub fn run(model: &ModelArgs, cmd: &BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Ttft(args) => ttft::run(model, args),
        BenchCommand::Retrieval(args) => retrieval::run(model, args),
    }
}
