// SPDX-License-Identifier: GPL-2.0

//! Known latency causes, injected on command: the tests' proof that a
//! measurement (and its explanation) names what delayed an activation.
//!
//! Loaded with one cause and its duration, the module injects that cause on
//! one CPU once every `period_ms` until it is unloaded:
//!
//! - `irqoff_us`: a kernel thread (SCHED_OTHER) with interrupts disabled
//!   (`local_irq_save`). A timer that
//!   expires meanwhile interrupts late: the IRQ latency.
//! - `preemptoff_us`: the same thread with preemption disabled only. The
//!   timer interrupt comes in time; the thread it wakes waits: the thread
//!   latency, with the injecting thread as the blocking task.
//! - `fifo_us`: a SCHED_FIFO 99 kernel thread (above rtlat's default 95)
//!   spinning, preemptible: the thread latency again, by priority.
//! - `hardirq_us`: a hard-IRQ hrtimer whose handler spins: a timer that
//!   expires meanwhile is handled after it, the IRQ latency.
//! - `softirq_us`: a tasklet (`HI_SOFTIRQ`) that spins with preemption
//!   disabled, as a softirq handler's raw-spinlock section would: the
//!   thread latency, with the softirq as the cause. (On PREEMPT_RT a
//!   softirq is otherwise preemptible: a SCHED_FIFO thread would not wait.)
//!
//! `insmod rtrs_noise.ko cpu=1 irqoff_us=20000 period_ms=200`. Unloading
//! stops the injection (at most one period later: a second) and prints
//! each of the last [`WINDOWS`] injections' start and end (CLOCK_MONOTONIC
//! ns, as rtlat's records), then how many ran: a test matches them with the
//! activations they delayed. An activation expected within an injection
//! cannot come before its end in the stage the cause delays.

use kernel::{
    c_str,
    ffi::c_void,
    prelude::*,
    str::CStr,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        ArcBorrow, //
    },
    time::{
        delay::fsleep,
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
    preempt::{
        with_irqs_off,
        PreemptGuard, //
    },
    time::ktime_ns,
};

module! {
    type: Noise,
    name: "rtrs_noise",
    authors: ["The rtrs developers"],
    description: "rtrs test module: injects a known latency cause on one CPU",
    license: "GPL",
    params: {
        cpu: u32 {
            default: 1,
            description: "CPU the noise runs on",
        },
        period_ms: u32 {
            default: 100,
            description: "One injection every period_ms (10 to 1000)",
        },
        irqoff_us: u32 {
            default: 0,
            description: "Interrupts disabled this long, each period",
        },
        preemptoff_us: u32 {
            default: 0,
            description: "Preemption disabled this long, each period",
        },
        fifo_us: u32 {
            default: 0,
            description: "A SCHED_FIFO 99 kernel thread spins this long, each period",
        },
        hardirq_us: u32 {
            default: 0,
            description: "A hard-IRQ hrtimer handler spins this long, each period",
        },
        softirq_us: u32 {
            default: 0,
            description: "A tasklet spins this long with preemption off, each period",
        },
    },
}

/// Longest injection, µs: long enough to stand out of any VM's noise, short
/// of every watchdog (soft lockup, RCU stall: seconds).
const MAX_US: u32 = 500_000;

/// Injections whose times are kept (the last ones) and printed at unload.
const WINDOWS: usize = 64;

/// The cause injected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Interrupts disabled in a SCHED_OTHER thread.
    IrqOff,
    /// Preemption disabled in a SCHED_OTHER thread.
    PreemptOff,
    /// A SCHED_FIFO 99 thread spinning.
    Fifo,
    /// A hard-IRQ timer handler spinning.
    HardIrq,
    /// A tasklet spinning with preemption disabled.
    Softirq,
}

impl Kind {
    /// The parameter that names the kind, as the log says it.
    fn name(self) -> &'static str {
        match self {
            Self::IrqOff => "irqoff",
            Self::PreemptOff => "preemptoff",
            Self::Fifo => "fifo",
            Self::HardIrq => "hardirq",
            Self::Softirq => "softirq",
        }
    }

    /// The injecting thread's name (whole in a task's 15-character
    /// `comm`) and SCHED_FIFO priority (0: SCHED_OTHER).
    fn thread(self) -> (&'static CStr, u32) {
        match self {
            Self::IrqOff => (c_str!("noise_irqoff/%u"), 0),
            Self::PreemptOff => (c_str!("noise_preempt/%u"), 0),
            Self::Fifo => (c_str!("noise_fifo/%u"), 99),
            Self::HardIrq => (c_str!("noise_hardirq/%u"), 0),
            Self::Softirq => (c_str!("noise_softirq/%u"), 0),
        }
    }
}

