//! Answering one record in several modes over the same chunks, prefix and
//! question tokens (only how the chunks are encoded differs), scoring the
//! answers and the gold answer's likelihood, and comparing modes.

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::datasets::Record;
use super::score::score;
use super::stats::{bootstrap, paired_difference, ratio_of_means, Clusters, Estimate};
use crate::engine::generate::{decode, prefill, score_continuation, Context, StopReason};
use crate::engine::{
    ApeParams, ChunkState, EngineError, GenerateOptions, Mode, Sampling, Session, StateFormat,
    TokenId,
};
use crate::states::States;

/// Everything a row was made with besides its mode: the model, the prompt
/// and the answer length. Rows with different stamps are never compared,
/// summarised together or reused for one another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Identity of the model file (see `ModelId`).
    pub model: String,
    /// Identity of the prefix tokens: system prompt, chat template and
    /// newline padding together.
    pub prefix: String,
    /// The system prompt and padding that made the prefix, for people.
    pub system_prompt: String,
    pub prefix_newlines: usize,
    /// Instruction appended to every question ("" for none).
    pub style: String,
    pub max_tokens: usize,
    /// How chunk states were stored and read back (rows from before the
    /// compact format were made with f16 states).
    #[serde(default = "f16_states")]
    pub states: StateFormat,
    /// How modes are run ([`METHOD`]): rows made by an earlier method
    /// measured something else under the same name.
    #[serde(default = "first_method")]
    pub method: u32,
}

/// The evaluation method, raised whenever a change makes a mode's rows
/// incomparable with earlier ones. 2: `sequential` reads the chunks best
/// last (method 1 read them in the record's stored order, now
/// `sequential-stored`).
pub const METHOD: u32 = 2;

fn f16_states() -> StateFormat {
    StateFormat::F16
}

fn first_method() -> u32 {
    1
}

impl Stamp {
    /// The stamp of rows made with `states` and these settings.
    pub fn new(
        states: &States<'_>,
        system_prompt: &str,
        prefix_newlines: usize,
        style: &str,
        max_tokens: usize,
    ) -> Self {
        let states_format = states.store.format();
        Self {
            model: states.engine.info().id.to_string(),
            prefix: states
                .prefix
                .id()
                .0
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            system_prompt: system_prompt.to_string(),
            prefix_newlines,
            style: style.to_string(),
            max_tokens,
            states: states_format,
            method: METHOD,
        }
    }
}

/// One record answered in one mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub id: String,
    /// The record's source (its article): records of one source are
    /// resampled together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The record's content hash ([`Record::fingerprint`]): a row answers
    /// this exact question, contexts and answers, and is not reused once
    /// the record changes.
    #[serde(default)]
    pub record: String,
    /// The build that made the row ([`super::code_version`]), for the
    /// record; rows from other builds are reused unless [`METHOD`] moved.
    #[serde(default)]
    pub code: String,
    pub mode: String,
    /// APE's settings (absent in the other modes): a resumed run only
    /// reuses rows made with the same values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ape: Option<ApeParams>,
    pub settings: Stamp,
    pub answer: String,
    pub em: f64,
    pub f1: f64,
    pub contains: f64,
    /// Tokens of the gold answer (the record's first), teacher-forced after
    /// the question; 0 for unanswerable records.
    pub gold_tokens: usize,
    /// Log-probability of the whole gold answer.
    pub answer_logprob: Option<f64>,
    /// Mean negative log-likelihood per gold-answer token (nats).
    pub answer_nll: Option<f64>,
    pub ttft_ms: f64,
    pub decode_tokens_per_s: f64,
    /// Per chunk, in the record's order, its share of the attention the
    /// answer paid to the chunks (as `--ask --json` gives it; absent in rows
    /// made before eval measured it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<Vec<f64>>,
    /// Where the answer is read from ([`answer_chunk`]), for scoring
    /// attribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_chunk: Option<usize>,
    /// The chunk retrieval ranks first (BM25), what shares are compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval_first: Option<usize>,
}

