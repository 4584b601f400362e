//! Question → chunks → KV states → answer with sources. The library API the
//! CLI (and later the TUI) call; knows nothing about terminals.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::engine::{
    generate, ChunkState, Engine, EngineError, GenerateOptions, Generated, Mode, PrefixState,
    PromptLayout,
};
use crate::ingest::Chunk;
use crate::kvstore::{KvStore, Lookup};

/// Progress events for long work, so callers can show status.
pub enum Progress<'a> {
    /// `done` of `total` missing chunk states encoded.
    Encoding { done: usize, total: usize },
    /// A cached state was unusable and will be rebuilt.
    Rejected(&'a str),
}

/// A model, its prompt layout and prefix state, and the state store.
pub struct Answerer<'e> {
    engine: &'e Engine,
    layout: PromptLayout,
    prefix: PrefixState,
    store: KvStore,
}

/// An answer and where it came from.
pub struct Answer {
    pub generated: Generated,
    pub sources: Vec<Source>,
    pub retrieval: Duration,
    pub state_prep: Duration,
    pub mode: Mode,
    /// Chunk states encoded for this answer (not found in the cache).
    pub encoded: usize,
    /// Cached states found unusable (corrupt, stale) and rebuilt.
    pub rejected: usize,
}

/// How to answer: retrieval depth, mode and decoding.
#[derive(Clone, Copy, Debug)]
pub struct AskOptions {
    pub top_k: usize,
    pub mode: Mode,
    pub generate: GenerateOptions,
}

/// One chunk the answer was conditioned on.
pub struct Source {
    pub chunk: Chunk,
    /// 1-based rank in retrieval.
    pub rank: usize,
    pub score: f64,
}

impl<'e> Answerer<'e> {
    /// Computes the shared prefix state for `system` once.
    pub fn new(engine: &'e Engine, system: &str, store: KvStore) -> Result<Self, EngineError> {
        let layout = PromptLayout::new(engine, system)?;
        let prefix = engine.session()?.encode_prefix(&layout.prefix)?;
        Ok(Self {
            engine,
            layout,
            prefix,
            store,
        })
    }

    /// Answers `question` from the `top_k` chunks that best match it.
    pub fn ask(
        &self,
        question: &str,
        chunks: &[Chunk],
        options: &AskOptions,
        progress: &mut dyn FnMut(Progress<'_>),
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Answer, EngineError> {
        let t0 = Instant::now();
        let ranked = rank(question, chunks, options.top_k);
        let retrieval = t0.elapsed();
        let t1 = Instant::now();
        let mut session = self.engine.session()?;
        let (states, encoded, rejected) = self.states(&mut session, &ranked, chunks, progress)?;
        let state_prep = t1.elapsed();
        let refs: Vec<&ChunkState> = states.iter().collect();
        let q = self.layout.question(self.engine, question);
        let generated = generate::generate(
            &mut session,
            options.mode,
            &self.prefix,
            &refs,
            &q,
            options.generate,
            on_text,
        )?;
        let sources = ranked
            .iter()
            .enumerate()
            .map(|(i, &(idx, score))| Source {
                chunk: chunks[idx].clone(),
                rank: i + 1,
                score,
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

    /// Cached states of the chosen chunks, encoding (and storing) missing
    /// ones; also returns how many were encoded and how many were rejected.
    fn states(
        &self,
        session: &mut crate::engine::Session<'_>,
        ranked: &[(usize, f64)],
        chunks: &[Chunk],
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<(Vec<ChunkState>, usize, usize), EngineError> {
        let mut rejected = 0;
        let tokens: Vec<_> = ranked
            .iter()
            .map(|&(i, _)| self.layout.chunk(self.engine, &chunks[i].text))
            .collect();
        let mut found: Vec<Option<ChunkState>> = tokens
            .iter()
            .map(|t| match self.store.get(&self.prefix, t) {
                Lookup::Hit(s) => Some(s),
                Lookup::Miss => None,
                Lookup::Rejected(e) => {
                    rejected += 1;
                    progress(Progress::Rejected(&e.to_string()));
                    None
                }
            })
            .collect();
        let total = found.iter().filter(|s| s.is_none()).count();
        let mut done = 0;
        for (slot, t) in found.iter_mut().zip(&tokens) {
            if slot.is_none() {
                progress(Progress::Encoding { done, total });
                let state = session.encode_chunk(&self.prefix, t)?;
                // A full disk must not lose the answer: the state is still used.
                if let Err(e) = self.store.put(&self.prefix, &state) {
                    progress(Progress::Rejected(&format!("could not cache state: {e}")));
                }
                *slot = Some(state);
                done += 1;
            }
        }
        if total > 0 {
            progress(Progress::Encoding { done, total });
        }
        Ok((found.into_iter().flatten().collect(), total, rejected))
    }

    /// Tokens a text takes in this model's tokenizer (for chunking).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.engine.tokenize(text).len()
    }
}

/// Lexical ranking (BM25 over lower-cased word tokens) of `chunks` for
/// `question`: the stand-in retriever until the hybrid tantivy + dense index
/// lands. Ties keep document order.
pub fn rank(question: &str, chunks: &[Chunk], top_k: usize) -> Vec<(usize, f64)> {
    let docs: Vec<Vec<String>> = chunks.iter().map(|c| words(&c.text)).collect();
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let terms: HashSet<String> = words(question).into_iter().collect();
    let df: HashMap<&str, f64> = terms
        .iter()
        .map(|t| {
            (
                t.as_str(),
                docs.iter().filter(|d| d.contains(t)).count() as f64,
            )
        })
        .collect();
    let (k1, b) = (1.2, 0.75);
    let mut scored: Vec<(usize, f64)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let score = terms
                .iter()
                .map(|t| {
                    let tf = d.iter().filter(|w| *w == t).count() as f64;
                    let idf = ((n - df[t.as_str()] + 0.5) / (df[t.as_str()] + 0.5) + 1.0).ln();
                    idf * tf * (k1 + 1.0)
                        / (tf + k1 * (1.0 - b + b * d.len() as f64 / avg.max(1.0)))
                })
                .sum();
            (i, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(top_k);
    scored
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> Chunk {
        Chunk {
            path: "x".into(),
            lines: (1, 1),
            heading: vec![],
            text: text.into(),
        }
    }

    #[test]
    fn ranks_the_chunk_with_rare_query_terms_first() {
        let chunks = [
            chunk("the team meets on monday about the plan"),
            chunk("nightly snapshots are kept for 35 days"),
            chunk("the plan for the team"),
        ];
        let r = rank("How long are nightly snapshots kept?", &chunks, 2);
        assert_eq!(r[0].0, 1);
        assert_eq!(r.len(), 2);
    }
}
