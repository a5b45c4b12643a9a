// SPDX-License-Identifier: GPL-2.0

//! One line of `rtlat monitor`'s history: what an interval measured (the
//! histogram's delta per CPU and stage, its percentiles, its largest
//! latency with when and where, missed periods, dropped records, trips),
//! and the counters since the start that let a reader check the run
//! (`produced == delivered + dropped + queued`, the records the tool read).

use std::collections::BTreeMap;

use rtcore::hist;
use serde::Serialize;

use super::state::{Counts, State};
use crate::report::Histogram;

/// `schema` of a line.
pub const SCHEMA: &str = "rtlat-monitor-snapshot";
/// `version` of a line's layout.
pub const VERSION: u32 = 1;

/// One CPU and stage in an interval.
#[derive(Serialize)]
pub struct StageDelta {
    pub count: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<u64>,
    pub max_ns: Option<u64>,
    /// `max_ns` is the exact largest latency (a new largest since the
    /// start); else the upper end of its histogram bucket.
    pub max_exact: bool,
    /// For an exact maximum: its activation's wall-clock time and sequence.
    pub max_time: Option<f64>,
    pub max_seq: Option<u64>,
    pub percentiles_ns: BTreeMap<String, u64>,
    pub histogram: Histogram,
    /// Activations since the start, all sessions.
    pub total_count: u64,
}

/// A CPU's counters since the start.
#[derive(Serialize)]
pub struct CpuTotals {
    pub produced: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// In the ring, not read yet: `produced - delivered - dropped`.
    pub queued: u64,
    /// Records the tool read (its own count, against `delivered`).
    pub read: u64,
    pub missed: u64,
}

/// One CPU in an interval.
#[derive(Serialize)]
pub struct CpuDelta {
    pub cpu: u32,
    pub missed: u64,
    pub dropped: u64,
    pub stages: BTreeMap<&'static str, StageDelta>,
    pub totals: CpuTotals,
}

/// The largest latency since the start.
#[derive(Serialize, Clone)]
pub struct Max {
    pub ns: u64,
    pub cpu: u32,
    pub stage: &'static str,
    pub time: f64,
    pub seq: u64,
}

/// A threshold trip.
#[derive(Serialize, Clone)]
pub struct TripLine {
    /// 1 for the first trip of the monitor.
    pub number: u64,
    /// When the monitor saw it, s since the epoch.
    pub time: f64,
    pub cpu: u32,
    pub stage: String,
    pub value_ns: u64,
    pub seq: u64,
    /// What each `--on-threshold` action did.
    pub actions: Vec<String>,
}

/// One line of the history.
#[derive(Serialize)]
pub struct Snapshot {
    pub schema: &'static str,
    pub version: u32,
    /// 1 for the first line of the monitor.
    pub seq: u64,
    /// When it was taken, s since the epoch.
    pub time: f64,
    /// The interval it covers, s.
    pub interval_s: f64,
    pub elapsed_s: f64,
    /// The last line, written as the monitor ends.
    #[serde(rename = "final")]
    pub last: bool,
    /// Sessions started (one more after each trip).
    pub sessions: u64,
    /// The tool's resident memory, KiB.
    pub rss_kb: u64,
    /// CPUs the tool's own threads ran on in the interval.
    pub ran_on: Vec<u32>,
    pub cpus: Vec<CpuDelta>,
    pub max: Option<Max>,
    pub trips: Vec<TripLine>,
    pub trips_total: u64,
}

/// How CLOCK_MONOTONIC ns read as wall-clock time.
#[derive(Clone, Copy)]
pub struct Clock {
    /// Wall-clock s and CLOCK_MONOTONIC ns at one moment.
    pub epoch: f64,
    pub mono_ns: u64,
}

impl Clock {
    pub fn wall(self, mono_ns: u64) -> f64 {
        self.epoch - (self.mono_ns as f64 - mono_ns as f64) / 1e9
    }
}

fn percentiles(c: &Counts) -> BTreeMap<String, u64> {
    hist::PERCENTILES_PPM
        .iter()
        .zip(hist::PERCENTILE_NAMES)
        .filter_map(|(&ppm, name)| c.percentile(ppm).map(|v| (name.to_string(), v)))
        .collect()
}

