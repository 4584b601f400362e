//! `ape-chat bench suite`: every speed figure the README reports, measured
//! side by side in one run on one model — TTFT and decode speed per mode
//! for growing numbers of chunks, chunk encoding, state loading, state size
//! per K-cache type, and folder indexing — written as JSON plus an SVG
//! chart.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use super::chart;
use super::ttft::{machine, time_modes, BenchStates, ModeFigures, StateDir, Workload, QUESTION};
use crate::cli::index::FolderArgs;
use crate::cli::style::{bold, dim};
use crate::cli::{ApeArgs, ModelArgs};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{ChunkState, Engine, EngineOptions, KvType, Mode, PromptLayout};
use crate::index::dense::{EmbedOptions, Embedder};
use crate::index::FolderIndex;
use crate::kvstore::KvStore;
use crate::states::States;

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
    /// Interleaved repeats per mode and size; medians are reported.
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeats: usize,
    /// Folder to time indexing on (into a scratch index and cache)
    /// [default: the README's sample folder, if present].
    #[arg(long, value_name = "DIR")]
    index_folder: Option<PathBuf>,
    /// Where `bench-suite.json` and `bench-suite.svg` go.
    #[arg(long, default_value = ".", value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    pub(super) ape: ApeArgs,
    #[command(flatten)]
    pub(super) folder: FolderArgs,
    /// Print the report as JSON on stdout too.
    #[arg(long)]
    json: bool,
}

/// One number of chunks, all modes.
#[derive(Debug, Serialize)]
pub(super) struct SizePoint {
    pub chunks: usize,
    pub modes: Vec<ModeFigures>,
    pub ttft_ratio_sequential_over_ape: f64,
    pub ttft_ratio_sequential_over_parallel: f64,
    pub decode_ratio_ape_over_sequential: f64,
    pub decode_ratio_ape_over_parallel: f64,
}

#[derive(Debug, Serialize)]
struct StateFigures {
    /// Reading state files from disk and verifying their checksums.
    file_read_mb_per_s: f64,
    /// Reading, verifying and restoring them into the context (parallel
    /// mode's whole load, at the largest size).
    load_and_restore_mb_per_s: f64,
    bytes_per_token_f16: f64,
    bytes_per_token_q8_0: f64,
}

#[derive(Debug, Serialize)]
struct IndexFigures {
    folder: PathBuf,
    files: usize,
    chunks: usize,
    tokens: usize,
    seconds: f64,
    files_per_s: f64,
    chunks_per_s: f64,
    /// Milliseconds per stage (walk, extract+chunk, BM25, embed, KV encode, commit).
    stages_ms: crate::index::StageTimes,
}

#[derive(Debug, Serialize)]
pub(super) struct SuiteReport {
    pub model: String,
    pub architecture: String,
    pub machine: String,
    threads: usize,
    pub chunk_tokens: usize,
    repeats: usize,
    temperature: f32,
    scale: f32,
    pub sizes: Vec<SizePoint>,
    chunk_encode_tokens_per_s: f64,
    states: StateFigures,
    index: Option<IndexFigures>,
    /// Why indexing was not timed, if it was not.
    index_skipped: Option<String>,
}

