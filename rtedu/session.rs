// SPDX-License-Identifier: GPL-2.0

//! A latency session on an instance ([`EduSession`]): a hard-mode hrtimer
//! raises the device's interrupt each period, the IRQ thread completes the
//! record; the measuring protocol is `rtrs::measure`'s.

use core::ptr;

use kernel::{
    c_str,
    io::Io,
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
            AbsoluteHardMode,
            HrTimer,
            HrTimerCallbackContext,
            HrTimerRestart, //
        },
        Delta,
        Monotonic, //
    },
};

use crate::{
    instance::Instance,
    module_parameters, regs,
    rtrs::{
        barrier::smp_mb,
        context::{
            cancel_hard_timer,
            start_hard_timer,
            HardIrq,
            HardTimerCallback,
            Sleepable, //
        },
        measure::{
            self,
            Channel,
            Output,
            Readers,
            Source, //
        },
        sync::TaskMutex,
        time::ktime_ns,
        uapi::{
            self,
            Config,
            Record,
            Stage,
            StopReason, //
        },
    },
};

/// An edu device and the sessions measured on it.
pub(crate) type EduInstance = Instance<EduSession>;

/// A latency session on one instance: one channel (0).
#[pin_data(PinnedDrop)]
pub(crate) struct EduSession {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    out: Output,
    inst: Arc<EduInstance>,
    period: i64,
    /// Sequence number of the last raised event.
    seq: Atomic<u64>,
    raise_ns: Atomic<i64>,
    /// An event was raised and its IRQ thread has not completed it yet.
    in_flight: Atomic<bool>,
    /// Periods skipped since the last raised event (timer only).
    pending_missed: Atomic<u32>,
    /// Periods skipped before the raised event: its record's `missed`.
    raised_missed: Atomic<u32>,
    stopping: Atomic<bool>,
    #[pin]
    stop_lock: TaskMutex<()>,
}

#[pinned_drop]
impl PinnedDrop for EduSession {
    fn drop(self: Pin<&mut Self>) {
        cancel_hard_timer(&*self);
    }
}

impl HardTimerCallback for EduSession {
    type Pointer<'a> = Arc<Self>;

    fn run(
        this: ArcBorrow<'_, Self>,
        mut ctx: HrTimerCallbackContext<'_, Self>,
        _irq: &HardIrq,
    ) -> HrTimerRestart {
        if this.stopping.load(Relaxed) {
            return HrTimerRestart::NoRestart;
        }
        let overruns = ctx.forward_now(Delta::from_nanos(this.period));
        // Periods the timer itself was late for: they passed before the
        // raise (a record's time is its raise).
        let late = overruns.saturating_sub(1) as u32;
        if this.in_flight.load(Acquire) {
            // The previous event is not handled yet: this period is skipped
            // too. They all come before the next event raised.
            this.pending_missed.fetch_add(late + 1, Relaxed);
            return HrTimerRestart::Restart;
        }
        // This event's record counts the periods skipped since the last
        // raised event; those skipped while it is in flight go to the next.
        let missed = this.pending_missed.xchg(0, Relaxed) + late;
        this.raised_missed.store(missed, Relaxed);
        this.seq.fetch_add(1, Relaxed);
        // The raise's time before the flag that publishes it: an IRQ thread
        // that sees this event in flight sees its time too.
        this.raise_ns.store(ktime_ns(), Relaxed);
        this.in_flight.store(true, Release);
        if this
            .inst
            .with_bar(|bar| bar.write32(regs::IRQ_PROBE, regs::IRQ_RAISE))
            .is_err()
        {
            return HrTimerRestart::NoRestart;
        }
        HrTimerRestart::Restart
    }
}

crate::hard_timer! {
    impl for EduSession { mode: AbsoluteHardMode<Monotonic>, field: self.timer }
}

impl EduSession {
    /// IRQ thread, with `inst.active` held: the probe's interrupt arrived.
    pub(crate) fn event(&self, ctx: &Sleepable, irq_ns: i64, thread_ns: i64) {
        if !self.in_flight.load(Acquire) {
            return;
        }
        let raise = self.raise_ns.load(Relaxed);
        // An interrupt taken before this event was raised is an earlier
        // raise's: one of a session stopped before its interrupt was
        // handled, whose bit a new session's IRQ thread finds pending. It
        // is not this event's; this one's own interrupt completes it.
        if irq_ns < raise {
            return;
        }
        let mut rec = Record {
            cpu: 0,
            seq: self.seq.load(Relaxed),
            expected_ns: raise as u64,
            lat_ns: [-1; uapi::NR_STAGES],
            missed: self.raised_missed.load(Relaxed),
            flags: uapi::REC_NO_USER | uapi::REC_NO_RESPONSE,
        };
        rec.lat_ns[Stage::Irq] = irq_ns - raise;
        rec.lat_ns[Stage::Thread] = thread_ns - raise;
        // SAFETY: The channel's only producer is the IRQ thread, serialised
        // by `inst.active`.
        let tripped = unsafe { self.out.complete(ctx, &self.out.chans[0], rec) };
        self.in_flight.store(false, Release);
        if tripped {
            self.stopping.store(true, Relaxed);
            cancel_hard_timer(self);
        }
    }
}

