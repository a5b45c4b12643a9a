// SPDX-License-Identifier: GPL-2.0

//! The module itself: its initialiser as an entry point that lends the
//! [`Sleepable`] token ([`TaskModule`]), and a counted reference to it, for
//! work that runs the module's code after its last file is closed. While
//! one is held, `rmmod` is refused at once (`EWOULDBLOCK`) instead of
//! waiting in the module's exit, unkillably, until that work has run.

use kernel::prelude::*;

use super::{
    context::Sleepable,
    ffi, //
};

/// A module whose initialiser is lent the [`Sleepable`] token, as the
/// layer's other task-context entry points lend it: module code then mints
/// none. Registered through [`TaskModuleAdapter`]:
///
/// ```ignore
/// type SampleModule = rtrs::module::TaskModuleAdapter<Sample>;
/// module! { type: SampleModule, ... }
/// ```
pub(crate) trait TaskModule: Sized + Sync + Send {
    /// Initialises the module, in the task context of its loading.
    fn init(ctx: &Sleepable, module: &'static ThisModule) -> Result<Self>;
}

/// The [`kernel::Module`] of a [`TaskModule`]; dropping it drops the
/// module's value, at its unloading.
pub(crate) struct TaskModuleAdapter<T>(T);

impl<T: TaskModule> kernel::Module for TaskModuleAdapter<T> {
    fn init(module: &'static ThisModule) -> Result<Self> {
        // SAFETY: A module's initialiser runs in task context and may sleep:
        // the loading task's (`init_module`), or the boot's for a built-in
        // module, with no lock held and interrupts on.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        T::init(ctx, module).map(Self)
    }
}

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
