// SPDX-License-Identifier: GPL-2.0

//! Sample: a SCHED_FIFO kernel thread bound to CPU 0, woken on demand.
//!
//! The thread gets a `Sleepable` token from its context, which is what the
//! layer's sleeping locks ([`TaskMutex`]) ask for; so does the module's
//! initialiser, through [`TaskModule`].
//! Dropping the `RtThread` stops and joins it.

use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc, //
    },
    time::{
        delay::fsleep,
        Delta, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

use rtrs::{
    context::Sleepable,
    kthread::{
        RtThread,
        RtThreadFn,
        ThreadContext, //
    },
    module::{
        TaskModule,
        TaskModuleAdapter, //
    },
    sync::TaskMutex,
};

type SampleModule = TaskModuleAdapter<Sample>;

module! {
    type: SampleModule,
    name: "rtrs_rt_thread",
    authors: ["The rtrs developers"],
    description: "rtrs sample: RtThread",
    license: "GPL",
}

#[pin_data]
struct Work {
    requests: Atomic<u64>,
    #[pin]
    done: TaskMutex<u64>,
}

impl RtThreadFn for Work {
    fn run(this: &Self, ctx: &ThreadContext<'_>) {
        let mut seen = 0;
        while ctx.wait_until(|| this.requests.load(Relaxed) != seen) {
            seen = this.requests.load(Relaxed);
            // Task context: sleeping locks are fine here, as the token says.
            *this.done.lock(ctx.sleepable()) = seen;
        }
    }
}

struct Sample {
    _thread: RtThread<Work>,
}

impl TaskModule for Sample {
    fn init(ctx: &Sleepable, _module: &'static ThisModule) -> Result<Self> {
        let work = Arc::pin_init(
            pin_init!(Work {
                requests: Atomic::new(0),
                done <- crate::new_task_mutex!(0),
            }),
            GFP_KERNEL,
        )?;
        let thread = RtThread::new_on_cpu(work.clone(), 0, 50, c"rtrs_sample/%u")?;
        work.requests.store(1, Relaxed);
        thread.wake();
        for _ in 0..1000 {
            if *work.done.lock(ctx) == 1 {
                break;
            }
            fsleep(Delta::from_millis(1));
        }
        pr_info!(
            "SCHED_FIFO thread on CPU {} handled request {}\n",
            thread.cpu(),
            *work.done.lock(ctx)
        );
        Ok(Sample { _thread: thread })
    }
}
