//! Speed, measured side by side in one run: every mode on the same model,
//! chunks and question, repeats interleaved and the mode order rotated (so
//! drift and warm-up hit every mode alike), medians and minima reported.
//!
//! State reads are measured **cold** (the files dropped from the page cache
//! first, as after a reboot or for a rarely asked folder) and **warm**
//! (read again at once); the reported time to first token includes them.
//!
//! - [`ttft`]: time to first token and decode speed per mode;
//! - [`suite`]: every speed figure docs/results.md reports, and its chart;
//! - [`retrieval`]: recall of hybrid, BM25 and dense retrieval on SQuAD;
//! - [`first_answer`]: a new folder's first answer while indexing runs;
//! - [`compete`]: a competing process, for speed under load;
//! - [`frontier`]: likelihood (from `eval`) against speed, the presets' basis;
//! - [`chart`]: the SVG charts.

pub mod chart;
pub mod compete;
pub mod context;
pub mod first_answer;
pub mod follow_ups;
pub mod frontier;
pub mod index;
pub mod retrieval;
pub mod store;
pub mod suite;
pub mod ttft;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::engine::generate::{prefill, Context};
use crate::engine::{
    ChunkState, Engine, EngineError, LoadTimes, Mode, PrefixState, Session, TokenId,
};

/// Real prose to cut benchmark chunks from (the README's sample folder).
const CORPUS: [&str; 4] = [
    include_str!("../../assets/sample/backup-policy.md"),
    include_str!("../../assets/sample/onboarding.md"),
    include_str!("../../assets/sample/release-notes-4.2.txt"),
    include_str!("../../assets/sample/field-notes-kestrels.md"),
];
/// The benchmark question (its answer is in the corpus).
pub const QUESTION: &str = "How long are nightly backups kept, and when is the next restore drill?";

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    State(#[from] crate::engine::StateError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Setup(String),
}

/// Medians (and the fastest) of one mode's repeats.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ModeFigures {
    /// The mode and its settings, e.g. `ape (T=0.9, S=0.9)`.
    pub mode: String,
    /// Time to first token with state files read cold (median, fastest).
    pub ttft_ms: f64,
    pub ttft_min_ms: f64,
    /// The same with the state files already in the page cache.
    pub ttft_warm_ms: f64,
    /// Reading + verifying state files and restoring them, cold and warm.
    pub load_ms: f64,
    pub load_warm_ms: f64,
    /// Of the cold load, reading and verifying the files.
    pub read_ms: f64,
    /// Where that went, cold and with the files in the page cache: file
    /// reads, checksums, widening compact states (the rest of the load is
    /// placing the states into the KV cache).
    #[serde(default, skip_serializing_if = "ReadSplit::is_empty")]
    pub read_split: ReadSplit,
    #[serde(default, skip_serializing_if = "ReadSplit::is_empty")]
    pub read_split_warm: ReadSplit,
    /// Decoding chunk tokens (sequential, re-read) and the question.
    pub prefill_ms: f64,
    /// Of `prefill_ms`, the re-read, finished on the device (what
    /// `balanced` weighs on a GPU: `answer::WHOLE_REREAD_BUDGET`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rereading_ms: f64,
    pub decode_tokens_per_s: f64,
    /// The fair sequential baseline's time to first token (the faster of
    /// sequential prefill with flash attention on and off) over this
    /// mode's (cold).
    pub speedup: f64,
    /// Time to first token with the states already in each memory tier of
    /// the engine (nothing read from disk), fastest tier first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<TierFigure>,
}

/// [`LoadTimes`] in milliseconds (medians of repeats, each part apart).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReadSplit {
    pub file_ms: f64,
    pub verify_ms: f64,
    pub decode_ms: f64,
}

impl ReadSplit {
    fn is_empty(&self) -> bool {
        self.file_ms == 0.0 && self.verify_ms == 0.0 && self.decode_ms == 0.0
    }
}

/// A mode's answer start from one memory tier.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TierFigure {
    pub tier: String,
    pub ttft_ms: f64,
    /// Placing the states into the KV cache.
    pub load_ms: f64,
}

/// The label of sequential prefill with flash attention on.
pub const SEQUENTIAL_FLASH: &str = "sequential (flash attention)";

/// What every mode is timed on: the same prefix, chunks and question.
pub struct Workload<'a> {
    pub prefix: &'a PrefixState,
    pub states: &'a BenchStates,
    /// How many of the states' chunks to use.
    pub chunks: usize,
    pub question: &'a [TokenId],
    /// Greedy tokens decoded after the first, for the decode speed.
    pub decode: usize,
}

