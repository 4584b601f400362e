//! The README's speed charts: time to first token against the number of
//! retrieved chunks, one line per mode, log scale (sequential grows with
//! the context, the cached modes barely move); and against the cached
//! tokens read, past the window, with decode speed beside it.

use std::path::Path;

use plotters::prelude::*;

use super::context::ContextReport;
use super::suite::SuiteReport;
use super::BenchError;

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

/// Fills `root` white, writes a title and a grey subtitle across its top,
/// and returns the area below them for the chart.
pub fn titled<'a>(
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<SVGBackend<'a>, plotters::coord::Shift>, DrawingAreaErrorKind<std::io::Error>>
{
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(58);
    top.draw(&Text::new(
        title.to_string(),
        (20, 8),
        ("sans-serif", 22).into_font(),
    ))?;
    top.draw(&Text::new(
        subtitle.to_string(),
        (20, 35),
        ("sans-serif", 14).into_font().color(&RGBColor(90, 90, 90)),
    ))?;
    Ok(body)
}

/// A mode's line: its label, colour and points.
type Series = (String, RGBColor, Vec<(f64, f64)>);

/// Renders a `bench context` report to an SVG file at `path`: time to first
/// token (left) and decode speed (right) against the cached tokens read,
/// one line per mode (sequential only where it fits its window).
pub fn context_chart(report: &ContextReport, path: &Path) -> Result<(), BenchError> {
    let err =
        |e: &dyn std::fmt::Debug| BenchError::Setup(format!("drawing {}: {e:?}", path.display()));
    let mut labels: Vec<String> = Vec::new();
    for m in report.points.iter().flat_map(|p| &p.modes) {
        if !labels.contains(&m.mode) {
            labels.push(m.mode.clone());
        }
    }
    let series = |value: &dyn Fn(&super::ModeFigures) -> f64| -> Vec<Series> {
        labels
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let pts = report
                    .points
                    .iter()
                    .filter_map(|p| {
                        let m = p.modes.iter().find(|m| &m.mode == name)?;
                        Some((p.tokens as f64, value(m).max(1e-3)))
                    })
                    .collect();
                (name.clone(), COLORS[i % COLORS.len()], pts)
            })
            .collect()
    };
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
    let panels = [
        (
            left,
            "time to first token, ms (log scale)",
            series(&|m| m.ttft_ms),
        ),
        (
            right,
            "decode, tokens/s (log scale)",
            series(&|m| m.decode_tokens_per_s),
        ),
    ];
    for (area, y_desc, series) in panels {
        let all = || series.iter().flat_map(|s| s.2.iter());
        let x_min = all().map(|p| p.0).fold(f64::INFINITY, f64::min).min(1e9) / 1.3;
        let x_max = all().map(|p| p.0).fold(1.0, f64::max) * 1.3;
        let y_min = all().map(|p| p.1).fold(f64::INFINITY, f64::min).min(1e9) / 2.0;
        let y_max = all().map(|p| p.1).fold(1.0, f64::max) * 2.0;
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min..x_max).log_scale(), (y_min..y_max).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("cached tokens read (log scale)")
            .y_desc(y_desc)
            .light_line_style(TRANSPARENT)
            .y_labels(8)
            .y_label_formatter(&|v| format!("{v:.1}"))
            .x_label_formatter(&|v| format!("{:.0}K", v / 1024.0))
            .draw()
            .map_err(|e| err(&e))?;
        draw_lines(&mut chart, series, SeriesLabelPosition::LowerLeft).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
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
