//! `ape-chat eval-docs`: flags → questions over real documentation folders
//! answered in several settings ([`crate::eval::docs`]) → the table paired
//! against the first setting.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::style::{bold, dim};
use super::{AskArgs, FolderArgs, ModelArgs, CANCEL};
use crate::eval::docs::{self, DocsError, Half, Plan, Roots, Setting};
use crate::workspace::context_size;

#[derive(Debug, Args)]
pub struct EvalDocsArgs {
    /// JSON Lines of {"id", "docs" (optional: "python3"), "folder",
    /// "file", "question", "answer" (a regular expression), "evidence",
    /// "gold" (optional)} (assets/eval/docs/questions.jsonl).
    #[arg(long, value_name = "FILE")]
    questions: PathBuf,
    /// The folder rustup's documentation is in, which the questions'
    /// folders are under unless they name another tree: "$(rustc --print
    /// sysroot)/share/doc/rust/html".
    #[arg(long, value_name = "DIR")]
    root: PathBuf,
    /// The folder Debian's python3-doc is in, for questions with `"docs":
    /// "python3"` (scripts/setup.sh installs it).
    #[arg(long, value_name = "DIR", default_value = docs::PYTHON_DOCS)]
    python_root: PathBuf,
    /// Which half to answer, by page: `tune` (to choose settings on),
    /// `report` (to judge them on), `all`.
    #[arg(long, value_enum, default_value = "tune")]
    half: Half,
    /// Settings to compare, comma-separated, the baseline first: `exact`,
    /// `fast`, `balanced` (as --quality resolves them) or a mode
    /// (`ape:t=…:s=…:reread=…:window=…`, `parallel`, …).
    #[arg(long, value_delimiter = ',', default_value = "exact,fast,balanced")]
    settings: Vec<String>,
    /// Answer only the first N questions of the half.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Rows file; a rerun with it answers only what is missing [default:
    /// docs.jsonl in the cache's eval dir].
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
    /// Also draw the settings' accuracy against their speedup to this SVG.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Retrieval alone: index each folder to text and vectors and say, per
    /// half, how often the question's page is among the chunks an answer
    /// would read; answer nothing.
    #[arg(long)]
    retrieval_only: bool,
    /// Print the summary and every row as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub(super) answer: AskArgs,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
}

impl EvalDocsArgs {
    pub(super) fn apply(&mut self, c: &crate::config::FileConfig) {
        self.answer.apply(c);
        self.folder.apply(c);
    }
}

