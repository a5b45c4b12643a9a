// SPDX-License-Identifier: GPL-2.0

//! The lock-free single-producer/single-consumer record ring.
//!
//! The ring itself is kernel-independent (`lib/rtcore/src/ring.rs`, tested
//! on the host); this module adds allocation of its storage in the kernel.
//! Allocate when a session is configured, never in the producer's context.

#[path = "../lib/rtcore/src/ring.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
mod core_ring;

pub(crate) use core_ring::{
    Ring,
    Slot, //
};

use kernel::prelude::*;

/// A ring stored in a `KVec`.
pub(crate) type KRing<T> = Ring<T, KVec<Slot<T>>>;

/// Allocates a ring of `capacity` records (a non-zero power of two). Sleeps.
pub(crate) fn new_kring<T: Copy>(capacity: usize) -> Result<KRing<T>> {
    if capacity == 0 || !capacity.is_power_of_two() {
        return Err(EINVAL);
    }
    let mut slots = KVec::with_capacity(capacity, GFP_KERNEL)?;
    for _ in 0..capacity {
        slots.push(Slot::new(), GFP_KERNEL)?;
    }
    Ring::new(slots).map_err(|_| EINVAL)
}
