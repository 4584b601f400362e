//! Answering in one of the four modes: prefill, then decode token by token,
//! streaming text through one persistent UTF-8 decoder.

use std::fmt;
use std::time::{Duration, Instant};

use llama_cpp_2::sampling::LlamaSampler;
use serde::Serialize;

use super::ape::ApeParams;
use super::state::{ChunkState, PrefixState};
use super::{recompute, EngineError, Session, TokenId};

/// How the retrieved chunks reach the model; the paper's ablation in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Prefix, chunks and question prefilled as one sequence (the baseline),
    /// the chunks best last: nearest the question, where a re-read puts its
    /// chunk, so that no mode gains from reading order alone.
    Sequential,
    /// Sequential prefill with the chunks in prompt order, whatever their
    /// ranking: the control that shows what reading order alone is worth.
    SequentialStored,
    /// Parallel context windows: chunk states encoded each on its own with
    /// nothing before them, side by side at the same positions, ordinary
    /// attention (the paper's PCW baseline).
    Pcw,
    /// Chunk states encoded after the shared prefix, side by side, ordinary
    /// attention (PCW + APE's shared prefix).
    Parallel,
    /// Chunk states encoded after the shared prefix, APE attention.
    Ape(ApeParams),
}

impl Mode {
    /// The modes' names, as flags take them (`ape-t`: APE with `S = 1`).
    pub const NAMES: &'static [&'static str] = &[
        "sequential",
        "sequential-stored",
        "pcw",
        "parallel",
        "ape",
        "ape-t",
    ];

    /// The mode a name means, the one place names are read: one of
    /// [`Self::NAMES`], or `ape:t=…:s=…:reread=…:window=…:focus=…`; APE settings the
    /// name leaves out come from `ape`.
    pub fn parse(name: &str, ape: ApeParams) -> Result<Mode, String> {
        Ok(match name.trim() {
            "sequential" => Mode::Sequential,
            "sequential-stored" => Mode::SequentialStored,
            "pcw" => Mode::Pcw,
            "parallel" => Mode::Parallel,
            "ape" => Mode::Ape(ape),
            "ape-t" => Mode::Ape(ApeParams { scale: 1.0, ..ape }),
            spec if spec.starts_with("ape:") => Mode::Ape(ape_spec(&spec[4..], ape)?),
            other => {
                return Err(format!(
                "unknown mode `{other}` ({}, ape:t=…:s=…:reread=…:window=…:focus=…:recompute=…)",
                Self::NAMES.join(", ")
            ))
            }
        })
    }

    /// Short name used in flags and reports.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Sequential => "sequential",
            Mode::SequentialStored => "sequential-stored",
            Mode::Pcw => "pcw",
            Mode::Parallel => "parallel",
            Mode::Ape(_) => "ape",
        }
    }

    /// Whether the mode reads chunk states, and which: encoded after the
    /// prefix (`Some(false)`), alone (`Some(true)`), or none (sequential).
    pub fn chunks_alone(&self) -> Option<bool> {
        match self {
            Mode::Sequential | Mode::SequentialStored => None,
            Mode::Pcw => Some(true),
            Mode::Parallel | Mode::Ape(_) => Some(false),
        }
    }
}

/// `t=…:s=…:reread=…:window=…:focus=…` over `p`.
fn ape_spec(spec: &str, mut p: ApeParams) -> Result<ApeParams, String> {
    for kv in spec.split(':') {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("`{kv}` in `ape:{spec}` is not key=value"))?;
        let bad = |e: &dyn fmt::Display| format!("`{kv}` in `ape:{spec}`: {e}");
        match k {
            "t" => p.temperature = v.parse().map_err(|e| bad(&e))?,
            "s" => p.scale = v.parse().map_err(|e| bad(&e))?,
            "reread" => p.reread = v.parse().map_err(|e| bad(&e))?,
            "window" => p.window = v.parse().map_err(|e| bad(&e))?,
            "sentences" => {
                p.sentences = match v {
                    "1" => true,
                    "0" => false,
                    _ => return Err(bad(&"0 or 1")),
                }
            }
            "echo" => {
                p.echo = match v {
                    "1" => true,
                    "0" => false,
                    _ => return Err(bad(&"0 or 1")),
                }
            }
            "focus" => p.focus = v.parse().map_err(|e| bad(&e))?,
            "doubt" => p.doubt = Some(v.parse().map_err(|e| bad(&e))?),
            "recompute" => p.recompute = Some(v.parse().map_err(|e| bad(&e))?),
            _ => {
                return Err(format!(
                "unknown key `{k}` in `ape:{spec}` (t, s, reread, window, sentences, echo, focus, doubt, recompute)"
            ))
            }
        }
    }
    p.validate()?;
    Ok(p)
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Ape(ApeParams {
                recompute: Some(r),
                doubt,
                ..
            }) => {
                write!(f, "recompute {r} %")?;
                match doubt {
                    Some(d) => write!(f, " (doubt {d})"),
                    None => Ok(()),
                }
            }
            Mode::Ape(p) => {
                write!(f, "ape (T={}, S={}", p.temperature, p.scale)?;
                if p.reread > 0 {
                    write!(f, ", re-read {}", p.reread)?;
                    match (p.window, p.sentences) {
                        (0, _) => {}
                        (w, false) => write!(f, " (window {w}")?,
                        (w, true) => write!(f, " (window {w}, sentences")?,
                    }
                    match (p.window, p.echo) {
                        (0, false) => {}
                        (0, true) => f.write_str(" (echoed)")?,
                        (_, false) => f.write_str(")")?,
                        (_, true) => f.write_str(", echoed)")?,
                    }
                }
                if p.focus > 0 {
                    write!(f, ", focus {}", p.focus)?;
                }
                if let Some(d) = p.doubt {
                    write!(f, ", doubt {d}")?;
                }
                f.write_str(")")
            }
            m => f.write_str(m.name()),
        }
    }
}

/// What a question is answered over. `chunks` are in prompt order (the order
/// the parallel block lays them out); `ranking` lists their indices best
/// first: what re-reading picks from and what sequential prefill reads best
/// last. PCW needs states encoded alone.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub prefix: &'a PrefixState,
    pub chunks: &'a [&'a ChunkState],
    pub ranking: &'a [usize],
    pub question: &'a [TokenId],
}

