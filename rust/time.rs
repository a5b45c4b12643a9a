// SPDX-License-Identifier: GPL-2.0

//! Time stamps as the records hold them: CLOCK_MONOTONIC in ns.

use kernel::time::{
    ClockSource as _,
    Monotonic, //
};

/// CLOCK_MONOTONIC now, in ns (`ktime_get()`); callable in any context but
/// NMI.
#[inline]
pub(crate) fn ktime_ns() -> i64 {
    Monotonic::ktime_get()
}
