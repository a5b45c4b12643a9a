// SPDX-License-Identifier: GPL-2.0

//! What `rtlat monitor` keeps between two reads of the kernel's statistics:
//! per CPU and stage the counts since the monitor started, over every
//! session it ran (a trip stops a session; the next one starts with fresh
//! statistics, which are added to those of the sessions before), and the
//! counts at the last snapshot, from which each snapshot's delta comes. Its
//! size is set by the CPUs and stages, never by the run's length.

use rtcore::{hist, uapi::Stage};

use crate::device::StageStats;

/// A histogram and its summary: one session's, or the sum of several.
#[derive(Clone, Debug, PartialEq)]
pub struct Counts {
    /// `rtcore::hist`'s buckets.
    pub buckets: Vec<u64>,
    pub count: u64,
    /// ns.
    pub sum: u64,
    /// Smallest sample, ns (meaningless while `count` is 0).
    pub min: u64,
    /// Largest sample, ns, with its activation and expected expiry
    /// (CLOCK_MONOTONIC ns).
    pub max: u64,
    pub max_seq: u64,
    pub max_time: u64,
}

impl Default for Counts {
    fn default() -> Self {
        Self {
            buckets: vec![0; hist::BUCKETS],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            max_seq: 0,
            max_time: 0,
        }
    }
}

impl Counts {
    /// A session's, as the kernel counted them.
    pub fn of(x: &StageStats) -> Self {
        let mut buckets = vec![0; hist::BUCKETS];
        for (b, &n) in buckets.iter_mut().zip(&x.buckets) {
            *b = n;
        }
        let st = &x.stats;
        Self {
            buckets,
            count: st.count,
            sum: st.sum,
            min: if st.count == 0 { u64::MAX } else { st.min },
            max: st.max,
            max_seq: st.max_seq,
            max_time: st.max_time,
        }
    }

    /// Adds `o`'s samples.
    pub fn add(&mut self, o: &Counts) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        if o.count > 0 && (self.count == o.count || o.max > self.max) {
            self.max = o.max;
            self.max_seq = o.max_seq;
            self.max_time = o.max_time;
        }
    }

    /// The percentile `ppm` (`rtcore::hist::percentile`).
    pub fn percentile(&self, ppm: u32) -> Option<u64> {
        hist::percentile(&self.buckets, ppm, self.max)
    }
}

/// A CPU's ring and period counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ring {
    pub missed: u64,
    pub produced: u64,
    pub delivered: u64,
    pub dropped: u64,
}

impl Ring {
    fn of(x: &StageStats) -> Self {
        Self {
            missed: x.stats.missed,
            produced: x.stats.produced,
            delivered: x.stats.delivered,
            dropped: x.stats.dropped,
        }
    }

    fn add(&mut self, o: &Ring) {
        self.missed += o.missed;
        self.produced += o.produced;
        self.delivered += o.delivered;
        self.dropped += o.dropped;
    }
}

/// One CPU and stage.
pub struct Series {
    pub cpu: u32,
    pub stage: Stage,
    /// The sessions that ended.
    base: Counts,
    /// The running session's, at the last read.
    current: Counts,
    /// Since the start, at the last snapshot.
    at_snapshot: Counts,
    /// Threshold trips of this CPU and stage.
    pub trips: u64,
}

/// One CPU's counters.
pub struct Cpu {
    pub cpu: u32,
    base: Ring,
    current: Ring,
    at_snapshot: Ring,
    /// Records the tool read, all sessions.
    pub read: u64,
}

/// The delta of one CPU and stage since the last snapshot.
pub struct Delta {
    pub counts: Counts,
    /// Whether `counts.max` is the exact largest sample of the interval
    /// (a new largest since the start) or the upper bound of its highest
    /// bucket.
    pub max_exact: bool,
}

/// Everything the monitor counted.
pub struct State {
    pub series: Vec<Series>,
    pub cpus: Vec<Cpu>,
    /// Sessions started.
    pub sessions: u64,
}

impl State {
    /// For `cpus` and `stages` (those whose statistics are read).
    pub fn new(cpus: &[u32], stages: &[Stage]) -> Self {
        let series = cpus
            .iter()
            .flat_map(|&cpu| {
                stages.iter().map(move |&stage| Series {
                    cpu,
                    stage,
                    base: Counts::default(),
                    current: Counts::default(),
                    at_snapshot: Counts::default(),
                    trips: 0,
                })
            })
            .collect();
        let cpus = cpus
            .iter()
            .map(|&cpu| Cpu {
                cpu,
                base: Ring::default(),
                current: Ring::default(),
                at_snapshot: Ring::default(),
                read: 0,
            })
            .collect();
        Self {
            series,
            cpus,
            sessions: 0,
        }
    }

    /// The running session's statistics, as just read (any order; CPUs
    /// and stages not in the state are ignored).
    pub fn update(&mut self, stats: &[StageStats]) {
        for x in stats {
            if let Some(s) = self
                .series
                .iter_mut()
                .find(|s| s.cpu == x.cpu && s.stage == x.stage)
            {
                s.current = Counts::of(x);
            }
            if let Some(c) = self.cpus.iter_mut().find(|c| c.cpu == x.cpu) {
                c.current = Ring::of(x);
            }
        }
    }

    /// The running session ended (its final statistics were `update`d):
    /// its counts join those of the sessions before.
    pub fn end_session(&mut self) {
        for s in &mut self.series {
            let cur = std::mem::take(&mut s.current);
            s.base.add(&cur);
        }
        for c in &mut self.cpus {
            let cur = std::mem::take(&mut c.current);
            c.base.add(&cur);
        }
    }

