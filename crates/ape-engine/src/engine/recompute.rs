//! Selective recomputation: which cached chunk tokens to decode again.
//!
//! Cached states are each chunk read alone after the prefix; sequential
//! prefill would have let every chunk token see the chunks before it. The
//! published repair (CacheBlend, EPIC, ProphetKV, QCFuse) recomputes a
//! fraction of the tokens in the sequential layout and keeps the rest
//! cached. Which fraction matters: ProphetKV and QCFuse pick the tokens the
//! question attends to most in the first layers, which is what this does.
//! The session moves the states ([`Session::load_shifted`]), the question is
//! read once over them with a probe summing its attention per chunk token
//! ([`question_attention`]), then rewound; [`pick`] takes the budget's best
//! tokens and [`Session::recompute`] decodes them again.

use std::sync::{Arc, Mutex};

use super::hook::{ProbeEvent, ProbeKind};
use super::{EngineError, Session, TokenId};

/// Layers whose attention picks the tokens: the first few, as ProphetKV and
/// QCFuse read (later layers' attention has already mixed the tokens, and
/// reading them would cost most of a decode through the callback).
pub const SELECT_LAYERS: usize = 4;

/// The attention the question's tokens pay to each chunk token, summed over
/// heads, question tokens and the first [`SELECT_LAYERS`] layers, after
/// [`Session::load_shifted`] with nothing after the chunks: the question is
/// decoded with a probe and rewound away. `cells` are the chunk tokens'
/// cells (`P..P + Σ L`); the result has one score per chunk token.
pub fn question_attention(
    session: &mut Session<'_>,
    cells: std::ops::Range<usize>,
    question: &[TokenId],
) -> Result<Vec<f64>, EngineError> {
    let totals = Arc::new(Mutex::new(vec![0.0f64; cells.len()]));
    let sink = Arc::clone(&totals);
    let cols = cells.clone();
    let probe = Box::new(move |e: &ProbeEvent<'_>| {
        if e.kind != ProbeKind::Softmax || e.layer >= SELECT_LAYERS || cols.end > e.n_kv {
            return;
        }
        let Ok(mut t) = sink.lock() else { return };
        for row in e.data.chunks_exact(e.n_kv) {
            for (acc, &w) in t.iter_mut().zip(&row[cols.clone()]) {
                *acc += w as f64;
            }
        }
    });
    session.set_softmax_probe(probe, SELECT_LAYERS);
    let start = session.position();
    let read = session.eval(question);
    session.set_probe(None);
    read?;
    session.rewind(start)?;
    let scores = totals
        .lock()
        .map(|t| t.clone())
        .map_err(|_| EngineError::Cache("the attention probe panicked".into()))?;
    Ok(scores)
}

/// Tokens to recompute for a budget of `percent` of `scores.len()` (rounded
/// up): the highest-scored, ties to the earlier token, returned ascending.
/// 100 takes every token, 0 none.
pub fn pick(scores: &[f64], percent: u8) -> Vec<usize> {
    let n = scores.len();
    let k = (n * percent.min(100) as usize).div_ceil(100);
    if k >= n {
        return (0..n).collect();
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order.truncate(k);
    order.sort_unstable();
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_takes_the_most_attended_tokens_in_position_order() {
        let scores = [0.1, 0.9, 0.0, 0.5, 0.5, 0.2, 0.8, 0.3, 0.0, 0.4];
        assert_eq!(pick(&scores, 0), Vec::<usize>::new());
        // 10 % of 10 tokens: the best one.
        assert_eq!(pick(&scores, 10), vec![1]);
        // 25 % rounds up to 3: 0.9, 0.8, then the first of the tied 0.5s.
        assert_eq!(pick(&scores, 25), vec![1, 3, 6]);
        assert_eq!(pick(&scores, 40), vec![1, 3, 4, 6]);
        assert_eq!(pick(&scores, 100), (0..10).collect::<Vec<_>>());
        // Past 100 % is every token, never more.
        assert_eq!(pick(&scores, 250), (0..10).collect::<Vec<_>>());
        assert_eq!(pick(&[], 50), Vec::<usize>::new());
    }
}
