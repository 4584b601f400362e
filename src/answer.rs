//! Question → hybrid retrieval → cached KV states → answer with sources. The
//! library API every front end reaches (directly, or through the folder
//! service); no terminal code here.
//!
//! A question can follow earlier turns of a conversation. Retrieval then
//! fuses two rankings: the question alone, and the question with the most
//! recent turns (a follow-up's "it" or "and when…" finds its subject
//! there, while a change of subject still finds its own chunks). In the
//! prompt, the earlier turns sit after the chunks and before the question,
//! prefilled with it, newest kept within [`HISTORY_TOKENS`]:
//! `prefix · chunks · Question₁ · answer₁ · … · question`.

use std::time::{Duration, Instant};

use crate::engine::generate::Context;
use crate::engine::{generate, ApeParams, ChunkState, GenerateOptions, Generated, Mode};
use crate::index::dense::Embedder;
use crate::index::manifest::ChunkRecord;
use crate::index::{FolderIndex, Hit, IndexError, Retrieval};
use crate::states::{StateReads, States};

/// Speed against faithfulness to sequential prefill, as a user chooses it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    /// APE over cached states: the fastest answer.
    Fast,
    /// APE, and the best-ranked chunk re-read before the question: most of
    /// the gap to sequential prefill closed for one chunk's prefill.
    #[default]
    Balanced,
    /// Sequential prefill of every chunk: the baseline, slowest.
    Exact,
}

impl Quality {
    /// Chunks `balanced` re-reads unless told otherwise.
    pub const BALANCED_REREAD: u32 = 1;

