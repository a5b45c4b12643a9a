// SPDX-License-Identifier: GPL-2.0

//! Unit tests of the histogram: bucket layout, relative error and
//! percentiles against brute force.

extern crate std;
use super::*;
use std::vec::Vec;

#[test]
fn buckets_cover_the_range_in_order() {
    assert_eq!(bucket_of(0), 0);
    assert_eq!(bucket_of(63), 63);
    assert_eq!(bucket_of(64), 64);
    assert_eq!(bucket_of(MAX_TRACKED - 1), OVERFLOW - 1);
    assert_eq!(bucket_of(MAX_TRACKED), OVERFLOW);
    assert_eq!(bucket_of(u64::MAX), OVERFLOW);
    for i in 0..OVERFLOW {
        assert!(bucket_low(i) <= bucket_high(i));
        assert_eq!(bucket_of(bucket_low(i)), i, "low of {i}");
        assert_eq!(bucket_of(bucket_high(i)), i, "high of {i}");
        assert_eq!(bucket_high(i) + 1, bucket_low(i + 1));
    }
}

#[test]
fn relative_error_is_bounded() {
    for i in SUB_BUCKETS..OVERFLOW {
        let (lo, hi) = (bucket_low(i), bucket_high(i));
        // Width relative to the smallest value of the bucket.
        assert!((hi - lo + 1) as f64 / lo as f64 <= 1.0 / SUB_BUCKETS as f64 + 1e-12);
    }
    // 10 s is tracked without overflow.
    assert_ne!(bucket_of(10_000_000_000), OVERFLOW);
}

/// Small deterministic generator (xorshift64*) for reproducible data.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed >> 12;
    *seed ^= *seed << 25;
    *seed ^= *seed >> 27;
    seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

#[test]
fn percentiles_match_brute_force() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    for round in 0..20 {
        let n = 1 + (rng(&mut seed) % 50_000) as usize;
        let mut values: Vec<u64> = (0..n)
            .map(|_| {
                // Latency-like: mostly small, with a long tail up to seconds.
                let r = rng(&mut seed);
                match r % 100 {
                    0 => r % 5_000_000_000,
                    1..=9 => r % 200_000,
                    _ => 1_000 + r % 9_000,
                }
            })
            .collect();
        let mut buckets = std::vec![0u64; BUCKETS];
        let mut s = Summary::new();
        for (i, &v) in values.iter().enumerate() {
            buckets[bucket_of(v)] += 1;
            s.add(v, i as u64, 0);
        }
        values.sort_unstable();
        assert_eq!(s.max, *values.last().unwrap());
        assert_eq!(s.min, values[0]);
        for &ppm in PERCENTILES_PPM.iter() {
            let rank = (n as u128 * ppm as u128).div_ceil(1_000_000).max(1) as usize;
            let exact = values[rank - 1];
            let got = percentile(&buckets, ppm, s.max).unwrap();
            assert!(
                got >= exact,
                "round {round} ppm {ppm}: {got} < exact {exact}"
            );
            assert!(
                (got - exact) as f64 <= exact as f64 * 0.02,
                "round {round} ppm {ppm}: {got} vs exact {exact}"
            );
        }
    }
}

#[test]
fn empty_and_single() {
    let mut buckets = std::vec![0u64; BUCKETS];
    assert_eq!(percentile(&buckets, 500_000, 0), None);
    buckets[bucket_of(12_345)] += 1;
    for &ppm in PERCENTILES_PPM.iter() {
        assert_eq!(percentile(&buckets, ppm, 12_345), Some(12_345));
    }
    let mut s = Summary::new();
    assert_eq!(s.mean(), 0);
    s.add(10, 7, 100);
    s.add(30, 8, 200);
    assert_eq!(
        (s.min, s.max, s.mean(), s.max_seq, s.max_time),
        (10, 30, 20, 8, 200)
    );
}
