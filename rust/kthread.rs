// SPDX-License-Identifier: GPL-2.0

//! Real-time kernel threads bound to one CPU.
//!
//! [`RtThread::new_on_cpu`] creates a kernel thread bound to a CPU at a
//! SCHED_FIFO priority (like timerlat's `timerlat/N` threads), running
//! [`RtThreadFn::run`] on shared data. [`RtThread::wake`] may be called from
//! any context, including hard IRQ (`wake_up_process` takes raw locks only).
//! Dropping the [`RtThread`] stops the thread and waits until its function
//! has returned (`kthread_stop`), so the data outlives every use by the thread
//! and a module can stop its threads safely on exit.

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_void, //
    },
    prelude::*,
    str::CStr,
    sync::Arc, //
};

use super::{
    context::Sleepable,
    ffi, //
};

/// The body of an [`RtThread`].
pub(crate) trait RtThreadFn: Send + Sync + 'static {
    /// Runs in the thread until [`ThreadContext::should_stop`] says so, then
    /// returns.
    fn run(this: &Self, ctx: &ThreadContext<'_>);
}

/// What a running [`RtThread`] knows about itself.
pub(crate) struct ThreadContext<'a> {
    cpu: u32,
    sleepable: &'a Sleepable,
}

impl ThreadContext<'_> {
    /// The CPU the thread is bound to.
    pub(crate) fn cpu(&self) -> u32 {
        self.cpu
    }

    /// True once the owner asked the thread to stop; `run` must then return.
    pub(crate) fn should_stop(&self) -> bool {
        // SAFETY: Called from a kernel thread, as `kthread_should_stop` requires.
        unsafe { bindings::kthread_should_stop() }
    }

    /// Proof that the thread may sleep (it runs in task context).
    pub(crate) fn sleepable(&self) -> &Sleepable {
        self.sleepable
    }

    /// Sleeps until `cond()` is true or the thread is asked to stop; returns
    /// `cond()`. A wake-up ([`RtThread::wake`]) makes it test `cond` again;
    /// none is lost, since the state is set before `cond` is tested.
    pub(crate) fn wait_until(&self, mut cond: impl FnMut() -> bool) -> bool {
        loop {
            // SAFETY: Sets the current task's state; always allowed in task context.
            unsafe { ffi::rtrs_set_current_interruptible() };
            if cond() {
                // SAFETY: As above.
                unsafe { ffi::rtrs_set_current_running() };
                return true;
            }
            if self.should_stop() {
                // SAFETY: As above.
                unsafe { ffi::rtrs_set_current_running() };
                return false;
            }
            // SAFETY: Task context, may sleep; the state was set above.
            unsafe { bindings::schedule() };
        }
    }
}

/// What the C thread function receives.
struct Start<T: RtThreadFn> {
    data: Arc<T>,
    cpu: u32,
}

/// A kernel thread bound to one CPU, running `T::run`; stopped on drop.
///
/// # Invariants
///
/// `task` is a kernel thread made by `rtrs_kthread_create_on_cpu`, with a
/// reference held by this object, whose thread function reads `start` until
/// it returns; it is stopped (and the reference dropped) only by `drop`.
pub(crate) struct RtThread<T: RtThreadFn> {
    task: *mut bindings::task_struct,
    start: KBox<Start<T>>,
}

// SAFETY: The task pointer is a counted reference usable from any thread, and
// `T` is `Send + Sync`.
unsafe impl<T: RtThreadFn> Send for RtThread<T> {}
// SAFETY: `wake` is allowed from any context concurrently.
unsafe impl<T: RtThreadFn> Sync for RtThread<T> {}

/// The C thread function of an [`RtThread`].
///
/// # Safety
///
/// `arg` points to the `Start<T>` of a live `RtThread<T>`, which is not
/// dropped before this function returns (`kthread_stop` waits for it).
unsafe extern "C" fn trampoline<T: RtThreadFn>(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Start<T>` boxed in the `RtThread`, which stays
    // alive until `kthread_stop` has returned, i.e. after this function has
    // returned.
    let start = unsafe { &*arg.cast::<Start<T>>() };
    let ctx = ThreadContext {
        cpu: start.cpu,
        // SAFETY: A kernel thread function runs in task context and may sleep.
        sleepable: unsafe { Sleepable::assume_sleepable() },
    };
    T::run(&start.data, &ctx);
    // `kthread_stop` expects the function to wait for it: keep sleeping until
    // asked to stop, in case `run` returned early.
    ctx.wait_until(|| false);
    0
}

impl<T: RtThreadFn> RtThread<T> {
    /// Creates and starts a thread bound to `cpu` running `T::run(&data)`,
    /// named `name` (`%u` is replaced by the CPU), SCHED_FIFO at `prio`
    /// (1..=99), or SCHED_OTHER when `prio` is 0.
    pub(crate) fn new_on_cpu(
        data: Arc<T>,
        cpu: u32,
        prio: u32,
        name: &'static CStr,
    ) -> Result<Self> {
        if prio > 99 || !super::cpu::cpu_online(cpu) {
            return Err(EINVAL);
        }
        let start = KBox::new(Start { data, cpu }, GFP_KERNEL)?;
        let arg = core::ptr::from_ref::<Start<T>>(&*start)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: `trampoline::<T>` matches the thread function signature; the
        // `Start` it gets lives in the returned object until the thread is
        // stopped (see `drop`).
        let task = unsafe {
            ffi::rtrs_kthread_create_on_cpu(
                trampoline::<T>,
                arg,
                cpu,
                name.as_char_ptr(),
                prio as c_int,
            )
        }
        .cast::<bindings::task_struct>();
        kernel::error::from_err_ptr(task)?;
        // SAFETY: `task` is a valid new kernel thread.
        unsafe { bindings::wake_up_process(task) };
        // INVARIANT: created with a reference, runs `trampoline` on `start`.
        Ok(Self { task, start })
    }

    /// Wakes the thread; allowed in any context, including hard IRQ.
    #[inline]
    pub(crate) fn wake(&self) {
        // SAFETY: `task` is valid while `self` lives (type invariant).
        unsafe { bindings::wake_up_process(self.task) };
    }

    /// The thread's data.
    pub(crate) fn data(&self) -> &Arc<T> {
        &self.start.data
    }

    /// The CPU the thread is bound to.
    pub(crate) fn cpu(&self) -> u32 {
        self.start.cpu
    }
}

impl<T: RtThreadFn> Drop for RtThread<T> {
    fn drop(&mut self) {
        // SAFETY: `task` is our counted reference (type invariant); this
        // waits until the thread function has returned, so `start` is no
        // longer used when it is freed after this.
        unsafe { ffi::rtrs_kthread_stop_put(self.task.cast()) };
    }
}
