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

use std::ops::Range;
use std::time::{Duration, Instant};

use crate::config::ApeSettings;
pub use crate::config::Quality;
use crate::engine::generate::Context;
use crate::engine::{
    generate, ApeParams, ChunkState, EngineError, GenerateOptions, Generated, Mode, Piece,
    RereadCosts,
};
use crate::index::dense::Embedder;
use crate::index::manifest::ChunkRecord;
use crate::index::{FolderIndex, Hit, IndexError, Retrieval, TopK};
use crate::states::{StateReads, States};

/// A whole-chunk re-read on a GPU slower than this (twice: [`RereadCosts`])
/// makes `balanced` echo the chunk instead, over contexts at least as
/// large: about where a wait starts to be noticed. Measured
/// (docs/results.md, On an NVIDIA GPU): the whole 256-token chunk adds 13–15 ms on
/// the 0.5B shape at 2,560 tokens, where the window would save little;
/// 52 ms there at 8K, and a 512-token chunk 157 ms on the 8B shape at 8K
/// and 526 ms at 32K, where the window costs 15 and 59 ms.
pub const WHOLE_REREAD_BUDGET: Duration = Duration::from_millis(50);

/// How `balanced` reads one answer. It re-reads the whole best chunk
/// (`options.whole_mode`) over named files (a count or a list needs every
/// line, whatever it costs) and on a GPU (`gpu`), unless whole-chunk
/// re-reads there were too slow from a context no larger; else it reads in
/// `options.mode`. The choice and the re-read's cost use one measure of the
/// context, `cells` (prefix, question and chunks, whatever the answer's
/// length), so that what slow re-reads teach applies to the next answer
/// over the same context.
struct Reading<'a> {
    options: &'a AskOptions,
    named_files: bool,
    gpu: bool,
    cells: usize,
}

