// SPDX-License-Identifier: GPL-2.0

//! Per-CPU storage.
//!
//! [`PerCpu<T>`] allocates one `T` per possible CPU once (`alloc_percpu`),
//! typically when a session is configured, and frees them on drop. Access:
//!
//! - [`PerCpu::this_cpu`]: the current CPU's slot, only with a proof that the
//!   context cannot migrate ([`CpuPinned`]: a [`HardIrq`](super::context::HardIrq)
//!   token, a [`PreemptGuard`](super::preempt::PreemptGuard) or a
//!   [`MigrateGuard`](super::preempt::MigrateGuard));
//! - [`PerCpu::get`]: a named CPU's slot, for readers and for set-up.
//!
//! Both give shared references, so `T` is `Sync`: per-CPU data written from
//! hard-IRQ context is made of atomics (or guarded by a raw spinlock), and a
//! reader on another CPU sees consistent values. This is the PREEMPT_RT rule
//! for per-CPU data: pin the CPU (migration control), do not rely on
//! `local_bh_disable()`.

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    ffi::c_void,
    prelude::*, //
};

use super::{
    context::CpuPinned,
    ffi,
    preempt::cpu_possible, //
};

/// One `T` for every possible CPU.
///
/// # Invariants
///
/// `ptr` comes from `__alloc_percpu_gfp` with the size and alignment of `T`,
/// and every possible CPU's slot holds an initialised `T` until drop.
pub(crate) struct PerCpu<T: Sync> {
    ptr: NonNull<c_void>,
    _t: PhantomData<T>,
}

// SAFETY: The slots are only reachable through shared references to `T: Sync`
// (and `T: Send` for the drop, which may happen on any CPU).
unsafe impl<T: Sync + Send> Send for PerCpu<T> {}
// SAFETY: As above.
unsafe impl<T: Sync + Send> Sync for PerCpu<T> {}

impl<T: Sync> PerCpu<T> {
    /// Allocates the slots and initialises each possible CPU's with
    /// `init(cpu)`. Sleeps (GFP_KERNEL); call it in task context.
    pub(crate) fn new(mut init: impl FnMut(u32) -> T) -> Result<Self> {
        if core::mem::size_of::<T>() == 0 {
            return Err(EINVAL);
        }
        // SAFETY: Plain allocation; returns NULL on failure.
        let raw = unsafe {
            ffi::rtrs_alloc_percpu(core::mem::size_of::<T>(), core::mem::align_of::<T>())
        };
        let ptr = NonNull::new(raw).ok_or(ENOMEM)?;
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if cpu_possible(cpu) {
                // SAFETY: `ptr` is a live per-CPU allocation and `cpu` is
                // possible, so the slot is valid, aligned and not yet shared.
                unsafe { Self::slot(ptr, cpu).write(init(cpu)) };
            }
        }
        // INVARIANT: allocated with the layout of `T`, every possible slot initialised.
        Ok(Self {
            ptr,
            _t: PhantomData,
        })
    }

    /// Pointer to CPU `cpu`'s slot.
    ///
    /// # Safety
    ///
    /// `ptr` is a live per-CPU allocation and `cpu` is a possible CPU.
    unsafe fn slot(ptr: NonNull<c_void>, cpu: u32) -> *mut T {
        // SAFETY: Guaranteed by the caller.
        unsafe { ffi::rtrs_per_cpu_ptr(ptr.as_ptr(), cpu) }.cast()
    }

    /// The slot of the CPU the pinned context runs on.
    #[inline]
    pub(crate) fn this_cpu<'a>(&'a self, _pinned: &'a impl CpuPinned) -> &'a T {
        // SAFETY: `_pinned` keeps the context on this CPU while the reference
        // lives; the slot is initialised (type invariant) and only shared.
        unsafe { &*ffi::rtrs_this_cpu_ptr(self.ptr.as_ptr()).cast::<T>() }
    }

    /// The slot of `cpu`, or `None` if no such CPU is possible.
    #[inline]
    pub(crate) fn get(&self, cpu: u32) -> Option<&T> {
        if !cpu_possible(cpu) {
            return None;
        }
        // SAFETY: `cpu` is possible and the slot initialised (type invariant).
        Some(unsafe { &*Self::slot(self.ptr, cpu) })
    }

    /// Iterates over `(cpu, slot)` for every possible CPU.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        (0..kernel::cpu::nr_cpu_ids()).filter_map(move |cpu| self.get(cpu).map(|t| (cpu, t)))
    }
}

impl<T: Sync> Drop for PerCpu<T> {
    fn drop(&mut self) {
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if cpu_possible(cpu) {
                // SAFETY: The slot is initialised (type invariant) and nobody
                // else can reach it any more (we are being dropped).
                unsafe { core::ptr::drop_in_place(Self::slot(self.ptr, cpu)) };
            }
        }
        // SAFETY: `ptr` came from `__alloc_percpu_gfp` and is freed once.
        unsafe { kernel::bindings::free_percpu(self.ptr.as_ptr()) };
    }
}
