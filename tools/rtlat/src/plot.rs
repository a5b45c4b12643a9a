// SPDX-License-Identifier: GPL-2.0

//! The `--svg` plot: the histogram of each stage on a log count axis, and the
//! latency over time with the maximum marked; with `--blame`, per CPU its
//! worst activation and its late time as stacked bars of their sources.

use plotters::{
    coord::{types::RangedCoordf64, Shift},
    prelude::*,
    style::text_anchor::{HPos, Pos, VPos},
};

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

/// A part of a stacked bar: the source it is (its name in the legend,
/// [`OTHERS`] for the sources past those named) and its length.
pub struct Segment {
    pub source: String,
    pub value: f64,
}

/// The name of the segments of the sources past those named.
pub const OTHERS: &str = "others";

/// A stacked bar: its row's name and its segments, end to end from 0.
pub struct Bar {
    pub name: String,
    pub segments: Vec<Segment>,
    /// How many of the segments came before the interrupt (a worst
    /// activation's; 0 in a bar of shares).
    pub irq_parts: usize,
}

/// The `--blame` panels, as stacked bars.
#[derive(Default)]
pub struct BlamePanels {
    /// The worst activations explained, worst first: each one's parts in
    /// µs in the analysis' order, those before the interrupt, then those
    /// after it.
    pub worst: Vec<Bar>,
    /// Per CPU the ranked sources' shares of its late time in %, then
    /// [`OTHERS`].
    pub shares: Vec<Bar>,
}

impl BlamePanels {
    fn is_empty(&self) -> bool {
        self.worst.is_empty() && self.shares.is_empty()
    }

    /// The rows of the panels side by side: the more numerous bars'.
    fn rows(&self) -> usize {
        self.worst.len().max(self.shares.len())
    }
}

/// A part of the SVG.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// What drawing one returns.
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// The colours of the series, and of the sources in the blame panels (a
/// source the same in every bar; [`OTHERS`] is grey).
const COLORS: [RGBColor; 18] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];
const OTHERS_COLOR: RGBColor = RGBColor(150, 150, 150);

/// Writes the SVG to `path`.
pub fn write_svg(
    path: &str,
    title: &str,
    hists: &[HistSeries],
    times: &[TimeSeries],
) -> Result<(), String> {
    write_svg_with_blame(path, title, hists, times, &BlamePanels::default())
}

/// Writes the SVG to `path`, with the blame panels below the others if
/// `blame` has a bar.
pub fn write_svg_with_blame(
    path: &str,
    title: &str,
    hists: &[HistSeries],
    times: &[TimeSeries],
    blame: &BlamePanels,
) -> Result<(), String> {
    draw(path, title, hists, times, blame).map_err(|e| format!("{path}: {e}"))
}

fn draw(
    path: &str,
    title: &str,
    hists: &[HistSeries],
    times: &[TimeSeries],
    blame: &BlamePanels,
) -> Drawn {
    let legend = blame_legend(blame);
    let blame_h = if blame.is_empty() {
        0
    } else {
        bars_height(blame.rows()) + legend_height(legend.len())
    };
    let root = SVGBackend::new(path, (1100, 900 + blame_h)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let (top, rest) = root.split_vertically(450);
    let (bottom, under) = rest.split_vertically(rest.dim_in_pixel().1 - blame_h);
    draw_hists(&top, hists)?;
    draw_times(&bottom, times)?;
    if !blame.is_empty() {
        let (bars, below) = under.split_vertically(bars_height(blame.rows()));
        let (left, right) = bars.split_horizontally(700);
        draw_worst(&left, &blame.worst, &legend)?;
        draw_shares(&right, &blame.shares, &legend)?;
        draw_legend(&below, &legend)?;
    }
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

/// Every source of `blame` with its colour: the ranked ones first, in the
/// order of the CPUs' rankings, [`OTHERS`] last.
fn blame_legend(blame: &BlamePanels) -> Vec<(&str, RGBColor)> {
    let mut legend: Vec<(&str, RGBColor)> = Vec::new();
    let mut others = false;
    let bars = blame.shares.iter().chain(&blame.worst);
    for s in bars.flat_map(|b| &b.segments) {
        if s.source == OTHERS {
            others = true;
        } else if !legend.iter().any(|(name, _)| *name == s.source) {
            let color = COLORS[legend.len() % COLORS.len()];
            legend.push((&s.source, color));
        }
    }
    if others {
        legend.push((OTHERS, OTHERS_COLOR));
    }
    legend
}

/// The colour of `source` in `legend`.
fn color_of(legend: &[(&str, RGBColor)], source: &str) -> RGBColor {
    legend
        .iter()
        .find(|(name, _)| *name == source)
        .map_or(OTHERS_COLOR, |&(_, color)| color)
}

/// Pixels of a bar's row.
const BAR_ROW: u32 = 48;
/// Columns of the legend.
const LEGEND_COLUMNS: usize = 2;
/// Pixels of a line of the legend.
const LEGEND_LINE: u32 = 20;

/// The height of the bar panels of `rows` bars.
fn bars_height(rows: usize) -> u32 {
    90 + BAR_ROW * rows as u32
}

/// The height of a legend of `sources`.
fn legend_height(sources: usize) -> u32 {
    20 + LEGEND_LINE * sources.div_ceil(LEGEND_COLUMNS) as u32
}

/// The y axis of `n` bars, the first on top: bar `i` at `n - 1 - i`,
/// labelled at the `n` integers (the `n` labels an axis of length `n` has).
fn bar_rows(n: usize) -> std::ops::Range<f64> {
    -0.5..n as f64 - 0.5
}

/// The name of the bar at `y`.
fn row_name(bars: &[Bar], y: f64) -> String {
    // (A negative index saturates to 0.)
    let i = (bars.len() as f64 - 1.0 - y).round() as usize;
    bars.get(i).map_or_else(String::new, |b| b.name.clone())
}

/// A chart of bars.
type Bars<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws `segments` end to end from 0 as a bar at `y`; returns its end.
fn draw_bar(
    chart: &mut Bars,
    segments: &[Segment],
    y: f64,
    legend: &[(&str, RGBColor)],
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut x = 0.0;
    for s in segments {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x, y - 0.25), (x + s.value, y + 0.25)],
            color_of(legend, &s.source).filled(),
        )))?;
        x += s.value;
    }
    Ok(x)
}

