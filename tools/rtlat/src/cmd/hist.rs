// SPDX-License-Identifier: GPL-2.0

//! `rtlat hist`, rtla timerlat hist's counterpart: live, cyclictest's line
//! per CPU; at the end, the histogram of every CPU and stage in rtla's shape
//! with the percentiles.

use rtcore::uapi::Stage;

use crate::{
    cli::HistArgs,
    collect::Outcome,
    live::Interval,
    mode::Mode,
    output::{self, HistColumn},
};

/// The mode of `rtlat hist`: its histogram's shape.
pub struct Hist {
    /// Bucket size, in the output unit.
    bucket_size: u64,
    entries: usize,
    with_zeros: bool,
}

impl Hist {
    pub fn new(h: &HistArgs) -> Self {
        Self {
            bucket_size: h.bucket_size,
            entries: h.entries,
            with_zeros: h.with_zeros,
        }
    }
}

/// rtla's column prefix of a stage.
fn prefix(stage: Stage) -> &'static str {
    match stage {
        Stage::Irq => "IRQ",
        Stage::Thread => "Thr",
        Stage::User => "Usr",
        Stage::Response => "Rsp",
    }
}

impl Mode for Hist {
    fn on_interval(&self, now: &Interval<'_>) -> String {
        now.cyclictest_lines() + &now.progress()
    }

    fn on_end(&self, o: &Outcome<'_>) -> String {
        let cols: Vec<HistColumn> = o
            .stats
            .iter()
            .map(|x| HistColumn {
                name: format!("{}-{:03}", prefix(x.stage), x.cpu),
                buckets: x.buckets.clone(),
                count: x.stats.count,
                min: x.stats.min,
                avg: x.avg(),
                max: x.stats.max,
            })
            .collect();
        let secs = (o.report.end_time - o.report.start_time).max(0.0) as u64;
        let dur = format!(
            "{} {:02}:{:02}:{:02}",
            secs / 86400,
            secs / 3600 % 24,
            secs / 60 % 60,
            secs % 60
        );
        output::histogram(
            &cols,
            self.bucket_size.max(1),
            self.entries,
            &dur,
            self.with_zeros,
            o.plan.unit,
        )
    }
}
