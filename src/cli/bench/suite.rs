//! `ape-chat bench suite`: flags → [`crate::bench::suite`] → JSON, an SVG
//! chart and a table.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::bench_modes;
use crate::bench::chart::ttft_chart;
use crate::bench::suite::{suite, SuiteOptions, SuiteReport};
use crate::cli::style::{bold, dim};
use crate::cli::{FolderArgs, ModelArgs};

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Numbers of retrieved chunks to time, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "5,10,20,40",
        value_name = "N,…"
    )]
    chunks: Vec<usize>,
    /// Tokens per chunk.
    #[arg(long, default_value_t = 256, value_name = "L")]
    chunk_tokens: usize,
    /// Tokens decoded per mode for the decode-speed figures.
    #[arg(long, default_value_t = 32, value_name = "N")]
    decode_tokens: usize,
    /// Interleaved repeats per mode and size (order rotated); medians.
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeats: usize,
    /// Folder to time indexing on (into a scratch index and cache)
    /// [default: the README's sample folder, if present].
    #[arg(long, value_name = "DIR")]
    index_folder: Option<PathBuf>,
    /// Where `bench-suite.json` and `bench-suite.svg` go.
    #[arg(long, default_value = ".", value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    pub(super) ape: crate::config::ApeSettings,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Print the report as JSON on stdout too.
    #[arg(long)]
    json: bool,
}

pub fn run(model: &ModelArgs, args: &SuiteArgs) -> anyhow::Result<ExitCode> {
    let largest = args.chunks.iter().copied().max().unwrap_or(0);
    let need = 2 * largest * args.chunk_tokens + args.decode_tokens + 512;
    let engine = model.load(need.next_multiple_of(256) as u32)?;
    let options = SuiteOptions {
        sizes: args.chunks.clone(),
        chunk_tokens: args.chunk_tokens,
        decode_tokens: args.decode_tokens,
        repeats: args.repeats,
        modes: bench_modes(args.ape.params()?),
        index_folder: args.index_folder.clone().or_else(|| {
            let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/sample");
            sample.is_dir().then_some(sample)
        }),
        embed: args.folder.options().embed,
        index_chunk_tokens: args.folder.chunk_tokens(),
    };
    let quiet = args.json;
    let report = suite(&engine, &options, &mut |m| {
        if !quiet {
            eprintln!("{}", dim(m));
        }
    })?;
    super::write_report(
        &args.out,
        "bench-suite",
        &report,
        args.json,
        |svg| ttft_chart(&report, svg),
        || print_report(&report),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &SuiteReport) {
    println!("{}", bold("ape-chat bench suite"));
    println!("  model    {} ({})", r.model, r.architecture);
    println!("  machine  {} · {} threads", r.machine, r.threads);
    println!(
        "  chunks of {} tokens · median of {} (order rotated, state files read cold)",
        r.chunk_tokens, r.repeats
    );
    for p in &r.sizes {
        println!("\n  {} chunks", p.chunks);
        for m in &p.modes {
            println!(
                "    {:<36} TTFT {:>9.0} ms (warm {:>7.0}) {:>7.1}×  decode {:>5.1} tok/s",
                m.mode, m.ttft_ms, m.ttft_warm_ms, m.speedup, m.decode_tokens_per_s
            );
        }
    }
    let st = &r.states;
    println!(
        "\n  chunk encoding {:.0} tokens/s · state files read {:.0} MB/s cold, {:.0} MB/s warm · read+restore {:.0} MB/s",
        r.chunk_encode_tokens_per_s,
        st.file_read_cold_mb_per_s,
        st.file_read_warm_mb_per_s,
        st.load_and_restore_mb_per_s
    );
    println!(
        "  state size: {:.0} bytes/token in memory (f16), {:.0} at rest (compact: {:.2}×)",
        st.bytes_per_token_f16,
        st.bytes_per_token_at_rest,
        st.bytes_per_token_at_rest / st.bytes_per_token_f16.max(1.0)
    );
    match (&r.index, &r.index_skipped) {
        (Some(i), _) => println!(
            "  indexing {}: {} files, {} chunks in {:.1} s (text ready after {:.0} ms; embed {:.0} ms, KV encode {:.0} ms)",
            i.folder.display(), i.files, i.chunks, i.seconds, i.stages_ms.text_ready,
            i.stages_ms.embed, i.stages_ms.encode
        ),
        (None, Some(why)) => println!("  indexing not timed: {why}"),
        (None, None) => {}
    }
}
