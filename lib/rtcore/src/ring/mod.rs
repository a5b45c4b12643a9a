// SPDX-License-Identifier: GPL-2.0

//! Lock-free single-producer/single-consumer ring of fixed-size records.
//!
//! The producer may run in hard-IRQ context: [`Ring::push`] takes no lock,
//! never blocks, never allocates and does a bounded amount of work. When the
//! ring is full the record is dropped and counted, so that whenever no push
//! and no pop or consume is in progress `produced == delivered + dropped +
//! len()` (each side moves its index and its counter one after the other).
//!
//! Ordering follows the kernel's `smp_store_release`/`smp_load_acquire`
//! pairing: the producer publishes a slot with a release store of `head` after
//! writing it, the consumer frees it with a release store of `tail` after
//! reading it; each side reads the other's index with acquire.
//!
//! The storage is any slice of [`Slot`]s (a `Vec`, a `KVec`, a boxed slice), so
//! that the kernel can allocate it when a session is configured and the host
//! can test it with ordinary vectors.

use core::{
    cell::UnsafeCell,
    mem::MaybeUninit,
    ops::Deref,
    sync::atomic::{
        AtomicU64,
        AtomicUsize,
        Ordering, //
    },
};

/// One slot of a ring: storage for a record that only the ring's protocol
/// decides who may touch.
#[repr(transparent)]
pub struct Slot<T>(UnsafeCell<MaybeUninit<T>>);

impl<T> Slot<T> {
    /// An empty slot.
    pub const fn new() -> Self {
        Self(UnsafeCell::new(MaybeUninit::uninit()))
    }
}

// SAFETY: A slot's content is reachable only through `Ring`, whose `push` and
// `pop` contracts (one producer, one consumer, slots handed over with
// acquire/release on the indices) ensure no slot is accessed by two threads at
// once; `T: Send` lets the records cross threads.
unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Readers of a ring are woken in batches of this many records ...
pub const WAKE_BATCH: usize = 64;

/// ... or, for a ring too small to hold two batches, when it is half full:
/// the record count at which a consumer of a ring of `capacity` records is
/// woken, so that it is woken before the ring is full.
pub const fn wake_batch(capacity: usize) -> usize {
    let half = capacity / 2;
    let b = if half < WAKE_BATCH { half } else { WAKE_BATCH };
    if b == 0 {
        1
    } else {
        b
    }
}

/// Counters of a ring, read without stopping it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingCounters {
    /// Records offered by the producer.
    pub produced: u64,
    /// Records handed to the consumer.
    pub delivered: u64,
    /// Records dropped because the ring was full.
    pub dropped: u64,
}

/// A single-producer/single-consumer ring over the storage `S`.
///
/// # Invariants
///
/// - `slots.len()` is a power of two and at least 1;
/// - `tail <= head <= tail + slots.len()` (with wrapping arithmetic);
/// - the slots `tail..head` (modulo the length) hold initialised records.
pub struct Ring<T: Copy, S: Deref<Target = [Slot<T>]>> {
    slots: S,
    mask: usize,
    head: AtomicUsize,
    tail: AtomicUsize,
    produced: AtomicU64,
    delivered: AtomicU64,
    dropped: AtomicU64,
}

/// Reasons a storage cannot back a ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// The number of slots is zero or not a power of two.
    BadCapacity,
}