pub fn run(model: &ModelArgs, args: &EvalDocsArgs) -> anyhow::Result<ExitCode> {
    let settings = args
        .settings
        .iter()
        .map(|name| {
            let (mode, whole_mode) = args.answer.setting(name)?;
            Ok(Setting {
                label: name.clone(),
                mode,
                whole_mode,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    anyhow::ensure!(!settings.is_empty(), "give at least one setting");
    let mut questions = docs::load(&args.questions)?;
    let in_set = questions.len();
    questions.retain(|q| args.half == Half::All || q.half() == args.half);
    questions.truncate(args.limit.unwrap_or(usize::MAX));
    anyhow::ensure!(!questions.is_empty(), "no questions in this half");
    let options = args.answer.options(false)?;
    let engine = model.load(context_size(
        options.top_k,
        args.folder.chunk_tokens(),
        args.answer.max_tokens,
    ))?;
    let results = args
        .results
        .clone()
        .unwrap_or_else(|| crate::paths::eval_results_dir().join("docs.jsonl"));
    if let Some(dir) = results.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if !args.json {
        eprintln!(
            "{} {} questions of {in_set} ({} half, over {} pages) · {} · top-k {} · {} tokens · rows in {}",
            bold("eval-docs"),
            questions.len(),
            format!("{:?}", args.half).to_lowercase(),
            docs::pages(&questions),
            engine.path().display(),
            options.top_k,
            args.answer.max_tokens,
            results.display()
        );
        for s in &settings {
            eprintln!("  {:<10} {}", s.label, dim(&s.mode.to_string()));
        }
    }
    let roots = Roots {
        rust: args.root.clone(),
        python3: args.python_root.clone(),
    };
    let plan = Plan {
        roots: &roots,
        questions: &questions,
        settings: &settings,
        options,
        results: &results,
    };
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} · {msg} · ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let folder = args.folder.options();
    let store = || {
        args.folder
            .store()
            .map_err(|e| DocsError::Store(e.to_string()))
    };
    if args.retrieval_only {
        let found = docs::retrieval(&engine, &folder, &store, &plan, &CANCEL, &mut |p| {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            bar.set_message(p.doing.to_string());
        })?;
        bar.finish_and_clear();
        return print_retrieval(&found, args.json);
    }
    let rows = docs::run(&engine, &folder, &store, &plan, &CANCEL, &mut |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(p.doing.to_string());
    })?;
    bar.finish_and_clear();
    let summary = docs::summarize(&rows, &settings);
    if let Some(svg) = &args.svg {
        let subtitle = format!(
            "{} · {} questions over {} pages ({} half) · top-k {} · {} threads",
            crate::bench::chart::file_name(&engine.path().display().to_string()),
            questions.len(),
            docs::pages(&questions),
            format!("{:?}", args.half).to_lowercase(),
            plan.options.top_k,
            engine.options().threads
        );
        docs::chart(&summary, &subtitle, svg)?;
    }
    if args.json {
        println!("{}", json!({"summary": summary, "rows": rows}));
        return Ok(ExitCode::SUCCESS);
    }
    let base = &settings[0].label;
    println!(
        "{:<10} {:>7} {:>22} {:>24} {:>11} {:>22} {:>11} {:>8} {:>9} {:>13} {:>7}",
        "setting",
        "right",
        "share [95% CI]",
        format!("vs {base} [95% CI]"),
        "lost/gained",
        "likelihood [95% CI]",
        "median TTFT",
        "speedup",
        "page read",
        "missed (r/r)",
        "doubted"
    );
    for s in &summary {
        println!(
            "{:<10} {:>7} {:>22} {:>24} {:>11} {:>22} {:>9.2} s {:>7.1}× {:>8.0}% {:>13} {:>7}",
            s.label,
            format!("{}/{}", s.right, s.questions),
            format!(
                "{:.2} [{:.2}, {:.2}]",
                s.accuracy.value, s.accuracy.lo, s.accuracy.hi
            ),
            format!(
                "{:+.3} [{:+.3}, {:+.3}]",
                s.against_baseline.value, s.against_baseline.lo, s.against_baseline.hi
            ),
            format!("{}/{}", s.lost, s.gained),
            format!(
                "{:.3} [{:.3}, {:.3}]",
                s.likelihood.value, s.likelihood.lo, s.likelihood.hi
            ),
            s.median_ttft_ms / 1e3,
            s.speedup,
            s.page_retrieved * 100.0,
            format!("{}/{}", s.missed_retrieval, s.missed_reading),
            s.doubted
        );
    }
    println!(
        "{}",
        dim(&format!("likelihood: the reference answer's per-token likelihood against {base}'s (ratio of means); missed: wrong with the page not retrieved / retrieved"))
    );
    println!(
        "{}",
        dim("intervals: 2,000 resamples of the pages; TTFT with each question's states cached")
    );
    Ok(ExitCode::SUCCESS)
}

/// `--retrieval-only`: the page found per half, and its rank.
fn print_retrieval(found: &[docs::Retrieved], json: bool) -> anyhow::Result<ExitCode> {
    let share = |half: Option<Half>| {
        let of: Vec<_> = found
            .iter()
            .filter(|r| half.is_none_or(|h| r.half == h))
            .collect();
        let hit = of.iter().filter(|r| r.page_rank.is_some()).count();
        (hit, of.len())
    };
    if json {
        let (tune, report, all) = (
            share(Some(Half::Tune)),
            share(Some(Half::Report)),
            share(None),
        );
        println!(
            "{}",
            json!({
                "page_retrieved": {"tune": tune, "report": report, "all": all},
                "rows": found,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", bold("page among the retrieved chunks"));
    for (name, half) in [
        ("tune", Some(Half::Tune)),
        ("report", Some(Half::Report)),
        ("all", None),
    ] {
        let (hit, of) = share(half);
        if of > 0 {
            println!(
                "  {name:<7} {hit}/{of} ({:.0} %)",
                100.0 * hit as f64 / of as f64
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
