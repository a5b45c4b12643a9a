// SPDX-License-Identifier: GPL-2.0

//! Sample: a SCHED_FIFO kernel thread bound to CPU 0, woken on demand.
//!
//! The thread gets a `Sleepable` token from its context, which is what the
//! layer's sleeping locks ask for. Dropping the `RtThread` stops and joins it.

use kernel::{
    new_mutex,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        Mutex, //
    },
    time::{
        delay::fsleep,
        Delta, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

use rtrs::kthread::{
    RtThread,
    RtThreadFn,
    ThreadContext, //
};

module! {
    type: Sample,
    name: "rtrs_rt_thread",
    authors: ["The rtrs developers"],
    description: "rtrs sample: RtThread",
    license: "GPL",
}

#[pin_data]
struct Work {
    requests: Atomic<u64>,
    #[pin]
    done: Mutex<u64>,
}

impl RtThreadFn for Work {
    fn run(this: &Self, ctx: &ThreadContext<'_>) {
        let mut seen = 0;
        while ctx.wait_until(|| this.requests.load(Relaxed) != seen) {
            seen = this.requests.load(Relaxed);
            // Task context: sleeping locks are fine here.
            *this.done.lock() = seen;
        }
    }
}

struct Sample {
    _thread: RtThread<Work>,
}

impl kernel::Module for Sample {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let work = Arc::pin_init(
            pin_init!(Work {
                requests: Atomic::new(0),
                done <- new_mutex!(0),
            }),
            GFP_KERNEL,
        )?;
        let thread = RtThread::new_on_cpu(work.clone(), 0, 50, c"rtrs_sample/%u")?;
        work.requests.store(1, Relaxed);
        thread.wake();
        for _ in 0..1000 {
            if *work.done.lock() == 1 {
                break;
            }
            fsleep(Delta::from_millis(1));
        }
        pr_info!(
            "SCHED_FIFO thread on CPU {} handled request {}\n",
            thread.cpu(),
            *work.done.lock()
        );
        Ok(Sample { _thread: thread })
    }
}
