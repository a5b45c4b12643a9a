// SPDX-License-Identifier: GPL-2.0

//! A measurement session: per-CPU hard-IRQ timers, RT kernel threads, user
//! waiters, rings and statistics.
//!
//! # One activation on one CPU
//!
//! 1. The CPU's kernel thread arms its timer at the next expected expiry,
//!    in absolute, pinned, hard mode on CLOCK_MONOTONIC. Periods that already
//!    passed are skipped and **counted** (`missed`).
//! 2. Hard IRQ ([`CpuState::run`]): notes `now - expected` (irq stage) and
//!    whether the CPU was idle. If the session measures the user stage, a
//!    user waiter is blocked in `USER_WAIT` on this CPU and the activation
//!    it was last claimed for has been taken, it claims and wakes that
//!    waiter itself (step 4: one wake-up, as a timer's own sleeper gets) and
//!    forwards the timer to the next period; otherwise it wakes the kernel
//!    thread (step 3). Nothing else: no lock but atomics, no allocation, no
//!    print.
//! 3. Kernel thread, SCHED_FIFO: notes `now - expected` (thread stage),
//!    checks the thresholds of both stages and completes the record. In a
//!    user-stage session this is an activation that found no waiter (it is
//!    late, or gone): flagged `REC_NO_WAITER`, and STATUS shows the CPU as
//!    unattended; an activation the waiter was claimed for but has not taken
//!    since (it has not run, or moved off the CPU) is completed first, the
//!    same way, with its thread stage taken now. It arms the next period.
//! 4. User waiter (`RTLAT_IOC_USER_WAIT`, a thread pinned to the CPU),
//!    claimed by the hard IRQ: notes `now - expected` as soon as it runs in
//!    the kernel (thread stage: the first thing after the wake-up), takes
//!    the activation ([`CpuState::take_direct`]), checks both thresholds and
//!    notes `now - expected` again just before returning (user stage); the
//!    record is flagged `REC_DIRECT`. When it comes back, `now - expected`
//!    of the previous activation is its response time (checked against the
//!    deadline); that completes the previous record. A record still waiting
//!    for its response when the next activation finds no waiter is completed
//!    without one (`REC_NO_RESPONSE`), so records stay in order.
//!
//! Exactly one of the kernel thread and the waiter handles an activation
//! (the hard IRQ's claim, then one compare-exchange under `user_lock`,
//! decide), and the next period is armed once: by the hard IRQ when it hands
//! the activation to the waiter, by the kernel thread otherwise. Sampling
//! never waits for the waiter.
//!
//! Completed records go to the CPU's ring (for `read()`) and its statistics;
//! both happen in task context, serialised per CPU by `produce`. A reader
//! that lags loses records, counted: `produced == delivered + dropped +
//! queued`.
//!
//! # Irq-only sessions
//!
//! Without the thread stage (`stages` = irq), step 2 does all the work and
//! there is no step 3 per activation: the hard IRQ completes the record
//! itself ([`Output::record`]: raw locks, atomics and the lock-free ring
//! only) and forwards its timer to the next period. The kernel thread only
//! arms the first activation and wakes the readers when a batch is ready
//! or a threshold tripped, about a hundred times a second instead of once
//! per activation: the measurement costs one timer interrupt per period
//! and no context switch, for long-running monitoring of interrupt
//! latency.

use kernel::{
    bindings, c_str, impl_has_work, new_condvar, new_work,
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        Arc,
        ArcBorrow,
        CondVar, //
    },
    task::Task,
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
    workqueue::{
        Work,
        WorkItem, //
    },
};

use crate::blame::Blame;
use crate::rtrs::{
    barrier::smp_mb,
    blame::{
        Tally,
        STACK_DEPTH, //
    },
    context::{
        cancel_hard_timer,
        start_hard_timer,
        CpuPinned,
        HardIrq,
        HardTimerCallback,
        IrqsOff,
        Producer,
        Sleepable, //
    },
    cpu::{
        cpu_active,
        cpu_online, //
    },
    cpuhp::HotplugReadGuard,
    direct_wait::{
        DirectWait,
        Waited, //
    },
    kthread::{
        RtThread,
        RtThreadFn,
        ThreadContext, //
    },
    measure::{
        self,
        Channel,
        Output,
        Readers,
        Source, //
    },
    module::ModuleRef,
    preempt::MigrateGuard,
    sync::{
        Completion,
        TaskMutex, //
    },
    task::{
        current_is_idle,
        current_pinned_cpu, //
    },
    time::ktime_ns,
    uapi::{
        self,
        Config,
        Record,
        Stage,
        State,
        StopReason, //
    },
    workqueue::ModuleQueue,
};

