// SPDX-License-Identifier: GPL-2.0

//! The `--svg` plot: the histogram of each stage on a log count axis, and the
//! latency over time with the maximum marked.

use plotters::{coord::Shift, prelude::*};

/// A histogram series: name and (latency µs, count) points.
pub struct HistSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

impl HistSeries {
    /// The non-empty buckets of a log-linear histogram, at their lower bound
    /// in µs (at least 0.01 µs, for the log axis).
    pub fn from_buckets(name: String, buckets: &[u64]) -> Self {
        Self {
            name,
            points: buckets
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| {
                    (
                        rtcore::hist::bucket_low(i).max(10) as f64 / 1000.0,
                        n as f64,
                    )
                })
                .collect(),
        }
    }
}

/// A time series: name and (seconds since start, worst latency µs in that slot).
pub struct TimeSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A part of the SVG.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// What drawing one returns.
type Drawn = Result<(), Box<dyn std::error::Error>>;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Writes the SVG to `path`.
pub fn write_svg(
    path: &str,
    title: &str,
    hists: &[HistSeries],
    times: &[TimeSeries],
) -> Result<(), String> {
    draw(path, title, hists, times).map_err(|e| format!("{path}: {e}"))
}

fn draw(path: &str, title: &str, hists: &[HistSeries], times: &[TimeSeries]) -> Drawn {
    let root = SVGBackend::new(path, (1100, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let (top, bottom) = root.split_vertically(450);
    draw_hists(&top, hists)?;
    draw_times(&bottom, times)?;
    root.present()?;
    Ok(())
}

/// The histograms, on log axes.
fn draw_hists(area: &Area, hists: &[HistSeries]) -> Drawn {
    let max_x = hists
        .iter()
        .flat_map(|h| h.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max)
        * 1.2;
    let max_y = hists
        .iter()
        .flat_map(|h| h.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 2.0;
    let mut chart = ChartBuilder::on(area)
        .caption("Latency distribution", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0.01f64..max_x).log_scale(), (0.5f64..max_y).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("latency (µs, log)")
        .y_desc("activations (log)")
        .draw()?;
    for (i, h) in hists.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                h.points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(h.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

/// The worst latency per time slot, the maximum marked.
fn draw_times(area: &Area, times: &[TimeSeries]) -> Drawn {
    let max_t = times
        .iter()
        .flat_map(|t| t.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let max_v = times
        .iter()
        .flat_map(|t| t.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.15;
    let mut chart = ChartBuilder::on(area)
        .caption("Worst latency per interval", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..max_t, 0f64..max_v)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("latency (µs)")
        .draw()?;
    for (i, t) in times.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                t.points.iter().copied(),
                color.stroke_width(1),
            ))?
            .label(t.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    // Mark the overall maximum.
    if let Some((name, &(x, y))) = times
        .iter()
        .flat_map(|t| t.points.iter().map(move |p| (&t.name, p)))
        .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
    {
        chart.draw_series(std::iter::once(Circle::new((x, y), 6, RED.stroke_width(2))))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("max {y:.1} µs ({name}, t={x:.1} s)"),
            (x, y),
            ("sans-serif", 14).into_font().color(&RED),
        )))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_well_formed_svg() {
        let dir = std::env::temp_dir().join(format!("rtlat-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.svg");
        let path = path.to_str().unwrap();
        let h = HistSeries {
            name: "cpu0 thread".into(),
            points: vec![(1.0, 10.0), (2.0, 100.0), (40.0, 1.0)],
        };
        let t = TimeSeries {
            name: "cpu0".into(),
            points: vec![(0.0, 3.0), (1.0, 40.0), (2.0, 5.0)],
        };
        write_svg(path, "test", &[h], &[t]).unwrap();
        let s = std::fs::read_to_string(path).unwrap();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("max 40.0"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
