// SPDX-License-Identifier: GPL-2.0

//! Sleeping locks that demand a [`Sleepable`] token.
//!
//! [`TaskMutex`] and [`TaskSpinLock`] wrap the kernel's `Mutex` and
//! `SpinLock` (a sleeping lock on PREEMPT_RT) and can only be locked by code
//! that holds a [`Sleepable`] token. Hard-IRQ callbacks get a
//! [`HardIrq`](super::context::HardIrq) token instead, so taking one of these
//! locks there does not compile. A [`TaskMutex`] can also be waited for
//! interruptibly ([`TaskMutex::lock_interruptible`]), as a system call
//! waiting for another's slow work should be. A [`Completion`] can be waited
//! for killably, as a system call waiting for a task that may not run for
//! long (another CPU's kernel thread, kept off by a higher priority) should
//! be: the `kernel` crate's waits uninterruptibly only.

use kernel::{
    bindings,
    ffi::c_void,
    prelude::*,
    str::CStr,
    sync::{
        lock::{
            mutex::MutexBackend,
            spinlock::SpinLockBackend,
            Backend,
            Guard,
            Lock, //
        },
        CondVar,
        CondVarTimeoutResult,
        LockClassKey, //
    },
    time::Jiffies,
    types::Opaque,
};

use super::{
    context::Sleepable,
    ffi, //
};

/// A kernel lock of backend `B` that only sleepable contexts can lock.
#[pin_data]
pub(crate) struct TaskLock<T, B: Backend> {
    #[pin]
    inner: Lock<T, B>,
}

/// A [`kernel::sync::Mutex`] that only sleepable contexts can lock.
pub(crate) type TaskMutex<T> = TaskLock<T, MutexBackend>;

/// A [`kernel::sync::SpinLock`] (sleeping on PREEMPT_RT) that only sleepable
/// contexts can lock.
pub(crate) type TaskSpinLock<T> = TaskLock<T, SpinLockBackend>;

impl<T, B: Backend> TaskLock<T, B> {
    /// An initialiser; use [`new_task_mutex!`](crate::new_task_mutex) or
    /// [`new_task_spinlock!`](crate::new_task_spinlock).
    pub(crate) fn new(
        t: impl PinInit<T>,
        name: &'static CStr,
        key: Pin<&'static LockClassKey>,
    ) -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- Lock::new(t, name, key),
        })
    }

    /// Locks; may sleep (always for a mutex, on PREEMPT_RT for a spinlock),
    /// hence the token.
    pub(crate) fn lock<'a>(&'a self, _ctx: &Sleepable) -> Guard<'a, T, B> {
        self.inner.lock()
    }

    /// Locks if nobody holds the lock, without waiting. Task context only,
    /// like the lock itself (an rt_mutex on PREEMPT_RT).
    pub(crate) fn try_lock<'a>(&'a self, _ctx: &Sleepable) -> Option<Guard<'a, T, B>> {
        self.inner.try_lock()
    }
}

impl<T> TaskMutex<T> {
    /// Locks, unless a signal comes first: then `ERESTARTSYS`, the lock not
    /// taken (the system call is restarted, or fails with `EINTR`, as the
    /// signal's handler asks). For a system call that would otherwise wait
    /// uninterruptibly for as long as the holder takes, such as a copy to
    /// user space that faults on slow memory.
    pub(crate) fn lock_interruptible<'a>(
        &'a self,
        _ctx: &Sleepable,
    ) -> Result<Guard<'a, T, MutexBackend>> {
        // The `struct mutex` of `self.inner`: `Lock` is `#[repr(C)]` with
        // its `Opaque<bindings::mutex>` first, the layout `Lock::from_raw`
        // relies on too.
        let ptr = core::ptr::from_ref(&self.inner).cast::<c_void>().cast_mut();
        // SAFETY: `ptr` is the mutex of `self.inner`, initialised by
        // `Lock::new` and alive while `self` is borrowed; it is in an
        // `Opaque`, written through a shared reference as C does. The caller
        // may sleep (`_ctx`).
        if unsafe { ffi::rtrs_mutex_lock_interruptible(ptr) } != 0 {
            return Err(ERESTARTSYS);
        }
        // SAFETY: The current task has just locked the mutex of `self.inner`.
        Ok(unsafe { Guard::new(&self.inner, ()) })
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

