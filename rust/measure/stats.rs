// SPDX-License-Identifier: GPL-2.0

//! Statistics of one stage on one channel.

use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

use crate::rtrs::{
    context::{
        Producer,
        Sleepable, //
    },
    hist,
    raw_spinlock::{
        LockIrqsOff,
        RawSpinLockIrq, //
    },
};

/// Statistics of one stage on one channel: summary under a raw lock (a few
/// words; interrupts off, since a hard-IRQ producer may take it), histogram
/// buckets as atomics, counted under the same lock (a reset clears both
/// at once) and read without it.
pub(crate) struct StageStats {
    summary: Pin<KBox<RawSpinLockIrq<hist::Summary>>>,
    buckets: KVec<Atomic<u64>>,
}

impl StageStats {
    pub(super) fn new() -> Result<Self> {
        let mut buckets = KVec::with_capacity(hist::BUCKETS, GFP_KERNEL)?;
        for _ in 0..hist::BUCKETS {
            buckets.push(Atomic::new(0), GFP_KERNEL)?;
        }
        Ok(Self {
            summary: KBox::pin_init(
                crate::new_raw_spinlock_irq!(hist::Summary::new()),
                GFP_KERNEL,
            )?,
            buckets,
        })
    }

    /// Adds a sample, from the context `ctx` proves.
    pub(super) fn add(&self, ctx: Producer<'_>, v: u64, seq: u64, time: u64) {
        let count = |s: &mut hist::Summary| {
            self.buckets[hist::bucket_of(v)].fetch_add(1, Relaxed);
            s.add(v, seq, time);
        };
        match ctx {
            Producer::HardIrq(irq) => count(&mut self.summary.lock_with(irq.irqs_off())),
            Producer::Task(_) => count(&mut self.summary.lock()),
        }
    }

    /// Clears the summary and the buckets together: no sample falls between
    /// (the lock is held over the buckets' stores, about two thousand
    /// words; RESET is the user's, not the sampling's).
    pub(super) fn reset(&self) {
        let mut s = self.summary.lock();
        *s = hist::Summary::new();
        for b in self.buckets.iter() {
            b.store(0, Relaxed);
        }
    }

    /// Copy of the summary.
    fn summary(&self) -> hist::Summary {
        *self.summary.lock()
    }

    /// Copies of the summary and the buckets that agree (the buckets hold
    /// `count` samples), while samples keep coming: the buckets are read
    /// without the lock, so a copy a sample (or a reset) changed meanwhile
    /// is seen and taken again. Allocates. After a few tries at a rate
    /// that never leaves a gap, the last copies (a few samples apart).
    pub(crate) fn snapshot(&self, _ctx: &Sleepable) -> Result<(hist::Summary, KVec<u64>)> {
        let mut v = KVec::from_elem(0u64, hist::BUCKETS, GFP_KERNEL)?;
        let mut sum = self.summary();
        for _ in 0..8 {
            let mut n = 0u64;
            for (c, b) in v.iter_mut().zip(self.buckets.iter()) {
                *c = b.load(Relaxed);
                n = n.wrapping_add(*c);
            }
            let after = self.summary();
            if after.count == sum.count && n == sum.count {
                break;
            }
            sum = after;
        }
        Ok((sum, v))
    }
}
