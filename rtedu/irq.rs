// SPDX-License-Identifier: GPL-2.0

//! The interrupt handler pair of an instance: the hard half takes the
//! timestamp and acknowledges the device, the thread half completes the
//! latency record and wakes the device operations' waiters.

use kernel::{
    io::Io,
    irq::{
        IrqReturn,
        ThreadedIrqReturn, //
    },
    sync::{
        atomic::{
            Acquire,
            Relaxed,
            Release, //
        },
        Arc,
    },
};

use crate::{
    regs,
    rtrs::{
        context::{
            HardIrq,
            Sleepable, //
        },
        irq::{
            IrqHandler,
            IrqThread, //
        },
        time::ktime_ns,
    },
    session::EduInstance,
};

/// The interrupt handler pair of an instance.
pub(crate) struct EduIrq {
    pub(crate) inst: Arc<EduInstance>,
}

impl IrqHandler for EduIrq {
    fn hard(&self, _irq: &HardIrq) -> ThreadedIrqReturn {
        // Bounded work only: one timestamp, two MMIO accesses, atomics.
        let now = ktime_ns();
        let status = self
            .inst
            .with_bar(|bar| {
                let status = bar.read32(regs::IRQ_STATUS);
                if status != 0 {
                    // Acknowledge in the handler (required with MSI too).
                    bar.write32(status, regs::IRQ_ACK);
                }
                status
            })
            .unwrap_or(0);
        if status == 0 {
            self.inst.spurious.fetch_add(1, Relaxed);
            return ThreadedIrqReturn::None;
        }
        if status & regs::IRQ_PROBE != 0 {
            self.inst.probe_irq_ns.store(now, Relaxed);
        }
        let mut old = self.inst.pending.load(Relaxed);
        while let Err(cur) = self.inst.pending.cmpxchg(old, old | status, Release) {
            old = cur;
        }
        self.inst.irqs.fetch_add(1, Relaxed);
        ThreadedIrqReturn::WakeThread
    }

    fn thread(&self, ctx: &Sleepable) -> IrqReturn {
        let now = ktime_ns();
        let bits = self.inst.pending.xchg(0, Acquire);
        if bits & regs::IRQ_PROBE != 0 {
            let irq_ns = self.inst.probe_irq_ns.load(Relaxed);
            let active = self.inst.active.lock(ctx);
            if let Some(s) = active.as_ref() {
                s.event(ctx, irq_ns, now);
            }
        }
        let completions = bits & (regs::IRQ_FACT | regs::IRQ_DMA);
        if completions != 0 {
            *self.inst.done.lock(ctx) |= completions;
            self.inst.done_cv.notify_all(ctx);
        }
        if bits != 0 {
            IrqReturn::Handled
        } else {
            IrqReturn::None
        }
    }

    fn irq_thread(&self) -> &IrqThread {
        &self.inst.irq_thread
    }
}
