// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0061]
// MESSAGE: this method takes 1 argument but 0 arguments were supplied
// CONTROL: s/\*this.m.lock() += 1;/let _ = \&this.m;/
//! A hard-IRQ timer callback may not take a sleeping lock: `TaskMutex::lock`
//! needs a `Sleepable` token, which hard-IRQ callbacks do not get.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::{context::{HardIrq, HardTimerCallback}, sync::TaskMutex};

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
        *this.m.lock() += 1;
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
