//! `ape-chat calibrate`: find the prefix variant, T and S that suit a model,
//! check them on held-out records, and save them in the config file under
//! the model's identity, where `--ask`, the TUI and `eval` pick them up.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use serde_json::json;

use super::eval::{engine_for, eval_store};
use super::index::PrefixArgs;
use super::style::{bold, dim};
use super::ModelArgs;
use crate::config::{self, FileConfig, ModelConfig};
use crate::engine::{ApeParams, Engine, Session};
use crate::eval::calibrate::{
    best, pattern_search, Measure, Objective, SearchOptions, Split, Trial,
};
use crate::eval::dataset::{self, Record};
use crate::eval::run::{prepare, Prepared};
use crate::index::Llm;

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Records to calibrate on, JSON Lines as for `eval` (`answers` may be
    /// empty for `--objective attention`).
    #[arg(long, value_name = "FILE")]
    dataset: PathBuf,
    /// What to optimise: answer F1, gold-answer NLL, or attention matching
    /// against sequential prefill (needs no answers).
    #[arg(long, value_enum, default_value = "f1")]
    objective: Objective,
    /// Records the search runs on (the first ones of the dataset).
    #[arg(long, default_value_t = 16, value_name = "N")]
    search: usize,
    /// Records after those that the before/after table is measured on.
    #[arg(long, default_value_t = 16, value_name = "N")]
    holdout: usize,
    /// Prefix variants to try: newline tokens appended to the shared prefix.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,2,10,20,40",
        value_name = "N,…"
    )]
    prefix_newlines: Vec<usize>,
    /// Longest answer in tokens (F1 objective and the held-out table).
    #[arg(long, default_value_t = 32, value_name = "N")]
    max_tokens: usize,
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

    fn prefix(&self, newlines: usize) -> PrefixArgs {
        PrefixArgs {
            system_prompt: self.system_prompt.clone(),
            prefix_newlines: Some(newlines),
        }
    }
}

/// A prefix variant's score at the default T and S.
#[derive(Debug, Serialize)]
struct Variant {
    prefix_newlines: usize,
    loss: f64,
}

