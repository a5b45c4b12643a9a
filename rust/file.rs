// SPDX-License-Identifier: GPL-2.0

//! Device files.

use kernel::{
    fs::File,
    prelude::*, //
};

use super::ffi;

/// Makes the VFS hold the module while `file` is open, so that `rmmod` is
/// refused until it is closed. Call it from `MiscDevice::open`.
///
/// Linux 7.3's `MiscDevice` already sets `fops->owner`, and then this does
/// nothing; Linux 7.2's does not, and without this a module could be unloaded
/// under an open file.
pub(crate) fn hold_module_while_open(file: &File) -> Result {
    // SAFETY: `file` is a valid, open file, being opened by the caller.
    kernel::error::to_result(unsafe { ffi::rtrs_file_hold_module(file.as_ptr().cast()) })
}