/// Per-CPU state of a session.
#[pin_data(PinnedDrop)]
pub(crate) struct CpuState {
    #[pin]
    timer: HrTimer<Self>,
    pub(crate) cpu: u32,
    /// Index of this CPU's channel in the session's output.
    chan: usize,
    period: i64,
    user_stage: bool,
    /// No thread stage: the hard IRQ completes records (see the module doc).
    irq_only: bool,
    /// The session's output, for the hard IRQ of an irq-only session.
    ///
    /// # Invariants
    ///
    /// Null, or the pinned [`Output`] of the session that owns
    /// this state, set by [`Session::start`] before any timer is armed.
    /// The session outlives every run of the timer: the timer is armed only
    /// by its kernel threads, which hold a reference to the session, or
    /// forwarded by its own callback, and [`Session::stop`] cancels it
    /// before letting them go.
    out: Atomic<*const Output>,
    /// Bumped by the hard IRQ of an irq-only session when the kernel thread
    /// has something to do (wake the readers, or halt after a trip).
    kicks: Atomic<u64>,
    /// Expected expiry of the armed activation (ns).
    expected: Atomic<i64>,
    /// Periods skipped when it was armed.
    pending_missed: Atomic<u32>,
    /// Sequence number of the armed activation.
    seq: Atomic<u64>,
    /// Bumped by the hard IRQ: the activation `irq_seq` fired.
    irq_seq: Atomic<u64>,
    irq_lat: Atomic<i64>,
    irq_idle: Atomic<bool>,
    /// The kernel thread's task, for the hard IRQ to wake; `task_ref` keeps
    /// it alive while this state lives.
    task: Atomic<*mut bindings::task_struct>,
    #[pin]
    task_ref: TaskMutex<Option<ARef<Task>>>,
    /// The user waiter blocked in `USER_WAIT`, claimed by the hard IRQ.
    waiter: DirectWait,
    /// Sequence number of the activation the hard IRQ claimed the waiter
    /// for, until the waiter takes it (or, if it has not run by the next
    /// activation, the kernel thread); 0: none.
    direct: Atomic<u64>,
    /// That activation as its hard IRQ saw it.
    claimed: Fired,
    /// The user waiter: one at a time; `finish` waits until it has left.
    user_busy: Atomic<bool>,
    #[pin]
    user_lock: TaskMutex<UserSide>,
    #[pin]
    user_cv: CondVar,
    /// Held by whoever completes a record of this CPU in task context (its
    /// kernel thread, its user waiter, `finish`): the ring has one producer.
    #[pin]
    produce: TaskMutex<()>,
    /// Stop sampling (set by stop, by a threshold trip, and when the CPU
    /// goes offline).
    stopping: Atomic<bool>,
    /// This CPU's explained activations, in a blame session.
    #[pin]
    tally: TaskMutex<Tally>,
    /// A blame session: the hard IRQ keeps the stack it interrupted.
    blame: bool,
    /// That stack, innermost first (`irq_stack_n` entries), of activation
    /// `irq_stack_seq`: written by the hard IRQ before it hands the
    /// activation on, read on this CPU with interrupts off by whoever
    /// explains it (so no interrupt of this CPU writes it meanwhile). A
    /// later activation's interrupt replaces it: the earlier one is then
    /// explained without a stack, never with another's.
    irq_stack: [Atomic<u64>; STACK_DEPTH],
    irq_stack_n: Atomic<u32>,
    irq_stack_seq: Atomic<u64>,
}

/// An activation as its hard IRQ saw it.
struct Fired {
    expected: Atomic<i64>,
    irq_lat: Atomic<i64>,
    idle: Atomic<bool>,
    missed: Atomic<u32>,
}

/// How a user waiter's activation ended, for its response time.
#[derive(Clone, Copy)]
enum Response {
    /// The waiter came back for the next activation this many ns after
    /// the expected expiry: its response time.
    Back(i64),
    /// The waiter was still away this many ns after the expected expiry,
    /// when the next activation found no waiter or the session stopped:
    /// the response is later than that.
    Away(i64),
}

/// The user waiter's side, shared with the kernel thread under `user_lock`.
struct UserSide {
    /// The record returned to the waiter, waiting for its response time.
    pending: Option<Record>,
}

#[pinned_drop]
impl PinnedDrop for CpuState {
    fn drop(self: Pin<&mut Self>) {
        // The timer holds no reference: make sure it is not armed before the
        // memory goes (and before `task_ref` releases the task).
        cancel_hard_timer(&*self);
    }
}

impl HardTimerCallback for CpuState {
    type Pointer<'a> = Arc<Self>;

    fn run(
        this: ArcBorrow<'_, Self>,
        ctx: HrTimerCallbackContext<'_, Self>,
        irq: &HardIrq,
    ) -> HrTimerRestart {
        let now = ktime_ns();
        if this.irq_only {
            return this.irq_only_activation(irq, now, ctx);
        }
        let expected = this.expected.load(Relaxed);
        let seq = this.seq.load(Relaxed);
        if this.blame {
            this.keep_interrupted_stack(irq, seq);
        }
        let idle = current_is_idle();
        // A waiter is blocked, and the activation it was last claimed for
        // was taken: this one is the waiter's, and the timer goes on by
        // itself, so that sampling does not wait for the waiter to run.
        if this.user_stage && this.direct.load(Relaxed) == 0 && this.waiter.is_waiting() {
            this.claimed.expected.store(expected, Relaxed);
            this.claimed.irq_lat.store(now - expected, Relaxed);
            this.claimed.idle.store(idle, Relaxed);
            this.claimed
                .missed
                .store(this.pending_missed.load(Relaxed), Relaxed);
            if let Some(claimed) = this.waiter.claim(irq) {
                // Only this hard IRQ sets `direct`, and only while it is 0;
                // the release orders the snapshot above for the taker.
                this.direct.store(seq, Release);
                claimed.wake();
                if this.stopping.load(Relaxed) {
                    return HrTimerRestart::NoRestart;
                }
                return this.forward(ctx, expected);
            }
        }
        this.irq_lat.store(now - expected, Relaxed);
        this.irq_idle.store(idle, Relaxed);
        this.irq_seq.store(seq, Release);
        this.wake_thread();
        HrTimerRestart::NoRestart
    }
}

crate::hard_timer! {
    impl for CpuState { mode: AbsolutePinnedHardMode<Monotonic>, field: self.timer }
}

