// SPDX-License-Identifier: GPL-2.0

//! Real-time set-up of the calling thread: its CPU, SCHED_FIFO, and the
//! process's locked memory.

use std::io;

/// Lets the calling thread run on `cpus` (and the threads it starts after).
pub fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: A plain syscall on the calling thread with an initialised set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as u32) {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: u32) -> Result<(), String> {
    set_affinity(&[cpu]).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))
}

/// Makes the calling thread SCHED_FIFO at `prio` and pins it to `cpu` (in
/// that order: it reaches a busy CPU at its priority, not behind it).
pub fn set_fifo_pinned(cpu: u32, prio: u32) -> Result<(), String> {
    // SAFETY: A plain syscall on the calling thread with initialised arguments.
    unsafe {
        let p = libc::sched_param {
            sched_priority: prio as i32,
        };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
            return Err(format!(
                "cannot set SCHED_FIFO {prio}: {}",
                io::Error::last_os_error()
            ));
        }
    }
    pin_to(cpu)
}

/// Locks the process's memory, current and future, so that a period's
/// work takes no page fault.
pub fn lock_memory() -> io::Result<()> {
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
