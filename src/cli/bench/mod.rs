//! `ape-chat bench …`: flags, one call into [`crate::bench`], the report.

mod context;
mod first_answer;
mod follow_ups;
mod frontier;
mod index;
mod retrieval;
mod store;
mod suite;
mod ttft;

use std::path::Path;
use std::process::ExitCode;

use clap::Subcommand;

use super::ModelArgs;
use crate::answer::Quality;
use crate::config::{ApeSettings, ConfigError};
use crate::engine::{ApeParams, Mode};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time to first token and decode speed, every mode side by side (state
    /// files read cold and warm, mode order rotated, medians of repeats).
    Ttft(ttft::TtftArgs),
    /// Every speed figure side by side: TTFT and decode per mode for 5–40
    /// chunks, chunk encoding, state loading, state size (in memory vs at rest),
    /// indexing; writes JSON and an SVG chart.
    Suite(suite::SuiteArgs),
    /// What reading more costs: TTFT and decode speed of APE (fast and
    /// balanced) over 8K–128K cached tokens on shared positions, past the
    /// window, beside sequential prefill where it fits; JSON and an SVG chart.
    Context(context::ContextArgs),
    /// Retrieval quality on SQuAD v2: recall@k of hybrid vs BM25 vs dense,
    /// plus brute-force vector search latency at scale.
    Retrieval(retrieval::RetrievalArgs),
    /// A new folder's first answer: model load, BM25 ready, first token of
    /// a first question (states encoded on demand), then with states cached
    /// and while background indexing has work left.
    FirstAnswer(first_answer::FirstAnswerArgs),
    /// Does the conversation help a follow-up? Two-turn SQuAD v2 pairs
    /// (the second question refers back with a pronoun): recall@k and
    /// "contains", the follow-up alone against after its first turn.
    FollowUps(follow_ups::FollowUpArgs),
    /// What a shared state store (`--state-store`) saves: per question,
    /// TTFT with its states encoded, fetched from the store into an empty
    /// cache, and read from the local disk cold; the store's read speed.
    Store(store::StoreArgs),
    /// Fast and right: joins an `eval --json` and a `bench ttft --json`
    /// report into each mode's likelihood retention against its speedup,
    /// marks the frontier and the modes that clear the default's bar, and
    /// draws the chart.
    Frontier(frontier::FrontierArgs),
    /// How long a folder takes to be ready, stage by stage: files, chunks
    /// and tokens read with the documents-only rules and with every text
    /// file, scan and read times, vectors with one thread and every core,
    /// state encoding, and the time to every state cached.
    Index(index::IndexArgs),
    /// Keeps the cores busy as another llama.cpp program would (prefill on
    /// the model, llama.cpp's default polling) until stdin closes: what
    /// `ttft --under-load` runs beside itself, or to try ape-chat under
    /// load by hand.
    Compete,
}

impl BenchCommand {
    /// Fills what flags and env left unset from the config file.
    pub fn apply(&mut self, c: &crate::config::FileConfig) {
        match self {
            BenchCommand::Ttft(a) => {
                (a.ape, a.balanced) = c.ape_layers(a.ape);
            }
            BenchCommand::Context(a) => a.ape = a.ape.over(c.ape),
            BenchCommand::Suite(a) => {
                (a.ape, a.balanced) = c.ape_layers(a.ape);
                a.folder.apply(c);
            }
            BenchCommand::Retrieval(a) => a.folder.apply(c),
            BenchCommand::FirstAnswer(a) => {
                a.folder.apply(c);
                a.answer.apply(c);
            }
            BenchCommand::FollowUps(a) => {
                a.folder.apply(c);
                a.answer.apply(c);
            }
            BenchCommand::Store(a) => {
                a.folder.apply(c);
                a.answer.apply(c);
            }
            BenchCommand::Index(a) => a.folder.apply(c),
            BenchCommand::Compete | BenchCommand::Frontier(_) => {}
        }
    }
}

