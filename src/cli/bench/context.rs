//! `ape-chat bench context`: flags → [`crate::bench::context`] → JSON, an
//! SVG chart and a table.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::answer::Quality;
use crate::bench::chart::context_chart;
use crate::bench::context::{context, read_report, ContextOptions, ContextReport};
use crate::cli::style::{bold, dim};
use crate::cli::ModelArgs;
use crate::engine::Mode;

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Cached tokens per question to time, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "8192,16384,32768,65536,131072",
        value_name = "N,…"
    )]
    tokens: Vec<usize>,
    /// Tokens per chunk.
    #[arg(long, default_value_t = 256, value_name = "L")]
    chunk_tokens: usize,
    /// Tokens decoded per mode for the decode speed.
    #[arg(long, default_value_t = 16, value_name = "N")]
    decode_tokens: usize,
    /// Interleaved repeats per mode and size (order rotated); medians.
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeats: usize,
    /// Time sequential prefill (flash attention on) up to this many tokens
    /// (never past the window: it cannot read further).
    #[arg(long, default_value_t = 16384, value_name = "N")]
    sequential_max: usize,
    #[command(flatten)]
    pub(super) ape: crate::config::ApeSettings,
    /// Where `bench-context.json` and `bench-context.svg` go.
    #[arg(long, default_value = ".", value_name = "DIR")]
    out: PathBuf,
    /// Print the report as JSON on stdout too.
    #[arg(long)]
    json: bool,
    /// Measure nothing: draw the chart (beside the file) and print the
    /// table of a saved `bench-context.json`, e.g. a GPU machine's.
    #[arg(long, value_name = "JSON")]
    from: Option<PathBuf>,
}

pub fn run(model: &ModelArgs, args: &ContextArgs) -> anyhow::Result<ExitCode> {
    if let Some(from) = &args.from {
        let report = read_report(from)?;
        let svg = from.with_extension("svg");
        context_chart(&report, &svg)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print_report(&report);
            println!("\n  wrote {}", svg.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let engine = model.load(8192)?;
    // APE, and `balanced` as it re-reads on a GPU (the whole best chunk).
    let ape = super::t_and_s(args.ape);
    let options = ContextOptions {
        sizes: args.tokens.clone(),
        chunk_tokens: args.chunk_tokens,
        decode_tokens: args.decode_tokens,
        repeats: args.repeats,
        modes: vec![
            Mode::Ape(ape.params()?),
            Mode::Ape(ape.over(Quality::BALANCED_WHOLE).params()?),
        ],
        sequential_max: args.sequential_max,
    };
    let quiet = args.json;
    let report = context(
        &engine,
        &options,
        &mut |m| {
            if !quiet {
                eprintln!("{}", dim(m));
            }
        },
        // The sizes done so far, replaced by the whole report at the end.
        &mut |r| Ok(super::write_json(&args.out, "bench-context", r).map(|_| ())?),
    )?;
    super::write_report(
        &args.out,
        "bench-context",
        &report,
        args.json,
        |svg| context_chart(&report, svg),
        || print_report(&report),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &ContextReport) {
    println!("{}", bold("ape-chat bench context"));
    println!(
        "  model    {} ({}, window {})",
        r.model, r.architecture, r.window
    );
    println!("  machine  {} · {} threads", r.machine, r.threads);
    println!(
        "  chunks of {} tokens on shared positions · median of {} · state files read cold (warm: from the page cache; then from each memory tier)",
        r.chunk_tokens, r.repeats
    );
    for p in &r.points {
        println!(
            "\n  {} tokens ({} chunks, {} cells)",
            p.tokens, p.chunks, p.cells
        );
        for m in &p.modes {
            let held: String = m
                .memory
                .iter()
                .map(|t| format!(", {} {:.0}", t.tier, t.ttft_ms))
                .collect();
            println!(
                "    {:<36} TTFT {:>9.0} ms (warm {:>7.0}{held})  decode {:>5.1} tok/s",
                m.mode, m.ttft_ms, m.ttft_warm_ms, m.decode_tokens_per_s
            );
        }
    }
    println!(
        "\n  chunk encoding {:.0} tokens/s · {:.0} state bytes per token at rest · {} KV bytes per cell",
        r.chunk_encode_tokens_per_s, r.state_bytes_per_token, r.kv_bytes_per_cell
    );
}
