// SPDX-License-Identifier: GPL-2.0

//! Where the readers of a device wait.

use kernel::{
    new_poll_condvar,
    prelude::*,
    sync::{
        poll::PollCondVar,
        Arc, //
    },
};

use crate::rtrs::{
    context::Sleepable,
    sync::TaskMutex, //
};

/// Where the readers of a device wait: one per device, not per session, so
/// that a task in `poll()`/`select()` (which stays queued until it returns)
/// never waits on a queue freed with a session, and an `epoll` waiter sees
/// the next session's records too. Every open file of the device keeps it.
#[pin_data]
pub(crate) struct Readers {
    /// Counts notifications: a reader waits for it to change.
    #[pin]
    generation: TaskMutex<u64>,
    #[pin]
    pub(super) readable: PollCondVar,
}

impl Readers {
    /// The readers' queue of a new device. Sleeps.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                generation <- crate::new_task_mutex!(0),
                readable <- new_poll_condvar!(),
            }),
            GFP_KERNEL,
        )
    }

    /// Wakes the readers and pollers. Task context: the wait queue's lock
    /// sleeps on PREEMPT_RT.
    pub(super) fn notify(&self, ctx: &Sleepable) {
        let mut g = self.generation.lock(ctx);
        *g += 1;
        self.readable.notify_all();
    }

    /// Waits until [`Self::notify`] was called after `seen` was read; true
    /// if interrupted by a signal.
    pub(super) fn wait(&self, ctx: &Sleepable, seen: u64) -> bool {
        let mut g = self.generation.lock(ctx);
        while *g == seen {
            if self.readable.wait_interruptible(&mut g) {
                return true;
            }
        }
        false
    }

    pub(super) fn generation(&self, ctx: &Sleepable) -> u64 {
        *self.generation.lock(ctx)
    }
}
