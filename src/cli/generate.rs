//! `ape-chat completions SHELL` and `ape-chat man`: shell completions and
//! the man page, generated from the same clap definitions as `--help`.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

/// Writes completions for `shell` to stdout.
pub fn completions(shell: Shell) -> anyhow::Result<ExitCode> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "ape-chat", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// Writes the roff man page to stdout.
pub fn man() -> anyhow::Result<ExitCode> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    std::io::stdout().write_all(&buf)?;
    Ok(ExitCode::SUCCESS)
}
