// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0277]
// MESSAGE: the trait bound `H: ThreadedHandler` is not satisfied
// CONTROL: s/ThreadedHandler::handle(irq.handler());/let _ = irq.handler();/
// RUSTFLAGS: --cfg rtrs_irq
//! Only the interrupt core calls the halves of a `ThreadedIrq`: its handler
//! is lent as the device's `IrqHandler`, not as the kernel's
//! `ThreadedHandler` whose `handle` would lend a `HardIrq` token in task
//! context.

use kernel::prelude::*;

mod task_context {
    use kernel::irq::ThreadedHandler;
    use super::rtrs::irq::{IrqHandler, ThreadedIrq};

    pub(crate) fn forge<H: IrqHandler>(irq: &ThreadedIrq<'_, H>) {
        ThreadedHandler::handle(irq.handler());
    }
}