/// The largest latency since the start over every CPU and stage.
pub fn max_of(state: &State, clock: Clock) -> Option<Max> {
    (0..state.series.len())
        .map(|i| (i, state.total(i)))
        .filter(|(_, t)| t.count > 0)
        .max_by_key(|(_, t)| t.max)
        .map(|(i, t)| Max {
            ns: t.max,
            cpu: state.series[i].cpu,
            stage: state.series[i].stage.name(),
            time: clock.wall(t.max_time),
            seq: t.max_seq,
        })
}

/// The per-CPU part of a snapshot: the deltas since the last one (which
/// this takes from `state`).
pub fn cpus(state: &mut State, clock: Clock) -> Vec<CpuDelta> {
    let (deltas, rings) = state.take_deltas();
    let mut out: Vec<CpuDelta> = state
        .cpus
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let r = state.ring(i);
            CpuDelta {
                cpu: c.cpu,
                missed: rings[i].missed,
                dropped: rings[i].dropped,
                stages: BTreeMap::new(),
                totals: CpuTotals {
                    produced: r.produced,
                    delivered: r.delivered,
                    dropped: r.dropped,
                    queued: r.produced.saturating_sub(r.delivered + r.dropped),
                    read: c.read,
                    missed: r.missed,
                },
            }
        })
        .collect();
    for (i, d) in deltas.iter().enumerate() {
        let s = &state.series[i];
        let c = &d.counts;
        let some = c.count > 0;
        let sd = StageDelta {
            count: c.count,
            min_ns: some.then_some(c.min),
            avg_ns: c.sum.checked_div(c.count),
            max_ns: some.then_some(c.max),
            max_exact: d.max_exact,
            max_time: d.max_exact.then(|| clock.wall(c.max_time)),
            max_seq: d.max_exact.then_some(c.max_seq),
            percentiles_ns: percentiles(c),
            histogram: Histogram::from_buckets(&c.buckets),
            total_count: state.total(i).count,
        };
        if let Some(cpu) = out.iter_mut().find(|x| x.cpu == s.cpu) {
            cpu.stages.insert(s.stage.name(), sd);
        }
    }
    out
}

/// The tool's resident memory, KiB (0 if unknown).
pub fn rss_kb() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page / 1024)
}

#[cfg(test)]
mod tests {
    use rtcore::uapi::Stage;

    use super::*;
    use crate::cmd::monitor::state::tests::fake;

    #[test]
    fn a_snapshot_line() {
        let mut st = State::new(&[0, 1], &[Stage::Irq]);
        st.update(&[
            fake(0, Stage::Irq, &[1_000, 2_000, 30_000], 1),
            fake(1, Stage::Irq, &[], 0),
        ]);
        st.cpus[0].read = 3;
        let clock = Clock {
            epoch: 1_700_000_010.0,
            mono_ns: 11_000_000_000,
        };
        let cpus = cpus(&mut st, clock);
        let snap = Snapshot {
            schema: SCHEMA,
            version: VERSION,
            seq: 1,
            time: 1_700_000_010.0,
            interval_s: 10.0,
            elapsed_s: 10.0,
            last: false,
            sessions: 1,
            rss_kb: rss_kb(),
            ran_on: vec![0],
            max: max_of(&st, clock),
            cpus,
            trips: vec![],
            trips_total: 0,
        };
        assert!(snap.rss_kb > 0);
        let v: serde_json::Value = serde_json::to_value(&snap).unwrap();
        let irq = &v["cpus"][0]["stages"]["irq"];
        assert_eq!(irq["count"], 3);
        assert_eq!(irq["max_ns"], 30_000);
        assert_eq!(irq["max_exact"], true);
        // The kernel's fake max_time is 1 s of CLOCK_MONOTONIC: 10 s before.
        assert_eq!(irq["max_time"], 1_700_000_000.0);
        assert_eq!(
            irq["percentiles_ns"]["p50"],
            hist::bucket_high(hist::bucket_of(2_000))
        );
        assert_eq!(irq["histogram"]["buckets"].as_array().unwrap().len(), 3);
        assert_eq!(v["cpus"][0]["missed"], 1);
        assert_eq!(v["cpus"][0]["totals"]["queued"], 0);
        assert_eq!(v["cpus"][0]["totals"]["read"], 3);
        assert_eq!(v["cpus"][1]["stages"]["irq"]["count"], 0);
        assert_eq!(
            v["cpus"][1]["stages"]["irq"]["max_ns"],
            serde_json::Value::Null
        );
        assert_eq!(v["max"]["cpu"], 0);
        assert_eq!(v["max"]["stage"], "irq");
        assert_eq!(v["final"], false);
        assert_eq!(v["schema"], SCHEMA);
    }
}
