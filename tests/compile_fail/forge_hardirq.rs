// SPDX-License-Identifier: GPL-2.0
// EXPECT: error[E0423]
// MESSAGE: cannot initialize a tuple struct which contains private fields
// CONTROL: s/let irq = HardIrq(kernel::types::NotThreadSafe);/let irq = unsafe { HardIrq::assume_hardirq() };/
//! A `HardIrq` token cannot be built by hand: only the layer's hard-IRQ
//! entry points lend one (or the `unsafe` `HardIrq::assume_hardirq`).

use kernel::prelude::*;

mod forged {
    use super::rtrs::context::HardIrq;

    pub(crate) fn cpu() -> u32 {
        let irq = HardIrq(kernel::types::NotThreadSafe);
        irq.cpu()
    }
}
