// SPDX-License-Identifier: GPL-2.0

//! Sample: a counter shared by task context and hard IRQ under a raw spinlock.
//!
//! `RawSpinLockIrq` is the lock for data that a hard-IRQ handler also
//! touches: it never sleeps (also on PREEMPT_RT) and disables interrupts in
//! task context, so the handler cannot interrupt the holder on this CPU.

use kernel::prelude::*;

#[path = "../rust/rtrs.rs"]
mod rtrs;

use rtrs::raw_spinlock::RawSpinLockIrq;

module! {
    type: Sample,
    name: "rtrs_raw_spinlock",
    authors: ["The rtrs developers"],
    description: "rtrs sample: RawSpinLockIrq",
    license: "GPL",
}

#[pin_data]
struct Sample {
    #[pin]
    events: RawSpinLockIrq<u64>,
}

impl kernel::InPlaceModule for Sample {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            events <- crate::new_raw_spinlock_irq!(0, "rtrs_raw_spinlock::events"),
        })
        .pin_chain(|s| {
            // Short, bounded sections only: nothing here may sleep or allocate.
            for _ in 0..3 {
                *s.events.lock() += 1;
            }
            pr_info!("counted {} events under a raw spinlock\n", *s.events.lock());
            Ok(())
        })
    }
}
