//! Every speed figure docs/results.md reports, measured side by side in one run
//! on one model (`ape-chat bench suite`): time to first token and decode
//! speed per mode for growing numbers of chunks, chunk encoding, state
//! loading, state size per K-cache type, and folder indexing.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::{
    machine, time_modes, BenchError, BenchStates, ModeFigures, ScratchDir, Workload, QUESTION,
};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{ChunkState, Engine, Mode, PromptLayout};
use crate::index::dense::EmbedOptions;
use crate::ingest::Filters;
use crate::kvstore::KvStore;
use crate::workspace::{FolderOptions, Workspace};

/// What to measure.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// Numbers of retrieved chunks.
    pub sizes: Vec<usize>,
    pub chunk_tokens: usize,
    pub decode_tokens: usize,
    pub repeats: usize,
    /// Sequential first.
    pub modes: Vec<Mode>,
    /// Folder to time a cold index of (scratch index and cache).
    pub index_folder: Option<PathBuf>,
    pub embed: EmbedOptions,
    /// Chunk size for the indexing figure.
    pub index_chunk_tokens: usize,
}

/// One number of chunks, all modes.
#[derive(Clone, Debug, Serialize)]
pub struct SizePoint {
    pub chunks: usize,
    pub modes: Vec<ModeFigures>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StateFigures {
    /// Reading state files and verifying their checksums, from the disk
    /// (page cache dropped) and from the page cache.
    pub file_read_cold_mb_per_s: f64,
    pub file_read_warm_mb_per_s: f64,
    /// Reading, verifying and restoring them into the context (the first
    /// cached mode's whole load at the largest size), cold.
    pub load_and_restore_mb_per_s: f64,
    /// llama.cpp's state bytes per token (f16 K and V), as used in memory.
    pub bytes_per_token_f16: f64,
    /// File bytes per token at rest (compact: K q8_0, V q6_K; header,
    /// tokens and cell positions included).
    pub bytes_per_token_at_rest: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct IndexFigures {
    pub folder: PathBuf,
    pub files: usize,
    pub chunks: usize,
    pub tokens: usize,
    pub seconds: f64,
    pub files_per_s: f64,
    pub chunks_per_s: f64,
    /// Milliseconds per stage.
    pub stages_ms: crate::index::StageTimes,
}

#[derive(Clone, Debug, Serialize)]
pub struct SuiteReport {
    pub model: String,
    pub architecture: String,
    pub machine: String,
    pub threads: usize,
    pub chunk_tokens: usize,
    pub repeats: usize,
    pub sizes: Vec<SizePoint>,
    pub chunk_encode_tokens_per_s: f64,
    pub states: StateFigures,
    pub index: Option<IndexFigures>,
    /// Why indexing was not timed, if it was not.
    pub index_skipped: Option<String>,
}

/// Runs the suite; `progress` hears what runs.
pub fn suite(
    engine: &Engine,
    o: &SuiteOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<SuiteReport, BenchError> {
    let mut sizes = o.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let largest = *sizes
        .last()
        .filter(|&&n| n > 0)
        .ok_or_else(|| BenchError::Setup("--chunks needs at least one positive number".into()))?;
    if o.chunk_tokens == 0 {
        return Err(BenchError::Setup("--chunk-tokens must be positive".into()));
    }
    let layout = PromptLayout::new(engine, DEFAULT_SYSTEM_PROMPT)?;
    let question = layout.question(engine, QUESTION);
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    progress(&format!(
        "encoding {largest} chunks of {} tokens…",
        o.chunk_tokens
    ));
    let pcw = o.modes.contains(&Mode::Pcw);
    let states = BenchStates::encode(&mut s, &prefix, largest, o.chunk_tokens, pcw)?;
    let mut points = Vec::new();
    for &n in &sizes {
        let work = Workload {
            prefix: &prefix,
            states: &states,
            chunks: n,
            question: &question,
            decode: o.decode_tokens,
        };
        let modes = time_modes(&mut s, None, &o.modes, &work, o.repeats, &mut |r, total| {
            progress(&format!("{n} chunks, repeat {r}/{total}…"))
        })?;
        points.push(SizePoint { chunks: n, modes });
    }

    progress("state files and K-cache types…");
    let state = state_figures(engine, &layout, &states, &prefix, &o.modes, &points)?;
    let (index, index_skipped) = match &o.index_folder {
        Some(folder) => {
            progress(&format!("indexing {}…", folder.display()));
            match index_figures(engine, o, folder) {
                Ok(f) => (Some(f), None),
                Err(e) => (None, Some(e.to_string())),
            }
        }
        None => (None, Some("no folder to index".into())),
    };
    Ok(SuiteReport {
        model: engine.path().display().to_string(),
        architecture: engine.info().architecture.clone(),
        machine: machine(engine),
        threads: engine.options().threads,
        chunk_tokens: o.chunk_tokens,
        repeats: o.repeats.max(1),
        sizes: points,
        chunk_encode_tokens_per_s: (largest * o.chunk_tokens) as f64 / states.encode_s,
        states: state,
        index,
        index_skipped,
    })
}

/// File read speed (cold and warm), full load speed, and bytes per token
/// in memory (f16) and at rest (compact).
fn state_figures(
    engine: &Engine,
    layout: &PromptLayout,
    states: &BenchStates,
    prefix: &crate::engine::PrefixState,
    modes: &[Mode],
    points: &[SizePoint],
) -> Result<StateFigures, BenchError> {
    let mb = states.bytes as f64 / 1e6;
    let read = |cold: bool| -> Result<f64, BenchError> {
        let rounds = 3;
        let mut secs = 0.0;
        for _ in 0..rounds {
            if cold {
                super::drop_from_page_cache(&states.files);
            }
            let t = Instant::now();
            for f in &states.files {
                ChunkState::load(f, prefix)?;
            }
            secs += t.elapsed().as_secs_f64();
        }
        Ok(mb / (secs / rounds as f64))
    };
    let (cold, warm) = (read(true)?, read(false)?);
    let largest = points.last();
    let cached = modes.iter().position(|m| m.chunks_alone() == Some(false));
    let load_ms = largest
        .zip(cached)
        .and_then(|(p, i)| p.modes.get(i))
        .map_or(0.0, |m| m.load_ms);
    let largest_mb = largest.map_or(0.0, |p| {
        mb * p.chunks as f64 / states.files.len().max(1) as f64
    });
    let (f16, at_rest) = {
        let mut s = engine.session()?;
        let prefix = s.encode_prefix(&layout.prefix)?;
        let raw = s.encode_chunk(&prefix, &super::bench_chunks(engine, 1, 256)[0])?;
        let at_rest = BenchStates::encode(&mut s, &prefix, 1, 256, false)?.bytes;
        (raw.state_bytes() as f64 / 256.0, at_rest as f64 / 256.0)
    };
    Ok(StateFigures {
        file_read_cold_mb_per_s: cold,
        file_read_warm_mb_per_s: warm,
        load_and_restore_mb_per_s: largest_mb / (load_ms / 1e3).max(1e-9),
        bytes_per_token_f16: f16,
        bytes_per_token_at_rest: at_rest,
    })
}

/// A cold index of `folder` (text, BM25, vectors, KV states) into scratch
/// directories, so the user's index and cache are left alone.
fn index_figures(
    engine: &Engine,
    o: &SuiteOptions,
    folder: &Path,
) -> Result<IndexFigures, BenchError> {
    let scratch = ScratchDir::new("index")?;
    let folder = folder.canonicalize()?;
    let options = FolderOptions {
        chunk_tokens: o.index_chunk_tokens,
        system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
        prefix_newlines: 0,
        embed: o.embed.clone(),
        filters: Filters::default(),
        budget_bytes: u64::MAX,
        // The sample folder is text: no reader to isolate.
        extraction: Default::default(),
    };
    let fail = |e: String| BenchError::Setup(e);
    let mut ws = Workspace::open_in(
        engine,
        &folder,
        Some(scratch.0.join("index")),
        &options,
        KvStore::new(scratch.0.join("kv")),
    )
    .map_err(|e| fail(e.to_string()))?;
    let t = Instant::now();
    let r = crate::service::index(&mut ws, true, &mut |_| {}).map_err(|e| fail(e.to_string()))?;
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