    /// The mode this quality answers in, from the APE settings in effect
    /// (`reread_set`: whether a re-read count was configured explicitly).
    pub fn mode(self, ape: ApeParams, reread_set: bool) -> Mode {
        match self {
            Quality::Exact => Mode::Sequential,
            Quality::Fast => Mode::Ape(ApeParams { reread: 0, ..ape }),
            Quality::Balanced if reread_set => Mode::Ape(ape),
            Quality::Balanced => Mode::Ape(ApeParams {
                reread: Self::BALANCED_REREAD,
                ..ape
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Quality::Fast => "fast",
            Quality::Balanced => "balanced",
            Quality::Exact => "exact",
        }
    }
}

/// Earlier turns kept in the prompt, newest first, at most this many
/// tokens (the oldest are left out, and the answer says so).
pub const HISTORY_TOKENS: usize = 1024;

/// Earlier turns whose text joins the question for retrieval.
const RETRIEVAL_TURNS: usize = 2;

/// Of an earlier answer, the characters that join a retrieval query (its
/// subject is near the start; a long answer would drown the question).
const RETRIEVAL_ANSWER_CHARS: usize = 300;

/// One earlier question of a conversation and its answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exchange {
    pub question: String,
    pub answer: String,
}

/// The text that joins `question` for retrieval: the most recent turns,
/// oldest first, each answer cut short. `None` without history.
pub fn retrieval_context(history: &[Exchange]) -> Option<String> {
    let recent = &history[history.len().saturating_sub(RETRIEVAL_TURNS)..];
    let text: Vec<String> = recent
        .iter()
        .map(|e| {
            let answer: String = e.answer.chars().take(RETRIEVAL_ANSWER_CHARS).collect();
            format!("{}\n{}", e.question.trim(), answer.trim())
        })
        .filter(|t| !t.trim().is_empty())
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// The newest exchanges whose tokens (`cost`) fit `budget`, oldest first,
/// and how many older ones were left out.
fn recent_within(
    history: &[Exchange],
    budget: usize,
    cost: impl Fn(&Exchange) -> usize,
) -> (&[Exchange], usize) {
    let mut used = 0;
    let mut keep = 0;
    for e in history.iter().rev() {
        used += cost(e);
        if used > budget {
            break;
        }
        keep += 1;
    }
    (&history[history.len() - keep..], history.len() - keep)
}

/// How to answer: retrieval, mode and decoding.
#[derive(Clone, Copy, Debug)]
pub struct AskOptions {
    pub top_k: usize,
    pub retrieval: Retrieval,
    pub mode: Mode,
    pub generate: GenerateOptions,
}

impl Default for AskOptions {
    /// Five chunks, hybrid retrieval, the default quality with APE's
    /// default settings, default decoding.
    fn default() -> Self {
        Self {
            top_k: 5,
            retrieval: Retrieval::default(),
            mode: Quality::default().mode(ApeParams::default(), false),
            generate: GenerateOptions::default(),
        }
    }
}

/// One chunk the answer was conditioned on, with its retrieval evidence.
#[derive(Clone, Debug)]
pub struct Source {
    pub chunk: ChunkRecord,
    pub hit: Hit,
    /// Share of the answer's attention to the sources that went to this one
    /// (when attribution was on and at least one token was generated).
    pub attention_share: Option<f64>,
}

/// An answer and where it came from.
pub struct Answer {
    pub generated: Generated,
    pub sources: Vec<Source>,
    pub retrieval: Duration,
    /// Reading (and if needed encoding) the chunk states.
    pub state_prep: Duration,
    /// The mode the answer was made in (see `notes` when it differs from
    /// the one asked for).
    pub mode: Mode,
    /// Where the chunk states came from: memory, disk, or encoded now.
    pub states: StateReads,
    /// From the question to the first token: retrieval, states (read or
    /// encoded), prefill.
    pub ttft: Duration,
    /// Tokens the answer was conditioned on: prefix, chunks, earlier turns
    /// and the question.
    pub prompt_tokens: usize,
    /// Earlier turns of the conversation in the prompt (the newest that
    /// fit [`HISTORY_TOKENS`]).
    pub turns_kept: usize,
    /// What the user should know about how this answer was made: a mode
    /// fallback, chunks dropped to fit the context, positions beyond the
    /// model's training, chunks missing from the index.
    pub notes: Vec<String>,
}

/// Answers `question`, following the earlier turns of `history` (oldest
/// first; empty for a question alone), from the `top_k` best chunks of
/// `index`, streaming text to `on_text` (returning `false` cancels).
pub fn ask(
    states: &States<'_>,
    index: &FolderIndex,
    embedder: &mut Embedder,
    question: &str,
    history: &[Exchange],
    options: &AskOptions,
    on_text: &mut dyn FnMut(&str) -> bool,
) -> Result<Answer, IndexError> {
    let t0 = Instant::now();
    let mut notes = Vec::new();
    let context = retrieval_context(history);
    let mut hits = index.search_in_conversation(
        embedder,
        question,
        context.as_deref(),
        options.top_k,
        options.retrieval,
    )?;
    let retrieval = t0.elapsed();
    let engine = states.engine;
    let bare = states.layout.conversation(engine, &[], "").len();
    let (earlier, left_out) = recent_within(history, HISTORY_TOKENS, |e| {
        let with = states
            .layout
            .conversation(engine, &[(&e.question, &e.answer)], "");
        with.len().saturating_sub(bare)
    });
    if left_out > 0 {
        notes.push(format!(
            "the {left_out} oldest turns of the conversation were left out ({HISTORY_TOKENS} tokens of history are kept)"
        ));
    }
    let earlier: Vec<(&str, &str)> = earlier
        .iter()
        .map(|e| (e.question.as_str(), e.answer.as_str()))
        .collect();
    let q = states.layout.conversation(engine, &earlier, question);
    let info = states.engine.info();
    let (mut mode, mut decoding) = (options.mode, options.generate);
    // A base model's plain layout ends its answer at a stop text.
    decoding.stops = states.layout.stops();
    if let Err(why) = info.ape_support() {
        // Before any state work: the cached modes rely on the attention and
        // cache layout APE was verified for, and so does reading attention
        // shares (a sliding window hides chunk cells the shares would
        // count).
        if mode.chunks_alone().is_some() {
            notes.push(format!(
                "{} is not available on this model ({why}): answered with sequential prefill",
                mode.name()
            ));
            mode = Mode::Sequential;
        }
        decoding.attribution = false;
    }
    // A context sized to what was retrieved (within what the model was
    // trained on); chunks that still do not fit are left out.
    let fixed = states.prefix.tokens().len() + q.len() + decoding.max_tokens;
    let mut session = states.engine.session_for(cells(fixed, &hits))?;
    let trained = info.n_ctx_train as usize;
    notes.extend(fit(&mut hits, session.capacity(), trained, mode, fixed));

    let t1 = Instant::now();
    let (mut chunk_states, mut kept) = (Vec::new(), Vec::new());
    let mut reads = StateReads::default();
    for (hit, chunk) in hits {
        // A chunk whose text is gone from the index (its file changed since
        // the search) is left out, never encoded empty.
        let Some(text) = index.text(hit.id)? else {
            notes.push(format!(
                "{} (lines {}-{}) changed while answering: left out",
                chunk.path, chunk.lines.0, chunk.lines.1
            ));
            continue;
        };
        let tokens = states.chunk_tokens(&text);
        chunk_states.push(match mode.chunks_alone() {
            // Sequential prefill decodes the chunks' tokens: no states.
            None => ChunkState::tokens_only(tokens),
            Some(alone) => {
                // The index records the key of the shared-prefix state; a
                // state encoded alone is found by its tokens.
                let key = if alone {
                    states.key(&tokens, true)
                } else {
                    chunk.state.clone()
                };
                let (state, origin) = states.get_or_encode(&mut session, &key, alone, tokens)?;
                reads.count(origin);
                state
            }
        });
        kept.push((hit, chunk));
    }
    let state_prep = t1.elapsed();
    let refs: Vec<&ChunkState> = chunk_states.iter().collect();
    // Hits come best first; sequential (`exact`) reads them best last.
    let ranking: Vec<usize> = (0..refs.len()).collect();
    let ctx = Context {
        prefix: &states.prefix,
        chunks: &refs,
        ranking: &ranking,
        question: &q,
    };
    let prompt_tokens = states.prefix.tokens().len()
        + refs.iter().map(|c| c.tokens().len()).sum::<usize>()
        + q.len();
    let generated = generate::generate(&mut session, mode, &ctx, decoding, on_text)?;
    let ttft = retrieval + state_prep + generated.ttft;
    let hits = kept;
    let shares = generated.attention_shares.clone().unwrap_or_default();
    let mut share_of = vec![None; hits.len()];
    for (&i, &s) in generated.prefill.measured.iter().zip(&shares) {
        share_of[i] = Some(s);
    }
    let sources = hits
        .into_iter()
        .zip(share_of)
        .map(|((hit, chunk), attention_share)| Source {
            chunk,
            hit,
            attention_share,
        })
        .collect();
    Ok(Answer {
        generated,
        sources,
        retrieval,
        state_prep,
        mode,
        states: reads,
        ttft,
        prompt_tokens,
        turns_kept: earlier.len(),
        notes,
    })
}

/// KV cells an answer over `hits` needs: `fixed` (prefix, question,
/// longest answer) and every chunk's tokens.
fn cells(fixed: usize, hits: &[(Hit, ChunkRecord)]) -> usize {
    fixed + hits.iter().map(|(_, c)| c.tokens).sum::<usize>()
}

/// Drops the lowest-ranked chunks until `fixed` cells (prefix, question,
/// longest answer) and the chunks fit `capacity` cells; returns what the user
/// should know: chunks left out, positions past the model's `trained`
/// context (0: unknown).
fn fit(
    hits: &mut Vec<(Hit, ChunkRecord)>,
    capacity: usize,
    trained: usize,
    mode: Mode,
    fixed: usize,
) -> Vec<String> {
    let mut notes = Vec::new();
    let before = hits.len();
    while hits.len() > 1 && cells(fixed, hits) > capacity {
        hits.pop();
    }
    if hits.len() < before {
        notes.push(format!(
            "{} of {} retrieved chunks left out to fit the context ({capacity} cells)",
            before - hits.len(),
            before,
        ));
    }
    // Cached modes share positions; sequential and re-read chunks add up.
    let lengths = hits.iter().map(|(_, c)| c.tokens);
    let positions = fixed
        + match mode {
            Mode::Sequential | Mode::SequentialStored => lengths.sum(),
            // Re-read tokens follow the block: whole chunks leave it, a
            // window's chunk stays in it.
            Mode::Ape(p) if p.reread > 0 => {
                let mut l: Vec<usize> = lengths.collect();
                let k = (p.reread as usize).min(l.len());
                let read: usize = match p.window as usize {
                    0 => l.drain(..k).sum(),
                    w => l[..k].iter().map(|&n| n.min(w)).sum(),
                };
                read + l.into_iter().max().unwrap_or(0)
            }
            _ => lengths.max().unwrap_or(0),
        };
    if trained > 0 && positions > trained {
        notes.push(format!(
            "the answer reaches position {positions}, past the {trained} the model was trained on: it may degrade"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(tokens: &[usize]) -> Vec<(Hit, ChunkRecord)> {
        tokens
            .iter()
            .enumerate()
            .map(|(i, &tokens)| {
                let hit = Hit {
                    id: i as u64,
                    bm25_rank: Some(i + 1),
                    dense_rank: None,
                    score: 1.0 / (i + 1) as f64,
                };
                let chunk = ChunkRecord {
                    path: format!("f{i}.md"),
                    lines: (1, 2),
                    heading: Vec::new(),
                    place: None,
                    tokens,
                    state: String::new(),
                };
                (hit, chunk)
            })
            .collect()
    }

    fn exchange(q: &str, a: &str) -> Exchange {
        Exchange {
            question: q.into(),
            answer: a.into(),
        }
    }

    #[test]
    fn the_newest_turns_that_fit_are_kept_and_the_rest_counted() {
        let h = [
            exchange("a", "1"),
            exchange("b", "22"),
            exchange("c", "333"),
        ];
        let cost = |e: &Exchange| e.answer.len() * 10;
        let (kept, out) = recent_within(&h, 50, cost);
        assert_eq!(
            (kept, out),
            (&h[1..], 1),
            "30 + 20 fit, the oldest does not"
        );
        let (kept, out) = recent_within(&h, 29, cost);
        assert!(kept.is_empty() && out == 3, "not even the newest fits");
        assert_eq!(recent_within(&[], 10, cost), (&[][..], 0));
    }

    #[test]
    fn retrieval_hears_the_two_latest_turns_with_their_answers_cut_short() {
        assert_eq!(retrieval_context(&[]), None);
        let long = "x".repeat(1000);
        let h = [
            exchange("oldest", "gone"),
            exchange("When do engineers join on-call?", "In week eight."),
            exchange("Who pages them?", &long),
        ];
        let c = retrieval_context(&h).expect("context");
        assert!(!c.contains("oldest"));
        assert!(c.starts_with("When do engineers join on-call?\nIn week eight.\nWho pages them?"));
        assert_eq!(c.matches('x').count(), RETRIEVAL_ANSWER_CHARS);
    }

    #[test]
    fn the_lowest_ranked_chunks_make_room_and_the_user_is_told() {
        let mut h = hits(&[400, 400, 400, 400]);
        let notes = fit(&mut h, 1000, 0, Mode::Parallel, 100);
        let kept: Vec<u64> = h.iter().map(|(hit, _)| hit.id).collect();
        assert_eq!(kept, [0, 1], "the best two fit: 100 + 2 × 400 ≤ 1000");
        assert_eq!(
            notes,
            ["2 of 4 retrieved chunks left out to fit the context (1000 cells)"]
        );
        // The best chunk is kept even when it alone does not fit.
        let mut h = hits(&[5000, 10]);
        fit(&mut h, 1000, 0, Mode::Parallel, 100);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].0.id, 0);
    }

    #[test]
    fn positions_past_the_trained_context_are_flagged_per_mode() {
        let run = |mode| fit(&mut hits(&[300, 200, 100]), 10_000, 700, mode, 100);
        // Shared positions: 100 + 300.
        assert!(run(Mode::Parallel).is_empty());
        assert!(run(Mode::Ape(ApeParams::default())).is_empty());
        // Re-read: 100 + 300 re-read + 200 in parallel = 600.
        let reread = ApeParams {
            reread: 1,
            ..ApeParams::default()
        };
        assert!(run(Mode::Ape(reread)).is_empty());
        // A 100-token window: 100 + 100 re-read + 300 still in the block.
        let window = Mode::Ape(ApeParams {
            window: 100,
            ..reread
        });
        assert!(fit(&mut hits(&[300, 200, 100]), 10_000, 500, window, 100).is_empty());
        assert_eq!(
            fit(&mut hits(&[300, 200, 100]), 10_000, 499, window, 100),
            ["the answer reaches position 500, past the 499 the model was trained on: it may degrade"]
        );
        // Sequential: 100 + 600 + ... = 700 is fine, one more chunk is not.
        assert!(run(Mode::Sequential).is_empty());
        let notes = fit(
            &mut hits(&[300, 200, 101]),
            10_000,
            700,
            Mode::Sequential,
            100,
        );
        assert_eq!(
            notes,
            ["the answer reaches position 701, past the 700 the model was trained on: it may degrade"]
        );
    }
}
