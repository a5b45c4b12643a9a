// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0277]
// MESSAGE: the trait bound `RelativeMode<Monotonic>: HardMode` is not satisfied
// CONTROL: s/RelativeMode}/RelativeHardMode}/; s/mode: RelativeMode</mode: RelativeHardMode</
//! `hard_timer!` refuses a mode whose callback would run in the softirq
//! thread on PREEMPT_RT: the `HardIrq` token would be a lie.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeMode}, Monotonic},
};

use rtrs::context::{HardIrq, HardTimerCallback};

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(_this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, _irq: &HardIrq) -> HrTimerRestart {
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeMode<Monotonic>, field: self.timer } }