impl Reading<'_> {
    /// The mode to read in, after the re-reads of `costs`.
    fn mode(&self, costs: &RereadCosts) -> Mode {
        let slow_from = costs.too_slow_from().map(|(from, _)| from);
        match self.options.whole_mode {
            Some(whole) if self.named_files => whole,
            Some(whole) if self.gpu && slow_from.is_none_or(|from| self.cells < from) => whole,
            _ => self.options.mode,
        }
    }

    /// Notes in `costs` what the re-read of an answer read in `mode` took,
    /// when that was a whole-chunk re-read on a GPU; true when re-reads
    /// became too slow from a smaller context ([`RereadCosts::note`]).
    fn note(&self, mode: Mode, took: Duration, costs: &mut RereadCosts) -> bool {
        Some(mode) == self.options.whole_mode
            && self.gpu
            && costs.note(self.cells, took, WHOLE_REREAD_BUDGET)
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
#[derive(Clone, Debug)]
pub struct AskOptions {
    /// How many of the best chunks are read (every one under `all`).
    pub top_k: TopK,
    /// Files (relative to the folder) read whole, in document order, besides
    /// the `top_k` best chunks of the rest.
    pub files: Vec<String>,
    pub retrieval: Retrieval,
    pub mode: Mode,
    /// The mode instead where files are read whole, and on a GPU while it
    /// is cheap there (`balanced` re-reads the whole chunk:
    /// [`Quality::BALANCED_WHOLE`]; [`WHOLE_REREAD_BUDGET`]).
    pub whole_mode: Option<Mode>,
    pub generate: GenerateOptions,
    /// Most chunks one answer may read, `top_k` and `files` together (a
    /// server's per-request limit; more is the request's fault). None: the
    /// memory budget alone.
    pub max_chunks: Option<usize>,
}

impl Default for AskOptions {
    /// Five chunks, hybrid retrieval, the default quality with APE's
    /// default settings, default decoding.
    fn default() -> Self {
        let (mode, whole_mode) = Quality::default()
            .modes(ApeSettings::default(), ApeSettings::default())
            .unwrap_or((Mode::Ape(ApeParams::DEFAULT), None));
        Self {
            top_k: TopK::default(),
            files: Vec::new(),
            retrieval: Retrieval::default(),
            mode,
            whole_mode,
            generate: GenerateOptions::default(),
            max_chunks: None,
        }
    }
}

/// One chunk the answer was conditioned on, with its retrieval evidence.
#[derive(Clone, Debug)]
pub struct Source {
    pub chunk: ChunkRecord,
    pub hit: Hit,
    /// Share of the answer's attention to the sources that went to this one,
    /// its re-read included (when attribution was on and at least one token
    /// was generated). What the model looked at, not where the answer came
    /// from: on SQuAD the largest share is on the answer's paragraph no more
    /// often than retrieval's first chunk is (docs/results.md, Attribution).
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
    /// and the question (past the model's window when chunks share
    /// positions).
    pub prompt_tokens: usize,
    /// The highest position any token of the answer's context took: below
    /// [`Self::window`], whatever was read.
    pub max_position: usize,
    /// The positions the model was trained on (0: unknown).
    pub window: usize,
    /// Earlier turns of the conversation in the prompt (the newest that
    /// fit [`HISTORY_TOKENS`]).
    pub turns_kept: usize,
    /// What the user should know about how this answer was made: a mode
    /// fallback, chunks dropped to fit the context, positions beyond the
    /// model's training, chunks missing from the index.
    pub notes: Vec<String>,
    /// The cached mode's first tokens failed its doubt check, and `mode`
    /// (sequential) answered instead ([`ApeParams::doubt`]).
    pub doubted: bool,
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
    on_text: &mut dyn FnMut(&Piece<'_>) -> bool,
) -> Result<Answer, IndexError> {
    let t0 = Instant::now();
    let mut notes = Vec::new();
    let context = retrieval_context(history);
    let pinned = options
        .files
        .iter()
        .map(|f| index.relative(f))
        .collect::<Result<Vec<_>, _>>()?;
    let hits = index.select(
        embedder,
        question,
        context.as_deref(),
        options.top_k,
        &pinned,
        options.retrieval,
    )?;
    if let Some(max) = options.max_chunks {
        if hits.len() > max {
            return Err(IndexError::TooManyChunks {
                chunks: hits.len(),
                max,
            });
        }
    }
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
    let lengths: Vec<usize> = hits.iter().map(|(_, c)| c.tokens).collect();
    let fixed = states.prefix.tokens().len() + q.len();
    let cells = fixed + lengths.iter().sum::<usize>();
    let reading = Reading {
        options,
        named_files: !pinned.is_empty(),
        gpu: engine.offloads(),
        cells,
    };
    let mut mode = reading.mode(&engine.reread_costs());
    let mut decoding = options.generate.clone();
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
    // Positions stay inside the model's window; cells are limited by
    // memory alone, checked before any state is read.
    let window = info.n_ctx_train as usize;
    let planned = plan(&lengths, fixed, decoding.max_tokens, window, mode)?;
    notes.extend(planned.notes.iter().cloned());
    decoding.max_tokens = planned.max_tokens;
    let mut session = states.engine.session_for(planned.cells)?;

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
    notes.extend(states.store.take_notes());
    if reads.unreadable > 0 {
        notes.push(format!(
            "{} cached chunk states could not be read from disk (kept there): encoded for this answer",
            reads.unreadable
        ));
    }
    let mut ranking = reading_ranking(mode, &kept, &pinned);
    if let Some(budget) = planned.sequential_tokens {
        // Sequential cannot read past its window: the middle of what it
        // would read goes, as LongBench truncates.
        let order: Vec<usize> = match mode {
            Mode::SequentialStored => (0..kept.len()).collect(),
            _ => ranking.iter().rev().copied().collect(),
        };
        let lengths: Vec<usize> = order
            .iter()
            .map(|&i| chunk_states[i].tokens().len())
            .collect();
        let cuts = middle_cut(&lengths, budget);
        let mut keep = vec![true; kept.len()];
        for (&i, ranges) in order.iter().zip(&cuts) {
            let tokens: Vec<_> = ranges
                .iter()
                .flat_map(|r| chunk_states[i].tokens()[r.clone()].iter().copied())
                .collect();
            keep[i] = !tokens.is_empty();
            chunk_states[i] = ChunkState::tokens_only(tokens);
        }
        (chunk_states, kept) = chunk_states
            .into_iter()
            .zip(kept)
            .zip(keep)
            .filter_map(|(pair, keep)| keep.then_some(pair))
            .unzip();
        ranking = reading_ranking(mode, &kept, &pinned);
    }
    let state_prep = t1.elapsed();
    let refs: Vec<&ChunkState> = chunk_states.iter().collect();
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
    if generated.stop == generate::StopReason::Doubted {
        // The cached states left the model unsure of its first tokens (none
        // shown): sequential prefill answers, and the first try's time
        // counts toward the time to the first token.
        drop(session);
        let first_try = t0.elapsed();
        let sure = AskOptions {
            mode: Mode::Sequential,
            whole_mode: None,
            ..options.clone()
        };
        let mut again = ask(states, index, embedder, question, history, &sure, on_text)?;
        let k = generated.logprobs.len().min(ApeParams::DOUBT_TOKENS);
        let mean = generated.logprobs[..k].iter().sum::<f32>() / k.max(1) as f32;
        again.notes.insert(
            0,
            format!(
                "{} was unsure of its first {k} tokens from cached states (mean log-probability {mean:.2}): answered again with sequential prefill",
                mode.name()
            ),
        );
        again.ttft += first_try;
        again.states = reads;
        again.doubted = true;
        return Ok(again);
    }
    if let Some(why) = &generated.prefill.shift_refused {
        notes.push(format!(
            "selective recomputation could not move the cached states here ({why}): sequential prefill read the chunks"
        ));
    }
    if let Some(why) = &generated.prefill.echo_refused {
        notes.push(format!(
            "the re-read text was prefilled, not echoed from its cached states ({why}): the answer took its prefill"
        ));
    }
    let rereading = generated.prefill.rereading;
    if engine.note_reread(|costs| reading.note(mode, rereading, costs)) {
        if let Some((from, took)) = engine.reread_costs().too_slow_from() {
            notes.push(format!(
                "re-reading the whole best chunk took {} ms over {from} cells on this GPU (the second time over {} ms): from now on `balanced` echoes it from its cached states over contexts of {from} cells or more",
                took.as_millis(),
                WHOLE_REREAD_BUDGET.as_millis()
            ));
        }
    }
    if let Mode::Ape(p) = mode {
        // The parallel block is what prefill measured shares over.
        let block = generated.prefill.measured.len();
        let wide = p.for_chunks(block);
        if wide.scale != p.scale {
            notes.push(format!(
                "APE's S = {} applied as {:.2} over {block} chunks (S is calibrated on {}: the block weighs what that many did)",
                crate::numfmt::decimal(p.scale),
                wide.scale,
                ApeParams::CALIBRATED_CHUNKS
            ));
        }
    }
    let max_position = session.position().saturating_sub(1);
    let ttft = retrieval + state_prep + generated.ttft;
    let hits = kept;
    let shares = generated.attention_shares.clone().unwrap_or_default();
    let share_of = generated.prefill.shares_by_chunk(&shares, hits.len());
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
        max_position,
        window,
        turns_kept: earlier.len(),
        notes,
        doubted: false,
    })
}

