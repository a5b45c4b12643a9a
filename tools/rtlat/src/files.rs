// SPDX-License-Identifier: GPL-2.0

//! The files a run writes when asked: the JSON report (`--json`) and the SVG
//! plot (`--svg`), the histogram of every CPU and stage and the main stage's
//! worst latency per time slot.

use std::fs;

use crate::{collect::Outcome, plot, stream::SLOT_NS, sysinfo::SysInfo};

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
    let times: Vec<plot::TimeSeries> = o
        .stream
        .slots
        .iter()
        .map(|(cpu, slots)| plot::TimeSeries {
            name: format!("cpu{cpu} {}", o.plan.main_stage.name()),
            points: slots
                .iter()
                .map(|(&k, &v)| ((k * SLOT_NS) as f64 / 1e9, v as f64 / 1000.0))
                .collect(),
        })
        .collect();
    let title = format!(
        "rtlat on {} ({}), period {} µs",
        info.release, info.machine, o.plan.period_us
    );
    plot::write_svg(&p.to_string_lossy(), &title, &hists, &times)
}
