// SPDX-License-Identifier: GPL-2.0

//! Sample: per-CPU counters, updated on the current CPU and read from all.
//!
//! `PerCpu` hands out this CPU's slot only to a context that cannot migrate:
//! here a `MigrateGuard` (preemptible, the PREEMPT_RT way), elsewhere a
//! `PreemptGuard` or a hard-IRQ token. The slots are atomics, so readers on
//! other CPUs see consistent values.

use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

use rtrs::{
    context::CpuPinned,
    percpu::PerCpu,
    preempt::MigrateGuard, //
};

module! {
    type: Sample,
    name: "rtrs_percpu",
    authors: ["The rtrs developers"],
    description: "rtrs sample: PerCpu and the CPU-pinning guards",
    license: "GPL",
}

struct Sample {
    _hits: PerCpu<Atomic<u64>>,
}

impl kernel::Module for Sample {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let hits = PerCpu::new(|_cpu| Atomic::new(0u64))?;
        let cpu = {
            let pinned = MigrateGuard::new();
            hits.this_cpu(&pinned).fetch_add(1, Relaxed);
            pinned.cpu()
        };
        let total: u64 = hits.iter().map(|(_, h)| h.load(Relaxed)).sum();
        pr_info!("counted {} hit(s), on CPU {}\n", total, cpu);
        Ok(Sample { _hits: hits })
    }
}
