//! `ape-chat bench ttft`: sequential prefill vs parallel vs APE on the same
//! model, chunks and question, measured side by side in one run (interleaved
//! repeats, medians), so ratios are not skewed by machine drift.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use crate::cli::style::{bold, dim};
use crate::cli::{ApeArgs, ModelArgs};
use crate::engine::generate::{prefill, Context};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{ChunkState, Engine, Mode, PrefixState, PromptLayout, Session, TokenId};

/// Real prose to cut benchmark chunks from (the README's sample folder).
const CORPUS: [&str; 4] = [
    include_str!("../../../assets/sample/backup-policy.md"),
    include_str!("../../../assets/sample/onboarding.md"),
    include_str!("../../../assets/sample/release-notes-4.2.txt"),
    include_str!("../../../assets/sample/field-notes-kestrels.md"),
];
pub(super) const QUESTION: &str =
    "How long are nightly backups kept, and when is the next restore drill?";

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
    /// Interleaved repeats per mode; medians are reported.
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeats: usize,
    #[command(flatten)]
    pub(super) ape: ApeArgs,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Default, Serialize)]
pub(super) struct ModeFigures {
    pub mode: &'static str,
    pub ttft_ms: f64,
    /// Reading + verifying state files, restoring prefix and chunk states.
    pub load_ms: f64,
    /// Of that, reading and verifying the state files.
    pub read_ms: f64,
    /// Decoding chunk tokens (sequential) and the question.
    pub prefill_ms: f64,
    pub decode_tokens_per_s: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    model: String,
    architecture: String,
    machine: String,
    threads: usize,
    chunks: usize,
    chunk_tokens: usize,
    prefix_tokens: usize,
    question_tokens: usize,
    repeats: usize,
    temperature: f32,
    scale: f32,
    kv_type: String,
    state_bytes_per_token: f64,
    state_mb_total: f64,
    chunk_encode_tokens_per_s: f64,
    modes: Vec<ModeFigures>,
    ttft_ratio_sequential_over_ape: f64,
    ttft_ratio_sequential_over_parallel: f64,
    decode_ratio_ape_over_parallel: f64,
}

pub fn run(model: &ModelArgs, args: &TtftArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.chunks > 0 && args.chunk_tokens > 0,
        "--chunks and --chunk-tokens must be positive"
    );
    let ape = args.ape.params()?;
    let need = args.chunks * args.chunk_tokens + args.decode_tokens + 512;
    let engine = model.load(need.next_multiple_of(256) as u32)?;
    let layout = PromptLayout::new(&engine, DEFAULT_SYSTEM_PROMPT)?;
    let question = layout.question(&engine, QUESTION);
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;

    eprintln!(
        "{}",
        dim(&format!(
            "encoding {} chunks of {} tokens…",
            args.chunks, args.chunk_tokens
        ))
    );
    let BenchStates {
        chunks,
        files,
        bytes: state_bytes,
        encode_s,
        _dir,
    } = BenchStates::encode(&mut s, &prefix, args.chunks, args.chunk_tokens)?;

    let modes = [Mode::Sequential, Mode::Parallel, Mode::Ape(ape)];
    let work = Workload {
        prefix: &prefix,
        chunks: &chunks,
        files: &files,
        question: &question,
        decode: args.decode_tokens,
    };
    let figures = time_modes(&mut s, &modes, &work, args.repeats, &mut |r, n| {
        eprintln!("{}", dim(&format!("repeat {r}/{n}…")));
    })?;
    let (seq, par, apef) = (&figures[0], &figures[1], &figures[2]);
    let report = Report {
        model: engine.path().display().to_string(),
        architecture: engine.info().architecture.clone(),
        machine: machine(),
        threads: engine.options().threads,
        chunks: args.chunks,
        chunk_tokens: args.chunk_tokens,
        prefix_tokens: prefix.tokens().len(),
        question_tokens: question.len(),
        repeats: args.repeats.max(1),
        temperature: ape.temperature,
        scale: ape.scale,
        kv_type: engine.options().kv_type.to_string(),
        state_bytes_per_token: state_bytes as f64 / (args.chunks * args.chunk_tokens) as f64,
        state_mb_total: state_bytes as f64 / 1e6,
        chunk_encode_tokens_per_s: (args.chunks * args.chunk_tokens) as f64 / encode_s,
        ttft_ratio_sequential_over_ape: seq.ttft_ms / apef.ttft_ms,
        ttft_ratio_sequential_over_parallel: seq.ttft_ms / par.ttft_ms,
        decode_ratio_ape_over_parallel: apef.decode_tokens_per_s / par.decode_tokens_per_s,
        modes: figures,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// What every mode is timed on: the same prefix, chunks and question.
pub(super) struct Workload<'a> {
    pub prefix: &'a PrefixState,
    /// The chunks in memory (sequential prefill decodes their tokens)...
    pub chunks: &'a [ChunkState],
    /// ...and as state files (the cached modes read them).
    pub files: &'a [PathBuf],
    pub question: &'a [TokenId],
    /// Greedy tokens decoded after the first, for the decode speed.
    pub decode: usize,
}

