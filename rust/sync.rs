// SPDX-License-Identifier: GPL-2.0

//! Sleeping locks that demand a [`Sleepable`] token.
//!
//! [`TaskMutex`] and [`TaskSpinLock`] wrap the kernel's `Mutex` and
//! `SpinLock` (a sleeping lock on PREEMPT_RT) and can only be locked by code
//! that holds a [`Sleepable`] token. Hard-IRQ callbacks get a
//! [`HardIrq`](super::context::HardIrq) token instead, so taking one of these
//! locks there does not compile.

use kernel::{
    prelude::*,
    str::CStr,
    sync::{
        LockClassKey,
        Mutex,
        MutexGuard,
        SpinLock,
        SpinLockGuard, //
    },
};

use super::context::Sleepable;

/// A [`Mutex`] that only sleepable contexts can lock.
#[pin_data]
pub(crate) struct TaskMutex<T> {
    #[pin]
    inner: Mutex<T>,
}

impl<T> TaskMutex<T> {
    /// An initialiser; use [`new_task_mutex!`](crate::new_task_mutex).
    pub(crate) fn new(
        t: impl PinInit<T>,
        name: &'static CStr,
        key: Pin<&'static LockClassKey>,
    ) -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Mutex::new(t, name, key),
        })
    }

    /// Locks the mutex; may sleep, hence the token.
    pub(crate) fn lock<'a>(&'a self, _ctx: &Sleepable<'_>) -> MutexGuard<'a, T> {
        self.inner.lock()
    }
}

/// A [`SpinLock`] (sleeping on PREEMPT_RT) that only sleepable contexts can lock.
#[pin_data]
pub(crate) struct TaskSpinLock<T> {
    #[pin]
    inner: SpinLock<T>,
}

impl<T> TaskSpinLock<T> {
    /// An initialiser; use [`new_task_spinlock!`](crate::new_task_spinlock).
    pub(crate) fn new(
        t: impl PinInit<T>,
        name: &'static CStr,
        key: Pin<&'static LockClassKey>,
    ) -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- SpinLock::new(t, name, key),
        })
    }

    /// Locks the spinlock; sleeps on PREEMPT_RT, hence the token.
    pub(crate) fn lock<'a>(&'a self, _ctx: &Sleepable<'_>) -> SpinLockGuard<'a, T> {
        self.inner.lock()
    }
}

/// Creates a [`TaskMutex`] initialiser with a lockdep class for this call site.
#[macro_export]
macro_rules! new_task_mutex {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::rtrs::sync::TaskMutex::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// Creates a [`TaskSpinLock`] initialiser with a lockdep class for this call site.
#[macro_export]
macro_rules! new_task_spinlock {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::rtrs::sync::TaskSpinLock::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