impl CpuState {
    fn new(cpu: u32, chan: usize, config: &Config) -> Result<Arc<Self>> {
        let s = Arc::pin_init(
            try_pin_init!(Self {
                timer <- HrTimer::new(),
                cpu,
                chan,
                period: config.period_ns as i64,
                user_stage: config.user_stage(),
                irq_only: !config.thread_stage(),
                out: Atomic::new(core::ptr::null()),
                kicks: Atomic::new(0),
                expected: Atomic::new(0),
                pending_missed: Atomic::new(0),
                seq: Atomic::new(0),
                irq_seq: Atomic::new(0),
                irq_lat: Atomic::new(0),
                irq_idle: Atomic::new(false),
                task: Atomic::new(core::ptr::null_mut()),
                task_ref <- crate::new_task_mutex!(None),
                waiter: DirectWait::new(),
                direct: Atomic::new(0),
                claimed: Fired {
                    expected: Atomic::new(0),
                    irq_lat: Atomic::new(0),
                    idle: Atomic::new(false),
                    missed: Atomic::new(0),
                },
                user_busy: Atomic::new(false),
                user_lock <- crate::new_task_mutex!(UserSide { pending: None }),
                user_cv <- new_condvar!(),
                produce <- crate::new_task_mutex!(()),
                stopping: Atomic::new(false),
                tally <- crate::new_task_mutex!(crate::blame::new_tally()),
                blame: config.flags & uapi::CFG_BLAME != 0,
                irq_stack: [const { Atomic::new(0) }; STACK_DEPTH],
                irq_stack_n: Atomic::new(0),
                irq_stack_seq: Atomic::new(0),
            }),
            GFP_KERNEL,
        )?;
        Ok(s)
    }

    /// Arms the next activation; runs on this CPU (its kernel thread, bound
    /// there: the timer is pinned), after the kernel thread handled the
    /// previous one (the hard IRQ forwards the timer itself when it hands
    /// one to the user waiter).
    fn arm_next(&self) {
        let now = ktime_ns();
        let mut next = self.expected.load(Relaxed);
        next = if next == 0 {
            now + self.period
        } else {
            next + self.period
        };
        let mut missed = 0u32;
        if next <= now {
            let k = (now - next) / self.period + 1;
            next += k * self.period;
            missed = k as u32;
        }
        self.expected.store(next, Relaxed);
        self.pending_missed.store(missed, Relaxed);
        self.seq.fetch_add(1, Relaxed);
        // SAFETY: `self` is alive and pinned; its drop cancels the timer.
        unsafe { start_hard_timer(self, next) };
        // `stop` sets `stopping` and then cancels: either it cancels this
        // timer, or we see the flag here and cancel it ourselves.
        smp_mb();
        if self.stopping.load(Relaxed) {
            cancel_hard_timer(self);
        }
    }

    /// One activation of an irq-only session, in the timer's hard IRQ: the
    /// record is completed here and the timer forwarded to the next period
    /// (periods already past are skipped and counted, as by `arm_next`).
    fn irq_only_activation(
        &self,
        irq: &HardIrq,
        now: i64,
        ctx: HrTimerCallbackContext<'_, Self>,
    ) -> HrTimerRestart {
        let expected = self.expected.load(Relaxed);
        let mut rec = self.record_of(self.seq.load(Relaxed), now - expected, current_is_idle());
        rec.flags |= uapi::REC_NO_THREAD | uapi::REC_NO_USER | uapi::REC_NO_RESPONSE;
        let out = self.out.load(Acquire);
        if out.is_null() {
            return HrTimerRestart::NoRestart;
        }
        // SAFETY: By the type invariant of `out`, the session's output
        // outlives this run of the timer.
        let out = unsafe { &*out };
        // SAFETY: In an irq-only session this CPU's records are produced only
        // here, by one pinned timer, one activation at a time.
        let r = unsafe { out.record(Producer::HardIrq(irq), &out.chans[self.chan], rec) };
        if r.wake || r.tripped {
            self.kicks.fetch_add(1, Release);
            self.wake_thread();
        }
        if r.tripped || self.stopping.load(Relaxed) {
            return HrTimerRestart::NoRestart;
        }
        self.forward(ctx, expected)
    }

    /// In the hard IRQ of the activation expected at `expected`: arms the
    /// next one by forwarding the timer by whole periods to the first one
    /// still ahead (periods already past are skipped and counted, as by
    /// `arm_next`).
    fn forward(&self, mut ctx: HrTimerCallbackContext<'_, Self>, expected: i64) -> HrTimerRestart {
        let n = ctx.forward_now(Delta::from_nanos(self.period)).max(1);
        self.expected
            .store(expected + n as i64 * self.period, Relaxed);
        self.pending_missed.store((n - 1) as u32, Relaxed);
        self.seq.fetch_add(1, Relaxed);
        HrTimerRestart::Restart
    }

    /// Takes the activation the hard IRQ claimed the waiter for, if it is
    /// still there: its record with the irq stage, `direct` cleared. The
    /// waiter and the kernel thread race for it; the caller holds
    /// `user_lock`, so that the winner's pending record is seen by the other.
    /// `direct` goes from 0 to a sequence number only in the hard IRQ, after
    /// it wrote the snapshot, and back to 0 only here: a taker that read the
    /// snapshot under a nonzero `direct` and clears that same value read
    /// that activation's.
    fn take_direct(&self) -> Option<Record> {
        let seq = self.direct.load(Acquire);
        if seq == 0 {
            return None;
        }
        // Read before the exchange confirms it: the hard IRQ writes these
        // only while `direct` is 0.
        let c = &self.claimed;
        let rec = self.new_record(
            seq,
            c.expected.load(Relaxed),
            c.missed.load(Relaxed),
            c.irq_lat.load(Relaxed),
            c.idle.load(Relaxed),
        );
        // (Relaxed: every taker that can race the hard IRQ runs on its CPU,
        // the waiter with migration off and the bound thread; finish() takes
        // what is left once the timer is cancelled.)
        self.direct.cmpxchg(seq, 0, Relaxed).ok()?;
        Some(rec)
    }

