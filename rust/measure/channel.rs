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
    /// A channel with a ring of `config.ring_records` records. Sleeps.
    pub(crate) fn new(id: u32, config: &Config) -> Result<Self> {
        let ring_records = if config.ring_records == 0 {
            uapi::RING_DEFAULT
        } else {
            config.ring_records
        };
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

/// Refuses (`ENOMEM`) a session whose rings would take more than
/// [`uapi::RING_TOTAL_MAX_BYTES`] over its `nr_chans` channels.
pub(crate) fn check_ring_budget(nr_chans: usize, config: &Config) -> Result {
    let per_chan = if config.ring_records == 0 {
        uapi::RING_DEFAULT
    } else {
        config.ring_records
    };
    let total = (nr_chans as u64)
        .saturating_mul(u64::from(per_chan))
        .saturating_mul(uapi::RECORD_SIZE as u64);
    if total > uapi::RING_TOTAL_MAX_BYTES {
        return Err(ENOMEM);
    }
    Ok(())
}
