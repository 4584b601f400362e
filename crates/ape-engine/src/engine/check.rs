//! Self-checks that prove the engine computes what APE promises, on any
//! model: used by `ape-chat doctor` and by the test suite.
//!
//! 1. Exactness: one chunk, `T = S = 1`: parallel encoding reproduces
//!    sequential prefill's logits, and APE's edit at `T = S = 1` (forced,
//!    inside llama.cpp's softmax and in the callback) reproduces parallel.
//! 2. APE math: with several chunks and `T, S < 1`, the attention weights
//!    llama.cpp actually used equal an independent f64 computation of the APE
//!    distribution from the raw logits, in every layer, for the question and
//!    each generated token.
//! 3. Placement: states written straight into the KV tensors give the same
//!    logits, bit for bit, as llama.cpp's own state restore of them.
//! 4. Echo: a window copied from the block and moved before the question
//!    gives, bit for bit, what llama.cpp gives for the window decoded and
//!    moved by its own position shift, and its K is the window's read at
//!    those positions, to rounding.
//! 5. Recomputation: selective recomputation of every chunk token is
//!    sequential prefill, bit for bit; of every token whose cached state is
//!    not already sequential's, with gaps between them, it is sequential
//!    prefill to rounding; of none, it is not.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::ape::{reference_distribution, ApeParams};
use super::generate::Mode;
use super::session::argmax;
use super::session::EditPath;
use super::{
    ChunkState, Engine, EngineError, ProbeEvent, ProbeKind, PromptLayout, Session, TokenId,
};

/// Result of the exactness check.
#[derive(Clone, Debug, Serialize)]
pub struct ExactnessReport {
    pub steps: usize,
    /// max |Δlogit| parallel vs sequential over all steps.
    pub parallel_vs_sequential: f32,
    /// max |Δlogit| APE(T=S=1, edit applied in llama.cpp's softmax) vs parallel.
    pub ape_identity_vs_parallel: f32,
    /// The same with the edit applied by the callback on `kq`.
    pub ape_identity_callback_vs_parallel: f32,
    /// max |Δlogit| PCW (state encoded alone, saved, restored) vs the same
    /// computed live with the chunk in a sequence of its own.
    pub pcw_vs_live: f32,
    /// max |Δlogit| PCW vs parallel: how much the shared prefix changes
    /// (must not be zero, or PCW is not what it claims).
    pub pcw_vs_parallel: f32,
}

/// Result of the wide identity check ([`wide_identity`]).
#[derive(Clone, Debug, Serialize)]
pub struct WideReport {
    pub chunks: usize,
    /// KV cells the chunks fill (past the window is the point).
    pub cells: usize,
    /// The highest position any token took.
    pub max_position: usize,
    pub steps: usize,
    /// max |Δlogit| APE(T=S=1, in llama.cpp's softmax) vs parallel.
    pub softmax_vs_parallel: f32,
    /// The same with the edit in the callback, a block of rows at a time,
    /// with attribution on.
    pub callback_vs_parallel: f32,
    /// Every chunk got a finite, positive attention share, and the shares
    /// sum to 1.
    pub shares_ok: bool,
    /// max |Δlogit| of APE at `T = 0.8, S = 0.9` edited in the callback a
    /// block of rows at a time against the same edit on the whole tensor
    /// at once (as under a probe): the blocks must cover every row once,
    /// in place (at `T = S = 1` the edit is a no-op and cannot show it).
    pub blocks_vs_whole: f32,
}