/// Token selection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Most likely token: deterministic, what evaluation uses.
    Greedy,
    /// Temperature + nucleus sampling with a fixed seed.
    Sample {
        temperature: f32,
        top_p: f32,
        seed: u32,
    },
}

impl Context<'_> {
    /// The order sequential prefill reads the chunks in: any the ranking
    /// leaves out first (in prompt order), then the ranked ones worst to
    /// best, so the best is read last.
    pub fn best_last(&self) -> Vec<usize> {
        // Linear in the chunks: a whole folder is thousands of them.
        let n = self.chunks.len();
        let mut ranked = vec![false; n];
        let mut best_first = Vec::new();
        for &i in self.ranking.iter().filter(|&&i| i < n) {
            if !std::mem::replace(&mut ranked[i], true) {
                best_first.push(i);
            }
        }
        let mut order: Vec<usize> = (0..n).filter(|&i| !ranked[i]).collect();
        order.extend(best_first.into_iter().rev());
        order
    }
}

impl Sampling {
    fn sampler(self) -> LlamaSampler {
        match self {
            Sampling::Greedy => LlamaSampler::greedy(),
            Sampling::Sample {
                temperature,
                top_p,
                seed,
            } => LlamaSampler::chain_simple([
                LlamaSampler::top_p(top_p, 1),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(seed),
            ]),
        }
    }
}

/// Limits and sampling for one answer.
#[derive(Clone, Debug)]
pub struct GenerateOptions {
    pub max_tokens: usize,
    pub sampling: Sampling,
    /// Measure each chunk's share of the answer's attention (a little slower).
    pub attribution: bool,
    /// Texts that end the answer (not shown): a base model in the plain
    /// layout has no end-of-turn token and would go on to invent the next
    /// question ([`super::PromptLayout::stops`]). They count once the
    /// answer has begun: leading blank lines are not an answer's end.
    pub stops: &'static [&'static str],
    /// The caller's own stop texts (a server request's `stop`): the answer
    /// ends before the first one, wherever it appears, however the tokens
    /// split it.
    pub stop: Vec<String>,
    /// The most likely alternatives reported beside each answer token
    /// ([`TokenLogprob::top`]; a server request's `top_logprobs`).
    pub top_logprobs: usize,
    /// A reference answer's tokens, teacher-forced after the question once
    /// the answer is done, in the same context ([`generate`] only): their
    /// log-probabilities are [`Generated::scored`]. What an evaluation
    /// weighs beside right and wrong: how sure the model was of the right
    /// answer.
    pub score: Vec<TokenId>,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        Self {
            max_tokens: 256,
            sampling: Sampling::Greedy,
            attribution: false,
            stops: &[],
            stop: Vec::new(),
            top_logprobs: 0,
            score: Vec::new(),
        }
    }
}

/// One answer token as a client's `logprobs` report it.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenLogprob {
    pub token: TokenId,
    /// The token's bytes: not always whole UTF-8 characters.
    pub bytes: Vec<u8>,
    /// Under the logits it was drawn from, before any sampling temperature.
    pub logprob: f32,
    /// The [`GenerateOptions::top_logprobs`] most likely tokens at its
    /// place, most likely first (ties by token id), the drawn one or not.
    pub top: Vec<Alternative>,
}

/// A token that could have come at an answer token's place.
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    pub token: TokenId,
    pub bytes: Vec<u8>,
    pub logprob: f32,
}

/// Answer text as it is shown, with the tokens whose text begins in it: a
/// token held back (a stop text it may start, a character it splits) comes
/// with the text that shows it, and one wholly inside a stop text never
/// comes.
#[derive(Clone, Copy, Debug)]
pub struct Piece<'a> {
    pub text: &'a str,
    pub tokens: &'a [TokenLogprob],
}

/// Why generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model ended its turn: its end token, or a stop text.
    EndOfTurn,
    MaxTokens,
    Cancelled,
    /// The first tokens failed the doubt check ([`ApeParams::doubt`]):
    /// nothing was shown, and the answer is begun again with sequential
    /// prefill.
    Doubted,
}

/// Where the time to the first token went.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PrefillTimings {
    /// Restoring prefix and chunk states (zero work for sequential beyond the prefix).
    #[serde(serialize_with = "ms")]
    pub load: Duration,
    /// Decoding chunk tokens (sequential, re-read) and the question.
    #[serde(serialize_with = "ms")]
    pub prefill: Duration,
    /// Of `prefill`, the re-read (finished on the device: what `balanced`
    /// weighs on a GPU, [`RereadCosts`]).
    #[serde(serialize_with = "ms")]
    pub rereading: Duration,
    /// Indices of the chunks loaded as the block (or read sequentially):
    /// the first entries of [`Generated::attention_shares`], in order.
    #[serde(skip)]
    pub measured: Vec<usize>,
    /// Indices of the chunks re-read after the block, in reading order:
    /// the shares that follow. A chunk re-read through a window is in both
    /// lists, and its share is the sum ([`PrefillTimings::shares_by_chunk`]).
    #[serde(skip)]
    pub reread: Vec<usize>,
    /// Why an echo was asked for and the window prefilled instead
    /// ([`EngineError::EchoUnsupported`]).
    #[serde(skip)]
    pub echo_refused: Option<String>,
    /// Why a recomputation's states could not be moved, so that sequential
    /// prefill read the chunks ([`EngineError::EchoUnsupported`]).
    #[serde(skip)]
    pub shift_refused: Option<String>,
    /// Chunk tokens decoded again by selective recomputation
    /// ([`ApeParams::recompute`]; 0 otherwise).
    #[serde(skip_serializing_if = "is_zero")]
    pub recomputed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl PrefillTimings {
    /// Attention shares (as [`Generated::attention_shares`] gives them)
    /// added up per chunk of a context of `n` chunks: `None` for a chunk
    /// that was not read.
    pub fn shares_by_chunk(&self, shares: &[f64], n: usize) -> Vec<Option<f64>> {
        let mut out = vec![None; n];
        for (&i, &s) in self.measured.iter().chain(&self.reread).zip(shares) {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(slot.unwrap_or(0.0) + s);
            }
        }
        out
    }
}

