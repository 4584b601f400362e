//! `ape-chat eval`: flags → a resumable run ([`crate::eval::results`]) →
//! the per-mode table, the ablation against sequential prefill and every
//! pair's paired differences.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::style::{bold, dim};
use super::{ModelArgs, Origins, PrefixArgs, CANCEL};
use crate::engine::{ApeParams, Engine, Mode, StateFormat};
use crate::eval::calibrate::load_provenance;
use crate::eval::datasets;
use crate::eval::results::{default_path, Results};
use crate::eval::run::{
    attribution, compare, compare_formats, summarize, AttributionScore, FormatDelta, ModeSummary,
    Paired, Prediction, Retention, Stamp,
};
use crate::eval::stats::{Estimate, RESAMPLES};
use crate::kvstore::KvStore;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSON Lines of {"id", "question", "contexts": [...], "answers": [...]}.
    #[arg(long, value_name = "FILE")]
    dataset: PathBuf,
    /// Modes to compare, comma-separated, sequential first (the baseline):
    /// `sequential` (the chunks best last, nearest the question),
    /// `sequential-stored` (in the record's order: the reading-order
    /// control), `pcw`, `parallel`, `ape`, `ape-t` (temperature only, S = 1)
    /// and `ape:t=0.8:s=1:reread=1:window=48:focus=3` (APE with these
    /// values; others as for `ape`; `ape:t=1:s=1:reread=1` is parallel +
    /// re-read; `window` re-reads only the best window of that many
    /// tokens). The
    /// default is the paper's ablation.
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
    /// the same mode (and T, S) for the same record content are reused
    /// [default: in the cache dir, keyed by model, prompt, --max-tokens and
    /// state format; rows carry their record's content hash].
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
    /// How chunk states are stored and read back: `compact` (what ape-chat
    /// stores: K q8_0, V q6_K) or `f16` (llama.cpp's bytes as they are).
    #[arg(long, value_enum, default_value = "compact")]
    state_format: StateFormatArg,
    /// Also compare every cached mode with the rows of an earlier run of
    /// this dataset and these settings made with the other state format
    /// (paired by record, clustered by article).
    #[arg(long, value_enum, value_name = "FORMAT")]
    against_state_format: Option<StateFormatArg>,
    #[command(flatten)]
    pub(super) ape: crate::config::ApeSettings,
    #[command(flatten)]
    pub(super) prefix: PrefixArgs,
    /// Print the summary and every prediction as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StateFormatArg {
    Compact,
    F16,
}

impl From<StateFormatArg> for StateFormat {
    fn from(f: StateFormatArg) -> Self {
        match f {
            StateFormatArg::Compact => StateFormat::Compact,
            StateFormatArg::F16 => StateFormat::F16,
        }
    }
}

/// Mode names to modes; APE settings not named in a spec come from `ape`.
fn parse_modes(names: &[String], ape: ApeParams) -> anyhow::Result<Vec<Mode>> {
    names
        .iter()
        .map(|m| Mode::parse(m, ape).map_err(anyhow::Error::msg))
        .collect()
}

