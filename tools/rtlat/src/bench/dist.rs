// SPDX-License-Identifier: GPL-2.0

//! One latency distribution of the benchmark, whichever tool measured it, in
//! `rtcore::hist`'s log-linear histogram, and its summary.

use rtcore::hist;
use serde::Serialize;

/// One distribution.
#[derive(Clone)]
pub struct Dist {
    pub buckets: Vec<u64>,
    pub max: u64,
}

impl Dist {
    pub fn new() -> Self {
        Self {
            buckets: vec![0; hist::BUCKETS],
            max: 0,
        }
    }
    pub fn add(&mut self, ns: u64, n: u64) {
        self.buckets[hist::bucket_of(ns)] += n;
        self.max = self.max.max(ns);
    }
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
    pub fn pct(&self, ppm: u32) -> u64 {
        hist::percentile(&self.buckets, ppm, self.max).unwrap_or(0)
    }
    pub fn summary(&self) -> Summary {
        Summary {
            count: self.count(),
            median_ns: self.pct(500_000),
            p99_ns: self.pct(990_000),
            p9999_ns: self.pct(999_900),
            max_ns: self.max,
        }
    }
}

/// Count, median, p99, p99.99 and max of one distribution.
#[derive(Serialize, Clone, Copy)]
pub struct Summary {
    pub count: u64,
    pub median_ns: u64,
    pub p99_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
}