/// What whole-chunk re-reads have cost on an engine's device, for
/// `balanced` on a GPU, which re-reads the whole best chunk only while that
/// stays cheap (`answer::WHOLE_REREAD_BUDGET`): the slow ones seen, the
/// [`Self::SEEN`] smallest contexts kept.
#[derive(Clone, Debug, Default)]
pub struct RereadCosts {
    /// KV cells of the context and the re-read's time, by cells.
    slow: Vec<(usize, Duration)>,
}

impl RereadCosts {
    /// Slow re-reads needed before one decides: a first run's one-off
    /// costs (CUDA loading its kernels as they are first used) are not
    /// repeated.
    pub const SEEN: usize = 2;

    /// Notes a whole-chunk re-read over `cells` cells that took `took`, slow
    /// if over `budget`. True when this lowers the context from which
    /// re-reads are too slow ([`Self::too_slow_from`]).
    pub fn note(&mut self, cells: usize, took: Duration, budget: Duration) -> bool {
        if took <= budget {
            return false;
        }
        let before = self.too_slow_from();
        self.slow.push((cells, took));
        self.slow.sort_by_key(|&(c, _)| c);
        self.slow.truncate(Self::SEEN);
        self.too_slow_from() != before
    }

    /// The smallest context (in cells) from which whole-chunk re-reads were
    /// slow [`Self::SEEN`] times over no more cells, and the time of the
    /// last of those: a context at least that large costs at least as much
    /// (attention grows with the cells).
    pub fn too_slow_from(&self) -> Option<(usize, Duration)> {
        self.slow.get(Self::SEEN - 1).copied()
    }
}

/// An answer and how it was produced.
#[derive(Clone, Debug, Serialize)]
pub struct Generated {
    pub text: String,
    pub tokens: Vec<TokenId>,
    pub stop: StopReason,
    pub prefill: PrefillTimings,
    #[serde(serialize_with = "ms")]
    pub ttft: Duration,
    #[serde(serialize_with = "ms")]
    pub decode: Duration,
    /// Per chunk (in the order given), its mean share of the attention the
    /// generated tokens paid to the chunks, over all layers and heads.
    pub attention_shares: Option<Vec<f64>>,
    /// Each token's log-probability under the logits it was drawn from
    /// (before any sampling temperature): how sure the model was.
    #[serde(skip)]
    pub logprobs: Vec<f32>,
    /// Log-probability of each of [`GenerateOptions::score`]'s tokens
    /// (empty when none were given, or the answer was doubted).
    #[serde(skip)]
    pub scored: Vec<f64>,
}

impl Generated {
    /// Decode speed after the first token.
    pub fn decode_tokens_per_s(&self) -> f64 {
        let n = self.tokens.len().saturating_sub(1);
        if n == 0 || self.decode.is_zero() {
            return 0.0;
        }
        n as f64 / self.decode.as_secs_f64()
    }
}

fn ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// Fills the context for `mode` and evaluates the question, leaving its
/// last logits ready for sampling.
pub fn prefill(
    session: &mut Session<'_>,
    mode: Mode,
    ctx: &Context<'_>,
) -> Result<PrefillTimings, EngineError> {
    if let Mode::Ape(ApeParams {
        recompute: Some(percent),
        ..
    }) = mode
    {
        return prefill_recomputed(session, percent, ctx);
    }
    let t0 = Instant::now();
    let reread: &[usize] = match mode {
        Mode::Ape(p) => &ctx.ranking[..(p.reread as usize).min(ctx.ranking.len())],
        _ => &[],
    };
    // A windowed re-read keeps its chunks in the block (and their shares),
    // as does an echo, which copies cells the block holds.
    let window = match mode {
        Mode::Ape(p) => p.window as usize,
        _ => 0,
    };
    let echo = matches!(mode, Mode::Ape(p) if p.echo);
    // Chunks whose attention shares are measured, in the order the hook
    // sees them: every chunk read sequentially, or the parallel block.
    let measured: Vec<usize> = match mode {
        Mode::Sequential => ctx.best_last(),
        Mode::SequentialStored => (0..ctx.chunks.len()).collect(),
        _ => (0..ctx.chunks.len())
            .filter(|i| window > 0 || echo || !reread.contains(i))
            .collect(),
    };
    let in_order =
        |order: &[usize]| -> Vec<&ChunkState> { order.iter().map(|&i| ctx.chunks[i]).collect() };
    match mode {
        Mode::Sequential | Mode::SequentialStored => session.load_prefix(ctx.prefix)?,
        Mode::Pcw | Mode::Parallel | Mode::Ape(_) => {
            session.load_parallel(ctx.prefix, &in_order(&measured))?;
        }
    }
    let load = t0.elapsed();
    let t1 = Instant::now();
    if mode.chunks_alone().is_none() {
        session.load_sequential_chunks(&in_order(&measured))?;
    }
    session.set_ape(match mode {
        Mode::Ape(p) => Some(p.for_chunks(measured.len())),
        _ => None,
    })?;
    // Re-read chunks (or their best windows), best last: nearest the question.
    let all: Vec<&[TokenId]> = match window {
        0 => Vec::new(),
        _ => ctx.chunks.iter().map(|c| c.tokens.as_slice()).collect(),
    };
    let sentences = matches!(mode, Mode::Ape(p) if p.sentences);
    let engine = session.engine();
    let ends = |t: TokenId| ends_sentence(&engine.token_bytes(t));
    let t2 = Instant::now();
    let mut echo_refused = None;
    for &i in reread.iter().rev() {
        let tokens = &ctx.chunks[i].tokens;
        let read = match window {
            0 => 0..tokens.len(),
            w if sentences => best_sentences(tokens, ctx.question, &all, w, &ends),
            w => best_window(tokens, ctx.question, &all, w),
        };
        if let Some(at) = measured.iter().position(|&j| j == i).filter(|_| echo) {
            match session.echo(at, read.clone()) {
                Ok(()) => continue,
                Err(EngineError::EchoUnsupported(why)) => echo_refused = Some(why),
                Err(e) => return Err(e),
            }
        }
        session.feed_reread(&tokens[read])?;
    }
    let rereading = match reread {
        [] => Duration::ZERO,
        _ => {
            // A GPU may still be computing what the re-read queued.
            session.synchronize();
            t2.elapsed()
        }
    };
    session.eval(ctx.question)?;
    Ok(PrefillTimings {
        load,
        prefill: t1.elapsed(),
        rereading,
        measured,
        reread: reread.iter().rev().copied().collect(),
        echo_refused,
        shift_refused: None,
        recomputed: 0,
    })
}