/// Benchmark chunks encoded once (after the prefix, and alone for PCW) and
/// saved as state files in a scratch directory on disk (not a RAM-backed
/// temp dir: cold reads must come from the disk).
pub struct BenchStates {
    pub chunks: Vec<ChunkState>,
    pub files: Vec<PathBuf>,
    pub alone_files: Vec<PathBuf>,
    /// Total size of the files made after the prefix.
    pub bytes: u64,
    /// Seconds encoding those took.
    pub encode_s: f64,
    pub dir: ScratchDir,
}

impl BenchStates {
    /// Encodes `n` chunks of `len` tokens after `prefix` (and alone, if
    /// `alone`) and saves them.
    pub fn encode(
        s: &mut Session<'_>,
        prefix: &PrefixState,
        n: usize,
        len: usize,
        alone: bool,
    ) -> Result<Self, BenchError> {
        let tokens = bench_chunks(s.engine(), n, len);
        let t = Instant::now();
        let chunks = tokens
            .iter()
            .map(|c| s.encode_chunk(prefix, c))
            .collect::<Result<Vec<_>, _>>()?;
        let encode_s = t.elapsed().as_secs_f64();
        let dir = ScratchDir::new("states")?;
        let (chunks, files) = dir.save(&chunks, "p")?;
        let alone_files = if alone {
            let by_itself = tokens
                .iter()
                .map(|c| s.encode_chunk(&prefix.alone(), c))
                .collect::<Result<Vec<_>, _>>()?;
            let (by_itself, files) = dir.save(&by_itself, "a")?;
            keep(s.engine(), by_itself, &files);
            files
        } else {
            Vec::new()
        };
        keep(s.engine(), chunks.clone(), &files);
        let bytes = files
            .iter()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum();
        Ok(Self {
            chunks,
            files,
            alone_files,
            bytes,
            encode_s,
            dir,
        })
    }
}

/// Holds the states saved as `files` in the engine's memory tiers, under
/// [`tier_key`]s, for the memory-tier timings.
fn keep(engine: &Engine, states: Vec<ChunkState>, files: &[PathBuf]) {
    for (mut state, f) in states.into_iter().zip(files) {
        engine.keep_state(&tier_key(f), &mut state);
    }
}

/// The memory-tier key of a benchmark state file.
fn tier_key(file: &std::path::Path) -> String {
    format!("bench:{}", file.display())
}

