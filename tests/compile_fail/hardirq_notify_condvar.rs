// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0061]
// MESSAGE: this method takes 1 argument but 0 arguments were supplied
// CONTROL: s/this.cv.notify_all();/let _ = \&this.cv;/
//! A hard-IRQ timer callback may not wake a condition variable: on
//! PREEMPT_RT its wait queue's lock sleeps, and `TaskCondVar::notify_all`
//! needs a `Sleepable` token, which hard-IRQ callbacks do not get.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::{context::{HardIrq, HardTimerCallback}, sync::TaskCondVar};

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    cv: TaskCondVar,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, _irq: &HardIrq) -> HrTimerRestart {
        this.cv.notify_all();
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
