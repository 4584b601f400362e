//! What reading more costs (`ape-chat bench context`): time to first token
//! and decode speed of the cached modes over 8K to 128K cached tokens, all
//! chunks on the same positions (past the model's window), beside
//! sequential prefill with flash attention where it fits the window.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{machine, time_modes, BenchError, BenchStates, ModeFigures, Workload, QUESTION};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{Engine, Mode, PromptLayout};

/// What to time.
#[derive(Clone, Debug)]
pub struct ContextOptions {
    /// Cached tokens per point (rounded down to whole chunks).
    pub sizes: Vec<usize>,
    pub chunk_tokens: usize,
    pub decode_tokens: usize,
    pub repeats: usize,
    /// The cached modes to time at every size.
    pub modes: Vec<Mode>,
    /// Sequential prefill (flash attention on) is timed up to this many
    /// tokens, and never past the window (its prefill is quadratic: 32K
    /// tokens take minutes on a laptop CPU).
    pub sequential_max: usize,
}

/// One context size, every mode that can read it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextPoint {
    /// Chunk tokens read.
    pub tokens: usize,
    pub chunks: usize,
    /// KV cells the answer's context held.
    pub cells: usize,
    pub modes: Vec<ModeFigures>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextReport {
    pub model: String,
    pub architecture: String,
    pub machine: String,
    pub threads: usize,
    /// The positions the model was trained on.
    pub window: usize,
    pub chunk_tokens: usize,
    pub repeats: usize,
    pub sequential_max: usize,
    pub chunk_encode_tokens_per_s: f64,
    /// State file bytes per token at rest (compact).
    pub state_bytes_per_token: f64,
    /// KV cache bytes per cell while answering.
    pub kv_bytes_per_cell: u64,
    pub points: Vec<ContextPoint>,
}

/// A report [`context`] wrote (`bench-context.json`), to draw and print
/// again: a GPU run's figures are redrawn where the GPU is not.
pub fn read_report(path: &Path) -> Result<ContextReport, BenchError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BenchError::Setup(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        BenchError::Setup(format!(
            "{}: not a bench context report: {e}",
            path.display()
        ))
    })
}

/// Times `o.modes` (and sequential where it fits) at every size in
/// `o.sizes`, on chunks cut from real prose; `progress` hears what runs and
/// `checkpoint` gets the report after every size, so a run cut short (a
/// time limit on a lent GPU, a killed process) keeps the sizes it finished.
pub fn context(
    engine: &Engine,
    o: &ContextOptions,
    progress: &mut dyn FnMut(&str),
    checkpoint: &mut dyn FnMut(&ContextReport) -> Result<(), BenchError>,
) -> Result<ContextReport, BenchError> {
    let mut sizes: Vec<usize> = o
        .sizes
        .iter()
        .map(|&t| t / o.chunk_tokens.max(1))
        .filter(|&c| c > 0)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let Some(&largest) = sizes.last() else {
        return Err(BenchError::Setup(
            "--tokens must hold at least one chunk of --chunk-tokens".into(),
        ));
    };
    let layout = PromptLayout::new(engine, DEFAULT_SYSTEM_PROMPT)?;
    let question = layout.question(engine, QUESTION);
    let window = engine.info().n_ctx_train as usize;
    let fixed = layout.prefix.len() + question.len() + o.decode_tokens + 1;
    // The answering context, checked against the memory budget first.
    let mut s = engine.session_for(fixed + largest * o.chunk_tokens)?;
    let mut encoder = engine.session()?;
    let prefix = encoder.encode_prefix(&layout.prefix)?;
    progress(&format!(
        "encoding {largest} chunks of {} tokens…",
        o.chunk_tokens
    ));
    let states = BenchStates::encode(&mut encoder, &prefix, largest, o.chunk_tokens, false)?;
    drop(encoder);
    let tokens = (largest * o.chunk_tokens) as f64;
    let mut report = ContextReport {
        model: engine.path().display().to_string(),
        architecture: engine.info().architecture.clone(),
        machine: machine(engine),
        threads: engine.options().threads,
        window,
        chunk_tokens: o.chunk_tokens,
        repeats: o.repeats.max(1),
        sequential_max: o.sequential_max,
        chunk_encode_tokens_per_s: tokens / states.encode_s,
        state_bytes_per_token: states.bytes as f64 / tokens,
        kv_bytes_per_cell: crate::engine::memory::cell_bytes(
            engine.info(),
            engine.options().kv_type,
        ),
        points: Vec::new(),
    };
    for &chunks in &sizes {
        let tokens = chunks * o.chunk_tokens;
        let work = Workload {
            prefix: &prefix,
            states: &states,
            chunks,
            question: &question,
            decode: o.decode_tokens,
        };
        let fits = fixed + tokens <= window.max(1) && tokens <= o.sequential_max;
        let mut flash = if fits {
            Some(engine.flash_session(fixed + tokens + 64)?)
        } else {
            None
        };
        let modes = time_modes(
            &mut s,
            flash.as_mut(),
            &o.modes,
            &work,
            o.repeats,
            &mut |r, n| progress(&format!("{tokens} tokens: repeat {r}/{n}…")),
        )?;
        report.points.push(ContextPoint {
            tokens,
            chunks,
            cells: fixed + tokens,
            modes,
        });
        checkpoint(&report)?;
    }
    Ok(report)
}
