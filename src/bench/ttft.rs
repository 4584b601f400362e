//! Time to first token and decode speed, every mode side by side on the
//! same chunks and question (`ape-chat bench ttft`).

use serde::Serialize;

use super::compete::Competitor;
use super::{machine, time_modes, BenchError, BenchStates, ModeFigures, Workload, QUESTION};
use crate::engine::prompt::DEFAULT_SYSTEM_PROMPT;
use crate::engine::{Engine, Mode, PromptLayout};

/// What to time.
#[derive(Clone, Debug)]
pub struct TtftOptions {
    pub chunks: usize,
    pub chunk_tokens: usize,
    /// Tokens decoded per mode for the decode speed.
    pub decode_tokens: usize,
    pub repeats: usize,
    /// Sequential first: the others' speedups are over it.
    pub modes: Vec<Mode>,
    /// Time every mode again while a second process computes on the same
    /// model and cores ([`super::compete`]).
    pub under_load: bool,
    /// Also time sequential prefill with flash attention on (llama.cpp's
    /// fastest prefill, where the backend has it): the baseline speedups
    /// are over is then the faster of the two.
    pub flash_baseline: bool,
}

/// The figures, and what they were measured on.
#[derive(Clone, Debug, Serialize)]
pub struct TtftReport {
    pub model: String,
    pub architecture: String,
    pub machine: String,
    pub threads: usize,
    pub gpu_layers: u32,
    pub chunks: usize,
    pub chunk_tokens: usize,
    pub prefix_tokens: usize,
    pub question_tokens: usize,
    pub repeats: usize,
    pub kv_type: String,
    /// State file bytes per token, at rest (compact).
    pub state_bytes_per_token: f64,
    /// The same states in memory, as the KV cache holds them (f16).
    pub state_bytes_per_token_in_memory: f64,
    /// State files in all, at rest.
    pub state_mb_total: f64,
    pub chunk_encode_tokens_per_s: f64,
    pub modes: Vec<ModeFigures>,
    /// The row speedups are over: the faster sequential prefill.
    pub baseline: String,
    /// The memory tiers the `memory` figures come from, fastest first.
    pub memory_tiers: Vec<String>,
    /// Plain APE's decode speed over plain parallel's (same cells, the
    /// edit's cost alone), if both ran.
    pub ape_decode_vs_parallel: Option<f64>,
    /// The same modes timed next to a competing process, if asked.
    pub under_load: Option<UnderLoad>,
}

/// Figures taken while another process computed.
#[derive(Clone, Debug, Serialize)]
pub struct UnderLoad {
    /// What competed.
    pub competitor: String,
    pub modes: Vec<ModeFigures>,
    pub ape_decode_vs_parallel: Option<f64>,
}

/// Plain APE's (no re-read) decode speed over parallel's among `figures`
/// for `modes`.
fn ape_vs_parallel(modes: &[Mode], figures: &[ModeFigures]) -> Option<f64> {
    let tps = |want: &dyn Fn(&Mode) -> bool| {
        let i = modes.iter().position(want)?;
        Some(figures[i].decode_tokens_per_s)
    };
    let parallel = tps(&|m| *m == Mode::Parallel)?;
    let ape = tps(&|m| matches!(m, Mode::Ape(p) if p.reread == 0))?;
    Some(super::ratio(ape, parallel))
}

/// Times `o.modes` on `o.chunks` chunks of `o.chunk_tokens` tokens cut from
/// real prose, after the default prompt's prefix. `progress` hears what
/// runs.
pub fn ttft(
    engine: &Engine,
    o: &TtftOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<TtftReport, BenchError> {
    if o.chunks == 0 || o.chunk_tokens == 0 {
        return Err(BenchError::Setup(
            "--chunks and --chunk-tokens must be positive".into(),
        ));
    }
    let layout = PromptLayout::new(engine, DEFAULT_SYSTEM_PROMPT)?;
    let question = layout.question(engine, QUESTION);
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    progress(&format!(
        "encoding {} chunks of {} tokens…",
        o.chunks, o.chunk_tokens
    ));
    let pcw = o.modes.contains(&Mode::Pcw);
    let states = BenchStates::encode(&mut s, &prefix, o.chunks, o.chunk_tokens, pcw)?;
    let work = Workload {
        prefix: &prefix,
        states: &states,
        chunks: o.chunks,
        question: &question,
        decode: o.decode_tokens,
    };
    let cells =
        prefix.tokens().len() + o.chunks * o.chunk_tokens + question.len() + o.decode_tokens;
    let mut flash = if o.flash_baseline {
        Some(engine.flash_session(cells + 64)?)
    } else {
        None
    };
    let modes = time_modes(
        &mut s,
        flash.as_mut(),
        &o.modes,
        &work,
        o.repeats,
        &mut |r, n| progress(&format!("repeat {r}/{n}…")),
    )?;
    let under_load = if o.under_load {
        progress("starting a competing process…");
        let rival = Competitor::start(engine.path(), engine.options().threads)?;
        let modes = time_modes(
            &mut s,
            flash.as_mut(),
            &o.modes,
            &work,
            o.repeats,
            &mut |r, n| progress(&format!("under load: repeat {r}/{n}…")),
        )?;
        Some(UnderLoad {
            competitor: rival.what.clone(),
            ape_decode_vs_parallel: ape_vs_parallel(&o.modes, &modes),
            modes,
        })
    } else {
        None
    };
    let tokens = (o.chunks * o.chunk_tokens) as f64;
    Ok(TtftReport {
        model: engine.path().display().to_string(),
        architecture: engine.info().architecture.clone(),
        machine: machine(engine),
        threads: engine.options().threads,
        gpu_layers: engine.options().gpu_layers,
        chunks: o.chunks,
        chunk_tokens: o.chunk_tokens,
        prefix_tokens: prefix.tokens().len(),
        question_tokens: question.len(),
        repeats: o.repeats.max(1),
        kv_type: engine.options().kv_type.to_string(),
        state_bytes_per_token: states.bytes as f64 / tokens,
        state_bytes_per_token_in_memory: states
            .chunks
            .iter()
            .map(|c| c.state_bytes() as f64)
            .sum::<f64>()
            / tokens,
        state_mb_total: states.bytes as f64 / 1e6,
        chunk_encode_tokens_per_s: tokens / states.encode_s,
        ape_decode_vs_parallel: ape_vs_parallel(&o.modes, &modes),
        baseline: modes
            .iter()
            .filter(|m| m.speedup > 0.0 && (m.speedup - 1.0).abs() < 1e-12)
            .map(|m| m.mode.clone())
            .next()
            .unwrap_or_default(),
        memory_tiers: engine.tier_names().iter().map(|t| t.to_string()).collect(),
        modes,
        under_load,
    })
}
