//! The APE attention edit as pure functions, so it can be unit-tested against
//! an f64 reference without llama.cpp.
//!
//! llama.cpp computes `softmax(kq · kq_scale + mask)`. For one query row, APE
//! wants chunk logits `x/T + (S·T − 1)·LSE_T` with `x = kq · kq_scale` and
//! `LSE_T = log Σ_chunk exp(x/T)`; every other logit stays `x`. We get there by
//! rewriting the chunk columns of the raw `kq` row before the softmax runs:
//! `kq ← kq/T + (S·T − 1)·LSE_T / kq_scale`.

use serde::{Deserialize, Serialize};

/// APE's settings: its two hyperparameters, temperature `T` on the chunk
/// logits and the scaling factor `S` on the chunk block's attention mass
/// (applied, as in the paper's code, as the multiplier `S·T` on the block's
/// log-sum-exp), and two refinements for small models, both off by default.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApeParams {
    /// Attention temperature `T` for chunk keys (`< 1` sharpens).
    #[serde(serialize_with = "crate::numfmt::shortest")]
    pub temperature: f32,
    /// Scaling factor `S` of the chunk block's total attention (`< 1` damps).
    #[serde(serialize_with = "crate::numfmt::shortest")]
    pub scale: f32,
    /// Re-read the `reread` best-ranked chunks sequentially after the
    /// parallel block, right before the question (they see the prefix and
    /// the other chunks through APE attention): costs their prefill.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reread: u32,
    /// Re-read only a window of this many tokens of each re-read chunk, the
    /// one richest in the question's rare tokens ([`super::best_window`]),
    /// and keep the whole chunk in the parallel block: a fraction of the
    /// re-read's prefill (0: re-read whole chunks, out of the block).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub window: u32,
    /// The window is whole sentences (as many consecutive ones as fit in
    /// `window` tokens, [`super::best_sentences`]) rather than any run of
    /// tokens: the answer's sentence is read whole or not at all.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sentences: bool,
    /// The re-read text is not prefilled but echoed: its cached cells are
    /// copied right before the question and shifted to those positions
    /// (`Session::echo`), the chunk staying in the block. Costs no prefill;
    /// the echoed tokens hold what their chunk alone gave them, not what a
    /// re-read with the block in view would.
    #[serde(default, skip_serializing_if = "is_false")]
    pub echo: bool,
    /// Each query row (token, head, layer) attends only to the `focus`
    /// chunks it gives the most attention mass, the rest drop out of its
    /// softmax (0: all chunks). Free; ties keep every tied chunk.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub focus: u32,
    /// Doubt: when the answer's first [`Self::DOUBT_TOKENS`] tokens have a
    /// mean log-probability below this, the model was unsure of what the
    /// cached states told it, and the answer is begun again with
    /// sequential prefill (nothing shown before the check). Pays
    /// sequential's prefill only on the questions that need it (None: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<f32>,
    /// Selective recomputation instead of APE attention: the cached states
    /// are moved to the sequential layout (best last, as sequential prefill
    /// reads them) and this percentage of their tokens, those the question
    /// attends to most in the first layers, is decoded again with
    /// everything before it in view ([`super::recompute`]); the question
    /// then reads with ordinary attention (`T`, `S` and the re-read
    /// settings do not apply). 100 is sequential prefill; 0 the moved
    /// states alone (None: APE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<u8>,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

fn is_false(x: &bool) -> bool {
    !*x
}

impl ApeParams {
    /// `T = S = 1`: ordinary attention, i.e. plain parallel encoding.
    pub const IDENTITY: Self = Self::new(1.0, 1.0);
    /// The paper's reference defaults.
    pub const DEFAULT: Self = Self::new(0.9, 0.9);

    /// `T` and `S`, no refinements.
    pub const fn new(temperature: f32, scale: f32) -> Self {
        Self {
            temperature,
            scale,
            reread: 0,
            window: 0,
            sentences: false,
            echo: false,
            focus: 0,
            doubt: None,
            recompute: None,
        }
    }

    /// Answer tokens the doubt check weighs: the first ones carry the
    /// answer's choice (measured on the real-documents tune half: docs/results.md,
    /// Right on real documents).
    pub const DOUBT_TOKENS: usize = 4;

    /// Chunks per question the settings are calibrated and evaluated on
    /// (`convert`'s 10 contexts per record).
    pub const CALIBRATED_CHUNKS: usize = 10;

