// SPDX-License-Identifier: GPL-2.0

//! Context tokens: zero-sized proofs of the execution context.
//!
//! On PREEMPT_RT, `spinlock_t` ([`kernel::sync::SpinLock`]) and `mutex`
//! sleep, and the memory allocator takes sleeping locks. Code that runs in
//! hard-IRQ context (hard-mode hrtimer callbacks, `IRQF_NO_THREAD` handlers)
//! must not reach any of them. This module makes the distinction visible in
//! types:
//!
//! - [`HardIrq`] is handed to hard-IRQ callbacks by the entry points of this
//!   layer ([`hard_timer!`](crate::hard_timer), `rtrs::irq`); it
//!   proves that interrupts are off and the CPU is pinned, so it unlocks
//!   per-CPU access ([`crate::rtrs::percpu`]) and lends [`IrqsOff`] to raw
//!   spinlocks.
//! - [`Sleepable`] proves that the code may sleep. Only task-context entry
//!   points receive one; creating one anywhere else needs `unsafe`. The
//!   sleeping primitives of this layer ([`crate::rtrs::sync`]) require it, so
//!   a hard-IRQ callback that tries to take one does not compile.
//!
//! The kernel's own sleeping APIs (`SpinLock::lock`, `KBox::new`, ...) take no
//! token; misuse of those is caught at run time by lockdep
//! (`CONFIG_PROVE_RAW_LOCK_NESTING`, `CONFIG_DEBUG_ATOMIC_SLEEP`), which the
//! test suite runs under.

use kernel::types::NotThreadSafe;

use super::ffi;

/// Proof that the holder runs in hard-IRQ context: interrupts are disabled,
/// the code is not preemptible and stays on its CPU.
///
/// Only ever handed out as `&HardIrq`, for the duration of a callback (by
/// [`hard_timer!`](crate::hard_timer) and `rtrs::irq`); it cannot be
/// kept past it, sent to another thread (`NotThreadSafe`) or made without
/// `unsafe` ([`Self::assume_hardirq`]). It lends [`IrqsOff`], which raw
/// spinlocks accept, and nothing a sleeping lock accepts.
///
/// # Invariants
///
/// While a `&HardIrq` is alive, the current CPU runs in hard-IRQ context.
pub(crate) struct HardIrq(NotThreadSafe);

impl HardIrq {
    /// Assumes hard-IRQ context for `'a` (checked with
    /// `CONFIG_RUST_DEBUG_ASSERTIONS`).
    ///
    /// # Safety
    ///
    /// For the whole of `'a`, the current CPU runs in hard-IRQ context (an
    /// hrtimer callback of a hard mode, a primary interrupt handler).
    #[inline]
    pub(crate) unsafe fn assume_hardirq<'a>() -> &'a HardIrq {
        const HARD_IRQ: &HardIrq = &HardIrq(NotThreadSafe);
        // SAFETY: Reading the preempt count has no precondition.
        debug_assert!(unsafe { ffi::rtrs_in_hardirq() });
        // INVARIANT: guaranteed by the caller.
        HARD_IRQ
    }

    /// The CPU this interrupt runs on.
    #[inline]
    pub(crate) fn cpu(&self) -> u32 {
        // SAFETY: Hard-IRQ context pins the CPU (type invariant).
        unsafe { ffi::rtrs_smp_processor_id() }
    }

    /// The stack of the code this interrupt interrupted, its instruction
    /// pointer first, into `store`; how many entries (0: it interrupted user
    /// space). Unwinds: some microseconds.
    pub(crate) fn interrupted_stack(&self, store: &mut [u64]) -> usize {
        let size = u32::try_from(store.len()).unwrap_or(u32::MAX);
        // SAFETY: In hard-IRQ context (type invariant); `store` has room for
        // `size` entries of an `unsigned long`'s size (64-bit only).
        unsafe { ffi::rtrs_irq_stack(store.as_mut_ptr().cast(), size) as usize }
    }

    /// Interrupts are off for as long as this token is borrowed: what a raw
    /// spinlock needs to be taken without saving and restoring them
    /// ([`crate::rtrs::raw_spinlock::LockIrqsOff`]).
    #[inline]
    pub(crate) fn irqs_off(&self) -> &IrqsOff {
        // SAFETY: Hard-IRQ context runs with interrupts off (type
        // invariant), for as long as `self` is borrowed.
        unsafe { IrqsOff::assume_off() }
    }
}

