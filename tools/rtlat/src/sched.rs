// SPDX-License-Identifier: GPL-2.0

//! The tool's own real-time set-up: pinning a thread to a CPU (or a set),
//! SCHED_FIFO for the user-stage threads, and locking the process's memory
//! (the client library's, with the tool's choice of housekeeping CPUs).

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

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    u32::try_from(unsafe { libc::sched_getcpu() }).ok()
}

pub use rtlat_client::sched::{
    affinity,
    pin_to,
    set_affinity,
    set_fifo_pinned, //
};

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
    if let Err(e) = rtlat_client::sched::lock_memory() {
        eprintln!("rtlat: WARNING: mlockall: {e}");
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
