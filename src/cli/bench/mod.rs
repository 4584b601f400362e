//! `ape-chat bench …`: measurements taken side by side in one run.

mod chart;
mod retrieval;
mod suite;
mod ttft;

use std::process::ExitCode;

use clap::Subcommand;

use super::ModelArgs;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time to first token and decode speed: sequential vs parallel vs APE.
    Ttft(ttft::TtftArgs),
    /// Every speed figure side by side: TTFT and decode per mode for 5–40
    /// chunks, chunk encoding, state loading, state size (f16 vs q8_0 K),
    /// indexing; writes JSON and an SVG chart.
    Suite(suite::SuiteArgs),
    /// Retrieval quality on SQuAD v2: recall@k of hybrid vs BM25 vs dense,
    /// plus brute-force vector search latency at scale.
    Retrieval(retrieval::RetrievalArgs),
}

impl BenchCommand {
    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &crate::config::FileConfig) {
        match self {
            BenchCommand::Ttft(a) => a.ape.apply(c),
            BenchCommand::Suite(a) => {
                a.ape.apply(c);
                a.folder.apply(c);
            }
            BenchCommand::Retrieval(a) => a.folder.apply(c),
        }
    }
}

pub fn run(model: &ModelArgs, cmd: &BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Ttft(args) => ttft::run(model, args),
        BenchCommand::Suite(args) => suite::run(model, args),
        BenchCommand::Retrieval(args) => retrieval::run(model, args),
    }
}
