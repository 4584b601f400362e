//! Paired bootstrap statistics: with a small model, per-record scores are
//! noisy, so mode differences are only meaningful with an interval around
//! them. Records are resampled as pairs (both modes answered the same
//! record), which cancels the record-difficulty variance the modes share,
//! and by cluster: records of one article (which share paragraphs, and so
//! difficulty) are drawn together, so the interval does not pretend they
//! are independent.

use serde::Serialize;

/// Resamples per interval: enough for stable 2.5/97.5 percentiles.
pub const RESAMPLES: usize = 2000;
/// Fixed so the same predictions always give the same intervals.
pub const SEED: u64 = 0x0A9E_C4A7;

/// A small deterministic generator (xorshift64): reproducible dataset
/// shuffles and bootstrap draws without an RNG dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(
            seed.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407)
                | 1,
        )
    }

    /// Uniform-ish in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// A statistic on the full sample with its percentile-bootstrap 95 %
/// confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Estimate {
    /// A value known exactly (a baseline against itself).
    pub fn exact(value: f64) -> Self {
        Self {
            value,
            lo: value,
            hi: value,
        }
    }

    /// Where the interval lies relative to `reference` (0 for differences,
    /// 1 for ratios): the basis of "significantly better/worse".
    pub fn side_of(&self, reference: f64) -> std::cmp::Ordering {
        if self.lo > reference {
            std::cmp::Ordering::Greater
        } else if self.hi < reference {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Equal
        }
    }
}

/// Records grouped into the clusters a resample draws whole: each inner
/// list holds the indices of one cluster's records.
#[derive(Clone, Debug, PartialEq)]
pub struct Clusters(Vec<Vec<usize>>);

impl Clusters {
    /// Record `i` in the cluster named `keys[i]` (first-seen order).
    pub fn of<K: AsRef<str>>(keys: &[K]) -> Self {
        let mut index: std::collections::HashMap<&str, usize> = Default::default();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let g = *index.entry(k.as_ref()).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        Self(groups)
    }

    /// Every record a cluster of its own (independent records).
    pub fn singletons(n: usize) -> Self {
        Self((0..n).map(|i| vec![i]).collect())
    }

    /// How many clusters.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn records(&self) -> usize {
        self.0.iter().map(Vec::len).sum()
    }
}

/// Bootstraps `statistic` over paired records grouped in `clusters`: it is
/// called with the record indices of the full sample, then of each
/// resample (as many clusters drawn with replacement as there are, each
/// with all its records). NaN resamples (e.g. a ratio over an all-zero
/// resample) are dropped.
pub fn bootstrap(clusters: &Clusters, statistic: impl Fn(&[usize]) -> f64) -> Estimate {
    let all: Vec<usize> = (0..clusters.records()).collect();
    let value = statistic(&all);
    let g = clusters.len();
    if g == 0 {
        return Estimate {
            value,
            lo: f64::NAN,
            hi: f64::NAN,
        };
    }
    let mut rng = Rng::new(SEED);
    let mut idx = Vec::with_capacity(all.len());
    let mut stats: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            idx.clear();
            for _ in 0..g {
                idx.extend_from_slice(&clusters.0[rng.below(g)]);
            }
            statistic(&idx)
        })
        .filter(|s| !s.is_nan())
        .collect();
    stats.sort_by(f64::total_cmp);
    Estimate {
        value,
        lo: percentile(&stats, 0.025),
        hi: percentile(&stats, 0.975),
    }
}

/// Mean difference `a[i] - b[i]` with its interval (records clustered as
/// given; `a`, `b` and the clusters cover the same records).
pub fn paired_difference(a: &[f64], b: &[f64], clusters: &Clusters) -> Estimate {
    debug_assert!(a.len() == b.len() && a.len() == clusters.records());
    bootstrap(clusters, |ix| {
        ix.iter().map(|&i| a[i] - b[i]).sum::<f64>() / ix.len() as f64
    })
}

/// Ratio of means `mean(a) / mean(b)` with its interval (retention).
pub fn ratio_of_means(a: &[f64], b: &[f64], clusters: &Clusters) -> Estimate {
    debug_assert!(a.len() == b.len() && a.len() == clusters.records());
    bootstrap(clusters, |ix| {
        let (sa, sb) = ix
            .iter()
            .fold((0.0, 0.0), |(x, y), &i| (x + a[i], y + b[i]));
        if sb == 0.0 {
            f64::NAN
        } else {
            sa / sb
        }
    })
}

