//! The search over APE's T and S·T: a pattern search that starts coarse
//! (steps of 0.2) around the defaults and halves its step whenever no
//! neighbour improves, stopping once the step is finer than the data can
//! resolve: about 20–30 evaluations where the paper's 0.1 grid takes 100.

use std::collections::HashMap;

use serde::Serialize;

use crate::engine::ApeParams;

/// What calibration minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
        let params = ApeParams::new(round3(t), round3(st / t));
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
}
