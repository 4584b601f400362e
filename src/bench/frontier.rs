//! The fast-and-right frontier: each mode's answer likelihood (retention
//! against fair sequential prefill, from `eval --json`) against its speedup
//! in time to first token over the same baseline (from `bench ttft
//! --json`, one run or several on the same model and workload, each mode's
//! ratio from the one run that timed it first), joined by the mode's label. A point no other point beats on
//! both axes is on the frontier; the presets are chosen from it, and the
//! issue's bar (≥ 0.98 of sequential's likelihood with the interval's low
//! end ≥ 0.95, "contains" at most 3 points below, ≥ 20× its speed) is
//! checked per point.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::BenchError;
use crate::eval::stats::Estimate;

/// The bar a shipped default must clear.
pub const TARGET_RETENTION: f64 = 0.98;
pub const TARGET_RETENTION_LOW: f64 = 0.95;
pub const TARGET_CONTAINS_DROP: f64 = 0.03;
pub const TARGET_SPEEDUP: f64 = 20.0;

#[derive(Deserialize)]
struct EvalFile {
    summary: Vec<SummaryIn>,
    paired: Vec<PairedIn>,
    retention: Vec<RetentionIn>,
}

#[derive(Deserialize)]
struct SummaryIn {
    label: String,
    records: usize,
}

#[derive(Deserialize)]
struct PairedIn {
    a_label: String,
    b_label: String,
    contains: Estimate,
}

#[derive(Deserialize)]
struct RetentionIn {
    label: String,
    baseline: String,
    likelihood: Estimate,
}

#[derive(Deserialize)]
struct TtftFile {
    model: String,
    machine: String,
    threads: usize,
    chunks: usize,
    chunk_tokens: usize,
    baseline: String,
    modes: Vec<ModeIn>,
}

#[derive(Deserialize)]
struct ModeIn {
    mode: String,
    ttft_ms: f64,
    speedup: f64,
}

/// One mode on both axes.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub label: String,
    /// Fair sequential TTFT over this mode's (cold state reads).
    pub speedup: f64,
    pub ttft_ms: f64,
    /// The `bench ttft` report both came from (a ratio within one run).
    pub speed_report: PathBuf,
    /// Mean gold-answer likelihood per token relative to sequential's.
    pub likelihood: Estimate,
    /// "Contains the gold answer", this mode minus sequential.
    pub contains_delta: Estimate,
    /// No other point is at least as fast and as likely, and better in one.
    pub on_frontier: bool,
    /// Clears the bar for a shipped default.
    pub meets_target: bool,
}

/// The joined figures.
#[derive(Clone, Debug, Serialize)]
pub struct Frontier {
    pub model: String,
    pub machine: String,
    pub threads: usize,
    pub chunks: usize,
    pub chunk_tokens: usize,
    /// The quality baseline (eval) and the speed baseline (bench).
    pub quality_baseline: String,
    pub speed_baseline: String,
    /// Records every point's quality figures rest on.
    pub records: usize,
    pub points: Vec<Point>,
    /// Modes in only one of the two files (left out of the chart).
    pub unmatched: Vec<String>,
    /// The point a shipped default takes by the rule ([`choose`]).
    pub choice: Option<String>,
}