pub fn run(model: &ModelArgs, args: &EvalArgs, origins: &Origins<'_>) -> anyhow::Result<ExitCode> {
    let mut modes = parse_modes(&args.modes, args.ape.params()?)?;
    // `ape` and `ape:t=…` can name the same settings: answer them once.
    let mut seen = Vec::new();
    modes.retain(|m| {
        !seen.contains(m) && {
            seen.push(*m);
            true
        }
    });
    let mut records = datasets::load(&args.dataset)?;
    records.truncate(args.limit.unwrap_or(usize::MAX));
    anyhow::ensure!(
        !records.is_empty(),
        "{}: no records",
        args.dataset.display()
    );
    let engine = model.load(crate::eval::context_for(&records, args.max_tokens))?;
    let format = StateFormat::from(args.state_format);
    let states = args
        .prefix
        .states(&engine, KvStore::eval_location_for(format))?;
    let stamp = Stamp::new(
        &states,
        &args.prefix.system_prompt(),
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
    let path = args.results.clone().unwrap_or_else(|| default_path(&stamp));
    let mut results = Results::open(&path, &stamp);
    if !args.json {
        if results.other > 0 {
            eprintln!(
                "{}",
                dim(&format!(
                    "{} rows of {} were made with other settings (model, prompt, style or length): left out",
                    results.other,
                    path.display()
                ))
            );
        }
        let todo = results.missing(&records, &modes).len();
        if todo < records.len() {
            eprintln!(
                "resuming: {} of {} records already in {}",
                records.len() - todo,
                records.len(),
                path.display()
            );
        }
    }
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} evaluating {wide_bar} {pos}/{len} records · ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    results.complete(&states, &records, &modes, &CANCEL, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    let done: Vec<Prediction> = results.of(&records).into_iter().cloned().collect();
    let summary: Vec<_> = modes.iter().map(|&m| summarize(&done, m)).collect();
    let (paired, retention) = compare(&done, &modes);
    let attribution = attribution(&done, &modes);
    let formats = match args.against_state_format.map(StateFormat::from) {
        Some(f) if f == format => {
            anyhow::bail!("--against-state-format names this run's own format")
        }
        Some(f) => {
            let theirs = Stamp {
                states: f,
                ..stamp.clone()
            };
            let path = default_path(&theirs);
            let rows: Vec<Prediction> = Results::open(&path, &theirs)
                .of(&records)
                .into_iter()
                .cloned()
                .collect();
            anyhow::ensure!(
                !rows.is_empty(),
                "no rows made with {f:?} states for this dataset and these settings: run eval with --state-format {} first",
                format!("{f:?}").to_lowercase()
            );
            compare_formats(&done, &rows, &modes)
        }
        None => Vec::new(),
    };
    if args.json {
        println!(
            "{}",
            json!({
                "results": path,
                "settings": stamp,
                "summary": summary,
                "paired": paired,
                "retention": retention,
                "attribution": attribution,
                "against_state_format": formats,
                "bootstrap": {"resamples": RESAMPLES, "confidence": 0.95},
                "predictions": done,
            })
        );
    } else {
        println!(
            "{} {} records · {}",
            bold("eval"),
            records.len(),
            path.display()
        );
        print_tables(&summary, &paired, &retention);
        print_attribution(&attribution);
        print_formats(format, &formats);
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
                "  {:<11} T={} ({}) S={} ({}) reread={} ({}) window={} ({}) sentences={} ({}) echo={} ({}) focus={} ({})",
                m.name(),
                p.temperature,
                from(p.temperature == base.temperature, "temperature_ape"),
                p.scale,
                from(p.scale == base.scale, "scale_ape"),
                p.reread,
                from(p.reread == base.reread, "reread"),
                p.window,
                from(p.window == base.window, "reread_window"),
                p.sentences,
                from(p.sentences == base.sentences, "reread_sentences"),
                p.echo,
                from(p.echo == base.echo, "reread_echo"),
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
    let contains = paired.iter().map(|p| (p, &p.contains, p.contains_verdict));
    print_paired("answer contains a gold answer", contains);
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

/// Per mode: how often the largest attention share, and retrieval's first
/// chunk, is the chunk that holds the answer.
fn print_attribution(scores: &[AttributionScore]) {
    if scores.is_empty() {
        return;
    }
    let ci = |e: &Estimate| format!("{:.3} [{:.3}, {:.3}]", e.value, e.lo, e.hi);
    let diff = |e: &Estimate| format!("{:+.3} [{:+.3}, {:+.3}]", e.value, e.lo, e.hi);
    println!(
        "\n  attribution: the chunk holding the answer is the one with the largest share / retrieval's first (95% CI, articles resampled)"
    );
    let w = scores
        .iter()
        .map(|a| a.label.chars().count())
        .max()
        .unwrap_or(0);
    println!(
        "  {:<w$} {:>8} {:<24} {:<24} {:<26}",
        "mode", "records", "largest share", "retrieval first", "difference"
    );
    for a in scores {
        println!(
            "  {:<w$} {:>8} {:<24} {:<24} {:<26} {}",
            a.label,
            a.records,
            ci(&a.top_share),
            ci(&a.retrieval_first),
            diff(&a.difference),
            a.verdict
        );
    }
}

/// Each cached mode with this run's state format against the other's.
fn print_formats(format: StateFormat, formats: &[FormatDelta]) {
    if formats.is_empty() {
        return;
    }
    let ci = |e: &Estimate| format!("{:+.4} [{:+.4}, {:+.4}]", e.value, e.lo, e.hi);
    println!(
        "\n  {format:?} states against the other format, paired by record (95% CI, articles resampled)"
    );
    println!(
        "  {:<34} {:>8} {:>9} {:<30} {:<30}",
        "mode", "records", "articles", "Δ NLL/token", "Δ contains"
    );
    for d in formats {
        println!(
            "  {:<34} {:>8} {:>9} {:<30} {:<30}",
            d.label,
            d.records,
            d.clusters,
            ci(&d.answer_nll),
            ci(&d.contains)
        );
    }
}

fn print_paired<'a>(metric: &str, rows: impl Iterator<Item = (&'a Paired, &'a Estimate, &'a str)>) {
    println!("\n  paired difference a − b, {metric} (95% bootstrap CI, {RESAMPLES} resamples)");
    // Labels with settings: several rows may share a mode name.
    let rows: Vec<_> = rows
        .map(|(p, e, verdict)| (format!("{} − {}", p.a_label, p.b_label), e, verdict))
        .collect();
    let width = rows
        .iter()
        .map(|(pair, ..)| pair.chars().count())
        .max()
        .unwrap_or(0);
    for (pair, e, verdict) in rows {
        let ci = format!("{:+.4} [{:+.4}, {:+.4}]", e.value, e.lo, e.hi);
        println!("  {pair:<width$} {ci:<30} {verdict}");
    }
}
