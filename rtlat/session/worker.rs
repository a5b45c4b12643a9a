// SPDX-License-Identifier: GPL-2.0

//! The kernel thread of one CPU of a session (step 3 of an activation, and
//! an irq-only session's reader wake-ups).

use kernel::sync::{
    atomic::{
        Acquire,
        Relaxed, //
    },
    Arc, //
};

use crate::rtrs::{
    kthread::{
        RtThreadFn,
        ThreadContext, //
    },
    measure::Source,
    time::ktime_ns,
    uapi::{
        self,
        Stage,
        State,
        StopReason, //
    },
};

use super::{
    cpu::CpuState,
    Session, //
};

/// Data of one CPU's kernel thread.
pub(crate) struct Worker {
    pub(super) session: Arc<Session>,
    pub(super) cpu: Arc<CpuState>,
}

impl RtThreadFn for Worker {
    fn run(this: &Self, ctx: &ThreadContext<'_>) {
        let cpu = &this.cpu;
        // Its reference is dropped with the CPU state, after its timer is
        // cancelled: the hard IRQ never wakes a freed task.
        let sleepable = ctx.sleepable();
        cpu.thread.set_current(sleepable);
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
            // The records the hard IRQ asks for, a trip's among them.
            out.notify_readers(sleepable);
            if out.state() == State::Stopped {
                // A threshold tripped in the hard IRQ: stop every CPU.
                this.session.halt(StopReason::Threshold);
                break;
            }
        }
    }
}
