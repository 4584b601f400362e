//! Question → hybrid retrieval → cached KV states → answer with sources. The
//! library API the CLI (and later the TUI) call; no terminal code here.

use std::time::{Duration, Instant};

use crate::engine::generate::Context;
use crate::engine::{generate, ApeParams, ChunkState, GenerateOptions, Generated, Mode, TokenId};
use crate::index::dense::Embedder;
use crate::index::manifest::ChunkRecord;
use crate::index::{FolderIndex, Hit, IndexError, Retrieval};
use crate::states::{Origin, States};

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

/// How to answer: retrieval, mode and decoding.
#[derive(Clone, Copy, Debug)]
pub struct AskOptions {
    pub top_k: usize,
    pub retrieval: Retrieval,
    pub mode: Mode,
    pub generate: GenerateOptions,
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
    pub mode: Mode,
    /// States encoded for this answer (missing from the cache).
    pub encoded: usize,
    /// Cached states found unusable (corrupt, stale) and rebuilt.
    pub rejected: usize,
}

/// Answers `question` from the `top_k` best chunks of `index`, streaming text
/// to `on_text` (returning `false` cancels).
pub fn ask(
    states: &States<'_>,
    index: &FolderIndex,
    embedder: &mut Embedder,
    question: &str,
    options: &AskOptions,
    on_text: &mut dyn FnMut(&str) -> bool,
) -> Result<Answer, IndexError> {
    let t0 = Instant::now();
    let hits = index.search(embedder, question, options.top_k, options.retrieval)?;
    let retrieval = t0.elapsed();

    let t1 = Instant::now();
    let mut session = states.engine.session()?;
    let (mut chunk_states, mut encoded, mut rejected) = (Vec::new(), 0, 0);
    if let Some(alone) = options.mode.chunks_alone() {
        for (hit, chunk) in &hits {
            let tokens = || -> Result<Vec<TokenId>, IndexError> {
                Ok(states.chunk_tokens(&index.text(hit.id)?.unwrap_or_default()))
            };
            // The index records the key of the shared-prefix state; a state
            // encoded alone is found by its tokens.
            let key = if alone {
                states.key(&tokens()?, true)
            } else {
                chunk.state.clone()
            };
            let (state, origin) = states.get_or_encode(&mut session, &key, alone, tokens)?;
            encoded += usize::from(origin != Origin::Cached);
            rejected += usize::from(origin == Origin::Rebuilt);
            chunk_states.push(state);
        }
    } else {
        // Sequential prefill decodes the chunks' tokens: no states needed.
        for (hit, _) in &hits {
            let text = index.text(hit.id)?.unwrap_or_default();
            chunk_states.push(ChunkState::tokens_only(states.chunk_tokens(&text)));
        }
    }
    let state_prep = t1.elapsed();
    let refs: Vec<&ChunkState> = chunk_states.iter().collect();
    let q = states.question(question);
    let ranking: Vec<usize> = (0..refs.len()).collect();
    let ctx = Context {
        prefix: &states.prefix,
        chunks: &refs,
        ranking: &ranking,
        question: &q,
    };
    let generated =
        generate::generate(&mut session, options.mode, &ctx, options.generate, on_text)?;
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
        mode: options.mode,
        encoded,
        rejected,
    })
}