    /// A trip of `cpu` and `stage`.
    pub fn trip(&mut self, cpu: u32, stage: Stage) {
        if let Some(s) = self
            .series
            .iter_mut()
            .find(|s| s.cpu == cpu && s.stage == stage)
        {
            s.trips += 1;
        }
    }

    /// The counts of series `i` since the start.
    pub fn total(&self, i: usize) -> Counts {
        let s = &self.series[i];
        let mut t = s.base.clone();
        t.add(&s.current);
        t
    }

    /// The counters of CPU `i` since the start.
    pub fn ring(&self, i: usize) -> Ring {
        let c = &self.cpus[i];
        let mut r = c.base;
        r.add(&c.current);
        r
    }

    /// Per series, the delta since the last snapshot; per CPU, the
    /// counters' delta; the next snapshot's delta starts here.
    pub fn take_deltas(&mut self) -> (Vec<Delta>, Vec<Ring>) {
        let mut deltas = Vec::new();
        for i in 0..self.series.len() {
            let total = self.total(i);
            let prev = std::mem::replace(&mut self.series[i].at_snapshot, total.clone());
            let mut d = Counts {
                buckets: total
                    .buckets
                    .iter()
                    .zip(&prev.buckets)
                    .map(|(a, b)| a - b)
                    .collect(),
                count: total.count - prev.count,
                sum: total.sum - prev.sum,
                ..Default::default()
            };
            // The interval's largest sample is known exactly when it is
            // the largest since the start; else its bucket bounds it.
            let max_exact = d.count > 0 && (prev.count == 0 || total.max > prev.max);
            if max_exact {
                d.max = total.max;
                d.max_seq = total.max_seq;
                d.max_time = total.max_time;
            } else if let Some(i) = d.buckets.iter().rposition(|&n| n > 0) {
                d.max = hist::bucket_high(i).min(total.max);
            }
            if let Some(i) = d.buckets.iter().position(|&n| n > 0) {
                d.min = hist::bucket_low(i).max(total.min);
            }
            deltas.push(Delta {
                counts: d,
                max_exact,
            });
        }
        let rings = (0..self.cpus.len())
            .map(|i| {
                let r = self.ring(i);
                let prev = std::mem::replace(&mut self.cpus[i].at_snapshot, r);
                Ring {
                    missed: r.missed - prev.missed,
                    produced: r.produced - prev.produced,
                    delivered: r.delivered - prev.delivered,
                    dropped: r.dropped - prev.dropped,
                }
            })
            .collect();
        (deltas, rings)
    }
}

#[cfg(test)]
pub mod tests {
    use rtcore::uapi::Stats;

    use super::*;

    /// What the kernel would answer for `cpu` and `stage` after the samples
    /// `vals` (ns), the maximum at activation `max_seq`.
    pub fn fake(cpu: u32, stage: Stage, vals: &[u64], missed: u64) -> StageStats {
        let mut buckets = vec![0u64; hist::BUCKETS];
        for &v in vals {
            buckets[hist::bucket_of(v)] += 1;
        }
        let max = vals.iter().copied().max().unwrap_or(0);
        let n = vals.len() as u64;
        StageStats {
            cpu,
            stage,
            stats: Stats {
                cpu,
                stage: stage as u32,
                count: n,
                sum: vals.iter().sum(),
                min: vals.iter().copied().min().unwrap_or(0),
                max,
                max_seq: vals.iter().position(|&v| v == max).unwrap_or(0) as u64,
                max_time: 1_000_000_000,
                missed,
                produced: n,
                delivered: n,
                ..Default::default()
            },
            buckets,
        }
    }

    #[test]
    fn deltas_over_sessions() {
        let mut s = State::new(&[0, 2], &[Stage::Irq]);
        s.update(&[
            fake(0, Stage::Irq, &[1_000, 2_000, 30_000], 1),
            fake(2, Stage::Irq, &[5_000], 0),
        ]);
        let (d, r) = s.take_deltas();
        assert_eq!(d[0].counts.count, 3);
        assert_eq!((d[0].counts.max, d[0].max_exact), (30_000, true));
        assert_eq!(d[0].counts.min, 1_000);
        assert_eq!(r[0].missed, 1);

        // Later in the same session: two more samples, none a new maximum.
        s.update(&[fake(
            0,
            Stage::Irq,
            &[1_000, 2_000, 30_000, 3_000, 4_000],
            1,
        )]);
        let (d, r) = s.take_deltas();
        assert_eq!(d[0].counts.count, 2);
        assert!(!d[0].max_exact);
        let b = hist::bucket_of(4_000);
        assert_eq!(d[0].counts.max, hist::bucket_high(b));
        assert_eq!(
            d[0].counts.percentile(500_000),
            Some(hist::bucket_high(hist::bucket_of(3_000)))
        );
        assert_eq!(d[1].counts.count, 0);
        assert_eq!(r[0].missed, 0);

        // A trip ends the session; the next starts from zero in the
        // kernel, and the totals go on.
        s.trip(0, Stage::Irq);
        s.end_session();
        s.update(&[fake(0, Stage::Irq, &[40_000], 2)]);
        let (d, r) = s.take_deltas();
        assert_eq!(d[0].counts.count, 1);
        assert_eq!((d[0].counts.max, d[0].max_exact), (40_000, true));
        assert_eq!(r[0].missed, 2);
        let t = s.total(0);
        assert_eq!((t.count, t.max, t.min), (6, 40_000, 1_000));
        assert_eq!(t.sum, 80_000);
        assert_eq!(s.ring(0).missed, 3);
        assert_eq!(s.series[0].trips, 1);
        let sum: u64 = t.buckets.iter().sum();
        assert_eq!(sum, 6);
    }
}