    /// These settings over a parallel block of `n` chunks. `S` sets the
    /// block's attention mass to `(Σ exp)^S`, and over more chunks than
    /// the settings were calibrated on that sum grows with their count: `S`
    /// shrinks to `S·ln 10 / ln n`, so that the count weighs `n^S' = 10^S`,
    /// what it did in calibration. `T = S = 1`, plain parallel attention
    /// (the control), stays as it is. Without it the tiny model lost a
    /// needle among 307 chunks to their sheer number (the results page's control
    /// run: `--scale-ape 2.24`, applied as 0.90).
    pub fn for_chunks(self, n: usize) -> Self {
        let plain = self.temperature == 1.0 && self.scale == 1.0;
        if plain || n <= Self::CALIBRATED_CHUNKS {
            return self;
        }
        let ratio = (Self::CALIBRATED_CHUNKS as f32).ln() / (n as f32).ln();
        Self {
            scale: self.scale * ratio,
            ..self
        }
    }

    /// True when the attention edit would change nothing, so the callback
    /// can skip it (re-reading is not an attention edit).
    pub fn is_identity(&self) -> bool {
        self.temperature == 1.0 && self.scale == 1.0 && self.focus == 0
    }

    /// Rejects values that would make the softmax meaningless.
    pub fn validate(&self) -> Result<(), String> {
        let ok = |v: f32| v.is_finite() && v > 0.0 && v <= 4.0;
        if !ok(self.temperature) || !ok(self.scale) {
            return Err(format!(
                "APE parameters must be in (0, 4]: got T={}, S={}",
                self.temperature, self.scale
            ));
        }
        if let Some(d) = self.doubt {
            if !d.is_finite() || d > 0.0 {
                return Err(format!(
                    "doubt is a log-probability, finite and at most 0: got {d}"
                ));
            }
        }
        if let Some(r) = self.recompute {
            if r > 100 {
                return Err(format!("recompute is a percentage, 0 to 100: got {r}"));
            }
            if self.reread > 0 || self.focus > 0 {
                return Err(
                    "recompute replaces APE's attention: no re-read or focus with it".into(),
                );
            }
        }
        Ok(())
    }
}

impl Default for ApeParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

const LANES: usize = 8;

/// Rewrites the chunk columns of one raw `kq` row in place and returns the
/// chunk block's `LSE_T` (in units of scaled logits).
///
/// Three passes over the block (max, Σexp, affine update), each written over
/// fixed-width lanes so the compiler vectorises them; this runs for every head,
/// layer and generated token, so it must cost little next to the matmuls.
pub fn edit_chunk_block(block: &mut [f32], kq_scale: f32, p: ApeParams) -> f32 {
    let lse = scaled_lse(block, kq_scale / p.temperature);
    apply_ape(block, lse, kq_scale, p);
    lse
}

/// `log Σ exp(x)` of log-masses (`-inf` for none).
pub fn log_sum_exp(xs: impl Iterator<Item = f32> + Clone) -> f32 {
    let m = xs.clone().fold(f32::NEG_INFINITY, f32::max);
    if m == f32::NEG_INFINITY {
        return m;
    }
    m + xs.map(|l| (l - m).exp()).sum::<f32>().ln()
}

/// `log Σ exp(a·x)` over `xs` (`-inf` for none).
pub fn scaled_lse(xs: &[f32], a: f32) -> f32 {
    if xs.is_empty() {
        return f32::NEG_INFINITY;
    }
    let m = max_lanes(xs);
    a * m + sum_exp_lanes(xs, m, a).ln()
}

/// Per-chunk `log Σ exp(a·x)` over `block[bounds[i]..bounds[i+1]]` into
/// `lses`, returning the whole block's (their log-sum-exp): one pass of exps
/// serves both APE's block LSE and per-chunk attention shares.
pub fn chunk_lses(block: &[f32], bounds: &[usize], a: f32, lses: &mut Vec<f32>) -> f32 {
    lses.clear();
    lses.extend(bounds.windows(2).map(|w| scaled_lse(&block[w[0]..w[1]], a)));
    log_sum_exp(lses.iter().copied())
}

