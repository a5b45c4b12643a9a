// SPDX-License-Identifier: GPL-2.0

//! Device interrupts on PREEMPT_RT: a bounded hard-IRQ half and an IRQ
//! thread at a chosen SCHED_FIFO priority.
//!
//! On PREEMPT_RT every interrupt handler is force-threaded unless it says
//! otherwise: `request_irq()` handlers run in an `irq/<n>-<name>` thread at
//! SCHED_FIFO 50, where they may take `spinlock_t` (which sleeps there). A
//! driver that wants to timestamp or acknowledge its device *in* the
//! interrupt requests a primary handler and a thread handler with
//! `IRQF_ONESHOT`: the primary handler then stays in hard-IRQ context, the
//! thread handler runs in the IRQ thread, and the line stays masked until
//! the thread is done. (`IRQF_NO_THREAD` would keep it in hard IRQ too, but
//! a shared INTx line is refused when its handlers disagree about
//! `IRQF_ONESHOT`, and force-threaded handlers on the line have it.)
//!
//! [`ThreadedIrq`] holds the kernel crate's `irq::ThreadedRegistration`,
//! requested with `IRQF_ONESHOT`, for an [`IrqHandler`] behind `RtIrq`,
//! which lends each half its context token (and which only the interrupt
//! core can call: the registration and the adapter are private here, so no
//! other code can make a token by calling a half itself):
//!
//! - [`IrqHandler::hard`] receives a [`HardIrq`] token, so it can only use
//!   what is allowed there: raw spinlocks, atomics, MMIO. It must be short
//!   and bounded: check that the device interrupted, acknowledge it, take a
//!   timestamp, and ask for the thread.
//! - [`IrqHandler::thread`] receives a [`Sleepable`] token: the rest of the
//!   work, with sleeping locks, waking user space.
//!
//! The IRQ thread is moved to the priority held in the handler's
//! [`IrqThread`] (changeable at any time with [`IrqThread::set_priority`])
//! from the thread itself, on its next run, as `chrt -f -p` would.
//!
//! The registration borrows the device's interrupt request for `'bound`
//! (Linux 7.3's interrupt API), so this module is built for 7.3 and later.

