// SPDX-License-Identifier: GPL-2.0

//! The lock-free single-producer/single-consumer record ring.
//!
//! The ring itself is kernel-independent (`lib/rtcore/src/ring/`, tested
//! on the host); this module adds allocation of its storage in the kernel.
//! Allocate when a session is configured, never in the producer's context.

#[path = "../lib/rtcore/src/ring/mod.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
mod core_ring;

pub(crate) use core_ring::{
    wake_batch,
    Ring,
    Slot, //
};

use kernel::{
    alloc::flags::{
        __GFP_NOWARN, //
        GFP_KERNEL_ACCOUNT,
    },
    prelude::*, //
};

/// A ring stored in vmalloc'd memory (a large ring needs no contiguous
/// pages).
pub(crate) type KRing<T> = Ring<T, VVec<Slot<T>>>;

/// Allocates a ring of `capacity` records (a non-zero power of two). Sleeps;
/// `ENOMEM`, without a page-allocator warning, when the memory is not there
/// (the size is chosen by user space).
pub(crate) fn new_kring<T: Copy>(capacity: usize) -> Result<KRing<T>> {
    if capacity == 0 || !capacity.is_power_of_two() {
        return Err(EINVAL);
    }
    let flags = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
    let mut slots = VVec::with_capacity(capacity, flags)?;
    for _ in 0..capacity {
        slots.push(Slot::new(), flags)?;
    }
    Ring::new(slots).map_err(|_| EINVAL)
}
