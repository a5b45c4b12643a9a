// SPDX-License-Identifier: GPL-2.0

//! What a PCI driver needs of its device that `kernel::pci::Device` (7.3)
//! does not offer: turning bus mastering off again, and the PCI domain.

use kernel::{
    bindings,
    device::{
        Core,
        DeviceContext, //
    },
    pci, //
};

use super::ffi;

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