impl Prediction {
    /// Whether this row was made in `mode` (with the same APE settings).
    pub fn is(&self, mode: Mode) -> bool {
        self.mode == mode.name() && self.ape == ape_params(mode)
    }
}

fn ape_params(mode: Mode) -> Option<ApeParams> {
    match mode {
        Mode::Ape(p) => Some(p),
        _ => None,
    }
}

/// A record's chunk states and tokens, ready to be answered in any mode.
pub struct Prepared {
    pub id: String,
    pub fingerprint: String,
    pub group: Option<String>,
    pub answers: Vec<String>,
    /// See [`Record::parts`].
    pub parts: Vec<Vec<String>>,
    /// Chunk states encoded after the prefix, in the record's order.
    pub states: Vec<ChunkState>,
    /// The same chunks encoded alone (PCW), when asked for.
    pub alone: Vec<ChunkState>,
    /// Chunk indices, best BM25 match for the question first.
    pub ranking: Vec<usize>,
    pub question: Vec<TokenId>,
    /// The first gold answer's tokens (empty when unanswerable).
    pub gold: Vec<TokenId>,
    /// See [`Prediction::answer_chunk`].
    pub answer_chunk: Option<usize>,
}

impl Prepared {
    fn context<'a>(
        &'a self,
        states: &'a States<'_>,
        mode: Mode,
        chunks: &'a mut Vec<&'a ChunkState>,
    ) -> Context<'a> {
        let from = if mode.chunks_alone() == Some(true) {
            &self.alone
        } else {
            &self.states
        };
        chunks.extend(from.iter());
        Context {
            prefix: &states.prefix,
            chunks,
            ranking: &self.ranking,
            question: &self.question,
        }
    }
}

/// Tokenizes `record` (its question followed by `style`, if any) and loads
/// (or encodes and caches) its chunk states; `alone` also the states the
/// PCW mode reads.
pub fn prepare(
    states: &States<'_>,
    session: &mut Session<'_>,
    record: &Record,
    style: &str,
    alone: bool,
) -> Result<Prepared, EngineError> {
    let mut shared = Vec::with_capacity(record.contexts.len());
    let mut by_itself = Vec::new();
    for text in &record.contexts {
        let tokens = states.chunk_tokens(text);
        if alone {
            by_itself.push(states.chunk(session, tokens.clone(), true)?.0);
        }
        shared.push(states.chunk(session, tokens, false)?.0);
    }
    let question = match style.trim() {
        "" => record.question.trim().to_string(),
        s => format!("{} {s}", record.question.trim()),
    };
    Ok(Prepared {
        id: record.id.clone(),
        fingerprint: record.fingerprint(),
        group: record.group.clone(),
        answers: record.answers.clone(),
        parts: record.parts.clone(),
        states: shared,
        alone: by_itself,
        ranking: super::rank::bm25(&record.question, &record.contexts),
        question: states.question(&question),
        gold: record
            .answers
            .first()
            .map(|a| states.engine.tokenize(a.trim()))
            .unwrap_or_default(),
        answer_chunk: answer_chunk(record),
    })
}

