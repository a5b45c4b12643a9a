// SPDX-License-Identifier: GPL-2.0

//! What a PCI driver needs of its device that `kernel::pci::Device` (7.3)
//! does not offer: turning bus mastering off again.

use kernel::{
    bindings,
    device::{
        Core,
        DeviceContext, //
    },
    pci, //
};

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