/// Joins an `eval --json` output and `bench ttft --json` outputs (at least
/// one): the first that times a mode gives its speed. The reports must time
/// the same model, machine, workload, threads and baseline.
pub fn join(eval: &Path, ttfts: &[PathBuf]) -> Result<Frontier, BenchError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| BenchError::Setup(format!("{}: {e}", p.display())))
    };
    let bad = |p: &Path, e: serde_json::Error| {
        BenchError::Setup(format!(
            "{}: not the expected JSON report: {e}",
            p.display()
        ))
    };
    let q: EvalFile = serde_json::from_str(&read(eval)?).map_err(|e| bad(eval, e))?;
    let reports = ttfts
        .iter()
        .map(|p| {
            let t: TtftFile = serde_json::from_str(&read(p)?).map_err(|e| bad(p, e))?;
            Ok((p, t))
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    let Some(((first, t), others)) = reports.split_first() else {
        return Err(BenchError::Setup("no `bench ttft` report".into()));
    };
    let workload = |t: &TtftFile| {
        (
            t.model.clone(),
            t.machine.clone(),
            t.threads,
            t.chunks,
            t.chunk_tokens,
            t.baseline.clone(),
        )
    };
    if let Some((p, _)) = others.iter().find(|(_, o)| workload(o) != workload(t)) {
        return Err(BenchError::Setup(format!(
            "{} times another model, machine, workload, thread count or baseline than {}: its speedups are not comparable",
            p.display(),
            first.display()
        )));
    }
    let speed_of = |label: &str| {
        reports
            .iter()
            .find_map(|(p, t)| t.modes.iter().find(|m| m.mode == label).map(|m| (*p, m)))
    };
    let quality_baseline = q
        .retention
        .first()
        .map(|r| r.baseline.clone())
        .or_else(|| q.summary.first().map(|s| s.label.clone()))
        .ok_or_else(|| BenchError::Setup(format!("{}: no modes", eval.display())))?;
    let mut points = vec![Point {
        label: quality_baseline.clone(),
        speedup: 1.0,
        // Every speedup is the baseline's TTFT over the mode's.
        ttft_ms: t.modes.first().map_or(0.0, |m| m.speedup * m.ttft_ms),
        speed_report: first.to_path_buf(),
        likelihood: Estimate::exact(1.0),
        contains_delta: Estimate::exact(0.0),
        on_frontier: false,
        meets_target: false,
    }];
    let mut unmatched = Vec::new();
    for r in &q.retention {
        let speed = speed_of(&r.label);
        let contains = q
            .paired
            .iter()
            .find(|p| p.a_label == r.label && p.b_label == r.baseline);
        match (speed, contains) {
            (Some((p, m)), Some(c)) => points.push(Point {
                label: r.label.clone(),
                speedup: m.speedup,
                ttft_ms: m.ttft_ms,
                speed_report: p.to_path_buf(),
                likelihood: r.likelihood,
                contains_delta: c.contains,
                on_frontier: false,
                meets_target: false,
            }),
            _ => unmatched.push(r.label.clone()),
        }
    }
    for m in reports.iter().flat_map(|(_, t)| &t.modes) {
        if m.mode != quality_baseline
            && !q.retention.iter().any(|r| r.label == m.mode)
            && !unmatched.contains(&m.mode)
        {
            unmatched.push(m.mode.clone());
        }
    }
    mark(&mut points);
    let choice = choose(&points).map(|p| p.label.clone());
    Ok(Frontier {
        model: t.model.clone(),
        machine: t.machine.clone(),
        threads: t.threads,
        chunks: t.chunks,
        chunk_tokens: t.chunk_tokens,
        quality_baseline,
        speed_baseline: t.baseline.clone(),
        records: q.summary.iter().map(|s| s.records).min().unwrap_or(0),
        points,
        unmatched,
        choice,
    })
}

/// The shipped default's point: at ≥ [`TARGET_SPEEDUP`], one that meets
/// the bar if any does, else the one closest to it; closest is most often
/// containing the gold answer (what the fast points fall short on), then
/// the surest of it. Call after [`mark`].
pub fn choose(points: &[Point]) -> Option<&Point> {
    let fast = || points.iter().filter(|p| p.speedup >= TARGET_SPEEDUP);
    let pool: Vec<&Point> = if fast().any(|p| p.meets_target) {
        fast().filter(|p| p.meets_target).collect()
    } else {
        fast().collect()
    };
    pool.into_iter().max_by(|a, b| {
        a.contains_delta
            .value
            .total_cmp(&b.contains_delta.value)
            .then(a.likelihood.value.total_cmp(&b.likelihood.value))
    })
}

/// Marks the frontier and the points that clear the bar.
fn mark(points: &mut [Point]) {
    let snapshot: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.speedup, p.likelihood.value))
        .collect();
    for (i, p) in points.iter_mut().enumerate() {
        let (s, l) = snapshot[i];
        p.on_frontier = !snapshot
            .iter()
            .enumerate()
            .any(|(j, &(s2, l2))| j != i && s2 >= s && l2 >= l && (s2 > s || l2 > l));
        p.meets_target = p.likelihood.value >= TARGET_RETENTION
            && p.likelihood.lo >= TARGET_RETENTION_LOW
            && p.contains_delta.value >= -TARGET_CONTAINS_DROP
            && p.speedup >= TARGET_SPEEDUP;
    }
}