    /// Keeps the stack this hard IRQ of activation `seq` interrupted, for
    /// the explanation.
    fn keep_interrupted_stack(&self, irq: &HardIrq, seq: u64) {
        let mut st = [0u64; STACK_DEPTH];
        let n = irq.interrupted_stack(&mut st);
        for (slot, &pc) in self.irq_stack.iter().zip(st[..n].iter()) {
            slot.store(pc, Relaxed);
        }
        self.irq_stack_n.store(n as u32, Relaxed);
        self.irq_stack_seq.store(seq, Relaxed);
    }

    /// The stack activation `seq`'s hard IRQ interrupted, if no later one
    /// replaced it (else none). Interrupts are off on this CPU (`_irqs`,
    /// the caller's: it runs here), so the stack is one interrupt's whole.
    fn interrupted_stack(&self, _irqs: &IrqsOff, seq: u64) -> ([u64; STACK_DEPTH], usize) {
        let mut st = [0u64; STACK_DEPTH];
        if self.irq_stack_seq.load(Relaxed) != seq {
            return (st, 0);
        }
        let n = (self.irq_stack_n.load(Relaxed) as usize).min(STACK_DEPTH);
        for (pc, slot) in st[..n].iter_mut().zip(self.irq_stack.iter()) {
            *pc = slot.load(Relaxed);
        }
        (st, n)
    }

    /// Wakes this CPU's kernel thread, if it has started; any context,
    /// including the timer's hard IRQ.
    fn wake_thread(&self) {
        let task = self.task.load(Acquire);
        if !task.is_null() {
            // SAFETY: `task_ref` holds a reference to the task for as long as
            // `self` lives, and the timer is cancelled before `self` is freed.
            unsafe { bindings::wake_up_process(task) };
        }
    }

    /// Stops sampling on this CPU: no timer is armed again (`arm_next`
    /// re-checks the flag after a full barrier), and its thread and user
    /// waiter are woken to see it.
    fn halt(&self) {
        self.stopping.store(true, Relaxed);
        smp_mb();
        self.wake_thread();
        self.waiter.kick();
    }

    /// A record with the irq stage of the activation that just fired.
    fn fired_record(&self, seq: u64) -> Record {
        self.record_of(seq, self.irq_lat.load(Relaxed), self.irq_idle.load(Relaxed))
    }

    /// The record of the armed activation `seq`, with its irq stage.
    fn record_of(&self, seq: u64, irq_lat: i64, idle: bool) -> Record {
        self.new_record(
            seq,
            self.expected.load(Relaxed),
            self.pending_missed.load(Relaxed),
            irq_lat,
            idle,
        )
    }

    /// A record of this CPU with its irq stage.
    fn new_record(&self, seq: u64, expected: i64, missed: u32, irq_lat: i64, idle: bool) -> Record {
        let mut rec = Record {
            cpu: self.cpu,
            seq,
            expected_ns: expected as u64,
            lat_ns: [-1; uapi::NR_STAGES],
            missed,
            flags: 0,
        };
        rec.lat_ns[Stage::Irq] = irq_lat;
        if idle {
            rec.flags |= uapi::REC_IDLE;
        }
        rec
    }
}

/// A configured session, owned by the file that configured it.
#[pin_data]
pub(crate) struct Session {
    #[pin]
    out: Output,
    pub(crate) cpus: KVec<Arc<CpuState>>,
    /// Late activations explained, if the config asks for it.
    blame: Option<Pin<KBox<Blame>>>,
    /// Serialises START and `stop` (the owner's, and a close racing with
    /// it); `finish` takes it too, so that it joins every thread a START
    /// started. Never held while waiting for a kernel thread.
    #[pin]
    stop_lock: TaskMutex<()>,
    #[pin]
    threads: TaskMutex<KVec<RtThread<Worker>>>,
    /// The device's queue, where `finish` runs.
    queue: &'static ModuleQueue,
    /// Set by the first `stop`, which queues `finish`.
    retiring: Atomic<bool>,
    /// The module, held from that `stop` until `finish` has run: the last
    /// file may be closed before, and `rmmod` must then be refused, not
    /// wait in the module's exit for a thread on a monopolised CPU.
    #[pin]
    retire_ref: TaskMutex<Option<ModuleRef>>,
    #[pin]
    finish_work: Work<Session>,
    /// Completed when `finish` has run.
    #[pin]
    stopped: Completion,
}

impl_has_work! {
    impl HasWork<Self> for Session { self.finish_work }
}

impl WorkItem for Session {
    type Pointer = Arc<Session>;

    fn run(this: Arc<Session>) {
        // SAFETY: A work item runs in a worker thread: task context.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        this.finish(ctx);
        let held = this.retire_ref.lock(ctx).take();
        // The session's last reference may be this one: it is freed while
        // the module is held. What runs after `held` is dropped is the end
        // of this work item, which the module's exit waits for (it drains
        // the queue).
        drop(this);
        drop(held);
    }
}

/// Data of one CPU's kernel thread.
pub(crate) struct Worker {
    session: Arc<Session>,
    cpu: Arc<CpuState>,
}