/// Focus: keeps the `keep` chunks with the largest log-sum-exps (ties kept
/// too), marks the others in `dropped`, and returns the log-sum-exp of the
/// kept ones: the block APE then rescales. With `keep` at least the number
/// of chunks nothing drops and `total` comes back unchanged.
pub fn focus(lses: &[f32], keep: usize, total: f32, dropped: &mut Vec<bool>) -> f32 {
    dropped.clear();
    dropped.resize(lses.len(), false);
    if keep == 0 || keep >= lses.len() {
        return total;
    }
    let mut sorted: Vec<f32> = lses.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let threshold = sorted[keep - 1];
    let m = sorted[0];
    let mut sum = 0.0f32;
    for (d, &l) in dropped.iter_mut().zip(lses) {
        *d = l < threshold;
        if !*d {
            sum += (l - m).exp();
        }
    }
    m + sum.ln()
}

/// The APE rewrite given the block's `LSE_T` (from [`chunk_lses`] with
/// `a = kq_scale / T`): `kq ← kq/T + (S·T − 1)·LSE_T / kq_scale`.
pub fn apply_ape(block: &mut [f32], lse: f32, kq_scale: f32, p: ApeParams) {
    if !lse.is_finite() {
        return;
    }
    let inv_t = 1.0 / p.temperature;
    let shift = (p.scale * p.temperature - 1.0) * lse / kq_scale;
    for v in block.iter_mut() {
        *v = v.mul_add(inv_t, shift);
    }
}

fn max_lanes(xs: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = acc[i].max(c[i]);
        }
    }
    let m = acc.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    tail.iter().copied().fold(m, f32::max)
}

/// Σ exp(a·(x − m)) with a vectorisable exp; `a·(x − m) ≤ 0` for every x.
fn sum_exp_lanes(xs: &[f32], m: f32, a: f32) -> f32 {
    let mut acc = [0.0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += exp_nonpos(a * (c[i] - m));
        }
    }
    let tail_sum: f32 = tail.iter().map(|&x| exp_nonpos(a * (x - m))).sum();
    acc.iter().sum::<f32>() + tail_sum
}