/// APE at `T = S = 1` over many chunks (hundreds of them, past the model's
/// window: they share positions) against plain parallel attention, token
/// for token: the edit inside the softmax and the edit in the callback
/// (bounded row blocks) must both leave the logits bit-identical.
pub fn wide_identity(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_texts: &[String],
    question: &str,
    steps: usize,
) -> Result<WideReport, EngineError> {
    let texts: Vec<&str> = chunk_texts.iter().map(String::as_str).collect();
    let Encoded {
        mut s,
        prefix,
        chunks,
        q,
    } = encoded(engine, layout, &texts, question, steps)?;
    let refs: Vec<&ChunkState> = chunks.iter().collect();
    let (parallel, greedy) = run(&mut s, Mode::Parallel, &prefix, &refs, &q, steps, None)?;
    let max_position = s.position().saturating_sub(1);
    let ape = |s: &mut Session<'_>, p, path| {
        run_on(
            s,
            Mode::Ape(p),
            path,
            &prefix,
            &refs,
            &q,
            steps,
            Some(&greedy),
        )
    };
    let (softmax, _) = ape(&mut s, ApeParams::IDENTITY, EditPath::Softmax)?;
    s.load_parallel(&prefix, &refs)?;
    s.force_ape(ApeParams::IDENTITY, EditPath::Callback)?;
    s.start_attribution();
    let (callback, _) = continue_after(&mut s, &q, steps, Some(&greedy))?;
    let shares = s.attention_shares().unwrap_or_default();
    let sum: f64 = shares.iter().sum();
    let edited = ApeParams::new(0.8, 0.9);
    let (in_blocks, _) = ape(&mut s, edited, EditPath::Callback)?;
    // Under a probe the callback edits the whole tensor at once.
    s.set_probe(Some(Box::new(|_: &ProbeEvent<'_>| {})));
    let (whole, _) = ape(&mut s, edited, EditPath::Callback)?;
    s.set_probe(None);
    Ok(WideReport {
        chunks: refs.len(),
        cells: refs.iter().map(|c| c.tokens.len()).sum(),
        max_position,
        steps,
        softmax_vs_parallel: max_diff(&softmax, &parallel),
        callback_vs_parallel: max_diff(&callback, &parallel),
        shares_ok: shares.len() == refs.len()
            && shares.iter().all(|x| x.is_finite() && *x > 0.0)
            && (sum - 1.0).abs() < 1e-3,
        blocks_vs_whole: max_diff(&in_blocks, &whole),
    })
}

/// What the wide checks start from: a session sized for the chunks (many
/// of them reach past the default context), the prefix and the chunks
/// encoded after it, and the question's tokens.
struct Encoded<'e> {
    s: Session<'e>,
    prefix: super::PrefixState,
    chunks: Vec<ChunkState>,
    q: Vec<TokenId>,
}

fn encoded<'e>(
    engine: &'e Engine,
    layout: &PromptLayout,
    chunk_texts: &[&str],
    question: &str,
    steps: usize,
) -> Result<Encoded<'e>, EngineError> {
    let tokens: Vec<Vec<TokenId>> = chunk_texts
        .iter()
        .map(|t| layout.chunk(engine, t))
        .collect();
    let q = layout.question(engine, question);
    let cells =
        layout.prefix.len() + tokens.iter().map(Vec::len).sum::<usize>() + q.len() + steps + 1;
    let mut s = engine.session_for(cells)?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    let chunks = tokens
        .iter()
        .map(|t| s.encode_chunk(&prefix, t))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Encoded {
        s,
        prefix,
        chunks,
        q,
    })
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
    /// Where the edit ran: llama.cpp's softmax or the callback.
    pub path: String,
    /// Where the callback's work ran when attention lived in GPU memory
    /// (`None`: host).
    pub device: Option<String>,
}

