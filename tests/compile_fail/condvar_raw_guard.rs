// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0277]
// MESSAGE: the trait bound `RawSpinLockBackend: SleepingBackend` is not satisfied
// CONTROL: s/raw: RawSpinLock<u32>,/raw: TaskMutex<u32>,/; s/raw <- crate::new_raw_spinlock!(0),/raw <- crate::new_task_mutex!(0),/; s/let mut g = self.raw.lock();/let mut g = self.raw.lock(ctx);/
//! A `TaskCondVar` waits with a sleeping lock's guard only: with a raw
//! spinlock held, taking the wait queue's lock (which sleeps on
//! PREEMPT_RT) would be a sleep in an atomic section.

use kernel::prelude::*;

use rtrs::{
    context::Sleepable,
    raw_spinlock::RawSpinLock,
    sync::{TaskCondVar, TaskMutex},
};

#[pin_data]
struct W {
    #[pin]
    raw: RawSpinLock<u32>,
    #[pin]
    cv: TaskCondVar,
}

impl W {
    fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            raw <- crate::new_raw_spinlock!(0),
            cv <- crate::new_task_condvar!(),
        })
    }

    fn wait(&self, ctx: &Sleepable) {
        let mut g = self.raw.lock();
        while *g == 0 {
            self.cv.wait(ctx, &mut g);
        }
        let _: Option<&TaskMutex<u32>> = None;
    }
}
