// SPDX-License-Identifier: GPL-2.0

//! Sample: a hard-IRQ hrtimer feeding a lock-free ring, drained in task context.
//!
//! `hard_timer!` checks at compile time that the mode is a hard mode (the
//! callback then runs in hard IRQ, also on PREEMPT_RT) and hands the
//! callback a `HardIrq` token. The callback only uses atomics and the ring:
//! no lock that sleeps, no allocation.

use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        ArcBorrow, //
    },
    time::{
        delay::fsleep,
        hrtimer::{
            HrTimer,
            HrTimerCallbackContext,
            HrTimerPointer,
            HrTimerRestart,
            RelativeHardMode, //
        },
        Delta,
        Monotonic, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

use rtrs::{
    context::{
        HardIrq,
        HardTimerCallback, //
    },
    ring::{
        new_kring,
        KRing, //
    },
};

module! {
    type: Sample,
    name: "rtrs_hard_timer",
    authors: ["The rtrs developers"],
    description: "rtrs sample: hard-IRQ timer, HardIrq token and record ring",
    license: "GPL",
}

#[pin_data]
struct Ticker {
    #[pin]
    timer: HrTimer<Self>,
    ticks: Atomic<u64>,
    ring: KRing<u64>,
}

impl HardTimerCallback for Ticker {
    type Pointer<'a> = Arc<Self>;

    fn run(
        this: ArcBorrow<'_, Self>,
        mut ctx: HrTimerCallbackContext<'_, Self>,
        irq: &HardIrq,
    ) -> HrTimerRestart {
        let n = this.ticks.fetch_add(1, Relaxed) + 1;
        // SAFETY: This callback is the ring's only producer.
        unsafe { this.ring.push(u64::from(irq.cpu())) };
        if n == 10 {
            return HrTimerRestart::NoRestart;
        }
        ctx.forward_now(Delta::from_micros(500));
        HrTimerRestart::Restart
    }
}

crate::hard_timer! {
    impl for Ticker { mode: RelativeHardMode<Monotonic>, field: self.timer }
}

struct Sample;

impl kernel::Module for Sample {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let ticker = Arc::pin_init(
            try_pin_init!(Ticker {
                timer <- HrTimer::new(),
                ticks: Atomic::new(0),
                ring: new_kring(16)?,
            }),
            GFP_KERNEL,
        )?;
        let handle = ticker.clone().start(Delta::from_micros(500));
        for _ in 0..1000 {
            if ticker.ticks.load(Relaxed) >= 10 {
                break;
            }
            fsleep(Delta::from_millis(1));
        }
        drop(handle);
        let mut drained = 0;
        // SAFETY: The timer is cancelled; this is the only consumer.
        while unsafe { ticker.ring.pop() }.is_some() {
            drained += 1;
        }
        pr_info!(
            "{} hard-IRQ ticks, {} records drained\n",
            ticker.ticks.load(Relaxed),
            drained
        );
        Ok(Sample)
    }
}