/// The locks a [`TaskCondVar`] may release while it waits: sleeping ones.
/// With a raw spinlock held, the wait queue's lock (a sleeping lock on
/// PREEMPT_RT) would be taken in an atomic section.
pub(crate) trait SleepingBackend: Backend {}

impl SleepingBackend for MutexBackend {}
impl SleepingBackend for SpinLockBackend {}

/// A [`kernel::sync::CondVar`] that only sleepable contexts can use: its
/// waits sleep, and on PREEMPT_RT its wait queue's lock, which a wake-up
/// takes, sleeps too; it waits with a sleeping lock's guard only
/// ([`SleepingBackend`]).
#[pin_data]
pub(crate) struct TaskCondVar {
    #[pin]
    inner: CondVar,
}

impl TaskCondVar {
    /// An initialiser; use [`new_task_condvar!`](crate::new_task_condvar).
    pub(crate) fn new(name: &'static CStr, key: Pin<&'static LockClassKey>) -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- CondVar::new(name, key),
        })
    }

    /// Releases the lock of `guard`, sleeps until notified, and takes the
    /// lock again (uninterruptibly; it may wake up spuriously).
    pub(crate) fn wait<T: ?Sized, B: SleepingBackend>(
        &self,
        _ctx: &Sleepable,
        guard: &mut Guard<'_, T, B>,
    ) {
        self.inner.wait(guard);
    }

    /// As [`Self::wait`], interruptible by a signal and for `jiffies` at
    /// most.
    pub(crate) fn wait_interruptible_timeout<T: ?Sized, B: SleepingBackend>(
        &self,
        _ctx: &Sleepable,
        guard: &mut Guard<'_, T, B>,
        jiffies: Jiffies,
    ) -> CondVarTimeoutResult {
        self.inner.wait_interruptible_timeout(guard, jiffies)
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self, _ctx: &Sleepable) {
        self.inner.notify_all();
    }
}

/// Creates a [`TaskCondVar`] initialiser with a lockdep class for this call
/// site.
#[macro_export]
macro_rules! new_task_condvar {
    ($($name:literal)? $(,)?) => {
        $crate::rtrs::sync::TaskCondVar::new(
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}

/// A completion (`struct completion`) that can be waited for killably.
///
/// # Invariants
///
/// `inner` is initialised by [`Self::new`].
#[pin_data]
pub(crate) struct Completion {
    #[pin]
    inner: Opaque<bindings::completion>,
}

// SAFETY: A completion may be completed and waited for from any task.
unsafe impl Send for Completion {}
// SAFETY: As above, concurrently (its own lock serialises them).
unsafe impl Sync for Completion {}

impl Completion {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // INVARIANT: initialised here.
            inner <- Opaque::ffi_init(|slot: *mut bindings::completion| {
                // SAFETY: `slot` is valid, uninitialised memory for a
                // completion, pinned.
                unsafe { bindings::init_completion(slot) };
            }),
        })
    }

    /// Completes it for good: every waiter goes on, now and later. Task
    /// context (on PREEMPT_RT, not with interrupts off).
    pub(crate) fn complete_all(&self) {
        // SAFETY: An initialised completion (type invariant).
        unsafe { bindings::complete_all(self.inner.get()) };
    }

    /// Waits until it is completed; `EINTR` if a fatal signal comes first.
    /// Sleeps (killably: `D` in `ps`, but `SIGKILL` ends it).
    pub(crate) fn wait_killable(&self, _ctx: &Sleepable) -> Result {
        // SAFETY: An initialised completion (type invariant); the caller may
        // sleep (`_ctx`).
        if unsafe { bindings::wait_for_completion_killable(self.inner.get()) } != 0 {
            return Err(EINTR);
        }
        Ok(())
    }
}
