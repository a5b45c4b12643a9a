// SPDX-License-Identifier: GPL-2.0

//! Real-time set-up of the calling thread: its CPU, SCHED_FIFO, and the
//! process's locked memory.

use std::io;

use rtcore::uapi;

/// Lets the calling thread run on `cpus` (and the threads it starts after),
/// whatever their numbers (a CPU mask as long as they need, not glibc's
/// 1024-CPU `cpu_set_t`).
pub fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    let top = cpus.iter().max().map_or(0, |&m| m + 1);
    let mut set = vec![0u64; uapi::cpu_words(top).max(1) as usize];
    for &c in cpus {
        uapi::set_cpu(&mut set, c);
    }
    // SAFETY: A plain syscall on the calling thread; `set` is a CPU mask of
    // the length given, which the kernel reads (any multiple of 8 bytes).
    let rc = unsafe {
        libc::sched_setaffinity(0, set.len() * 8, set.as_ptr().cast::<libc::cpu_set_t>())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on, whatever their numbers.
pub fn affinity() -> Vec<u32> {
    // A mask long enough for the kernel's CPUs (EINVAL: a longer one).
    let mut words = 16;
    while words <= 1 << 16 {
        let mut set = vec![0u64; words];
        // SAFETY: A plain syscall writing at most `set.len() * 8` bytes of
        // the calling thread's CPU mask into `set`.
        let rc = unsafe {
            libc::sched_getaffinity(0, set.len() * 8, set.as_mut_ptr().cast::<libc::cpu_set_t>())
        };
        if rc == 0 {
            return uapi::cpu_bits(&set).collect();
        }
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            break;
        }
        words *= 4;
    }
    Vec::new()
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
