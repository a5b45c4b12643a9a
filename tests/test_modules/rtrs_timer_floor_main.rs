// SPDX-License-Identifier: GPL-2.0

//! The benchmark's floor: on every online CPU a pinned hard-IRQ hrtimer that
//! fires every `period_us` and does nothing but forward itself.
//!
//! Any tool that samples timer latency takes at least this interrupt per
//! activation, so what a CPU-bound job loses while it runs is the part of a
//! tool's overhead no tool can avoid; `scripts/bench-guest` measures it beside
//! rtlat and timerlat. Unloading prints the activations and the time they
//! took, for the benchmark to turn into a rate.

use kernel::{
    c_str,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        ArcBorrow, //
    },
    time::{
        hrtimer::{
            AbsolutePinnedHardMode,
            HrTimer,
            HrTimerCallbackContext,
            HrTimerRestart, //
        },
        Delta,
        Monotonic, //
    },
};

#[path = "../../rust/rtrs.rs"]
mod rtrs;

use rtrs::{
    context::{
        cancel_hard_timer,
        start_hard_timer,
        HardIrq,
        HardTimerCallback, //
    },
    cpu::cpu_online,
    kthread::{
        RtThread,
        RtThreadFn,
        ThreadContext, //
    },
    time::ktime_ns,
};

module! {
    type: Floor,
    name: "rtrs_timer_floor",
    authors: ["The rtrs developers"],
    description: "rtrs benchmark floor: a do-nothing hard-IRQ timer on every CPU",
    license: "GPL",
    params: {
        period_us: u32 {
            default: 100,
            description: "Timer period in microseconds (50 to 1000000)",
        },
    },
}

/// One CPU's timer.
#[pin_data]
struct Tick {
    #[pin]
    timer: HrTimer<Self>,
    period: Delta,
    fired: Atomic<u64>,
}

impl HardTimerCallback for Tick {
    type Pointer<'a> = Arc<Self>;

    fn run(
        this: ArcBorrow<'_, Self>,
        mut ctx: HrTimerCallbackContext<'_, Self>,
        _irq: &HardIrq,
    ) -> HrTimerRestart {
        this.fired.fetch_add(1, Relaxed);
        ctx.forward_now(this.period);
        HrTimerRestart::Restart
    }
}

crate::hard_timer! {
    impl for Tick { mode: AbsolutePinnedHardMode<Monotonic>, field: self.timer }
}

impl RtThreadFn for Tick {
    /// Arms the timer from its CPU (it is pinned there), waits to be
    /// stopped, and cancels it.
    fn run(this: &Self, ctx: &ThreadContext<'_>) {
        // SAFETY: `this` is the thread's data, which outlives the thread, and
        // the timer is cancelled below before the thread ends.
        unsafe { start_hard_timer(this, ktime_ns() + this.period.as_nanos()) };
        ctx.wait_until(|| false);
        cancel_hard_timer(this);
    }
}

struct Floor {
    ticks: KVec<Arc<Tick>>,
    threads: KVec<RtThread<Tick>>,
    started: i64,
    period_us: u32,
}

impl kernel::Module for Floor {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // `value()` gives `&u32` before Linux 7.3 and `u32` since: deref
        // coercion takes either.
        let us = u32::clone(&module_parameters::period_us.value());
        if !(50..=1_000_000).contains(&us) {
            pr_err!("period_us={us} is outside 50..1000000\n");
            return Err(EINVAL);
        }
        let mut floor = Floor {
            ticks: KVec::new(),
            threads: KVec::new(),
            started: ktime_ns(),
            period_us: us,
        };
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if !cpu_online(cpu) {
                continue;
            }
            let tick = Arc::pin_init(
                try_pin_init!(Tick {
                    timer <- HrTimer::new(),
                    period: Delta::from_micros(i64::from(us)),
                    fired: Atomic::new(0),
                }),
                GFP_KERNEL,
            )?;
            floor.ticks.push(tick.clone(), GFP_KERNEL)?;
            let t = RtThread::new_on_cpu(tick, cpu, 0, c_str!("rtrs_floor/%u"))?;
            floor.threads.push(t, GFP_KERNEL)?;
        }
        Ok(floor)
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        // Stopping the threads cancels the timers.
        self.threads.clear();
        let fired: u64 = self.ticks.iter().map(|t| t.fired.load(Relaxed)).sum();
        pr_info!(
            "activations {} ns {} cpus {} period_ns {}\n",
            fired,
            ktime_ns() - self.started,
            self.ticks.len(),
            u64::from(self.period_us) * 1000
        );
    }
}
