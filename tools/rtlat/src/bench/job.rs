// SPDX-License-Identifier: GPL-2.0

//! `rtlat bench-job`, run in the benchmark guest: the fixed CPU-bound job
//! whose throughput each measuring tool's overhead is read from.

use std::time::{Duration, Instant};

/// The benchmark's fixed CPU-bound job: one thread per CPU in `cpus`, pinned
/// there by `pin`, does units of integer work until `length` has passed;
/// returns the units done per second, all CPUs together. The clock is read
/// once per unit (about a millisecond of work in TCG), so its resolution
/// does not matter.
pub fn job(
    cpus: &[u32],
    length: Duration,
    pin: fn(u32) -> Result<(), String>,
) -> Result<f64, String> {
    const UNIT: u32 = 20_000;
    let start = Instant::now();
    let deadline = start + length;
    let workers: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::spawn(move || -> Result<f64, String> {
                pin(cpu)?;
                let t0 = Instant::now();
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(cpu);
                let mut units = 0u64;
                while Instant::now() < deadline {
                    for _ in 0..UNIT {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                    }
                    std::hint::black_box(x);
                    units += 1;
                }
                Ok(units as f64 / t0.elapsed().as_secs_f64())
            })
        })
        .collect();
    let mut total = 0.0;
    for w in workers {
        total += w.join().map_err(|_| "job thread panicked".to_string())??;
    }
    Ok(total)
}