/// Times `modes` on `work`, `repeats` times interleaved (so drift hits every
/// mode alike), and returns their medians in order. `progress` gets the
/// repeat number and the total.
pub(super) fn time_modes(
    s: &mut Session<'_>,
    modes: &[Mode],
    work: &Workload<'_>,
    repeats: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<Vec<ModeFigures>> {
    let repeats = repeats.max(1);
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); modes.len()];
    for r in 0..repeats {
        progress(r + 1, repeats);
        for (i, &mode) in modes.iter().enumerate() {
            samples[i].push(measure(s, mode, work)?);
        }
    }
    Ok(modes
        .iter()
        .zip(&samples)
        .map(|(m, s)| summarize(m.name(), s))
        .collect())
}

#[derive(Clone, Copy)]
struct Sample {
    ttft: Duration,
    read: Duration,
    load: Duration,
    prefill: Duration,
    decode_tps: f64,
}

/// One timed answer start: (for cached modes) read the state files, prefill,
/// pick the first token; then `decode` greedy steps for the decode speed.
fn measure(s: &mut Session<'_>, mode: Mode, work: &Workload<'_>) -> anyhow::Result<Sample> {
    let Workload {
        prefix,
        chunks: in_memory,
        files,
        question,
        decode,
    } = *work;
    let t0 = Instant::now();
    let loaded;
    let chunks: Vec<&ChunkState> = if mode == Mode::Sequential {
        in_memory.iter().collect()
    } else {
        loaded = files
            .iter()
            .map(|f| ChunkState::load(f, prefix))
            .collect::<Result<Vec<_>, _>>()?;
        loaded.iter().collect()
    };
    let read = t0.elapsed();
    let ranking: Vec<usize> = (0..chunks.len()).collect();
    let ctx = Context {
        prefix,
        chunks: &chunks,
        ranking: &ranking,
        question,
    };
    let timings = prefill(s, mode, &ctx)?;
    let mut tok = s.greedy()?;
    let ttft = t0.elapsed();
    let t1 = Instant::now();
    for _ in 0..decode {
        s.eval(&[tok])?;
        tok = s.greedy()?;
    }
    let dt = t1.elapsed().as_secs_f64();
    Ok(Sample {
        ttft,
        read,
        load: read + timings.load,
        prefill: timings.prefill,
        decode_tps: if dt > 0.0 { decode as f64 / dt } else { 0.0 },
    })
}

