//! `ape-chat eval` (answer a dataset in several modes and score it) and
//! `ape-chat convert-squad` (make such a dataset from SQuAD v2).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::index::PrefixArgs;
use super::style::{bold, dim};
use super::{ApeArgs, ModelArgs, Origins, CANCEL};
use crate::engine::{ApeParams, Engine, Mode};
use crate::eval::calibrate::load_provenance;
use crate::eval::dataset::{self, Record};
use crate::eval::run::{
    compare, evaluate, summarize, ModeSummary, Paired, Prediction, Retention, Stamp,
};
use crate::eval::stats::{Estimate, RESAMPLES};
use crate::kvstore::KvStore;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSON Lines of {"id", "question", "contexts": [...], "answers": [...]}.
    #[arg(long, value_name = "FILE")]
    dataset: PathBuf,
    /// Modes to compare, comma-separated, sequential first (the baseline):
    /// `sequential`, `pcw`, `parallel`, `ape`, `ape-t` (temperature only,
    /// S = 1) and `ape:t=0.8:s=1:reread=1:focus=3` (APE with these values;
    /// others as for `ape`). The default is the paper's ablation.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "sequential,pcw,parallel,ape-t,ape"
    )]
    modes: Vec<String>,
    /// Instruction appended to every question, e.g. "Answer with a short
    /// phrase." (so EM/F1 measure content rather than verbosity).
    #[arg(long, default_value = "", value_name = "TEXT")]
    style: String,
    /// Evaluate only the first N records.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Longest answer in tokens.
    #[arg(long, default_value_t = 32, value_name = "N")]
    max_tokens: usize,
    /// Predictions file; re-running with it resumes, and rows made with
    /// the same mode (and T, S) are reused [default: in the cache dir, keyed
    /// by dataset, model and --max-tokens].
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
    #[command(flatten)]
    pub(super) ape: ApeArgs,
    #[command(flatten)]
    pub(super) prefix: PrefixArgs,
    /// Print the summary and every prediction as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// SQuAD v2 JSON [default: the file from scripts/setup.sh --eval-data].
    #[arg(long, value_name = "FILE")]
    squad: Option<PathBuf>,
    /// Output JSON Lines file.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Contexts per record: the gold paragraph plus distractors from its article.
    #[arg(long, default_value_t = 10, value_name = "K")]
    contexts: usize,
    /// Also keep unanswerable questions.
    #[arg(long)]
    unanswerable: bool,
    /// Seed for distractor choice and order.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Keep N records, spread evenly over the dataset.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Leave out the questions of this dataset (so a calibration set and an
    /// evaluation set never share a question).
    #[arg(long, value_name = "FILE")]
    exclude: Option<PathBuf>,
    /// Which articles to draw on: every fourth is kept for calibration, the
    /// rest for evaluation, so the two sets never share a paragraph.
    #[arg(long, value_enum, default_value = "all")]
    articles: ArticlesArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ArticlesArg {
    All,
    Evaluation,
    Calibration,
}