/// [`prefill`] with selective recomputation ([`ApeParams::recompute`]):
/// the states moved to the sequential layout, best last as sequential
/// prefill reads them; the question read once over them to pick the
/// budget's tokens ([`recompute::question_attention`]), rewound; those
/// tokens decoded again; then the question. Where the states cannot be
/// moved, sequential prefill (the budget's far end), and why is kept.
fn prefill_recomputed(
    session: &mut Session<'_>,
    percent: u8,
    ctx: &Context<'_>,
) -> Result<PrefillTimings, EngineError> {
    let t0 = Instant::now();
    let order = ctx.best_last();
    let chunks: Vec<&ChunkState> = order.iter().map(|&i| ctx.chunks[i]).collect();
    let refused = match session.load_shifted(ctx.prefix, &chunks) {
        Ok(()) => None,
        Err(EngineError::EchoUnsupported(why)) => {
            session.load_prefix(ctx.prefix)?;
            Some(why)
        }
        Err(e) => return Err(e),
    };
    let load = t0.elapsed();
    let t1 = Instant::now();
    let total: usize = chunks.iter().map(|c| c.tokens.len()).sum();
    let recomputed = match refused {
        Some(_) => {
            session.load_sequential_chunks(&chunks)?;
            total
        }
        None => {
            let picked: Vec<usize> = match percent {
                0 => Vec::new(),
                100.. => (0..total).collect(),
                _ => {
                    let p = ctx.prefix.tokens.len();
                    let scores =
                        recompute::question_attention(session, p..p + total, ctx.question)?;
                    recompute::pick(&scores, percent)
                }
            };
            session.recompute(&chunks, &picked)?;
            picked.len()
        }
    };
    session.eval(ctx.question)?;
    Ok(PrefillTimings {
        load,
        prefill: t1.elapsed(),
        rereading: Duration::ZERO,
        measured: order,
        reread: Vec::new(),
        echo_refused: None,
        shift_refused: refused,
        recomputed,
    })
}

/// The `w` consecutive tokens of `tokens` that hold the most of the
/// question's rare tokens: each distinct question token found in a window
/// counts its BM25 inverse document frequency over `chunks` (a token in
/// every chunk, such as punctuation or "the", counts almost nothing). Among
/// equally good windows the middle one of the first run is taken, so the
/// matches sit in the window's centre, where an answer beside them fits.
/// The whole chunk when it is not longer than `w`.
pub fn best_window(
    tokens: &[TokenId],
    question: &[TokenId],
    chunks: &[&[TokenId]],
    w: usize,
) -> std::ops::Range<usize> {
    if w == 0 || tokens.len() <= w {
        return 0..tokens.len();
    }
    weighted_window(tokens, &question_weights(question, chunks), w)
}

/// [`best_window`] of a chunk longer than `w`, question tokens weighted.
fn weighted_window(
    tokens: &[TokenId],
    weight: &std::collections::HashMap<TokenId, f64>,
    w: usize,
) -> std::ops::Range<usize> {
    // Slide the window one token at a time: a question token adds its
    // weight when its first copy enters, loses it when its last copy
    // leaves; `scores[s]` is the window starting at `s`.
    let mut inside: std::collections::HashMap<TokenId, usize> = Default::default();
    let mut score = 0.0;
    let mut scores = Vec::with_capacity(tokens.len() - w + 1);
    for (end, &t) in tokens.iter().enumerate() {
        if let Some(idf) = weight.get(&t) {
            let c = inside.entry(t).or_insert(0);
            *c += 1;
            if *c == 1 {
                score += idf;
            }
        }
        if end >= w {
            let out = tokens[end - w];
            if let (Some(idf), Some(c)) = (weight.get(&out), inside.get_mut(&out)) {
                *c -= 1;
                if *c == 0 {
                    score -= idf;
                }
            }
        }
        if end + 1 >= w {
            scores.push(score);
        }
    }
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let close = |x: f64| (x - best).abs() <= 1e-9;
    let first = scores.iter().position(|&x| close(x)).unwrap_or(0);
    let run = scores[first..].iter().take_while(|&&x| close(x)).count();
    let start = first + run.saturating_sub(1) / 2;
    start..start + w
}

