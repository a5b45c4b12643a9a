// SPDX-License-Identifier: GPL-2.0

//! The full SMP memory barrier, the same in every supported kernel (the
//! `kernel` crate's `smp_mb` changed its signature in 7.3).

use super::ffi;

/// Full SMP memory barrier (`smp_mb()`).
#[inline]
pub(crate) fn smp_mb() {
    // SAFETY: A barrier; no precondition.
    unsafe { ffi::rtrs_smp_mb() }
}