pub fn convert(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let path = args
        .squad
        .clone()
        .unwrap_or_else(|| crate::paths::cache_dir().join("data/squad-v2-dev.json"));
    let mut records = dataset::from_squad(
        &crate::eval::squad::load(&path)?,
        args.contexts.max(1),
        args.unanswerable,
        args.seed,
        match args.articles {
            ArticlesArg::All => dataset::Articles::All,
            ArticlesArg::Evaluation => dataset::Articles::Evaluation,
            ArticlesArg::Calibration => dataset::Articles::Calibration,
        },
    );
    if let Some(path) = &args.exclude {
        let ids: std::collections::HashSet<String> =
            dataset::load(path)?.into_iter().map(|r| r.id).collect();
        records.retain(|r| !ids.contains(&r.id));
    }
    if let Some(n) = args.limit.filter(|&n| n < records.len()) {
        // Spread evenly over the dataset rather than taking one article.
        let total = records.len();
        records = (0..n).map(|i| records[i * total / n].clone()).collect();
    }
    dataset::save(&args.out, &records)?;
    eprintln!("wrote {} records to {}", records.len(), args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// Mode names to modes; APE settings not named in a spec come from `ape`.
fn parse_modes(names: &[String], ape: ApeParams) -> anyhow::Result<Vec<Mode>> {
    names
        .iter()
        .map(|m| {
            let m = m.trim();
            Ok(match m {
                "sequential" => Mode::Sequential,
                "pcw" => Mode::Pcw,
                "parallel" => Mode::Parallel,
                "ape" => Mode::Ape(ape),
                "ape-t" => Mode::Ape(ApeParams { scale: 1.0, ..ape }),
                spec if spec.starts_with("ape:") => Mode::Ape(ape_spec(&spec[4..], ape)?),
                other => anyhow::bail!(
                    "unknown mode `{other}` (sequential, pcw, parallel, ape, ape-t, ape:t=…:s=…:reread=…:focus=…)"
                ),
            })
        })
        .collect()
}

fn ape_spec(spec: &str, mut p: ApeParams) -> anyhow::Result<ApeParams> {
    for kv in spec.split(':') {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("`{kv}` in `ape:{spec}` is not key=value"))?;
        let bad = |e: &dyn std::fmt::Display| anyhow::anyhow!("`{kv}` in `ape:{spec}`: {e}");
        match k {
            "t" => p.temperature = v.parse().map_err(|e| bad(&e))?,
            "s" => p.scale = v.parse().map_err(|e| bad(&e))?,
            "reread" => p.reread = v.parse().map_err(|e| bad(&e))?,
            "focus" => p.focus = v.parse().map_err(|e| bad(&e))?,
            _ => anyhow::bail!("unknown key `{k}` in `ape:{spec}` (t, s, reread, focus)"),
        }
    }
    p.validate().map_err(anyhow::Error::msg)?;
    Ok(p)
}

pub fn run(model: &ModelArgs, args: &EvalArgs, origins: &Origins<'_>) -> anyhow::Result<ExitCode> {
    let modes = parse_modes(&args.modes, args.ape.params()?)?;
    let mut records = dataset::load(&args.dataset)?;
    records.truncate(args.limit.unwrap_or(usize::MAX));
    anyhow::ensure!(
        !records.is_empty(),
        "{}: no records",
        args.dataset.display()
    );
    let engine = engine_for(model, &records, args.max_tokens)?;
    let states = args.prefix.states(&engine, eval_store())?;
    let system = args.prefix.system_prompt();
    let stamp = Stamp::new(
        &states,
        &system,
        args.prefix.newlines(),
        &args.style,
        args.max_tokens,
    );
    if !args.json {
        print_settings(&engine, &modes, args.ape.params()?, &stamp, origins);
    }
    for p in load_provenance(&stamp.model) {
        let overlap = p.overlap(&records);
        if !overlap.is_empty() {
            eprintln!(
                "{} {} of these records were used by the calibration of this model (on {}) or share their source: its settings are not held out here",
                bold("warning:"),
                overlap.len(),
                p.dataset
            );
        }
    }
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| default_results(args, &stamp));
    let (mut done, other) = read_predictions(&results, &stamp);
    if other > 0 && !args.json {
        eprintln!(
            "{}",
            dim(&format!(
                "{} rows of {} were made with other settings (model, prompt, style or length): left out",
                other,
                results.display()
            ))
        );
    }
    // Per record, the modes (and APE values) it has no row for yet.
    let todo: Vec<(&Record, Vec<Mode>)> = records
        .iter()
        .map(|r| {
            let missing = modes
                .iter()
                .copied()
                .filter(|&m| !done.iter().any(|p| p.id == r.id && p.is(m)))
                .collect::<Vec<_>>();
            (r, missing)
        })
        .filter(|(_, missing)| !missing.is_empty())
        .collect();
    let finished = records.len() - todo.len();
    if !args.json && finished > 0 {
        eprintln!(
            "resuming: {finished} of {} records already in {}",
            records.len(),
            results.display()
        );
    }
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(todo.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} evaluating {wide_bar} {pos}/{len} records · ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if let Some(dir) = results.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)?;
    for (r, missing) in todo {
        if CANCEL.load(Ordering::Relaxed) {
            break;
        }
        let preds = evaluate(&states, r, &missing, &stamp)?;
        for p in &preds {
            writeln!(out, "{}", serde_json::to_string(p)?)?;
        }
        out.flush()?;
        done.extend(preds);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let ids: std::collections::HashSet<&str> = records.iter().map(|r| r.id.as_str()).collect();
    done.retain(|p| ids.contains(p.id.as_str()));
    let summary: Vec<_> = modes.iter().map(|&m| summarize(&done, m)).collect();
    let (paired, retention) = compare(&done, &modes);
    if args.json {
        println!(
            "{}",
            json!({
                "results": results,
                "settings": stamp,
                "summary": summary,
                "paired": paired,
                "retention": retention,
                "bootstrap": {"resamples": RESAMPLES, "confidence": 0.95},
                "predictions": done,
            })
        );
    } else {
        println!(
            "{} {} records · {}",
            bold("eval"),
            records.len(),
            results.display()
        );
        print_tables(&summary, &paired, &retention);
    }
    Ok(ExitCode::SUCCESS)
}

