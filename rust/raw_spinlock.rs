// SPDX-License-Identifier: GPL-2.0

//! Raw spinlocks: the locks that stay spinning locks on PREEMPT_RT.
//!
//! `raw_spinlock_t` disables preemption (and, in the irqsave variant, local
//! interrupts) and never sleeps, so it is the only lock that may be taken in
//! hard-IRQ context on PREEMPT_RT. The price: everything done under it adds to
//! the system's worst-case latency. Keep the sections short and bounded, and
//! never allocate or free memory under one (the allocator's locks sleep on RT).
//!
//! Both locks are backends of the kernel crate's generic
//! [`kernel::sync::lock::Lock`], so they have its guard type and its pin-init
//! construction, and they take part in lockdep with one class per
//! declaration site, like [`kernel::sync::SpinLock`].
//!
//! ```ignore
//! #[pin_data]
//! struct Shared {
//!     #[pin]
//!     count: RawSpinLockIrq<u64>,
//! }
//! let shared = KBox::pin_init(pin_init!(Shared { count <- new_raw_spinlock_irq!(0) }), GFP_KERNEL)?;
//! *shared.count.lock() += 1; // Interrupts off while the guard lives.
//! ```

use kernel::{
    bindings,
    ffi::{
        c_char,
        c_ulong, //
    },
    sync::lock::{
        Backend,
        Guard,
        Lock, //
    },
};

use super::{
    context::IrqsOff,
    ffi, //
};

/// A raw spinlock protecting a `T`; does not disable interrupts.
///
/// Take it in hard-IRQ context, or in task context when no interrupt handler
/// takes the same lock (lockdep reports the inconsistency otherwise); when one
/// does, use [`RawSpinLockIrq`] in task context.
pub(crate) type RawSpinLock<T> = Lock<T, RawSpinLockBackend>;

/// The guard of a [`RawSpinLock`].
pub(crate) type RawSpinLockGuard<'a, T> = Guard<'a, T, RawSpinLockBackend>;

/// A raw spinlock that also disables local interrupts while held
/// (`raw_spin_lock_irqsave`).
pub(crate) type RawSpinLockIrq<T> = Lock<T, RawSpinLockIrqBackend>;

/// The guard of a [`RawSpinLockIrq`]; restores the interrupt state on drop.
pub(crate) type RawSpinLockIrqGuard<'a, T> = Guard<'a, T, RawSpinLockIrqBackend>;

/// Taking a [`RawSpinLockIrq`] where interrupts are already off (hard-IRQ
/// context: [`HardIrq::irqs_off`](super::context::HardIrq::irqs_off)),
/// without saving and restoring them, as the kernel's
/// `SpinLockIrq::lock_with` does for its lock.
pub(crate) trait LockIrqsOff<T> {
    /// Locks; interrupts stay as they are (off).
    fn lock_with<'a>(&'a self, irqs_off: &'a IrqsOff) -> RawSpinLockGuard<'a, T>;
}

impl<T> LockIrqsOff<T> for RawSpinLockIrq<T> {
    #[inline]
    fn lock_with<'a>(&'a self, _irqs_off: &'a IrqsOff) -> RawSpinLockGuard<'a, T> {
        // SAFETY: `Lock` is `repr(C)` and both backends have the same
        // `State` (`raw_spinlock_t`), so the two types have one layout; with
        // interrupts off (the token, for `'a`) taking the lock without
        // saving them is what `RawSpinLockIrqBackend` would do.
        let plain: &'a RawSpinLock<T> = unsafe { core::mem::transmute(self) };
        plain.lock()
    }
}

/// Creates a [`RawSpinLock`] initialiser with a lockdep class for this call
/// site and an optional name.
#[macro_export]
macro_rules! new_raw_spinlock {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::rtrs::raw_spinlock::RawSpinLock::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// Creates a [`RawSpinLockIrq`] initialiser with a lockdep class for this
/// call site and an optional name.
#[macro_export]
macro_rules! new_raw_spinlock_irq {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::rtrs::raw_spinlock::RawSpinLockIrq::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// Backend of [`RawSpinLock`].
pub(crate) struct RawSpinLockBackend;

// SAFETY: `raw_spinlock_t` provides mutual exclusion; `relock` uses the
// default implementation, which always calls the same locking method.
unsafe impl Backend for RawSpinLockBackend {
    type State = bindings::raw_spinlock_t;
    type GuardState = ();

    #[inline]
    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key) {
        // SAFETY: `ptr` is valid for writes and `name`, `key` live forever
        // (the safety requirements of `init`).
        unsafe { ffi::rtrs_raw_spin_lock_init(ptr, name, key.cast()) }
    }

    #[inline]
    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: `init` was called on `ptr` (the safety requirements of `lock`).
        unsafe { ffi::rtrs_raw_spin_lock(ptr) }
    }

    #[inline]
    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: `init` was called on `ptr`.
        if unsafe { ffi::rtrs_raw_spin_trylock(ptr) } != 0 {
            Some(())
        } else {
            None
        }
    }

    #[inline]
    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: The caller owns the lock (the safety requirements of `unlock`).
        unsafe { ffi::rtrs_raw_spin_unlock(ptr) }
    }

    #[inline]
    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: `init` was called on `ptr`.
        unsafe { ffi::rtrs_raw_spin_assert_held(ptr) }
    }
}

/// Backend of [`RawSpinLockIrq`]; the guard state is the saved interrupt flags.
pub(crate) struct RawSpinLockIrqBackend;

// SAFETY: `raw_spinlock_t` provides mutual exclusion; `unlock` restores the
// interrupt state saved by the `lock` or `try_lock` that produced the guard.
unsafe impl Backend for RawSpinLockIrqBackend {
    type State = bindings::raw_spinlock_t;
    type GuardState = c_ulong;

    #[inline]
    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key) {
        // SAFETY: As in `RawSpinLockBackend::init`.
        unsafe { ffi::rtrs_raw_spin_lock_init(ptr, name, key.cast()) }
    }

    #[inline]
    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: `init` was called on `ptr`.
        unsafe { ffi::rtrs_raw_spin_lock_irqsave(ptr) }
    }

    #[inline]
    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: `init` was called on `ptr`. Interrupts are disabled around
        // the attempt and stay disabled only when it succeeds.
        unsafe {
            let flags = ffi::rtrs_raw_spin_lock_irqsave_try(ptr);
            if flags.taken {
                Some(flags.flags)
            } else {
                None
            }
        }
    }

    #[inline]
    unsafe fn unlock(ptr: *mut Self::State, guard_state: &Self::GuardState) {
        // SAFETY: The caller owns the lock; `guard_state` holds the flags
        // saved when it was taken.
        unsafe { ffi::rtrs_raw_spin_unlock_irqrestore(ptr, *guard_state) }
    }

    #[inline]
    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: `init` was called on `ptr`.
        unsafe { ffi::rtrs_raw_spin_assert_held(ptr) }
    }
}