/// The worst activations from their expected expiry, each a bar of its
/// parts, the interrupt marked.
fn draw_worst(area: &Area, worst: &[Bar], legend: &[(&str, RGBColor)]) -> Drawn {
    let total = |b: &Bar| b.segments.iter().map(|s| s.value).sum::<f64>();
    let max_x = worst.iter().map(total).fold(0.001f64, f64::max) * 1.2;
    let n = worst.len();
    let mut chart = ChartBuilder::on(area)
        .caption(
            "Worst activations: what ran, before and after the interrupt",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..max_x, bar_rows(n))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .x_desc("from the expected expiry (µs)")
        .y_label_formatter(&|y| row_name(worst, *y))
        .draw()?;
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    for (i, b) in worst.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        let end = draw_bar(&mut chart, &b.segments, y, legend)?;
        let irq: f64 = b.segments[..b.irq_parts.min(b.segments.len())]
            .iter()
            .map(|s| s.value)
            .sum();
        // The interrupt: a line across the bar, named above it (on its
        // left past the middle, not to run off the panel).
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(irq, y - 0.38), (irq, y + 0.38)],
            BLACK.stroke_width(3),
        )))?;
        let side = if irq > max_x / 2.0 {
            HPos::Right
        } else {
            HPos::Left
        };
        chart.draw_series(std::iter::once(Text::new(
            format!("interrupt at {irq:.1} µs"),
            (irq, y + 0.3),
            font.pos(Pos::new(side, VPos::Bottom)),
        )))?;
        // Its length, clear of a marker at its end.
        chart.draw_series(std::iter::once(
            EmptyElement::at((end, y))
                + Text::new(
                    format!("{end:.1} µs"),
                    (6, 0),
                    font.pos(Pos::new(HPos::Left, VPos::Center)),
                ),
        ))?;
    }
    Ok(())
}

/// Per CPU the shares of its late time, a bar of its ranked sources.
fn draw_shares(area: &Area, shares: &[Bar], legend: &[(&str, RGBColor)]) -> Drawn {
    let n = shares.len();
    let mut chart = ChartBuilder::on(area)
        .caption("Late time per CPU, by source", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..100.0, bar_rows(n))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .x_desc("share of the late time (%)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| row_name(shares, *y))
        .draw()?;
    let font = ("sans-serif", 12).into_font().color(&BLACK);
    for (i, b) in shares.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        draw_bar(&mut chart, &b.segments, y, legend)?;
        // The large shares' values on them.
        let mut x = 0.0;
        for s in &b.segments {
            if s.value >= 12.0 {
                chart.draw_series(std::iter::once(Text::new(
                    format!("{:.0}%", s.value),
                    (x + s.value / 2.0, y),
                    font.pos(Pos::new(HPos::Center, VPos::Center)),
                )))?;
            }
            x += s.value;
        }
    }
    Ok(())
}

/// The sources of the blame panels and their colours.
fn draw_legend(area: &Area, legend: &[(&str, RGBColor)]) -> Drawn {
    let width = area.dim_in_pixel().0 as i32 - 40;
    let column = width / LEGEND_COLUMNS as i32;
    let font = ("sans-serif", 13).into_font().color(&BLACK);
    for (k, &(name, color)) in legend.iter().enumerate() {
        let x = 20 + (k % LEGEND_COLUMNS) as i32 * column;
        let y = 10 + (k / LEGEND_COLUMNS) as i32 * LEGEND_LINE as i32;
        area.draw(&Rectangle::new(
            [(x, y + 2), (x + 14, y + 14)],
            color.filled(),
        ))?;
        area.draw(&Text::new(
            name.to_string(),
            (x + 20, y + 8),
            font.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
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
