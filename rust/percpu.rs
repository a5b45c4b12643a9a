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
//!
//! [`CpuSetIrq<T>`] is [`PerCpuIrq<T>`] for a set of CPUs only: one `T` for
//! each CPU of the set, none for the others, each allocated with the
//! caller's flags (`GFP_KERNEL_ACCOUNT`: charged to its memory cgroup).
//!
//! [`PerCpuLocked<T>`] is for task-context data that needs `&mut` access:
//! this CPU's slot under a `local_lock` ([`PerCpuLocked::lock`]), which is
//! `preempt_disable()` on a non-RT kernel and a per-CPU sleeping lock with
//! migration disabled on PREEMPT_RT, so it is correct on both. Never from hard
//! IRQ. Create one with [`new_percpu_locked!`](crate::new_percpu_locked):
//! like the kernel's locks, each call site is its own lockdep class, so two
//! of them may nest (always in the same order).

use core::{
    cell::{
        Cell,
        UnsafeCell, //
    },
    marker::PhantomData,
    ops::{
        Deref,
        DerefMut, //
    },
    ptr::NonNull, //
};

use kernel::{
    alloc::{
        flags::__GFP_ZERO,
        Flags, //
    },
    ffi::c_void,
    prelude::*,
    str::CStr,
    sync::LockClassKey,
    types::Opaque, //
};