/// Before the run: every mode's settings, and where each came from (a
/// value a mode names itself, like `ape-t`'s S = 1, comes from the mode).
fn print_settings(
    engine: &Engine,
    modes: &[Mode],
    base: ApeParams,
    stamp: &Stamp,
    origins: &Origins<'_>,
) {
    let info = engine.info();
    println!(
        "{} {} ({}) · identity {}",
        bold("model"),
        engine.path().display(),
        info.architecture,
        dim(&info.id.short())
    );
    println!(
        "  prefix {} · system prompt ({}) {:?} · +{} newlines ({}) · style {:?} · max {} tokens",
        dim(&stamp.prefix[..16]),
        origins.of("system_prompt"),
        crate::eval::run::shorten(&stamp.system_prompt, 48),
        stamp.prefix_newlines,
        origins.of("prefix_newlines"),
        stamp.style,
        stamp.max_tokens
    );
    let from = |same: bool, id: &str| {
        if same {
            origins.of(id)
        } else {
            "mode".to_string()
        }
    };
    for m in modes {
        match m {
            Mode::Ape(p) => println!(
                "  {:<11} T={} ({}) S={} ({}) reread={} ({}) focus={} ({})",
                m.name(),
                p.temperature,
                from(p.temperature == base.temperature, "temperature_ape"),
                p.scale,
                from(p.scale == base.scale, "scale_ape"),
                p.reread,
                from(p.reread == base.reread, "reread"),
                p.focus,
                from(p.focus == base.focus, "focus")
            ),
            _ => println!("  {}", m.name()),
        }
    }
    println!();
}

/// One table per metric: per-mode means, the ablation against sequential
/// prefill, then every pair's differences with their intervals.
fn print_tables(summary: &[ModeSummary], paired: &[Paired], retention: &[Retention]) {
    println!(
        "\n  {:<34} {:>6} {:>6} {:>9} {:>10} {:>10} {:>9} {:>12} {:>7}",
        "mode", "EM", "F1", "contains", "NLL/tok", "log P", "TTFT ms", "TTFT median", "tok/s"
    );
    for s in summary {
        println!(
            "  {:<34} {:>6.3} {:>6.3} {:>9.3} {:>10.4} {:>10.3} {:>9.1} {:>12.1} {:>7.1}",
            s.label,
            s.em,
            s.f1,
            s.contains,
            s.answer_nll,
            s.answer_logprob,
            s.ttft_ms_mean,
            s.ttft_ms_median,
            s.decode_tokens_per_s
        );
    }
    if paired.is_empty() {
        return;
    }
    print_ablation(summary, paired, retention);
    let nll = paired.iter().map(|p| (p, &p.answer_nll, p.nll_verdict));
    print_paired("answer NLL per token, lower is better", nll);
    print_paired("F1", paired.iter().map(|p| (p, &p.f1, p.f1_verdict)));
}

