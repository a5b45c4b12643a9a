// SPDX-License-Identifier: GPL-2.0

//! `rtlat bench-report`'s files: the report ([`super::report`]) of a
//! results log as bench.md ([`super::markdown`]), bench.json and
//! bench.svg.

use std::{fs, path::Path};

use super::{markdown, report::build};
use crate::plot;

/// Runs the report on a results log; writes bench.md, bench.json, bench.svg
/// into `out`. Returns the markdown.
pub fn report(log_path: &Path, out: &Path, kernel: &str, arch: &str) -> Result<String, String> {
    let (bench, begin, dists) = build(log_path, kernel, arch)?;
    let md = markdown::markdown(&bench, &begin);
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    fs::write(out.join("bench.md"), &md).map_err(|e| e.to_string())?;
    fs::write(
        out.join("bench.json"),
        serde_json::to_string_pretty(&bench).map_err(|e| e.to_string())? + "\n",
    )
    .map_err(|e| e.to_string())?;
    let series: Vec<plot::HistSeries> = dists
        .iter()
        .filter(|(k, _)| k.load == "idle")
        .map(|(k, dist)| {
            plot::HistSeries::from_buckets(format!("{} ({})", k.tool, k.load), &dist.buckets)
        })
        .collect();
    let svg = out.join("bench.svg");
    plot::write_svg(
        &svg.to_string_lossy(),
        &format!("rtlat and its peers, {kernel} {arch} (TCG)"),
        &series,
        &[],
    )?;
    Ok(md)
}
