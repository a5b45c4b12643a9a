// SPDX-License-Identifier: GPL-2.0

//! The per-CPU state of a session: its hard-IRQ timer and what the hard
//! IRQ hands to the kernel thread or to a user waiter.

use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
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

use crate::rtrs::{
    barrier::smp_mb,
    blame::{
        Tally,
        STACK_DEPTH, //
    },
    context::{
        cancel_hard_timer,
        start_hard_timer,
        HardIrq,
        HardTimerCallback,
        IrqsOff,
        Producer, //
    },
    direct_wait::DirectWait,
    measure::Output,
    sync::{
        TaskCondVar,
        TaskMutex, //
    },
    task::{
        current_is_idle,
        TaskWaker, //
    },
    time::ktime_ns,
    uapi::{
        self,
        Config,
        Record,
        Stage, //
    },
};

/// Per-CPU state of a session.
#[pin_data(PinnedDrop)]
pub(crate) struct CpuState {
    #[pin]
    pub(super) timer: HrTimer<Self>,
    pub(crate) cpu: u32,
    /// Index of this CPU's channel in the session's output.
    pub(super) chan: usize,
    pub(super) period: i64,
    pub(super) user_stage: bool,
    /// No thread stage: the hard IRQ completes records (see the module doc).
    pub(super) irq_only: bool,
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
    pub(super) out: Atomic<*const Output>,
    /// Bumped by the hard IRQ of an irq-only session when the kernel thread
    /// has something to do (wake the readers, or halt after a trip).
    pub(super) kicks: Atomic<u64>,
    /// Expected expiry of the armed activation (ns).
    pub(super) expected: Atomic<i64>,
    /// Periods skipped when it was armed.
    pub(super) pending_missed: Atomic<u32>,
    /// Sequence number of the armed activation.
    pub(super) seq: Atomic<u64>,
    /// Bumped by the hard IRQ: the activation `irq_seq` fired.
    pub(super) irq_seq: Atomic<u64>,
    pub(super) irq_lat: Atomic<i64>,
    pub(super) irq_idle: Atomic<bool>,
    /// The kernel thread, for the hard IRQ to wake; kept alive while this
    /// state lives.
    #[pin]
    pub(super) thread: TaskWaker,
    /// The user waiter blocked in `USER_WAIT`, claimed by the hard IRQ.
    pub(super) waiter: DirectWait,
    /// Sequence number of the activation the hard IRQ claimed the waiter
    /// for, until the waiter takes it (or, if it has not run by the next
    /// activation, the kernel thread); 0: none.
    pub(super) direct: Atomic<u64>,
    /// That activation as its hard IRQ saw it.
    pub(super) claimed: Fired,
    /// The user waiter: one at a time; `finish` waits until it has left.
    pub(super) user_busy: Atomic<bool>,
    #[pin]
    pub(super) user_lock: TaskMutex<UserSide>,
    #[pin]
    pub(super) user_cv: TaskCondVar,
    /// Held by whoever completes a record of this CPU in task context (its
    /// kernel thread, its user waiter, `finish`): the ring has one producer.
    #[pin]
    pub(super) produce: TaskMutex<()>,
    /// Stop sampling (set by stop, by a threshold trip, and when the CPU
    /// goes offline).
    pub(super) stopping: Atomic<bool>,
    /// This CPU's explained activations, in a blame session.
    #[pin]
    pub(super) tally: TaskMutex<Tally>,
    /// A blame session: the hard IRQ keeps the stack it interrupted.
    pub(super) blame: bool,
    /// That stack, innermost first (`irq_stack_n` entries), of activation
    /// `irq_stack_seq`: written by the hard IRQ before it hands the
    /// activation on, read on this CPU with interrupts off by whoever
    /// explains it (so no interrupt of this CPU writes it meanwhile). A
    /// later activation's interrupt replaces it: the earlier one is then
    /// explained without a stack, never with another's.
    pub(super) irq_stack: [Atomic<u64>; STACK_DEPTH],
    pub(super) irq_stack_n: Atomic<u32>,
    pub(super) irq_stack_seq: Atomic<u64>,
}

/// An activation as its hard IRQ saw it.
pub(super) struct Fired {
    pub(super) expected: Atomic<i64>,
    pub(super) irq_lat: Atomic<i64>,
    pub(super) idle: Atomic<bool>,
    pub(super) missed: Atomic<u32>,
}

/// How a user waiter's activation ended, for its response time.
#[derive(Clone, Copy)]
pub(super) enum Response {
    /// The waiter came back for the next activation this many ns after
    /// the expected expiry: its response time.
    Back(i64),
    /// The waiter was still away this many ns after the expected expiry,
    /// when the next activation found no waiter or the session stopped:
    /// the response is later than that.
    Away(i64),
}

/// The user waiter's side, shared with the kernel thread under `user_lock`.
pub(super) struct UserSide {
    /// The record returned to the waiter, waiting for its response time.
    pub(super) pending: Option<Record>,
}

#[pinned_drop]
impl PinnedDrop for CpuState {
    fn drop(self: Pin<&mut Self>) {
        // The timer holds no reference: make sure it is not armed before the
        // memory goes (and before `thread` releases the task).
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
    pub(super) fn new(cpu: u32, chan: usize, config: &Config) -> Result<Arc<Self>> {
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
                thread <- TaskWaker::new(),
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
                user_cv <- crate::new_task_condvar!(),
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
    pub(super) fn arm_next(&self) {
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
    pub(super) fn irq_only_activation(
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
    pub(super) fn forward(
        &self,
        mut ctx: HrTimerCallbackContext<'_, Self>,
        expected: i64,
    ) -> HrTimerRestart {
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
    pub(super) fn take_direct(&self) -> Option<Record> {
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
    pub(super) fn keep_interrupted_stack(&self, irq: &HardIrq, seq: u64) {
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
    pub(super) fn interrupted_stack(
        &self,
        _irqs: &IrqsOff,
        seq: u64,
    ) -> ([u64; STACK_DEPTH], usize) {
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
    pub(super) fn wake_thread(&self) {
        self.thread.wake();
    }

    /// Stops sampling on this CPU: no timer is armed again (`arm_next`
    /// re-checks the flag after a full barrier), and its thread and user
    /// waiter are woken to see it.
    pub(super) fn halt(&self) {
        self.stopping.store(true, Relaxed);
        smp_mb();
        self.wake_thread();
        self.waiter.kick();
    }

    /// A record with the irq stage of the activation that just fired.
    pub(super) fn fired_record(&self, seq: u64) -> Record {
        self.record_of(seq, self.irq_lat.load(Relaxed), self.irq_idle.load(Relaxed))
    }

    /// The record of the armed activation `seq`, with its irq stage.
    pub(super) fn record_of(&self, seq: u64, irq_lat: i64, idle: bool) -> Record {
        self.new_record(
            seq,
            self.expected.load(Relaxed),
            self.pending_missed.load(Relaxed),
            irq_lat,
            idle,
        )
    }

    /// A record of this CPU with its irq stage.
    pub(super) fn new_record(
        &self,
        seq: u64,
        expected: i64,
        missed: u32,
        irq_lat: i64,
        idle: bool,
    ) -> Record {
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