use kernel::{
    ffi::c_int,
    irq::{
        Flags,
        IrqRequest,
        IrqReturn,
        ThreadedHandler,
        ThreadedIrqReturn,
        ThreadedRegistration, //
    },
    prelude::*,
    str::CStr,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

use super::{
    context::{
        HardIrq,
        Sleepable, //
    },
    ffi, //
};

/// The two halves of a device interrupt handler.
pub(crate) trait IrqHandler: Sync {
    /// Hard-IRQ context: bounded work only.
    fn hard(&self, irq: &HardIrq) -> ThreadedIrqReturn;

    /// The IRQ thread.
    fn thread(&self, ctx: &Sleepable) -> IrqReturn;

    /// The wanted priority of the IRQ thread, and what it is.
    fn irq_thread(&self) -> &IrqThread;
}

/// The SCHED_FIFO priority wanted for an IRQ thread, the one applied, and
/// the thread's id.
pub(crate) struct IrqThread {
    priority: Atomic<u32>,
    applied: Atomic<u32>,
    tid: Atomic<i32>,
}

impl IrqThread {
    /// Wants SCHED_FIFO `priority`, clamped to 1..=99.
    pub(crate) fn new(priority: u32) -> Self {
        Self {
            priority: Atomic::new(priority.clamp(1, 99)),
            applied: Atomic::new(0),
            tid: Atomic::new(0),
        }
    }

    /// Moves the IRQ thread to SCHED_FIFO `priority` (1..=99) on its next run.
    pub(crate) fn set_priority(&self, priority: u32) -> Result {
        if !(1..=99).contains(&priority) {
            return Err(EINVAL);
        }
        self.priority.store(priority, Relaxed);
        Ok(())
    }

    /// The priority applied to the IRQ thread (0 before its first run).
    pub(crate) fn applied_priority(&self) -> u32 {
        self.applied.load(Relaxed)
    }

    /// The IRQ thread's id (0 before its first run).
    pub(crate) fn tid(&self) -> i32 {
        self.tid.load(Relaxed)
    }

    /// In the IRQ thread: apply the wanted priority if it changed.
    fn apply(&self, _ctx: &Sleepable) {
        let want = self.priority.load(Relaxed);
        if self.applied.load(Relaxed) != want {
            // SAFETY: Changes the current task's policy; task context.
            if unsafe { ffi::rtrs_set_current_fifo(want as c_int) } == 0 {
                self.applied.store(want, Relaxed);
            }
        }
        // SAFETY: Reads the current task's pid; no precondition.
        self.tid.store(unsafe { ffi::rtrs_current_tid() }, Relaxed);
    }
}

/// The kernel's threaded handler for an [`IrqHandler`]: lends the hard half
/// a [`HardIrq`] token and the thread half a [`Sleepable`] one.
///
/// # Invariants
///
/// Private to this module and only ever registered by [`request`], with
/// `IRQF_ONESHOT`, inside a [`ThreadedIrq`] that does not hand it out: its
/// methods are called by the interrupt core only, `handle` as the primary
/// handler in hard-IRQ context (also on PREEMPT_RT), `handle_threaded` in
/// the IRQ thread.
struct RtIrq<T>(T);

impl<T: IrqHandler> ThreadedHandler for RtIrq<T> {
    fn handle(&self) -> ThreadedIrqReturn {
        // SAFETY: Only the interrupt core calls this (type invariant), as
        // the primary handler of an `IRQF_ONESHOT` interrupt, which is not
        // force-threaded: it runs in hard-IRQ context for the whole call,
        // and the token is only borrowed by it.
        let irq = unsafe { HardIrq::assume_hardirq() };
        self.0.hard(irq)
    }

    fn handle_threaded(&self) -> IrqReturn {
        // SAFETY: Only the interrupt core calls this (type invariant), in
        // the IRQ thread: task context, may sleep, for the whole call.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        self.0.irq_thread().apply(ctx);
        self.0.thread(ctx)
    }
}

/// A registered pair of interrupt handlers for `'bound`; dropping it frees
/// the interrupt, after waiting for running handlers.
#[pin_data]
pub(crate) struct ThreadedIrq<'bound, T: IrqHandler> {
    #[pin]
    reg: ThreadedRegistration<'bound, RtIrq<T>>,
}

impl<T: IrqHandler> ThreadedIrq<'_, T> {
    /// The handler.
    pub(crate) fn handler(&self) -> &T {
        &self.reg.handler().0
    }
}

/// Requests `request` for `handler`, with `IRQF_ONESHOT` (the primary
/// handler stays in hard-IRQ context on PREEMPT_RT). `shared`: the line may
/// be shared (INTx).
///
/// # Safety
///
/// The returned registration is not leaked (`mem::forget`): its drop frees
/// the interrupt.
pub(crate) unsafe fn request<'bound, T: IrqHandler + 'bound>(
    request: IrqRequest<'bound>,
    shared: bool,
    name: &'static CStr,
    handler: T,
) -> impl PinInit<ThreadedIrq<'bound, T>, Error> + 'bound {
    let flags = if shared {
        Flags::ONESHOT | Flags::SHARED
    } else {
        Flags::ONESHOT
    };
    try_pin_init!(ThreadedIrq {
        // SAFETY: Not leaked (the caller).
        // INVARIANT: `IRQF_ONESHOT`, and `ThreadedIrq` keeps the registration
        // to itself.
        reg <- unsafe {
            ThreadedRegistration::new(request, flags, name, Ok::<_, Error>(RtIrq(handler)))
        },
    }? Error)
}
