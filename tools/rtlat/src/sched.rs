// SPDX-License-Identifier: GPL-2.0

//! The tool's own real-time set-up: pinning a thread to a CPU (or a set),
//! SCHED_FIFO for the user-stage threads, and locking the process's memory.

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: u32) -> Result<(), String> {
    // SAFETY: A plain syscall on the calling thread with an initialised set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub fn affinity() -> Vec<u32> {
    // SAFETY: A plain syscall on the calling thread into an initialised set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as u32)
            .filter(|&c| libc::CPU_ISSET(c as usize, &set))
            .collect()
    }
}

/// Lets the calling thread run on `cpus` (and the threads it starts after).
pub fn set_affinity(cpus: &[u32]) -> Result<(), String> {
    // SAFETY: A plain syscall on the calling thread with an initialised set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as u32) {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    Ok(())
}

/// Pins the calling thread to `cpu` and makes it SCHED_FIFO at `prio`.
pub fn set_fifo_pinned(cpu: u32, prio: u32) -> Result<(), String> {
    pin_to(cpu)?;
    // SAFETY: A plain syscall on the calling thread with initialised arguments.
    unsafe {
        let p = libc::sched_param {
            sched_priority: prio as i32,
        };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
            return Err(format!(
                "cannot set SCHED_FIFO {prio}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// Locks the process's memory, current and future (for the user-stage
/// threads); a failure is a warning, not an error.
pub fn lock_memory() {
    // SAFETY: mlockall has no memory-safety preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        eprintln!(
            "rtlat: WARNING: mlockall: {}",
            std::io::Error::last_os_error()
        );
    }
}