pub fn run(model: &ModelArgs, args: &CalibrateArgs) -> anyhow::Result<ExitCode> {
    let (search, holdout) = split_records(args)?;
    let engine = engine_for(
        model,
        &[search.clone(), holdout.clone()].concat(),
        args.max_tokens,
    )?;
    let mut s = engine.session()?;
    let say = |line: String| {
        if !args.json {
            eprintln!("{line}");
        }
    };
    let defaults = ApeParams::DEFAULT;

    // 1. The prefix variant, at the default T and S.
    let mut variants = Vec::new();
    let mut chosen: Option<(usize, Llm<'_>, Vec<Prepared>)> = None;
    for &n in &args.prefix_newlines {
        let llm = args.prefix(n).llm(&engine, eval_store())?;
        let prepared = prepare_all(&llm, &mut s, &search, &say, "search")?;
        if args.prefix_newlines.len() == 1 {
            chosen = Some((n, llm, prepared));
            break;
        }
        let split = Split::new(&llm, &mut s, &prepared, attention(args), args.max_tokens)?;
        let loss = split
            .measure(&mut s, defaults, args.objective)?
            .loss(args.objective);
        say(format!("  prefix +{n:<3} newlines  loss {loss:.4}"));
        let better = variants.iter().all(|v: &Variant| loss < v.loss);
        variants.push(Variant {
            prefix_newlines: n,
            loss,
        });
        if better {
            chosen = Some((n, llm, prepared));
        }
    }
    let (newlines, llm, prepared) =
        chosen.ok_or_else(|| anyhow::anyhow!("no prefix variant given"))?;

    // 2. T and S·T by pattern search.
    let split = Split::new(&llm, &mut s, &prepared, attention(args), args.max_tokens)?;
    let trials = pattern_search(SearchOptions::default(), |p| {
        let loss = split
            .measure(&mut s, p, args.objective)?
            .loss(args.objective);
        say(format!(
            "  T={:<5} S={:<6} loss {loss:.4}",
            p.temperature, p.scale
        ));
        Ok::<_, anyhow::Error>(loss)
    })?;
    let found = best(&trials).ok_or_else(|| anyhow::anyhow!("no setting could be evaluated"))?;
    drop(split);

    // 3. Before/after on held-out records.
    let [before, after] = held_out(
        args,
        &engine,
        &mut s,
        &holdout,
        [(0, defaults), (newlines, found.params)],
        &say,
    )?;
    let improved = holdout.is_empty()
        || after.loss(args.objective) < before.loss(args.objective)
        || (newlines == 0 && found.params == defaults);
    let (chosen, chosen_newlines) = if improved {
        (found.params, newlines)
    } else {
        (defaults, 0)
    };
    let written = if args.dry_run {
        None
    } else {
        Some(save(
            model,
            &engine,
            args,
            chosen,
            chosen_newlines,
            &before,
            &after,
        )?)
    };
    if args.json {
        println!(
            "{}",
            json!({
                "model": model.path(),
                "model_id": engine.info().id,
                "objective": args.objective,
                "search_records": search.len(),
                "holdout_records": holdout.len(),
                "prefix_variants": variants,
                "trials": trials,
                "found": {"params": found.params, "prefix_newlines": newlines},
                "chosen": {"params": chosen, "prefix_newlines": chosen_newlines},
                "improved_on_holdout": improved,
                "before": before,
                "after": after,
                "config": written,
            })
        );
    } else {
        print_summary(
            args,
            &trials,
            (found, newlines),
            chosen,
            (&before, &after),
            improved,
            written.as_deref(),
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn attention(args: &CalibrateArgs) -> bool {
    args.objective == Objective::Attention
}

/// The search and held-out records, labelled ones only where the objective
/// needs answers.
fn split_records(args: &CalibrateArgs) -> anyhow::Result<(Vec<Record>, Vec<Record>)> {
    let mut records = dataset::load(&args.dataset)?;
    if args.objective.needs_labels() {
        records.retain(|r| !r.answers.is_empty());
    }
    anyhow::ensure!(
        !records.is_empty() && args.search > 0,
        "{}: no records to calibrate on{}",
        args.dataset.display(),
        if args.objective.needs_labels() {
            " (with answers)"
        } else {
            ""
        }
    );
    let holdout = records.split_off(args.search.min(records.len()));
    Ok((records, holdout.into_iter().take(args.holdout).collect()))
}

fn prepare_all(
    llm: &Llm<'_>,
    s: &mut Session<'_>,
    records: &[Record],
    say: &dyn Fn(String),
    what: &str,
) -> anyhow::Result<Vec<Prepared>> {
    say(dim(&format!(
        "  preparing {} {what} records (prefix of {} tokens)…",
        records.len(),
        llm.layout.prefix.len()
    )));
    Ok(records
        .iter()
        .map(|r| prepare(llm, s, r))
        .collect::<Result<_, _>>()?)
}

/// F1 and NLL (when labelled) and attention KL (for that objective) of
/// the defaults and the found setting on the held-out records. When both use
/// the same prefix, the records are prepared (and, for attention, their
/// sequential reference prefilled) once.
fn held_out(
    args: &CalibrateArgs,
    engine: &Engine,
    s: &mut Session<'_>,
    records: &[Record],
    settings: [(usize, ApeParams); 2],
    say: &dyn Fn(String),
) -> anyhow::Result<[Measure; 2]> {
    let mut out = [Measure::default(); 2];
    if records.is_empty() {
        return Ok(out);
    }
    let mut i = 0;
    while i < settings.len() {
        let newlines = settings[i].0;
        let llm = args.prefix(newlines).llm(engine, eval_store())?;
        let prepared = prepare_all(&llm, s, records, say, "held-out")?;
        let split = Split::new(&llm, s, &prepared, attention(args), args.max_tokens)?;
        while i < settings.len() && settings[i].0 == newlines {
            let params = settings[i].1;
            if args.objective.needs_labels() {
                out[i] = split.measure(s, params, Objective::F1)?;
            }
            if attention(args) {
                out[i].attention_kl = split.measure(s, params, Objective::Attention)?.attention_kl;
            }
            i += 1;
        }
    }
    Ok(out)
}

fn save(
    model: &ModelArgs,
    engine: &Engine,
    args: &CalibrateArgs,
    params: ApeParams,
    newlines: usize,
    before: &Measure,
    after: &Measure,
) -> anyhow::Result<PathBuf> {
    let path = config::path();
    let file = model.path();
    let name = file
        .file_name()
        .map(|f| f.to_string_lossy())
        .unwrap_or_default();
    let note = format!(
        "{name}: `ape-chat calibrate --objective {}` on {}\nheld out: {} → {}",
        args.objective,
        args.dataset.display(),
        describe(before),
        describe(after)
    );
    let settings = ModelConfig {
        temperature_ape: Some(params.temperature),
        scale_ape: Some(params.scale),
        prefix_newlines: Some(newlines),
    };
    config::save_model(&path, &engine.info().id.to_string(), settings, &note)?;
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

fn print_summary(
    args: &CalibrateArgs,
    trials: &[Trial],
    (found, newlines): (Trial, usize),
    chosen: ApeParams,
    (before, after): (&Measure, &Measure),
    improved: bool,
    written: Option<&std::path::Path>,
) {
    println!(
        "{} objective {} · {} settings tried · best T={} S={} (+{} newlines)",
        bold("calibrate"),
        args.objective,
        trials.len(),
        found.params.temperature,
        found.params.scale,
        newlines
    );
    let cell = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |v| format!("{v:.p$}"));
    println!(
        "\n  {:<34} {:>6} {:>8} {:>13}",
        "held out", "F1", "NLL/tok", "attention KL"
    );
    for (label, m) in [
        (
            format!(
                "defaults (T={}, S={}, +0)",
                ApeParams::DEFAULT.temperature,
                ApeParams::DEFAULT.scale
            ),
            before,
        ),
        (
            format!(
                "calibrated (T={}, S={}, +{newlines})",
                found.params.temperature, found.params.scale
            ),
            after,
        ),
    ] {
        println!(
            "  {label:<34} {:>6} {:>8} {:>13}",
            cell(m.f1, 3),
            cell(m.nll, 4),
            cell(m.attention_kl, 5)
        );
    }
    if !improved {
        println!("\n  the calibrated setting did not beat the defaults on held-out records: keeping T={}, S={}", chosen.temperature, chosen.scale);
    }
    match written {
        Some(p) => println!("\n  saved for this model in {}", p.display()),
        None => println!("\n  dry run: config not changed"),
    }
}
