// SPDX-License-Identifier: GPL-2.0

//! One bound edu device ([`Instance`]) and its operations: factorial and
//! DMA round trip, each started once the device is idle and completed by
//! its interrupt; detaching at unbind.
//!
//! An instance holds the latency sessions measured on it, of a type the
//! floor above names (`session::EduSession`, whose `EduInstance` is this
//! type with it): a session holds its instance, and this file names no
//! session type.

use core::ptr;

use kernel::{
    device::Core,
    dma::Coherent,
    io::Io,
    pci,
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Release, //
        },
        Arc,
        CondVarTimeoutResult, //
    },
    time::{
        delay::fsleep,
        msecs_to_jiffies,
        Delta, //
    },
};

use crate::{
    regs::{
        self,
        Bar0,
        DevresBar0, //
    },
    rtrs::{
        self,
        context::Sleepable,
        irq::IrqThread,
        measure::{
            self,
            Sessions,
            Source, //
        },
        sync::{
            TaskCondVar,
            TaskMutex, //
        },
        time::ktime_ns,
        uapi::StopReason, //
    },
};

/// How long a device operation waits for its completion interrupt.
const OP_TIMEOUT_MS: u32 = 2000;
/// How long the driver waits for the device to end an earlier operation.
const IDLE_TIMEOUT_MS: i64 = 2000;

/// The largest `n` whose `n!` a `u32` holds (`RTEDU_FACTORIAL_MAX`): the
/// device computes `n!` modulo 2^32, which for larger `n` is not `n!` (and
/// takes it up to `n` multiplications, seconds for the largest).
const FACTORIAL_MAX: u32 = 12;
/// `n!` for `n` in `0..=FACTORIAL_MAX`, to check the device's answer.
const FACTORIALS: [u32; FACTORIAL_MAX as usize + 1] = {
    let mut f = [1u32; FACTORIAL_MAX as usize + 1];
    let mut n = 1;
    while n < f.len() {
        f[n] = f[n - 1] * n as u32;
        n += 1;
    }
    f
};

/// One bound edu device, shared with its open files (which may outlive the
/// binding), and the sessions `S` that measure on it.
#[pin_data]
pub(crate) struct Instance<S> {
    pub(crate) index: u32,
    pub(crate) ident: u32,
    pub(crate) pci_domain: u32,
    pub(crate) pci_devid: u32,
    pub(crate) irq: u32,
    pub(crate) irq_type: u32,
    pub(crate) dma_bits: u32,
    /// The BAR; revoked by devres once the device is unbound.
    pub(crate) bar: DevresBar0,
    /// Unbound: every operation fails with `ENODEV`.
    pub(crate) gone: Atomic<bool>,
    /// Interrupt status bits the hard half saw, for the thread half.
    pub(crate) pending: Atomic<u32>,
    /// When the hard half saw the latency probe's interrupt.
    pub(crate) probe_irq_ns: Atomic<i64>,
    pub(crate) irqs: Atomic<u64>,
    pub(crate) spurious: Atomic<u64>,
    pub(crate) irq_thread: IrqThread,
    #[pin]
    pub(crate) sessions: TaskMutex<Sessions<S>>,
    /// The running session, which the IRQ thread completes records into.
    #[pin]
    pub(crate) active: TaskMutex<Option<Arc<S>>>,
    /// Serialises the device operations (factorial, DMA); holds the DMA
    /// buffer (`None` without DMA, and once unbound).
    #[pin]
    pub(crate) ops: TaskMutex<Option<Coherent<[u8]>>>,
    /// Completion bits (`IRQ_FACT`, `IRQ_DMA`) from the IRQ thread.
    #[pin]
    pub(crate) done: TaskMutex<u32>,
    #[pin]
    pub(crate) done_cv: TaskCondVar,
}

impl<S: Source> Instance<S> {
    pub(crate) fn gone(&self) -> bool {
        self.gone.load(Acquire)
    }

