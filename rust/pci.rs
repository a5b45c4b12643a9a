// SPDX-License-Identifier: GPL-2.0

//! What a PCI driver needs of its device that `kernel::pci::Device` (7.3)
//! does not offer: turning bus mastering off again, disabling the device
//! when its binding ends, the PCI domain, an ID for a vendor the kernel has
//! no constant for, and the task context of the driver core's callbacks.

use kernel::{
    bindings,
    device::{
        Bound,
        Core,
        DeviceContext, //
    },
    pci,
    prelude::*, //
};

use super::{
    context::Sleepable,
    ffi, //
};

/// The ID of a device by vendor and device number, any subsystem: for a
/// vendor `pci::Vendor` has no constant for (QEMU's 0x1234).
pub(crate) const fn device_id(vendor: u16, device: u16) -> pci::DeviceId {
    // SAFETY: `pci::DeviceId` is a `#[repr(transparent)]` wrapper of
    // `struct pci_device_id` (see its `RawDeviceId` implementation), so
    // every such struct is one.
    unsafe {
        core::mem::transmute::<bindings::pci_device_id, pci::DeviceId>(bindings::pci_device_id {
            vendor: vendor as u32,
            device: device as u32,
            subvendor: !0,
            subdevice: !0,
            class: 0,
            class_mask: 0,
            driver_data: 0,
            override_only: 0,
        })
    }
}

/// The task context of a driver core callback (probe, unbind, remove): a
/// `Core` device is made only there, with the device lock held, and those
/// callbacks may sleep.
pub(crate) fn sleepable<'a>(_pdev: &'a pci::Device<Core<'_>>) -> &'a Sleepable {
    // SAFETY: The kernel crate makes a `pci::Device<Core>` only in the PCI
    // driver core's probe and remove callbacks, which run in task context
    // (a kworker or the caller's task; remove also from pciehp's IRQ
    // thread) and may sleep. The reference cannot leave that context for
    // another: `pci::Device<Core>` is not `Sync`, so no interrupt handler
    // or timer callback (which must be) can hold it, and the driver data
    // (`Send`) cannot hold the token, which is neither. The token lives
    // no longer than the reference.
    unsafe { Sleepable::assume_sleepable() }
}

/// The `struct pci_dev` of `pdev`.
fn raw<Ctx: DeviceContext>(pdev: &pci::Device<Ctx>) -> *mut bindings::pci_dev {
    // `pci::Device` is a `#[repr(transparent)]` wrapper of
    // `Opaque<bindings::pci_dev>`: its address is the `struct pci_dev`'s, and
    // `Opaque` allows the C side to change it behind a shared reference.
    core::ptr::from_ref(pdev)
        .cast::<bindings::pci_dev>()
        .cast_mut()
}

/// Turns bus mastering off (`pci_clear_master()`): the device can no longer
/// start DMA. The counterpart of `pci::Device::set_master`, for the unbind
/// path, which the driver core does not do by itself.
pub(crate) fn clear_master(pdev: &pci::Device<Core<'_>>) {
    // SAFETY: `raw(pdev)` is a valid `struct pci_dev` (the type invariant of
    // `pci::Device`); the `Core` context means the driver core holds the
    // device lock (probe, unbind), as for `set_master`.
    unsafe { bindings::pci_clear_master(raw(pdev)) };
}

/// A device enabled (`pci_enable_device_mem()`) and made bus master
/// (`pci_set_master()`) by its driver, for as long as this lives. Dropping
/// it undoes both in the order of the C drivers' error and remove paths:
/// `pci_clear_master()`, then `pci_disable_device()`. Made in probe and
/// kept in the driver data, it is dropped by a probe that fails after it,
/// or at the end of the binding.
///
/// # Invariants
///
/// `dev` was enabled once by [`EnabledMaster::new`], and only the drop of
/// this disables it again.
pub(crate) struct EnabledMaster<'a> {
    dev: &'a pci::Device<Bound>,
}

impl<'a> EnabledMaster<'a> {
    /// Enables `pdev`'s memory space and makes it bus master.
    pub(crate) fn new(pdev: &'a pci::Device<Core<'_>>) -> Result<Self> {
        pdev.enable_device_mem()?;
        pdev.set_master();
        // INVARIANT: Enabled just above, once.
        Ok(Self { dev: pdev })
    }
}

impl Drop for EnabledMaster<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw(self.dev)` is a valid `struct pci_dev` (the type
        // invariant of `pci::Device`).
        unsafe { bindings::pci_clear_master(raw(self.dev)) };
        // SAFETY: As above. `new` enabled the device once, and nothing but
        // this disables it (type invariant): the enable count stays
        // balanced.
        unsafe { bindings::pci_disable_device(raw(self.dev)) };
    }
}

/// The PCI domain (segment) of `pdev` (`pci_domain_nr(pdev->bus)`): the
/// `DDDD` of its `DDDD:BB:DD.F` address.
pub(crate) fn domain_nr<Ctx: DeviceContext>(pdev: &pci::Device<Ctx>) -> u32 {
    // SAFETY: `raw(pdev)` is a valid `struct pci_dev` (the type invariant of
    // `pci::Device`), and a device's `bus` is set for as long as it exists.
    let domain = unsafe { ffi::rtrs_pci_domain_nr(raw(pdev).cast()) };
    // Domains are never negative (`pci_domain_nr()` returns an `int` only
    // because of its users).
    domain.try_into().unwrap_or(0)
}