/// Spins on the CPU until `ns` have passed; returns the start and the end.
fn spin(ns: i64) -> (i64, i64) {
    let start = ktime_ns();
    loop {
        let now = ktime_ns();
        if now >= start + ns {
            return (start, now);
        }
        core::hint::spin_loop();
    }
}

/// The injector of one cause on one CPU.
#[pin_data]
struct Injector {
    kind: Kind,
    /// Length of one injection.
    dur: Delta,
    /// Time between injections.
    period: Delta,
    /// The timer of [`Kind::HardIrq`].
    #[pin]
    timer: HrTimer<Self>,
    /// Injections done.
    count: Atomic<u64>,
    /// The last injections' start and end, ns, injection `i` at `i %
    /// WINDOWS` (written by the one injecting context, read at unload).
    starts: [Atomic<i64>; WINDOWS],
    ends: [Atomic<i64>; WINDOWS],
}

impl Injector {
    /// One injection done, from `start` to `end`.
    fn done(&self, (start, end): (i64, i64)) {
        let n = self.count.load(Relaxed);
        let i = (n % WINDOWS as u64) as usize;
        self.starts[i].store(start, Relaxed);
        self.ends[i].store(end, Relaxed);
        self.count.store(n + 1, Relaxed);
    }
}

impl HardTimerCallback for Injector {
    type Pointer<'a> = Arc<Self>;

    fn run(
        this: ArcBorrow<'_, Self>,
        mut ctx: HrTimerCallbackContext<'_, Self>,
        _irq: &HardIrq,
    ) -> HrTimerRestart {
        this.done(spin(this.dur.as_nanos()));
        // Not a whole number of milliseconds: against a measurement on a
        // grid of them, the injection starts at another phase each time
        // (the threads' sleeps drift by themselves).
        ctx.forward_now(this.period + Delta::from_micros(317));
        HrTimerRestart::Restart
    }
}

// The softirq injection's tasklet (`rtrs_noise_shim.c`).
extern "C" {
    fn rtrs_noise_softirq(f: unsafe extern "C" fn(*const c_void), data: *const c_void);
    fn rtrs_noise_softirq_kill();
}

/// The softirq injection, run by the tasklet: `data` is the [`Injector`].
///
/// # Safety
///
/// `data` points to an [`Injector`] valid until this returns.
unsafe extern "C" fn softirq_injection(data: *const c_void) {
    // SAFETY: `data` is the module's `Injector`, which `Noise` keeps until
    // its drop has stopped the thread (no tasklet is scheduled after) and
    // `rtrs_noise_softirq_kill` has waited for the last one to run.
    let this = unsafe { &*data.cast::<Injector>() };
    let _preempt_off = PreemptGuard::new();
    this.done(spin(this.dur.as_nanos()));
}

crate::hard_timer! {
    impl for Injector { mode: AbsolutePinnedHardMode<Monotonic>, field: self.timer }
}

impl RtThreadFn for Injector {
    fn run(this: &Self, ctx: &ThreadContext<'_>) {
        if this.kind == Kind::HardIrq {
            // SAFETY: `this` is the thread's data, which outlives the thread,
            // and the timer is cancelled below before the thread ends.
            unsafe { start_hard_timer(this, ktime_ns() + this.period.as_nanos()) };
            ctx.wait_until(|| false);
            cancel_hard_timer(this);
            return;
        }
        while !ctx.should_stop() {
            fsleep(this.period);
            if ctx.should_stop() {
                break;
            }
            let ns = this.dur.as_nanos();
            let window = match this.kind {
                Kind::IrqOff => with_irqs_off(|_| spin(ns)),
                Kind::PreemptOff => {
                    let _preempt_off = PreemptGuard::new();
                    spin(ns)
                }
                Kind::Softirq => {
                    // SAFETY: `this` lives until the tasklet has run its
                    // last (see `softirq_injection`), which records its
                    // window itself.
                    unsafe {
                        rtrs_noise_softirq(softirq_injection, core::ptr::from_ref(this).cast())
                    };
                    continue;
                }
                Kind::Fifo | Kind::HardIrq => spin(ns),
            };
            this.done(window);
        }
    }
}