    /// Runs `f` on the BAR, or `ENODEV` once it is revoked. Any context.
    pub(crate) fn with_bar<R>(&self, f: impl FnOnce(&Bar0<'_>) -> R) -> Result<R> {
        self.bar.try_access_with(|bar| f(bar)).ok_or(ENODEV)
    }

    /// Waits, polling, until `busy` says the device is no longer at an
    /// earlier operation: `Ok(false)` if it still is after
    /// [`IDLE_TIMEOUT_MS`]; `EINTR` on a signal if `interruptible`.
    fn wait_idle(
        &self,
        _ctx: &Sleepable,
        busy: fn(&Bar0<'_>) -> bool,
        interruptible: bool,
    ) -> Result<bool> {
        let deadline = ktime_ns() + IDLE_TIMEOUT_MS * 1_000_000;
        while self.with_bar(busy)? {
            if ktime_ns() >= deadline {
                return Ok(false);
            }
            if interruptible && kernel::current!().signal_pending() {
                return Err(EINTR);
            }
            fsleep(Delta::from_millis(1));
        }
        Ok(true)
    }

    /// Starts a device operation and waits for its completion interrupt.
    ///
    /// `busy` tells whether the device is at an operation of this kind. An
    /// earlier one that ended early (signal, timeout) may still be running:
    /// the device would ignore this one's command, and take the earlier
    /// one's completion for this one's. So this one starts only once the
    /// device is idle (`EBUSY` if it does not get idle in time), and an
    /// interrupt completes it only if the device is idle then.
    fn run_op(
        &self,
        ctx: &Sleepable,
        bit: u32,
        busy: fn(&Bar0<'_>) -> bool,
        start: impl FnOnce(&Bar0<'_>),
    ) -> Result<u64> {
        if !self.wait_idle(ctx, busy, true)? {
            return Err(EBUSY);
        }
        *self.done.lock(ctx) &= !bit;
        let t0 = ktime_ns();
        self.with_bar(start)?;
        let mut done = self.done.lock(ctx);
        let mut left = msecs_to_jiffies(OP_TIMEOUT_MS);
        loop {
            if *done & bit != 0 {
                if !self.with_bar(busy)? {
                    break;
                }
                // An earlier operation's completion.
                *done &= !bit;
            }
            if self.gone() {
                return Err(ENODEV);
            }
            match self
                .done_cv
                .wait_interruptible_timeout(ctx, &mut done, left)
            {
                CondVarTimeoutResult::Timeout => {
                    if *done & bit == 0 || self.with_bar(busy)? {
                        return Err(ETIMEDOUT);
                    }
                }
                CondVarTimeoutResult::Signal { .. } => return Err(EINTR),
                CondVarTimeoutResult::Woken { jiffies } => left = jiffies,
            }
        }
        Ok((ktime_ns() - t0) as u64)
    }

    /// `n!` computed by the device, for `n` up to [`FACTORIAL_MAX`].
    pub(crate) fn factorial(&self, ctx: &Sleepable, n: u32) -> Result<u32> {
        let want = *FACTORIALS.get(n as usize).ok_or(EINVAL)?;
        let _serial = self.ops.lock(ctx);
        if self.gone() {
            return Err(ENODEV);
        }
        // The device ignores a command while it computes: `run_op` starts
        // this one only once an earlier one (that timed out, say) is done,
        // and completes it only when the device is idle again.
        self.run_op(ctx, regs::IRQ_FACT, regs::computing, |bar| {
            bar.write32(regs::STATUS_IRQ_FACT, regs::STATUS);
            bar.write32(n, regs::FACTORIAL);
        })?;
        let result = self.with_bar(|bar| bar.read32(regs::FACTORIAL))?;
        if result != want {
            pr_err!(
                "rtedu{}: {}! computed as {}, not {}\n",
                self.index,
                n,
                result,
                want
            );
            return Err(EIO);
        }
        Ok(result)
    }

    /// Copies `data` to the device and back through the DMA buffer; checks
    /// and returns what came back in `data`, and the two transfer times.
    pub(crate) fn dma_round_trip(&self, ctx: &Sleepable, data: &mut [u8]) -> Result<(u64, u64)> {
        let len = data.len();
        if len == 0 || len > regs::DMA_BUF_SIZE {
            return Err(EINVAL);
        }
        let ops = self.ops.lock(ctx);
        if self.gone() {
            return Err(ENODEV);
        }
        let buf = ops.as_ref().ok_or(EOPNOTSUPP)?;
        let host = buf.as_mut_ptr().cast::<u8>();
        // The DMA registers are written with 32-bit accesses, which the
        // device takes as the whole address: `dma_bits` is at most 32.
        let addr = u32::try_from(buf.dma_address()).map_err(|_| EIO)?;
        // A transfer of an earlier round trip that ended early may still
        // be running.
        if !self.wait_idle(ctx, regs::dma_running, true)? {
            return Err(EBUSY);
        }
        // SAFETY: `host` is the coherent buffer of `DMA_BUF_SIZE` bytes, not
        // accessed by the device now (no transfer is running: `ops`, and
        // the device is idle).
        unsafe { ptr::copy_nonoverlapping(data.as_ptr(), host, len) };
        let to_dev = self.run_op(ctx, regs::IRQ_DMA, regs::dma_running, |bar| {
            bar.write32(addr, regs::DMA_SRC);
            bar.write32(regs::DMA_BUF, regs::DMA_DST);
            bar.write32(len as u32, regs::DMA_COUNT);
            bar.write32(regs::DMA_START | regs::DMA_IRQ, regs::DMA_CMD);
        })?;
        // Poison the host copy so that the way back is really checked.
        // SAFETY: As above; the transfer has completed.
        unsafe { ptr::write_bytes(host, 0xa5, len) };
        let from_dev = self.run_op(ctx, regs::IRQ_DMA, regs::dma_running, |bar| {
            bar.write32(regs::DMA_BUF, regs::DMA_SRC);
            bar.write32(addr, regs::DMA_DST);
            bar.write32(len as u32, regs::DMA_COUNT);
            bar.write32(
                regs::DMA_START | regs::DMA_TO_RAM | regs::DMA_IRQ,
                regs::DMA_CMD,
            );
        })?;
        // SAFETY: As above; the device wrote `len` bytes and is done.
        let back = unsafe { core::slice::from_raw_parts(host, len) };
        if back != &data[..] {
            pr_err!("rtedu{}: DMA round trip returned other data\n", self.index);
            return Err(EIO);
        }
        Ok((to_dev, from_dev))
    }

    /// The device is being unbound: stop everything that uses it, and the
    /// device's DMA.
    pub(crate) fn detach(&self, ctx: &Sleepable, pdev: &pci::Device<Core<'_>>) {
        self.gone.store(true, Release);
        // The session stays in place, stopped: its files read the records
        // it queued, then `ENODEV`. Its owner's close frees it, as before
        // an unbind.
        if let Some(s) = measure::session(ctx, &self.sessions) {
            s.stop(ctx, StopReason::User);
        }
        // A session a file still holds (configured, or raced with the
        // above) is stopped too: it can no longer be started.
        let active = self.active.lock(ctx).take();
        if let Some(s) = active {
            s.stop(ctx, StopReason::User);
        }
        {
            let _g = self.done.lock(ctx);
            self.done_cv.notify_all(ctx);
        }
        // Waits for a running device operation.
        let buf = self.ops.lock(ctx).take();
        // A transfer of an operation that ended early (signal, timeout) may
        // still be running: the buffer is freed only once the device is
        // idle, and kept if it does not get idle.
        let idle =
            buf.is_none() || matches!(self.wait_idle(ctx, regs::dma_running, false), Ok(true));
        rtrs::pci::clear_master(pdev);
        if let Some(buf) = buf {
            if idle {
                drop(buf);
            } else {
                pr_warn!(
                    "rtedu{}: DMA still running at unbind: its {}-byte buffer is kept, not freed\n",
                    self.index,
                    regs::DMA_BUF_SIZE
                );
                core::mem::forget(buf);
            }
        }
    }
}
