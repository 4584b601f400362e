//! What every chart here starts from: a white SVG page with a title and a
//! subtitle. Its own module because benchmarks (`bench`) and evaluations
//! (`eval`) both draw, and neither should import the other for it.

use plotters::prelude::*;

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
