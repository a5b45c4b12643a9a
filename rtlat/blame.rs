// SPDX-License-Identifier: GPL-2.0

//! Blame: why a late activation was late, from what ran on its CPU.
//!
//! A session configured with `RTLAT_CFG_BLAME` keeps one timeline per CPU
//! of its own ([`Timelines`], allocated at its START, charged to the
//! memory cgroup of the task that started it, and fed by the scheduler and
//! interrupt tracepoints through [`Probes`], which are registered while it
//! samples and only then), and
//! its timer's hard IRQ keeps the stack it interrupted. When an
//! activation's thread latency reaches the session's `blame_us`, the task
//! that measured it — on that CPU, its kernel thread or user waiter —
//! splits the latency into what ran ([`Analysis`]: from the expected expiry
//! to the interrupt, and from the interrupt to the thread), with interrupts
//! off for the moment it reads its CPU's timeline, and adds it, with that
//! stack, to its CPU's [`Tally`] (a sleeping lock, task context): the
//! sources ranked over the run, and the worst activations explained.
//! `RTLAT_IOC_BLAME` answers from the tally, naming hrtimer callbacks and
//! the stack's frames by symbol there.
//!
//! The cost: the probes run on every CPU for every context switch and
//! interrupt of the machine from START until the session stops (STOP or
//! close; a threshold trip halts sampling but keeps them until then): on a
//! CPU of the session a few dozen instructions with interrupts off, on any
//! other one bit test, interrupts on; the timer's hard IRQ unwinds the
//! stack at every activation (up to 32 frames, to keep the 8 of the code
//! it interrupted). An explained
//! activation costs its measuring task one walk, with interrupts off, over
//! its CPU's transitions since the expected expiry, after its thread stage
//! is measured (a user waiter's, after its user stage: its response time
//! includes it).

use kernel::{
    alloc::flags::GFP_KERNEL_ACCOUNT,
    prelude::*,
    sync::{
        Arc,
        SetOnce, //
    },
};

use crate::rtrs::{
    blame::{
        Analysis,
        Event,
        Excerpt,
        Kind,
        Source,
        Tally,
        Tracker,
        STACK_DEPTH, //
    },
    context::{
        CpuPinned,
        IrqsOff,
        Sleepable, //
    },
    percpu::CpuSetIrq,
    preempt::with_irqs_off,
    sync::TaskMutex,
    task::current_tid,
    tracepoint::{
        symbol_name,
        ProbeHandler,
        Probes, //
    },
    uapi::{
        self,
        Blame as BlameReport,
        Config,
        Record,
        Stage, //
    },
};

/// Transitions each CPU's timeline keeps: enough for the switches and
/// interrupts of tens of milliseconds on a busy CPU (each timer tick is
/// four: its IRQ, its hrtimer, and back); what is older is reported
/// unknown. About 15 KiB per CPU of the session.
const TIMELINE: usize = 256;

// SAFETY: All zero bytes are a valid `Tracker`, the empty one
// ([`Tracker::new`]; its test `zeroed_is_new`): integers, `false`, and a
// [`Kind`] whose zero is `Unknown`.
unsafe impl<const N: usize> Zeroable for Tracker<N> {}

// SAFETY: All zero bytes are a valid `Tally`, the empty one ([`Tally::new`];
// its test `zeroed_tally_and_excerpt_are_empty`): integers, and sources
// whose [`Kind`] is `Unknown` at zero.
unsafe impl Zeroable for Tally {}

// SAFETY: All zero bytes are a valid `Excerpt`, an empty tally's
// ([`Excerpt::EMPTY`]; the same test): integers, `false`, and sources whose
// [`Kind`] is `Unknown` at zero.
unsafe impl Zeroable for Excerpt {}

/// An empty tally, written in place: at 5 KiB it is too large to build on
/// a kernel stack and move.
pub(crate) fn new_tally() -> impl Init<Tally> {
    pin_init::init_zeroed()
}

/// The timeline of each CPU of the session, fed by the probes.
pub(crate) struct Timelines {
    /// None for a CPU outside the session.
    cpus: CpuSetIrq<Tracker<TIMELINE>>,
}

impl ProbeHandler for Timelines {
    fn event(&self, irqs: &IrqsOff, at: i64, event: Event) {
        // (`None`: a CPU outside the session, which the probes leave out
        // already; or the CPU's task context reads its timeline right now,
        // with interrupts off; no probe can run then but an NMI's, which
        // these tracepoints are not.)
        self.cpus.with(irqs, |t| t.event(at, event));
    }
}

/// A session's blame: its timelines and their probes from START, and
/// each CPU's tally.
#[pin_data]
pub(crate) struct Blame {
    /// The session's CPUs.
    cpus: KVec<u32>,
    /// Allocated by the first [`Self::attach`] (a session starts once),
    /// kept until the session goes: read without a lock by the tasks that
    /// explain, which run only after it.
    timelines: SetOnce<Arc<Timelines>>,
    /// Thread latencies from this many ns on are explained.
    threshold_ns: i64,
    /// Registered from START to stop.
    #[pin]
    probes: TaskMutex<Option<Probes<Timelines>>>,
}