/// The context the question was written from, when the record says;
/// else the one context that contains a gold answer (as [`score`] matches:
/// case and punctuation aside), if exactly one does; none for an answer in
/// parts (it needs several).
pub fn answer_chunk(record: &Record) -> Option<usize> {
    if let Some(i) = record.gold_context.filter(|&i| i < record.contexts.len()) {
        return Some(i);
    }
    if !record.parts.is_empty() {
        return None;
    }
    let mut holding = record.contexts.iter().enumerate().filter(|(_, c)| {
        record
            .answers
            .iter()
            .any(|a| super::score::contains(c, a) > 0.0)
    });
    match (holding.next(), holding.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// Answers `record` greedily in each of `modes`, and scores its gold answer.
/// Chunk states come from (and go to) the store of `states`.
pub fn evaluate(
    states: &States<'_>,
    record: &Record,
    modes: &[Mode],
    stamp: &Stamp,
) -> Result<Vec<Prediction>, EngineError> {
    let mut s = states.engine.session()?;
    let alone = modes.iter().any(|m| m.chunks_alone() == Some(true));
    let p = prepare(states, &mut s, record, &stamp.style, alone)?;
    modes
        .iter()
        .map(|&mode| answer(states, &mut s, &p, mode, stamp))
        .collect()
}

/// One mode: prefill, generate greedily, then rewind to the question's end
/// and teacher-force the gold answer from the question's saved logits
/// (bit-identical to scoring after a fresh prefill, at no second prefill).
pub fn answer(
    states: &States<'_>,
    s: &mut Session<'_>,
    p: &Prepared,
    mode: Mode,
    stamp: &Stamp,
) -> Result<Prediction, EngineError> {
    let mut chunks = Vec::new();
    let ctx = p.context(states, mode, &mut chunks);
    // The answer starts by reading its states from the store, as `--ask`
    // does, and answers from what it read: a state file gone missing is an
    // error, not an understated time to first token.
    let start = Instant::now();
    let from_disk = match mode.chunks_alone() {
        Some(alone) => ctx
            .chunks
            .iter()
            .map(|c| {
                let path = states.store.path(&states.key(c.tokens(), alone));
                ChunkState::load(&path, states.after(alone))
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let read: Vec<&ChunkState> = from_disk.iter().collect();
    let ctx = if read.is_empty() {
        ctx
    } else {
        Context {
            chunks: &read,
            ..ctx
        }
    };
    let timings = prefill(s, mode, &ctx)?;
    let question_end = s.position();
    let first = s.logits()?.to_vec();
    let options = GenerateOptions {
        max_tokens: stamp.max_tokens,
        sampling: Sampling::Greedy,
        // Measured on the answer's tokens, after the first: neither the
        // time to it nor any logit changes.
        attribution: true,
        stops: states.layout.stops(),
        ..GenerateOptions::default()
    };
    let doubt = match mode {
        Mode::Ape(a) => a.doubt,
        _ => None,
    };
    let g = decode(s, options, doubt, timings, start, &mut |_| true)?;
    if g.stop == StopReason::Doubted {
        // As `--ask` does: sequential prefill answers, the first try's
        // time counted; the row stays this mode's.
        let first_try = start.elapsed();
        let again = answer(states, s, p, Mode::Sequential, stamp)?;
        return Ok(Prediction {
            mode: mode.name().to_string(),
            ape: ape_params(mode),
            ttft_ms: first_try.as_secs_f64() * 1e3 + again.ttft_ms,
            ..again
        });
    }
    let shares = g.attention_shares.as_ref().map(|shares| {
        g.prefill
            .shares_by_chunk(shares, p.states.len())
            .into_iter()
            .map(|x| x.unwrap_or(0.0))
            .collect()
    });
    s.rewind(question_end)?;
    let (answer_logprob, answer_nll) = gold_likelihood(s, &first, &p.gold)?;
    let (em, f1, contains) = score(&g.text, &p.answers, &p.parts);
    Ok(Prediction {
        id: p.id.clone(),
        group: p.group.clone(),
        record: p.fingerprint.clone(),
        code: super::code_version().to_string(),
        mode: mode.name().to_string(),
        ape: ape_params(mode),
        settings: stamp.clone(),
        answer: g.text.trim().to_string(),
        em,
        f1,
        contains,
        gold_tokens: p.gold.len(),
        answer_logprob,
        answer_nll,
        ttft_ms: g.ttft.as_secs_f64() * 1e3,
        decode_tokens_per_s: g.decode_tokens_per_s(),
        shares,
        answer_chunk: p.answer_chunk,
        retrieval_first: p.ranking.first().copied(),
    })
}

/// The gold answer's mean NLL per token in `mode`, without generating:
/// what calibration on labelled data minimises.
pub fn gold_nll(
    states: &States<'_>,
    s: &mut Session<'_>,
    p: &Prepared,
    mode: Mode,
) -> Result<Option<f64>, EngineError> {
    let mut chunks = Vec::new();
    let ctx = p.context(states, mode, &mut chunks);
    prefill(s, mode, &ctx)?;
    let first = s.logits()?.to_vec();
    Ok(gold_likelihood(s, &first, &p.gold)?.1)
}

/// Log-probability of `gold` and its mean NLL per token (None if empty).
fn gold_likelihood(
    s: &mut Session<'_>,
    first: &[f32],
    gold: &[TokenId],
) -> Result<(Option<f64>, Option<f64>), EngineError> {
    if gold.is_empty() {
        return Ok((None, None));
    }
    let logprob: f64 = score_continuation(s, first, gold)?.iter().sum();
    Ok((Some(logprob), Some(-logprob / gold.len() as f64)))
}

/// `s` cut to `n` characters, with an ellipsis when cut.
pub fn shorten(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Per-mode averages.
#[derive(Clone, Debug, Serialize)]
pub struct ModeSummary {
    pub mode: String,
    /// The mode with its settings, e.g. `ape (T=0.9, S=1)`.
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ape: Option<ApeParams>,
    pub records: usize,
    pub em: f64,
    pub f1: f64,
    pub contains: f64,
    /// Mean over answerable records of the per-token gold-answer NLL.
    pub answer_nll: f64,
    /// Mean gold-answer log-probability.
    pub answer_logprob: f64,
    pub ttft_ms_mean: f64,
    pub ttft_ms_median: f64,
    pub decode_tokens_per_s: f64,
}

/// Summary of the predictions made in `mode`.
pub fn summarize(predictions: &[Prediction], mode: Mode) -> ModeSummary {
    let p: Vec<&Prediction> = predictions.iter().filter(|p| p.is(mode)).collect();
    let mean = |xs: Vec<f64>| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let of = |f: fn(&Prediction) -> f64| mean(p.iter().map(|x| f(x)).collect());
    let of_gold = |f: fn(&Prediction) -> Option<f64>| mean(p.iter().filter_map(|x| f(x)).collect());
    let mut ttft: Vec<f64> = p.iter().map(|x| x.ttft_ms).collect();
    ttft.sort_by(f64::total_cmp);
    ModeSummary {
        mode: mode.name().to_string(),
        label: mode.to_string(),
        ape: ape_params(mode),
        records: p.len(),
        em: of(|x| x.em),
        f1: of(|x| x.f1),
        contains: of(|x| x.contains),
        answer_nll: of_gold(|x| x.answer_nll),
        answer_logprob: of_gold(|x| x.answer_logprob),
        ttft_ms_mean: of(|x| x.ttft_ms),
        ttft_ms_median: ttft.get(ttft.len() / 2).copied().unwrap_or(0.0),
        decode_tokens_per_s: of(|x| x.decode_tokens_per_s),
    }
}

/// Mode `a` against mode `b` on the records both answered: mean per-record
/// differences `a − b` with bootstrap 95 % intervals.
#[derive(Clone, Debug, Serialize)]
pub struct Paired {
    pub a: String,
    pub b: String,
    /// The modes with their settings.
    pub a_label: String,
    pub b_label: String,
    pub records: usize,
    pub f1: Estimate,
    pub em: Estimate,
    /// Whether the answer contains a gold answer: format-independent, so it
    /// shows a wrong fact where F1 mostly shows a longer sentence.
    pub contains: Estimate,
    /// Over answerable records; positive means `a` finds the gold answer
    /// less likely.
    pub answer_nll: Estimate,
    /// "better", "worse" or "not significant", for `a`.
    pub f1_verdict: &'static str,
    pub contains_verdict: &'static str,
    pub nll_verdict: &'static str,
}

/// How much of the baseline's quality `mode` keeps: ratios of means with
/// bootstrap 95 % intervals.
#[derive(Clone, Debug, Serialize)]
pub struct Retention {
    pub mode: String,
    pub label: String,
    pub baseline: String,
    pub records: usize,
    pub f1: Estimate,
    /// Mean gold-answer likelihood per token, exp(−NLL), relative.
    pub likelihood: Estimate,
}

/// Every pair of `modes` (later against earlier, so with the default order
/// APE is compared against sequential and parallel) and each mode's
/// retention against the first.
pub fn compare(predictions: &[Prediction], modes: &[Mode]) -> (Vec<Paired>, Vec<Retention>) {
    let mut pairs = Vec::new();
    let mut retention = Vec::new();
    for (j, &a) in modes.iter().enumerate() {
        for &b in &modes[..j] {
            let both = matched(predictions, a, b);
            let col = |f: fn(&Prediction) -> f64, k: usize| -> Vec<f64> {
                both.iter().map(|p| f(p[k])).collect()
            };
            let gold: Vec<_> = both
                .iter()
                .filter_map(|p| Some((p[0].answer_nll?, p[1].answer_nll?, p[0])))
                .collect();
            let (nll_a, nll_b): (Vec<f64>, Vec<f64>) =
                gold.iter().map(|(a, b, _)| (*a, *b)).unzip();
            let all = clusters(both.iter().map(|p| p[0]));
            let answerable = clusters(gold.iter().map(|(_, _, p)| *p));
            let f1 = paired_difference(&col(|p| p.f1, 0), &col(|p| p.f1, 1), &all);
            let contains =
                paired_difference(&col(|p| p.contains, 0), &col(|p| p.contains, 1), &all);
            let nll = paired_difference(&nll_a, &nll_b, &answerable);
            pairs.push(Paired {
                a: a.name().into(),
                b: b.name().into(),
                a_label: a.to_string(),
                b_label: b.to_string(),
                records: both.len(),
                f1,
                em: paired_difference(&col(|p| p.em, 0), &col(|p| p.em, 1), &all),
                contains,
                answer_nll: nll,
                f1_verdict: verdict(f1, true),
                contains_verdict: verdict(contains, true),
                nll_verdict: verdict(nll, false),
            });
            if Some(&b) == modes.first() {
                let lik = |v: &[f64]| v.iter().map(|x| (-x).exp()).collect::<Vec<_>>();
                retention.push(Retention {
                    mode: a.name().into(),
                    label: a.to_string(),
                    baseline: b.name().into(),
                    records: both.len(),
                    f1: ratio_of_means(&col(|p| p.f1, 0), &col(|p| p.f1, 1), &all),
                    likelihood: ratio_of_means(&lik(&nll_a), &lik(&nll_b), &answerable),
                });
            }
        }
    }
    (pairs, retention)
}

/// Whether a mode's attention shares point at the answer: how often its
/// largest share falls on the chunk that holds the answer, against how
/// often retrieval's first chunk is that chunk, on the same records.
#[derive(Clone, Debug, Serialize)]
pub struct AttributionScore {
    pub label: String,
    /// Records with shares and a known answer chunk.
    pub records: usize,
    /// Clusters (articles) the intervals resample.
    pub clusters: usize,
    /// Fraction whose largest share is on the answer's chunk.
    pub top_share: Estimate,
    /// Fraction whose retrieval-first chunk is the answer's chunk.
    pub retrieval_first: Estimate,
    /// `top_share − retrieval_first`, paired by record.
    pub difference: Estimate,
    /// "better", "worse" or "not significant", for the shares.
    pub verdict: &'static str,
}

/// [`AttributionScore`] for each of `modes` that has rows with shares.
pub fn attribution(predictions: &[Prediction], modes: &[Mode]) -> Vec<AttributionScore> {
    modes
        .iter()
        .filter_map(|&m| {
            let mut rows: Vec<(&Prediction, f64, f64)> = predictions
                .iter()
                .filter(|p| p.is(m))
                .filter_map(|p| {
                    let gold = p.answer_chunk?;
                    let top = argmax(p.shares.as_deref()?)?;
                    let first = p.retrieval_first?;
                    let hit = |i: usize| f64::from(u8::from(i == gold));
                    Some((p, hit(top), hit(first)))
                })
                .collect();
            if rows.is_empty() {
                return None;
            }
            rows.sort_by(|x, y| x.0.id.cmp(&y.0.id));
            rows.dedup_by(|x, y| x.0.id == y.0.id);
            let all = clusters(rows.iter().map(|r| r.0));
            let (top, first): (Vec<f64>, Vec<f64>) = rows.iter().map(|r| (r.1, r.2)).unzip();
            let mean = |v: &[f64]| {
                bootstrap(&all, |ix| {
                    ix.iter().map(|&i| v[i]).sum::<f64>() / ix.len() as f64
                })
            };
            let difference = paired_difference(&top, &first, &all);
            Some(AttributionScore {
                label: m.to_string(),
                records: rows.len(),
                clusters: all.len(),
                top_share: mean(&top),
                retrieval_first: mean(&first),
                difference,
                verdict: verdict(difference, true),
            })
        })
        .collect()
}

/// Index of the largest value (the first of equals); `None` when empty.
fn argmax(xs: &[f64]) -> Option<usize> {
    xs.iter()
        .enumerate()
        .fold(None, |best: Option<(usize, f64)>, (i, &x)| match best {
            Some((_, b)) if b >= x => best,
            _ => Some((i, x)),
        })
        .map(|(i, _)| i)
}

/// One mode's rows made with compact states against the same mode's rows
/// made with f16 states: what storing states compactly costs.
#[derive(Clone, Debug, Serialize)]
pub struct FormatDelta {
    pub label: String,
    pub records: usize,
    /// Clusters (articles) the interval resamples.
    pub clusters: usize,
    /// Mean `compact − f16` answer NLL per token, over answerable records.
    pub answer_nll: Estimate,
    pub contains: Estimate,
    pub f1: Estimate,
}

/// For each of `modes`, `rows` (one stamp) against `other` (the same
/// settings but another state format), paired by record.
pub fn compare_formats(
    rows: &[Prediction],
    other: &[Prediction],
    modes: &[Mode],
) -> Vec<FormatDelta> {
    modes
        .iter()
        .filter(|m| m.chunks_alone().is_some())
        .map(|&m| {
            let theirs: HashMap<&str, &Prediction> = other
                .iter()
                .filter(|p| p.is(m))
                .map(|p| (p.id.as_str(), p))
                .collect();
            let mut both: Vec<[&Prediction; 2]> = rows
                .iter()
                .filter(|p| p.is(m))
                .filter_map(|p| Some([p, *theirs.get(p.id.as_str())?]))
                .collect();
            both.sort_by(|x, y| x[0].id.cmp(&y[0].id));
            both.dedup_by(|x, y| x[0].id == y[0].id);
            let col = |f: fn(&Prediction) -> f64, k: usize| -> Vec<f64> {
                both.iter().map(|p| f(p[k])).collect()
            };
            let gold: Vec<_> = both
                .iter()
                .filter_map(|p| Some((p[0].answer_nll?, p[1].answer_nll?, p[0])))
                .collect();
            let (a, b): (Vec<f64>, Vec<f64>) = gold.iter().map(|(a, b, _)| (*a, *b)).unzip();
            let all = clusters(both.iter().map(|p| p[0]));
            FormatDelta {
                label: m.to_string(),
                records: both.len(),
                clusters: all.len(),
                answer_nll: paired_difference(&a, &b, &clusters(gold.iter().map(|g| g.2))),
                contains: paired_difference(&col(|p| p.contains, 0), &col(|p| p.contains, 1), &all),
                f1: paired_difference(&col(|p| p.f1, 0), &col(|p| p.f1, 1), &all),
            }
        })
        .collect()
}

/// The clusters of `rows` in order: by source, or each record alone when
/// it has none.
fn clusters<'p>(rows: impl Iterator<Item = &'p Prediction>) -> Clusters {
    let keys: Vec<&str> = rows.map(|p| p.group.as_deref().unwrap_or(&p.id)).collect();
    Clusters::of(&keys)
}

/// Predictions of `a` and `b` for each record both answered, in a stable
/// (record id) order.
fn matched(predictions: &[Prediction], a: Mode, b: Mode) -> Vec<[&Prediction; 2]> {
    let of_b: HashMap<&str, &Prediction> = predictions
        .iter()
        .filter(|p| p.is(b))
        .map(|p| (p.id.as_str(), p))
        .collect();
    let mut both: Vec<_> = predictions
        .iter()
        .filter(|p| p.is(a))
        .filter_map(|p| Some([p, *of_b.get(p.id.as_str())?]))
        .collect();
    both.sort_by(|x, y| x[0].id.cmp(&y[0].id));
    both.dedup_by(|x, y| x[0].id == y[0].id);
    both
}

fn verdict(e: Estimate, higher_is_better: bool) -> &'static str {
    use std::cmp::Ordering::*;
    match (e.side_of(0.0), higher_is_better) {
        (Equal, _) => "not significant",
        (Greater, true) | (Less, false) => "better",
        _ => "worse",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APE: Mode = Mode::Ape(ApeParams::DEFAULT);

    fn pred(id: &str, mode: Mode, f1: f64, nll: f64, ttft: f64) -> Prediction {
        Prediction {
            id: id.into(),
            group: None,
            record: String::new(),
            code: String::new(),
            mode: mode.name().into(),
            ape: ape_params(mode),
            settings: Stamp {
                model: "m".into(),
                prefix: "p".into(),
                system_prompt: String::new(),
                prefix_newlines: 0,
                style: String::new(),
                max_tokens: 8,
                states: StateFormat::Compact,
                method: METHOD,
            },
            answer: String::new(),
            em: f1.round(),
            f1,
            contains: f1.round(),
            gold_tokens: 2,
            answer_logprob: Some(-2.0 * nll),
            answer_nll: Some(nll),
            ttft_ms: ttft,
            decode_tokens_per_s: 10.0,
            shares: None,
            answer_chunk: None,
            retrieval_first: None,
        }
    }

    #[test]
    fn summaries_are_per_mode_and_per_ape_setting() {
        let other = Mode::Ape(ApeParams::IDENTITY);
        let p = [
            pred("a", APE, 1.0, 0.5, 10.0),
            pred("b", APE, 0.0, 1.5, 30.0),
            pred("c", APE, 1.0, 1.0, 20.0),
            pred("a", other, 0.0, 9.0, 99.0),
            pred("a", Mode::Sequential, 0.0, 2.0, 99.0),
        ];
        let s = summarize(&p, APE);
        assert_eq!(s.records, 3);
        assert!((s.em - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.answer_nll - 1.0).abs() < 1e-12);
        assert!((s.answer_logprob + 2.0).abs() < 1e-12);
        assert_eq!(s.ttft_ms_median, 20.0);
        assert_eq!(summarize(&p, Mode::Sequential).records, 1);
        assert_eq!(summarize(&p, other).answer_nll, 9.0);
    }

    #[test]
    fn attribution_counts_top_shares_and_retrieval_firsts_on_the_answer_chunk() {
        // 20 articles of 2 records: the answer sits in chunk 1; retrieval
        // puts it first in 3 records of 4; the largest share is on it in
        // every record but those where chunk 0 and 1 tie (the first wins)
        // and one of every 5 articles.
        let mut p = Vec::new();
        let mut want = (0.0, 0.0);
        for i in 0..40 {
            let mut r = pred(&format!("r{i:02}"), APE, 1.0, 1.0, 1.0);
            r.group = Some(format!("article {}", i / 2));
            r.answer_chunk = Some(1);
            r.retrieval_first = Some(if i % 4 == 0 { 2 } else { 1 });
            r.shares = Some(match i {
                _ if i % 10 == 0 => vec![0.4, 0.4, 0.2],
                _ if i % 10 == 1 => vec![0.6, 0.3, 0.1],
                _ => vec![0.2, 0.5, 0.3],
            });
            want.0 += f64::from(u8::from(i % 10 >= 2)) / 40.0;
            want.1 += f64::from(u8::from(i % 4 != 0)) / 40.0;
            p.push(r);
        }
        // Left out: no single answer chunk; no shares; another mode.
        let mut r = pred("x", APE, 1.0, 1.0, 1.0);
        r.shares = Some(vec![1.0]);
        r.retrieval_first = Some(0);
        p.push(r);
        let mut r = pred("y", APE, 1.0, 1.0, 1.0);
        r.answer_chunk = Some(0);
        r.retrieval_first = Some(0);
        p.push(r);
        let a = attribution(&p, &[Mode::Sequential, APE]);
        assert_eq!(a.len(), 1, "sequential has no rows with shares");
        let a = &a[0];
        assert_eq!((a.records, a.clusters), (40, 20));
        assert!((a.top_share.value - want.0).abs() < 1e-12, "{a:?}");
        assert!((a.top_share.value - 0.8).abs() < 1e-12);
        assert!((a.retrieval_first.value - want.1).abs() < 1e-12);
        assert!((a.difference.value - 0.05).abs() < 1e-12);
        assert!(a.top_share.lo <= 0.8 && 0.8 <= a.top_share.hi);
        assert_eq!(a.verdict, "not significant");
    }

    #[test]
    fn the_answer_chunk_is_the_only_context_holding_a_gold_answer() {
        let record = |contexts: &[&str]| Record {
            id: "r".into(),
            question: "Where?".into(),
            contexts: contexts.iter().map(|c| c.to_string()).collect(),
            answers: vec!["Paris, France".into(), "Paris".into()],
            group: None,
            gold_context: None,
            parts: Vec::new(),
        };
        assert_eq!(answer_chunk(&record(&["in Lyon", "to PARIS."])), Some(1));
        let in_parts = Record {
            parts: vec![vec!["Paris".into()], vec!["Lyon".into()]],
            ..record(&["in Lyon", "to PARIS."])
        };
        assert_eq!(answer_chunk(&in_parts), None, "no one chunk holds it");
        assert_ne!(
            in_parts.fingerprint(),
            record(&["in Lyon", "to PARIS."]).fingerprint(),
            "parts change the score"
        );
        assert_eq!(answer_chunk(&record(&["Parisian", "in Lyon"])), None);
        assert_eq!(answer_chunk(&record(&["Paris", "paris, france"])), None);
        let told = Record {
            gold_context: Some(0),
            ..record(&["Paris", "paris, france"])
        };
        assert_eq!(answer_chunk(&told), Some(0));
        assert_ne!(told.fingerprint(), record(&["Paris"]).fingerprint());
        assert_eq!(
            told.fingerprint(),
            record(&["Paris", "paris, france"]).fingerprint(),
            "where the answer is changes no answer or score"
        );
    }

    #[test]
    fn paired_comparison_and_retention() {
        // APE finds every gold answer 0.1 nats/token less likely and loses
        // F1 on one record in four.
        let mut p = Vec::new();
        for i in 0..40 {
            let id = format!("r{i:02}");
            let nll = 1.0 + (i % 7) as f64 * 0.3;
            p.push(pred(&id, Mode::Sequential, 1.0, nll, 1.0));
            p.push(pred(
                &id,
                APE,
                if i % 4 == 0 { 0.0 } else { 1.0 },
                nll + 0.1,
                1.0,
            ));
        }
        p.push(pred("only-ape", APE, 0.0, 9.0, 1.0));
        let (pairs, retention) = compare(&p, &[Mode::Sequential, APE]);
        assert_eq!(pairs.len(), 1);
        let d = &pairs[0];
        assert_eq!(
            (d.a.as_str(), d.b.as_str(), d.records),
            ("ape", "sequential", 40)
        );
        assert!((d.answer_nll.value - 0.1).abs() < 1e-12);
        assert!((d.f1.value + 0.25).abs() < 1e-12);
        assert_eq!((d.nll_verdict, d.f1_verdict), ("worse", "worse"));
        let r = &retention[0];
        assert!((r.f1.value - 0.75).abs() < 1e-12);
        assert!(r.f1.lo < 0.75 && 0.75 < r.f1.hi);
        assert!(r.likelihood.value < 1.0 && r.likelihood.hi < 1.0);
    }
}