use super::{
    context::{
        CpuPinned,
        IrqsOff, //
    },
    cpu::cpu_possible,
    ffi, //
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

    /// Allocates the slots, each all zero bytes (a valid `T`): for a `T`
    /// too large to build on the stack. Sleeps (GFP_KERNEL); task context.
    pub(crate) fn new_zeroed() -> Result<Self>
    where
        T: Zeroable,
    {
        if core::mem::size_of::<T>() == 0 {
            return Err(EINVAL);
        }
        // SAFETY: Plain allocation; returns NULL on failure.
        let raw = unsafe {
            ffi::rtrs_alloc_percpu(core::mem::size_of::<T>(), core::mem::align_of::<T>())
        };
        let ptr = NonNull::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: allocated with the layout of `T`, zeroed by the
        // allocator: every slot is a valid `T` (`T: Zeroable`).
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

/// One CPU's slot of a [`PerCpuIrq`].
struct IrqSlot<T> {
    /// A [`PerCpuIrq::with`] of this slot is running (a nested call is
    /// refused).
    busy: Cell<bool>,
    data: UnsafeCell<T>,
}

// SAFETY: A slot is only reached by `PerCpuIrq::with` on its own CPU with
// local interrupts off, where no other context of that CPU can run and no
// other CPU reaches it, or through `&mut PerCpuIrq`; `busy` refuses the
// nested call. `T: Send`: the slots are made and dropped on any CPU.
unsafe impl<T: Send> Sync for IrqSlot<T> {}

// SAFETY: All zero is `busy` false and a zeroed `T`, valid for `T: Zeroable`.
unsafe impl<T: Zeroable> Zeroable for IrqSlot<T> {}

/// One `T` per possible CPU, reached mutably only by its own CPU with local
/// interrupts off ([`PerCpuIrq::with`]): per-CPU state that hard-IRQ
/// handlers and tracepoint probes update, and that the CPU's own task
/// context reads with interrupts off for a moment
/// ([`with_irqs_off`](super::preempt::with_irqs_off)). No lock, no atomic; no
/// other CPU ever sees it (the owner does, through `&mut self`, once nothing
/// else can).
///
/// # Invariants
///
/// Each slot's `data` is reached only as [`IrqSlot`]'s `Sync` says.
pub(crate) struct PerCpuIrq<T: Send> {
    slots: PerCpu<IrqSlot<T>>,
}

impl<T: Send> PerCpuIrq<T> {
    /// Allocates the slots and initialises each possible CPU's with
    /// `init(cpu)`. Sleeps (GFP_KERNEL); task context.
    pub(crate) fn new(mut init: impl FnMut(u32) -> T) -> Result<Self> {
        Ok(Self {
            slots: PerCpu::new(|cpu| IrqSlot {
                busy: Cell::new(false),
                data: UnsafeCell::new(init(cpu)),
            })?,
        })
    }

    /// Allocates the slots, each all zero bytes (a valid `T`): for a `T`
    /// too large to build on the stack. Sleeps (GFP_KERNEL); task context.
    pub(crate) fn new_zeroed() -> Result<Self>
    where
        T: Zeroable,
    {
        Ok(Self {
            slots: PerCpu::new_zeroed()?,
        })
    }

    /// Runs `f` on this CPU's `T`, interrupts being off (`irqs`); `None`
    /// (and `f` not run) if called from within `f` on the same slot.
    #[inline]
    pub(crate) fn with<R>(&self, irqs: &IrqsOff, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let slot = self.slots.this_cpu(irqs);
        if slot.busy.replace(true) {
            return None;
        }
        // SAFETY: Interrupts are off on this CPU (`irqs`) and `busy` was
        // false: no other reference to this CPU's `data` exists, and none
        // is made until `busy` is cleared below (type invariant).
        let r = f(unsafe { &mut *slot.data.get() });
        slot.busy.set(false);
        Some(r)
    }

    /// Iterates over `(cpu, slot)` for every possible CPU, with no other
    /// access possible (`&mut self`).
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> {
        self.slots.iter().map(|(cpu, slot)| {
            // SAFETY: `&mut self`: no `with` is running on any CPU, and
            // each slot is handed out once.
            let data = unsafe { &mut *slot.data.get() };
            (cpu, data)
        })
    }
}

/// One `T` for each CPU of a set, reached as a [`PerCpuIrq`]'s: mutably
/// only by its own CPU with local interrupts off ([`CpuSetIrq::with`]).
/// A CPU outside the set has none: `with` there returns at once. Each `T`
/// is an allocation of its own, made with the caller's flags: a set of two
/// CPUs costs two, not one per possible CPU.
///
/// # Invariants
///
/// `slots` has `nr_cpu_ids` entries, indexed by CPU; each slot's `data`
/// is reached only as [`IrqSlot`]'s `Sync` says.
pub(crate) struct CpuSetIrq<T: Send> {
    slots: KVec<Option<KBox<IrqSlot<T>>>>,
}

impl<T: Send + Zeroable> CpuSetIrq<T> {
    /// Allocates one `T` of all zero bytes for each CPU of `cpus`, with
    /// `flags` (which must allow sleeping: task context). `EINVAL` for a
    /// CPU past `nr_cpu_ids`.
    pub(crate) fn new_zeroed(cpus: &[u32], flags: Flags) -> Result<Self> {
        let nr = kernel::cpu::nr_cpu_ids() as usize;
        let mut slots = KVec::with_capacity(nr, flags)?;
        for _ in 0..nr {
            slots.push(None, flags)?;
        }
        for &cpu in cpus {
            let slot = slots.get_mut(cpu as usize).ok_or(EINVAL)?;
            if slot.is_none() {
                let zeroed = KBox::<IrqSlot<T>>::new_uninit(flags | __GFP_ZERO)?;
                // SAFETY: `__GFP_ZERO`: all zero bytes, a valid `IrqSlot<T>`
                // for `T: Zeroable`.
                *slot = Some(unsafe { zeroed.assume_init() });
            }
        }
        // INVARIANT: `nr_cpu_ids` entries; nothing reached them yet.
        Ok(Self { slots })
    }
}

impl<T: Send> CpuSetIrq<T> {
    /// Whether `cpu` is one of the set's.
    pub(crate) fn contains(&self, cpu: u32) -> bool {
        matches!(self.slots.get(cpu as usize), Some(Some(_)))
    }

    /// Runs `f` on this CPU's `T`, interrupts being off (`irqs`); `None`
    /// (and `f` not run) if this CPU is not one of the set's, or if called
    /// from within `f` on the same slot.
    #[inline]
    pub(crate) fn with<R>(&self, irqs: &IrqsOff, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let slot = self.slots.get(irqs.cpu() as usize)?.as_deref()?;
        if slot.busy.replace(true) {
            return None;
        }
        // SAFETY: Interrupts are off on this CPU (`irqs`), whose slot this
        // is, and `busy` was false: no other reference to its `data`
        // exists, and none is made until `busy` is cleared below (type
        // invariant).
        let r = f(unsafe { &mut *slot.data.get() });
        slot.busy.set(false);
        Some(r)
    }
}

/// Creates a [`PerCpuLocked`] whose locks are a lockdep class of their own
/// (this call site's), with an optional name.
#[macro_export]
macro_rules! new_percpu_locked {
    ($init:expr $(, $name:literal)? $(,)?) => {
        $crate::rtrs::percpu::PerCpuLocked::new(
            $init,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// One CPU's slot of a [`PerCpuLocked`].
#[repr(C)]
struct LockedSlot<T> {
    lock: Opaque<kernel::bindings::local_lock_t>,
    data: UnsafeCell<T>,
}

/// One `T` per possible CPU, reached mutably under this CPU's `local_lock`.
///
/// # Invariants
///
/// `ptr` is a per-CPU allocation of `LockedSlot<T>`; every possible CPU's
/// slot has an initialised lock and `T`; `data` is only reached under that
/// CPU's lock, or through `&mut self`.
pub(crate) struct PerCpuLocked<T: Send> {
    ptr: NonNull<c_void>,
    _t: PhantomData<T>,
}

// SAFETY: Each slot's `T` is only reached by one context at a time (its
// CPU's lock, or `&mut self`), so sharing the container is fine for `T: Send`.
unsafe impl<T: Send> Send for PerCpuLocked<T> {}
// SAFETY: As above.
unsafe impl<T: Send> Sync for PerCpuLocked<T> {}

/// `&mut` access to this CPU's slot; the local lock is held until drop.
pub(crate) struct LocalGuard<'a, T: Send> {
    owner: &'a PerCpuLocked<T>,
    data: *mut T,
    _not_send: PhantomData<*mut ()>,
}

impl<T: Send> PerCpuLocked<T> {
    /// Allocates and initialises every possible CPU's slot with `init(cpu)`;
    /// the locks get lockdep class `key` and `name`. Sleeps (GFP_KERNEL).
    /// [`new_percpu_locked!`](crate::new_percpu_locked) passes a class of
    /// its own call site.
    pub(crate) fn new(
        mut init: impl FnMut(u32) -> T,
        name: &'static CStr,
        key: Pin<&'static LockClassKey>,
    ) -> Result<Self> {
        let size = core::mem::size_of::<LockedSlot<T>>();
        let align = core::mem::align_of::<LockedSlot<T>>();
        // SAFETY: Plain allocation; returns NULL on failure.
        let ptr = NonNull::new(unsafe { ffi::rtrs_alloc_percpu(size, align) }).ok_or(ENOMEM)?;
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if cpu_possible(cpu) {
                // SAFETY: A live per-CPU allocation and a possible CPU: the
                // slot is valid, aligned, and not shared yet.
                unsafe {
                    let slot = ffi::rtrs_per_cpu_ptr(ptr.as_ptr(), cpu).cast::<LockedSlot<T>>();
                    ffi::rtrs_local_lock_init(
                        (*slot).lock.get().cast(),
                        name.as_char_ptr(),
                        key.as_ptr().cast(),
                    );
                    (*slot).data.get().write(init(cpu));
                }
            }
        }
        // INVARIANT: every possible slot initialised.
        Ok(Self {
            ptr,
            _t: PhantomData,
        })
    }

    /// The per-CPU pointer to the locks (`&ptr->lock` in C terms).
    fn lock_ptr(&self) -> *mut c_void {
        // `lock` is the first field of the `repr(C)` slot.
        self.ptr.as_ptr()
    }

    /// Locks this CPU's slot (task context; may sleep on PREEMPT_RT).
    pub(crate) fn lock(&self, _ctx: &super::context::Sleepable) -> LocalGuard<'_, T> {
        // SAFETY: The locks were initialised in `new` (type invariant).
        unsafe { ffi::rtrs_local_lock(self.lock_ptr()) };
        // SAFETY: The lock pins this task to the CPU until it is released.
        let slot = unsafe { ffi::rtrs_this_cpu_ptr(self.ptr.as_ptr()) }.cast::<LockedSlot<T>>();
        LocalGuard {
            owner: self,
            // SAFETY: `slot` is this CPU's initialised slot.
            data: unsafe { (*slot).data.get() },
            _not_send: PhantomData,
        }
    }

    /// Every CPU's slot, with exclusive access to the whole container.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut T)> {
        let ptr = self.ptr;
        (0..kernel::cpu::nr_cpu_ids())
            .filter(|&cpu| cpu_possible(cpu))
            .map(move |cpu| {
                // SAFETY: `&mut self` excludes every lock holder; each CPU's slot
                // is yielded once.
                let slot =
                    unsafe { ffi::rtrs_per_cpu_ptr(ptr.as_ptr(), cpu) }.cast::<LockedSlot<T>>();
                // SAFETY: As above; the slot is initialised (type invariant).
                (cpu, unsafe { &mut *(*slot).data.get() })
            })
    }
}

impl<T: Send> Deref for LocalGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: The local lock is held: this CPU's slot is ours.
        unsafe { &*self.data }
    }
}

impl<T: Send> DerefMut for LocalGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: As in `deref`.
        unsafe { &mut *self.data }
    }
}

impl<T: Send> Drop for LocalGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: Releases the lock taken in `PerCpuLocked::lock`, on the same
        // CPU (migration is disabled while it is held).
        unsafe { ffi::rtrs_local_unlock(self.owner.lock_ptr()) };
    }
}

impl<T: Send> Drop for PerCpuLocked<T> {
    fn drop(&mut self) {
        for (_, t) in self.iter_mut() {
            // SAFETY: Initialised (type invariant) and dropped once, here.
            unsafe { core::ptr::drop_in_place(t) };
        }
        // SAFETY: Allocated by `__alloc_percpu_gfp`, freed once.
        unsafe { kernel::bindings::free_percpu(self.ptr.as_ptr()) };
    }
}
