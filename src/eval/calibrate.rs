//! Choosing APE's T and S (and the prefix variant) for a model, the
//! paper's named weak spot. The search runs in the paper's coordinates,
//! `T` and `S·T`, as a pattern search that starts coarse (steps of 0.2)
//! around the defaults and halves its step whenever no neighbour improves,
//! stopping early once the step is finer than the data can resolve: about
//! 20–30 evaluations where the paper's 0.1 grid takes 100.
//!
//! Three objectives: answer F1 (labels needed), gold-answer NLL (labels
//! needed, continuous, so far less noisy on small splits), and attention
//! matching (no labels): the KL divergence between the attention the
//! question pays to the context under sequential prefill and under APE, as
//! read through the eval callback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::run::{answer, gold_nll, Prepared};
use crate::engine::{ApeParams, ChunkState, EngineError, Mode, ProbeEvent, ProbeKind, Session};
use crate::index::Llm;

/// What calibration minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// Greedy answers' token F1 (ties broken by gold-answer NLL).
    F1,
    /// Mean per-token NLL of the gold answers.
    Nll,
    /// KL(sequential ‖ APE) of the question's attention; needs no answers.
    Attention,
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Objective::F1 => "f1",
            Objective::Nll => "nll",
            Objective::Attention => "attention",
        })
    }
}

impl Objective {
    /// Whether the records must carry answers.
    pub fn needs_labels(self) -> bool {
        self != Objective::Attention
    }
}

/// Search settings; [`SearchOptions::default`] is what the CLI uses.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions {
    pub start: ApeParams,
    /// First step in T and S·T.
    pub step: f32,
    /// Stop once the step would be finer than this.
    pub min_step: f32,
    /// Lowest and highest T and S·T tried.
    pub bounds: (f32, f32),
    /// Hard cap on evaluations.
    pub max_trials: usize,
    /// Smallest loss decrease that counts as an improvement.
    pub tolerance: f64,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            start: ApeParams::DEFAULT,
            step: 0.2,
            min_step: 0.025,
            bounds: (0.2, 1.2),
            max_trials: 40,
            tolerance: 1e-4,
        }
    }
}

/// One evaluated setting.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Trial {
    pub params: ApeParams,
    pub loss: f64,
}

/// Minimises `loss` over (T, S·T) by pattern search: from the start, try the
/// four axis neighbours at the current step; move to the best if it improves
/// by more than the tolerance, else halve the step. Every evaluation is
/// returned, in order; settings are never evaluated twice.
pub fn pattern_search<E>(
    o: SearchOptions,
    mut loss: impl FnMut(ApeParams) -> Result<f64, E>,
) -> Result<Vec<Trial>, E> {
    let mut seen: HashMap<(i32, i32), f64> = HashMap::new();
    let mut trials = Vec::new();
    let key = |t: f32, st: f32| ((t * 1000.0).round() as i32, (st * 1000.0).round() as i32);
    let mut eval = |t: f32, st: f32, trials: &mut Vec<Trial>| -> Result<f64, E> {
        let (t, st) = (
            t.clamp(o.bounds.0, o.bounds.1),
            st.clamp(o.bounds.0, o.bounds.1),
        );
        if let Some(&l) = seen.get(&key(t, st)) {
            return Ok(l);
        }
        let params = ApeParams {
            temperature: round3(t),
            scale: round3(st / t),
        };
        let l = if params.validate().is_ok() && trials.len() < o.max_trials {
            loss(params)?
        } else {
            f64::INFINITY
        };
        if l.is_finite() {
            trials.push(Trial { params, loss: l });
        }
        seen.insert(key(t, st), l);
        Ok(l)
    };
    let (mut t, mut st) = (o.start.temperature, o.start.temperature * o.start.scale);
    let mut best = eval(t, st, &mut trials)?;
    let mut h = o.step;
    while h >= o.min_step && trials.len() < o.max_trials {
        let mut moved = None;
        for (dt, dst) in [(-h, 0.0), (h, 0.0), (0.0, -h), (0.0, h)] {
            let l = eval(t + dt, st + dst, &mut trials)?;
            if l < best - o.tolerance && moved.is_none_or(|(_, _, m)| l < m) {
                moved = Some((t + dt, st + dst, l));
            }
        }
        match moved {
            Some((nt, nst, l)) => {
                (t, st, best) = (
                    nt.clamp(o.bounds.0, o.bounds.1),
                    nst.clamp(o.bounds.0, o.bounds.1),
                    l,
                );
            }
            None => h /= 2.0,
        }
    }
    Ok(trials)
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

/// The lowest-loss trial (the first of equals).
pub fn best(trials: &[Trial]) -> Option<Trial> {
    trials
        .iter()
        .copied()
        .reduce(|a, b| if b.loss < a.loss { b } else { a })
}

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
    pub llm: &'a Llm<'e>,
    pub records: &'a [Prepared],
    /// Sequential attention per record (attention objective only).
    pub references: Vec<Reference>,
    pub max_tokens: usize,
}

