//! The speed charts of docs/results.md: time to first token against the number of
//! retrieved chunks, one line per mode, log scale (sequential grows with
//! the context, the cached modes barely move); and against the cached
//! tokens read, past the window, with decode speed beside it.

use std::path::Path;

use plotters::prelude::*;

use super::context::ContextReport;
use super::suite::SuiteReport;
use super::BenchError;
use crate::svg::titled;

const COLORS: [RGBColor; 6] = [
    RGBColor(200, 70, 60),
    RGBColor(150, 110, 40),
    RGBColor(90, 120, 200),
    RGBColor(40, 150, 90),
    RGBColor(130, 70, 170),
    RGBColor(60, 60, 60),
];

/// Renders `report`'s TTFT figures (cold state reads) to an SVG file at
/// `path`, one line per mode.
pub fn ttft_chart(report: &SuiteReport, path: &Path) -> Result<(), BenchError> {
    let err =
        |e: &dyn std::fmt::Debug| BenchError::Setup(format!("drawing {}: {e:?}", path.display()));
    let labels: Vec<String> = report
        .sizes
        .first()
        .map(|p| p.modes.iter().map(|m| m.mode.clone()).collect())
        .unwrap_or_default();
    let series: Vec<_> = labels
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let pts: Vec<(f64, f64)> = report
                .sizes
                .iter()
                .filter_map(|p| Some((p.chunks as f64, p.modes.get(i)?.ttft_ms.max(1.0))))
                .collect();
            (name.clone(), COLORS[i % COLORS.len()], pts)
        })
        .collect();
    let all = || series.iter().flat_map(|s| s.2.iter());
    let x_max = all().map(|p| p.0).fold(1.0, f64::max) * 1.08;
    let y_min = all().map(|p| p.1).fold(f64::INFINITY, f64::min).min(1e6) / 2.0;
    let y_max = all().map(|p| p.1).fold(1.0, f64::max) * 2.0;
    let subtitle = format!(
        "{} · {} · {} tokens per chunk",
        file_name(&report.model),
        report.machine,
        report.chunk_tokens
    );
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    let body =
        titled(&root, "Time to first token vs retrieved chunks", &subtitle).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&body)
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, (y_min..y_max).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("retrieved chunks")
        .y_desc("time to first token, ms (log scale)")
        .light_line_style(TRANSPARENT)
        .y_labels(8)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(|e| err(&e))?;
    draw_lines(&mut chart, series, SeriesLabelPosition::UpperLeft).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// The file name of a model path, for a chart's subtitle.
pub fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// A mode's line: its label, colour and points.
type Series = (String, RGBColor, Vec<(f64, f64)>);