/// Proof that local interrupts are disabled.
///
/// The rtrs twin of `kernel::interrupt::LocalInterruptDisabled`, which this
/// layer does not lend: that one also unlocks `SpinLockIrq::lock_with`,
/// and a `SpinLockIrq` is an rt_mutex on PREEMPT_RT, which must not be
/// taken with interrupts off. Only raw spinlocks accept an `IrqsOff`.
///
/// # Invariants
///
/// While a `&IrqsOff` is alive, local interrupts are disabled.
pub(crate) struct IrqsOff(NotThreadSafe);

impl IrqsOff {
    /// Assumes interrupts are off for `'a` (checked with
    /// `CONFIG_RUST_DEBUG_ASSERTIONS`).
    ///
    /// # Safety
    ///
    /// For the whole of `'a`, local interrupts are disabled.
    #[inline]
    pub(crate) unsafe fn assume_off<'a>() -> &'a IrqsOff {
        const IRQS_OFF: &IrqsOff = &IrqsOff(NotThreadSafe);
        // SAFETY: Reading the interrupt state has no precondition.
        debug_assert!(unsafe { ffi::rtrs_irqs_disabled() });
        // INVARIANT: guaranteed by the caller.
        IRQS_OFF
    }
}

/// Proof that the holder was entered in task context where it may sleep:
/// preemptible, interrupts enabled, no raw spinlock held.
///
/// Handed out as `&Sleepable` by the task-context entry points of the layer
/// (kernel threads, IRQ threads, hotplug callbacks, file operations through
/// `file::FileOps`, work items through `impl_task_work!`, a PCI driver's
/// callbacks through `pci::sleepable`, a module's initialiser through
/// `module::TaskModule`), each minting it once with
/// [`Self::assume_sleepable`]; `rtlat`, `rtedu` and the samples mint none
/// (`scripts/style-check` fails on it). Not `Send`, not kept past the call.
///
/// What the type does not cover: code holding the token can still enter an
/// atomic section (a raw spinlock, a preemption or migration guard) and call
/// something that takes `&Sleepable` there. That is caught at run time by
/// `CONFIG_DEBUG_ATOMIC_SLEEP` and lockdep, under which the suite runs.
///
/// # Invariants
///
/// The entry point that lent a `&Sleepable` runs in a context that may
/// sleep.
pub(crate) struct Sleepable(NotThreadSafe);

impl Sleepable {
    /// Assumes a sleepable context for `'a`. Under
    /// `CONFIG_DEBUG_ATOMIC_SLEEP` the claim is checked with `might_sleep()`.
    ///
    /// # Safety
    ///
    /// The caller is an entry point that runs in task context where sleeping
    /// is allowed (not in an atomic section: raw spinlock, preemption or
    /// interrupts disabled), for the whole of `'a`.
    #[inline]
    #[track_caller]
    pub(crate) unsafe fn assume_sleepable<'a>() -> &'a Sleepable {
        const SLEEPABLE: &Sleepable = &Sleepable(NotThreadSafe);
        kernel::task::might_sleep();
        // INVARIANT: guaranteed by the caller.
        SLEEPABLE
    }
}

