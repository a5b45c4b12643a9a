// SPDX-License-Identifier: GPL-2.0

//! `struct rtlat_stats` ([`Stats`], `RTLAT_IOC_STATS`): one CPU's and
//! stage's statistics and histogram.

use super::{
    wire::{
        header,
        Wr, //
    },
    Stage,
    UapiError,
    VERSION, //
};

/// Byte size of [`Stats`] (without the buckets, which go to `buckets_ptr`).
pub const STATS_SIZE: usize = 8 + 4 + 4 + 8 + 4 + 4 + 8 * 10 + 8 * 7;

/// `struct rtlat_stats`: request (cpu, stage, bucket buffer) and answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// In: the CPU.
    pub cpu: u32,
    /// In: the stage's index ([`Stage`]).
    pub stage: u32,
    /// In: user address of a `u64` array for the histogram, or 0.
    pub buckets_ptr: u64,
    /// In: capacity of that array; out: number of buckets written.
    pub nr_buckets: u32,
    /// Out: the histogram layout version (`hist::SUB_BITS` and `hist::OCTAVES`).
    pub hist_layout: u32,
    /// Out: samples.
    pub count: u64,
    /// Out: smallest sample, ns.
    pub min: u64,
    /// Out: largest sample, ns.
    pub max: u64,
    /// Out: sum of the samples, ns.
    pub sum: u64,
    /// Out: sequence number of the maximum.
    pub max_seq: u64,
    /// Out: expected expiry (CLOCK_MONOTONIC ns) of the maximum's activation.
    pub max_time: u64,
    /// Out: missed periods on this CPU.
    pub missed: u64,
    /// Out: records produced on this CPU.
    pub produced: u64,
    /// Out: records delivered to readers.
    pub delivered: u64,
    /// Out: records dropped.
    pub dropped: u64,
    /// Out: p50 ... p99.9999 (`hist::PERCENTILES_PPM`), ns; 0 when empty.
    pub percentiles: [u64; 7],
}

impl Stats {
    /// Decodes a request (only the input fields are read).
    pub fn decode_request(b: &[u8]) -> Result<Self, UapiError> {
        let mut r = header(b, STATS_SIZE)?;
        let s = Stats {
            cpu: r.u32(),
            stage: r.u32(),
            buckets_ptr: r.u64(),
            nr_buckets: r.u32(),
            ..Default::default()
        };
        if Stage::from_raw(s.stage).is_none() {
            return Err(UapiError::Invalid);
        }
        Ok(s)
    }

    /// Decodes an answer.
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        let mut r = header(b, STATS_SIZE)?;
        let mut s = Stats {
            cpu: r.u32(),
            stage: r.u32(),
            buckets_ptr: r.u64(),
            nr_buckets: r.u32(),
            hist_layout: r.u32(),
            ..Default::default()
        };
        for v in [
            &mut s.count,
            &mut s.min,
            &mut s.max,
            &mut s.sum,
            &mut s.max_seq,
            &mut s.max_time,
            &mut s.missed,
            &mut s.produced,
            &mut s.delivered,
            &mut s.dropped,
        ] {
            *v = r.u64();
        }
        for p in s.percentiles.iter_mut() {
            *p = r.u64();
        }
        Ok(s)
    }

    /// Encodes into `b`.
    pub fn encode(&self, b: &mut [u8; STATS_SIZE]) {
        let mut w = Wr { b, at: 0 };
        w.u32(STATS_SIZE as u32);
        w.u32(VERSION);
        w.u32(self.cpu);
        w.u32(self.stage);
        w.u64(self.buckets_ptr);
        w.u32(self.nr_buckets);
        w.u32(self.hist_layout);
        for v in [
            self.count,
            self.min,
            self.max,
            self.sum,
            self.max_seq,
            self.max_time,
            self.missed,
            self.produced,
            self.delivered,
            self.dropped,
        ] {
            w.u64(v);
        }
        for &p in self.percentiles.iter() {
            w.u64(p);
        }
    }
}

/// The histogram layout identifier reported in [`Stats::hist_layout`].
pub const HIST_LAYOUT: u32 = (super::super::hist::SUB_BITS << 8) | super::super::hist::OCTAVES;