/// Linear-interpolated percentile of sorted values.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n => {
            let pos = q * (n - 1) as f64;
            let (i, frac) = (pos.floor() as usize, pos.fract());
            let next = sorted[(i + 1).min(n - 1)];
            sorted[i] + (next - sorted[i]) * frac
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    /// Deterministic noise in [-1, 1).
    fn noise(rng: &mut Rng) -> f64 {
        rng.below(1_000_000) as f64 / 500_000.0 - 1.0
    }

    #[test]
    fn interval_covers_a_known_mean_difference() {
        // b is per-record difficulty plus noise; a = b + 0.05 + noise.
        let mut rng = Rng::new(7);
        let b: Vec<f64> = (0..300).map(|_| 2.0 + noise(&mut rng)).collect();
        let a: Vec<f64> = b.iter().map(|x| x + 0.05 + 0.1 * noise(&mut rng)).collect();
        let d = paired_difference(&a, &b, &Clusters::singletons(a.len()));
        assert!(d.lo < 0.05 && 0.05 < d.hi, "{d:?}");
        assert!(d.lo <= d.value && d.value <= d.hi);
        // The pairing removes the shared difficulty: the interval is far
        // narrower than the spread of b, and excludes zero.
        assert!(d.hi - d.lo < 0.05, "{d:?}");
        assert_eq!(d.side_of(0.0), Ordering::Greater);
        assert_eq!(
            paired_difference(&b, &a, &Clusters::singletons(a.len())).side_of(0.0),
            Ordering::Less
        );
    }

    #[test]
    fn no_difference_is_not_significant() {
        let mut rng = Rng::new(11);
        let b: Vec<f64> = (0..200).map(|_| noise(&mut rng)).collect();
        let a: Vec<f64> = b.iter().map(|x| x + 0.2 * noise(&mut rng)).collect();
        let d = paired_difference(&a, &b, &Clusters::singletons(a.len()));
        assert_eq!(d.side_of(0.0), Ordering::Equal, "{d:?}");
    }

    /// Intervals of a ratio, checked by what they promise: over many samples
    /// drawn with a known true ratio of means (0.9), about 95 % of the
    /// intervals contain it; the point estimate is Σa / Σb.
    #[test]
    fn ratio_intervals_cover_a_known_ratio_at_their_level() {
        let mut rng = Rng::new(5);
        let trials = 200;
        let mut covered = 0;
        for _ in 0..trials {
            let b: Vec<f64> = (0..60).map(|_| 1.0 + 0.8 * noise(&mut rng)).collect();
            // Zero-mean multiplicative noise: E[a] = 0.9 E[b].
            let a: Vec<f64> = b
                .iter()
                .map(|x| 0.9 * x * (1.0 + 0.5 * noise(&mut rng)))
                .collect();
            let r = ratio_of_means(&a, &b, &Clusters::singletons(a.len()));
            let direct = a.iter().sum::<f64>() / b.iter().sum::<f64>();
            assert!((r.value - direct).abs() < 1e-12, "{r:?} vs {direct}");
            assert!(r.lo < r.value && r.value < r.hi, "{r:?}");
            covered += usize::from(r.lo <= 0.9 && 0.9 <= r.hi);
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.88..=0.99).contains(&rate), "coverage {rate}");
        let (a, b) = ([0.9, 0.4, 0.1], [1.0, 0.5, 0.2]);
        let one = Clusters::singletons(3);
        assert_eq!(
            ratio_of_means(&a, &b, &one),
            ratio_of_means(&a, &b, &one),
            "fixed seed"
        );
        assert!(paired_difference(&[], &[], &Clusters::singletons(0))
            .lo
            .is_nan());
    }

    /// Ten articles of twenty records each, where a mode's gain depends on
    /// the article: resampling records as independent pretends there are
    /// 200 samples and gives an interval far too narrow; resampling
    /// articles gives the honest, wider one, which here includes zero.
    #[test]
    fn clustered_records_widen_the_interval() {
        let mut rng = Rng::new(3);
        let (mut a, mut b, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        for article in 0..10 {
            let effect = if article % 2 == 0 { 0.35 } else { -0.2 };
            for _ in 0..20 {
                let base = noise(&mut rng);
                b.push(base);
                a.push(base + effect + 0.05 * noise(&mut rng));
                keys.push(format!("article-{article}"));
            }
        }
        let naive = paired_difference(&a, &b, &Clusters::singletons(a.len()));
        let clusters = Clusters::of(&keys);
        assert_eq!(clusters.len(), 10);
        let honest = paired_difference(&a, &b, &clusters);
        assert_eq!(naive.value, honest.value, "the same point estimate");
        assert!(
            honest.hi - honest.lo > 3.0 * (naive.hi - naive.lo),
            "{naive:?} vs {honest:?}"
        );
        assert_eq!(naive.side_of(0.0), Ordering::Greater, "{naive:?}");
        assert_eq!(honest.side_of(0.0), Ordering::Equal, "{honest:?}");
    }

    #[test]
    fn percentiles_interpolate() {
        let v = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.0);
        assert!((percentile(&v, 0.025) - 0.1).abs() < 1e-12);
        assert_eq!(percentile(&v, 1.0), 4.0);
    }
}
