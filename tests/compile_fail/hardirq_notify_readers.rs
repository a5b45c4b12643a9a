// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0308]
// MESSAGE: expected `&Sleepable`, found `&HardIrq`
// CONTROL: s/this.out.notify_readers(irq);/let _ = (irq, \&this.out);/
//! Waking a session's readers takes the wait queue's lock, which sleeps on
//! PREEMPT_RT: `Output::notify_readers` wants a `Sleepable` token, and the
//! `HardIrq` token a hard-IRQ callback holds is not one.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::{context::{HardIrq, HardTimerCallback}, measure::Output};

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    out: Output,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, irq: &HardIrq) -> HrTimerRestart {
        this.out.notify_readers(irq);
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
