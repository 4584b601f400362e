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

impl BenchCommand {
    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &crate::config::FileConfig) {
        match self {
            BenchCommand::Ttft(a) => a.ape.apply(c),
            BenchCommand::Retrieval(a) => a.folder.apply(c),
        }
    }
}

pub fn run(model: &ModelArgs, cmd: &BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Ttft(args) => ttft::run(model, args),
        BenchCommand::Retrieval(args) => retrieval::run(model, args),
    }
}
