//! Self-checks that prove the engine computes what APE promises, on any
//! model: used by `ape-chat doctor` and by the test suite.
//!
//! 1. Exactness: one chunk, `T = S = 1`: parallel encoding reproduces
//!    sequential prefill's logits, and APE's edit at `T = S = 1` (forced
//!    through the callback) reproduces parallel.
//! 2. APE math: with several chunks and `T, S < 1`, the attention weights
//!    llama.cpp actually used equal an independent f64 computation of the APE
//!    distribution from the raw logits, in every layer, for the question and
//!    each generated token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::ape::{reference_distribution, ApeParams};
use super::generate::Mode;
use super::session::argmax;
use super::{
    ChunkState, Engine, EngineError, ProbeEvent, ProbeKind, PromptLayout, Session, TokenId,
};

/// Result of the exactness check.
#[derive(Clone, Debug, Serialize)]
pub struct ExactnessReport {
    pub steps: usize,
    /// max |Δlogit| parallel vs sequential over all steps.
    pub parallel_vs_sequential: f32,
    /// max |Δlogit| APE(T=S=1, edit applied) vs parallel.
    pub ape_identity_vs_parallel: f32,
    /// max |Δlogit| PCW (state encoded alone, saved, restored) vs the same
    /// computed live with the chunk in a sequence of its own.
    pub pcw_vs_live: f32,
    /// max |Δlogit| PCW vs parallel: how much the shared prefix changes
    /// (must not be zero, or PCW is not what it claims).
    pub pcw_vs_parallel: f32,
}

/// Result of the APE-math check.
#[derive(Clone, Debug, Serialize)]
pub struct ApeMathReport {
    pub params: ApeParams,
    pub chunks: usize,
    pub layers: usize,
    pub rows: usize,
    pub decode_steps: usize,
    /// max |p_engine − p_reference| over every attention weight checked.
    pub max_abs_error: f64,
    /// Rows where a chunk key was not visible to the query: a layout bug.
    pub layout_errors: usize,
    /// Where the edit ran when attention lived in GPU memory (`None`: host).
    pub device: Option<String>,
}

/// Texts and question used when the caller brings none (doctor).
pub const SAMPLE_CHUNKS: [&str; 3] = [
    "The Larkspur Bridge opened in 1931 after six years of construction. It spans the \
Vell river and carried trams until 1962.",
    "Marta Ilves became harbour master of Port Sellan in 1987. She introduced night \
pilotage and the tidal warning bell still used today.",
    "The annual lantern fair of Dunmere is held on the first Saturday of October. \
Visitors release paper boats carrying candles onto the mill pond.",
];
/// Question for [`SAMPLE_CHUNKS`].
pub const SAMPLE_QUESTION: &str = "Who introduced night pilotage at Port Sellan?";

/// Runs check 1 over `steps` greedy steps (tokens chosen by sequential prefill
/// and fed to every mode, so all modes see identical inputs).
pub fn exactness(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_text: &str,
    question: &str,
    steps: usize,
) -> Result<ExactnessReport, EngineError> {
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    let chunk = s.encode_chunk(&prefix, &layout.chunk(engine, chunk_text))?;
    let q = layout.question(engine, question);
    let chunks = [&chunk];

    let (seq_logits, tokens) = run(&mut s, Mode::Sequential, &prefix, &chunks, &q, steps, None)?;
    let (par_logits, _) = run(
        &mut s,
        Mode::Parallel,
        &prefix,
        &chunks,
        &q,
        steps,
        Some(&tokens),
    )?;
    // `run` forces the edit at T = S = 1 so the whole callback path runs.
    let (ape_logits, _) = run(
        &mut s,
        Mode::Ape(ApeParams::IDENTITY),
        &prefix,
        &chunks,
        &q,
        steps,
        Some(&tokens),
    )?;
    // PCW against the same computed live. The live chunk's keys sit after
    // the (masked) prefix in every attention row, so the prefix is padded to
    // a multiple of 64 cells, where SIMD sums line up and match bit for bit.
    let padded = layout
        .clone()
        .pad(engine, (64 - layout.prefix.len() % 64) % 64);
    let prefix = s.encode_prefix(&padded.prefix)?;
    let tokens_64 = padded.chunk(engine, chunk_text);
    let shared = s.encode_chunk(&prefix, &tokens_64)?;
    let alone = s.encode_chunk(&prefix.alone(), &tokens_64)?;
    let (pcw_logits, _) = run(
        &mut s,
        Mode::Pcw,
        &prefix,
        &[&alone],
        &q,
        steps,
        Some(&tokens),
    )?;
    let (par_64, _) = run(
        &mut s,
        Mode::Parallel,
        &prefix,
        &[&shared],
        &q,
        steps,
        Some(&tokens),
    )?;
    s.load_alone_reference(&prefix, &tokens_64)?;
    let live = continue_with(&mut s, &q, steps, &tokens)?;
    Ok(ExactnessReport {
        steps,
        parallel_vs_sequential: max_diff(&seq_logits, &par_logits),
        ape_identity_vs_parallel: max_diff(&par_logits, &ape_logits),
        pcw_vs_live: max_diff(&pcw_logits, &live),
        pcw_vs_parallel: max_diff(&pcw_logits, &par_64),
    })
}

