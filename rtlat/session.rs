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
//!
//! # Files
//!
//! - `session.rs`: the session and its life (CONFIG, START, the stop and
//!   its end on the device's queue);
//! - `session/cpu.rs`: a CPU's state and its hard-IRQ timer (steps 1, 2);
//! - `session/worker.rs`: the CPU's kernel thread (step 3);
//! - `session/user.rs`: the user stage and its records (step 4).

use kernel::{
    c_str, impl_has_work, new_work,
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        Arc, //
    },
    workqueue::Work,
};

use crate::blame::Blame;
use crate::rtrs::{
    context::{
        cancel_hard_timer,
        Sleepable, //
    },
    cpu::cpu_online,
    cpuhp::HotplugReadGuard,
    kthread::RtThread,
    measure::{
        self,
        Channel,
        Output,
        Readers,
        Source, //
    },
    module::ModuleRef,
    sync::{
        Completion,
        TaskMutex, //
    },
    task::current_pinned_cpu,
    time::ktime_ns,
    uapi::{
        self,
        Config,
        Record,
        State,
        StopReason, //
    },
    workqueue::{
        ModuleQueue,
        TaskWork, //
    },
};

mod cpu;
mod user;
mod worker;

use cpu::{
    CpuState,
    Response, //
};
use worker::Worker;

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

crate::impl_task_work!(Session);

impl TaskWork for Session {
    fn run(ctx: &Sleepable, this: Arc<Session>) {
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

    /// Stops sampling: the state, no timer armed again, the kernel threads
    /// and user waiters told (not the readers: they wait for the stream's
    /// end, which `finish` marks). The rest, which waits for them, is
    /// `finish`, on the device's queue: a kernel thread whose CPU a task of
    /// a higher priority monopolises exits only once that task lets it
    /// run, and the caller must not wait for that unkillably.
    fn stop(self: &Arc<Self>, ctx: &Sleepable, reason: StopReason) {
        let queued = {
            let _serial = self.stop_lock.lock(ctx);
            self.halt(reason);
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
        cpu.user_cv.notify_all(ctx);
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
        self.halt(StopReason::User);
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
                cpu.user_cv.wait(ctx, &mut g);
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

    /// Marks the session stopped (from any context, also its threads): no
    /// timer is armed again, the threads and user waiters are woken. The
    /// readers are not (see [`Output::set_stopped`]); a trip's record wakes
    /// them when it reaches its ring.
    fn halt(&self, reason: StopReason) {
        self.out.set_stopped(reason);
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
            self.halt(StopReason::Threshold);
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
}
