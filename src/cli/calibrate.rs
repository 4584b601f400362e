//! `ape-chat calibrate`: find the prefix variant, T and S that suit a model
//! ([`crate::eval::calibrate`]), and save them in the config file under the
//! model's identity, where `--ask`, the TUI and `eval` pick them up.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::json;

use super::style::{bold, dim};
use super::ModelArgs;
use crate::config::{self, ApeSettings, FileConfig, ModelConfig};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::eval::calibrate::{
    self, CalibrateOptions, Calibration, Measure, Objective, Progress, SearchOptions,
};
use crate::eval::datasets;
use crate::kvstore::KvStore;

/// What to optimise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    /// Greedy answers' token F1 (ties broken by gold-answer NLL).
    F1,
    /// Mean per-token NLL of the gold answers.
    Nll,
    /// KL(sequential ‖ APE) of the question's attention; needs no answers.
    Attention,
}

impl From<ObjectiveArg> for Objective {
    fn from(o: ObjectiveArg) -> Self {
        match o {
            ObjectiveArg::F1 => Objective::F1,
            ObjectiveArg::Nll => Objective::Nll,
            ObjectiveArg::Attention => Objective::Attention,
        }
    }
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Records to calibrate on, JSON Lines as for `eval` (`answers` may be
    /// empty for `--objective attention`). Split by source into search,
    /// accept and report parts that never share a paragraph.
    #[arg(long, value_name = "FILE")]
    dataset: PathBuf,
    /// What to optimise: answer F1, gold-answer NLL, or attention matching
    /// against sequential prefill (needs no answers).
    #[arg(long, value_enum, default_value = "nll")]
    objective: ObjectiveArg,
    /// Records the search runs on.
    #[arg(long, default_value_t = 16, value_name = "N")]
    search: usize,
    /// Records that decide between the found setting and the defaults.
    #[arg(long, default_value_t = 16, value_name = "N")]
    accept: usize,
    /// Records the before/after figures are measured on (no choice uses them).
    #[arg(long, default_value_t = 16, value_name = "N")]
    report: usize,
    /// Prefix variants to try: newline tokens appended to the shared prefix.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,2,10,20,40",
        value_name = "N,…"
    )]
    prefix_newlines: Vec<usize>,
    /// Longest answer in tokens (F1 objective and the figures).
    #[arg(long, default_value_t = 32, value_name = "N")]
    max_tokens: usize,
    /// Instruction appended to every question, as `eval --style`.
    #[arg(long, default_value = "", value_name = "TEXT")]
    style: String,
    /// System prompt of the shared prefix [default: config, then built-in].
    #[arg(long, env = "APE_CHAT_SYSTEM_PROMPT", value_name = "TEXT")]
    system_prompt: Option<String>,
    /// Show the result without writing the config file.
    #[arg(long)]
    dry_run: bool,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

impl CalibrateArgs {
    pub fn apply(&mut self, c: &FileConfig) {
        self.system_prompt = self
            .system_prompt
            .take()
            .or_else(|| c.system_prompt.clone());
    }
}