/// Result of the placement check.
#[derive(Clone, Debug, Serialize)]
pub struct PlacementReport {
    pub steps: usize,
    /// One line per case: chunks, APE settings, max |Δlogit| between direct
    /// placement and llama.cpp's restore.
    pub cases: Vec<PlacementCase>,
    /// The largest of them (0 when placement is exact).
    pub max_abs_diff: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlacementCase {
    pub chunks: usize,
    pub params: ApeParams,
    /// Where the chunk states were placed from: their bytes in host memory,
    /// or the engine's memory tier (`tier:ram`, `tier:vram`, …).
    pub from: String,
    pub max_abs_diff: f32,
}

/// Result of the echo check ([`echo`]).
#[derive(Clone, Debug, Serialize)]
pub struct EchoReport {
    /// The echoed tokens of the last chunk.
    pub window: std::ops::Range<usize>,
    pub steps: usize,
    /// max |Δlogit| between the echo (cells copied, claimed and moved) and
    /// llama.cpp decoding the window itself and moving it with
    /// `llama_memory_seq_add`, over the same cells: 0 when the echo is
    /// exactly what llama.cpp's own path makes.
    pub echo_vs_moved: f32,
    /// max |ΔK| / max |K| over every layer between the echo's cells and the
    /// window decoded live at the echo's positions: rounding only (RoPE at
    /// other positions, carried through the layers), when the shift goes
    /// where it should.
    pub k_echo_vs_live: f32,
    /// The same for the echo left at the window's own positions: what a
    /// shift that never happened gives, which the check must tell apart.
    pub k_unshifted_vs_live: f32,
    /// max |Δlogit| between the echo and no window at all: the window
    /// changes the answer, so `echo_vs_moved` says something.
    pub none_vs_echo: f32,
}

/// Check 4: an echoed window ([`Session::echo`]) is what llama.cpp's own
/// path makes of the window's tokens read after the prefix and their
/// chunk's first tokens, then moved right before the question: the chunks
/// loaded side by side under APE `params`, the last chunk's `window`
/// echoed (`None`: the whole chunk, as `balanced` echoes it), the question and `steps` greedy tokens, against the window
/// decoded by llama.cpp in a sequence of its own and moved by its
/// `llama_memory_seq_add` (bit for bit), and against the window decoded
/// at the echo's positions (its K, to rounding).
pub fn echo(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_texts: &[&str],
    question: &str,
    params: ApeParams,
    window: Option<std::ops::Range<usize>>,
    steps: usize,
) -> Result<EchoReport, EngineError> {
    // Room for the references, which decode the prefix and the chunk again
    // before they drop all but the window.
    let room = layout.prefix.len()
        + chunk_texts
            .last()
            .map_or(0, |t| layout.chunk(engine, t).len());
    let Encoded {
        mut s,
        prefix,
        chunks,
        q,
    } = encoded(engine, layout, chunk_texts, question, steps + room)?;
    let refs: Vec<&ChunkState> = chunks.iter().collect();
    let last = refs.len().saturating_sub(1);
    let tokens = refs
        .last()
        .map(|c| c.tokens.clone())
        .ok_or_else(|| EngineError::StateMismatch("no chunk to echo".into()))?;
    let window = window.unwrap_or(0..tokens.len());
    let used = prefix.tokens.len() + refs.iter().map(|c| c.tokens.len()).sum::<usize>();
    // The question's and the answer's cells, left free before the window.
    let room = 2 * (q.len() + steps) + 1;
    #[derive(Clone, Copy, PartialEq)]
    enum Way {
        Echo,
        Unshifted,
        Moved,
        Live,
        None,
    }
    // The references choose the window's cells; the echo is put in the
    // same ones, so that both compute over the same cells.
    let mut cells: std::ops::Range<usize> = 0..0;
    let mut once = |way: Way, forced: Option<&[TokenId]>| {
        s.load_parallel(&prefix, &refs)?;
        let gap = cells.start.saturating_sub(used);
        match way {
            Way::Echo => s.echo_with(last, window.clone(), true, gap)?,
            Way::Unshifted => s.echo_with(last, window.clone(), false, gap)?,
            Way::Moved | Way::Live => {
                cells = s.load_echo_reference(
                    &prefix,
                    &tokens,
                    window.clone(),
                    way == Way::Moved,
                    room,
                )?
            }
            Way::None => {}
        }
        s.set_ape(Some(params))?;
        let out = continue_after(&mut s, &q, steps, forced)?;
        let k = match way {
            Way::None => Vec::new(),
            _ => s.k_values(cells.clone())?,
        };
        Ok::<_, EngineError>((out.0, out.1, k))
    };
    let (moved, greedy, _) = once(Way::Moved, None)?;
    let (echoed, _, k_echo) = once(Way::Echo, Some(&greedy))?;
    let (_, _, k_live) = once(Way::Live, Some(&greedy))?;
    let (_, _, k_unshifted) = once(Way::Unshifted, Some(&greedy))?;
    let (none, _, _) = once(Way::None, Some(&greedy))?;
    Ok(EchoReport {
        window,
        steps,
        echo_vs_moved: max_diff(&echoed, &moved),
        k_echo_vs_live: relative_diff(&k_echo, &k_live),
        k_unshifted_vs_live: relative_diff(&k_unshifted, &k_live),
        none_vs_echo: max_diff(&none, &echoed),
    })
}

/// Result of the recomputation check ([`recomputation`]).
#[derive(Clone, Debug, Serialize)]
pub struct RecomputeReport {
    pub chunks: usize,
    /// Chunk tokens, all chunks.
    pub tokens: usize,
    pub steps: usize,
    /// max |Δlogit| between recomputing every chunk token (the answer
    /// path's `recompute=100`) and sequential prefill: 0 when the moved
    /// states, the dropped cells and the per-chunk decodes are exactly
    /// sequential prefill's.
    pub full_vs_sequential: f32,
    /// The same for recomputing every other token of the first chunk read
    /// and every token of the others, in one gapped decode: the
    /// tokens kept are the first chunk's, read right after the prefix,
    /// where their cached state is sequential's, so only rounding (other
    /// batch shapes) may differ, if the recomputed tokens see exactly what
    /// they would in sequential prefill.
    pub gapped_vs_sequential: f32,
    /// The same for no recomputation (the moved states alone): what the
    /// check must tell apart.
    pub none_vs_sequential: f32,
    /// max |Δlogit| against sequential prefill at each budget of the answer
    /// path, with the tokens the question's attention picked.
    pub budgets: Vec<(u8, usize, f32)>,
}

/// Check 5: selective recomputation ([`Session::recompute`]) against
/// sequential prefill of the same chunks in the same reading order, over
/// the question and `steps` tokens chosen by sequential prefill.
pub fn recomputation(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_texts: &[&str],
    question: &str,
    steps: usize,
) -> Result<RecomputeReport, EngineError> {
    use super::generate::{prefill, Context};
    let Encoded {
        mut s,
        prefix,
        chunks,
        q,
    } = encoded(engine, layout, chunk_texts, question, steps)?;
    let refs: Vec<&ChunkState> = chunks.iter().collect();
    let ranking: Vec<usize> = (0..refs.len()).collect();
    let ctx = Context {
        prefix: &prefix,
        chunks: &refs,
        ranking: &ranking,
        question: &q,
    };
    // `prefill` reads the question: the steps go on from its logits.
    prefill(&mut s, Mode::Sequential, &ctx)?;
    let (sequential, greedy) = continue_after(&mut s, &[], steps, None)?;
    let budget = |r: u8| {
        Mode::Ape(ApeParams {
            recompute: Some(r),
            ..ApeParams::DEFAULT
        })
    };
    let mut budgets = Vec::new();
    for r in [0u8, 5, 10, 20, 40, 100] {
        let t = prefill(&mut s, budget(r), &ctx)?;
        let (logits, _) = continue_after(&mut s, &[], steps, Some(&greedy))?;
        budgets.push((r, t.recomputed, max_diff(&logits, &sequential)));
    }
    let at = |r: u8| budgets.iter().find(|b| b.0 == r).map_or(f32::NAN, |b| b.2);
    let (none, full) = (at(0), at(100));
    // Every other token of the first chunk read, and all of the rest.
    let order = ctx.best_last();
    let read: Vec<&ChunkState> = order.iter().map(|&i| refs[i]).collect();
    let first = read.first().map_or(0, |c| c.tokens.len());
    let total: usize = read.iter().map(|c| c.tokens.len()).sum();
    let picked: Vec<usize> = (1..first).step_by(2).chain(first..total).collect();
    s.load_shifted(&prefix, &read)?;
    s.recompute(&read, &picked)?;
    let (gapped, _) = continue_after(&mut s, &q, steps, Some(&greedy))?;
    Ok(RecomputeReport {
        chunks: refs.len(),
        tokens: total,
        steps,
        full_vs_sequential: full,
        gapped_vs_sequential: max_diff(&gapped, &sequential),
        none_vs_sequential: none,
        budgets,
    })
}

/// max over layers of max |a − b| / max |b|.
fn relative_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let scale = y.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let d = x
                .iter()
                .zip(y)
                .fold(0.0f32, |m, (p, q)| m.max((p - q).abs()));
            if scale > 0.0 {
                d / scale
            } else {
                d
            }
        })
        .fold(0.0, f32::max)
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
    // `run` forces the edit at T = S = 1 so the whole edit path runs.
    let ape_identity = |s: &mut Session<'_>, path| {
        run_on(
            s,
            Mode::Ape(ApeParams::IDENTITY),
            path,
            &prefix,
            &chunks,
            &q,
            steps,
            Some(&tokens),
        )
    };
    let (ape_logits, _) = ape_identity(&mut s, EditPath::Softmax)?;
    let (ape_callback, _) = ape_identity(&mut s, EditPath::Callback)?;
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
    let (live, _) = continue_after(&mut s, &q, steps, Some(&tokens))?;
    Ok(ExactnessReport {
        steps,
        parallel_vs_sequential: max_diff(&seq_logits, &par_logits),
        ape_identity_vs_parallel: max_diff(&par_logits, &ape_logits),
        ape_identity_callback_vs_parallel: max_diff(&par_logits, &ape_callback),
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
    run_on(
        s,
        mode,
        EditPath::Softmax,
        prefix,
        chunks,
        question,
        steps,
        forced,
    )
}

/// [`run`] with APE's edit on `path`.
#[allow(clippy::too_many_arguments)]
fn run_on(
    s: &mut Session<'_>,
    mode: Mode,
    path: EditPath,
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
        s.force_ape(p, path)?;
    }
    continue_after(s, question, steps, forced)
}

