// SPDX-License-Identifier: GPL-2.0

//! The record path: a completed record's statistics, thresholds and ring,
//! in any context, and when the readers are to be woken.

use kernel::sync::atomic::Relaxed;

use crate::rtrs::{
    context::{
        Producer,
        Sleepable, //
    },
    time::ktime_ns,
    uapi::{
        self,
        Record,
        Stage, //
    },
};

use super::{
    output::Trip,
    Channel,
    Output, //
};

/// What [`Output::record`] leaves to its caller.
#[must_use]
pub(crate) struct Recorded {
    /// A threshold tripped and the session is marked stopped: halt the
    /// producers and wake the readers.
    pub(crate) tripped: bool,
    /// Wake the readers ([`Output::notify_readers`], task context).
    pub(crate) wake: bool,
}

/// Readers blocked in `read()` are woken in batches: when a ring reaches
/// [`wake_batch`](crate::rtrs::ring::wake_batch) records (64, or half a small ring), or when the last
/// wake-up is this old, so a record waits at most about
/// 10 ms (plus one period) and a reader wakes at most about 100 times a
/// second whatever the rate. Waking it for every record would cost a context
/// switch per activation on every CPU.
const WAKE_INTERVAL_NS: i64 = 10_000_000;

impl Output {
    /// Adds the measured stages of `rec` to `chan`'s statistics; returns the
    /// first threshold it exceeds. Any context, as `ctx` proves.
    fn account(
        &self,
        ctx: Producer<'_>,
        chan: &Channel,
        rec: &Record,
        stages: &[Stage],
    ) -> Option<Trip> {
        let mut tripped = None;
        for &stage in stages {
            let lat = rec.lat_ns[stage];
            if lat < 0 {
                continue;
            }
            let lat = lat as u64;
            chan.stats(stage).add(ctx, lat, rec.seq, rec.expected_ns);
            if tripped.is_none() {
                tripped = self.exceeds(chan, rec, stage);
            }
        }
        tripped
    }

    /// The trip `rec` makes on `stage`, if it exceeds its threshold.
    fn exceeds(&self, chan: &Channel, rec: &Record, stage: Stage) -> Option<Trip> {
        let lat = rec.lat_ns[stage];
        let limit = self.config.threshold_ns[stage];
        (lat >= 0 && limit != 0 && lat as u64 > limit).then_some(Trip {
            chan: chan.id,
            stage,
            value: lat as u64,
            seq: rec.seq,
        })
    }

    /// Marks `rec` with [`uapi::REC_THRESHOLD`] if its `stage` exceeds the
    /// threshold; accounts nothing, trips nothing.
    pub(crate) fn mark_threshold(&self, chan: &Channel, rec: &mut Record, stage: Stage) {
        if self.exceeds(chan, rec, stage).is_some() {
            rec.flags |= uapi::REC_THRESHOLD;
        }
    }

    /// Checks the thresholds of `stages` of a record that is not complete
    /// yet, as soon as they are measured (a user-stage record is complete
    /// only when its waiter comes back, which may be late or never): marks
    /// it and stops the session on a trip; true if it tripped. Statistics
    /// wait for [`Self::record`], whose own check of these stages then finds
    /// the session stopped. Any context; wakes no one (the caller halts its
    /// producers; the record wakes the readers once it is in the ring).
    pub(crate) fn check_early(&self, chan: &Channel, rec: &mut Record, stages: &[Stage]) -> bool {
        let Some(t) = stages.iter().find_map(|&s| self.exceeds(chan, rec, s)) else {
            return false;
        };
        rec.flags |= uapi::REC_THRESHOLD;
        self.trip(t)
    }

    /// A completed record, in the context `ctx` proves (hard IRQ included): statistics,
    /// thresholds, then the ring. Only raw locks, atomics and the lock-free
    /// ring; nothing is woken. If it tripped a threshold the session is
    /// marked stopped; the caller must then halt its producers and, like
    /// when [`Recorded::wake`] is set, call [`Self::notify_readers`] from
    /// task context.
    ///
    /// # Safety
    ///
    /// Records of one channel are recorded by one context at a time (the
    /// ring has a single producer).
    pub(crate) unsafe fn record(
        &self,
        ctx: Producer<'_>,
        chan: &Channel,
        mut rec: Record,
    ) -> Recorded {
        let missed = u64::from(rec.missed);
        if missed != 0 {
            chan.missed.fetch_add(missed, Relaxed);
        }
        if rec.flags & uapi::REC_DEADLINE_MISS != 0 {
            chan.deadline_misses.fetch_add(1, Relaxed);
        }
        let tripped = self.account(ctx, chan, &rec, &Stage::ALL);
        if tripped.is_some() {
            rec.flags |= uapi::REC_THRESHOLD;
        }
        // SAFETY: Single producer per channel, by this function's contract.
        unsafe { chan.ring.push(rec) };
        // Reaching the batch (not staying above it: a reader that is away
        // must not cost a wake-up per record), or the interval since the last
        // wake-up. The time is taken now, so later records do not ask again
        // before the caller got round to it.
        let now = ktime_ns();
        let wake = self.wake_each
            || rec.flags & uapi::REC_THRESHOLD != 0
            || chan.ring.len() == chan.wake_batch()
            || now - self.last_wake.load(Relaxed) >= WAKE_INTERVAL_NS;
        if wake {
            self.last_wake.store(now, Relaxed);
        }
        Recorded {
            tripped: tripped.is_some_and(|t| self.trip(t)),
            wake,
        }
    }

    /// [`Self::record`] and, as it asks, the readers' wake-up: for producers
    /// in task context. Returns true if the record tripped a threshold; the
    /// caller must then halt its producers.
    ///
    /// # Safety
    ///
    /// As for [`Self::record`].
    pub(crate) unsafe fn complete(&self, ctx: &Sleepable, chan: &Channel, rec: Record) -> bool {
        // SAFETY: The caller's contract is `record`'s.
        let r = unsafe { self.record(Producer::Task(ctx), chan, rec) };
        if r.wake || r.tripped {
            self.notify_readers(ctx);
        }
        r.tripped
    }

    /// A stage measured by the reader itself (rtedu's user stage, stamped by
    /// `read()` on the record whose event woke it): statistics and
    /// thresholds; true if it tripped. Task context.
    pub(crate) fn complete_stage(
        &self,
        ctx: &Sleepable,
        chan: &Channel,
        rec: &mut Record,
        stage: Stage,
    ) -> bool {
        match self.account(Producer::Task(ctx), chan, rec, &[stage]) {
            Some(t) => {
                rec.flags |= uapi::REC_THRESHOLD;
                let tripped = self.trip(t);
                if tripped {
                    self.notify_readers(ctx);
                }
                tripped
            }
            None => false,
        }
    }
}
