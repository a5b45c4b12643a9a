// SPDX-License-Identifier: GPL-2.0

//! Log-linear latency histogram with bounded relative error.
//!
//! Values are nanoseconds. Values below [`LINEAR`] get one bucket each (exact).
//! Above that, every power-of-two octave `[2^e, 2^(e+1))` is split into
//! [`SUB_BUCKETS`] equal buckets of width `2^(e - SUB_BITS)`, so a bucket's
//! width is at most `1 / SUB_BUCKETS` (1.6 %) of the values it holds. The
//! highest octave ends at [`MAX_TRACKED`] (about 17.2 s); larger values are
//! counted in one overflow bucket, and the exact maximum is kept separately.
//!
//! The layout is the same everywhere: the kernel fills the buckets, the tool
//! reads them through the UAPI and computes percentiles with the same code.

/// Bits of sub-bucket resolution per octave.
pub const SUB_BITS: u32 = 6;
/// Buckets per octave, and number of exact buckets at the bottom.
pub const SUB_BUCKETS: usize = 1 << SUB_BITS;
/// Values below this are counted exactly, one bucket per nanosecond.
pub const LINEAR: u64 = SUB_BUCKETS as u64;
/// Octaves above the linear range: `2^6` to `2^34` ns.
pub const OCTAVES: u32 = 28;
/// Values from here on go to the overflow bucket (`2^34` ns, about 17.2 s).
pub const MAX_TRACKED: u64 = 1 << (SUB_BITS + OCTAVES);
/// Total number of buckets, the last one being the overflow bucket.
pub const BUCKETS: usize = SUB_BUCKETS + OCTAVES as usize * SUB_BUCKETS + 1;
/// Index of the overflow bucket.
pub const OVERFLOW: usize = BUCKETS - 1;

/// Bucket index of value `v` (in ns).
#[inline]
pub const fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    if v >= MAX_TRACKED {
        return OVERFLOW;
    }
    // `e >= SUB_BITS` here since `v >= LINEAR`.
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    let sub = (v >> shift) as usize - SUB_BUCKETS;
    SUB_BUCKETS + (e - SUB_BITS) as usize * SUB_BUCKETS + sub
}

/// Smallest value counted in bucket `i`.
#[inline]
pub const fn bucket_low(i: usize) -> u64 {
    if i < SUB_BUCKETS {
        return i as u64;
    }
    if i >= OVERFLOW {
        return MAX_TRACKED;
    }
    let octave = ((i - SUB_BUCKETS) / SUB_BUCKETS) as u32;
    let sub = ((i - SUB_BUCKETS) % SUB_BUCKETS) as u64;
    (LINEAR + sub) << octave
}

/// Largest value counted in bucket `i` (`u64::MAX` for the overflow bucket).
#[inline]
pub const fn bucket_high(i: usize) -> u64 {
    if i >= OVERFLOW {
        return u64::MAX;
    }
    bucket_low(i + 1) - 1
}

/// Percentiles every summary reports, in parts per million (p50 ... p99.9999).
pub const PERCENTILES_PPM: [u32; 7] = [
    500_000, 900_000, 990_000, 999_000, 999_900, 999_990, 999_999,
];

/// Human-readable names of [`PERCENTILES_PPM`].
pub const PERCENTILE_NAMES: [&str; 7] = [
    "p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "p99.9999",
];

/// The value at quantile `ppm` (parts per million) of the counts in `buckets`.
///
/// Returns the upper bound of the bucket holding the sample of rank
/// `ceil(ppm * count / 1e6)`, clamped to `max` (the exact largest value seen),
/// so the result is never below the true percentile and at most one bucket
/// width (1.6 %) above it. Returns `None` when the histogram is empty.
pub fn percentile(buckets: &[u64], ppm: u32, max: u64) -> Option<u64> {
    let count: u64 = buckets.iter().sum();
    if count == 0 {
        return None;
    }
    let rank = rank_of(count, ppm);
    let mut seen = 0u64;
    for (i, &n) in buckets.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(bucket_high(i).min(max));
        }
    }
    Some(max)
}

/// `ceil(count * ppm / 1e6)`, at least 1, without 128-bit arithmetic (which
/// the kernel does not link).
const fn rank_of(count: u64, ppm: u32) -> u64 {
    let ppm = ppm as u64;
    let r = (count / 1_000_000) * ppm + ((count % 1_000_000) * ppm).div_ceil(1_000_000);
    if r == 0 {
        1
    } else {
        r
    }
}

/// Summary statistics of one stream of latencies, updated by one writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample (`u64::MAX` while `count == 0`).
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Sum of all samples, for the mean.
    pub sum: u64,
    /// Sequence number of the activation that produced `max`.
    pub max_seq: u64,
    /// Time (CLOCK_MONOTONIC ns) of the activation that produced `max`.
    pub max_time: u64,
}

impl Default for Summary {
    fn default() -> Self {
        Self::new()
    }
}

impl Summary {
    /// An empty summary.
    pub const fn new() -> Self {
        Self {
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            max_seq: 0,
            max_time: 0,
        }
    }

    /// Adds sample `v` of activation `seq` expected at `time`.
    #[inline]
    pub fn add(&mut self, v: u64, seq: u64, time: u64) {
        self.count += 1;
        self.sum = self.sum.saturating_add(v);
        if v < self.min {
            self.min = v;
        }
        if v > self.max || self.count == 1 {
            self.max = v;
            self.max_seq = seq;
            self.max_time = time;
        }
    }

    /// Mean of the samples, rounded down (0 when empty).
    pub const fn mean(&self) -> u64 {
        match self.sum.checked_div(self.count) {
            Some(m) => m,
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests;
