// SPDX-License-Identifier: GPL-2.0

//! The files a run writes when asked: the JSON report (`--json`) and the SVG
//! plot (`--svg`), the histogram of every CPU and stage and the main stage's
//! worst latency per time slot.

use std::fs;

use crate::{collect::Outcome, plot, stream::POINT_PPM, sysinfo::SysInfo};

/// Writes the JSON report, if asked.
pub fn write_json(o: &Outcome<'_>) -> Result<(), String> {
    if let Some(p) = &o.plan.json {
        let s = serde_json::to_string_pretty(&o.report).map_err(|e| e.to_string())?;
        fs::write(p, s + "\n").map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

/// Writes the SVG plot, if asked; its title names the system of `info`.
pub fn write_svg(o: &Outcome<'_>, info: &SysInfo) -> Result<(), String> {
    let Some(p) = &o.plan.svg else {
        return Ok(());
    };
    let hists: Vec<plot::HistSeries> = o
        .stats
        .iter()
        .filter(|x| x.stats.count > 0)
        .map(|x| {
            plot::HistSeries::from_buckets(format!("cpu{} {}", x.cpu, x.stage.name()), &x.buckets)
        })
        .collect();
    // Per CPU the worst latency of each time bucket and its percentile.
    let mut times: Vec<plot::TimeSeries> = Vec::new();
    for (cpu, tl) in &o.stream.timelines {
        let pts = tl.points();
        let series = |name: String, pick: fn(&(u64, u64, u64, u64)) -> u64| plot::TimeSeries {
            name,
            points: pts
                .iter()
                .map(|p| (p.0 as f64 / 1e9, pick(p) as f64 / 1000.0))
                .collect(),
        };
        let stage = o.plan.main_stage.name();
        times.push(series(format!("cpu{cpu} {stage} max"), |p| p.1));
        times.push(series(
            format!("cpu{cpu} {stage} p{}", f64::from(POINT_PPM) / 1e4),
            |p| p.2,
        ));
    }
    let title = format!(
        "rtlat on {} ({}), period {} µs",
        info.release, info.machine, o.plan.period_us
    );
    plot::write_svg(&p.to_string_lossy(), &title, &hists, &times)
}
