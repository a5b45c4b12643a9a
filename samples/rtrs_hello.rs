// SPDX-License-Identifier: GPL-2.0

//! The smallest module of the suite: reports the preemption model it runs on.
//!
//! Loading it exercises the whole out-of-tree Rust path (toolchain, Kbuild,
//! module loader) before any real module is involved. Mainline PREEMPT_RT has no
//! `/sys/kernel/realtime` (that file came from the old out-of-tree RT patch), so
//! the model is taken from the kernel configuration the module was built for,
//! which is the one `uname -v` reports as `PREEMPT_RT`.

use kernel::prelude::*;

module! {
    type: RtrsHello,
    name: "rtrs_hello",
    authors: ["The rtrs developers"],
    description: "Reports the preemption model of the running kernel",
    license: "GPL",
}

/// The preemption model selected in the kernel configuration.
const fn preemption_model() -> &'static str {
    if cfg!(CONFIG_PREEMPT_RT) {
        "PREEMPT_RT"
    } else if cfg!(CONFIG_PREEMPT_LAZY) {
        "PREEMPT_LAZY"
    } else if cfg!(CONFIG_PREEMPT) {
        "PREEMPT"
    } else if cfg!(CONFIG_PREEMPT_VOLUNTARY) {
        "PREEMPT_VOLUNTARY"
    } else {
        "PREEMPT_NONE"
    }
}

struct RtrsHello;

impl kernel::Module for RtrsHello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!(
            "preemption model {} (realtime: {})\n",
            preemption_model(),
            if cfg!(CONFIG_PREEMPT_RT) { 1 } else { 0 }
        );
        Ok(RtrsHello)
    }
}

impl Drop for RtrsHello {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
