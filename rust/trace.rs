// SPDX-License-Identifier: GPL-2.0

//! Markers in the ftrace buffer, where a threshold trip is noted for the
//! trace the user keeps.

use kernel::str::{
    CStr,
    CStrExt as _, //
};

use super::ffi;

/// Writes `s` as a marker into the ftrace buffer (`trace_puts`).
#[inline]
pub(crate) fn trace_marker(s: &'static CStr) {
    // SAFETY: `s` is a NUL-terminated static string.
    unsafe { ffi::rtrs_trace_puts(s.as_char_ptr()) }
}
