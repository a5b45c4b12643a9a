// SPDX-License-Identifier: GPL-2.0

//! A counted reference to the module itself, for work that runs the
//! module's code after its last file is closed. While one is held, `rmmod`
//! is refused at once (`EWOULDBLOCK`) instead of waiting in the module's
//! exit, unkillably, until that work has run.

use super::ffi;

/// A reference to this module; dropping it lets the module unload.
///
/// Code of the module may still run after the drop (the rest of the
/// function that dropped it): the holder must be something the module's
/// exit waits for, such as a work item on a [`super::workqueue::ModuleQueue`],
/// which the exit drains.
///
/// # Invariants
///
/// Holds one reference to the module, taken by `rtrs_module_get`; only the
/// drop gives it back.
pub(crate) struct ModuleRef(());

impl ModuleRef {
    /// Takes a reference to the module.
    ///
    /// # Safety
    ///
    /// The caller holds one already, so the module is not unloading: it
    /// runs on behalf of an open file of the module's, for instance.
    pub(crate) unsafe fn get() -> Self {
        // SAFETY: The caller holds the module, as `__module_get` requires.
        unsafe { ffi::rtrs_module_get() };
        // INVARIANT: the reference was just taken.
        Self(())
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: Gives back the reference `get` took (type invariant).
        unsafe { ffi::rtrs_module_put() };
    }
}
