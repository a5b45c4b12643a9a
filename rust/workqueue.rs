// SPDX-License-Identifier: GPL-2.0

//! A module's own ordered workqueue, for work that may wait long: the end
//! of a session whose kernel thread cannot run yet, for instance.
//!
//! The `kernel` crate (7.3) queues work on the system's queues only, and
//! cannot wait for a work item to finish. A module whose work items run its
//! code must not unload before they have: [`ModuleQueue`] lives in a static,
//! the module's init installs it ([`ModuleQueue::install`]), and the
//! [`Installed`] guard it returns, dropped at module exit, drains and
//! destroys it (`destroy_workqueue`).
//!
//! The queue is ordered (`alloc_ordered_workqueue`): one item at a time,
//! in the order queued. [`ModuleQueue::flush_killable`] waits until every
//! item queued before it has run, and a fatal signal ends that wait.
//!
//! A work item runs in a worker thread, task context: a type implements
//! [`TaskWork`], whose `run` is lent the [`Sleepable`] that proves it, and
//! [`impl_task_work!`](crate::impl_task_work) makes it the `WorkItem`.

use kernel::{
    bindings, impl_has_work, new_work,
    prelude::*,
    str::CStr,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Release, //
        },
        Arc, //
    },
    workqueue::{
        Queue,
        RawWorkItem,
        Work,
        WorkItem, //
    },
};

use super::{
    context::Sleepable,
    sync::Completion, //
};

/// An ordered workqueue owned by a module, kept in a static.
///
/// # Invariants
///
/// `wq` is null, or the workqueue [`Self::install`] made, which its
/// [`Installed`] guard destroys only when no task can call
/// [`Self::enqueue`] or [`Self::flush_killable`] any more.
pub(crate) struct ModuleQueue {
    wq: Atomic<*mut bindings::workqueue_struct>,
}

/// The installed queue of a [`ModuleQueue`]: dropping it waits until every
/// item queued has run, then frees the queue.
pub(crate) struct Installed {
    q: &'static ModuleQueue,
}

impl ModuleQueue {
    /// A queue not installed yet.
    pub(crate) const fn new() -> Self {
        Self {
            wq: Atomic::new(core::ptr::null_mut()),
        }
    }

    /// Allocates the queue, named `name`. Sleeps.
    ///
    /// # Safety
    ///
    /// The guard is dropped only once no task can call [`Self::enqueue`]
    /// or [`Self::flush_killable`] of `self` any more: at module exit, after
    /// the device whose file operations call them is gone.
    pub(crate) unsafe fn install(&'static self, name: &'static CStr) -> Result<Installed> {
        let flags = bindings::wq_flags_WQ_UNBOUND | bindings::wq_flags___WQ_ORDERED;
        // SAFETY: `alloc_ordered_workqueue("%s", 0, name)`: the format takes
        // the one string given, which lives for ever.
        let wq = unsafe {
            bindings::alloc_workqueue_noprof(c"%s".as_char_ptr(), flags, 1, name.as_char_ptr())
        };
        if wq.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a new queue; the caller drops the guard only when no
        // task can use it any more.
        self.wq.store(wq, Release);
        Ok(Installed { q: self })
    }

    fn queue(&self) -> Option<&Queue> {
        let wq = self.wq.load(Acquire);
        if wq.is_null() {
            return None;
        }
        // SAFETY: By the type invariant, the queue is alive while a task
        // can call this.
        Some(unsafe { Queue::from_raw(wq) })
    }

    /// Queues `w`; gives it back if it is queued already, or the queue is
    /// not installed. Any task context.
    pub(crate) fn enqueue<W>(&self, w: W) -> Result<(), W>
    where
        W: RawWorkItem<0, EnqueueOutput = Result<(), W>> + Send + 'static,
    {
        match self.queue() {
            Some(q) => q.enqueue(w),
            None => Err(w),
        }
    }

    /// Waits until every item queued before this call has run; `EINTR` if
    /// a fatal signal comes first (the items run anyway). Sleeps.
    pub(crate) fn flush_killable(&self, ctx: &Sleepable) -> Result {
        let b = Arc::pin_init(
            try_pin_init!(Barrier {
                work <- new_work!("rtrs::workqueue::Barrier"),
                done <- Completion::new(),
            }),
            GFP_KERNEL,
        )?;
        // (Without a queue, nothing was queued before.)
        if self.enqueue(b.clone()).is_err() {
            return Ok(());
        }
        b.done.wait_killable(ctx)
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let wq = self.q.wq.load(Acquire);
        self.q.wq.store(core::ptr::null_mut(), Release);
        // SAFETY: The queue `install` made, destroyed once (only this guard
        // does, and it is not `Clone`); no task queues on it any more (the
        // caller of `install` promised). This waits until every item queued
        // has run.
        unsafe { bindings::destroy_workqueue(wq) };
    }
}

/// What [`ModuleQueue::flush_killable`] queues: it completes when it runs.
#[pin_data]
struct Barrier {
    #[pin]
    work: Work<Barrier>,
    #[pin]
    done: Completion,
}

impl_has_work! {
    impl HasWork<Self> for Barrier { self.work }
}

impl WorkItem for Barrier {
    type Pointer = Arc<Self>;

    fn run(this: Arc<Self>) {
        this.done.complete_all();
    }
}

/// A work item's code, lent the task context of the worker thread that runs
/// it. [`impl_task_work!`](crate::impl_task_work) makes the type a
/// `WorkItem` whose pointer is an `Arc`.
pub(crate) trait TaskWork: Sized {
    /// Runs the item, in a worker thread.
    fn run(ctx: &Sleepable, this: Arc<Self>);
}

/// Implements `WorkItem` (pointer `Arc<T>`) for a type `T` that implements
/// [`TaskWork`] and `HasWork<T>`. Queue it on a [`ModuleQueue`] (or a
/// system queue of worker threads): an item that runs in softirq, from a
/// BH workqueue, is not run but warned about (and leaked), as it would
/// sleep there.
#[macro_export]
macro_rules! impl_task_work {
    ($t:ty) => {
        impl ::kernel::workqueue::WorkItem for $t {
            type Pointer = ::kernel::sync::Arc<$t>;

            fn run(this: ::kernel::sync::Arc<$t>) {
                if ::kernel::warn_on!(!$crate::rtrs::preempt::in_task()) {
                    // (Leaked: its drop may sleep, as its code may.)
                    ::core::mem::forget(this);
                    return;
                }
                // SAFETY: In task context (checked above): a worker thread,
                // which may sleep.
                let ctx = unsafe { $crate::rtrs::context::Sleepable::assume_sleepable() };
                <$t as $crate::rtrs::workqueue::TaskWork>::run(ctx, this)
            }
        }
    };
}
