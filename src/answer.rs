//! Question → hybrid retrieval → cached KV states → answer with sources. The
//! library API the CLI (and later the TUI) call; no terminal code here.

use std::time::{Duration, Instant};

use crate::engine::{generate, ChunkState, GenerateOptions, Generated, Mode};
use crate::index::dense::Embedder;
use crate::index::manifest::ChunkRecord;
use crate::index::{FolderIndex, Hit, IndexError, Llm, Origin};

/// How to answer: retrieval depth, mode and decoding.
#[derive(Clone, Copy, Debug)]
pub struct AskOptions {
    pub top_k: usize,
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
    llm: &Llm<'_>,
    index: &FolderIndex,
    embedder: &mut Embedder,
    question: &str,
    options: &AskOptions,
    on_text: &mut dyn FnMut(&str) -> bool,
) -> Result<Answer, IndexError> {
    let t0 = Instant::now();
    let hits = index.search(embedder, question, options.top_k)?;
    let retrieval = t0.elapsed();

    let t1 = Instant::now();
    let mut session = llm.engine.session()?;
    let (mut states, mut encoded, mut rejected) = (Vec::new(), 0, 0);
    for (hit, chunk) in &hits {
        let text = || {
            Ok(llm
                .layout
                .chunk(llm.engine, &index.text(hit.id)?.unwrap_or_default()))
        };
        let (state, origin) = llm.state(&mut session, &chunk.state, text)?;
        encoded += usize::from(origin != Origin::Cached);
        rejected += usize::from(origin == Origin::Rebuilt);
        states.push(state);
    }
    let state_prep = t1.elapsed();
    let refs: Vec<&ChunkState> = states.iter().collect();
    let q = llm.layout.question(llm.engine, question);
    let generated = generate::generate(
        &mut session,
        options.mode,
        &llm.prefix,
        &refs,
        &q,
        options.generate,
        on_text,
    )?;
    let shares = generated.attention_shares.clone().unwrap_or_default();
    let sources = hits
        .into_iter()
        .enumerate()
        .map(|(i, (hit, chunk))| Source {
            chunk,
            hit,
            attention_share: shares.get(i).copied(),
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