/// `exp(x)` for `x ≤ 0`, relative error below 2e-7, branch-free so that it
/// vectorises (libm's `expf` does not). Cody–Waite range reduction to
/// `|r| ≤ ln2/2` and a degree-6 Taylor polynomial.
#[inline(always)]
pub fn exp_nonpos(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5·2^23: adding it rounds to an integer
    let x = x.max(-87.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // n ∈ [-126, 0], so n + 127 is a valid biased exponent.
    let bits = ((n as i32 + 127) as u32) << 23;
    p * f32::from_bits(bits)
}

/// The APE attention distribution of one query row, computed in f64 from the
/// raw logits: the independent reference the engine's output is checked
/// against (tests and `ape-chat doctor`).
///
/// `raw` are the unscaled `kq` values, `mask` llama.cpp's additive mask row
/// (`-inf` = not visible), `chunks` the column range of all chunk keys.
pub fn reference_distribution(
    raw: &[f32],
    mask: &[f32],
    kq_scale: f32,
    chunks: std::ops::Range<usize>,
    p: ApeParams,
) -> Vec<f64> {
    let (t, st) = (p.temperature as f64, (p.scale * p.temperature) as f64);
    let visible = |j: usize| mask[j].is_finite();
    let s = |j: usize| raw[j] as f64 * kq_scale as f64 + mask[j] as f64;
    let chunk_lse = {
        let xs: Vec<f64> = chunks
            .clone()
            .filter(|&j| visible(j))
            .map(|j| s(j) / t)
            .collect();
        let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
    };
    let logits: Vec<f64> = (0..raw.len())
        .map(|j| match () {
            _ if !visible(j) => f64::NEG_INFINITY,
            _ if chunks.contains(&j) => s(j) / t + (st - 1.0) * chunk_lse,
            _ => s(j),
        })
        .collect();
    let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = logits.iter().map(|l| (l - m).exp()).sum();
    logits.iter().map(|l| (l - m).exp() / z).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_many_chunks_s_keeps_the_count_weighing_what_it_did_in_calibration() {
        let p = ApeParams::new(0.9, 0.9);
        assert_eq!(p.for_chunks(5), p);
        assert_eq!(p.for_chunks(10), p);
        let wide = p.for_chunks(300);
        assert_eq!(wide.temperature, 0.9);
        // 300^S' = 10^S.
        let lhs = 300f32.powf(wide.scale);
        let rhs = 10f32.powf(0.9);
        assert!((lhs - rhs).abs() < 1e-3 * rhs, "{lhs} vs {rhs}");
        // Plain parallel attention stays plain at any count; S = 1 under a
        // temperature is scaled like any other S.
        assert_eq!(ApeParams::IDENTITY.for_chunks(300), ApeParams::IDENTITY);
        assert!(ApeParams::new(0.8, 1.0).for_chunks(300).scale < 0.5);
    }

    fn softmax(xs: &[f64]) -> Vec<f64> {
        let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = xs.iter().map(|x| (x - m).exp()).sum();
        xs.iter().map(|x| (x - m).exp() / z).collect()
    }

    fn pseudo_random_row(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2_654_435_761).max(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s as f32 / u32::MAX as f32) * 16.0 - 8.0
            })
            .collect()
    }

    #[test]
    fn exp_matches_libm_over_the_range_used() {
        let mut worst = 0.0f64;
        for i in 0..=200_000 {
            let x = -87.0 * i as f32 / 200_000.0;
            let got = exp_nonpos(x) as f64;
            let want = (x as f64).exp();
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 3e-7, "worst relative error {worst}");
        assert_eq!(exp_nonpos(0.0), 1.0);
    }

    #[test]
    fn only_the_identity_leaves_the_row_unchanged() {
        let row = pseudo_random_row(37, 1);
        let kq_scale = 0.125;
        let mut edited = row.clone();
        let lse = edit_chunk_block(&mut edited, kq_scale, ApeParams::IDENTITY);
        assert_eq!(edited, row, "T = S = 1 must be a bitwise no-op");
        // With T = 1 only S moves the block, by (S·T − 1)·LSE in logits,
        // i.e. (S − 1)·LSE / kq_scale in raw kq units: a rewrite that
        // ignored its parameters, or one applied twice, would show here.
        let half = ApeParams::new(1.0, 0.5);
        let mut shifted = row.clone();
        assert_eq!(edit_chunk_block(&mut shifted, kq_scale, half), lse);
        for (a, b) in row.iter().zip(&shifted) {
            let want = (-0.5 * lse / kq_scale) as f64;
            assert!(((b - a) as f64 - want).abs() < 1e-4, "{a} -> {b}");
        }
    }

    #[test]
    fn focus_equals_ape_with_the_dropped_chunks_masked() {
        let (kq_scale, n) = (0.125, 200);
        let raw = pseudo_random_row(n, 11);
        let bounds = [0, 30, 70, 71, 130, 180];
        let cols = 10..190;
        let p = ApeParams::new(0.7, 0.8);
        let a = kq_scale / p.temperature;
        let (mut lses, mut dropped) = (Vec::new(), Vec::new());
        let block = &raw[cols.clone()];
        let total = chunk_lses(block, &bounds, a, &mut lses);
        // Neutral: keeping every chunk changes nothing.
        assert_eq!(focus(&lses, 5, total, &mut dropped), total);
        assert_eq!(focus(&lses, 0, total, &mut dropped), total);
        assert!(dropped.iter().all(|d| !d));
        let kept = focus(&lses, 2, total, &mut dropped);
        assert_eq!(dropped.iter().filter(|d| !**d).count(), 2);
        let lowest_kept = (0..5)
            .filter(|&i| !dropped[i])
            .map(|i| lses[i])
            .fold(f32::INFINITY, f32::min);
        assert!((0..5)
            .filter(|&i| dropped[i])
            .all(|i| lses[i] < lowest_kept));
        let mut edited = raw.clone();
        for (i, w) in bounds.windows(2).enumerate() {
            if dropped[i] {
                edited[cols.start + w[0]..cols.start + w[1]].fill(f32::NEG_INFINITY);
            }
        }
        apply_ape(&mut edited[cols.clone()], kept, kq_scale, p);
        let got = softmax(
            &edited
                .iter()
                .map(|&x| x as f64 * kq_scale as f64)
                .collect::<Vec<_>>(),
        );
        let mask: Vec<f32> = (0..n)
            .map(|j| {
                let c = j.wrapping_sub(cols.start);
                let hidden = cols.contains(&j)
                    && bounds
                        .windows(2)
                        .zip(&dropped)
                        .any(|(w, &d)| d && (w[0]..w[1]).contains(&c));
                if hidden {
                    f32::NEG_INFINITY
                } else {
                    0.0
                }
            })
            .collect();
        let want = reference_distribution(&raw, &mask, kq_scale, cols, p);
        for j in 0..n {
            assert!(
                (got[j] - want[j]).abs() < 1e-6,
                "column {j}: {} vs {}",
                got[j],
                want[j]
            );
        }
    }

    #[test]
    fn edited_row_softmax_matches_the_f64_reference() {
        let p = ApeParams::new(0.6, 0.7);
        let kq_scale = 0.125;
        let n = 301;
        let chunks = 11..260;
        let raw = pseudo_random_row(n, 7);
        // The last columns are future tokens: masked out.
        let mask: Vec<f32> = (0..n)
            .map(|j| if j < 290 { 0.0 } else { f32::NEG_INFINITY })
            .collect();
        let mut edited = raw.clone();
        edit_chunk_block(&mut edited[chunks.clone()], kq_scale, p);
        let got = softmax(
            &(0..n)
                .map(|j| edited[j] as f64 * kq_scale as f64 + mask[j] as f64)
                .collect::<Vec<_>>(),
        );
        let want = reference_distribution(&raw, &mask, kq_scale, chunks.clone(), p);
        for j in 0..n {
            assert!((got[j] - want[j]).abs() < 1e-6, "column {j}");
        }
        // The chunk block's mass must actually move for T,S < 1.
        let plain =
            reference_distribution(&raw, &mask, kq_scale, chunks.clone(), ApeParams::IDENTITY);
        let mass = |d: &[f64]| chunks.clone().map(|j| d[j]).sum::<f64>();
        assert!((mass(&want) - mass(&plain)).abs() > 1e-3);
    }

    #[test]
    fn two_pass_form_agrees_with_one_pass_form() {
        // Paper: w = softmax([S·T·LSE_c, LSE_o]) over the two blocks.
        let p = ApeParams::new(0.8, 0.5);
        let raw = pseudo_random_row(64, 3);
        let mask = vec![0.0f32; 64];
        let chunks = 4..40;
        let d = reference_distribution(&raw, &mask, 1.0, chunks.clone(), p);
        let lse = |it: &mut dyn Iterator<Item = f64>| {
            let v: Vec<f64> = it.collect();
            let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
        };
        let t = p.temperature as f64;
        let lse_c = lse(&mut chunks.clone().map(|j| raw[j] as f64 / t));
        let lse_o = lse(&mut (0..64)
            .filter(|j| !chunks.contains(j))
            .map(|j| raw[j] as f64));
        let w = softmax(&[(p.scale * p.temperature) as f64 * lse_c, lse_o]);
        let mass_c: f64 = chunks.map(|j| d[j]).sum();
        assert!((mass_c - w[0]).abs() < 1e-12);
    }

    #[test]
    fn chunk_lses_combine_to_the_block_lse_and_give_shares() {
        let row = pseudo_random_row(100, 5);
        let bounds = [0, 10, 10, 55, 100]; // includes an empty chunk
        let a = 0.3;
        let mut lses = Vec::new();
        let total = chunk_lses(&row, &bounds, a, &mut lses);
        let exact = |xs: &[f32]| {
            xs.iter()
                .map(|&x| (a as f64 * x as f64).exp())
                .sum::<f64>()
                .ln()
        };
        assert!((total as f64 - exact(&row)).abs() < 1e-5);
        for (i, w) in bounds.windows(2).enumerate() {
            if w[0] == w[1] {
                assert_eq!(lses[i], f32::NEG_INFINITY);
            } else {
                assert!((lses[i] as f64 - exact(&row[w[0]..w[1]])).abs() < 1e-5);
            }
        }
        let shares: f32 = lses.iter().map(|l| (l - total).exp()).sum();
        assert!((shares - 1.0).abs() < 1e-5);
    }

    #[test]
    fn validate_rejects_nonsense() {
        assert!(ApeParams::new(0.0, 1.0).validate().is_err());
        assert!(ApeParams::new(f32::NAN, 1.0).validate().is_err());
        assert!(ApeParams::DEFAULT.validate().is_ok());
        let doubt = |d| ApeParams {
            doubt: Some(d),
            ..ApeParams::DEFAULT
        };
        assert!(doubt(-0.5).validate().is_ok());
        assert!(doubt(0.5).validate().is_err());
        assert!(doubt(f32::NEG_INFINITY).validate().is_err());
    }
}