impl<T: Copy, S: Deref<Target = [Slot<T>]>> Ring<T, S> {
    /// A ring over `slots`, whose length must be a non-zero power of two.
    pub fn new(slots: S) -> Result<Self, RingError> {
        let n = slots.len();
        if n == 0 || !n.is_power_of_two() {
            return Err(RingError::BadCapacity);
        }
        // INVARIANT: power-of-two length, empty ring.
        Ok(Self {
            slots,
            mask: n - 1,
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            produced: AtomicU64::new(0),
            delivered: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        })
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Records waiting for the consumer.
    pub fn len(&self) -> usize {
        let tail = self.tail.load(Ordering::Acquire);
        self.head.load(Ordering::Acquire).wrapping_sub(tail)
    }

    /// True when no record is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Offers `rec`; returns `false` (and counts a drop) when the ring is full.
    ///
    /// # Safety
    ///
    /// At most one thread or context may be inside `push` on this ring at any
    /// time (single producer).
    #[inline]
    pub unsafe fn push(&self, rec: T) -> bool {
        self.produced.fetch_add(1, Ordering::Relaxed);
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        if head.wrapping_sub(tail) > self.mask {
            // Release: a reader of `dropped` sees the `produced` before it.
            self.dropped.fetch_add(1, Ordering::Release);
            return false;
        }
        let slot = &self.slots[head & self.mask];
        // SAFETY: The slot at `head` is outside `tail..head`, so the consumer
        // does not read it, and the caller guarantees we are the only producer.
        unsafe { (*slot.0.get()).write(rec) };
        // INVARIANT: the slot is initialised before `head` publishes it.
        self.head.store(head.wrapping_add(1), Ordering::Release);
        true
    }

    /// Takes the oldest record, if any.
    ///
    /// # Safety
    ///
    /// At most one thread may be inside `pop` on this ring at any time
    /// (single consumer).
    #[inline]
    pub unsafe fn pop(&self) -> Option<T> {
        // SAFETY: The caller guarantees we are the only consumer.
        unsafe { self.pop_if(|_| true) }
    }

    /// Takes the oldest record if `deliver` accepts it: `deliver` gets a copy
    /// and returns whether it reached its destination. A record it refuses
    /// (a copy to user space that faulted) stays the oldest, neither
    /// delivered nor dropped, for the next call.
    ///
    /// # Safety
    ///
    /// As for [`Self::pop`] (single consumer).
    #[inline]
    pub unsafe fn pop_if(&self, deliver: impl FnOnce(T) -> bool) -> Option<T> {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let slot = &self.slots[tail & self.mask];
        // SAFETY: `tail != head`, so by the type invariant the slot holds an
        // initialised record that the producer does not touch until `tail`
        // moves past it; the caller guarantees we are the only consumer. `T`
        // is `Copy`: reading leaves the slot initialised if we do not move on.
        let rec = unsafe { (*slot.0.get()).assume_init_read() };
        if !deliver(rec) {
            return None;
        }
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        // Release: a reader of `delivered` sees the production it follows.
        self.delivered.fetch_add(1, Ordering::Release);
        Some(rec)
    }

    /// Shows the oldest records, up to `max`, to `each` (their index from 0
    /// and a copy) without taking them; how many it showed. They stay in
    /// the ring until [`Self::consume`] takes them: a consumer that copies a
    /// batch to user space takes only what arrived.
    ///
    /// # Safety
    ///
    /// As for [`Self::pop`] (single consumer).
    #[inline]
    pub unsafe fn peek_each(&self, max: usize, mut each: impl FnMut(usize, T)) -> usize {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        let n = head.wrapping_sub(tail).min(max);
        for i in 0..n {
            let slot = &self.slots[tail.wrapping_add(i) & self.mask];
            // SAFETY: `tail + i` is in `tail..head`, so by the type invariant
            // the slot holds an initialised record the producer does not
            // touch until `tail` moves past it; the caller guarantees we are
            // the only consumer. `T` is `Copy`: the slot stays initialised.
            each(i, unsafe { (*slot.0.get()).assume_init_read() });
        }
        n
    }

    /// Takes the `n` oldest records (those [`Self::peek_each`] showed, or
    /// fewer), counted as delivered; at most what the ring holds.
    ///
    /// # Safety
    ///
    /// As for [`Self::pop`] (single consumer).
    #[inline]
    pub unsafe fn consume(&self, n: usize) {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        let n = n.min(head.wrapping_sub(tail));
        if n == 0 {
            return;
        }
        self.tail.store(tail.wrapping_add(n), Ordering::Release);
        self.delivered.fetch_add(n as u64, Ordering::Release);
    }

    /// Produced, delivered and dropped counts.
    ///
    /// Each counter is exact; read while the ring runs, they may come from
    /// slightly different moments, but never with more delivered and
    /// dropped than produced.
    pub fn counters(&self) -> RingCounters {
        // The consumer's and the drops before the production they follow,
        // so that a snapshot of a running ring never has more delivered and
        // dropped than produced.
        let delivered = self.delivered.load(Ordering::Acquire);
        let dropped = self.dropped.load(Ordering::Acquire);
        RingCounters {
            produced: self.produced.load(Ordering::Acquire),
            delivered,
            dropped,
        }
    }
}

#[cfg(test)]
mod tests;
