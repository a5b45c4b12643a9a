// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0308]
// MESSAGE: expected `&LocalInterruptDisabled`, found `&IrqsOff`
// CONTROL: s/\*this.count.lock_with(irq.irqs_off()) += 1;/*this.count.lock() += 1; let _ = irq.irqs_off();/
//! A `SpinLockIrq` is an rt_mutex on PREEMPT_RT: it must not be taken in
//! hard-IRQ context. The `HardIrq` token lends `IrqsOff`, which raw
//! spinlocks take, not the kernel's `LocalInterruptDisabled`, which
//! `SpinLockIrq::lock_with` would take.

use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow, SpinLockIrq},
    time::{hrtimer::{HrTimer, HrTimerCallbackContext, HrTimerRestart, RelativeHardMode}, Monotonic},
};

use rtrs::context::{HardIrq, HardTimerCallback};

#[pin_data]
struct T {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    count: SpinLockIrq<u64>,
}

impl HardTimerCallback for T {
    type Pointer<'a> = Arc<Self>;
    fn run(this: ArcBorrow<'_, Self>, _c: HrTimerCallbackContext<'_, Self>, irq: &HardIrq) -> HrTimerRestart {
        *this.count.lock_with(irq.irqs_off()) += 1;
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! { impl for T { mode: RelativeHardMode<Monotonic>, field: self.timer } }