/// Evaluates the question (if any), then `steps` tokens (`forced`, or greedy), after
/// what the session holds.
fn continue_after(
    s: &mut Session<'_>,
    question: &[TokenId],
    steps: usize,
    forced: Option<&[TokenId]>,
) -> Result<(Logits, Vec<TokenId>), EngineError> {
    // None when the caller's prefill read it already.
    if !question.is_empty() {
        s.eval(question)?;
    }
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

/// Runs check 2: `chunk_texts` (at least 3) in parallel with APE `params`
/// applied on `path`, the question, then `steps` greedy tokens, every
/// attention row compared.
pub fn ape_math(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_texts: &[&str],
    question: &str,
    params: ApeParams,
    steps: usize,
    path: EditPath,
) -> Result<ApeMathReport, EngineError> {
    let Encoded {
        mut s,
        prefix,
        chunks,
        q,
    } = encoded(engine, layout, chunk_texts, question, steps)?;
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
    s.force_ape(params, path)?;
    s.eval(&q)?;
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
        path: match path {
            EditPath::Softmax => "llama.cpp's softmax".into(),
            EditPath::Callback => "the eval callback".into(),
        },
        device,
    })
}

/// Runs check 3: the prefix and one, then every one of `chunk_texts`,
/// loaded by direct placement and by llama.cpp's restore, under plain
/// parallel attention and under APE `params`; the same question and `steps`
/// tokens (greedy under restore, forced under placement) after each.
pub fn placement(
    engine: &Engine,
    layout: &PromptLayout,
    chunk_texts: &[&str],
    question: &str,
    params: ApeParams,
    steps: usize,
) -> Result<PlacementReport, EngineError> {
    let mut s = engine.session()?;
    let prefix = s.encode_prefix(&layout.prefix)?;
    let chunks = chunk_texts
        .iter()
        .map(|t| s.encode_chunk(&prefix, &layout.chunk(engine, t)))
        .collect::<Result<Vec<_>, _>>()?;
    let all: Vec<&ChunkState> = chunks.iter().collect();
    // The same states held by the engine's memory tier (when it has one),
    // placed from there with no bytes in host memory.
    let mut pooled = Vec::new();
    let mut tier = None;
    for (i, c) in chunks.iter().enumerate() {
        let key = format!("placement-check-{i}-{}", blake3::hash(c.payload()).to_hex());
        let mut kept = c.clone();
        engine.keep_state(&key, &mut kept);
        if let Some((state, name)) = engine.resident_state(&key, c.tokens(), &prefix) {
            tier = Some(name);
            pooled.push(state);
        }
    }
    let pooled: Vec<&ChunkState> = pooled.iter().collect();
    let q = layout.question(engine, question);
    let mut cases = Vec::new();
    for n in [1, all.len()] {
        for p in [ApeParams::IDENTITY, params] {
            let once = |s: &mut Session<'_>, from: Option<&[&ChunkState]>, forced| {
                match from {
                    None => s.load_parallel_restored(&prefix, &all[..n])?,
                    Some(chunks) => s.load_parallel(&prefix, &chunks[..n])?,
                }
                s.set_ape(Some(p))?;
                continue_after(s, &q, steps, forced)
            };
            let (reference, tokens) = once(&mut s, None, None)?;
            let mut sources = vec![("bytes".to_string(), &all)];
            if let (Some(name), true) = (tier, pooled.len() == all.len()) {
                sources.push((format!("tier:{name}"), &pooled));
            }
            for (from, chunks) in sources {
                let (placed, _) = once(&mut s, Some(chunks), Some(&tokens))?;
                cases.push(PlacementCase {
                    chunks: n,
                    params: p,
                    from,
                    max_abs_diff: max_diff(&reference, &placed),
                });
            }
        }
    }
    Ok(PlacementReport {
        steps,
        max_abs_diff: cases.iter().map(|c| c.max_abs_diff).fold(0.0, f32::max),
        cases,
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
