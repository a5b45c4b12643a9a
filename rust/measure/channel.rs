// SPDX-License-Identifier: GPL-2.0

//! A channel: one stream of records (a CPU for rtlat, the device for
//! rtedu), its ring, its per-stage statistics and missed periods.

use kernel::{prelude::*, sync::atomic::Atomic};

use crate::rtrs::{
    ring::{
        self,
        new_kring,
        KRing, //
    },
    uapi::{
        self,
        Config,
        Record,
        Stage, //
    },
};

use super::StageStats;

/// One stream of records: a ring for `read()`, statistics per stage, and the
/// periods it missed. `id` is what `Record::cpu`, `RTLAT_IOC_STATS` and the
/// status bitmaps call it (a CPU number).
pub(crate) struct Channel {
    pub(crate) id: u32,
    pub(crate) ring: KRing<Record>,
    /// Per stage, in [`Stage`] index order.
    pub(super) stats: KVec<StageStats>,
    pub(crate) missed: Atomic<u64>,
    /// Records flagged `REC_DEADLINE_MISS`.
    pub(crate) deadline_misses: Atomic<u64>,
    /// Sampling on this channel stopped for good (its CPU went offline).
    pub(crate) went_offline: Atomic<bool>,
    /// Its latest activation found no user waiter (a user-stage session).
    pub(crate) unattended: Atomic<bool>,
}

impl Channel {
    /// A channel with a ring of `ring_records` records ([`ring_records`]).
    /// Sleeps.
    pub(crate) fn new(id: u32, ring_records: u32) -> Result<Self> {
        let mut stats = KVec::with_capacity(uapi::NR_STAGES, GFP_KERNEL)?;
        for _ in 0..uapi::NR_STAGES {
            stats.push(StageStats::new()?, GFP_KERNEL)?;
        }
        Ok(Self {
            id,
            ring: new_kring(ring_records as usize)?,
            stats,
            missed: Atomic::new(0),
            deadline_misses: Atomic::new(0),
            went_offline: Atomic::new(false),
            unattended: Atomic::new(false),
        })
    }

    /// The statistics of `stage`.
    pub(crate) fn stats(&self, stage: Stage) -> &StageStats {
        &self.stats[stage.index()]
    }

    /// Readers are woken when this channel's ring reaches this many records.
    pub(super) fn wake_batch(&self) -> usize {
        ring::wake_batch(self.ring.capacity())
    }
}

/// The records per ring of a session of `config` over `nr_chans` channels
/// (the default shrinks past 256 CPUs to fit); `ENOMEM` if the rings asked
/// for would take more than [`uapi::RING_TOTAL_MAX_BYTES`].
pub(crate) fn ring_records(nr_chans: usize, config: &Config) -> Result<u32> {
    config.ring_records_for(nr_chans).ok_or(ENOMEM)
}
