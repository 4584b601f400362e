//! How one APE setting scores on a split of prepared records: answer F1,
//! gold-answer NLL, or the divergence of the question's attention from
//! sequential prefill's (no labels needed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::search::Objective;
use crate::engine::{ApeParams, ChunkState, EngineError, Mode, ProbeEvent, ProbeKind, Session};
use crate::eval::run::{answer, gold_nll, Prepared, Stamp};
use crate::states::States;

/// What one setting scores on a split.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Measure {
    pub f1: Option<f64>,
    pub nll: Option<f64>,
    pub attention_kl: Option<f64>,
}

impl Measure {
    /// The number the search minimises.
    pub fn loss(&self, objective: Objective) -> f64 {
        match objective {
            Objective::F1 => -self.f1.unwrap_or(0.0) + 1e-3 * self.nll.unwrap_or(0.0),
            Objective::Nll => self.nll.unwrap_or(f64::INFINITY),
            Objective::Attention => self.attention_kl.unwrap_or(f64::INFINITY),
        }
    }
}

/// Attention rows the question paid under sequential prefill: per layer,
/// per head and question token, the weights of the keys it could see.
pub struct Reference {
    layers: LayerRows,
}

/// Errors of calibration.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("attention layouts differ between sequential and APE prefill: {0}")]
    Layout(String),
}

/// A split of prepared records and how to score a setting on it.
pub struct Split<'a, 'e> {
    pub states: &'a States<'e>,
    pub records: &'a [Prepared],
    /// Sequential attention per record (attention objective only).
    pub references: Vec<Reference>,
    /// What generated answers are made with (F1 objective).
    pub stamp: Stamp,
}

