// SPDX-License-Identifier: GPL-2.0

//! What the measuring code asks of the current task: whether it is the idle
//! task, the one CPU its affinity allows, its right to run RT measurements,
//! and whether a wait of it can be killed.

use kernel::bindings;

use super::ffi;

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