/// Each distinct question token's BM25 inverse document frequency over
/// `chunks`: what a window of a re-read chunk is scored by.
fn question_weights(
    question: &[TokenId],
    chunks: &[&[TokenId]],
) -> std::collections::HashMap<TokenId, f64> {
    let n = chunks.len() as f64;
    question
        .iter()
        .map(|&t| {
            let df = chunks.iter().filter(|c| c.contains(&t)).count() as f64;
            (t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
        })
        .collect()
}

/// Whether a token's text ends a sentence: `.`, `!` or `?` last; or a
/// line break after one of them (or `:`), or a blank line. A lone line
/// break does not: prose wrapped at a fixed width breaks its lines
/// mid-sentence ("…in their fourth week and join it in⏎their eighth
/// week."), and a window cut there loses the answer.
pub fn ends_sentence(bytes: &[u8]) -> bool {
    if bytes.last().is_some_and(|b| b".!?".contains(b)) {
        return true;
    }
    match bytes.iter().position(|&b| b == b'\n') {
        None => false,
        Some(i) => {
            bytes[i + 1..].contains(&b'\n')
                || bytes[..i]
                    .trim_ascii_end()
                    .last()
                    .is_some_and(|b| b".!?:".contains(b))
        }
    }
}

/// [`best_window`] in whole sentences: the consecutive sentences of
/// `tokens` (split after each token `ends` says closes one), at most `w`
/// tokens in all, holding the most of the question's rare tokens; among
/// equals the longest (more context at no loss of matches), then the
/// first. A sentence longer than `w` is a candidate through
/// its own best window. The whole chunk when it is not longer than `w`.
pub fn best_sentences(
    tokens: &[TokenId],
    question: &[TokenId],
    chunks: &[&[TokenId]],
    w: usize,
    ends: &dyn Fn(TokenId) -> bool,
) -> std::ops::Range<usize> {
    if w == 0 || tokens.len() <= w {
        return 0..tokens.len();
    }
    let weight = question_weights(question, chunks);
    let score = |r: &std::ops::Range<usize>| -> f64 {
        let mut seen = std::collections::HashSet::new();
        tokens[r.clone()]
            .iter()
            .filter(|t| seen.insert(**t))
            .filter_map(|t| weight.get(t))
            .sum()
    };
    let mut starts: Vec<usize> = std::iter::once(0)
        .chain((1..tokens.len()).filter(|&i| ends(tokens[i - 1])))
        .collect();
    starts.push(tokens.len());
    let mut best: Option<(f64, std::ops::Range<usize>)> = None;
    for a in 0..starts.len() - 1 {
        // The most sentences from `a` on that fit, else `a`'s best window.
        let fit = (a + 1..starts.len())
            .take_while(|&b| starts[b] - starts[a] <= w)
            .last();
        let r = match fit {
            Some(b) => starts[a]..starts[b],
            None => {
                let s = starts[a]..starts[a + 1];
                let inner = weighted_window(&tokens[s.clone()], &weight, w);
                s.start + inner.start..s.start + inner.end
            }
        };
        let x = score(&r);
        let better = best
            .as_ref()
            .is_none_or(|(b, br)| x > *b + 1e-9 || ((x - *b).abs() <= 1e-9 && r.len() > br.len()));
        if better {
            best = Some((x, r));
        }
    }
    best.map_or(0..w, |(_, r)| r)
}

/// Answers over `ctx` in `mode`, calling `on_text` with each piece of
/// decoded text; `on_text` returning `false` cancels. An APE mode with
/// `doubt` shows nothing until its first tokens are checked, and ends
/// [`StopReason::Doubted`] when they fail ([`ApeParams::doubt`]).
pub fn generate(
    session: &mut Session<'_>,
    mode: Mode,
    ctx: &Context<'_>,
    options: GenerateOptions,
    on_text: &mut dyn FnMut(&Piece<'_>) -> bool,
) -> Result<Generated, EngineError> {
    let start = Instant::now();
    let timings = prefill(session, mode, ctx)?;
    let doubt = match mode {
        Mode::Ape(p) => p.doubt,
        _ => None,
    };
    let score = options.score.clone();
    let before = match score.is_empty() {
        true => None,
        false => Some((session.position(), session.logits()?.to_vec())),
    };
    let mut g = decode(session, options, doubt, timings, start, on_text)?;
    if let (Some((question_end, first)), false) = (before, g.stop == StopReason::Doubted) {
        session.rewind(question_end)?;
        g.scored = score_continuation(session, &first, &score)?;
    }
    Ok(g)
}

/// The decoding half of [`generate`], after [`prefill`]: samples from the
/// last logits until end of turn, the token limit, or cancellation.
pub fn decode_answer(
    session: &mut Session<'_>,
    options: GenerateOptions,
    prefill: PrefillTimings,
    start: Instant,
    on_text: &mut dyn FnMut(&Piece<'_>) -> bool,
) -> Result<Generated, EngineError> {
    decode(session, options, None, prefill, start, on_text)
}

/// Whether the answer's first tokens, of log-probabilities `logprobs`, are
/// too unsure for `doubt` ([`ApeParams::doubt`]): their mean over the first
/// [`ApeParams::DOUBT_TOKENS`] (all of a shorter answer) is below it. An
/// empty answer is doubted: sequential prefill may find something to say.
pub fn doubted(logprobs: &[f32], doubt: f32) -> bool {
    let first = &logprobs[..logprobs.len().min(ApeParams::DOUBT_TOKENS)];
    first.is_empty() || first.iter().sum::<f32>() / (first.len() as f32) < doubt
}

/// [`decode_answer`] with `mode`'s doubt check ([`generate`]'s decoding).
pub fn decode(
    session: &mut Session<'_>,
    options: GenerateOptions,
    doubt: Option<f32>,
    prefill: PrefillTimings,
    start: Instant,
    on_text: &mut dyn FnMut(&Piece<'_>) -> bool,
) -> Result<Generated, EngineError> {
    if options.attribution {
        session.start_attribution();
    }
    let mut sampler = options.sampling.sampler();
    let mut utf8 = Utf8Stream::default();
    let mut stops = StopScanner::new(options.stops, &options.stop);
    let (mut text, mut tokens, mut logprobs) = (String::new(), Vec::new(), Vec::new());
    // Decoded text so far, before any stop cuts it: where each token begins.
    let mut decoded = 0usize;
    // Held back until the doubt check passes.
    let mut out = Output::new(on_text, doubt.is_some());
    let mut ttft = Duration::ZERO;
    let mut decode_start = Instant::now();
    let mut stop = StopReason::MaxTokens;
    let engine = session.engine();
    while tokens.len() < options.max_tokens {
        let tok = session.sample(&mut sampler)?;
        if tokens.is_empty() {
            ttft = start.elapsed();
            decode_start = Instant::now();
        }
        if engine.is_end(tok) {
            stop = StopReason::EndOfTurn;
            break;
        }
        let logits = session.logits()?;
        let logprob = log_prob(logits, tok) as f32;
        let top = top_logprobs(logits, options.top_logprobs)
            .into_iter()
            .map(|(token, logprob)| Alternative {
                token,
                bytes: engine.token_bytes(token),
                logprob: logprob as f32,
            })
            .collect();
        logprobs.push(logprob);
        tokens.push(tok);
        let bytes = engine.token_bytes(tok);
        let whole = utf8.push(&bytes);
        out.begins(
            decoded,
            TokenLogprob {
                token: tok,
                bytes,
                logprob,
                top,
            },
        );
        decoded += whole.len();
        let (piece, ended) = stops.push(&whole);
        text.push_str(&piece);
        if !out.show(&piece) {
            stop = StopReason::Cancelled;
            break;
        }
        if let (Some(d), true) = (doubt, out.holding()) {
            if tokens.len() >= ApeParams::DOUBT_TOKENS {
                if doubted(&logprobs, d) {
                    stop = StopReason::Doubted;
                    break;
                }
                // Sure: the first text the user sees is shown now.
                ttft = start.elapsed();
                if !out.release() {
                    stop = StopReason::Cancelled;
                    break;
                }
            }
        }
        if ended {
            stop = StopReason::EndOfTurn;
            break;
        }
        if tokens.len() < options.max_tokens {
            session.eval(&[tok])?;
        }
    }
    // Only tokens whose text was shown are reported: none inside a stop.
    let mut cut = stops.ended;
    if !stops.ended && stop != StopReason::Doubted {
        // Bytes of an unfinished character, then whatever was held back.
        let (mut rest, ended) = stops.push(&utf8.finish());
        if ended {
            stop = StopReason::EndOfTurn;
            cut = true;
        } else {
            rest.push_str(&stops.finish());
        }
        text.push_str(&rest);
        if stop != StopReason::Cancelled {
            out.show(&rest);
        }
    }
    if let Some(d) = doubt.filter(|_| out.holding()) {
        // An answer that ended before the check decides on what it has.
        if stop != StopReason::Cancelled && doubted(&logprobs, d) {
            stop = StopReason::Doubted;
        } else if stop != StopReason::Doubted {
            ttft = start.elapsed();
            out.release();
        }
    }
    if !matches!(stop, StopReason::Doubted | StopReason::Cancelled) {
        out.finish(!cut);
    }
    Ok(Generated {
        text,
        tokens,
        stop,
        prefill,
        ttft,
        decode: decode_start.elapsed(),
        attention_shares: session.attention_shares(),
        logprobs,
        scored: Vec::new(),
    })
}

/// What the user is shown of an answer: its text as the stop scanner lets
/// it go (all of it held while a doubt check is pending), each token with
/// the text it begins in.
struct Output<'a> {
    on_text: &'a mut dyn FnMut(&Piece<'_>) -> bool,
    /// Text kept back for the doubt check; `None` once shown.
    held: Option<String>,
    /// Tokens not yet shown, with where their text begins in the answer.
    tokens: std::collections::VecDeque<(usize, TokenLogprob)>,
    /// Bytes of text passed to `on_text`.
    shown: usize,
}

impl<'a> Output<'a> {
    fn new(on_text: &'a mut dyn FnMut(&Piece<'_>) -> bool, hold: bool) -> Self {
        Self {
            on_text,
            held: hold.then(String::new),
            tokens: Default::default(),
            shown: 0,
        }
    }

    fn begins(&mut self, at: usize, token: TokenLogprob) {
        self.tokens.push_back((at, token));
    }

    fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// Passes `piece` on (or holds it); false when the caller cancels.
    fn show(&mut self, piece: &str) -> bool {
        match &mut self.held {
            Some(h) => {
                h.push_str(piece);
                true
            }
            None => self.deliver(piece, false),
        }
    }

    /// The doubt check passed: what it held is shown.
    fn release(&mut self) -> bool {
        let held = self.held.take().unwrap_or_default();
        self.deliver(&held, false)
    }

    /// The answer ended: tokens still unshown are reported with no more
    /// text when `all` (a token that only completed a character, say), and
    /// dropped when a stop text cut them off.
    fn finish(&mut self, all: bool) {
        if all {
            self.deliver("", true);
        }
        self.tokens.clear();
    }

    fn deliver(&mut self, text: &str, all: bool) -> bool {
        self.shown += text.len();
        let n = if all {
            self.tokens.len()
        } else {
            let shown = self.shown;
            self.tokens.iter().take_while(|(at, _)| *at < shown).count()
        };
        if text.is_empty() && n == 0 {
            return true;
        }
        let tokens: Vec<TokenLogprob> = self.tokens.drain(..n).map(|(_, t)| t).collect();
        (self.on_text)(&Piece {
            text,
            tokens: &tokens,
        })
    }
}

/// The `n` most likely tokens under `logits` with their log-probabilities
/// (log-softmax in f64), most likely first, ties by token id.
pub fn top_logprobs(logits: &[f32], n: usize) -> Vec<(TokenId, f64)> {
    let n = n.min(logits.len());
    if n == 0 {
        return Vec::new();
    }
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let log_z = logits
        .iter()
        .map(|&x| (x as f64 - m).exp())
        .sum::<f64>()
        .ln();
    let better = |a: &usize, b: &usize| logits[*b].total_cmp(&logits[*a]).then_with(|| a.cmp(b));
    let mut ids: Vec<usize> = (0..logits.len()).collect();
    ids.select_nth_unstable_by(n - 1, better);
    ids.truncate(n);
    ids.sort_unstable_by(better);
    ids.into_iter()
        .map(|i| (i as TokenId, logits[i] as f64 - m - log_z))
        .collect()
}

/// Log-probability of `target` under `logits` (log-softmax in f64).
pub fn log_prob(logits: &[f32], target: TokenId) -> f64 {
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let z: f64 = logits.iter().map(|&x| (x as f64 - m).exp()).sum();
    logits
        .get(target as usize)
        .map_or(f64::NEG_INFINITY, |&x| x as f64 - m - z.ln())
}

/// Teacher forcing: the log-probability of each of `tokens` following what
/// the session holds, where `first` are the logits after its last token (a
/// copy kept from before an answer was generated and rewound away).
pub fn score_continuation(
    session: &mut Session<'_>,
    first: &[f32],
    tokens: &[TokenId],
) -> Result<Vec<f64>, EngineError> {
    let mut out = Vec::with_capacity(tokens.len());
    for (i, &t) in tokens.iter().enumerate() {
        out.push(if i == 0 {
            log_prob(first, t)
        } else {
            log_prob(session.logits()?, t)
        });
        if i + 1 < tokens.len() {
            session.eval(&[t])?;
        }
    }
    Ok(out)
}

/// Cuts a streamed answer at the first stop text, holding back only what
/// could still become one (a "\n" that may start "\n\n"). The layout's
/// stops count once the answer has begun (leading blank lines are not an
/// answer's end); the caller's own count from the first byte, as OpenAI's
/// `stop` does.
struct StopScanner {
    /// Each stop text, and whether it counts before the answer begins.
    stops: Vec<(String, bool)>,
    held: String,
    /// Where in `held` the answer began (its first non-blank character):
    /// `None` while only blanks were decoded.
    begun: Option<usize>,
    ended: bool,
}

impl StopScanner {
    fn new(layout: &[&str], own: &[String]) -> Self {
        let stops = layout
            .iter()
            .map(|s| (s.to_string(), false))
            .chain(own.iter().map(|s| (s.clone(), true)))
            .filter(|(s, _)| !s.is_empty())
            .collect();
        Self {
            stops,
            held: String::new(),
            begun: None,
            ended: false,
        }
    }

    /// Where in `held` a stop may begin: anywhere for the caller's own,
    /// from the answer's start for the layout's.
    fn from(&self, early: bool) -> Option<usize> {
        if early {
            Some(0)
        } else {
            self.begun
        }
    }

    /// The text that can be shown now, and whether a stop was reached
    /// (nothing after it is ever shown).
    fn push(&mut self, piece: &str) -> (String, bool) {
        if self.ended {
            return (String::new(), true);
        }
        self.held.push_str(piece);
        if self.begun.is_none() {
            self.begun = self.held.find(|c: char| !c.is_whitespace());
        }
        let first = self
            .stops
            .iter()
            .filter_map(|(s, early)| {
                let from = self.from(*early)?;
                self.held[from..].find(s.as_str()).map(|at| from + at)
            })
            .min();
        if let Some(at) = first {
            let out = self.held[..at].to_string();
            self.held.clear();
            self.ended = true;
            return (out, true);
        }
        // The longest tail that is the start of some stop stays held.
        let keep = self
            .held
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &self.held[i..];
                self.stops.iter().any(|(s, early)| {
                    self.from(*early).is_some_and(|from| i >= from) && s.starts_with(tail)
                })
            })
            .unwrap_or(self.held.len());
        let out: String = self.held.drain(..keep).collect();
        self.begun = self.begun.map(|b| b.saturating_sub(keep));
        (out, false)
    }

    /// What is still held when the answer ends without a stop.
    fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

