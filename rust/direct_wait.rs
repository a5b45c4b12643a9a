// SPDX-License-Identifier: GPL-2.0

//! One task blocked until a hard IRQ hands it an event and wakes it itself.
//!
//! A [`DirectWait`] is a slot for one waiting task. The waiter publishes
//! itself and sleeps ([`DirectWait::wait`]); a hard-IRQ callback claims it
//! ([`DirectWait::claim`]), publishes the event and wakes it with
//! `wake_up_process` ([`Claimed::wake`]): one
//! wake-up between the interrupt and the waiter, as a timer's own sleeper
//! gets (`hrtimer_wakeup`), and no wait queue, whose lock sleeps on
//! PREEMPT_RT. Whoever empties the slot owns the outcome: the hard IRQ when
//! it claims, the waiter when it withdraws (a signal, or the caller's stop
//! condition), so an event is never both handed and withdrawn.
//!
//! The task is woken through a pointer that is read under RCU, as the
//! kernel's `rcuwait` does: the waiter is in the slot only while it is
//! inside [`DirectWait::wait`], and a task's memory is freed no earlier than
//! a grace period after it exits.

use kernel::{
    bindings,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Full,
            Relaxed,
            Release, //
        },
        rcu,
    },
    task::Task,
};

use super::{
    context::{
        HardIrq,
        Sleepable, //
    },
    ffi, //
};

/// How a [`DirectWait::wait`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waited {
    /// A hard IRQ claimed the waiter: the event is the waiter's to handle,
    /// even if a signal or the stop condition came at the same time.
    Claimed,
    /// The caller's stop condition became true; the waiter withdrew.
    Stopped,
    /// A signal is pending; the waiter withdrew.
    Interrupted,
}

/// A waiter a hard IRQ claimed, to be woken.
///
/// # Invariants
///
/// `task` was alive when it was claimed, inside the RCU read-side critical
/// section `_rcu` still holds: its memory stays until `_rcu` is dropped.
pub(crate) struct Claimed<'a> {
    task: *mut bindings::task_struct,
    _rcu: rcu::Guard,
    _irq: &'a HardIrq,
}

impl Claimed<'_> {
    /// Wakes the claimed task (`wake_up_process`: raw locks only).
    pub(crate) fn wake(self) {
        // SAFETY: By the type invariant the task's memory is valid while
        // `self` (and its RCU read-side section) lives.
        unsafe { bindings::wake_up_process(self.task) };
    }
}

/// A slot for one task waiting for a hard IRQ to claim and wake it.
///
/// # Invariants
///
/// `task` is null, or the task blocked in [`DirectWait::wait`] on this slot,
/// which leaves that function only after the slot is null again.
pub(crate) struct DirectWait {
    task: Atomic<*mut bindings::task_struct>,
}

impl DirectWait {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        Self {
            task: Atomic::new(core::ptr::null_mut()),
        }
    }

    /// True if a task is waiting in the slot now.
    pub(crate) fn is_waiting(&self) -> bool {
        !self.task.load(Relaxed).is_null()
    }

    /// In a hard IRQ: claims the waiting task, if there is one. The caller
    /// publishes the event, then wakes it ([`Claimed::wake`]). A waiter on
    /// the interrupt's CPU cannot run in between; one on another CPU can
    /// see itself claimed before the event is published, and must not take
    /// it from there (rtlat's waiter checks its CPU first).
    pub(crate) fn claim<'a>(&self, irq: &'a HardIrq) -> Option<Claimed<'a>> {
        let guard = rcu::read_lock();
        let task = self.task.xchg(core::ptr::null_mut(), Full);
        // INVARIANT: The task was in `wait` when it was in the slot (the
        // type invariant), so alive at the exchange; `guard` is held.
        (!task.is_null()).then_some(Claimed {
            task,
            _rcu: guard,
            _irq: irq,
        })
    }

    /// Any context: wakes the waiting task without claiming it, so that it
    /// tests its stop condition again. The caller sets that condition, then
    /// calls this.
    pub(crate) fn kick(&self) {
        let _rcu = rcu::read_lock();
        // Pairs with the barrier of `set_current_state` in `wait`: either
        // the waiter sees the condition, or this sees the waiter.
        // SAFETY: A full barrier; no precondition.
        unsafe { ffi::rtrs_smp_mb() };
        let task = self.task.load(Acquire);
        if !task.is_null() {
            // SAFETY: By the type invariant the task was in `wait`, so alive,
            // at the load; its memory outlives this RCU read-side section.
            unsafe { bindings::wake_up_process(task) };
        }
    }

    /// Blocks the current task until a hard IRQ claims it, `stop()` is
    /// true, or a signal is pending. One waiter at a time: the caller
    /// guarantees that no other task waits on this slot meanwhile.
    pub(crate) fn wait(&self, _ctx: &Sleepable, stop: impl Fn() -> bool) -> Waited {
        // INVARIANT: The current task is in `wait` until the slot is null:
        // it leaves below only after a claim emptied it, or after emptying it
        // itself.
        self.task.store(Task::current_raw(), Release);
        let why = loop {
            // SAFETY: Task context; sets the current task's state with a
            // full barrier before the tests below.
            unsafe { ffi::rtrs_set_current_interruptible() };
            if self.task.load(Acquire).is_null() {
                break Waited::Claimed;
            }
            if stop() {
                break Waited::Stopped;
            }
            if kernel::current!().signal_pending() {
                break Waited::Interrupted;
            }
            // SAFETY: Task context, may sleep; the state was set above.
            unsafe { bindings::schedule() };
        };
        // SAFETY: As above.
        unsafe { ffi::rtrs_set_current_running() };
        if why == Waited::Claimed {
            return why;
        }
        // Withdraw, unless a claim came first: then the event is ours.
        if self.task.xchg(core::ptr::null_mut(), Acquire).is_null() {
            Waited::Claimed
        } else {
            why
        }
    }
}
