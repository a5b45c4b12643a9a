// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0133]
// MESSAGE: call to unsafe function `Sleepable::assume_sleepable` is unsafe
// CONTROL: s/let ctx = Sleepable::assume_sleepable();/let ctx = unsafe { Sleepable::assume_sleepable() };/
//! Forging a `Sleepable` token in a hard-IRQ callback needs `unsafe`.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::{context::{HardIrq, HardTimerCallback, Sleepable}, sync::TaskMutex};

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    m: TaskMutex<u32>,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, _irq: &HardIrq) -> HrTimerRestart {
        let ctx = Sleepable::assume_sleepable();
        *this.m.lock(ctx) += 1;
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
