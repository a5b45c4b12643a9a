// SPDX-License-Identifier: GPL-2.0

//! The tool's own real-time set-up: pinning a thread to a CPU (or a set),
//! SCHED_FIFO for the user-stage threads, and locking the process's memory.

/// Restricts the calling thread to `cpus` (and the threads it starts
/// after).
pub fn pin_to_set(cpus: &[u32]) -> Result<(), String> {
    set_affinity(cpus).map_err(|e| {
        format!(
            "cannot run on CPUs {}: {e}",
            crate::sysinfo::format_cpu_list(cpus)
        )
    })
}

/// The CPUs the calling thread may run on.
pub fn affinity() -> Vec<u32> {
    // SAFETY: A plain syscall filling an initialised set.
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

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    u32::try_from(unsafe { libc::sched_getcpu() }).ok()
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: u32) -> Result<(), String> {
    set_affinity(&[cpu]).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))
}

/// Lets the calling thread run on `cpus` (and the threads it starts after).
pub fn set_affinity(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: A plain syscall on the calling thread with an initialised set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as u32) {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
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
                std::io::Error::last_os_error()
            ));
        }
    }
    pin_to(cpu)
}

/// Where the tool's own threads (the reader, the status loop) run: the
/// CPUs of `--housekeeping` if given, else the `online` CPUs not
/// `measured`; every online CPU if all are measured. With how they were
/// chosen.
pub fn housekeeping(
    option: Option<&[u32]>,
    online: &[u32],
    measured: &[u32],
) -> (Vec<u32>, &'static str) {
    if let Some(cpus) = option {
        return (cpus.to_vec(), "--housekeeping");
    }
    let rest: Vec<u32> = online
        .iter()
        .copied()
        .filter(|c| !measured.contains(c))
        .collect();
    if rest.is_empty() {
        (online.to_vec(), "every online CPU is measured")
    } else {
        (rest, "the online CPUs not measured")
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn housekeeping_cpus() {
        let online = [0, 1, 2, 3];
        assert_eq!(
            housekeeping(None, &online, &[1, 2]),
            (vec![0, 3], "the online CPUs not measured")
        );
        assert_eq!(
            housekeeping(None, &online, &online),
            (online.to_vec(), "every online CPU is measured")
        );
        assert_eq!(
            housekeeping(Some(&[2]), &online, &[1]),
            (vec![2], "--housekeeping")
        );
    }

    #[test]
    fn a_thread_stays_on_its_housekeeping_cpus() {
        let all = affinity();
        assert!(!all.is_empty());
        let one = [*all.last().unwrap()];
        std::thread::spawn(move || {
            pin_to_set(&one).unwrap();
            assert_eq!(affinity(), one);
            for _ in 0..100 {
                assert_eq!(current_cpu(), Some(one[0]));
                std::thread::yield_now();
            }
        })
        .join()
        .unwrap();
    }
}
