// SPDX-License-Identifier: GPL-2.0

//! A deliberately broken module: takes a sleeping lock in hard-IRQ context.
//!
//! On PREEMPT_RT a [`SpinLock`] is an rt_mutex and may sleep, so taking it in
//! the callback of a hard-mode hrtimer (which runs in hard-IRQ context even on
//! RT) is a bug. Lockdep reports it as `BUG: Invalid wait context`. The test
//! runner loads this module only to prove that its splat detector fails a run
//! that produces such a report: it is never part of a normal test run.

use kernel::{
    impl_has_hr_timer, new_spinlock,
    prelude::*,
    sync::{
        completion::Completion,
        Arc,
        ArcBorrow,
        SpinLock, //
    },
    time::{
        hrtimer::{
            HrTimer,
            HrTimerCallback,
            HrTimerCallbackContext,
            HrTimerPointer,
            HrTimerRestart,
            RelativeHardMode, //
        },
        Delta,
        Monotonic, //
    },
};

module! {
    type: RtrsSplat,
    name: "rtrs_splat",
    authors: ["The rtrs developers"],
    description: "Test only: sleeps in hard-IRQ context to trigger a lockdep report",
    license: "GPL",
}

#[pin_data]
struct Bad {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    count: SpinLock<u64>,
    #[pin]
    done: Completion,
}

impl HrTimerCallback for Bad {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // The bug: a sleeping lock in hard-IRQ context.
        *this.count.lock() += 1;
        this.done.complete_all();
        HrTimerRestart::NoRestart
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Bad {
        mode: RelativeHardMode<Monotonic>, field: self.timer
    }
}

struct RtrsSplat;

impl kernel::Module for RtrsSplat {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let bad = Arc::pin_init(
            pin_init!(Bad {
                timer <- HrTimer::new(),
                count <- new_spinlock!(0),
                done <- Completion::new(),
            }),
            GFP_KERNEL,
        )?;
        let handle = bad.clone().start(Delta::from_micros(100));
        bad.done.wait_for_completion();
        drop(handle);
        pr_info!(
            "took a sleeping lock in hard-IRQ context {} time(s)\n",
            *bad.count.lock()
        );
        Ok(RtrsSplat)
    }
}
