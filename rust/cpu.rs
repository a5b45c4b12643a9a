// SPDX-License-Identifier: GPL-2.0

//! CPU masks the `kernel` crate has no binding for: whether a CPU is online,
//! active or possible.

use super::ffi;

/// True when `cpu` is online.
#[inline]
pub(crate) fn cpu_online(cpu: u32) -> bool {
    // SAFETY: The shim checks `cpu` against `nr_cpu_ids`.
    unsafe { ffi::rtrs_cpu_online(cpu) }
}

/// True when `cpu` is active: online and taking tasks. A CPU going offline
/// is inactive from the start of its teardown, before the CPU hotplug
/// callbacks of drivers run, and the scheduler moves tasks off it.
#[inline]
pub(crate) fn cpu_active(cpu: u32) -> bool {
    // SAFETY: The shim checks `cpu` against `nr_cpu_ids`.
    unsafe { ffi::rtrs_cpu_active(cpu) }
}

/// True when `cpu` is possible (may ever come online).
#[inline]
pub(crate) fn cpu_possible(cpu: u32) -> bool {
    // SAFETY: The shim checks `cpu` against `nr_cpu_ids`.
    unsafe { ffi::rtrs_cpu_possible(cpu) }
}