impl RtThreadFn for Worker {
    fn run(this: &Self, ctx: &ThreadContext<'_>) {
        let cpu = &this.cpu;
        // A counted reference, dropped with the CPU state after its timer is
        // cancelled, so the hard IRQ never wakes a freed task.
        let task: ARef<Task> = ARef::from(&**kernel::current!());
        cpu.task.store(Task::current_raw(), Release);
        let sleepable = ctx.sleepable();
        *cpu.task_ref.lock(sleepable) = Some(task);
        if cpu.irq_only {
            Self::irq_only(this, ctx);
            return;
        }
        cpu.arm_next();
        let mut handled = 0u64;
        loop {
            ctx.wait_until(|| cpu.irq_seq.load(Acquire) != handled || cpu.stopping.load(Relaxed));
            let seq = cpu.irq_seq.load(Acquire);
            if seq == handled {
                // Told to stop, and nothing fired meanwhile. (An activation
                // that fired is recorded first, whatever stopped the
                // session: none goes uncounted.)
                break;
            }
            // The time after the activation is seen to have fired: woken to
            // stop, the thread may run before a late interrupt of the timer
            // it had armed, and a time read before would put its thread
            // stage before its irq stage.
            let now = ktime_ns();
            handled = seq;
            let mut rec = cpu.fired_record(handled);
            rec.lat_ns[Stage::Thread] = now - cpu.expected.load(Relaxed);
            if let Some(b) = &this.session.blame {
                b.note(sleepable, &cpu.tally, &rec, |irqs, seq| {
                    cpu.interrupted_stack(irqs, seq)
                });
            }
            if cpu.user_stage {
                this.session.thread_done(sleepable, cpu, rec);
            } else {
                rec.flags |= uapi::REC_NO_USER | uapi::REC_NO_RESPONSE;
                let _p = cpu.produce.lock(sleepable);
                this.session.complete(sleepable, cpu, rec);
            }
            if !cpu.stopping.load(Relaxed) {
                cpu.arm_next();
            }
        }
    }
}

impl Worker {
    /// The kernel thread of an irq-only session: arms the first activation,
    /// then only wakes the readers when the hard IRQ asks, and halts the
    /// session after a threshold trip.
    fn irq_only(this: &Self, ctx: &ThreadContext<'_>) {
        let cpu = &this.cpu;
        let out = this.session.output();
        let sleepable = ctx.sleepable();
        cpu.arm_next();
        let mut seen = 0u64;
        loop {
            let kicked =
                ctx.wait_until(|| cpu.kicks.load(Acquire) != seen || cpu.stopping.load(Relaxed));
            if !kicked || cpu.stopping.load(Relaxed) {
                break;
            }
            seen = cpu.kicks.load(Acquire);
            if out.state() == State::Stopped {
                // A threshold tripped in the hard IRQ: stop every CPU.
                this.session.halt(sleepable, StopReason::Threshold);
                break;
            }
            out.notify_readers(sleepable);
        }
    }
}

impl Source for Session {
    /// Where sessions finish stopping.
    type Device = &'static ModuleQueue;

    const USER_WAIT: bool = true;

    /// Allocates what the session needs but its threads and its blame
    /// timelines and probes (START); nothing is allocated after START.
    fn configure(
        ctx: &Sleepable,
        queue: &&'static ModuleQueue,
        config: Config,
        set: &[u64],
        readers: Arc<Readers>,
    ) -> Result<Arc<Self>> {
        let nr = kernel::cpu::nr_cpu_ids();
        let mut ids = KVec::with_capacity(nr as usize, GFP_KERNEL)?;
        let mut pushed = Ok(());
        // No CPU comes or goes while the set is taken (START checks again);
        // `ids` has room for every CPU, so nothing is allocated meanwhile.
        {
            let _hp = HotplugReadGuard::new(ctx);
            config
                .session_cpus(set, nr, cpu_online, |cpu| {
                    if pushed.is_ok() {
                        pushed = ids.push(cpu, GFP_KERNEL);
                    }
                })
                .map_err(measure::uapi_err)?;
        }
        pushed?;
        let ring = measure::ring_records(ids.len(), &config)?;
        let blame = Blame::new(&config, &ids)?;
        let mut cpus = KVec::with_capacity(ids.len(), GFP_KERNEL)?;
        let mut chans = KVec::with_capacity(ids.len(), GFP_KERNEL)?;
        for &cpu in ids.iter() {
            cpus.push(CpuState::new(cpu, chans.len(), &config)?, GFP_KERNEL)?;
            chans.push(Channel::new(cpu, ring)?, GFP_KERNEL)?;
        }
        Arc::pin_init(
            try_pin_init!(Self {
                out <- Output::new(
                    config,
                    chans,
                    c_str!("rtlat: threshold exceeded, sampling stopped\n"),
                    false,
                    readers,
                ),
                cpus,
                blame,
                stop_lock <- crate::new_task_mutex!(()),
                threads <- crate::new_task_mutex!(KVec::new()),
                queue: *queue,
                retiring: Atomic::new(false),
                retire_ref <- crate::new_task_mutex!(None),
                finish_work <- new_work!("rtlat::Session::finish_work"),
                stopped <- Completion::new(),
            }),
            GFP_KERNEL,
        )
    }

    fn output(&self) -> &Output {
        &self.out
    }

    /// Starts sampling: one RT kernel thread per CPU, once the threads of
    /// the sessions stopped before have exited (one `rtlat/N` per CPU);
    /// that wait, for a CPU still monopolised, is killable.
    fn start(self: &Arc<Self>, ctx: &Sleepable) -> Result {
        // (A START that will be refused does not wait: checked again below.)
        if self.out.state() != State::Configured {
            return Err(EBUSY);
        }
        self.queue.flush_killable(ctx)?;
        let started = {
            // Serialised with another START (one that finds the session
            // running must not take its probes away) and with `stop`.
            let _serial = self.stop_lock.lock(ctx);
            // A START that is refused allocates and registers nothing, not
            // even for a moment: registering and unregistering the probes
            // waits for RCU grace periods. Only this START, under
            // `stop_lock`, leaves the configured state but for `stop`,
            // under it too.
            if self.out.state() != State::Configured {
                return Err(EBUSY);
            }
            // Registering the probes takes the CPU hotplug lock (static
            // calls), as unregistering them does: neither under ours.
            let attached = match &self.blame {
                Some(b) => b.attach(ctx)?,
                None => false,
            };
            let r = self.start_threads(ctx);
            if let (Err(Failed::NotStarted(_)), Some(b)) = (&r, &self.blame) {
                if attached {
                    b.detach(ctx);
                }
            }
            r
        };
        match started {
            Ok(()) => Ok(()),
            Err(Failed::NotStarted(e)) => Err(e),
            Err(Failed::Started(e)) => {
                self.stop(ctx, StopReason::User);
                // (A fatal signal only ends the wait.)
                let _ = self.wait_stopped(ctx);
                Err(e)
            }
        }
    }