/// Turns a stream of token bytes into text without ever splitting or
/// mangling a multi-byte character that spans tokens.
#[derive(Default, Debug)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Adds bytes; returns the text that is now complete.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: `valid` bytes were just validated.
                    out.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match e.error_len() {
                        None => {
                            self.pending.drain(..valid);
                            return out; // incomplete tail: wait for more bytes
                        }
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// Flushes what is left at the end of the stream.
    pub fn finish(&mut self) -> String {
        let s = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{
        best_sentences, best_window, ends_sentence, ApeParams, Mode, StopScanner, TokenId,
        Utf8Stream,
    };

    #[test]
    fn mode_names_parse_in_one_place_with_ape_settings_filled_in() {
        let ape = ApeParams::new(0.8, 0.7);
        for name in Mode::NAMES {
            let m = Mode::parse(name, ape).expect(name);
            assert_eq!(m.name(), name.trim_end_matches("-t"), "{name}");
        }
        assert_eq!(
            Mode::parse("ape-t", ape),
            Ok(Mode::Ape(ApeParams::new(0.8, 1.0)))
        );
        let Ok(Mode::Ape(w)) = Mode::parse("ape:reread=1:window=48", ape) else {
            panic!("a windowed re-read parses");
        };
        assert_eq!((w.reread, w.window), (1, 48));
        assert!(Mode::Ape(w).to_string().contains("window 48"));
        let Ok(Mode::Ape(s)) = Mode::parse("ape:reread=1:window=48:sentences=1", ape) else {
            panic!("a re-read of whole sentences parses");
        };
        assert!(s.sentences && !w.sentences);
        assert!(Mode::Ape(s).to_string().contains("window 48, sentences"));
        let Ok(Mode::Ape(p)) = Mode::parse("ape:t=1:reread=2", ape) else {
            panic!("an ape spec");
        };
        assert_eq!((p.temperature, p.scale, p.reread), (1.0, 0.7, 2));
        for bad in ["apex", "ape:t", "ape:q=1", "ape:t=0", "ape:sentences=yes"] {
            assert!(Mode::parse(bad, ape).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_best_window_holds_the_questions_rare_tokens_in_its_middle() {
        // 1 and 2 are in every chunk (worth ~nothing); 7 and 8 are rare.
        let chunk: Vec<TokenId> = [vec![1; 20], vec![7, 2, 8], vec![1; 20]].concat();
        let other: Vec<TokenId> = vec![1, 2, 3, 4];
        let all: Vec<&[TokenId]> = vec![&chunk, &other, &other];
        let question = [1, 2, 7, 8, 9];
        let r = best_window(&chunk, &question, &all, 9);
        assert_eq!(r.len(), 9);
        assert!(r.contains(&20) && r.contains(&22), "{r:?}");
        // The matches sit in the middle: 3 tokens of padding on each side.
        assert_eq!(r, 17..26);
        // A token in every chunk does not pull the window.
        let decoy: Vec<TokenId> = [vec![2; 10], vec![5; 10], vec![8], vec![5; 10]].concat();
        let all: Vec<&[TokenId]> = vec![&decoy, &other, &other, &other];
        let r = best_window(&decoy, &[2, 8], &all, 5);
        assert!(r.contains(&20), "{r:?}");
        // Short chunks and a zero window are read whole.
        assert_eq!(best_window(&other, &question, &all, 9), 0..4);
        assert_eq!(best_window(&chunk, &question, &all, 0), 0..chunk.len());
    }

    #[test]
    fn the_best_sentences_are_whole_and_hold_the_questions_rare_tokens() {
        // Token 0 ends a sentence; 1 is in every chunk; 7 and 8 are rare.
        // Sentences: [0..6) [6..10) [10..20) [20..24) [24..30).
        let chunk: Vec<TokenId> = [
            vec![1, 1, 1, 1, 1, 0],
            vec![1, 7, 1, 0],
            vec![1, 1, 1, 1, 1, 1, 1, 1, 8, 0],
            vec![1, 1, 1, 0],
            vec![1, 1, 1, 1, 1, 0],
        ]
        .concat();
        let other: Vec<TokenId> = vec![1, 2, 3, 0];
        let all: Vec<&[TokenId]> = vec![&chunk, &other, &other];
        let ends = |t: TokenId| t == 0;
        let q = [1, 7, 8];
        // 14 tokens: the sentences holding 7 and 8, whole.
        assert_eq!(best_sentences(&chunk, &q, &all, 14, &ends), 6..20);
        // 13: not both; of the equal candidates holding one (0..10, 6..10,
        // 10..20) the longest, then the first.
        assert_eq!(best_sentences(&chunk, &q, &all, 13, &ends), 0..10);
        // Only 8 is asked: 6..20 and 10..24 hold it, as long: the first.
        assert_eq!(best_sentences(&chunk, &[8], &all, 14, &ends), 6..20);
        // A sentence longer than the window: its best window.
        let r = best_sentences(&chunk, &[8], &all, 3, &ends);
        assert!(r.contains(&18) && r.len() == 3, "{r:?}");
        // Short chunks and a zero window are read whole.
        assert_eq!(best_sentences(&other, &q, &all, 9, &ends), 0..4);
        assert_eq!(best_sentences(&chunk, &q, &all, 0, &ends), 0..30);
        assert!(ends_sentence(b" end.") && ends_sentence(b"\n\n") && !ends_sentence(b" Mr"));
        // A wrapped line goes on; a line after a full stop, or a blank
        // line, ends.
        assert!(!ends_sentence(b"\n") && !ends_sentence(b" in\n"));
        assert!(ends_sentence(b".\n") && ends_sentence(b":\n") && ends_sentence(b"\n \n"));
    }

    #[test]
    fn characters_split_across_tokens_come_out_whole() {
        let mut d = Utf8Stream::default();
        let bytes = "héllo → 世界".as_bytes();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&d.push(&[*b]));
        }
        out.push_str(&d.finish());
        assert_eq!(out, "héllo → 世界");
    }

    /// Pieces through a scanner: what is shown, and whether a stop ended it.
    fn scan(layout: &[&str], own: &[&str], pieces: &[&str]) -> (String, bool) {
        let own: Vec<String> = own.iter().map(|s| s.to_string()).collect();
        let mut s = StopScanner::new(layout, &own);
        let mut shown = String::new();
        for p in pieces {
            let (out, e) = s.push(p);
            shown.push_str(&out);
            if e {
                return (shown, true);
            }
        }
        shown.push_str(&s.finish());
        (shown, false)
    }

    #[test]
    fn a_stop_text_ends_the_answer_however_the_tokens_split_it() {
        const STOPS: &[&str] = &["\n\n", "\nQuestion:"];
        let run = |pieces: &[&str]| scan(STOPS, &[], pieces);
        assert_eq!(
            run(&["35 days.", "\n", "\n", "Question"]),
            ("35 days.".into(), true)
        );
        assert_eq!(
            run(&["35", " days.\nQu", "estion: How"]),
            ("35 days.".into(), true)
        );
        // A newline that starts no stop is shown, late but whole.
        assert_eq!(run(&["a\n", "b", "\nQuest"]), ("a\nb\nQuest".into(), false));
        // Blank lines before the answer begins do not end it.
        assert_eq!(run(&["\n\n", "Yes.", "\n\n"]), ("\n\nYes.".into(), true));
        // Without stops, everything passes through at once.
        let mut s = StopScanner::new(&[], &[]);
        assert_eq!(s.push("a\n\n"), ("a\n\n".into(), false));
    }

    /// The caller's own stops (a request's `stop`) work as OpenAI's: from
    /// the first byte, split across tokens, never shown, beside the
    /// layout's; an empty one stops nothing.
    #[test]
    fn a_callers_stop_texts_end_the_answer_from_its_first_byte() {
        let own = |own: &[&str], pieces: &[&str]| scan(&[], own, pieces);
        assert_eq!(
            own(&["END"], &["35 da", "ys E", "ND more"]),
            ("35 days ".into(), true)
        );
        assert_eq!(own(&["\n"], &["\n", "Yes"]), ("".into(), true));
        assert_eq!(own(&["days", "35"], &["35 days"]), ("".into(), true));
        assert_eq!(own(&["END"], &["E", "N", "D"]), ("".into(), true));
        // A start of a stop that does not finish one is shown at the end.
        assert_eq!(own(&["END"], &["35 E", "N"]), ("35 EN".into(), false));
        assert_eq!(own(&["é!"], &["caf", "é", "?"]), ("café?".into(), false));
        assert_eq!(own(&[""], &["a", "b"]), ("ab".into(), false));
        // The layout's "\n\n" still waits for the answer to begin; a
        // caller's stop made of blanks does not.
        assert_eq!(
            scan(&["\n\n"], &["\n\nX"], &["\n\n", "Y\n\n"]),
            ("\n\nY".into(), true)
        );
        assert_eq!(
            scan(&["\n\n"], &["\n\nX"], &["\n\n", "X"]),
            ("".into(), true)
        );
    }

    /// The top tokens are what sorting every logit finds, as
    /// log-probabilities that sum (over the vocabulary) to one.
    #[test]
    fn top_logprobs_are_the_best_tokens_by_log_softmax() {
        let logits: Vec<f32> = (0..1000)
            .map(|i| ((i * 7919) % 1000) as f32 / 97.0 - 3.0)
            .chain([9.0, 9.0])
            .collect();
        let top = super::top_logprobs(&logits, 5);
        let mut sorted: Vec<usize> = (0..logits.len()).collect();
        sorted.sort_by(|&a, &b| {
            logits[b]
                .partial_cmp(&logits[a])
                .expect("finite")
                .then(a.cmp(&b))
        });
        assert_eq!(
            top.iter().map(|&(t, _)| t as usize).collect::<Vec<_>>(),
            sorted[..5]
        );
        assert_eq!(top[0].0, 1000, "a tie goes to the lower id");
        for &(t, lp) in &top {
            assert!((lp - super::log_prob(&logits, t)).abs() < 1e-12);
        }
        let total: f64 = (0..logits.len())
            .map(|t| super::log_prob(&logits, t as TokenId).exp())
            .sum();
        assert!((total - 1.0).abs() < 1e-9);
        assert!(super::top_logprobs(&logits, 0).is_empty());
        assert_eq!(super::top_logprobs(&[0.0, 1.0], 20).len(), 2);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut d = Utf8Stream::default();
        assert_eq!(d.push(b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(d.push(b"\xe4\xb8"), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }
}