impl Source for EduSession {
    type Device = Arc<EduInstance>;

    fn configure(
        _ctx: &Sleepable,
        inst: &Arc<EduInstance>,
        config: Config,
        cpus: &[u64],
        readers: Arc<Readers>,
    ) -> Result<Arc<Self>> {
        if inst.gone() {
            return Err(ENODEV);
        }
        // One channel: the device. A CPU set, a response stage or a
        // deadline on it (there is no user thread coming back), an
        // irq-only session (the IRQ thread completes every event) or blame
        // (its activations are the device's, not a timer's) cannot be
        // honoured.
        if cpus.iter().any(|&w| w != 0)
            || config.flags & uapi::CFG_BLAME != 0
            || !config.thread_stage()
            || config.stages & Stage::Response.bit() != 0
            || config.threshold_ns[Stage::Response] != 0
            || config.deadline_ns != 0
        {
            return Err(EINVAL);
        }
        let ring = measure::ring_records(1, &config)?;
        let mut chans = KVec::new();
        chans.push(Channel::new(0, ring)?, GFP_KERNEL)?;
        Arc::pin_init(
            try_pin_init!(Self {
                timer <- HrTimer::new(),
                out <- Output::new(
                    config,
                    chans,
                    c_str!("rtedu: threshold exceeded, sampling stopped\n"),
                    // The user stage is the reader's wake-up by each event.
                    config.user_stage(),
                    readers,
                ),
                inst: inst.clone(),
                period: config.period_ns as i64,
                seq: Atomic::new(0),
                raise_ns: Atomic::new(0),
                in_flight: Atomic::new(false),
                pending_missed: Atomic::new(0),
                raised_missed: Atomic::new(0),
                stopping: Atomic::new(false),
                stop_lock <- crate::new_task_mutex!(()),
            }),
            GFP_KERNEL,
        )
    }

    fn output(&self) -> &Output {
        &self.out
    }

    fn start(self: &Arc<Self>, ctx: &Sleepable) -> Result {
        let mut active = self.inst.active.lock(ctx);
        if self.inst.gone() {
            return Err(ENODEV);
        }
        self.out.set_running()?;
        self.inst
            .irq_thread
            .set_priority(self.out.config.priority)?;
        *active = Some(self.clone());
        let first = ktime_ns() + self.period;
        // SAFETY: `self` is alive and pinned; `stop` and drop cancel the timer.
        unsafe { start_hard_timer(&**self, first) };
        Ok(())
    }

    fn stop(self: &Arc<Self>, ctx: &Sleepable, reason: StopReason) {
        let _serial = self.stop_lock.lock(ctx);
        self.out.set_stopped(reason);
        self.stopping.store(true, Relaxed);
        smp_mb();
        cancel_hard_timer(&**self);
        // After this the IRQ thread completes no record into this session.
        let mine = {
            let mut active = self.inst.active.lock(ctx);
            if active.as_ref().is_some_and(|s| ptr::eq(&**s, &**self)) {
                active.take()
            } else {
                None
            }
        };
        drop(mine);
        self.inst
            .irq_thread
            .set_priority(module_parameters::irq_priority.value().clamp(1, 99))
            .ok();
        self.out.set_finished(ctx);
    }

    /// The user stage: the reader's wake-up by the event's IRQ thread.
    fn stamp_woken(&self, chan: &Channel, rec: &mut Record) -> bool {
        if !self.out.config.user_stage() || rec.flags & uapi::REC_NO_USER == 0 {
            return false;
        }
        rec.lat_ns[Stage::User] = ktime_ns() - rec.expected_ns as i64;
        rec.flags &= !uapi::REC_NO_USER;
        self.out.mark_threshold(chan, rec, Stage::User);
        true
    }

    fn woken_delivered(&self, ctx: &Sleepable, chan: &Channel, rec: &Record) {
        let mut rec = *rec;
        if self.out.complete_stage(ctx, chan, &mut rec, Stage::User) {
            self.stopping.store(true, Relaxed);
            cancel_hard_timer(self);
        }
    }

    fn gone(&self) -> bool {
        self.inst.gone()
    }
}
