// SPDX-License-Identifier: GPL-2.0

//! Preemption and migration guards, and what the current context is (hard
//! IRQ, preemptible, interrupts off).
//!
//! - [`PreemptGuard`] (`preempt_disable`): nothing else runs on this CPU
//!   until it is dropped, except interrupts. On PREEMPT_RT this is a latency
//!   cost for every higher-priority task: use it for a few instructions only,
//!   never around sleeping calls or allocation.
//! - [`MigrateGuard`] (`migrate_disable`): the task stays on this CPU but can
//!   be preempted. This is what PREEMPT_RT uses under sleeping spinlocks, and
//!   the right way to keep using one CPU's data over a longer section when the
//!   data is protected otherwise (atomics, a local lock).
//!
//! Both pin the CPU, so both unlock per-CPU access
//! ([`CpuPinned`](super::context::CpuPinned)). Neither is `Send`: it must be
//! dropped by the task that made it.

use core::marker::PhantomData;

use super::{
    context::{
        CpuPinned,
        IrqsOff, //
    },
    ffi, //
};

/// Preemption disabled while this guard lives.
///
/// # Invariants
///
/// `preempt_disable()` was called by the current task when the guard was
/// created and is undone when it is dropped.
pub(crate) struct PreemptGuard {
    _not_send: PhantomData<*mut ()>,
}

impl PreemptGuard {
    /// Disables preemption.
    #[inline]
    pub(crate) fn new() -> Self {
        // SAFETY: Always allowed; balanced in `drop`.
        unsafe { ffi::rtrs_preempt_disable() };
        // INVARIANT: just disabled.
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Default for PreemptGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PreemptGuard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: Balances the `preempt_disable()` of `new` (type invariant).
        unsafe { ffi::rtrs_preempt_enable() };
    }
}

// SAFETY: With preemption disabled the task cannot migrate.
unsafe impl CpuPinned for PreemptGuard {
    #[inline]
    fn cpu(&self) -> u32 {
        // SAFETY: Preemption is disabled.
        unsafe { ffi::rtrs_smp_processor_id() }
    }
}

/// Migration disabled while this guard lives: the task stays on its CPU but
/// remains preemptible.
///
/// # Invariants
///
/// `migrate_disable()` was called by the current task when the guard was
/// created and is undone when it is dropped.
pub(crate) struct MigrateGuard {
    _not_send: PhantomData<*mut ()>,
}

impl MigrateGuard {
    /// Disables migration of the current task.
    #[inline]
    pub(crate) fn new() -> Self {
        // SAFETY: Always allowed in task context; balanced in `drop`.
        unsafe { ffi::rtrs_migrate_disable() };
        // INVARIANT: just disabled.
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Default for MigrateGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for MigrateGuard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: Balances the `migrate_disable()` of `new` (type invariant).
        unsafe { ffi::rtrs_migrate_enable() };
    }
}

// SAFETY: With migration disabled the task stays on its CPU.
unsafe impl CpuPinned for MigrateGuard {
    #[inline]
    fn cpu(&self) -> u32 {
        // SAFETY: Migration is disabled, so the CPU number stays valid.
        unsafe { ffi::rtrs_smp_processor_id() }
    }
}

/// Runs `f` with local interrupts disabled (`local_irq_save`/`restore`;
/// on PREEMPT_RT too): nothing else runs on this CPU meanwhile, not even an
/// interrupt, and `f` gets the proof ([`IrqsOff`], which pins the CPU).
/// For a few instructions only, as [`PreemptGuard`], and never around
/// sleeping calls or allocation. A closure, not a guard: interrupt states
/// are saved and restored, not counted, so guards dropped out of order
/// would turn interrupts on under a live proof.
#[inline]
pub(crate) fn with_irqs_off<R>(f: impl FnOnce(&IrqsOff) -> R) -> R {
    // SAFETY: Always allowed; restored below, in the same scope.
    let flags = unsafe { ffi::rtrs_local_irq_save() };
    // SAFETY: Interrupts are off until the restore below, after `f`, which
    // cannot keep the reference (it is only lent for the call).
    let r = f(unsafe { IrqsOff::assume_off() });
    // SAFETY: Restores what was saved above.
    unsafe { ffi::rtrs_local_irq_restore(flags) };
    r
}

/// True when called in hard-IRQ context.
#[inline]
pub(crate) fn in_hardirq() -> bool {
    // SAFETY: Reads the preempt count; no precondition.
    unsafe { ffi::rtrs_in_hardirq() }
}

/// True when called in task context: no hard or soft interrupt, no NMI
/// (a BH workqueue's items run in softirq, for instance).
#[inline]
pub(crate) fn in_task() -> bool {
    // SAFETY: Reads the preempt count; no precondition.
    unsafe { ffi::rtrs_in_task() }
}

/// True when the current context may be preempted.
#[inline]
pub(crate) fn preemptible() -> bool {
    // SAFETY: Reads the preempt count and IRQ state; no precondition.
    unsafe { ffi::rtrs_preemptible() }
}

/// True when local interrupts are disabled.
#[inline]
pub(crate) fn irqs_disabled() -> bool {
    // SAFETY: Reads the IRQ state; no precondition.
    unsafe { ffi::rtrs_irqs_disabled() }
}