    /// Stops sampling: the state, the readers woken, no timer armed again,
    /// the kernel threads and user waiters told. The rest, which waits for
    /// them, is `finish`, on the device's queue: a kernel thread whose CPU
    /// a task of a higher priority monopolises exits only once that task
    /// lets it run, and the caller must not wait for that unkillably.
    fn stop(self: &Arc<Self>, ctx: &Sleepable, reason: StopReason) {
        let queued = {
            let _serial = self.stop_lock.lock(ctx);
            self.halt(ctx, reason);
            for cpu in self.cpus.iter() {
                cancel_hard_timer(&**cpu);
            }
            if self.retiring.xchg(true, Relaxed) {
                return;
            }
            self.queue_finish(ctx)
        };
        if let Err(me) = queued {
            // No queue (only while the module loads or unloads, when no
            // file is open): here, then, without `stop_lock`, which
            // `finish` takes.
            me.finish(ctx);
            drop(me.retire_ref.lock(ctx).take());
        }
    }

    /// Queues `finish` at once, under the device's lock, so that a START
    /// of the next session (which flushes the queue first) waits for this
    /// one to end: never two sessions sampling a CPU together. `stop`,
    /// which halts the sampling first, follows outside the lock.
    fn retire(self: &Arc<Self>, ctx: &Sleepable) {
        if self.retiring.xchg(true, Relaxed) {
            return;
        }
        if let Err(me) = self.queue_finish(ctx) {
            // No queue (not while a file is open): `stop` finishes it.
            drop(me.retire_ref.lock(ctx).take());
            me.retiring.store(false, Relaxed);
        }
    }

    /// Waits, killably, until `finish` has run.
    fn wait_stopped(&self, ctx: &Sleepable) -> Result {
        self.stopped.wait_killable(ctx)
    }

    /// `RTLAT_IOC_RESET`: the statistics and the blame tallies.
    fn reset(&self, ctx: &Sleepable) {
        self.out.reset();
        if self.blame.is_some() {
            for c in self.cpus.iter() {
                c.tally.lock(ctx).clear();
            }
        }
    }

    /// `RTLAT_IOC_BLAME`: a CPU's late activations explained; `EINVAL`
    /// unless the session explains them and samples that CPU.
    fn blame(&self, ctx: &Sleepable, req: uapi::BlameRequest, buf: &mut [u8]) -> Result {
        self.blame.as_ref().ok_or(EINVAL)?;
        let c = self.cpu(req.cpu).ok_or(EINVAL)?;
        Blame::report(ctx, req, &c.tally, buf)
    }

    /// `RTLAT_IOC_USER_WAIT`: the user stage, from a thread pinned to a CPU.
    fn user_wait(&self, ctx: &Sleepable) -> Result<Record> {
        if !self.out.config.user_stage() {
            return Err(EINVAL);
        }
        let cpu_id = current_pinned_cpu().ok_or(EINVAL)?;
        let cpu = self.cpu(cpu_id).ok_or(EINVAL)?;
        if !self.out.running() {
            return Err(measure::eshutdown());
        }
        if cpu.user_busy.xchg(true, Acquire) {
            return Err(EBUSY);
        }
        let r = self.user_wait_on(ctx, cpu);
        let _g = cpu.user_lock.lock(ctx);
        cpu.user_busy.store(false, Release);
        // `finish` may be waiting for this waiter to leave.
        cpu.user_cv.notify_all();
        r
    }
}

/// Why [`Session::start_threads`] failed.
enum Failed {
    /// The session was not started (it runs, or ran, already).
    NotStarted(Error),
    /// It was, and must be stopped.
    Started(Error),
}

impl Session {
    /// Queues `finish`, holding the module until it has run; the session
    /// back if there is no queue. Called once (`retiring` set).
    fn queue_finish(self: &Arc<Self>, ctx: &Sleepable) -> Result<(), Arc<Self>> {
        // SAFETY: Called for a system call on a file of the module's (an
        // ioctl, its release), which holds the module.
        *self.retire_ref.lock(ctx) = Some(unsafe { ModuleRef::get() });
        self.queue.enqueue(self.clone())
    }

    /// The end of a stop (on the device's queue): joins every thread,
    /// waiting for each to run, lets the user waiters leave, completes what
    /// they left pending and ends the stream; records and statistics stay.
    fn finish(&self, ctx: &Sleepable) {
        // A START under way has started its threads: they are joined too.
        drop(self.stop_lock.lock(ctx));
        // Queued by `retire`, this may run before `stop` (idempotent).
        self.halt(ctx, StopReason::User);
        for cpu in self.cpus.iter() {
            cancel_hard_timer(&**cpu);
        }
        // Joining the threads breaks the Session <-> Worker reference cycle.
        let threads = core::mem::take(&mut *self.threads.lock(ctx));
        drop(threads);
        for cpu in self.cpus.iter() {
            cancel_hard_timer(&**cpu);
            // A user waiter still inside USER_WAIT (it was woken by `halt`)
            // leaves before the stream ends: no record lands after EOF.
            let mut g = cpu.user_lock.lock(ctx);
            while cpu.user_busy.load(Acquire) {
                cpu.user_cv.wait(&mut g);
            }
            // A user record still waiting for its response time is complete
            // now, and an activation whose claimed waiter never ran with it
            // (it had moved off the CPU, or had not run yet).
            let pending = g.pending.take();
            let stolen = cpu.take_direct();
            drop(g);
            let _p = cpu.produce.lock(ctx);
            let now = ktime_ns();
            if let Some(rec) = pending {
                let away = now - rec.expected_ns as i64;
                self.complete_pending(ctx, cpu, rec, Response::Away(away));
            }
            if let Some(mut m) = stolen {
                m.flags |= uapi::REC_NO_THREAD
                    | uapi::REC_NO_USER
                    | uapi::REC_NO_RESPONSE
                    | uapi::REC_NO_WAITER;
                self.flag_missed_deadline(&mut m, now);
                self.complete(ctx, cpu, m);
            }
        }
        // No thread and no user waiter explains any more: the timelines may
        // stop.
        if let Some(b) = &self.blame {
            b.detach(ctx);
        }
        // Nothing can produce a record any more: the stream may end.
        self.out.set_finished(ctx);
        self.stopped.complete_all();
    }