/// Renders a `bench context` report to an SVG file at `path`: time to first
/// token (left; state files read cold, and held in the fastest memory
/// tier where the engine has tiers) and decode speed (right) against the
/// cached tokens read, one line per mode (sequential only where it fits
/// its window).
pub fn context_chart(report: &ContextReport, path: &Path) -> Result<(), BenchError> {
    let err =
        |e: &dyn std::fmt::Debug| BenchError::Setup(format!("drawing {}: {e:?}", path.display()));
    let mut labels: Vec<String> = Vec::new();
    for m in report.points.iter().flat_map(|p| &p.modes) {
        if !labels.contains(&m.mode) {
            labels.push(m.mode.clone());
        }
    }
    // `value` of every mode at every size it was timed at; None: not timed.
    let series = |value: &dyn Fn(&super::ModeFigures) -> Option<f64>| -> Vec<Vec<(f64, f64)>> {
        labels
            .iter()
            .map(|name| {
                report
                    .points
                    .iter()
                    .filter_map(|p| {
                        let m = p.modes.iter().find(|m| &m.mode == name)?;
                        Some((p.tokens as f64, value(m)?.max(1e-3)))
                    })
                    .collect()
            })
            .collect()
    };
    let named = |lines: Vec<Vec<(f64, f64)>>, suffix: &dyn Fn(&str) -> String, first: usize| {
        lines
            .into_iter()
            .zip(&labels)
            .filter(|(pts, _)| !pts.is_empty())
            .enumerate()
            .map(|(i, (pts, name))| (suffix(name), COLORS[(first + i) % COLORS.len()], pts))
            .collect::<Vec<Series>>()
    };
    // Time to first token with state files read cold, and, where the engine
    // keeps states in memory (RAM, pinned host memory, GPU memory), from its
    // fastest tier: what a question whose chunks are already held pays.
    let mut ttft = named(series(&|m| Some(m.ttft_ms)), &|n| n.to_string(), 0);
    let tier = report
        .points
        .iter()
        .flat_map(|p| &p.modes)
        .find_map(|m| m.memory.first())
        .map(|t| t.tier.clone());
    if let Some(tier) = &tier {
        let held = series(&|m| Some(m.memory.first()?.ttft_ms));
        ttft.extend(named(
            held,
            &|n| format!("{n}, states in {tier}"),
            ttft.len(),
        ));
    }
    let decode = named(
        series(&|m| Some(m.decode_tokens_per_s)),
        &|n| n.to_string(),
        0,
    );
    let subtitle = format!(
        "{} · {} · {} threads · window {} · chunks of {} tokens on shared positions",
        file_name(&report.model),
        report.machine,
        report.threads,
        report.window,
        report.chunk_tokens
    );
    let root = SVGBackend::new(path, (1100, 520)).into_drawing_area();
    let body = titled(
        &root,
        "What reading more costs: cached tokens per question",
        &subtitle,
    )
    .map_err(|e| err(&e))?;
    let (left, right) = body.split_horizontally(550);
    // Times grow with the tokens read, decode speed falls: each legend sits
    // where its lines are not.
    let panels = [
        (
            left,
            "time to first token, ms (log scale)",
            ttft,
            SeriesLabelPosition::UpperLeft,
        ),
        (
            right,
            "decode, tokens/s (log scale)",
            decode,
            SeriesLabelPosition::LowerLeft,
        ),
    ];
    // Ticks at the sizes measured (a log axis's own ticks crowd past 32K).
    let sizes: Vec<f64> = report.points.iter().map(|p| p.tokens as f64).collect();
    for (area, y_desc, series, legend) in panels {
        let all = || series.iter().flat_map(|s| s.2.iter());
        let x_min = all().map(|p| p.0).fold(f64::INFINITY, f64::min).min(1e9) / 1.3;
        let x_max = all().map(|p| p.0).fold(1.0, f64::max) * 1.3;
        let lo = all().map(|p| p.1).fold(f64::INFINITY, f64::min).min(1e9);
        let hi = all().map(|p| p.1).fold(1.0, f64::max);
        // Room for the legend, a row's share of the axis per line, above
        // the lines (upper legend) or below them (lower).
        let room = (hi / lo).max(10.0).powf(0.07 * series.len() as f64 + 0.1);
        let (y_min, y_max) = match legend {
            SeriesLabelPosition::UpperLeft => (lo / 2.0, hi * 2.0 * room),
            _ => (lo / 2.0 / room, hi * 2.0),
        };
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (x_min..x_max).log_scale().with_key_points(sizes.clone()),
                (y_min..y_max)
                    .log_scale()
                    .with_key_points(one_two_five(y_min, y_max)),
            )
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("cached tokens read (log scale)")
            .y_desc(y_desc)
            .light_line_style(TRANSPARENT)
            .y_labels(8)
            .y_label_formatter(&|v| format!("{v}"))
            .x_label_formatter(&|v| format!("{:.0}K", v / 1024.0))
            .draw()
            .map_err(|e| err(&e))?;
        draw_lines(&mut chart, series, legend).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Ticks for a log axis from `lo` to `hi`: 1, 2 and 5 times powers of ten
/// (a log axis's own ticks are powers of ten only, one or two per panel).
fn one_two_five(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(lo.max(1e-9).log10().floor());
    while decade <= hi {
        ticks.extend(
            [1.0, 2.0, 5.0]
                .map(|m| m * decade)
                .into_iter()
                .filter(|t| (lo..=hi).contains(t)),
        );
        decade *= 10.0;
    }
    ticks
}

/// One line with dots per mode, and the legend at `legend`.
fn draw_lines<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    series: Vec<Series>,
    legend: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (name, color, pts) in series {
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(3)))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 5, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .draw()
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_ticks_are_one_two_five_inside_the_range() {
        assert_eq!(
            super::one_two_five(30.0, 1200.0),
            vec![50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        assert_eq!(super::one_two_five(0.6, 3.0), vec![1.0, 2.0]);
    }
}