/// The chunks of `kept` (best first) best first for `mode`. For the cached
/// modes this is what a re-read picks from: the `pinned` files' chunks in
/// retrieval order, then the rest (a question asked over a named file is
/// about that file: its best chunk, not a note elsewhere, is read again
/// next to the question). Sequential prefill reads the ranking backwards
/// (best last): the retrieved chunks, then the pinned files' chunks last
/// to first, so that it reads those files whole, in document order, before
/// the retrieved chunks.
fn reading_ranking(mode: Mode, kept: &[(Hit, ChunkRecord)], pinned: &[String]) -> Vec<usize> {
    let file_of = |c: &ChunkRecord| pinned.iter().position(|p| *p == c.path);
    let (mut whole, rest): (Vec<usize>, Vec<usize>) =
        (0..kept.len()).partition(|&i| file_of(&kept[i].1).is_some());
    if mode != Mode::Sequential {
        whole.extend(rest);
        return whole;
    }
    whole.sort_by_key(|&i| (file_of(&kept[i].1), kept[i].1.lines.0));
    rest.into_iter().chain(whole.into_iter().rev()).collect()
}

/// The token ranges of each chunk (of `lengths`, in reading order) that
/// are kept when at most `budget` tokens fit: the first half and the last
/// half of their concatenation (the middle goes).
fn middle_cut(lengths: &[usize], budget: usize) -> Vec<Vec<Range<usize>>> {
    let total: usize = lengths.iter().sum();
    if total <= budget {
        return lengths
            .iter()
            .map(|&n| std::iter::once(0..n).collect())
            .collect();
    }
    let head = budget.div_ceil(2);
    let tail_from = total - (budget - head);
    let mut at = 0;
    lengths
        .iter()
        .map(|&n| {
            let (start, end) = (at, at + n);
            at = end;
            let mut kept = Vec::new();
            if start < head {
                kept.push(0..head.min(end) - start);
            }
            if end > tail_from {
                let from = tail_from.max(start) - start;
                match kept.last_mut() {
                    Some(r) if r.end >= from => r.end = n,
                    _ => kept.push(from..n),
                }
            }
            kept
        })
        .collect()
}

