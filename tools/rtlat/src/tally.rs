// SPDX-License-Identifier: GPL-2.0

//! What a mode counts itself from every record read, the way its peer counts
//! every sample: per CPU and stage, each latency first truncated to whole
//! output units (rtla divides every sample by its divisor before anything
//! else), then the count, sum, min, max and latest value and, for a
//! histogram, how many samples had each value. The device's statistics are
//! exact to the nanosecond; these are the peer's arithmetic on the same
//! activations (an average of truncated values, buckets of whole units).

use std::collections::BTreeMap;

use rtcore::uapi::{self, Stage};

/// One CPU and stage, in output units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub count: u64,
    /// Sum of the truncated values.
    pub sum: u64,
    /// Smallest value (0 without samples).
    pub min: u64,
    pub max: u64,
    /// The latest value.
    pub last: u64,
    /// Samples per value, if the tally keeps them.
    pub values: BTreeMap<u64, u64>,
}

impl Counts {
    fn add(&mut self, v: u64, keep_values: bool) {
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += v;
        self.last = v;
        if keep_values {
            *self.values.entry(v).or_insert(0) += 1;
        }
    }

    /// Adds `other`'s count, sum, min and max (not its last value nor its
    /// values): the totals of several CPUs.
    pub fn merge(&mut self, other: &Counts) {
        if other.count != 0 {
            self.min = if self.count == 0 {
                other.min
            } else {
                self.min.min(other.min)
            };
        }
        self.count += other.count;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// The mean of the truncated values, truncated (0 without samples).
    pub fn avg(&self) -> u64 {
        self.sum.checked_div(self.count).unwrap_or(0)
    }
}

/// Per CPU and stage, the records' values in output units.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally {
    /// Nanoseconds per output unit (1000: µs).
    unit_ns: u64,
    keep_values: bool,
    pub cpus: BTreeMap<u32, [Counts; uapi::NR_STAGES]>,
}

impl Tally {
    /// An empty tally in units of `unit_ns` ns; `keep_values` to count the
    /// samples of each value too (for a histogram).
    pub fn new(unit_ns: u64, keep_values: bool) -> Self {
        Self {
            unit_ns: unit_ns.max(1),
            keep_values,
            cpus: BTreeMap::new(),
        }
    }

    /// Counts every stage `r` measured.
    pub fn add(&mut self, r: &uapi::Record) {
        let keep = self.keep_values;
        let cpu = self.cpus.entry(r.cpu).or_default();
        for stage in Stage::ALL {
            let lat = r.lat_ns[stage];
            if lat >= 0 {
                cpu[stage].add(lat as u64 / self.unit_ns, keep);
            }
        }
    }

    /// The counts of `cpu` in `stage` (empty ones if it has none).
    pub fn get(&self, cpu: u32, stage: Stage) -> Counts {
        self.cpus
            .get(&cpu)
            .map(|c| c[stage].clone())
            .unwrap_or_default()
    }

    /// The same without the samples per value (for a live view).
    pub fn summaries(&self) -> Self {
        let mut t = Self::new(self.unit_ns, false);
        for (&cpu, stages) in &self.cpus {
            let mut s = stages.clone();
            for c in &mut s {
                c.values.clear();
            }
            t.cpus.insert(cpu, s);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(cpu: u32, lat: [i64; 4]) -> uapi::Record {
        uapi::Record {
            cpu,
            lat_ns: lat,
            ..Default::default()
        }
    }

    #[test]
    fn values_are_truncated_before_anything() {
        let mut t = Tally::new(1000, true);
        t.add(&rec(1, [1_999, 5_500, -1, -1]));
        t.add(&rec(1, [2_001, 4_400, -1, -1]));
        t.add(&rec(1, [999, 7_000, -1, -1]));
        let irq = t.get(1, Stage::Irq);
        // 1 + 2 + 0, as rtla: not (1999 + 2001 + 999) / 1000 = 4.
        assert_eq!(
            (irq.count, irq.sum, irq.min, irq.max, irq.last),
            (3, 3, 0, 2, 0)
        );
        assert_eq!(irq.avg(), 1);
        assert_eq!(irq.values, BTreeMap::from([(0, 1), (1, 1), (2, 1)]));
        let thr = t.get(1, Stage::Thread);
        assert_eq!(
            (thr.count, thr.min, thr.avg(), thr.max, thr.last),
            (3, 4, 5, 7, 7)
        );
        // Not measured: not counted.
        assert_eq!(t.get(1, Stage::User), Counts::default());
        assert_eq!(t.get(0, Stage::Irq), Counts::default());
        let s = t.summaries();
        assert!(s.get(1, Stage::Irq).values.is_empty());
        assert_eq!(s.get(1, Stage::Irq).sum, 3);

        let mut ns = Tally::new(1, false);
        ns.add(&rec(0, [1_999, -1, -1, -1]));
        let c = ns.get(0, Stage::Irq);
        assert_eq!((c.min, c.max, c.sum), (1_999, 1_999, 1_999));
        assert!(c.values.is_empty());
    }
}