pub fn run(model: &ModelArgs, cmd: &BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Ttft(args) => ttft::run(model, args),
        BenchCommand::Suite(args) => suite::run(model, args),
        BenchCommand::Context(args) => context::run(model, args),
        BenchCommand::Retrieval(args) => retrieval::run(model, args),
        BenchCommand::FirstAnswer(args) => first_answer::run(model, args),
        BenchCommand::FollowUps(args) => follow_ups::run(model, args),
        BenchCommand::Store(args) => store::run(model, args),
        BenchCommand::Index(args) => index::run(model, args),
        BenchCommand::Frontier(args) => frontier::run(args),
        BenchCommand::Compete => {
            crate::bench::compete::compete(&model.path(), model.threads())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The modes benchmarks compare: sequential first (the speedups are over
/// it), the paper's ablation, and `balanced` as it answers under these
/// settings ([`Quality::modes`]): on a GPU (the whole best chunk re-read)
/// and on the CPU (echoed). The plain APE mode takes T and S only.
fn bench_modes(settings: ApeSettings, balanced: ApeSettings) -> Result<Vec<Mode>, ConfigError> {
    let (window, whole) = Quality::Balanced.modes(settings, balanced)?;
    let mut modes = vec![
        Mode::Sequential,
        Mode::Pcw,
        Mode::Parallel,
        Mode::Ape(t_and_s(settings).params()?),
    ];
    modes.extend(whole);
    modes.push(window);
    Ok(modes)
}

/// Of APE's settings, T and S only: a benchmark's modes set the rest.
fn t_and_s(settings: ApeSettings) -> ApeSettings {
    ApeSettings {
        temperature_ape: settings.temperature_ape,
        scale_ape: settings.scale_ape,
        ..ApeSettings::default()
    }
}

/// [`bench_modes`], re-reads of token windows (`ape:reread=1:window=N`),
/// the 48-token sentence window and the whole echo at the calibration's S
/// (the earlier `balanced`'s shape, and the control for `balanced`'s own
/// S), each once: what `bench ttft` times, the speed axis of `bench
/// frontier`.
fn frontier_modes(settings: ApeSettings, balanced: ApeSettings) -> Result<Vec<Mode>, ConfigError> {
    let plain = t_and_s(settings).params()?;
    let reread = |window, sentences, echo| {
        Mode::Ape(ApeParams {
            reread: 1,
            window,
            sentences,
            echo,
            ..plain
        })
    };
    let extra = [32, 48, 64]
        .map(|w| reread(w, false, false))
        .into_iter()
        .chain([reread(48, true, false), reread(0, false, true)]);
    let mut modes = bench_modes(settings, balanced)?;
    for m in extra {
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    Ok(modes)
}

/// Writes `report` as `DIR/STEM.json` (atomically: a reader never sees
/// half a file); returns the path and the text.
fn write_json<R: serde::Serialize>(
    dir: &Path,
    stem: &str,
    report: &R,
) -> std::io::Result<(std::path::PathBuf, String)> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{stem}.json"));
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::from)?;
    crate::fsutil::write_atomic(&path, &[text.as_bytes()])?;
    Ok((path, text))
}

/// Writes `report` as `DIR/STEM.json` and its chart as `DIR/STEM.svg`
/// (drawn by `draw`), then prints the JSON (`json`), or the report as
/// `human` prints it and where both went.
fn write_report<R: serde::Serialize>(
    dir: &Path,
    stem: &str,
    report: &R,
    json: bool,
    draw: impl FnOnce(&Path) -> Result<(), crate::bench::BenchError>,
    human: impl FnOnce(),
) -> anyhow::Result<()> {
    let (json_path, text) = write_json(dir, stem, report)?;
    let svg_path = dir.join(format!("{stem}.svg"));
    draw(&svg_path)?;
    if json {
        println!("{text}");
    } else {
        human();
        println!(
            "\n  wrote {} and {}",
            json_path.display(),
            svg_path.display()
        );
    }
    Ok(())
}
