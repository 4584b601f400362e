//! `ape-chat bench ttft`: flags → [`crate::bench::ttft`] → a table or JSON.

use std::process::ExitCode;

use clap::Args;

use super::frontier_modes;
use crate::bench::ttft::{ttft, TtftOptions, TtftReport};
use crate::bench::ModeFigures;
use crate::cli::style::{bold, dim};
use crate::cli::ModelArgs;

#[derive(Debug, Args)]
pub struct TtftArgs {
    /// Number of retrieved chunks.
    #[arg(long, default_value_t = 10, value_name = "N")]
    chunks: usize,
    /// Tokens per chunk.
    #[arg(long, default_value_t = 256, value_name = "L")]
    chunk_tokens: usize,
    /// Tokens decoded per mode for the decode-speed figures.
    #[arg(long, default_value_t = 32, value_name = "N")]
    decode_tokens: usize,
    /// Interleaved repeats per mode (order rotated); medians are reported.
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeats: usize,
    /// Time every mode again while a second process (this program on the
    /// same model and threads, as llama.cpp's tools run) computes.
    #[arg(long)]
    under_load: bool,
    /// Leave out sequential prefill with flash attention on (timed by
    /// default: the fair baseline is the faster sequential prefill).
    #[arg(long)]
    no_flash_baseline: bool,
    #[command(flatten)]
    pub(super) ape: crate::config::ApeSettings,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn run(model: &ModelArgs, args: &TtftArgs) -> anyhow::Result<ExitCode> {
    let need = 2 * args.chunks * args.chunk_tokens + args.decode_tokens + 512;
    let engine = model.load(need.next_multiple_of(256) as u32)?;
    let options = TtftOptions {
        chunks: args.chunks,
        chunk_tokens: args.chunk_tokens,
        decode_tokens: args.decode_tokens,
        repeats: args.repeats,
        modes: frontier_modes(args.ape.params()?),
        under_load: args.under_load,
        flash_baseline: !args.no_flash_baseline,
    };
    let quiet = args.json;
    let r = ttft(&engine, &options, &mut |m| {
        if !quiet {
            eprintln!("{}", dim(m));
        }
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print_report(&r);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &TtftReport) {
    println!("{}", bold("ape-chat bench ttft"));
    println!("  model    {} ({})", r.model, r.architecture);
    println!("  machine  {} · {} threads", r.machine, r.threads);
    println!(
        "  context  prefix {} + {} chunks × {} tokens + question {} · K cache {} · median of {} (order rotated)",
        r.prefix_tokens, r.chunks, r.chunk_tokens, r.question_tokens, r.kv_type, r.repeats
    );
    print_modes(&r.modes, r.ape_decode_vs_parallel);
    print_memory(&r.modes, &r.baseline);
    if let Some(u) = &r.under_load {
        println!("\n  {} {}", bold("under load:"), u.competitor);
        print_modes(&u.modes, u.ape_decode_vs_parallel);
    }
    println!(
        "\n  TTFT with state files read cold (dropped from the page cache first); warm: read again at once"
    );
    println!(
        "  state {:.0} bytes/token at rest ({:.0} in memory; {:.1} MB of files for all chunks) · chunk encoding {:.0} tokens/s",
        r.state_bytes_per_token,
        r.state_bytes_per_token_in_memory,
        r.state_mb_total,
        r.chunk_encode_tokens_per_s
    );
}

/// Time to first token with the states already in memory, per tier.
fn print_memory(modes: &[ModeFigures], baseline: &str) {
    let base = modes
        .iter()
        .find(|m| m.mode == baseline)
        .map_or(0.0, |m| m.ttft_ms);
    let rows: Vec<_> = modes.iter().filter(|m| !m.memory.is_empty()).collect();
    if rows.is_empty() {
        return;
    }
    println!("\n  states held in memory (nothing read from disk); speedup over {baseline}");
    for m in rows {
        let tiers: Vec<String> = m
            .memory
            .iter()
            .map(|t| {
                format!(
                    "{} {:.1} ms (placement {:.1} ms, {:.1}×)",
                    t.tier,
                    t.ttft_ms,
                    t.load_ms,
                    crate::bench::ratio(base, t.ttft_ms)
                )
            })
            .collect();
        println!("  {:<36} {}", m.mode, tiers.join(" · "));
    }
}

fn print_modes(modes: &[ModeFigures], ape_vs_parallel: Option<f64>) {
    println!();
    println!(
        "  {:<36} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7}",
        "mode", "TTFT ms", "min", "warm", "load ms", "(read)", "prefill", "speedup", "tok/s"
    );
    for m in modes {
        println!(
            "  {:<36} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>7.1}× {:>7.1}",
            m.mode,
            m.ttft_ms,
            m.ttft_min_ms,
            m.ttft_warm_ms,
            m.load_ms,
            m.read_ms,
            m.prefill_ms,
            m.speedup,
            m.decode_tokens_per_s
        );
    }
    if let Some(x) = ape_vs_parallel {
        println!("  APE decode / parallel decode: {x:.2}");
    }
}