/// Each mode against the baseline (the first mode, sequential): the
/// paper's ablation when the modes are pcw, parallel, ape-t and ape.
fn print_ablation(summary: &[ModeSummary], paired: &[Paired], retention: &[Retention]) {
    let Some(base) = summary.first() else { return };
    let ci = |e: &Estimate, p: usize| format!("{:+.p$} [{:+.p$}, {:+.p$}]", e.value, e.lo, e.hi);
    let ratio = |e: &Estimate| format!("{:.3} [{:.3}, {:.3}]", e.value, e.lo, e.hi);
    println!(
        "\n  against {} (paired 95% bootstrap CI, {RESAMPLES} resamples)",
        base.label
    );
    println!(
        "  {:<34} {:<28} {:<28} likelihood retention",
        "step", "Δ NLL/token", "Δ F1"
    );
    for s in &summary[1..] {
        let Some(p) = paired
            .iter()
            .find(|p| p.a_label == s.label && p.b_label == base.label)
        else {
            continue;
        };
        let r = retention.iter().find(|r| r.label == s.label);
        let step = match (s.mode.as_str(), s.ape) {
            ("pcw", _) => "PCW".to_string(),
            ("parallel", _) => "+ shared prefix (parallel)".to_string(),
            ("ape", Some(a)) if a.scale == 1.0 && a.reread == 0 && a.focus == 0 => {
                format!("+ temperature (T={})", a.temperature)
            }
            ("ape", Some(a)) if a.reread == 0 && a.focus == 0 => {
                format!("+ scaling (T={}, S={})", a.temperature, a.scale)
            }
            _ => s.label.clone(),
        };
        println!(
            "  {:<34} {:<28} {:<28} {}",
            step,
            ci(&p.answer_nll, 3),
            ci(&p.f1, 3),
            r.map_or("-".into(), |r| ratio(&r.likelihood))
        );
    }
}

fn print_paired<'a>(metric: &str, rows: impl Iterator<Item = (&'a Paired, &'a Estimate, &'a str)>) {
    println!("\n  paired difference a − b, {metric} (95% bootstrap CI, {RESAMPLES} resamples)");
    for (p, e, verdict) in rows {
        let pair = format!("{} − {}", p.a, p.b);
        let ci = format!("{:+.4} [{:+.4}, {:+.4}]", e.value, e.lo, e.hi);
        println!("  {pair:<22} {ci:<30} {verdict}");
    }
}

/// The model with a context wide enough for every record (a generous
/// bound: two bytes per token, prefix, question and answer).
pub(super) fn engine_for(
    model: &ModelArgs,
    records: &[Record],
    max_tokens: usize,
) -> anyhow::Result<crate::engine::Engine> {
    let widest = records
        .iter()
        .map(|r| r.contexts.iter().map(|c| c.len() / 2 + 16).sum::<usize>())
        .max()
        .unwrap_or(0);
    model.load((widest + 1024 + max_tokens).next_multiple_of(256) as u32)
}

/// Where eval and calibration keep their chunk states (index gc never
/// touches it).
pub(super) fn eval_store() -> KvStore {
    KvStore::new(crate::paths::cache_dir().join("kv-eval"))
}

/// Predictions already made with `stamp`, and how many rows of the file
/// were made with other settings (a torn last line from a killed run, or a
/// row from an older format, is skipped).
fn read_predictions(path: &std::path::Path, stamp: &Stamp) -> (Vec<Prediction>, usize) {
    let rows: Vec<Prediction> = std::fs::File::open(path)
        .map(|f| {
            std::io::BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| serde_json::from_str(&l).ok())
                .collect()
        })
        .unwrap_or_default();
    let total = rows.len();
    let mine: Vec<Prediction> = rows.into_iter().filter(|p| p.settings == *stamp).collect();
    let other = total - mine.len();
    (mine, other)
}

/// The results file for this dataset and stamp. Rows carry their mode and
/// stamp, so runs with other modes or APE values share the file and reuse
/// what they have in common.
fn default_results(args: &EvalArgs, stamp: &Stamp) -> PathBuf {
    let mut h = blake3::Hasher::new();
    h.update(
        args.dataset
            .canonicalize()
            .unwrap_or_else(|_| args.dataset.clone())
            .to_string_lossy()
            .as_bytes(),
    );
    h.update(serde_json::to_string(stamp).unwrap_or_default().as_bytes());
    h.update(b"v3");
    crate::paths::cache_dir()
        .join("eval")
        .join(format!("{}.jsonl", &h.finalize().to_hex()[..16]))
}
