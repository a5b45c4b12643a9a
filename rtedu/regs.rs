// SPDX-License-Identifier: GPL-2.0

//! The edu device's registers (QEMU `docs/specs/edu.rst`) and its BAR.

use kernel::{
    devres::DevresLt,
    io::Io,
    pci, //
};

pub(crate) const IDENT: usize = 0x00;
pub(crate) const LIVENESS: usize = 0x04;
pub(crate) const FACTORIAL: usize = 0x08;
pub(crate) const STATUS: usize = 0x20;
pub(crate) const IRQ_STATUS: usize = 0x24;
pub(crate) const IRQ_RAISE: usize = 0x60;
pub(crate) const IRQ_ACK: usize = 0x64;
pub(crate) const DMA_SRC: usize = 0x80;
pub(crate) const DMA_DST: usize = 0x88;
pub(crate) const DMA_COUNT: usize = 0x90;
pub(crate) const DMA_CMD: usize = 0x98;
/// Registers this driver uses lie below this offset.
pub(crate) const END: usize = 0xa0;

/// `STATUS`: a factorial is being computed.
const STATUS_COMPUTING: u32 = 0x01;
/// `STATUS`: raise an interrupt when the factorial is done.
pub(crate) const STATUS_IRQ_FACT: u32 = 0x80;
/// `DMA_CMD` bits.
pub(crate) const DMA_START: u32 = 0x01;
pub(crate) const DMA_TO_RAM: u32 = 0x02;
pub(crate) const DMA_IRQ: u32 = 0x04;
/// The device's DMA buffer, in its own address space.
pub(crate) const DMA_BUF: u32 = 0x40000;
pub(crate) const DMA_BUF_SIZE: usize = 4096;

/// Interrupt status bits: factorial done, DMA done (set by the device),
/// and the latency probe (this driver's choice of raise bit).
pub(crate) const IRQ_FACT: u32 = 0x0000_0001;
pub(crate) const IRQ_DMA: u32 = 0x0000_0100;
pub(crate) const IRQ_PROBE: u32 = 0x0001_0000;

/// A factorial is being computed.
pub(crate) fn computing(bar: &Bar0<'_>) -> bool {
    bar.read32(STATUS) & STATUS_COMPUTING != 0
}

/// A DMA transfer is running (or waiting for the device's timer).
pub(crate) fn dma_running(bar: &Bar0<'_>) -> bool {
    bar.read32(DMA_CMD) & DMA_START != 0
}

/// BAR 0, as far as this driver uses it.
pub(crate) type Bar0<'a> = pci::Bar<'a, { END }>;
/// BAR 0 as the instance keeps it: revoked by devres at unbind.
pub(crate) type DevresBar0 = DevresLt<pci::Bar<'static, { END }>>;
