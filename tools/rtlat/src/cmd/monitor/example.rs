// SPDX-License-Identifier: GPL-2.0

//! A made-up monitor's metrics, for checking them with Prometheus' own
//! tools on a machine without /dev/rtlat: `rtlat metrics-example` prints
//! the exposition (for `promtool check metrics`), `--percentiles` rtlat's
//! own percentiles of the same samples (from the full-resolution buckets),
//! `--listen ADDR` serves it as `rtlat monitor --listen` does (for a real
//! Prometheus to scrape, and its `histogram_quantile()` to be compared with
//! those percentiles).

use std::{net::SocketAddr, sync::Arc, thread, time::Duration};

use rtcore::hist;

use super::{
    http::{self, Exposition, Published},
    metrics::{self, CpuCounters, Format, Info, Series, View},
};
use crate::{cli::buckets::Buckets, report::Build};

/// One made-up CPU and stage (latencies in ns).
pub(super) struct Made {
    pub cpu: u32,
    pub stage: &'static str,
    pub buckets: Vec<u64>,
    pub count: u64,
    pub sum: u64,
    pub max: u64,
}

/// Two CPUs, irq and thread: 100 000 latencies each from 2 µs to about
/// 45 µs, and one in a thousand 150 µs later.
fn made() -> Vec<Made> {
    (0..4u64)
        .map(|k| {
            let mut m = Made {
                cpu: (k / 2) as u32,
                stage: ["irq", "thread"][k as usize % 2],
                buckets: vec![0; hist::BUCKETS],
                count: 0,
                sum: 0,
                max: 0,
            };
            for i in 0..100_000u64 {
                let mut v = 2_000 + k * 500 + (i * 7_919) % 40_000;
                if i % 1_000 == 999 {
                    v += 150_000;
                }
                m.buckets[hist::bucket_of(v)] += 1;
                m.count += 1;
                m.sum += v;
                m.max = m.max.max(v);
            }
            m
        })
        .collect()
}

fn info() -> Info {
    Info {
        kernel_release: "7.3.0-rt1".into(),
        preemption: "PREEMPT_RT".into(),
        arch: "x86_64".into(),
        isolated_cpus: "1".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        build: Build::this(),
    }
}

/// The view of the made-up series `made` on two CPUs, its histogram at
/// `bounds`: each series' index is its trip count, its max at one time;
/// CPU 0 missed a period, CPU 1 dropped 7 records; the statistics read a
/// minute after that time, the session running. (The encoder's tests take
/// it too, with their own series.)
pub(super) fn view<'a>(info: &'a Info, made: &'a [Made], bounds: &'a [u64]) -> View<'a> {
    View {
        info,
        bounds,
        series: made
            .iter()
            .enumerate()
            .map(|(i, m)| Series {
                cpu: m.cpu,
                stage: m.stage,
                buckets: &m.buckets,
                count: m.count,
                sum: m.sum,
                max: m.max,
                max_time: 1_700_000_000.25,
                trips: i as u64,
            })
            .collect(),
        cpus: vec![
            CpuCounters {
                cpu: 0,
                missed: 1,
                dropped: 0,
            },
            CpuCounters {
                cpu: 1,
                missed: 0,
                dropped: 7,
            },
        ],
        last_update: 1_700_000_060.5,
        running: true,
    }
}

/// The exposition in format `f`, its histogram at the bounds `b` names.
pub fn exposition(f: Format, b: &Buckets) -> String {
    let (info, made, bounds) = (info(), made(), metrics::bounds(b));
    metrics::encode(&view(&info, &made, &bounds), f)
}

/// rtlat's own percentiles, a line per CPU and stage: `CPU STAGE COUNT`
/// and p50, p90, p99, p99.9 in ns.
pub fn percentiles() -> String {
    made()
        .iter()
        .map(|m| {
            let p = |ppm| hist::percentile(&m.buckets, ppm, m.max).unwrap_or(0);
            format!(
                "{} {} {} {} {} {} {}\n",
                m.cpu,
                m.stage,
                m.count,
                p(500_000),
                p(900_000),
                p(990_000),
                p(999_000)
            )
        })
        .collect()
}

/// Serves the exposition (at the bounds `b` names) on `addr` until the
/// process is ended.
pub fn serve(addr: SocketAddr, b: &Buckets) -> Result<(), String> {
    let l = http::bind(addr)?;
    let p = Arc::new(Published::default());
    p.set(Exposition {
        openmetrics: exposition(Format::OpenMetrics, b),
        text: exposition(Format::Text, b),
    });
    http::serve(l, p);
    loop {
        thread::sleep(Duration::from_secs(3600));
    }
}