    /// START, once the probes are registered: one RT kernel thread per CPU.
    fn start_threads(self: &Arc<Self>, ctx: &Sleepable) -> Result<(), Failed> {
        // A CPU that went offline since CONFIG (its teardown callback ran, or
        // runs now) is seen offline here: no thread is bound to a dead CPU.
        let _hp = HotplugReadGuard::new(ctx);
        let mut threads = self.threads.lock(ctx);
        self.out.set_running().map_err(Failed::NotStarted)?;
        for cpu in self.cpus.iter() {
            if !cpu_online(cpu.cpu) {
                self.out.chans[cpu.chan].went_offline.store(true, Relaxed);
                cpu.halt();
                continue;
            }
            // INVARIANT: `self.out` is pinned in this session, which stays
            // alive while its timers can run (see `CpuState::out`); it is
            // set before the CPU's thread arms the timer.
            cpu.out.store(core::ptr::from_ref(&self.out), Release);
            let worker = Arc::new(
                Worker {
                    session: self.clone(),
                    cpu: cpu.clone(),
                },
                GFP_KERNEL,
            )
            .map_err(Error::from);
            let t = worker.and_then(|w| {
                RtThread::new_on_cpu(w, cpu.cpu, self.out.config.priority, c_str!("rtlat/%u"))
            });
            t.and_then(|t| threads.push(t, GFP_KERNEL).map_err(Error::from))
                .map_err(Failed::Started)?;
        }
        Ok(())
    }

    /// Marks the session stopped (from any task context, also its threads):
    /// no timer is armed again, waiters and readers are woken.
    fn halt(&self, ctx: &Sleepable, reason: StopReason) {
        self.out.set_stopped(ctx, reason);
        for cpu in self.cpus.iter() {
            cpu.halt();
        }
    }

    /// Statistics, thresholds and the ring for one completed record; the
    /// caller holds `cpu.produce`.
    fn complete(&self, ctx: &Sleepable, cpu: &CpuState, rec: Record) {
        // SAFETY: Records of a CPU are produced in task context only under
        // its `produce` lock, which the caller holds (an irq-only session
        // has no task-context producer).
        if unsafe { self.out.complete(ctx, &self.out.chans[cpu.chan], rec) } {
            self.halt(ctx, StopReason::Threshold);
        }
    }

    /// `cpu` is going offline (called on it, in task context): stop sampling
    /// there for the rest of the session. Its thread finishes, its timer is
    /// cancelled, a user waiter there gets `-ESHUTDOWN`; the others go on.
    pub(crate) fn cpu_offline(&self, _ctx: &Sleepable, cpu: u32) {
        let Some(c) = self.cpu(cpu) else { return };
        self.out.chans[c.chan].went_offline.store(true, Relaxed);
        c.halt();
        cancel_hard_timer(&**c);
    }