fn summarize(mode: &'static str, s: &[Sample]) -> ModeFigures {
    let med = |f: &dyn Fn(&Sample) -> f64| {
        let mut v: Vec<f64> = s.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    ModeFigures {
        mode,
        ttft_ms: med(&|x| x.ttft.as_secs_f64() * 1e3),
        load_ms: med(&|x| x.load.as_secs_f64() * 1e3),
        read_ms: med(&|x| x.read.as_secs_f64() * 1e3),
        prefill_ms: med(&|x| x.prefill.as_secs_f64() * 1e3),
        decode_tokens_per_s: med(&|x| x.decode_tps),
    }
}

/// `n` distinct windows of `len` tokens over the corpus, wrapping around.
fn bench_chunks(engine: &Engine, n: usize, len: usize) -> Vec<Vec<TokenId>> {
    let corpus: Vec<TokenId> = CORPUS.iter().flat_map(|t| engine.tokenize(t)).collect();
    (0..n)
        .map(|i| {
            let start = (i * 131 + i * len) % corpus.len();
            corpus
                .iter()
                .cycle()
                .skip(start)
                .take(len)
                .copied()
                .collect()
        })
        .collect()
}

/// Benchmark chunks encoded once and saved as state files.
pub(super) struct BenchStates {
    pub chunks: Vec<ChunkState>,
    pub files: Vec<PathBuf>,
    /// Total size of the files.
    pub bytes: u64,
    /// Seconds the encoding took.
    pub encode_s: f64,
    /// Keeps the files until the benchmark ends.
    pub _dir: StateDir,
}

impl BenchStates {
    /// Encodes `n` chunks of `len` tokens after `prefix` and saves them.
    pub fn encode(
        s: &mut Session<'_>,
        prefix: &PrefixState,
        n: usize,
        len: usize,
    ) -> anyhow::Result<Self> {
        let t = Instant::now();
        let chunks = bench_chunks(s.engine(), n, len)
            .iter()
            .map(|c| s.encode_chunk(prefix, c))
            .collect::<Result<Vec<_>, _>>()?;
        let encode_s = t.elapsed().as_secs_f64();
        let dir = StateDir::new()?;
        let files = dir.save(&chunks)?;
        let bytes = files
            .iter()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum();
        Ok(Self {
            chunks,
            files,
            bytes,
            encode_s,
            _dir: dir,
        })
    }
}

/// A temporary directory of state files, removed on drop.
pub(super) struct StateDir(pub PathBuf);

impl StateDir {
    pub fn new() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("ape-chat-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }

    pub fn save(&self, chunks: &[ChunkState]) -> anyhow::Result<Vec<PathBuf>> {
        chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = self.0.join(format!("{i}.kvstate"));
                c.save(&p)?;
                Ok(p)
            })
            .collect()
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} cores")
}

fn print_report(r: &Report) {
    println!("{}", bold("ape-chat bench ttft"));
    println!("  model    {} ({})", r.model, r.architecture);
    println!("  machine  {} · {} threads", r.machine, r.threads);
    println!(
        "  context  prefix {} + {} chunks × {} tokens + question {} · K cache {} · T={} S={} · median of {}",
        r.prefix_tokens, r.chunks, r.chunk_tokens, r.question_tokens, r.kv_type, r.temperature, r.scale, r.repeats
    );
    println!();
    println!(
        "  {:<11} {:>10} {:>10} {:>10} {:>11} {:>12}",
        "mode", "TTFT ms", "load ms", "(read ms)", "prefill ms", "decode tok/s"
    );
    for m in &r.modes {
        println!(
            "  {:<11} {:>10.1} {:>10.1} {:>10.1} {:>11.1} {:>12.1}",
            m.mode, m.ttft_ms, m.load_ms, m.read_ms, m.prefill_ms, m.decode_tokens_per_s
        );
    }
    println!();
    println!(
        "  TTFT  sequential / APE      {:>7.1}×",
        r.ttft_ratio_sequential_over_ape
    );
    println!(
        "  TTFT  sequential / parallel {:>7.1}×",
        r.ttft_ratio_sequential_over_parallel
    );
    println!(
        "  decode APE / parallel       {:>7.3}",
        r.decode_ratio_ape_over_parallel
    );
    println!(
        "  state {:.0} bytes/token ({:.1} MB for all chunks) · chunk encoding {:.0} tokens/s",
        r.state_bytes_per_token, r.state_mb_total, r.chunk_encode_tokens_per_s
    );
}