pub fn run(model: &ModelArgs, args: &CalibrateArgs) -> anyhow::Result<ExitCode> {
    let records = datasets::load(&args.dataset)?;
    let engine = model.load(crate::eval::context_for(&records, args.max_tokens))?;
    let options = CalibrateOptions {
        objective: args.objective.into(),
        parts: [args.search, args.accept, args.report],
        prefix_newlines: args.prefix_newlines.clone(),
        system_prompt: args
            .system_prompt
            .clone()
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string()),
        style: args.style.clone(),
        max_tokens: args.max_tokens,
        search: SearchOptions::default(),
    };
    let quiet = args.json;
    let c = calibrate::calibrate(
        &engine,
        &KvStore::eval_location,
        &records,
        &args.dataset.display().to_string(),
        &options,
        &mut |p| match p {
            _ if quiet => {}
            Progress::Step(s) => eprintln!("{}", dim(&format!("  {s}…"))),
            Progress::Variant(v) => eprintln!(
                "  prefix +{:<3} newlines  loss {:.4}",
                v.prefix_newlines, v.loss
            ),
            Progress::Trial(t) => eprintln!(
                "  T={:<5} S={:<6} loss {:.4}",
                t.params.temperature, t.params.scale, t.loss
            ),
        },
    )?;
    let written = if args.dry_run {
        None
    } else {
        Some(save(model, &engine, &c)?)
    };
    if args.json {
        println!(
            "{}",
            json!({
                "model": model.path(),
                "model_id": engine.info().id,
                "calibration": c,
                "config": written,
            })
        );
    } else {
        print_summary(&c, written.as_deref());
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the chosen setting into the config under the model's identity,
/// and the records it used beside it (for `eval`'s overlap warning).
fn save(
    model: &ModelArgs,
    engine: &crate::engine::Engine,
    c: &Calibration,
) -> anyhow::Result<PathBuf> {
    let path = config::path();
    let id = engine.info().id.to_string();
    let file = model.path();
    let name = file
        .file_name()
        .map(|f| f.to_string_lossy())
        .unwrap_or_default();
    let note = format!(
        "{name}: `ape-chat calibrate --objective {}` on {}\nreport part: {} → {}",
        c.objective,
        c.provenance.dataset,
        describe(&c.report[0]),
        describe(&c.report[1])
    );
    let chosen = c.chosen;
    let settings = ModelConfig {
        ape: ApeSettings {
            temperature_ape: Some(chosen.params.temperature),
            scale_ape: Some(chosen.params.scale),
            ..ApeSettings::default()
        },
        prefix_newlines: Some(chosen.prefix_newlines),
    };
    config::save_model(&path, &id, settings, &note)?;
    calibrate::save_provenance(&id, &c.provenance)?;
    Ok(path)
}

fn describe(m: &Measure) -> String {
    let mut parts = Vec::new();
    if let Some(f1) = m.f1 {
        parts.push(format!("F1 {f1:.3}"));
    }
    if let Some(nll) = m.nll {
        parts.push(format!("NLL {nll:.4}"));
    }
    if let Some(kl) = m.attention_kl {
        parts.push(format!("attention KL {kl:.5}"));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

fn print_summary(c: &Calibration, written: Option<&std::path::Path>) {
    let f = c.found;
    println!(
        "{} objective {} · {} settings tried · best T={} S={} (+{} newlines)",
        bold("calibrate"),
        c.objective,
        c.trials.len(),
        f.params.temperature,
        f.params.scale,
        f.prefix_newlines
    );
    println!(
        "  records: {} search, {} accept, {} report (parts share no source)",
        c.records[0], c.records[1], c.records[2]
    );
    let cell = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$}"));
    let d = format!("defaults ({})", setting(&calibrate::Setting::DEFAULT));
    for (title, rows) in [
        (
            "accept part (decides)",
            [(d.clone(), &c.accept[0]), (setting(&c.found), &c.accept[1])],
        ),
        (
            "report part (held out from every choice)",
            [(d, &c.report[0]), (setting(&c.chosen), &c.report[1])],
        ),
    ] {
        println!(
            "\n  {:<40} {:>6} {:>8} {:>13}",
            title, "F1", "NLL/tok", "attention KL"
        );
        for (label, m) in rows {
            println!(
                "  {label:<40} {:>6} {:>8} {:>13}",
                cell(m.f1, 3),
                cell(m.nll, 4),
                cell(m.attention_kl, 5)
            );
        }
    }
    if !c.accepted {
        println!("\n  the found setting did not beat the defaults on the accept part: keeping the defaults");
    }
    match written {
        Some(p) => println!("\n  saved for this model in {}", p.display()),
        None => println!("\n  dry run: config not changed"),
    }
}

fn setting(s: &calibrate::Setting) -> String {
    format!(
        "T={}, S={}, +{} newlines",
        s.params.temperature, s.params.scale, s.prefix_newlines
    )
}
