// SPDX-License-Identifier: GPL-2.0

//! The user stage (step 4 of an activation): the waiter's records, their
//! response times, and the activations no waiter took.

use kernel::{
    prelude::*,
    sync::atomic::Relaxed, //
};

use crate::rtrs::{
    context::{
        CpuPinned,
        Sleepable, //
    },
    cpu::cpu_active,
    direct_wait::Waited,
    measure,
    preempt::MigrateGuard,
    task::current_pinned_cpu,
    time::ktime_ns,
    uapi::{
        self,
        Record,
        Stage,
        StopReason, //
    },
};

use super::{
    cpu::{
        CpuState,
        Response, //
    },
    Session, //
};

impl Session {
    /// A user-stage activation that found no waiter, completed by the
    /// kernel thread: `rec` has its irq and thread stages. The waiter's
    /// previous record, still without its response, goes first.
    pub(super) fn thread_done(&self, ctx: &Sleepable, cpu: &CpuState, mut rec: Record) {
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
                self.halt(StopReason::Threshold);
            }
            self.complete(ctx, cpu, m);
        }
        if self
            .out
            .check_early(chan, &mut rec, &[Stage::Irq, Stage::Thread])
        {
            self.halt(StopReason::Threshold);
        }
        rec.flags |= uapi::REC_NO_USER | uapi::REC_NO_RESPONSE | uapi::REC_NO_WAITER;
        self.complete(ctx, cpu, rec);
    }

    /// Flags `rec` `REC_DEADLINE_MISS` if its loop was still away `now`,
    /// later than the deadline.
    pub(super) fn flag_missed_deadline(&self, rec: &mut Record, now: i64) {
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
    pub(super) fn complete_pending(
        &self,
        ctx: &Sleepable,
        cpu: &CpuState,
        mut rec: Record,
        r: Response,
    ) {
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

    pub(super) fn user_wait_on(&self, ctx: &Sleepable, cpu: &CpuState) -> Result<Record> {
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
            self.halt(StopReason::Threshold);
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
            self.halt(StopReason::Threshold);
        }
        Ok(rec)
    }
}