/// How an answer over chunks fits the model.
#[derive(Debug, PartialEq)]
struct Plan {
    /// KV cells its context needs: prefix, chunks, re-read windows,
    /// question, answer.
    cells: usize,
    /// The longest answer that keeps every position inside the window.
    max_tokens: usize,
    /// Sequential prefill: the chunk tokens it may read (`None`: all).
    sequential_tokens: Option<usize>,
    /// What the user should know: the middle left out, a shortened answer.
    notes: Vec<String>,
}

/// Plans an answer over chunks of `lengths` tokens (best first) after
/// `fixed` tokens (prefix, question), with answers of up to `max_tokens`,
/// for a model trained on `window` positions (0: unknown). Chunks that share
/// positions (cached modes) read past the window, limited by memory alone;
/// sequential prefill reads what fits the window, its middle cut out. An
/// error when not even the question fits.
fn plan(
    lengths: &[usize],
    fixed: usize,
    max_tokens: usize,
    window: usize,
    mode: Mode,
) -> Result<Plan, EngineError> {
    let window = if window == 0 { usize::MAX } else { window };
    let total: usize = lengths.iter().sum();
    let mut notes = Vec::new();
    let past = |positions| EngineError::PastWindow { positions, window };
    if matches!(mode, Mode::Sequential | Mode::SequentialStored) {
        let room = window
            .checked_sub(fixed + max_tokens.min(window / 4))
            .ok_or(past(fixed))?;
        let read = total.min(room);
        if read < total {
            notes.push(format!(
                "sequential prefill read {read} of {total} chunk tokens: the middle {} were left out to fit the model's {window}-position window (fast and balanced read them all)",
                total - read
            ));
        }
        let max_tokens = max_tokens.min(window - fixed - read);
        return Ok(Plan {
            cells: fixed + read + max_tokens,
            max_tokens,
            sequential_tokens: (read < total).then_some(read),
            notes,
        });
    }
    // Cached modes share positions; re-read tokens follow the block: whole
    // chunks leave it, a window's chunk stays in it.
    let longest = |l: &[usize]| l.iter().copied().max().unwrap_or(0);
    let (span, extra_cells) = match mode {
        // Recomputation reads the chunks one after another, as sequential
        // prefill does, but whole: what does not fit is refused.
        Mode::Ape(p) if p.recompute.is_some() => {
            if fixed + total >= window {
                return Err(EngineError::RecomputePastWindow {
                    positions: fixed + total,
                    window,
                });
            }
            (total, 0)
        }
        Mode::Ape(p) if p.reread > 0 => {
            let k = (p.reread as usize).min(lengths.len());
            match (p.window as usize, p.echo) {
                (0, false) => (
                    lengths[..k].iter().sum::<usize>() + longest(&lengths[k..]),
                    0,
                ),
                // An echo keeps its chunk in the block, as a window does.
                (w, _) => {
                    let w = if w == 0 { usize::MAX } else { w };
                    let read: usize = lengths[..k].iter().map(|&n| n.min(w)).sum();
                    (read + longest(lengths), read)
                }
            }
        }
        _ => (longest(lengths), 0),
    };
    let answer_at = fixed + span;
    if answer_at >= window {
        return Err(past(answer_at));
    }
    let fits = max_tokens.min(window - answer_at);
    if fits < max_tokens {
        notes.push(format!(
            "the answer may run to {fits} tokens, not {max_tokens}, to stay inside the model's {window}-position window"
        ));
    }
    Ok(Plan {
        cells: fixed + total + extra_cells + fits,
        max_tokens: fits,
        sequential_tokens: None,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `balanced` reads the whole best chunk on a GPU until whole re-reads
    /// there were measured slow twice, then the window over contexts at
    /// least as large; on a CPU the window; over named files the whole
    /// chunk always. The figures are the 8B shape's on an H200 (docs/results.md).
    #[test]
    fn balanced_on_a_gpu_reads_the_whole_chunk_until_it_was_measured_slow() {
        let options = AskOptions::default();
        let window = options.mode;
        let whole = options.whole_mode.expect("balanced has a whole-chunk mode");
        assert_ne!(window, whole);
        let ms = Duration::from_millis;
        let reading = |gpu, named_files, cells| Reading {
            options: &options,
            named_files,
            gpu,
            cells,
        };
        let read = |costs: &RereadCosts, gpu, files, cells| reading(gpu, files, cells).mode(costs);
        let note = |costs: &mut RereadCosts, cells, took| {
            reading(true, false, cells).note(whole, took, costs)
        };
        let mut costs = RereadCosts::default();
        assert_eq!(read(&costs, false, false, 3_000), window, "CPU");
        assert_eq!(read(&costs, false, true, 3_000), whole, "named files");
        assert_eq!(read(&costs, true, false, 33_000), whole, "GPU, unmeasured");
        assert!(!note(&mut costs, 33_000, ms(20)), "cheap");
        assert!(!note(&mut costs, 33_000, ms(50)), "at the budget");
        assert_eq!(read(&costs, true, false, 33_000), whole);
        // One slow re-read (a first run's kernel loading, say) decides nothing...
        assert!(!note(&mut costs, 33_000, ms(526)));
        assert_eq!(read(&costs, true, false, 33_000), whole);
        // ...a second decides, from the larger of the two contexts.
        assert!(note(&mut costs, 8_700, ms(157)));
        assert_eq!(costs.too_slow_from(), Some((33_000, ms(526))));
        assert_eq!(read(&costs, true, false, 33_000), window);
        assert_eq!(read(&costs, true, false, 40_000), window);
        assert_eq!(read(&costs, true, false, 20_000), whole);
        // A third over a smaller context lowers it; a larger one does not.
        assert!(note(&mut costs, 9_000, ms(160)));
        assert_eq!(costs.too_slow_from(), Some((9_000, ms(160))));
        assert!(!note(&mut costs, 50_000, ms(900)));
        assert_eq!(read(&costs, true, false, 20_000), window);
        assert_eq!(read(&costs, true, false, 8_000), whole);
        assert_eq!(read(&costs, true, true, 40_000), whole, "named files");
        // Only a whole-chunk re-read on a GPU is noted.
        let mut none = RereadCosts::default();
        for _ in 0..RereadCosts::SEEN {
            assert!(
                !reading(false, false, 9_000).note(whole, ms(900), &mut none),
                "CPU"
            );
            assert!(
                !reading(true, false, 9_000).note(window, ms(900), &mut none),
                "window"
            );
        }
        assert_eq!(none.too_slow_from(), None);
        // `fast` and `exact` have no whole-chunk mode.
        let fast = AskOptions {
            whole_mode: None,
            ..AskOptions::default()
        };
        let reading = Reading {
            options: &fast,
            named_files: true,
            gpu: true,
            cells: 1,
        };
        assert_eq!(reading.mode(&RereadCosts::default()), fast.mode);
    }

    /// Two slow whole-chunk re-reads over one context switch the next
    /// answer over that same context to the window: the cost is noted over
    /// the cells the choice is made on, not over those the answer adds.
    #[test]
    fn slow_rereads_switch_the_next_answer_over_the_same_context() {
        let options = AskOptions::default();
        let whole = options.whole_mode.expect("balanced has a whole-chunk mode");
        let reading = Reading {
            options: &options,
            named_files: false,
            gpu: true,
            cells: 8_700,
        };
        let mut costs = RereadCosts::default();
        for _ in 0..RereadCosts::SEEN {
            assert_eq!(reading.mode(&costs), whole);
            reading.note(whole, WHOLE_REREAD_BUDGET * 3, &mut costs);
        }
        assert_eq!(reading.mode(&costs), options.mode);
    }

    #[test]
    fn balanced_fills_what_the_settings_leave_unset_and_has_a_whole_chunk_mode() {
        let ape = |m: Mode| match m {
            Mode::Ape(p) => (p.temperature, p.scale, p.reread, p.window, p.echo),
            other => panic!("{other}"),
        };
        // The layers as the CLI builds them: the model's calibration at the
        // bottom of `settings`, its shipped `balanced` ones at the bottom of
        // `balanced`, what the user set on top of both.
        let shipped = ApeSettings {
            temperature_ape: Some(0.8),
            scale_ape: Some(1.0),
            ..ApeSettings::default()
        };
        let shipped_balanced = ApeSettings {
            scale_ape: Some(0.7),
            ..ApeSettings::default()
        };
        let layers = |user: ApeSettings| (user.over(shipped), user.over(shipped_balanced));
        let modes = |q: Quality, user: ApeSettings| {
            let (settings, balanced) = layers(user);
            q.modes(settings, balanced).expect("valid")
        };
        let none = ApeSettings::default();
        // A shipped `balanced` S beats the calibration's, for the echo only
        // (the prefilled whole re-read was measured at the calibration's).
        let (cpu, gpu) = modes(Quality::Balanced, none);
        assert_eq!(ape(cpu), (0.8, 0.7, 1, 0, true));
        assert_eq!(gpu.map(ape), Some((0.8, 1.0, 1, 0, false)));
        // No doubt check unless asked for.
        assert!(matches!(cpu, Mode::Ape(p) if p.doubt.is_none()));
        // A model with nothing shipped for `balanced`: the generic preset.
        let (cpu, _) = Quality::Balanced
            .modes(shipped, ApeSettings::default())
            .expect("valid");
        assert_eq!(ape(cpu), (0.8, 1.0, 1, 0, true));
        // What the user set wins field by field, on both devices.
        let two = ApeSettings {
            reread: Some(2),
            scale_ape: Some(0.9),
            ..ApeSettings::default()
        };
        let (cpu, gpu) = modes(Quality::Balanced, two);
        assert_eq!(
            (ape(cpu), gpu.map(ape)),
            ((0.8, 0.9, 2, 0, true), Some((0.8, 0.9, 2, 0, false)))
        );
        let tokens = ApeSettings {
            reread_window: Some(32),
            reread_echo: Some(false),
            doubt: Some(-0.5),
            ..ApeSettings::default()
        };
        let (cpu, gpu) = modes(Quality::Balanced, tokens);
        assert_eq!(ape(cpu), (0.8, 0.7, 1, 32, false));
        assert_eq!(gpu.map(ape), Some((0.8, 1.0, 1, 32, false)));
        assert!(matches!(cpu, Mode::Ape(p) if p.doubt == Some(-0.5)));
        // `fast` never re-reads or doubts and keeps the calibration;
        // `exact` is sequential prefill.
        let (fast, gpu) = modes(Quality::Fast, two);
        assert_eq!((ape(fast), gpu), ((0.8, 0.9, 0, 0, false), None));
        let (fast, _) = modes(Quality::Fast, tokens);
        assert!(matches!(fast, Mode::Ape(p) if p.doubt.is_none() && p.reread == 0));
        let (fast, _) = modes(Quality::Fast, none);
        assert_eq!(ape(fast), (0.8, 1.0, 0, 0, false));
        assert_eq!(modes(Quality::Exact, two), (Mode::Sequential, None));
        let bad = ApeSettings {
            temperature_ape: Some(0.0),
            ..ApeSettings::default()
        };
        assert!(Quality::Balanced.modes(bad, bad).is_err());
    }

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
    fn cached_modes_read_past_the_window_on_shared_positions() {
        // 40 chunks of 300 tokens: 12,000 tokens, a 4,096-position model.
        let lengths = vec![300; 40];
        let p = plan(&lengths, 100, 256, 4096, Mode::Ape(ApeParams::default())).expect("fits");
        assert_eq!(p.cells, 100 + 12_000 + 256, "every chunk gets its cells");
        assert_eq!((p.max_tokens, p.sequential_tokens), (256, None));
        assert!(p.notes.is_empty());
        // Re-read whole: 300 re-read + 300 in the block; a 100-token window
        // re-reads 100 and adds its cells.
        let reread = ApeParams {
            reread: 1,
            ..ApeParams::default()
        };
        let p = plan(&[300, 200, 100], 100, 50, 700, Mode::Ape(reread)).expect("fits");
        assert_eq!((p.cells, p.max_tokens), (100 + 600 + 50, 50));
        let window = ApeParams {
            window: 100,
            ..reread
        };
        let p = plan(&[300, 200, 100], 100, 50, 700, Mode::Ape(window)).expect("fits");
        assert_eq!(p.cells, 100 + 600 + 100 + 50);
        // The answer stops at the window: 100 + 300 + 200 = 600 of 650.
        let p = plan(&[300, 200, 100], 100, 256, 650, Mode::Ape(reread)).expect("fits");
        assert_eq!(p.max_tokens, 50);
        assert_eq!(
            p.notes,
            ["the answer may run to 50 tokens, not 256, to stay inside the model's 650-position window"]
        );
        // Not even the question fits: an error, not a silent overflow.
        let e = plan(&[300], 500, 10, 800, Mode::Parallel).expect_err("past");
        assert!(
            matches!(
                e,
                EngineError::PastWindow {
                    positions: 800,
                    window: 800
                }
            ),
            "{e}"
        );
        // Unknown window: no limit.
        assert!(plan(&lengths, 100, 256, 0, Mode::Parallel).is_ok());
        // Recomputation lays the chunks end to end, whole.
        let recompute = ApeParams {
            recompute: Some(20),
            ..ApeParams::DEFAULT
        };
        let p = plan(&[300, 200, 100], 100, 50, 800, Mode::Ape(recompute)).expect("fits");
        assert_eq!((p.cells, p.max_tokens), (100 + 600 + 50, 50));
        let e = plan(&[300, 200, 100], 100, 50, 700, Mode::Ape(recompute)).expect_err("past");
        assert!(
            matches!(
                e,
                EngineError::RecomputePastWindow {
                    positions: 700,
                    window: 700
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn sequential_reads_what_fits_the_window_and_says_the_middle_went() {
        let lengths = vec![300; 40];
        let p = plan(&lengths, 100, 256, 4096, Mode::Sequential).expect("fits");
        // 4096 − 100 − 256 = 3740 chunk tokens, then the answer.
        assert_eq!(p.sequential_tokens, Some(3740));
        assert_eq!(p.cells, 4096);
        assert!(
            p.notes[0].starts_with("sequential prefill read 3740 of 12000 chunk tokens"),
            "{:?}",
            p.notes
        );
        // Everything fits: nothing cut, nothing said.
        let p = plan(&[300, 300], 100, 256, 4096, Mode::Sequential).expect("fits");
        assert_eq!((p.sequential_tokens, p.cells), (None, 100 + 600 + 256));
        assert!(p.notes.is_empty());
    }

    #[test]
    fn the_middle_cut_keeps_both_ends_of_the_reading() {
        let all = |c: &[Vec<Range<usize>>]| {
            c.iter()
                .map(|r| r.iter().map(|r| r.len()).sum::<usize>())
                .sum::<usize>()
        };
        // 4 chunks of 10, 20 kept: the first 10 and the last 10.
        let c = middle_cut(&[10, 10, 10, 10], 20);
        let whole = |n| std::iter::once(0..n).collect::<Vec<_>>();
        assert_eq!(c, vec![whole(10), vec![], vec![], whole(10)]);
        // Odd budget and cuts inside chunks: 6 head + 5 tail.
        let c = middle_cut(&[4, 4, 4, 4], 11);
        assert_eq!(c, vec![vec![0..4], vec![0..2], vec![3..4], vec![0..4]]);
        assert_eq!(all(&c), 11);
        // One chunk holding the whole middle keeps its two ends.
        let c = middle_cut(&[2, 20, 2], 10);
        assert_eq!(c, vec![vec![0..2], vec![0..3, 17..20], vec![0..2]]);
        assert_eq!(all(&c), 10);
        // Under budget: untouched.
        assert_eq!(middle_cut(&[3, 4], 7), vec![vec![0..3], vec![0..4]]);
    }

    #[test]
    fn sequential_reads_whole_files_in_document_order_before_the_best_chunk() {
        let mut h = hits(&[10, 10, 10, 10]);
        // Retrieved best first: f0, f1 (the file's second chunk), f2, f3
        // (the file's first chunk).
        h[1].1.path = "book.md".into();
        h[1].1.lines = (20, 30);
        h[3].1.path = "book.md".into();
        h[3].1.lines = (1, 19);
        let pinned = ["book.md".to_string()];
        let ranking = reading_ranking(Mode::Sequential, &h, &pinned);
        let reading: Vec<usize> = ranking.iter().rev().copied().collect();
        assert_eq!(
            reading,
            [3, 1, 2, 0],
            "the file first to last, then the rest best last"
        );
        // Cached modes (what a re-read picks from): the file's chunks in
        // retrieval order, then the rest; without a file, retrieval order.
        let ape = Mode::Ape(ApeParams::default());
        assert_eq!(reading_ranking(ape, &h, &pinned), [1, 3, 0, 2]);
        assert_eq!(reading_ranking(ape, &h, &[]), [0, 1, 2, 3]);
        assert_eq!(reading_ranking(Mode::Sequential, &h, &[]), [0, 1, 2, 3]);
    }
}
