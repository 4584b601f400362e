//! Answering one record in several modes over the same chunks, prefix and
//! question tokens (only how the chunks are encoded differs), and summing up.

use serde::{Deserialize, Serialize};

use super::dataset::Record;
use super::score::score;
use crate::engine::generate::generate;
use crate::engine::{ChunkState, GenerateOptions, Mode, Sampling};
use crate::index::{IndexError, Llm};

/// One record answered in one mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub id: String,
    pub mode: String,
    pub answer: String,
    pub em: f64,
    pub f1: f64,
    pub contains: f64,
    pub ttft_ms: f64,
    pub decode_tokens_per_s: f64,
}

/// Answers `record` greedily in each of `modes`. Chunk states come from (and
/// go to) the `llm`'s store.
pub fn evaluate(
    llm: &Llm<'_>,
    record: &Record,
    modes: &[Mode],
    max_tokens: usize,
) -> Result<Vec<Prediction>, IndexError> {
    let mut s = llm.engine.session()?;
    let mut states = Vec::with_capacity(record.contexts.len());
    for text in &record.contexts {
        let tokens = llm.layout.chunk(llm.engine, text);
        let key = llm.store.key(&llm.prefix, &tokens);
        states.push(llm.state(&mut s, &key, || Ok(tokens))?.0);
    }
    let refs: Vec<&ChunkState> = states.iter().collect();
    let question = llm.layout.question(llm.engine, &record.question);
    let options = GenerateOptions {
        max_tokens,
        sampling: Sampling::Greedy,
        attribution: false,
    };
    modes
        .iter()
        .map(|&mode| {
            let g = generate(
                &mut s,
                mode,
                &llm.prefix,
                &refs,
                &question,
                options,
                &mut |_| true,
            )?;
            let (em, f1, contains) = score(&g.text, &record.answers);
            Ok(Prediction {
                id: record.id.clone(),
                mode: mode.name().to_string(),
                answer: g.text.trim().to_string(),
                em,
                f1,
                contains,
                ttft_ms: g.ttft.as_secs_f64() * 1e3,
                decode_tokens_per_s: g.decode_tokens_per_s(),
            })
        })
        .collect()
}

/// Per-mode averages.
#[derive(Clone, Debug, Serialize)]
pub struct ModeSummary {
    pub mode: String,
    pub records: usize,
    pub em: f64,
    pub f1: f64,
    pub contains: f64,
    pub ttft_ms_mean: f64,
    pub ttft_ms_median: f64,
    pub decode_tokens_per_s: f64,
}

/// Summary of the predictions of `mode`.
pub fn summarize(predictions: &[Prediction], mode: &str) -> ModeSummary {
    let p: Vec<&Prediction> = predictions.iter().filter(|p| p.mode == mode).collect();
    let n = p.len().max(1) as f64;
    let mean = |f: fn(&Prediction) -> f64| p.iter().map(|x| f(x)).sum::<f64>() / n;
    let mut ttft: Vec<f64> = p.iter().map(|x| x.ttft_ms).collect();
    ttft.sort_by(f64::total_cmp);
    ModeSummary {
        mode: mode.to_string(),
        records: p.len(),
        em: mean(|x| x.em),
        f1: mean(|x| x.f1),
        contains: mean(|x| x.contains),
        ttft_ms_mean: mean(|x| x.ttft_ms),
        ttft_ms_median: ttft.get(ttft.len() / 2).copied().unwrap_or(0.0),
        decode_tokens_per_s: mean(|x| x.decode_tokens_per_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pred(mode: &str, em: f64, ttft: f64) -> Prediction {
        Prediction {
            id: "x".into(),
            mode: mode.into(),
            answer: String::new(),
            em,
            f1: em,
            contains: em,
            ttft_ms: ttft,
            decode_tokens_per_s: 10.0,
        }
    }

    #[test]
    fn summaries_are_per_mode() {
        let p = [
            pred("ape", 1.0, 10.0),
            pred("ape", 0.0, 30.0),
            pred("ape", 1.0, 20.0),
            pred("sequential", 0.0, 99.0),
        ];
        let s = summarize(&p, "ape");
        assert_eq!(s.records, 3);
        assert!((s.em - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.ttft_ms_median, 20.0);
        assert_eq!(summarize(&p, "sequential").records, 1);
    }
}
