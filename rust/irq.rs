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
//! [`ThreadedIrq`] registers such a pair for an [`IrqHandler`]:
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

use core::marker::PhantomPinned;

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_ulong,
        c_void, //
    },
    prelude::*,
    str::CStr,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    types::Opaque,
};

use super::{
    context::{
        HardIrq,
        Sleepable, //
    },
    ffi, //
};

/// What the hard-IRQ half decided.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum HardIrqReturn {
    /// Not this device's interrupt (shared line).
    None = 0,
    /// Handled completely.
    Handled = 1,
    /// Handled; run the thread half.
    WakeThread = 2,
}

/// The two halves of a device interrupt handler.
pub(crate) trait IrqHandler: Sync {
    /// Hard-IRQ context: bounded work only.
    fn hard(&self, irq: &HardIrq<'_>) -> HardIrqReturn;

    /// The IRQ thread; true if it handled something.
    fn thread(&self, ctx: &Sleepable<'_>) -> bool;

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
    fn apply(&self) {
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

/// A registered pair of interrupt handlers; dropping it frees the
/// interrupt, after waiting for running handlers.
///
/// # Invariants
///
/// `ops` was registered with `rtrs_request_threaded_irq` for `irq`, with
/// `ops.data` pointing to `self`, and stays registered until `drop`.
#[pin_data(PinnedDrop)]
pub(crate) struct ThreadedIrq<T: IrqHandler> {
    ops: Opaque<ffi::IrqOps>,
    irq: u32,
    handler: T,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: The raw pointer in `ops` points to `self`; the handler is `Sync`.
unsafe impl<T: IrqHandler + Send> Send for ThreadedIrq<T> {}
// SAFETY: As above.
unsafe impl<T: IrqHandler> Sync for ThreadedIrq<T> {}

impl<T: IrqHandler> ThreadedIrq<T> {
    /// Requests `irq` for `handler`. `shared`: the line may be shared (INTx).
    ///
    /// # Safety
    ///
    /// `irq` stays a valid interrupt of the device (its vectors stay
    /// allocated) until the returned value is dropped, and the value is not
    /// leaked (`mem::forget`).
    pub(crate) unsafe fn new(
        irq: u32,
        shared: bool,
        name: &'static CStr,
        handler: T,
    ) -> impl PinInit<Self, Error> {
        let flags = bindings::IRQF_ONESHOT | if shared { bindings::IRQF_SHARED } else { 0 };
        try_pin_init!(&this in Self {
            ops: Opaque::new(ffi::IrqOps {
                hard: hard_trampoline::<T>,
                thread: thread_trampoline::<T>,
                data: this.as_ptr().cast::<c_void>(),
            }),
            irq,
            handler,
            _pin: PhantomPinned,
            _: {
                // SAFETY: Every field is initialised, so the handlers may run
                // at once; `ops` and `self` stay pinned and alive until
                // `drop` frees the interrupt; `irq` is valid (caller).
                kernel::error::to_result(unsafe {
                    ffi::rtrs_request_threaded_irq(
                        *irq,
                        (*this.as_ptr()).ops.get(),
                        flags as c_ulong,
                        name.as_char_ptr(),
                    )
                })?;
            },
        }? Error)
    }

    /// The handler.
    pub(crate) fn handler(&self) -> &T {
        &self.handler
    }

    /// The interrupt number.
    pub(crate) fn irq(&self) -> u32 {
        self.irq
    }
}

#[pinned_drop]
impl<T: IrqHandler> PinnedDrop for ThreadedIrq<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered with these arguments (type invariant); waits
        // for running handlers, so none refers to `self` afterwards.
        unsafe { ffi::rtrs_free_irq(self.irq, self.ops.get()) };
    }
}

/// # Safety
///
/// Called by the shim's primary handler in hard-IRQ context with the `data`
/// of a registered [`ThreadedIrq<T>`].
unsafe extern "C" fn hard_trampoline<T: IrqHandler>(data: *mut c_void) -> c_int {
    // SAFETY: `data` points to the registered, pinned `ThreadedIrq<T>`,
    // which outlives the registration (type invariant).
    let this = unsafe { &*data.cast::<ThreadedIrq<T>>() };
    // SAFETY: The primary handler of an `IRQF_ONESHOT` interrupt runs in
    // hard-IRQ context, also on PREEMPT_RT; the token is only borrowed.
    let irq = unsafe { HardIrq::new() };
    this.handler.hard(&irq) as c_int
}

/// # Safety
///
/// Called by the shim in the IRQ thread with the `data` of a registered
/// [`ThreadedIrq<T>`].
unsafe extern "C" fn thread_trampoline<T: IrqHandler>(data: *mut c_void) -> c_int {
    // SAFETY: As in `hard_trampoline`.
    let this = unsafe { &*data.cast::<ThreadedIrq<T>>() };
    this.handler.irq_thread().apply();
    // SAFETY: IRQ threads run in task context and may sleep.
    let ctx = unsafe { Sleepable::assume() };
    if this.handler.thread(&ctx) {
        HardIrqReturn::Handled as c_int
    } else {
        HardIrqReturn::None as c_int
    }
}