    fn cpu(&self, cpu: u32) -> Option<&Arc<CpuState>> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }

    /// A user-stage activation that found no waiter, completed by the
    /// kernel thread: `rec` has its irq and thread stages. The waiter's
    /// previous record, still without its response, goes first.
    fn thread_done(&self, ctx: &Sleepable, cpu: &CpuState, mut rec: Record) {
        let chan = &self.out.chans[cpu.chan];
        chan.unattended.store(true, Relaxed);
        let _p = cpu.produce.lock(ctx);
        // The waiter's record still waiting for its response, and the
        // activation it was claimed for if it has not run since: in order,
        // before this one.
        let (pending, stolen) = {
            let mut g = cpu.user_lock.lock(ctx);
            (g.pending.take(), cpu.take_direct())
        };
        let now = ktime_ns();
        if let Some(prev) = pending {
            let away = now - prev.expected_ns as i64;
            self.complete_pending(ctx, cpu, prev, Response::Away(away));
        }
        if let Some(mut m) = stolen {
            // Handled now, by the kernel thread: its thread stage says how
            // late (more than a period); the loop missed it.
            m.lat_ns[Stage::Thread] = now - m.expected_ns as i64;
            // (The kernel thread, on its CPU.)
            if let Some(b) = &self.blame {
                b.note(ctx, &cpu.tally, &m, |irqs, seq| {
                    cpu.interrupted_stack(irqs, seq)
                });
            }
            m.flags |= uapi::REC_NO_USER | uapi::REC_NO_RESPONSE | uapi::REC_NO_WAITER;
            self.flag_missed_deadline(&mut m, now);
            if self
                .out
                .check_early(chan, &mut m, &[Stage::Irq, Stage::Thread])
            {
                self.halt(ctx, StopReason::Threshold);
            }
            self.complete(ctx, cpu, m);
        }
        if self
            .out
            .check_early(chan, &mut rec, &[Stage::Irq, Stage::Thread])
        {
            self.halt(ctx, StopReason::Threshold);
        }
        rec.flags |= uapi::REC_NO_USER | uapi::REC_NO_RESPONSE | uapi::REC_NO_WAITER;
        self.complete(ctx, cpu, rec);
    }

    /// Flags `rec` `REC_DEADLINE_MISS` if its loop was still away `now`,
    /// later than the deadline.
    fn flag_missed_deadline(&self, rec: &mut Record, now: i64) {
        let deadline = self.out.config.deadline_ns;
        let away = now - rec.expected_ns as i64;
        if deadline != 0 && away > 0 && away as u64 > deadline {
            rec.flags |= uapi::REC_DEADLINE_MISS;
        }
    }

    /// Completes a record handed to a waiter, with its response time if the
    /// waiter came back for the next one (else `REC_NO_RESPONSE`, and
    /// `REC_NO_USER` if it did not even return to user space with it), and
    /// `REC_DEADLINE_MISS` if the response is, or is bound to be, later than
    /// the session's deadline. The caller holds `cpu.produce`.
    fn complete_pending(&self, ctx: &Sleepable, cpu: &CpuState, mut rec: Record, r: Response) {
        let deadline = self.out.config.deadline_ns;
        let late = match r {
            Response::Back(t) => {
                rec.lat_ns[Stage::Response] = t;
                t
            }
            Response::Away(t) => {
                rec.flags |= uapi::REC_NO_RESPONSE;
                t
            }
        };
        if rec.lat_ns[Stage::User] < 0 {
            rec.flags |= uapi::REC_NO_USER | uapi::REC_NO_RESPONSE;
            rec.lat_ns[Stage::Response] = -1;
        }
        if deadline != 0 && late > 0 && late as u64 > deadline {
            rec.flags |= uapi::REC_DEADLINE_MISS;
        }
        self.complete(ctx, cpu, rec);
    }

    fn user_wait_on(&self, ctx: &Sleepable, cpu: &CpuState) -> Result<Record> {
        // The previous activation's response time: it is back. Completed
        // outside `user_lock` (`complete` may halt the session), under
        // `produce`, which orders it before the kernel thread's records.
        {
            let _p = cpu.produce.lock(ctx);
            let prev = cpu.user_lock.lock(ctx).pending.take();
            if let Some(prev) = prev {
                let response = ktime_ns() - prev.expected_ns as i64;
                self.complete_pending(ctx, cpu, prev, Response::Back(response));
            }
        }
        if !self.out.running() || cpu.stopping.load(Relaxed) {
            return Err(measure::eshutdown());
        }
        // Wait until the hard IRQ claims this waiter for an activation. A
        // waiter that leaves (signal, stop) withdraws first, so the kernel
        // thread records that activation: none is lost or uncounted.
        let chan = &self.out.chans[cpu.chan];
        let (mut rec, tripped) = loop {
            match cpu.waiter.wait(ctx, || cpu.stopping.load(Relaxed)) {
                Waited::Claimed => {}
                Waited::Stopped => return Err(measure::eshutdown()),
                Waited::Interrupted => return Err(EINTR),
            }
            // This task now runs in the kernel for the activation that
            // fired: the thread stage. It is measured on the CPU it belongs
            // to (the affinity is checked again with migration off); a
            // waiter that moved leaves the activation to the kernel thread.
            let now = ktime_ns();
            let pin = MigrateGuard::new();
            if pin.cpu() != cpu.cpu || current_pinned_cpu() != Some(cpu.cpu) {
                // (Moved off a CPU going offline, whose teardown may not
                // have reached this session's callback yet: that CPU's
                // end, as for a waiter still blocked there.)
                return Err(if cpu.stopping.load(Relaxed) || !cpu_active(cpu.cpu) {
                    measure::eshutdown()
                } else {
                    EINVAL
                });
            }
            let mut g = cpu.user_lock.lock(ctx);
            // Unless it ran so late that the kernel thread took it: then it
            // waits for the next.
            let Some(mut rec) = cpu.take_direct() else {
                continue;
            };
            rec.lat_ns[Stage::Thread] = now - rec.expected_ns as i64;
            rec.flags |= uapi::REC_DIRECT;
            let tripped = self
                .out
                .check_early(chan, &mut rec, &[Stage::Irq, Stage::Thread]);
            // Pending, waiting for its user stage and response; the kernel
            // thread completes it if the waiter is not back by the next
            // activation that finds no waiter.
            g.pending = Some(rec);
            drop(g);
            chan.unattended.store(false, Relaxed);
            // The user stage: what is left is the return to user space.
            rec.lat_ns[Stage::User] = ktime_ns() - rec.expected_ns as i64;
            // (On its CPU still: `pin`.)
            if let Some(b) = &self.blame {
                b.note(ctx, &cpu.tally, &rec, |irqs, seq| {
                    cpu.interrupted_stack(irqs, seq)
                });
            }
            drop(pin);
            break (rec, tripped);
        };
        if tripped {
            self.halt(ctx, StopReason::Threshold);
        }
        // Its threshold now, not when (or if) the waiter comes back: also
        // when the next activation already completed the record without
        // this user stage (the waiter was later than a period). The trip
        // (STATUS: stage, value, seq) is what a threshold is for; the
        // record returned here carries REC_THRESHOLD.
        let tripped = self
            .out
            .check_early(&self.out.chans[cpu.chan], &mut rec, &[Stage::User]);
        {
            let mut g = cpu.user_lock.lock(ctx);
            // Unless the next activation already completed it without us.
            if let Some(p) = g.pending.as_mut().filter(|p| p.seq == rec.seq) {
                *p = rec;
            }
        }
        if tripped {
            self.halt(ctx, StopReason::Threshold);
        }
        Ok(rec)
    }
}