impl<'a, 'e> Split<'a, 'e> {
    /// Prepares a split; with `attention`, runs the sequential reference
    /// prefill of every record once.
    pub fn new(
        llm: &'a Llm<'e>,
        s: &mut Session<'_>,
        records: &'a [Prepared],
        attention: bool,
        max_tokens: usize,
    ) -> Result<Self, CalibrateError> {
        let references = if attention {
            records
                .iter()
                .map(|p| reference(llm, s, p))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        Ok(Self {
            llm,
            records,
            references,
            max_tokens,
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
                    let pred = answer(self.llm, s, p, mode, self.max_tokens)?;
                    f1 += pred.f1;
                    nll.extend(pred.answer_nll);
                }
                m.f1 = Some(f1 / n);
                m.nll = mean(&nll);
            }
            Objective::Nll => {
                let mut nll = Vec::new();
                for p in self.records {
                    nll.extend(gold_nll(self.llm, s, p, mode)?);
                }
                m.nll = mean(&nll);
            }
            Objective::Attention => {
                let mut kl = 0.0;
                for (p, r) in self.records.iter().zip(&self.references) {
                    kl += attention_kl(self.llm, s, p, r, params)?;
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

/// Visible weights of every (head, question token) row of one softmax.
fn visible_rows(ev: &ProbeEvent<'_>, out: &mut Vec<f32>) {
    for h in 0..ev.n_head {
        for r in 0..ev.n_tokens {
            let row = &ev.data[(h * ev.n_tokens + r) * ev.n_kv..][..ev.n_kv];
            let mask = ev.mask.get(r * ev.n_kv..(r + 1) * ev.n_kv);
            out.extend(
                row.iter()
                    .enumerate()
                    .filter(|&(j, _)| mask.is_none_or(|m| m[j].is_finite()))
                    .map(|(_, &w)| w),
            );
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
) -> Result<LayerRows, CalibrateError> {
    let layers = Arc::new(Mutex::new(LayerRows::new()));
    let sink = Arc::clone(&layers);
    s.set_probe(Some(Box::new(move |ev: &ProbeEvent<'_>| {
        if ev.kind == ProbeKind::Softmax {
            let mut rows = Vec::new();
            visible_rows(ev, &mut rows);
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

/// The sequential prefill's question attention for `p`.
pub fn reference(
    llm: &Llm<'_>,
    s: &mut Session<'_>,
    p: &Prepared,
) -> Result<Reference, CalibrateError> {
    let chunks: Vec<&ChunkState> = p.states.iter().collect();
    s.load_prefix(&llm.prefix)?;
    s.load_sequential_chunks(&chunks)?;
    s.set_ape(None)?;
    Ok(Reference {
        layers: question_attention(s, &p.question)?,
    })
}

/// Mean over layers, heads and question tokens of KL(sequential ‖ APE)
/// between the attention distributions over every key the question sees
/// (prefix, chunks, question). Restricting it to the chunk keys would hide
/// `S`, which only moves mass between the chunks and the rest.
pub fn attention_kl(
    llm: &Llm<'_>,
    s: &mut Session<'_>,
    p: &Prepared,
    reference: &Reference,
    params: ApeParams,
) -> Result<f64, CalibrateError> {
    let chunks: Vec<&ChunkState> = p.states.iter().collect();
    s.load_parallel(&llm.prefix, &chunks)?;
    s.set_ape(Some(params))?;
    let ape = question_attention(s, &p.question)?;
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
    fn pattern_search_finds_a_known_optimum_in_far_fewer_trials_than_the_grid() {
        let (t0, st0) = (0.62f32, 0.47f32);
        let trials = pattern_search(SearchOptions::default(), |p| {
            let st = p.temperature * p.scale;
            Ok::<_, ()>(((p.temperature - t0).powi(2) + (st - st0).powi(2)) as f64)
        })
        .expect("search");
        let b = best(&trials).expect("trials");
        assert!((b.params.temperature - t0).abs() <= 0.03, "{b:?}");
        assert!(
            (b.params.temperature * b.params.scale - st0).abs() <= 0.03,
            "{b:?}"
        );
        assert!(trials.len() <= 40, "{} trials", trials.len());
        let first = trials[0].params;
        assert_eq!(
            (first.temperature, first.scale),
            (0.9, 0.9),
            "starts at the defaults"
        );
    }

    #[test]
    fn pattern_search_stays_in_bounds_and_stops_on_a_flat_objective() {
        let o = SearchOptions::default();
        let trials = pattern_search(o, |p| {
            assert!(p.temperature >= o.bounds.0 && p.temperature <= o.bounds.1);
            Ok::<_, ()>(1.0)
        })
        .expect("search");
        // Flat: no move, only step halvings around the start (4 per level).
        assert_eq!(trials.len(), 1 + 4 * 4, "{trials:?}");
        let err = pattern_search(o, |_| Err::<f64, _>("boom"));
        assert_eq!(err.err(), Some("boom"));
    }

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
