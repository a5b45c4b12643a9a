// SPDX-License-Identifier: GPL-2.0

//! What the measuring code asks of the current task: whether it is the idle
//! task, the one CPU its affinity allows, its right to run RT measurements,
//! and whether a wait of it can be killed; and [`TaskWaker`], a task any
//! context may wake.

use kernel::{
    bindings,
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{
            Acquire,
            Atomic,
            Release, //
        },
    },
    task::Task,
};

use super::{
    context::Sleepable,
    ffi,
    sync::TaskMutex, //
};

/// True if the current task is the idle task (an interrupt taken while idle).
#[inline]
pub(crate) fn current_is_idle() -> bool {
    // SAFETY: Reads `current`; no precondition.
    unsafe { ffi::rtrs_current_is_idle() }
}

/// The CPU the current task's affinity is restricted to, if exactly one.
#[inline]
pub(crate) fn current_pinned_cpu() -> Option<u32> {
    // SAFETY: Reads the current task's affinity; no precondition.
    let cpu = unsafe { ffi::rtrs_current_pinned_cpu() };
    u32::try_from(cpu).ok()
}

/// The current thread's id (`task_pid_nr(current)`).
#[inline]
pub(crate) fn current_tid() -> i32 {
    // SAFETY: Reads `current`; no precondition.
    unsafe { ffi::rtrs_current_tid() }
}

/// True if the caller may run RT measurements (`CAP_SYS_NICE` and `CAP_SYS_ADMIN`).
#[inline]
pub(crate) fn capable_rt() -> bool {
    // SAFETY: Checks the current credentials; no precondition.
    unsafe { ffi::rtrs_capable_rt() }
}

/// True if the caller may run a thread at `SCHED_FIFO` priority `prio`,
/// as `sched_setscheduler()` decides it for its own threads: with
/// `CAP_SYS_NICE`, or within its `RLIMIT_RTPRIO`.
#[inline]
pub(crate) fn rtprio_allows(prio: u32) -> bool {
    // SAFETY: Checks the current credentials and limits; no precondition.
    unsafe { ffi::rtrs_rtprio_allows(prio) }
}

/// True if the caller may change what is global to the machine
/// (`CAP_SYS_ADMIN`).
#[inline]
pub(crate) fn capable_admin() -> bool {
    // SAFETY: Checks the current credentials; no precondition.
    unsafe { ffi::rtrs_capable_admin() }
}

/// True if the caller may see what other tasks ran, their PIDs and names
/// (`CAP_PERFMON` or `CAP_SYS_ADMIN`: what perf asks for the same facts).
#[inline]
pub(crate) fn capable_perfmon() -> bool {
    // SAFETY: Checks the current credentials; no precondition.
    unsafe { ffi::rtrs_capable_perfmon() }
}

/// True if `SIGKILL` can end a killable wait of the current task: a user
/// task that is not exiting. An exiting task (a file closed by `exit()`,
/// or after a fatal signal) gets no signal any more, and a kernel thread
/// (a file's last reference dropped by a worker) none at all: a killable
/// wait of theirs is an uninterruptible one.
#[inline]
pub(crate) fn current_killable() -> bool {
    // SAFETY: Reads `current`; no precondition.
    let flags = unsafe { ffi::rtrs_current_flags() };
    flags & (bindings::PF_EXITING | bindings::PF_KTHREAD) == 0
}

/// A task that any context may wake, a timer's hard IRQ included: waking a
/// task (`wake_up_process`) takes no sleeping lock on PREEMPT_RT, unlike
/// waking a wait queue. The task publishes itself once, with
/// [`Self::set_current`]; the reference taken then is dropped with `self`,
/// so what may still call [`Self::wake`] (a hard-IRQ timer) must be
/// stopped before `self` is dropped.
///
/// # Invariants
///
/// `task` is null, or the task `held` holds a reference to; `held` is set
/// once and cleared only when `self` is dropped.
#[pin_data]
pub(crate) struct TaskWaker {
    task: Atomic<*mut Task>,
    #[pin]
    held: TaskMutex<Option<ARef<Task>>>,
}

impl TaskWaker {
    /// A waker with no task yet ([`Self::wake`] does nothing).
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            task: Atomic::new(core::ptr::null_mut()),
            held <- crate::new_task_mutex!(None),
        })
    }

    /// Makes the current task the one [`Self::wake`] wakes. Only the first
    /// call does anything; a later one from another task warns.
    pub(crate) fn set_current(&self, ctx: &Sleepable) {
        let mut held = self.held.lock(ctx);
        if let Some(task) = held.as_ref() {
            kernel::warn_on!(task.as_ptr() != Task::current_raw());
            return;
        }
        let task: ARef<Task> = ARef::from(&**kernel::current!());
        let ptr = core::ptr::from_ref::<Task>(&task).cast_mut();
        *held = Some(task);
        // INVARIANT: `held` holds the reference now, and keeps it until
        // `self` is dropped.
        self.task.store(ptr, Release);
    }

    /// Wakes the task, if one was set; any context.
    pub(crate) fn wake(&self) {
        let task = self.task.load(Acquire);
        if !task.is_null() {
            // SAFETY: By the type invariant, `held` keeps the task alive for
            // as long as `self` lives.
            unsafe { &*task }.wake_up();
        }
    }
}