type Logits = Vec<Vec<f32>>;

/// Prefills `mode`, then evaluates `steps` tokens: `forced` ones if given,
/// otherwise greedy picks. Returns the logits before each step and the tokens.
fn run(
    s: &mut Session<'_>,
    mode: Mode,
    prefix: &super::PrefixState,
    chunks: &[&ChunkState],
    question: &[TokenId],
    steps: usize,
    forced: Option<&[TokenId]>,
) -> Result<(Logits, Vec<TokenId>), EngineError> {
    match mode {
        Mode::Sequential => {
            s.load_prefix(prefix)?;
            s.load_sequential_chunks(chunks)?;
        }
        _ => s.load_parallel(prefix, chunks)?,
    }
    if let Mode::Ape(p) = mode {
        s.force_ape(p)?;
    }
    s.eval(question)?;
    let (mut all, mut tokens) = (Vec::new(), Vec::new());
    for i in 0..steps {
        let logits = s.logits()?.to_vec();
        let tok = forced.map_or_else(|| argmax(&logits), |f| f[i]);
        all.push(logits);
        tokens.push(tok);
        s.eval(&[tok])?;
    }
    Ok((all, tokens))
}

/// Evaluates the question and `tokens` after what the session holds; the
/// logits before each token.
fn continue_with(
    s: &mut Session<'_>,
    question: &[TokenId],
    steps: usize,
    tokens: &[TokenId],
) -> Result<Logits, EngineError> {
    s.eval(question)?;
    let mut all = Vec::new();
    for &tok in &tokens[..steps] {
        all.push(s.logits()?.to_vec());
        s.eval(&[tok])?;
    }
    Ok(all)
}

fn max_diff(a: &Logits, b: &Logits) -> f32 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f32::max)
}

#[derive(Default)]
struct Accumulator {
    raw: HashMap<usize, Vec<f32>>,
    layers: std::collections::BTreeSet<usize>,
    rows: usize,
    max_abs_error: f64,
    layout_errors: usize,
}

/// Runs check 2: `chunk_texts` (at least 3) in parallel with APE `params`,
/// the question, then `steps` greedy tokens, every attention row compared.
pub fn ape_math(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_texts: &[&str],
    question: &str,
    params: ApeParams,
    steps: usize,
) -> Result<ApeMathReport, EngineError> {
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    let chunks = chunk_texts
        .iter()
        .map(|t| s.encode_chunk(&prefix, &layout.chunk(engine, t)))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&ChunkState> = chunks.iter().collect();
    s.load_parallel(&prefix, &refs)?;
    let cols = s.chunk_columns().unwrap_or(0..0);
    let acc = Arc::new(Mutex::new(Accumulator::default()));
    let sink = Arc::clone(&acc);
    s.set_probe(Some(Box::new(move |ev: &ProbeEvent<'_>| {
        if let Ok(mut a) = sink.lock() {
            observe(&mut a, ev, cols.clone(), params);
        }
    })));
    s.set_ape(Some(params))?;
    s.eval(&layout.question(engine, question))?;
    for _ in 0..steps {
        let tok = s.greedy()?;
        s.eval(&[tok])?;
    }
    s.set_probe(None);
    let device = s.device_path().map(|p| p.to_string());
    let a = acc
        .lock()
        .map_err(|_| EngineError::ApeFault("probe panicked".into()))?;
    Ok(ApeMathReport {
        params,
        chunks: chunks.len(),
        layers: a.layers.len(),
        rows: a.rows,
        decode_steps: steps,
        max_abs_error: a.max_abs_error,
        layout_errors: a.layout_errors,
        device,
    })
}

fn observe(a: &mut Accumulator, ev: &ProbeEvent<'_>, cols: std::ops::Range<usize>, p: ApeParams) {
    match ev.kind {
        ProbeKind::RawLogits => {
            a.raw.insert(ev.layer, ev.data.to_vec());
        }
        ProbeKind::Softmax => {
            let Some(raw) = a.raw.remove(&ev.layer) else {
                a.layout_errors += 1;
                return;
            };
            let n = ev.n_kv;
            for h in 0..ev.n_head {
                for t in 0..ev.n_tokens {
                    let row = (h * ev.n_tokens + t) * n;
                    let mask = &ev.mask[t * n..(t + 1) * n];
                    if cols.clone().any(|j| !mask[j].is_finite()) {
                        a.layout_errors += 1;
                    }
                    let want = reference_distribution(
                        &raw[row..row + n],
                        mask,
                        ev.kq_scale,
                        cols.clone(),
                        p,
                    );
                    let got = &ev.data[row..row + n];
                    let err = want
                        .iter()
                        .zip(got)
                        .map(|(w, g)| (w - *g as f64).abs())
                        .fold(0.0, f64::max);
                    a.max_abs_error = a.max_abs_error.max(err);
                    a.rows += 1;
                }
            }
            a.layers.insert(ev.layer);
        }
    }
}