/// Draws the frontier to an SVG at `path`: speedup (log) across, likelihood
/// retention up with its interval, the target region shaded, the frontier
/// joined by a line.
pub fn chart(f: &Frontier, path: &Path) -> Result<(), BenchError> {
    let err =
        |e: &dyn std::fmt::Debug| BenchError::Setup(format!("drawing {}: {e:?}", path.display()));
    let x_max = f.points.iter().map(|p| p.speedup).fold(30.0, f64::max) * 1.6;
    let y_lo = f.points.iter().map(|p| p.likelihood.lo).fold(0.9, f64::min) - 0.03;
    let y_hi = f
        .points
        .iter()
        .map(|p| p.likelihood.hi)
        .fold(1.05, f64::max)
        + 0.03;
    let subtitle = format!(
        "{} · {} records · {} chunks × {} tokens · {} threads · vs {}",
        super::chart::file_name(&f.model),
        f.records,
        f.chunks,
        f.chunk_tokens,
        f.threads,
        f.quality_baseline
    );
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    let body = crate::svg::titled(
        &root,
        "Fast and right: answer likelihood vs time to first token",
        &subtitle,
    )
    .map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&body)
        .margin(18)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((0.7..x_max).log_scale(), y_lo..y_hi)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("time-to-first-token speedup over fair sequential prefill (log scale)")
        .y_desc("answer likelihood retention (95 % CI)")
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| format!("{v:.0}×"))
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()
        .map_err(|e| err(&e))?;
    // The region a shipped default must reach.
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(TARGET_SPEEDUP, TARGET_RETENTION), (x_max, y_hi)],
            RGBColor(40, 150, 90).mix(0.12).filled(),
        )))
        .map_err(|e| err(&e))?;
    let mut frontier: Vec<(f64, f64)> = f
        .points
        .iter()
        .filter(|p| p.on_frontier)
        .map(|p| (p.speedup, p.likelihood.value))
        .collect();
    frontier.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(LineSeries::new(
            frontier,
            RGBColor(90, 120, 200).stroke_width(2),
        ))
        .map_err(|e| err(&e))?;
    for p in &f.points {
        let color = if p.meets_target {
            RGBColor(40, 150, 90)
        } else if p.on_frontier {
            RGBColor(90, 120, 200)
        } else {
            RGBColor(150, 150, 150)
        };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(p.speedup, p.likelihood.lo), (p.speedup, p.likelihood.hi)],
                color.stroke_width(1),
            )))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Circle::new(
                (p.speedup, p.likelihood.value),
                5,
                color.filled(),
            )))
            .map_err(|e| err(&e))?;
    }
    // Labels right of their points (left where they would leave the
    // picture), moved a line at a time where they would overlap (the
    // windowed re-reads crowd together).
    let right_edge = root.dim_in_pixel().0 as i32 - 4;
    // The default's point is ringed and says so.
    let common = common_t_s(&f.points);
    let labels: Vec<String> = f
        .points
        .iter()
        .map(|p| {
            let label = short_label(&p.label, common.as_ref());
            match f.choice.as_ref() == Some(&p.label) {
                true => format!("{label} (the default)"),
                false => label,
            }
        })
        .collect();
    if let Some(p) = f
        .points
        .iter()
        .find(|p| f.choice.as_ref() == Some(&p.label))
    {
        chart
            .draw_series(std::iter::once(Circle::new(
                (p.speedup, p.likelihood.value),
                9,
                BLACK.stroke_width(2),
            )))
            .map_err(|e| err(&e))?;
    }
    let anchors: Vec<(i32, i32, i32)> = f
        .points
        .iter()
        .zip(&labels)
        .map(|(p, l)| {
            let (x, y) = chart.backend_coord(&(p.speedup, p.likelihood.value));
            let w = LABEL_CHAR * l.chars().count() as i32;
            let x = if x + 8 + w <= right_edge {
                x + 8
            } else {
                x - 8 - w
            };
            (x, y - LABEL_LINE / 2, w)
        })
        .collect();
    for ((label, &(x, _, _)), y) in labels.iter().zip(&anchors).zip(place_labels(&anchors)) {
        root.draw(&Text::new(
            label.as_str(),
            (x, y),
            ("sans-serif", 12).into_font(),
        ))
        .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A label's line height and (generous) character width in pixels, at
/// the chart's 12-point font.
const LABEL_LINE: i32 = 14;
const LABEL_CHAR: i32 = 7;

/// Top edges for labels anchored at `(x, y, width)` (pixels): each keeps
/// its `y` unless it would overlap one placed before it (from the top),
/// then moves by whole lines, down first, to the nearest free place.
fn place_labels(anchors: &[(i32, i32, i32)]) -> Vec<i32> {
    let mut order: Vec<usize> = (0..anchors.len()).collect();
    order.sort_by_key(|&i| anchors[i].1);
    let mut placed: Vec<(i32, i32, i32)> = Vec::new();
    let mut ys = vec![0; anchors.len()];
    for i in order {
        let (x, y0, w) = anchors[i];
        let clashes = |y: i32| {
            placed
                .iter()
                .any(|&(px, py, pw)| x < px + pw && px < x + w && (y - py).abs() < LABEL_LINE)
        };
        let y = (0..=placed.len() as i32 + 1)
            .flat_map(|k| [y0 + k * LABEL_LINE, y0 - k * LABEL_LINE])
            .find(|&y| !clashes(y))
            .unwrap_or(y0);
        placed.push((x, y, w));
        ys[i] = y;
    }
    ys
}

/// A label's APE `T` and `S` and what follows them: `ape (T=0.8, S=1,
/// re-read 1)` → `("ape", "0.8", "1", ", re-read 1)")`.
fn split_t_s(label: &str) -> Option<(&str, &str, &str, &str)> {
    let (head, tail) = label.split_once(" (T=")?;
    let (t, after) = tail.split_once(", S=")?;
    let end = after
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(after.len());
    let (s, rest) = after.split_at(end);
    Some((head, t, s, rest))
}

/// The `T` and `S` most APE points of a run share (the model's settings,
/// in the subtitle): what chart labels leave out.
fn common_t_s(points: &[Point]) -> Option<(String, String)> {
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (_, t, s, _) in points.iter().filter_map(|p| split_t_s(&p.label)) {
        *counts.entry((t.to_string(), s.to_string())).or_default() += 1;
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(ts, _)| ts)
}

/// `ape (T=0.8, S=1, re-read 1 (window 32))` → `ape (re-read 1 (window
/// 32))` where `(0.8, 1)` is `common`; a `T` or `S` that differs stays
/// (`ape (S=0.8, re-read 1 …)`), so two points that differ only there
/// keep different labels.
fn short_label(label: &str, common: Option<&(String, String)>) -> String {
    let Some((head, t, s, rest)) = split_t_s(label) else {
        return label.to_string();
    };
    let mut parts: Vec<String> = Vec::new();
    if common.is_none_or(|(ct, _)| ct != t) {
        parts.push(format!("T={t}"));
    }
    if common.is_none_or(|(_, cs)| cs != s) {
        parts.push(format!("S={s}"));
    }
    let refinements = rest.strip_prefix(", ").and_then(|r| r.strip_suffix(')'));
    parts.extend(refinements.map(str::to_string));
    match parts.is_empty() {
        true => head.to_string(),
        false => format!("{head} ({})", parts.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(label: &str, speedup: f64, l: f64, lo: f64, contains: f64) -> Point {
        Point {
            label: label.into(),
            speedup,
            ttft_ms: 0.0,
            speed_report: PathBuf::new(),
            likelihood: Estimate {
                value: l,
                lo,
                hi: l + 0.05,
            },
            contains_delta: Estimate {
                value: contains,
                lo: contains - 0.05,
                hi: contains + 0.05,
            },
            on_frontier: false,
            meets_target: false,
        }
    }

    #[test]
    fn the_frontier_is_the_points_nothing_beats_on_both_axes() {
        let mut p = vec![
            point("sequential", 1.0, 1.0, 1.0, 0.0),
            point("slow and worse", 0.9, 0.95, 0.9, 0.0),
            point("fast", 50.0, 0.9, 0.85, -0.1),
            point("window", 25.0, 0.99, 0.96, -0.02),
            point("window, less sure", 25.0, 0.99, 0.94, -0.02),
            point("dominated", 20.0, 0.97, 0.95, 0.0),
        ];
        mark(&mut p);
        let on: Vec<&str> = p
            .iter()
            .filter(|p| p.on_frontier)
            .map(|p| p.label.as_str())
            .collect();
        assert_eq!(on, ["sequential", "fast", "window", "window, less sure"]);
        let meets: Vec<&str> = p
            .iter()
            .filter(|p| p.meets_target)
            .map(|p| p.label.as_str())
            .collect();
        assert_eq!(
            meets,
            ["window"],
            "the interval's low end and contains count"
        );
        assert_eq!(choose(&p).map(|p| p.label.as_str()), Some("window"));
    }

    #[test]
    fn without_a_point_at_the_bar_the_default_is_the_closest_fast_one() {
        let mut p = vec![
            point("sequential", 1.0, 1.0, 1.0, 0.0),
            point("whole re-read", 6.0, 1.4, 1.2, 0.06),
            point("fast", 60.0, 1.1, 1.0, -0.17),
            point("tokens", 22.0, 1.4, 1.2, -0.15),
            point("sentences", 24.0, 1.4, 1.2, -0.08),
            point("sentences, less sure", 24.0, 1.3, 1.2, -0.08),
        ];
        mark(&mut p);
        assert!(p.iter().all(|p| !p.meets_target));
        // Not the slow whole re-read, however good; among the fast ones the
        // most "contains", then the surest.
        assert_eq!(choose(&p).map(|p| p.label.as_str()), Some("sentences"));
        p.retain(|p| p.speedup < TARGET_SPEEDUP);
        assert!(choose(&p).is_none());
    }

    #[test]
    fn crowded_labels_move_apart_and_lone_ones_stay() {
        // Two labels over the same pixels, a third elsewhere.
        let anchors = [(100, 50, 80), (120, 55, 80), (400, 52, 80)];
        let ys = place_labels(&anchors);
        assert_eq!(ys[0], 50, "the upper one keeps its place");
        assert_eq!(ys[1], 55 + LABEL_LINE, "the lower one moves a line down");
        assert_eq!(ys[2], 52, "no overlap, no move");
        // A third on the same spot finds the next free line.
        let ys = place_labels(&[(100, 50, 80), (100, 50, 80), (100, 50, 80)]);
        let mut sorted = ys.clone();
        sorted.sort();
        assert_eq!(sorted, [50 - LABEL_LINE, 50, 50 + LABEL_LINE]);
    }

    #[test]
    fn chart_labels_leave_out_the_shared_t_and_s_and_keep_a_different_one() {
        let common = Some(("0.8".to_string(), "1".to_string()));
        let short = |l: &str| short_label(l, common.as_ref());
        assert_eq!(
            short("ape (T=0.8, S=1, re-read 1 (window 32))"),
            "ape (re-read 1 (window 32))"
        );
        assert_eq!(short("ape (T=0.8, S=1)"), "ape");
        assert_eq!(
            short("ape (T=0.8, S=0.8, re-read 1 (window 48, sentences))"),
            "ape (S=0.8, re-read 1 (window 48, sentences))"
        );
        assert_eq!(
            short("ape (T=1, S=1.086, focus 3)"),
            "ape (T=1, S=1.086, focus 3)"
        );
        assert_eq!(short("sequential"), "sequential");
        // The shared pair is the most common one among the points.
        let p = [
            point("ape (T=0.8, S=1)", 60.0, 1.0, 1.0, 0.0),
            point("ape (T=0.8, S=1, re-read 1)", 6.0, 1.0, 1.0, 0.0),
            point("ape (T=0.8, S=0.8, re-read 1)", 6.0, 1.0, 1.0, 0.0),
            point("sequential", 1.0, 1.0, 1.0, 0.0),
        ];
        assert_eq!(common_t_s(&p), common);
    }

    #[test]
    fn labels_join_the_two_reports_and_the_chart_is_drawn() {
        let dir = tempfile::tempdir().expect("tmp");
        let est = |v: f64| serde_json::json!({"value": v, "lo": v - 0.04, "hi": v + 0.04});
        let eval = serde_json::json!({
            "summary": [{"label": "sequential", "records": 300}, {"label": "ape (T=0.8, S=1)", "records": 300}],
            "paired": [
                {"a_label": "ape (T=0.8, S=1)", "b_label": "sequential", "contains": est(-0.1)},
                {"a_label": "pcw", "b_label": "sequential", "contains": est(-0.2)}
            ],
            "retention": [
                {"label": "ape (T=0.8, S=1)", "baseline": "sequential", "likelihood": est(0.9)},
                {"label": "pcw", "baseline": "sequential", "likelihood": est(0.8)}
            ]
        });
        let ttft = serde_json::json!({
            "model": "/m/qwen.gguf", "machine": "cpu", "threads": 2, "chunks": 10,
            "chunk_tokens": 256, "baseline": "sequential (flash attention on)",
            "modes": [
                {"mode": "sequential", "ttft_ms": 40000.0, "speedup": 1.0},
                {"mode": "ape (T=0.8, S=1)", "ttft_ms": 800.0, "speedup": 50.0},
                {"mode": "parallel", "ttft_ms": 790.0, "speedup": 50.6}
            ]
        });
        let (e, t, svg) = (
            dir.path().join("e.json"),
            dir.path().join("t.json"),
            dir.path().join("f.svg"),
        );
        std::fs::write(&e, eval.to_string()).expect("write");
        std::fs::write(&t, ttft.to_string()).expect("write");
        let f = join(&e, std::slice::from_ref(&t)).expect("join");
        assert_eq!(f.points.len(), 2);
        assert_eq!(
            (f.points[1].speedup, f.points[1].likelihood.value),
            (50.0, 0.9)
        );
        assert_eq!(f.points[0].ttft_ms, 40000.0);
        assert_eq!(f.unmatched, ["pcw", "parallel"]);
        assert_eq!(f.records, 300);
        chart(&f, &svg).expect("chart");
        let text = std::fs::read_to_string(&svg).expect("svg");
        assert!(text.contains("<svg") && text.contains("ape"), "{text}");
        // The only point at >= 20x is the default's, and the chart says so.
        assert_eq!(f.choice.as_deref(), Some("ape (T=0.8, S=1)"));
        assert!(text.contains("ape (the default)"), "{text}");
        // A second run timing PCW: its point joins with that run's ratio;
        // the first run still gives what it timed.
        let mut second = ttft.clone();
        second["modes"] = serde_json::json!([
            {"mode": "sequential", "ttft_ms": 42000.0, "speedup": 1.0},
            {"mode": "ape (T=0.8, S=1)", "ttft_ms": 700.0, "speedup": 60.0},
            {"mode": "pcw", "ttft_ms": 1000.0, "speedup": 42.0}
        ]);
        let t2 = dir.path().join("t2.json");
        std::fs::write(&t2, second.to_string()).expect("write");
        let f = join(&e, &[t.clone(), t2.clone()]).expect("join");
        let speed = |l: &str| {
            let p = f.points.iter().find(|p| p.label == l).expect("point");
            (p.speedup, p.speed_report.clone())
        };
        assert_eq!(speed("ape (T=0.8, S=1)"), (50.0, t.clone()));
        assert_eq!(speed("pcw"), (42.0, t2.clone()));
        assert_eq!(f.unmatched, ["parallel"]);
        // A run of another workload, or on another machine, is refused,
        // not mixed in.
        for (field, value) in [("chunks", serde_json::json!(20)), ("machine", "gpu".into())] {
            let mut other = second.clone();
            other[field] = value;
            std::fs::write(&t2, other.to_string()).expect("write");
            let err = join(&e, &[t.clone(), t2.clone()]).expect_err(field);
            assert!(err.to_string().contains("not comparable"), "{err}");
        }
        std::fs::write(&t, "{}").expect("write");
        let e = join(&e, &[t]).expect_err("not a ttft report").to_string();
        assert!(e.contains("t.json"), "{e}");
    }
}
