// SPDX-License-Identifier: GPL-2.0

//! A deliberately broken module: reads a kmalloc'd object after freeing it.
//!
//! With `CONFIG_KASAN` the read is reported as `BUG: KASAN:
//! slab-use-after-free`. The test runner loads this module only to prove that
//! its splat detector fails a run in which KASAN caught a bad access: it is
//! never part of a normal test run.

use kernel::prelude::*;

module! {
    type: RtrsUaf,
    name: "rtrs_uaf",
    authors: ["The rtrs developers"],
    description: "Test only: a use-after-free for KASAN to report",
    license: "GPL",
}

struct RtrsUaf;

impl kernel::Module for RtrsUaf {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let object = KBox::into_raw(KBox::new([0x5au8; 64], GFP_KERNEL)?);
        // SAFETY: `object` comes from `KBox::into_raw` just above and is
        // turned back into a box only once.
        drop(unsafe { KBox::from_raw(object) });
        // SAFETY: none: `object` was freed just above. This is the bug the
        // module exists for; the volatile read keeps it from being elided.
        let byte = unsafe { core::ptr::read_volatile(object.cast::<u8>().add(8)) };
        pr_info!("read {byte:#x} from a freed object\n");
        Ok(RtrsUaf)
    }
}
