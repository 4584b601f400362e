//! `ape-chat bench frontier`: an `eval --json` report and `bench ttft
//! --json` reports → [`crate::bench::frontier`] → the table and the chart.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::bench::frontier::{self, TARGET_SPEEDUP};
use crate::cli::style::{bold, dim};

#[derive(Debug, Args)]
pub struct FrontierArgs {
    /// `ape-chat eval --json` output (likelihood retention against fair
    /// sequential prefill, with intervals).
    #[arg(long, value_name = "FILE")]
    eval: PathBuf,
    /// `ape-chat bench ttft --json` output on the same model and settings.
    /// Repeatable, for modes timed in other runs of the same workload: a
    /// mode's speedup comes from the first report that times it (a ratio
    /// within one run).
    #[arg(long, value_name = "FILE", required = true)]
    ttft: Vec<PathBuf>,
    /// Write the chart here (SVG).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print the joined points as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &FrontierArgs) -> anyhow::Result<ExitCode> {
    let f = frontier::join(&args.eval, &args.ttft)?;
    let several = args.ttft.len() > 1;
    if let Some(path) = &args.svg {
        frontier::chart(&f, path)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&f)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", bold("ape-chat bench frontier"));
    println!(
        "  {} records · {} chunks × {} tokens · {} threads · quality vs {} · speed vs {}",
        f.records, f.chunks, f.chunk_tokens, f.threads, f.quality_baseline, f.speed_baseline
    );
    let w = f
        .points
        .iter()
        .map(|p| p.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    println!(
        "\n  {:<w$} {:>9} {:>10} {:>24} {:>24}  ",
        "mode", "speedup", "TTFT ms", "likelihood retention", "Δ contains"
    );
    let mut points = f.points.clone();
    points.sort_by(|a, b| a.speedup.total_cmp(&b.speedup));
    for p in &points {
        let mark = match (p.meets_target, p.on_frontier) {
            (true, _) => "meets the bar",
            (false, true) => "frontier",
            _ => "",
        };
        let mark = if f.choice.as_ref() == Some(&p.label) {
            format!(
                "{mark}{}the default's point",
                if mark.is_empty() { "" } else { "; " }
            )
        } else {
            mark.to_string()
        };
        println!(
            "  {:<w$} {:>8.1}× {:>10.0} {:>6.3} [{:.3}, {:.3}] {:>+7.3} [{:+.3}, {:+.3}]  {}",
            p.label,
            p.speedup,
            p.ttft_ms,
            p.likelihood.value,
            p.likelihood.lo,
            p.likelihood.hi,
            p.contains_delta.value,
            p.contains_delta.lo,
            p.contains_delta.hi,
            mark
        );
    }
    if several {
        for p in points.iter().filter(|p| p.speed_report != args.ttft[0]) {
            println!(
                "  {}",
                dim(&format!(
                    "{}: speed from {}",
                    p.label,
                    p.speed_report.display()
                ))
            );
        }
    }
    println!(
        "\n  {}",
        dim(&format!(
            "the bar: likelihood ≥ {} (interval low ≥ {}), contains ≥ sequential − {} points, ≥ {TARGET_SPEEDUP}× its speed",
            frontier::TARGET_RETENTION,
            frontier::TARGET_RETENTION_LOW,
            frontier::TARGET_CONTAINS_DROP * 100.0
        ))
    );
    println!(
        "  {}",
        dim(&match &f.choice {
            Some(c) => format!("the default's point (at ≥ {TARGET_SPEEDUP}×: meets the bar, else the most \"contains\", then likelihood): {c}"),
            None => format!("no point at ≥ {TARGET_SPEEDUP}×"),
        })
    );
    if !f.unmatched.is_empty() {
        println!(
            "  {}",
            dim(&format!("in one report only: {}", f.unmatched.join("; ")))
        );
    }
    if let Some(path) = &args.svg {
        println!("  {}", dim(&format!("chart: {}", path.display())));
    }
    Ok(ExitCode::SUCCESS)
}