struct Noise {
    thread: Option<RtThread<Injector>>,
    injector: Arc<Injector>,
    cpu: u32,
}

/// The one cause the parameters ask for, and its length in µs.
fn chosen() -> Result<(Kind, u32)> {
    // `value()` gives `&u32` before Linux 7.3 and `u32` since: deref
    // coercion takes either.
    let asked = [
        (
            Kind::IrqOff,
            u32::clone(&module_parameters::irqoff_us.value()),
        ),
        (
            Kind::PreemptOff,
            u32::clone(&module_parameters::preemptoff_us.value()),
        ),
        (Kind::Fifo, u32::clone(&module_parameters::fifo_us.value())),
        (
            Kind::HardIrq,
            u32::clone(&module_parameters::hardirq_us.value()),
        ),
        (
            Kind::Softirq,
            u32::clone(&module_parameters::softirq_us.value()),
        ),
    ];
    let mut set = asked.iter().filter(|(_, us)| *us != 0);
    let (Some(&(kind, us)), None) = (set.next(), set.next()) else {
        pr_err!("give exactly one of irqoff_us, preemptoff_us, fifo_us, hardirq_us, softirq_us\n");
        return Err(EINVAL);
    };
    if us > MAX_US {
        pr_err!("{}_us={us} is above {MAX_US}\n", kind.name());
        return Err(EINVAL);
    }
    Ok((kind, us))
}

impl kernel::Module for Noise {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let (kind, us) = chosen()?;
        let cpu = u32::clone(&module_parameters::cpu.value());
        let period_ms = u32::clone(&module_parameters::period_ms.value());
        // (At most a second: unloading waits for the thread's sleep.)
        if !(10..=1000).contains(&period_ms) {
            pr_err!("period_ms={period_ms} is outside 10..1000\n");
            return Err(EINVAL);
        }
        if u64::from(us) * 2 > u64::from(period_ms) * 1000 {
            pr_err!(
                "{}_us={us} is more than half of period_ms={period_ms}\n",
                kind.name()
            );
            return Err(EINVAL);
        }
        if cpu >= kernel::cpu::nr_cpu_ids() || !cpu_online(cpu) {
            pr_err!("cpu={cpu} is not online\n");
            return Err(EINVAL);
        }
        let dur = Delta::from_micros(i64::from(us));
        let period = Delta::from_millis(i64::from(period_ms));
        let injector = Arc::pin_init(
            try_pin_init!(Injector {
                kind,
                dur,
                period,
                timer <- HrTimer::new(),
                count: Atomic::new(0),
                starts: [const { Atomic::new(0) }; WINDOWS],
                ends: [const { Atomic::new(0) }; WINDOWS],
            }),
            GFP_KERNEL,
        )?;
        let (name, prio) = kind.thread();
        let thread = RtThread::new_on_cpu(injector.clone(), cpu, prio, name)?;
        pr_info!(
            "injecting {} for {us} us every {period_ms} ms on CPU {cpu}\n",
            kind.name()
        );
        Ok(Noise {
            thread: Some(thread),
            injector,
            cpu,
        })
    }
}

impl Drop for Noise {
    fn drop(&mut self) {
        // Stops the thread, which cancels the timer.
        self.thread = None;
        // SAFETY: called from process context; the thread that scheduled
        // the tasklet is gone, so it is not scheduled again, and the
        // injector it reaches is dropped only after this waited for it.
        unsafe { rtrs_noise_softirq_kill() };
        let inj = &self.injector;
        let n = inj.count.load(Relaxed);
        for k in n.saturating_sub(WINDOWS as u64)..n {
            let i = (k % WINDOWS as u64) as usize;
            pr_info!(
                "injection {} from {} to {}\n",
                k,
                inj.starts[i].load(Relaxed),
                inj.ends[i].load(Relaxed)
            );
        }
        pr_info!(
            "{} injections of {} on CPU {}, {} us each\n",
            n,
            self.injector.kind.name(),
            self.cpu,
            self.injector.dur.as_micros_ceil()
        );
    }
}
