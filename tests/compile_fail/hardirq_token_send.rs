// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0277]
// MESSAGE: `*mut ()` cannot be shared between threads safely
// CONTROL: s/to_another_thread(irq);/to_another_thread(irq.cpu());/
//! The `HardIrq` token is only true on the CPU and in the interrupt that
//! lent it: it cannot be handed to another thread (`NotThreadSafe`).

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::context::{HardIrq, HardTimerCallback};

fn to_another_thread<P: Send>(_p: P) {}

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(_this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, irq: &HardIrq) -> HrTimerRestart {
        to_another_thread(irq);
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