/// `n` distinct windows of `len` tokens over the corpus, wrapping around.
pub(crate) fn bench_chunks(engine: &Engine, n: usize, len: usize) -> Vec<Vec<TokenId>> {
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

/// A scratch directory under the cache (on disk), removed on drop.
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub fn new(what: &str) -> std::io::Result<Self> {
        let dir = crate::paths::cache_dir()
            .join("bench")
            .join(format!("{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }

    /// Saves `chunks` as the cache stores them (compact); returns the
    /// states those files decode to, which answers use, and the files.
    fn save(
        &self,
        chunks: &[ChunkState],
        tag: &str,
    ) -> Result<(Vec<ChunkState>, Vec<PathBuf>), BenchError> {
        chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = self.0.join(format!("{tag}{i}.kvstate"));
                let (state, packed) = c.pack()?;
                state.save_packed(&p, &packed)?;
                Ok((state, p))
            })
            .collect()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Asks the kernel to drop `files` from the page cache, so the next read
/// comes from the disk (the files were written and synced, so their pages
/// are clean and can go).
#[allow(unsafe_code)]
pub fn drop_from_page_cache(files: &[PathBuf]) {
    for f in files {
        if let Ok(file) = std::fs::File::open(f) {
            use std::os::fd::AsRawFd;
            // SAFETY: a valid open descriptor; advice only, no memory touched.
            unsafe {
                libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

#[derive(Clone)]
struct Sample {
    ttft: Duration,
    ttft_warm: Duration,
    read: Duration,
    split: LoadTimes,
    split_warm: LoadTimes,
    load: Duration,
    load_warm: Duration,
    prefill: Duration,
    rereading: Duration,
    decode_tps: f64,
    /// Per memory tier: time to first token and placement.
    tiers: Vec<(Duration, Duration)>,
}

/// Times `modes` on `work`, `repeats` times (at least one), interleaved and
/// with the order rotated each repeat; returns their figures in the order
/// given, then, with a `flash` session, sequential prefill with flash
/// attention on ([`SEQUENTIAL_FLASH`]). Speedups are over the faster of
/// the sequential rows. `progress` gets the repeat number and the total.
pub fn time_modes(
    s: &mut Session<'_>,
    mut flash: Option<&mut Session<'_>>,
    modes: &[Mode],
    work: &Workload<'_>,
    repeats: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<ModeFigures>, BenchError> {
    let repeats = repeats.max(1);
    let rows = modes.len() + usize::from(flash.is_some());
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); rows];
    for r in 0..repeats {
        progress(r + 1, repeats);
        for k in 0..rows {
            let i = (r + k) % rows;
            let sample = match (modes.get(i), flash.as_deref_mut()) {
                (Some(&m), _) => measure(s, m, work)?,
                (None, Some(f)) => measure_flash(f, work)?,
                (None, None) => continue,
            };
            samples[i].push(sample);
        }
    }
    let tiers = s.engine().tier_names();
    let mut figures: Vec<ModeFigures> = modes
        .iter()
        .map(|m| m.to_string())
        .chain(flash.map(|_| SEQUENTIAL_FLASH.to_string()))
        .zip(&samples)
        .map(|(m, s)| summarize(m, s, &tiers))
        .collect();
    let sequential =
        |f: &&ModeFigures| f.mode == Mode::Sequential.to_string() || f.mode == SEQUENTIAL_FLASH;
    let base = figures
        .iter()
        .filter(sequential)
        .map(|f| f.ttft_ms)
        .fold(f64::INFINITY, f64::min);
    if base.is_finite() {
        figures
            .iter_mut()
            .for_each(|f| f.speedup = ratio(base, f.ttft_ms));
    }
    Ok(figures)
}

/// Sequential prefill the way a llama.cpp user runs it: prefix, chunks
/// (one decode call each, as the other sequential row) and question
/// decoded from scratch with flash attention on, then decode speed.
fn measure_flash(s: &mut Session<'_>, work: &Workload<'_>) -> Result<Sample, BenchError> {
    let t0 = Instant::now();
    s.clear();
    s.feed(work.prefix.tokens())?;
    for c in &work.states.chunks[..work.chunks] {
        s.feed(c.tokens())?;
    }
    s.eval(work.question)?;
    let mut tok = s.greedy()?;
    let ttft = t0.elapsed();
    let t2 = Instant::now();
    for _ in 0..work.decode {
        s.eval(&[tok])?;
        tok = s.greedy()?;
    }
    let dt = t2.elapsed().as_secs_f64();
    Ok(Sample {
        ttft,
        ttft_warm: ttft,
        read: Duration::ZERO,
        split: LoadTimes::default(),
        split_warm: LoadTimes::default(),
        load: Duration::ZERO,
        load_warm: Duration::ZERO,
        prefill: ttft,
        rereading: Duration::ZERO,
        decode_tps: if dt > 0.0 {
            work.decode as f64 / dt
        } else {
            0.0
        },
        tiers: Vec::new(),
    })
}

/// One mode: the answer's start with state files read cold (then decode
/// speed), and again with them warm.
fn measure(s: &mut Session<'_>, mode: Mode, work: &Workload<'_>) -> Result<Sample, BenchError> {
    let files: &[PathBuf] = match mode.chunks_alone() {
        None => &[],
        Some(true) => &work.states.alone_files[..work.chunks],
        Some(false) => &work.states.files[..work.chunks],
    };
    drop_from_page_cache(files);
    let cold = start(s, mode, work, files)?;
    let t1 = Instant::now();
    let mut tok = s.greedy()?;
    for _ in 0..work.decode {
        s.eval(&[tok])?;
        tok = s.greedy()?;
    }
    let dt = t1.elapsed().as_secs_f64();
    let warm = if files.is_empty() {
        cold
    } else {
        start(s, mode, work, files)?
    };
    let mut tiers = Vec::new();
    if !files.is_empty() {
        for tier in 0..s.engine().tier_names().len() {
            let t = start_in_tier(s, mode, work, files, tier)?;
            tiers.push((t.ttft, t.load));
        }
    }
    Ok(Sample {
        tiers,
        ttft: cold.ttft,
        ttft_warm: warm.ttft,
        read: cold.read,
        split: cold.split,
        split_warm: warm.split,
        load: cold.load,
        load_warm: warm.load,
        prefill: cold.prefill,
        rereading: cold.rereading,
        decode_tps: if dt > 0.0 {
            work.decode as f64 / dt
        } else {
            0.0
        },
    })
}

#[derive(Clone, Copy)]
struct Start {
    ttft: Duration,
    read: Duration,
    split: LoadTimes,
    load: Duration,
    prefill: Duration,
    rereading: Duration,
}

/// Reads the state files (none for sequential), prefills, picks the first
/// token.
fn start(
    s: &mut Session<'_>,
    mode: Mode,
    work: &Workload<'_>,
    files: &[PathBuf],
) -> Result<Start, BenchError> {
    let after = match mode.chunks_alone() {
        Some(true) => Some(work.prefix.alone()),
        Some(false) => Some(work.prefix.clone()),
        None => None,
    };
    let t0 = Instant::now();
    let mut split = LoadTimes::default();
    let loaded = match &after {
        Some(after) => files
            .iter()
            .map(|f| ChunkState::load_timed(f, after, &mut split))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let read = if after.is_some() {
        t0.elapsed()
    } else {
        Duration::ZERO
    };
    let chunks: Vec<&ChunkState> = if after.is_some() {
        loaded.iter().collect()
    } else {
        work.states.chunks[..work.chunks].iter().collect()
    };
    let ranking: Vec<usize> = (0..chunks.len()).collect();
    let ctx = Context {
        prefix: work.prefix,
        chunks: &chunks,
        ranking: &ranking,
        question: work.question,
    };
    let timings = prefill(s, mode, &ctx)?;
    s.greedy()?;
    Ok(Start {
        ttft: t0.elapsed(),
        read,
        split,
        load: read + timings.load,
        prefill: timings.prefill,
        rereading: timings.rereading,
    })
}

/// [`start`] with the states taken from memory tier `tier` (kept there by
/// [`BenchStates::encode`]): nothing read from disk.
fn start_in_tier(
    s: &mut Session<'_>,
    mode: Mode,
    work: &Workload<'_>,
    files: &[PathBuf],
    tier: usize,
) -> Result<Start, BenchError> {
    let after = match mode.chunks_alone() {
        Some(true) => work.prefix.alone(),
        _ => work.prefix.clone(),
    };
    let t0 = Instant::now();
    let held = files
        .iter()
        .zip(&work.states.chunks)
        .map(|(f, c)| {
            s.engine()
                .resident_state_at(&tier_key(f), c.tokens(), &after, tier)
                .ok_or_else(|| {
                    BenchError::Setup(format!("{} is not in memory tier {tier}", f.display()))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let chunks: Vec<&ChunkState> = held.iter().collect();
    let ranking: Vec<usize> = (0..chunks.len()).collect();
    let ctx = Context {
        prefix: work.prefix,
        chunks: &chunks,
        ranking: &ranking,
        question: work.question,
    };
    let timings = prefill(s, mode, &ctx)?;
    s.greedy()?;
    Ok(Start {
        ttft: t0.elapsed(),
        read: Duration::ZERO,
        split: LoadTimes::default(),
        load: timings.load,
        prefill: timings.prefill,
        rereading: timings.rereading,
    })
}

fn summarize(mode: String, s: &[Sample], tiers: &[&str]) -> ModeFigures {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let med = |f: &dyn Fn(&Sample) -> f64| {
        let mut v: Vec<f64> = s.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let split = |f: &dyn Fn(&Sample) -> LoadTimes| ReadSplit {
        file_ms: med(&|x| ms(f(x).read)),
        verify_ms: med(&|x| ms(f(x).verify)),
        decode_ms: med(&|x| ms(f(x).decode)),
    };
    ModeFigures {
        mode,
        ttft_ms: med(&|x| ms(x.ttft)),
        ttft_min_ms: s.iter().map(|x| ms(x.ttft)).fold(f64::INFINITY, f64::min),
        ttft_warm_ms: med(&|x| ms(x.ttft_warm)),
        load_ms: med(&|x| ms(x.load)),
        load_warm_ms: med(&|x| ms(x.load_warm)),
        read_ms: med(&|x| ms(x.read)),
        read_split: split(&|x| x.split),
        read_split_warm: split(&|x| x.split_warm),
        prefill_ms: med(&|x| ms(x.prefill)),
        rereading_ms: med(&|x| ms(x.rereading)),
        decode_tokens_per_s: med(&|x| x.decode_tps),
        speedup: 0.0,
        memory: tiers
            .iter()
            .enumerate()
            .filter(|(i, _)| s.iter().all(|x| x.tiers.len() > *i))
            .map(|(i, t)| TierFigure {
                tier: t.to_string(),
                ttft_ms: med(&|x| ms(x.tiers[i].0)),
                load_ms: med(&|x| ms(x.tiers[i].1)),
            })
            .collect(),
    }
}

/// The machine, for reports: the GPU where `engine` runs its layers on
/// one, then the CPU model and core count.
pub fn machine(engine: &Engine) -> String {
    let cpu = cpu();
    let gpu = engine
        .offloads()
        .then(crate::engine::memory::gpu_description);
    match gpu.flatten() {
        Some(gpu) => format!("{gpu} · {cpu}"),
        None => cpu,
    }
}

/// The CPU model and core count.
fn cpu() -> String {
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

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// `a / b`, 0 when `b` is 0 (a mode missing from a run).
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}