impl Blame {
    /// The blame of a session of `config` on `cpus`, if it asks for it.
    /// Allocates neither the timelines nor the probes: [`Self::attach`].
    pub(crate) fn new(config: &Config, cpus: &[u32]) -> Result<Option<Pin<KBox<Self>>>> {
        if config.flags & uapi::CFG_BLAME == 0 {
            return Ok(None);
        }
        let mut ids = KVec::with_capacity(cpus.len(), GFP_KERNEL_ACCOUNT)?;
        ids.extend_from_slice(cpus, GFP_KERNEL_ACCOUNT)?;
        let b = KBox::pin_init(
            try_pin_init!(Self {
                cpus: ids,
                timelines: SetOnce::new(),
                threshold_ns: i64::from(config.blame_us) * 1000,
                probes <- crate::new_task_mutex!(None),
            }),
            GFP_KERNEL,
        )?;
        Ok(Some(b))
    }

    /// Allocates the timelines of the session's CPUs, charged to the
    /// caller's memory cgroup, unless they are, and registers the probes
    /// (START) for those CPUs only, unless they are; true if it did.
    /// Sleeps, and takes the CPU hotplug lock: not under it.
    pub(crate) fn attach(&self, ctx: &Sleepable) -> Result<bool> {
        let mut p = self.probes.lock(ctx);
        if p.is_some() {
            return Ok(false);
        }
        if self.timelines.as_ref().is_none() {
            let t = Arc::new(
                Timelines {
                    cpus: CpuSetIrq::new_zeroed(&self.cpus, GFP_KERNEL_ACCOUNT)?,
                },
                GFP_KERNEL_ACCOUNT,
            )?;
            // (Under `probes`' lock: no other attach populates it.)
            self.timelines.populate(t);
        }
        let t = self.timelines.as_ref().ok_or(ENOMEM)?;
        *p = Some(Probes::attach(t.clone(), &self.cpus, ctx)?);
        Ok(true)
    }

    /// Unregisters the probes (stop), waiting until none runs. Sleeps, and
    /// takes the CPU hotplug lock: not under it.
    pub(crate) fn detach(&self, ctx: &Sleepable) {
        let p = self.probes.lock(ctx).take();
        drop(p);
    }

    /// Explains `rec` into `tally`, its CPU's, if its thread latency
    /// reaches the threshold. Called by the task that measured it, just
    /// after, on its CPU (else nothing is explained: its CPU's timeline is
    /// out of reach); that task's own time is named the measurement's
    /// ([`Kind::Measure`]); `stack` gives what its hard IRQ interrupted,
    /// read on its CPU with interrupts off. Sleeps (the tally's lock).
    pub(crate) fn note(
        &self,
        ctx: &Sleepable,
        tally: &TaskMutex<Tally>,
        rec: &Record,
        stack: impl FnOnce(&IrqsOff, u64) -> ([u64; STACK_DEPTH], usize),
    ) {
        let (irq, thread) = (rec.lat_ns[Stage::Irq], rec.lat_ns[Stage::Thread]);
        if thread < self.threshold_ns || irq < 0 || thread < irq {
            return;
        }
        let Some(timelines) = self.timelines.as_ref() else {
            return;
        };
        let expected = rec.expected_ns as i64;
        let a = with_irqs_off(|irqs| {
            if irqs.cpu() != rec.cpu {
                return None;
            }
            let a = timelines.cpus.with(irqs, |t| {
                Analysis::explain(t, rec.seq, expected, irq, thread)
            })?;
            Some((a, stack(irqs, rec.seq)))
        });
        if let Some((mut a, (stack, stack_n))) = a {
            // (The caller measured it: its own time is the measurement's.
            // Its id through the shim: the kernel crate's `Task::pid()` read
            // another field in the debug kernels' modules.)
            a.measured_by(current_tid() as u64);
            a.stack = stack;
            a.stack_n = stack_n;
            tally.lock(ctx).add(&a);
        }
    }

    /// `RTLAT_IOC_BLAME`'s answer to `req` from its CPU's `tally`, hrtimer
    /// callbacks named (whole if `buf` is of the current layout: kallsyms'
    /// symbol, a Rust one mangled; user space demangles), into `buf`. Under the tally's lock only what the
    /// request asks for is copied ([`Tally::excerpt`]: its rank's worst
    /// activation of five), into memory had before; it is named and
    /// encoded after: the measuring task that takes the lock next never
    /// waits for an allocation, a symbol lookup, or the encoding.
    pub(crate) fn report(
        ctx: &Sleepable,
        req: uapi::BlameRequest,
        tally: &TaskMutex<Tally>,
        buf: &mut [u8],
    ) -> Result {
        // (Zeroed in place: 1.9 KiB, too large for the kernel's stack.)
        let mut copy = KBox::<Excerpt>::zeroed(GFP_KERNEL)?;
        tally.lock(ctx).excerpt(req.rank as usize, &mut copy);
        let name = |s: &Source, buf: &mut [u8]| {
            if s.kind == Kind::Timer && s.aux != 0 {
                symbol_name(s.aux, false, buf, ctx);
            }
        };
        let frame = |pc: u64, buf: &mut [u8; uapi::BLAME_FRAME_LEN]| {
            symbol_name(pc, true, buf, ctx);
        };
        BlameReport::encode_excerpt(req, &mut copy, name, frame, buf);
        Ok(())
    }
}
