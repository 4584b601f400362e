//! The `ape-chat` binary: parse flags, run, print the error chain, exit.

use std::process::ExitCode;

fn main() -> ExitCode {
    // A reader process for one file (the indexer's isolation), not a command.
    if let Some(code) = ape_chat::ingest::isolate::worker_if_asked() {
        return code;
    }
    ape_chat::engine::configure_cuda_graphs();
    match ape_chat::cli::run() {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
