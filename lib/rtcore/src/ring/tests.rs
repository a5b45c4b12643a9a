// SPDX-License-Identifier: GPL-2.0

//! Unit tests of the ring: capacity, order, drop accounting, wake-ups,
//! batches, and a producer and consumer on two threads.

extern crate std;
use super::*;
use std::{sync::Arc, thread, vec::Vec};

fn storage(n: usize) -> Vec<Slot<u64>> {
    (0..n).map(|_| Slot::new()).collect()
}

/// Every record `producer` pushed (`n`) and the ring accepted arrived
/// exactly once and in order (`got`); the counters say so.
fn all_accounted_for(
    r: &Ring<u64, Vec<Slot<u64>>>,
    producer: thread::JoinHandle<Vec<u64>>,
    got: &[u64],
    n: u64,
) {
    let accepted = producer.join().unwrap();
    assert_eq!(got, accepted);
    let c = r.counters();
    assert_eq!(c.produced, n);
    assert_eq!(c.delivered, got.len() as u64);
    assert_eq!(c.produced, c.delivered + c.dropped);
}

/// A thread pushing 0..n into `r` as its only producer; it returns the
/// values the ring accepted.
fn produce(r: Arc<Ring<u64, Vec<Slot<u64>>>>, n: u64) -> thread::JoinHandle<Vec<u64>> {
    thread::spawn(move || {
        let mut accepted = Vec::new();
        for i in 0..n {
            // SAFETY: This thread is the only producer.
            if unsafe { r.push(i) } {
                accepted.push(i);
            }
        }
        accepted
    })
}

#[test]
fn capacity_must_be_a_power_of_two() {
    assert_eq!(Ring::new(storage(0)).err(), Some(RingError::BadCapacity));
    assert_eq!(Ring::new(storage(3)).err(), Some(RingError::BadCapacity));
    assert_eq!(Ring::new(storage(4)).unwrap().capacity(), 4);
}

#[test]
fn fifo_and_drop_accounting() {
    let r = Ring::new(storage(4)).unwrap();
    // SAFETY: Single thread: one producer and one consumer.
    unsafe {
        for i in 0..6 {
            r.push(i);
        }
        assert_eq!(r.len(), 4);
        assert_eq!(
            (0..5).map(|_| r.pop()).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(2), Some(3), None]
        );
        assert!(r.push(9));
        assert_eq!(r.pop(), Some(9));
    }
    let c = r.counters();
    assert_eq!(
        c,
        RingCounters {
            produced: 7,
            delivered: 5,
            dropped: 2
        }
    );
    assert_eq!(c.produced, c.delivered + c.dropped + r.len() as u64);
}

#[test]
fn small_rings_are_woken_before_they_are_full() {
    assert_eq!(wake_batch(4096), WAKE_BATCH);
    assert_eq!(wake_batch(128), 64);
    assert_eq!(wake_batch(64), 32);
    assert_eq!(wake_batch(16), 8);
    assert_eq!(wake_batch(2), 1);
    assert_eq!(wake_batch(1), 1);
    for c in (0..21).map(|k| 1usize << k) {
        assert!(wake_batch(c) >= 1 && wake_batch(c) <= c);
    }
}

#[test]
fn refused_delivery_keeps_the_record() {
    let r = Ring::new(storage(4)).unwrap();
    // SAFETY: Single thread: one producer and one consumer.
    unsafe {
        r.push(1);
        r.push(2);
        // A copy that failed: the record stays first, nothing is counted.
        assert_eq!(r.pop_if(|_| false), None);
        assert_eq!(r.len(), 2);
        assert_eq!(r.counters().delivered, 0);
        assert_eq!(r.pop_if(|v| v == 1), Some(1));
        assert_eq!(r.pop(), Some(2));
        assert_eq!(r.pop_if(|_| true), None);
    }
    let c = r.counters();
    assert_eq!((c.produced, c.delivered, c.dropped), (2, 2, 0));
}

#[test]
fn a_batch_is_shown_and_only_what_arrived_is_taken() {
    let r = Ring::new(storage(8)).unwrap();
    let mut seen = Vec::new();
    // SAFETY: This thread is the only producer and consumer.
    unsafe {
        assert_eq!(r.peek_each(4, |_, v| seen.push(v)), 0);
        // Wrap around: 6 in, 6 out, then 7 more.
        for i in 0..6 {
            r.push(i);
        }
        r.consume(6);
        for i in 10..17 {
            r.push(i);
        }
        assert_eq!(r.peek_each(5, |i, v| seen.push(i as u64 * 100 + v)), 5);
        assert_eq!(seen, [10, 111, 212, 313, 414]);
        assert_eq!(r.len(), 7);
        // A copy that stopped after 3: those are taken, the rest stay.
        r.consume(3);
        assert_eq!(r.len(), 4);
        seen.clear();
        assert_eq!(r.peek_each(usize::MAX, |_, v| seen.push(v)), 4);
        assert_eq!(seen, [13, 14, 15, 16]);
        // Never more than the ring holds.
        r.consume(100);
        assert!(r.is_empty());
    }
    let c = r.counters();
    assert_eq!((c.produced, c.delivered, c.dropped), (13, 13, 0));
}

#[test]
fn concurrent_batches_lose_nothing_unaccounted() {
    const N: u64 = 200_000;
    let r = Arc::new(Ring::new(storage(64)).unwrap());
    let producer = produce(r.clone(), N);
    let mut got = Vec::new();
    let mut turn = 0usize;
    loop {
        let mut batch = Vec::new();
        // SAFETY: This thread is the only consumer.
        let n = unsafe { r.peek_each(16, |_, v| batch.push(v)) };
        // Take all, part or none of it, as a copy that faults would.
        turn += 1;
        let take = [n, n / 2, 0][turn % 3];
        // SAFETY: As above.
        unsafe { r.consume(take) };
        got.extend_from_slice(&batch[..take]);
        if n == 0 {
            if producer.is_finished() && r.is_empty() {
                break;
            }
            thread::yield_now();
        }
    }
    all_accounted_for(&r, producer, &got, N);
}

#[test]
fn concurrent_producer_and_consumer_lose_nothing_unaccounted() {
    const N: u64 = 200_000;
    let r = Arc::new(Ring::new(storage(64)).unwrap());
    let producer = produce(r.clone(), N);
    let mut got = Vec::new();
    loop {
        // SAFETY: This thread is the only consumer.
        match unsafe { r.pop() } {
            Some(v) => got.push(v),
            None if producer.is_finished() && r.is_empty() => break,
            None => thread::yield_now(),
        }
    }
    all_accounted_for(&r, producer, &got, N);
}
