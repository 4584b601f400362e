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
use super::style::bold;
use super::{ApeArgs, ModelArgs, CANCEL};
use crate::engine::Mode;
use crate::eval::dataset::{self, Record};
use crate::eval::run::{compare, evaluate, summarize, ModeSummary, Paired, Prediction, Retention};
use crate::eval::stats::{Estimate, RESAMPLES};
use crate::kvstore::KvStore;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSON Lines of {"id", "question", "contexts": [...], "answers": [...]}.
    #[arg(long, value_name = "FILE")]
    dataset: PathBuf,
    /// Modes to compare, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "sequential,parallel,ape")]
    modes: Vec<String>,
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

fn parse_modes(names: &[String], ape: &ApeArgs) -> anyhow::Result<Vec<Mode>> {
    names
        .iter()
        .map(|m| match m.trim() {
            "sequential" => Ok(Mode::Sequential),
            "parallel" => Ok(Mode::Parallel),
            "ape" => Ok(Mode::Ape(ape.params()?)),
            other => anyhow::bail!("unknown mode `{other}` (sequential, parallel, ape)"),
        })
        .collect()
}

pub fn run(model: &ModelArgs, args: &EvalArgs) -> anyhow::Result<ExitCode> {
    let modes = parse_modes(&args.modes, &args.ape)?;
    let mut records = dataset::load(&args.dataset)?;
    records.truncate(args.limit.unwrap_or(usize::MAX));
    anyhow::ensure!(
        !records.is_empty(),
        "{}: no records",
        args.dataset.display()
    );
    let engine = engine_for(model, &records, args.max_tokens)?;
    let llm = args.prefix.llm(&engine, eval_store())?;
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| default_results(args, &llm));
    let mut done = read_predictions(&results);
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
        let preds = evaluate(&llm, r, &missing, args.max_tokens)?;
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

/// One table per metric: per-mode means, then paired differences and
/// retention with their intervals.
fn print_tables(summary: &[ModeSummary], paired: &[Paired], retention: &[Retention]) {
    println!(
        "\n  {:<22} {:>6} {:>6} {:>9} {:>10} {:>10} {:>9} {:>12} {:>7}",
        "mode", "EM", "F1", "contains", "NLL/tok", "log P", "TTFT ms", "TTFT median", "tok/s"
    );
    for s in summary {
        let name = match s.ape {
            Some(p) => format!("{} (T={}, S={})", s.mode, p.temperature, p.scale),
            None => s.mode.clone(),
        };
        println!(
            "  {:<22} {:>6.3} {:>6.3} {:>9.3} {:>10.4} {:>10.3} {:>9.1} {:>12.1} {:>7.1}",
            name,
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
    let nll = paired.iter().map(|p| (p, &p.answer_nll, p.nll_verdict));
    print_paired("answer NLL per token, lower is better", nll);
    print_paired("F1", paired.iter().map(|p| (p, &p.f1, p.f1_verdict)));
    if let Some(base) = retention.first().map(|r| &r.baseline) {
        println!(
            "\n  {:<24} {:<24} answer likelihood (95% CI)",
            format!("retention vs {base}"),
            "F1"
        );
        for r in retention {
            let ci = |e: &Estimate| format!("{:.3} [{:.3}, {:.3}]", e.value, e.lo, e.hi);
            println!("  {:<24} {:<24} {}", r.mode, ci(&r.f1), ci(&r.likelihood));
        }
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

/// Predictions already made (a torn last line from a killed run is skipped).
fn read_predictions(path: &std::path::Path) -> Vec<Prediction> {
    std::fs::File::open(path)
        .map(|f| {
            std::io::BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| serde_json::from_str(&l).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn default_results(args: &EvalArgs, llm: &crate::index::Llm<'_>) -> PathBuf {
    let mut h = blake3::Hasher::new();
    h.update(
        args.dataset
            .canonicalize()
            .unwrap_or_else(|_| args.dataset.clone())
            .to_string_lossy()
            .as_bytes(),
    );
    h.update(llm.engine.info().id.to_string().as_bytes());
    for t in &llm.layout.prefix {
        h.update(&t.to_le_bytes());
    }
    // Not the modes: rows carry their mode (and T, S), so runs with other
    // modes or APE values share the file and reuse what they have in common.
    h.update(format!("v2|{}", args.max_tokens).as_bytes());
    crate::paths::cache_dir()
        .join("eval")
        .join(format!("{}.jsonl", &h.finalize().to_hex()[..16]))
}