pub fn run(model: &ModelArgs, args: &SuiteArgs) -> anyhow::Result<ExitCode> {
    let mut sizes = args.chunks.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let largest = *sizes
        .last()
        .filter(|&&n| n > 0)
        .ok_or_else(|| anyhow::anyhow!("--chunks needs at least one positive number"))?;
    anyhow::ensure!(args.chunk_tokens > 0, "--chunk-tokens must be positive");
    let ape = args.ape.params()?;
    let need = largest * args.chunk_tokens + args.decode_tokens + 512;
    let engine = model.load(need.next_multiple_of(256) as u32)?;
    let layout = PromptLayout::new(&engine, DEFAULT_SYSTEM_PROMPT)?;
    let question = layout.question(&engine, QUESTION);
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    let note = |m: String| {
        if !args.json {
            eprintln!("{}", dim(&m));
        }
    };

    note(format!(
        "encoding {largest} chunks of {} tokens…",
        args.chunk_tokens
    ));
    let BenchStates {
        chunks,
        files,
        bytes: state_bytes,
        encode_s,
        _dir,
    } = BenchStates::encode(&mut s, &prefix, largest, args.chunk_tokens)?;

    let modes = [Mode::Sequential, Mode::Parallel, Mode::Ape(ape)];
    let mut points = Vec::new();
    for &n in &sizes {
        let work = Workload {
            prefix: &prefix,
            chunks: &chunks[..n],
            files: &files[..n],
            question: &question,
            decode: args.decode_tokens,
        };
        let figures = time_modes(&mut s, &modes, &work, args.repeats, &mut |r, total| {
            note(format!("{n} chunks, repeat {r}/{total}…"))
        })?;
        let (seq, par, apef) = (&figures[0], &figures[1], &figures[2]);
        points.push(SizePoint {
            chunks: n,
            ttft_ratio_sequential_over_ape: seq.ttft_ms / apef.ttft_ms,
            ttft_ratio_sequential_over_parallel: seq.ttft_ms / par.ttft_ms,
            decode_ratio_ape_over_sequential: apef.decode_tokens_per_s / seq.decode_tokens_per_s,
            decode_ratio_ape_over_parallel: apef.decode_tokens_per_s / par.decode_tokens_per_s,
            modes: figures,
        });
    }

    note("state files and K-cache types…".into());
    let states = state_figures(
        model,
        &engine,
        &layout,
        &files,
        &prefix,
        state_bytes,
        &points,
    )?;
    let (index, index_skipped) = match index_folder(args) {
        Some(folder) => {
            note(format!("indexing {}…", folder.display()));
            match index_figures(&engine, args, &folder) {
                Ok(f) => (Some(f), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            }
        }
        None => (None, Some("no folder to index".into())),
    };
    let report = SuiteReport {
        model: engine.path().display().to_string(),
        architecture: engine.info().architecture.clone(),
        machine: machine(),
        threads: engine.options().threads,
        chunk_tokens: args.chunk_tokens,
        repeats: args.repeats.max(1),
        temperature: ape.temperature,
        scale: ape.scale,
        sizes: points,
        chunk_encode_tokens_per_s: (largest * args.chunk_tokens) as f64 / encode_s,
        states,
        index,
        index_skipped,
    };
    std::fs::create_dir_all(&args.out)?;
    let json_path = args.out.join("bench-suite.json");
    let svg_path = args.out.join("bench-suite.svg");
    crate::fsutil::write_atomic(
        &json_path,
        &[serde_json::to_string_pretty(&report)?.as_bytes()],
    )?;
    chart::ttft_chart(&report, &svg_path)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
        println!(
            "\n  wrote {} and {}",
            json_path.display(),
            svg_path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// File read speed, full load speed, and bytes per token with an f16 and a
/// q8_0 K cache (the second from a separately loaded engine).
fn state_figures(
    model: &ModelArgs,
    engine: &Engine,
    layout: &PromptLayout,
    files: &[PathBuf],
    prefix: &crate::engine::PrefixState,
    state_bytes: u64,
    points: &[SizePoint],
) -> anyhow::Result<StateFigures> {
    let t = Instant::now();
    let rounds = 3;
    for _ in 0..rounds {
        for f in files {
            ChunkState::load(f, prefix)?;
        }
    }
    let read_s = t.elapsed().as_secs_f64() / rounds as f64;
    let mb = state_bytes as f64 / 1e6;
    let largest = points.last();
    let parallel_load_ms = largest
        .and_then(|p| p.modes.iter().find(|m| m.mode == "parallel"))
        .map_or(0.0, |m| m.load_ms);
    let largest_mb = largest.map_or(0.0, |p| mb * p.chunks as f64 / files.len().max(1) as f64);
    let per_token = |e: &Engine| -> anyhow::Result<f64> {
        let mut s = e.session()?;
        let prefix = s.encode_prefix(&layout.prefix)?;
        Ok(BenchStates::encode(&mut s, &prefix, 1, 256)?.bytes as f64 / 256.0)
    };
    let other = match engine.options().kv_type {
        KvType::F16 => KvType::Q8_0,
        KvType::Q8_0 => KvType::F16,
    };
    let o = EngineOptions {
        kv_type: other,
        ctx_tokens: 1024,
        ..engine.options().clone()
    };
    let second = Engine::load(&model.path(), o)?;
    let (here, there) = (per_token(engine)?, per_token(&second)?);
    let (f16, q8) = match other {
        KvType::Q8_0 => (here, there),
        KvType::F16 => (there, here),
    };
    Ok(StateFigures {
        file_read_mb_per_s: mb / read_s,
        load_and_restore_mb_per_s: largest_mb / (parallel_load_ms / 1e3).max(1e-9),
        bytes_per_token_f16: f16,
        bytes_per_token_q8_0: q8,
    })
}

fn index_folder(args: &SuiteArgs) -> Option<PathBuf> {
    args.index_folder.clone().or_else(|| {
        let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/sample");
        sample.is_dir().then_some(sample)
    })
}

/// A cold index of `folder` (text, BM25, vectors, KV states) into scratch
/// directories, so the user's index and cache are left alone.
fn index_figures(
    engine: &Engine,
    args: &SuiteArgs,
    folder: &std::path::Path,
) -> anyhow::Result<IndexFigures> {
    let scratch = StateDir::new()?;
    let states = States::new(
        engine,
        PromptLayout::new(engine, DEFAULT_SYSTEM_PROMPT)?,
        KvStore::new(scratch.0.join("kv")),
    )?;
    let mut o = EmbedOptions::default();
    if let Some(d) = &args.folder.embed_model {
        o.model_dir = d.clone();
    }
    o.ort_lib = args.folder.ort_lib.clone();
    let mut embedder = Embedder::load(&o)?;
    let folder = folder.canonicalize()?;
    let mut index = FolderIndex::open_at(
        &folder,
        scratch.0.join("index"),
        &states,
        args.folder.chunk_tokens(),
    )?;
    let t = Instant::now();
    let r = index.update(&states, &mut embedder, &AtomicBool::new(false), &mut |_| {})?;
    let seconds = t.elapsed().as_secs_f64();
    Ok(IndexFigures {
        folder,
        files: r.files_indexed,
        chunks: r.chunks_added,
        tokens: r.tokens,
        seconds,
        files_per_s: r.files_indexed as f64 / seconds,
        chunks_per_s: r.chunks_added as f64 / seconds,
        stages_ms: r.timings_ms,
    })
}

fn print_report(r: &SuiteReport) {
    println!("{}", bold("ape-chat bench suite"));
    println!("  model    {} ({})", r.model, r.architecture);
    println!("  machine  {} · {} threads", r.machine, r.threads);
    println!(
        "  chunks of {} tokens · T={} S={} · median of {}",
        r.chunk_tokens, r.temperature, r.scale, r.repeats
    );
    println!(
        "\n  {:>6} {:>12} {:>10} {:>10} {:>9} {:>9} {:>21}",
        "chunks", "sequential", "parallel", "APE", "seq/APE", "seq/par", "decode tok/s s/p/A"
    );
    for p in &r.sizes {
        let m = |i: usize| &p.modes[i];
        println!(
            "  {:>6} {:>10.0}ms {:>8.0}ms {:>8.0}ms {:>8.1}× {:>8.1}× {:>21}",
            p.chunks,
            m(0).ttft_ms,
            m(1).ttft_ms,
            m(2).ttft_ms,
            p.ttft_ratio_sequential_over_ape,
            p.ttft_ratio_sequential_over_parallel,
            format!(
                "{:.1}/{:.1}/{:.1}",
                m(0).decode_tokens_per_s,
                m(1).decode_tokens_per_s,
                m(2).decode_tokens_per_s
            )
        );
    }
    let st = &r.states;
    println!(
        "\n  chunk encoding {:.0} tokens/s · state files read {:.0} MB/s · read+restore {:.0} MB/s",
        r.chunk_encode_tokens_per_s, st.file_read_mb_per_s, st.load_and_restore_mb_per_s
    );
    println!(
        "  state size: {:.0} bytes/token with an f16 K cache, {:.0} with q8_0",
        st.bytes_per_token_f16, st.bytes_per_token_q8_0
    );
    match (&r.index, &r.index_skipped) {
        (Some(i), _) => println!(
            "  indexing {}: {} files, {} chunks in {:.1} s ({:.2} files/s, {:.2} chunks/s; KV encode {:.0} ms, embed {:.0} ms)",
            i.folder.display(), i.files, i.chunks, i.seconds, i.files_per_s, i.chunks_per_s,
            i.stages_ms.encode, i.stages_ms.embed
        ),
        (None, Some(why)) => println!("  indexing not timed: {why}"),
        (None, None) => {}
    }
}
