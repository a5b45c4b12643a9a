// SPDX-License-Identifier: GPL-2.0

//! CPU hotplug notifications, and holding hotplug off.
//!
//! [`Registration<H>`] calls [`CpuHotplug::offline`] on every CPU that goes
//! down while it exists (in task context, on that CPU, before it leaves), so
//! per-CPU work there can be stopped cleanly: cancel its pinned timers, stop
//! re-arming, let its bound thread finish. [`HotplugReadGuard`] keeps the
//! online CPUs as they are while a session picks its CPUs and starts their
//! threads, so that none is taken in the window after its teardown callback
//! ran.

use core::marker::PhantomData;

use kernel::{
    ffi::{
        c_int,
        c_uint, //
    },
    prelude::*,
    str::CStr, //
};

use super::{
    context::Sleepable,
    ffi, //
};

/// What to do when CPUs come and go.
pub(crate) trait CpuHotplug {
    /// `cpu` is going offline. Runs on `cpu`, in the hotplug thread (task
    /// context, may sleep: `ctx`), with the hotplug lock held for writing:
    /// it must not take a [`HotplugReadGuard`] (that would deadlock).
    fn offline(ctx: &Sleepable, cpu: u32);
}

/// A registered dynamic hotplug state; removed on drop.
///
/// # Invariants
///
/// `state` was returned by `cpuhp_setup_state_nocalls` and is removed once.
pub(crate) struct Registration<H: CpuHotplug> {
    state: c_int,
    _h: PhantomData<H>,
}

/// The C teardown callback for a [`CpuHotplug`] implementation.
///
/// # Safety
///
/// Called by the hotplug core with a CPU number.
unsafe extern "C" fn offline_trampoline<H: CpuHotplug>(cpu: c_uint) -> c_int {
    // SAFETY: The callbacks of a dynamic (`CPUHP_AP_ONLINE_DYN`) state run in
    // the CPU's hotplug thread, in task context, and may sleep.
    let ctx = unsafe { Sleepable::assume_sleepable() };
    H::offline(ctx, cpu);
    0
}

impl<H: CpuHotplug> Registration<H> {
    /// Registers; `name` shows in `/sys/devices/system/cpu/hotplug/states`.
    pub(crate) fn new(name: &'static CStr) -> Result<Self> {
        use kernel::str::CStrExt as _;
        // SAFETY: `name` is a static string; the callback matches the C type.
        let state =
            unsafe { ffi::rtrs_cpuhp_add(name.as_char_ptr(), None, Some(offline_trampoline::<H>)) };
        if state < 0 {
            return Err(Error::from_errno(state));
        }
        // INVARIANT: a fresh state.
        Ok(Self {
            state,
            _h: PhantomData,
        })
    }
}

impl<H: CpuHotplug> Drop for Registration<H> {
    fn drop(&mut self) {
        // SAFETY: `state` is ours and removed only here (type invariant).
        unsafe { ffi::rtrs_cpuhp_remove(self.state) };
    }
}

/// CPU hotplug held off while this guard lives (`cpus_read_lock()`): the set
/// of online CPUs does not change and no hotplug callback runs, so a CPU
/// found online stays online, and one whose teardown callback ran is no
/// longer online. Task context; sleeps. Never take it in a hotplug callback.
///
/// # Invariants
///
/// `cpus_read_lock()` was called by the current task when the guard was
/// created and is undone when it is dropped.
pub(crate) struct HotplugReadGuard {
    _not_send: PhantomData<*mut ()>,
}

impl HotplugReadGuard {
    /// Takes the hotplug lock for reading. Sleeps.
    pub(crate) fn new(_ctx: &Sleepable) -> Self {
        // SAFETY: Task context (the token); balanced in `drop`.
        unsafe { kernel::bindings::cpus_read_lock() };
        // INVARIANT: just taken.
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Drop for HotplugReadGuard {
    fn drop(&mut self) {
        // SAFETY: Balances the `cpus_read_lock()` of `new` (type invariant).
        unsafe { kernel::bindings::cpus_read_unlock() };
    }
}
