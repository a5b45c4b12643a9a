// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0521]
// MESSAGE: borrowed data escapes outside of
// CONTROL: s/keep_for_later(irq);/let _ = irq;/
//! The `HardIrq` token is lent for the callback's duration only: it cannot
//! be kept for later, when the interrupt is over.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::context::{HardIrq, HardTimerCallback};

fn keep_for_later(_irq: &'static HardIrq) {}

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(_this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, irq: &HardIrq) -> HrTimerRestart {
        keep_for_later(irq);
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