/// The context a record is produced in, as its producer proves it: the
/// record path ([`crate::rtrs::measure`]) runs in both, and takes its raw
/// locks without saving the interrupt state in the first.
#[derive(Clone, Copy)]
pub(crate) enum Producer<'a> {
    /// A hard-IRQ callback.
    HardIrq(&'a HardIrq),
    /// A task (a kernel thread, an IRQ thread, a file operation).
    Task(&'a Sleepable),
}

/// Types whose existence proves the current task cannot migrate to another
/// CPU (and so may use this CPU's per-CPU data).
///
/// # Safety
///
/// While a value of the implementing type is borrowed, the current context
/// stays on the CPU it runs on.
pub(crate) unsafe trait CpuPinned {
    /// The CPU the context is pinned to.
    fn cpu(&self) -> u32;
}

// SAFETY: Hard-IRQ context does not migrate (type invariant of `HardIrq`).
unsafe impl CpuPinned for HardIrq {
    fn cpu(&self) -> u32 {
        HardIrq::cpu(self)
    }
}

// SAFETY: With local interrupts off the context can be neither preempted nor
// migrated (type invariant of `IrqsOff`).
unsafe impl CpuPinned for IrqsOff {
    fn cpu(&self) -> u32 {
        // SAFETY: Interrupts are off, so the CPU number stays valid.
        unsafe { ffi::rtrs_smp_processor_id() }
    }
}

/// Marker for the hrtimer modes whose callbacks run in hard-IRQ context, also
/// on PREEMPT_RT. The other modes expire in the softirq thread on RT.
pub(crate) trait HardMode {}

impl<C: kernel::time::ClockSource> HardMode for kernel::time::hrtimer::AbsoluteHardMode<C> {}
impl<C: kernel::time::ClockSource> HardMode for kernel::time::hrtimer::RelativeHardMode<C> {}
impl<C: kernel::time::ClockSource> HardMode for kernel::time::hrtimer::AbsolutePinnedHardMode<C> {}
impl<C: kernel::time::ClockSource> HardMode for kernel::time::hrtimer::RelativePinnedHardMode<C> {}

/// An hrtimer callback that runs in hard-IRQ context and receives a
/// [`HardIrq`] token. Implement it and declare the timer with
/// [`hard_timer!`](crate::hard_timer).
pub(crate) trait HardTimerCallback: Sized {
    /// The pointer type the timer is started through (as in
    /// [`kernel::time::hrtimer::HrTimerCallback::Pointer`]).
    type Pointer<'a>: kernel::time::hrtimer::RawHrTimerCallback;

    /// Called in hard-IRQ context when the timer expires.
    fn run(
        this: <Self::Pointer<'_> as kernel::time::hrtimer::RawHrTimerCallback>::CallbackTarget<'_>,
        ctx: kernel::time::hrtimer::HrTimerCallbackContext<'_, Self>,
        irq: &HardIrq,
    ) -> kernel::time::hrtimer::HrTimerRestart
    where
        Self: kernel::time::hrtimer::HasHrTimer<Self>;
}

/// Starts `this`'s hard-mode timer to expire at `expires_ns` (absolute, on
/// the mode's clock), without taking a reference to `this`. Any context.
///
/// # Safety
///
/// `this` stays alive and pinned until its timer has been cancelled with
/// [`cancel_hard_timer`] (for example in its drop).
pub(crate) unsafe fn start_hard_timer<T>(this: &T, expires_ns: i64)
where
    T: kernel::time::hrtimer::HasHrTimer<T>,
    T::TimerMode: HardMode,
{
    use kernel::time::hrtimer::{
        HasHrTimer,
        HrTimerMode, //
    };
    // SAFETY: `this` points to a live, pinned `T` whose timer was initialised
    // by its pin-initialiser; the caller keeps it so until the timer is
    // cancelled.
    unsafe {
        kernel::bindings::hrtimer_start_range_ns(
            <T as HasHrTimer<T>>::c_timer_ptr(this).cast_mut(),
            expires_ns,
            0,
            <T::TimerMode as HrTimerMode>::C_MODE,
        )
    };
}

/// Cancels `this`'s timer: afterwards it is not armed and its callback is
/// not running (waits for a running one). Cancelling a timer that is not
/// armed does nothing. Task context.
pub(crate) fn cancel_hard_timer<T>(this: &T)
where
    T: kernel::time::hrtimer::HasHrTimer<T>,
    T::TimerMode: HardMode,
{
    // SAFETY: `this` is a live `T` whose timer was initialised by its
    // pin-initialiser.
    unsafe {
        kernel::bindings::hrtimer_cancel(
            <T as kernel::time::hrtimer::HasHrTimer<T>>::c_timer_ptr(this).cast_mut(),
        )
    };
}

/// Declares the hrtimer field of a type whose [`HardTimerCallback`] runs in
/// hard-IRQ context. Refuses, at compile time, a mode that is not a hard mode.
///
/// ```ignore
/// hard_timer! {
///     impl for Sampler { mode: AbsolutePinnedHardMode<Monotonic>, field: self.timer }
/// }
/// ```
#[macro_export]
macro_rules! hard_timer {
    (impl for $t:ty { mode: $mode:ty, field: self.$field:ident $(,)? }) => {
        const _: () = {
            const fn require_hard_mode<M: $crate::rtrs::context::HardMode>() {}
            require_hard_mode::<$mode>();
        };

        impl ::kernel::time::hrtimer::HrTimerCallback for $t {
            type Pointer<'a> = <$t as $crate::rtrs::context::HardTimerCallback>::Pointer<'a>;

            fn run(
                this: <Self::Pointer<'_> as ::kernel::time::hrtimer::RawHrTimerCallback>::CallbackTarget<'_>,
                ctx: ::kernel::time::hrtimer::HrTimerCallbackContext<'_, Self>,
            ) -> ::kernel::time::hrtimer::HrTimerRestart {
                // SAFETY: The mode is a hard mode (checked above), so the
                // callback runs in hard-IRQ context, also on PREEMPT_RT; the
                // token is only borrowed for the duration of the callback.
                let irq = unsafe { $crate::rtrs::context::HardIrq::assume_hardirq() };
                <$t as $crate::rtrs::context::HardTimerCallback>::run(this, ctx, irq)
            }
        }

        ::kernel::impl_has_hr_timer! {
            impl HasHrTimer<$t> for $t { mode: $mode, field: self.$field }
        }
    };
}