impl<'a, 'e> Split<'a, 'e> {
    /// Prepares a split; with `attention`, runs the sequential reference
    /// prefill of every record once.
    pub fn new(
        states: &'a States<'e>,
        s: &mut Session<'_>,
        records: &'a [Prepared],
        attention: bool,
        stamp: Stamp,
    ) -> Result<Self, CalibrateError> {
        let references = if attention {
            records
                .iter()
                .map(|p| reference(states, s, p))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        Ok(Self {
            states,
            records,
            references,
            stamp,
        })
    }

    /// Scores `params` for `objective` (answers are generated only for F1).
    pub fn measure(
        &self,
        s: &mut Session<'_>,
        params: ApeParams,
        objective: Objective,
    ) -> Result<Measure, CalibrateError> {
        let mode = Mode::Ape(params);
        let n = self.records.len().max(1) as f64;
        let mut m = Measure::default();
        match objective {
            Objective::F1 => {
                let (mut f1, mut nll) = (0.0, Vec::new());
                for p in self.records {
                    let pred = answer(self.states, s, p, mode, &self.stamp)?;
                    f1 += pred.f1;
                    nll.extend(pred.answer_nll);
                }
                m.f1 = Some(f1 / n);
                m.nll = mean(&nll);
            }
            Objective::Nll => {
                let mut nll = Vec::new();
                for p in self.records {
                    nll.extend(gold_nll(self.states, s, p, mode)?);
                }
                m.nll = mean(&nll);
            }
            Objective::Attention => {
                let mut kl = 0.0;
                for (p, r) in self.records.iter().zip(&self.references) {
                    kl += attention_kl(self.states, s, p, r, params)?;
                }
                m.attention_kl = Some(kl / n);
            }
        }
        Ok(m)
    }
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Every (head, question token) row of one softmax over the keys past the
/// prefix (chunks and question) that the row can see, renormalised to sum
/// to one: prefix variants then compare over the same keys, rather than a
/// longer prefix scoring well by soaking up attention.
fn visible_rows(ev: &ProbeEvent<'_>, skip: usize, out: &mut Vec<f32>) {
    for h in 0..ev.n_head {
        for r in 0..ev.n_tokens {
            let row = &ev.data[(h * ev.n_tokens + r) * ev.n_kv..][..ev.n_kv];
            let mask = ev.mask.get(r * ev.n_kv..(r + 1) * ev.n_kv);
            let start = out.len();
            out.extend(
                row.iter()
                    .enumerate()
                    .skip(skip)
                    .filter(|&(j, _)| mask.is_none_or(|m| m[j].is_finite()))
                    .map(|(_, &w)| w),
            );
            let sum: f32 = out[start..].iter().sum();
            if sum > 0.0 {
                out[start..].iter_mut().for_each(|w| *w /= sum);
            }
        }
    }
}

/// Per layer, the visible attention weights of every (head, question
/// token) row of the question just evaluated, and how many rows.
type LayerRows = HashMap<usize, (Vec<f32>, usize)>;

/// Evaluates the question with a probe on every softmax.
fn question_attention(
    s: &mut Session<'_>,
    question: &[crate::engine::TokenId],
    prefix: usize,
) -> Result<LayerRows, CalibrateError> {
    let layers = Arc::new(Mutex::new(LayerRows::new()));
    let sink = Arc::clone(&layers);
    s.set_probe(Some(Box::new(move |ev: &ProbeEvent<'_>| {
        if ev.kind == ProbeKind::Softmax {
            let mut rows = Vec::new();
            visible_rows(ev, prefix, &mut rows);
            if let Ok(mut l) = sink.lock() {
                l.insert(ev.layer, (rows, ev.n_head * ev.n_tokens));
            }
        }
    })));
    let r = s.eval(question);
    s.set_probe(None);
    r?;
    let mut layers = layers
        .lock()
        .map_err(|_| CalibrateError::Layout("probe panicked".into()))?;
    Ok(std::mem::take(&mut *layers))
}

/// `p`'s chunks in the fair sequential order, best last. The parallel
/// layout takes the same order (APE does not depend on it), so both
/// attention rows list the same keys in the same columns.
fn best_last(p: &Prepared) -> Vec<&ChunkState> {
    p.ranking.iter().rev().map(|&i| &p.states[i]).collect()
}

/// The fair sequential prefill's question attention for `p`.
pub fn reference(
    states: &States<'_>,
    s: &mut Session<'_>,
    p: &Prepared,
) -> Result<Reference, CalibrateError> {
    let chunks = best_last(p);
    s.load_prefix(&states.prefix)?;
    s.load_sequential_chunks(&chunks)?;
    s.set_ape(None)?;
    Ok(Reference {
        layers: question_attention(s, &p.question, states.prefix.tokens().len())?,
    })
}

/// Mean over layers, heads and question tokens of KL(sequential ‖ APE)
/// between the attention distributions over the chunk and question keys the
/// question sees (renormalised without the prefix; see `visible_rows`).
/// Restricting it to the chunk keys alone would hide `S`, which moves mass
/// between the chunks and the rest.
pub fn attention_kl(
    states: &States<'_>,
    s: &mut Session<'_>,
    p: &Prepared,
    reference: &Reference,
    params: ApeParams,
) -> Result<f64, CalibrateError> {
    s.load_parallel(&states.prefix, &best_last(p))?;
    s.set_ape(Some(params))?;
    let ape = question_attention(s, &p.question, states.prefix.tokens().len())?;
    let (mut kl, mut rows) = (0.0, 0usize);
    for (layer, (q, n_rows)) in &ape {
        let (p, _) = reference
            .layers
            .get(layer)
            .ok_or_else(|| CalibrateError::Layout(format!("layer {layer} missing")))?;
        if p.len() != q.len() || *n_rows == 0 {
            return Err(CalibrateError::Layout(format!(
                "layer {layer}: {} vs {} visible weights",
                p.len(),
                q.len()
            )));
        }
        kl += kl_rows(p, q);
        rows += n_rows;
    }
    Ok(kl / rows.max(1) as f64)
}

/// Σ over rows of KL(p ‖ q), the rows laid end to end (their lengths do
/// not matter: KL sums over entries).
fn kl_rows(p: &[f32], q: &[f32]) -> f64 {
    p.iter()
        .zip(q)
        .filter(|(&pj, _)| pj > 0.0)
        .map(|(&pj, &qj)| {
            let (pj, qj) = (pj as f64, (qj as f64).max(1e-12));
            pj * (pj.ln() - qj.ln())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kl_of_identical_rows_is_zero_and_positive_otherwise() {
        // Two rows of different lengths, laid end to end.
        let p = [0.5, 0.5, 0.2, 0.3, 0.5];
        assert_eq!(kl_rows(&p, &p), 0.0);
        let q = [0.4, 0.6, 0.2, 0.3, 0.5];
        let expected = 0.5 * (0.5f64 / 0.4).ln() + 0.5 * (0.5f64 / 0.6).ln();
        assert!((kl_rows(&p, &q) - expected).abs() < 1e-6);
    }

    #[test]
    fn f1_loss_breaks_ties_by_nll() {
        let a = Measure {
            f1: Some(0.5),
            nll: Some(2.0),
            attention_kl: None,
        };
        let b = Measure {
            f1: Some(0.5),
            nll: Some(1.0),
            attention_kl: None,
        };
        let c = Measure {
            f1: Some(0.6),
            nll: Some(9.0),
            attention_kl: None,
        };
        assert!(b.loss(Objective::F1) < a.loss(Objective::F1));
        assert!(c.loss(Objective::F1) < b.loss(Objective::F1));
        assert_eq!(a.loss(Objective::Attention), f64::INFINITY);
    }
}
