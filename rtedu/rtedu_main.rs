// SPDX-License-Identifier: GPL-2.0

//! rtedu: device-interrupt latency on PREEMPT_RT, with QEMU's `edu` PCI
//! device, and the reference for how an RT-safe Rust driver handles its
//! interrupts.
//!
//! Per bound device, `/dev/rtedu<N>` measures, for each event: the driver
//! writes the edu "raise interrupt" register from a hard-mode hrtimer (at a
//! programmed period), and the record holds the latency from that write to
//! the hard-IRQ handler, to the IRQ thread (SCHED_FIFO, configurable
//! priority), and to the user thread woken in `read()`. The measuring ABI is
//! `/dev/rtlat`'s (`include/uapi/linux/rtlat.h`, shared code in
//! `rust/measure.rs`); `include/uapi/linux/rtedu.h` adds the device's own
//! ioctls: identification, factorial with completion interrupt, DMA round
//! trip with completion interrupts. `Documentation/rtedu.rst` explains the
//! interrupt path on PREEMPT_RT.
//!
//! # What runs where
//!
//! - Hard IRQ ([`EduIrq::hard`], `IRQF_ONESHOT` so not force-threaded):
//!   timestamp, read and acknowledge the device's interrupt status, note the
//!   bits for the thread. MMIO and atomics only.
//! - Hard-mode hrtimer ([`EduSession::run`]): write the raise register.
//! - IRQ thread ([`EduIrq::thread`]): complete the latency record (ring,
//!   statistics, thresholds), wake factorial and DMA waiters.
//! - Task context (ioctls, `read()`): everything that allocates or sleeps.
//!
//! # Unbinding
//!
//! Open files keep the [`Instance`] (not the device). Unbinding marks it
//! gone, stops its session (readers get `ENODEV` once the queued records
//! are read), wakes and waits out the device operations, waits for a DMA
//! transfer that an interrupted operation left running, turns bus mastering
//! off and frees the DMA buffer (or keeps it, if the device does not get
//! idle), then frees the interrupt and the vectors; the BAR mapping is
//! revoked by devres after that. Every later file operation fails with
//! `ENODEV`.

use core::ptr;

use kernel::{
    c_str,
    device::Core,
    devres::DevresLt,
    dma::{
        Coherent,
        Device as _,
        DmaMask, //
    },
    ffi::c_uint,
    fs::{
        File,
        Kiocb, //
    },
    io::Io,
    ioctl::{
        _IOR,
        _IOWR, //
    },
    iov::IovIterDest,
    miscdevice::{
        MiscDevice,
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    new_condvar, new_mutex, pci,
    prelude::*,
    seq_file::SeqFile,
    str::CStr,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        poll::PollTable,
        Arc,
        ArcBorrow,
        CondVar,
        CondVarTimeoutResult,
        Mutex, //
    },
    time::{
        delay::fsleep,
        hrtimer::{
            AbsoluteHardMode,
            HrTimer,
            HrTimerCallbackContext,
            HrTimerRestart, //
        },
        msecs_to_jiffies,
        Delta,
        Monotonic, //
    },
    transmute::{
        AsBytes,
        FromBytes, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

use rtrs::{
    context::{
        cancel_hard_timer,
        start_hard_timer,
        HardIrq,
        HardTimerCallback,
        Sleepable, //
    },
    irq::{
        HardIrqReturn,
        IrqHandler,
        IrqThread,
        ThreadedIrq, //
    },
    measure::{
        self,
        Channel,
        Output,
        Readers,
        Sessions,
        Source, //
    },
    preempt::{
        self,
        ktime_ns, //
    },
    uapi::{
        self,
        Config,
        Record, //
    },
};

/// The edu registers (QEMU `docs/specs/edu.rst`).
mod reg {
    use kernel::io::Io;

    pub(super) const IDENT: usize = 0x00;
    pub(super) const LIVENESS: usize = 0x04;
    pub(super) const FACTORIAL: usize = 0x08;
    pub(super) const STATUS: usize = 0x20;
    pub(super) const IRQ_STATUS: usize = 0x24;
    pub(super) const IRQ_RAISE: usize = 0x60;
    pub(super) const IRQ_ACK: usize = 0x64;
    pub(super) const DMA_SRC: usize = 0x80;
    pub(super) const DMA_DST: usize = 0x88;
    pub(super) const DMA_COUNT: usize = 0x90;
    pub(super) const DMA_CMD: usize = 0x98;
    /// Registers this driver uses lie below this offset.
    pub(super) const END: usize = 0xa0;

    /// `STATUS`: a factorial is being computed.
    pub(super) const STATUS_COMPUTING: u32 = 0x01;
    /// `STATUS`: raise an interrupt when the factorial is done.
    pub(super) const STATUS_IRQ_FACT: u32 = 0x80;
    /// `DMA_CMD` bits.
    pub(super) const DMA_START: u32 = 0x01;
    pub(super) const DMA_TO_RAM: u32 = 0x02;
    pub(super) const DMA_IRQ: u32 = 0x04;
    /// The device's DMA buffer, in its own address space.
    pub(super) const DMA_BUF: u32 = 0x40000;
    pub(super) const DMA_BUF_SIZE: usize = 4096;

    /// Interrupt status bits: factorial done, DMA done (set by the device),
    /// and the latency probe (this driver's choice of raise bit).
    pub(super) const IRQ_FACT: u32 = 0x0000_0001;
    pub(super) const IRQ_DMA: u32 = 0x0000_0100;
    pub(super) const IRQ_PROBE: u32 = 0x0001_0000;

    /// A factorial is being computed.
    pub(super) fn computing(bar: &super::Bar0<'_>) -> bool {
        bar.read32(STATUS) & STATUS_COMPUTING != 0
    }

    /// A DMA transfer is running (or waiting for the device's timer).
    pub(super) fn dma_running(bar: &super::Bar0<'_>) -> bool {
        bar.read32(DMA_CMD) & DMA_START != 0
    }
}

type Bar0<'a> = pci::Bar<'a, { reg::END }>;
type DevresBar0 = DevresLt<pci::Bar<'static, { reg::END }>>;

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

/// Instances (`/dev/rtedu0` ... `/dev/rtedu7`).
const MAX_INSTANCES: usize = 8;
static NAMES: [&CStr; MAX_INSTANCES] = [
    c"rtedu0", c"rtedu1", c"rtedu2", c"rtedu3", c"rtedu4", c"rtedu5", c"rtedu6", c"rtedu7",
];

module! {
    type: RteduModule,
    name: "rtedu",
    authors: ["The rtrs developers"],
    description: "Device-interrupt latency on QEMU's edu PCI device, the RT-safe way",
    license: "GPL",
    params: {
        dma_bits: u32 {
            default: 28,
            description: "DMA address width of the edu device: 28, up to 32 with QEMU's dma_mask=",
        },
        irq_priority: u32 {
            default: 50,
            description: "SCHED_FIFO priority of the IRQ thread outside sessions (1..99)",
        },
    },
}

kernel::sync::global_lock! {
    // SAFETY: Initialised in the module initialiser before the driver is
    // registered.
    unsafe(uninit) static INSTANCES: Mutex<[Option<Arc<Instance>>; MAX_INSTANCES]> =
        [const { None }; MAX_INSTANCES];
}

/// Ids of open files.
static NEXT_ID: Atomic<u64> = Atomic::new(1);

#[pin_data]
struct RteduModule {
    #[pin]
    _driver: kernel::driver::Registration<pci::Adapter<RteduDriver>>,
}

impl kernel::InPlaceModule for RteduModule {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: Called once, before anything can use the lock.
        unsafe { INSTANCES.init() };
        try_pin_init!(Self {
            _driver <- kernel::driver::Registration::new(c"rtedu", module),
        })
    }
}

/// One bound edu device, shared with its open files (which may outlive the
/// binding).
#[pin_data]
struct Instance {
    index: u32,
    ident: u32,
    pci_domain: u32,
    pci_devid: u32,
    irq: u32,
    irq_type: u32,
    dma_bits: u32,
    /// The BAR; revoked by devres once the device is unbound.
    bar: DevresBar0,
    /// Unbound: every operation fails with `ENODEV`.
    gone: Atomic<bool>,
    /// Interrupt status bits the hard half saw, for the thread half.
    pending: Atomic<u32>,
    /// When the hard half saw the latency probe's interrupt.
    probe_irq_ns: Atomic<i64>,
    irqs: Atomic<u64>,
    spurious: Atomic<u64>,
    irq_thread: IrqThread,
    #[pin]
    sessions: Mutex<Sessions<EduSession>>,
    /// The running session, which the IRQ thread completes records into.
    #[pin]
    active: Mutex<Option<Arc<EduSession>>>,
    /// Serialises the device operations (factorial, DMA); holds the DMA
    /// buffer (`None` without DMA, and once unbound).
    #[pin]
    ops: Mutex<Option<Coherent<[u8]>>>,
    /// Completion bits (`IRQ_FACT`, `IRQ_DMA`) from the IRQ thread.
    #[pin]
    done: Mutex<u32>,
    #[pin]
    done_cv: CondVar,
}

impl Instance {
    fn gone(&self) -> bool {
        self.gone.load(Acquire)
    }

    /// Runs `f` on the BAR, or `ENODEV` once it is revoked. Any context.
    fn with_bar<R>(&self, f: impl FnOnce(&Bar0<'_>) -> R) -> Result<R> {
        self.bar.try_access_with(|bar| f(bar)).ok_or(ENODEV)
    }

    /// Waits, polling, until `busy` says the device is no longer at an
    /// earlier operation: `Ok(false)` if it still is after
    /// [`IDLE_TIMEOUT_MS`]; `EINTR` on a signal if `interruptible`.
    fn wait_idle(&self, busy: fn(&Bar0<'_>) -> bool, interruptible: bool) -> Result<bool> {
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
        bit: u32,
        busy: fn(&Bar0<'_>) -> bool,
        start: impl FnOnce(&Bar0<'_>),
    ) -> Result<u64> {
        if !self.wait_idle(busy, true)? {
            return Err(EBUSY);
        }
        *self.done.lock() &= !bit;
        let t0 = ktime_ns();
        self.with_bar(start)?;
        let mut done = self.done.lock();
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
            match self.done_cv.wait_interruptible_timeout(&mut done, left) {
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
    fn factorial(&self, n: u32) -> Result<u32> {
        let want = *FACTORIALS.get(n as usize).ok_or(EINVAL)?;
        let _serial = self.ops.lock();
        if self.gone() {
            return Err(ENODEV);
        }
        // The device ignores a command while it computes: `run_op` starts
        // this one only once an earlier one (that timed out, say) is done,
        // and completes it only when the device is idle again.
        self.run_op(reg::IRQ_FACT, reg::computing, |bar| {
            bar.write32(reg::STATUS_IRQ_FACT, reg::STATUS);
            bar.write32(n, reg::FACTORIAL);
        })?;
        let result = self.with_bar(|bar| bar.read32(reg::FACTORIAL))?;
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
    fn dma_round_trip(&self, data: &mut [u8]) -> Result<(u64, u64)> {
        let len = data.len();
        if len == 0 || len > reg::DMA_BUF_SIZE {
            return Err(EINVAL);
        }
        let ops = self.ops.lock();
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
        if !self.wait_idle(reg::dma_running, true)? {
            return Err(EBUSY);
        }
        // SAFETY: `host` is the coherent buffer of `DMA_BUF_SIZE` bytes, not
        // accessed by the device now (no transfer is running: `ops`, and
        // the device is idle).
        unsafe { ptr::copy_nonoverlapping(data.as_ptr(), host, len) };
        let to_dev = self.run_op(reg::IRQ_DMA, reg::dma_running, |bar| {
            bar.write32(addr, reg::DMA_SRC);
            bar.write32(reg::DMA_BUF, reg::DMA_DST);
            bar.write32(len as u32, reg::DMA_COUNT);
            bar.write32(reg::DMA_START | reg::DMA_IRQ, reg::DMA_CMD);
        })?;
        // Poison the host copy so that the way back is really checked.
        // SAFETY: As above; the transfer has completed.
        unsafe { ptr::write_bytes(host, 0xa5, len) };
        let from_dev = self.run_op(reg::IRQ_DMA, reg::dma_running, |bar| {
            bar.write32(reg::DMA_BUF, reg::DMA_SRC);
            bar.write32(addr, reg::DMA_DST);
            bar.write32(len as u32, reg::DMA_COUNT);
            bar.write32(
                reg::DMA_START | reg::DMA_TO_RAM | reg::DMA_IRQ,
                reg::DMA_CMD,
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
    fn detach(&self, pdev: &pci::Device<Core<'_>>) {
        self.gone.store(true, Release);
        let session = self.sessions.lock().take();
        if let Some(s) = session {
            s.stop(uapi::STOP_USER);
        }
        // A session a file still holds (configured, or raced with the
        // above) is stopped too: it can no longer be started.
        let active = self.active.lock().take();
        if let Some(s) = active {
            s.stop(uapi::STOP_USER);
        }
        {
            let _g = self.done.lock();
            self.done_cv.notify_all();
        }
        // Waits for a running device operation.
        let buf = self.ops.lock().take();
        // A transfer of an operation that ended early (signal, timeout) may
        // still be running: the buffer is freed only once the device is
        // idle, and kept if it does not get idle.
        let idle = buf.is_none() || matches!(self.wait_idle(reg::dma_running, false), Ok(true));
        rtrs::pci::clear_master(pdev);
        if let Some(buf) = buf {
            if idle {
                drop(buf);
            } else {
                pr_warn!(
                    "rtedu{}: DMA still running at unbind: its {}-byte buffer is kept, not freed\n",
                    self.index,
                    reg::DMA_BUF_SIZE
                );
                core::mem::forget(buf);
            }
        }
    }
}

/// The interrupt handler pair of an instance.
struct EduIrq {
    inst: Arc<Instance>,
}

impl IrqHandler for EduIrq {
    fn hard(&self, _irq: &HardIrq<'_>) -> HardIrqReturn {
        // Bounded work only: one timestamp, two MMIO accesses, atomics.
        let now = ktime_ns();
        let status = self
            .inst
            .with_bar(|bar| {
                let status = bar.read32(reg::IRQ_STATUS);
                if status != 0 {
                    // Acknowledge in the handler (required with MSI too).
                    bar.write32(status, reg::IRQ_ACK);
                }
                status
            })
            .unwrap_or(0);
        if status == 0 {
            self.inst.spurious.fetch_add(1, Relaxed);
            return HardIrqReturn::None;
        }
        if status & reg::IRQ_PROBE != 0 {
            self.inst.probe_irq_ns.store(now, Relaxed);
        }
        let mut old = self.inst.pending.load(Relaxed);
        while let Err(cur) = self.inst.pending.cmpxchg(old, old | status, Release) {
            old = cur;
        }
        self.inst.irqs.fetch_add(1, Relaxed);
        HardIrqReturn::WakeThread
    }

    fn thread(&self, _ctx: &Sleepable<'_>) -> bool {
        let now = ktime_ns();
        let bits = self.inst.pending.xchg(0, Acquire);
        if bits & reg::IRQ_PROBE != 0 {
            let irq_ns = self.inst.probe_irq_ns.load(Relaxed);
            let active = self.inst.active.lock();
            if let Some(s) = active.as_ref() {
                s.event(irq_ns, now);
            }
        }
        let completions = bits & (reg::IRQ_FACT | reg::IRQ_DMA);
        if completions != 0 {
            *self.inst.done.lock() |= completions;
            self.inst.done_cv.notify_all();
        }
        bits != 0
    }

    fn irq_thread(&self) -> &IrqThread {
        &self.inst.irq_thread
    }
}

/// A latency session on one instance: one channel (0).
#[pin_data(PinnedDrop)]
struct EduSession {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    out: Output,
    inst: Arc<Instance>,
    period: i64,
    /// Sequence number of the last raised event.
    seq: Atomic<u64>,
    raise_ns: Atomic<i64>,
    /// An event was raised and its IRQ thread has not completed it yet.
    in_flight: Atomic<bool>,
    /// Periods skipped since the last raised event (timer only).
    pending_missed: Atomic<u32>,
    /// Periods skipped before the raised event: its record's `missed`.
    raised_missed: Atomic<u32>,
    stopping: Atomic<bool>,
    #[pin]
    stop_lock: Mutex<()>,
}

#[pinned_drop]
impl PinnedDrop for EduSession {
    fn drop(self: Pin<&mut Self>) {
        cancel_hard_timer(&*self);
    }
}

impl HardTimerCallback for EduSession {
    type Pointer<'a> = Arc<Self>;

    fn run(
        this: ArcBorrow<'_, Self>,
        mut ctx: HrTimerCallbackContext<'_, Self>,
        _irq: &HardIrq<'_>,
    ) -> HrTimerRestart {
        if this.stopping.load(Relaxed) {
            return HrTimerRestart::NoRestart;
        }
        let overruns = ctx.forward_now(Delta::from_nanos(this.period));
        // Periods the timer itself was late for: they passed before the
        // raise (a record's time is its raise).
        let late = overruns.saturating_sub(1) as u32;
        if this.in_flight.load(Acquire) {
            // The previous event is not handled yet: this period is skipped
            // too. They all come before the next event raised.
            this.pending_missed.fetch_add(late + 1, Relaxed);
            return HrTimerRestart::Restart;
        }
        // This event's record counts the periods skipped since the last
        // raised event; those skipped while it is in flight go to the next.
        let missed = this.pending_missed.xchg(0, Relaxed) + late;
        this.raised_missed.store(missed, Relaxed);
        this.seq.fetch_add(1, Relaxed);
        this.in_flight.store(true, Relaxed);
        this.raise_ns.store(ktime_ns(), Relaxed);
        if this
            .inst
            .with_bar(|bar| bar.write32(reg::IRQ_PROBE, reg::IRQ_RAISE))
            .is_err()
        {
            return HrTimerRestart::NoRestart;
        }
        HrTimerRestart::Restart
    }
}

crate::hard_timer! {
    impl for EduSession { mode: AbsoluteHardMode<Monotonic>, field: self.timer }
}

impl EduSession {
    /// IRQ thread, with `inst.active` held: the probe's interrupt arrived.
    fn event(&self, irq_ns: i64, thread_ns: i64) {
        if !self.in_flight.load(Acquire) {
            return;
        }
        let raise = self.raise_ns.load(Relaxed);
        let mut rec = Record {
            cpu: 0,
            seq: self.seq.load(Relaxed),
            expected_ns: raise as u64,
            lat_ns: [-1; uapi::NR_STAGES],
            missed: self.raised_missed.load(Relaxed),
            flags: uapi::REC_NO_USER | uapi::REC_NO_RESPONSE,
        };
        rec.lat_ns[uapi::STAGE_IRQ] = irq_ns - raise;
        rec.lat_ns[uapi::STAGE_THREAD] = thread_ns - raise;
        // SAFETY: The channel's only producer is the IRQ thread, serialised
        // by `inst.active`.
        let tripped = unsafe { self.out.complete(&self.out.chans[0], rec) };
        self.in_flight.store(false, Release);
        if tripped {
            self.stopping.store(true, Relaxed);
            cancel_hard_timer(self);
        }
    }
}

impl Source for EduSession {
    type Device = Arc<Instance>;

    fn configure(inst: &Arc<Instance>, config: Config, readers: Arc<Readers>) -> Result<Arc<Self>> {
        if inst.gone() {
            return Err(ENODEV);
        }
        // One channel: the device. A CPU set, a response stage (there is no
        // user thread coming back) or an irq-only session (the IRQ thread
        // completes every event) cannot be honoured.
        if config.cpus.iter().any(|&w| w != 0)
            || !config.thread_stage()
            || config.stages & (1 << uapi::STAGE_RESPONSE) != 0
            || config.threshold_ns[uapi::STAGE_RESPONSE] != 0
        {
            return Err(EINVAL);
        }
        measure::check_ring_budget(1, &config)?;
        let mut chans = KVec::new();
        chans.push(Channel::new(0, &config)?, GFP_KERNEL)?;
        Arc::pin_init(
            try_pin_init!(Self {
                timer <- HrTimer::new(),
                out <- Output::new(
                    config,
                    chans,
                    c_str!("rtedu: threshold exceeded, sampling stopped\n"),
                    // The user stage is the reader's wake-up by each event.
                    config.user_stage(),
                    readers,
                ),
                inst: inst.clone(),
                period: config.period_ns as i64,
                seq: Atomic::new(0),
                raise_ns: Atomic::new(0),
                in_flight: Atomic::new(false),
                pending_missed: Atomic::new(0),
                raised_missed: Atomic::new(0),
                stopping: Atomic::new(false),
                stop_lock <- new_mutex!(()),
            }),
            GFP_KERNEL,
        )
    }

    fn output(&self) -> &Output {
        &self.out
    }

    fn start(self: &Arc<Self>) -> Result {
        let mut active = self.inst.active.lock();
        if self.inst.gone() {
            return Err(ENODEV);
        }
        self.out.set_running()?;
        self.inst
            .irq_thread
            .set_priority(self.out.config.priority)?;
        *active = Some(self.clone());
        let first = ktime_ns() + self.period;
        // SAFETY: `self` is alive and pinned; `stop` and drop cancel the timer.
        unsafe { start_hard_timer(&**self, first) };
        Ok(())
    }

    fn stop(&self, reason: u32) {
        let _serial = self.stop_lock.lock();
        self.out.set_stopped(reason);
        self.stopping.store(true, Relaxed);
        preempt::smp_mb();
        cancel_hard_timer(self);
        // After this the IRQ thread completes no record into this session.
        let mine = {
            let mut active = self.inst.active.lock();
            if active.as_ref().is_some_and(|s| ptr::eq(&**s, self)) {
                active.take()
            } else {
                None
            }
        };
        drop(mine);
        self.inst
            .irq_thread
            .set_priority(module_parameters::irq_priority.value().clamp(1, 99))
            .ok();
        self.out.set_finished();
    }

    /// The user stage: the reader's wake-up by the event's IRQ thread.
    fn stamp_woken(&self, chan: &Channel, rec: &mut Record) -> bool {
        if !self.out.config.user_stage() || rec.flags & uapi::REC_NO_USER == 0 {
            return false;
        }
        rec.lat_ns[uapi::STAGE_USER] = ktime_ns() - rec.expected_ns as i64;
        rec.flags &= !uapi::REC_NO_USER;
        self.out.mark_threshold(chan, rec, uapi::STAGE_USER);
        true
    }

    fn woken_delivered(&self, chan: &Channel, rec: &Record) {
        let mut rec = *rec;
        if self.out.complete_stage(chan, &mut rec, uapi::STAGE_USER) {
            self.stopping.store(true, Relaxed);
            cancel_hard_timer(self);
        }
    }

    fn gone(&self) -> bool {
        self.inst.gone()
    }
}

/// `struct rtedu_info`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Info {
    size: u32,
    version: u32,
    instance: u32,
    ident: u32,
    pci_domain: u32,
    pci_devid: u32,
    irq: u32,
    irq_type: u32,
    irq_thread_tid: i32,
    irq_thread_prio: u32,
    dma_bits: u32,
    reserved: u32,
    irqs: u64,
    spurious: u64,
}

/// `struct rtedu_factorial`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Factorial {
    size: u32,
    version: u32,
    n: u32,
    result: u32,
}

/// `struct rtedu_dma`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Dma {
    size: u32,
    version: u32,
    buf_ptr: u64,
    len: u32,
    reserved: u32,
    to_dev_ns: u64,
    from_dev_ns: u64,
}

// SAFETY: Plain integers with no padding (every field is naturally aligned
// and the sizes add up), so every byte pattern is valid and every byte is
// initialised.
unsafe impl FromBytes for Info {}
// SAFETY: As above.
unsafe impl AsBytes for Info {}
// SAFETY: As above.
unsafe impl FromBytes for Factorial {}
// SAFETY: As above.
unsafe impl AsBytes for Factorial {}
// SAFETY: As above.
unsafe impl FromBytes for Dma {}
// SAFETY: As above.
unsafe impl AsBytes for Dma {}

const VERSION: u32 = 1;
const IOC_MAGIC: u32 = 0xb8;
const IOC_INFO: u32 = _IOR::<Info>(IOC_MAGIC, 1);
const IOC_FACTORIAL: u32 = _IOWR::<Factorial>(IOC_MAGIC, 2);
const IOC_DMA: u32 = _IOWR::<Dma>(IOC_MAGIC, 3);

/// Reads a `size`/`version`-headed structure from user space and checks both.
fn read_request<T: FromBytes + AsBytes>(arg: usize) -> Result<T> {
    let v: T = UserSlice::new(UserPtr::from_addr(arg), size_of::<T>())
        .reader()
        .read()?;
    let head = v.as_bytes();
    let size = u32::from_ne_bytes([head[0], head[1], head[2], head[3]]);
    let version = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]);
    if size as usize != size_of::<T>() || version != VERSION {
        return Err(EINVAL);
    }
    Ok(v)
}

fn write_answer<T: AsBytes>(arg: usize, v: &T) -> Result<isize> {
    UserSlice::new(UserPtr::from_addr(arg), size_of::<T>())
        .writer()
        .write(v)?;
    Ok(0)
}

/// One open file of `/dev/rtedu<N>`.
struct RteduFile {
    id: u64,
    inst: Arc<Instance>,
}

impl RteduFile {
    fn info(&self) -> Info {
        let i = &self.inst;
        Info {
            size: size_of::<Info>() as u32,
            version: VERSION,
            instance: i.index,
            ident: i.ident,
            pci_domain: i.pci_domain,
            pci_devid: i.pci_devid,
            irq: i.irq,
            irq_type: i.irq_type,
            irq_thread_tid: i.irq_thread.tid(),
            irq_thread_prio: i.irq_thread.applied_priority(),
            dma_bits: i.dma_bits,
            reserved: 0,
            irqs: i.irqs.load(Relaxed),
            spurious: i.spurious.load(Relaxed),
        }
    }

    fn dma(&self, arg: usize) -> Result<isize> {
        let mut req: Dma = read_request(arg)?;
        let len = req.len as usize;
        if len == 0 || len > reg::DMA_BUF_SIZE || req.reserved != 0 {
            return Err(EINVAL);
        }
        let user = UserSlice::new(UserPtr::from_addr(req.buf_ptr as usize), len);
        let (reader, mut writer) = user.reader_writer();
        let mut data = KVec::with_capacity(len, GFP_KERNEL)?;
        reader.read_all(&mut data, GFP_KERNEL)?;
        let (to_dev, from_dev) = self.inst.dma_round_trip(&mut data)?;
        writer.write_slice(&data)?;
        req.to_dev_ns = to_dev;
        req.from_dev_ns = from_dev;
        write_answer(arg, &req)
    }
}

#[vtable]
impl MiscDevice for RteduFile {
    type Ptr = KBox<Self>;

    fn open(file: &File, misc: &MiscDeviceRegistration<Self>) -> Result<KBox<Self>> {
        // SAFETY: `misc` is a registered misc device; its name is one of
        // `NAMES`.
        let name = unsafe { (*misc.as_raw()).name };
        let inst = {
            let instances = INSTANCES.lock();
            NAMES
                .iter()
                .position(|n| n.as_char_ptr() == name)
                .and_then(|i| instances[i].clone())
                .ok_or(ENODEV)?
        };
        if inst.gone() {
            return Err(ENODEV);
        }
        rtrs::file::setup::<RteduFile>(file)?;
        Ok(KBox::new(
            RteduFile {
                id: NEXT_ID.fetch_add(1, Relaxed),
                inst,
            },
            GFP_KERNEL,
        )?)
    }

    fn release(this: KBox<Self>, _file: &File) {
        measure::release(&this.inst.sessions, this.id);
    }

    fn ioctl(this: &Self, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        if this.inst.gone() {
            return Err(ENODEV);
        }
        match cmd {
            IOC_INFO => write_answer(arg, &this.info()),
            IOC_FACTORIAL => {
                let mut req: Factorial = read_request(arg)?;
                req.result = this.inst.factorial(req.n)?;
                write_answer(arg, &req)
            }
            IOC_DMA => this.dma(arg),
            _ => measure::ioctl(&this.inst.sessions, &this.inst, this.id, cmd, arg),
        }
    }

    fn read_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let nonblock = rtrs::file::kiocb_nonblock(&mut kiocb);
        let me = kiocb.file();
        if me.inst.gone() {
            return Err(ENODEV);
        }
        measure::read(&me.inst.sessions, me.id, nonblock, iov)
    }

    fn show_fdinfo(this: &Self, m: &SeqFile, _file: &File) {
        measure::fdinfo(&this.inst.sessions, m, "rtedu");
    }
}

impl rtrs::file::Poll for RteduFile {
    fn poll(file: &File, table: &PollTable<'_>) -> c_uint {
        // SAFETY: `poll` is only called on open files of this device.
        let me = unsafe { rtrs::file::private::<RteduFile>(file) };
        if me.inst.gone() {
            return rtrs::file::POLL_ERR | rtrs::file::POLL_HUP;
        }
        measure::poll(&me.inst.sessions, file, table)
    }
}

/// An instance slot in `INSTANCES`; freed when dropped.
struct Slot(usize);

/// Claimed slots, a bit each; changed under the `INSTANCES` lock.
static CLAIMED: Atomic<u32> = Atomic::new(0);

impl Slot {
    fn claim() -> Result<Self> {
        let _serial = INSTANCES.lock();
        let claimed = CLAIMED.load(Relaxed);
        let free = (0..MAX_INSTANCES)
            .find(|i| claimed & (1 << i) == 0)
            .ok_or(EBUSY)?;
        CLAIMED.store(claimed | (1 << free), Relaxed);
        Ok(Self(free))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut instances = INSTANCES.lock();
        instances[self.0] = None;
        CLAIMED.store(CLAIMED.load(Relaxed) & !(1 << self.0), Relaxed);
    }
}

struct RteduDriver;

// SAFETY: `pci::DeviceId` is a `#[repr(transparent)]` wrapper of
// `struct pci_device_id` (see its `RawDeviceId` implementation); the kernel
// has no `Vendor` constant for QEMU's 0x1234.
const EDU_ID: pci::DeviceId = unsafe {
    core::mem::transmute::<kernel::bindings::pci_device_id, pci::DeviceId>(
        kernel::bindings::pci_device_id {
            vendor: 0x1234,
            device: 0x11e8,
            subvendor: !0,
            subdevice: !0,
            class: 0,
            class_mask: 0,
            driver_data: 0,
            override_only: 0,
        },
    )
};

kernel::pci_device_table!(
    PCI_TABLE,
    <RteduDriver as pci::Driver>::IdInfo,
    [(EDU_ID, ())]
);

/// Driver data of a bound device. Fields drop in order: the device file
/// first, then the interrupt, then the vectors.
#[pin_data(PinnedDrop)]
struct RteduData<'bound> {
    #[pin]
    misc: MiscDeviceRegistration<RteduFile>,
    #[pin]
    irq: ThreadedIrq<EduIrq>,
    vectors: pci::IrqVectorRegistration<'bound>,
    inst: Arc<Instance>,
    slot: Slot,
}

#[pinned_drop]
impl PinnedDrop for RteduData<'_> {
    fn drop(self: Pin<&mut Self>) {
        // `RteduDriver::unbind` detached the instance.
        pr_info!("rtedu{}: unbound\n", self.inst.index);
    }
}

/// Checks that the device is an edu device that answers.
fn check_device(pdev: &pci::Device<Core<'_>>, bar: &Bar0<'_>) -> Result<u32> {
    let ident = bar.read32(reg::IDENT);
    if ident & 0xffff != 0x00ed {
        dev_err!(
            pdev.as_ref(),
            "not an edu device: identification register reads {:#010x}, expected 0xRRrr00ed\n",
            ident
        );
        return Err(ENODEV);
    }
    for pattern in [0x1234_5678u32, 0xa5a5_0f0f] {
        bar.write32(pattern, reg::LIVENESS);
        let back = bar.read32(reg::LIVENESS);
        if back != !pattern {
            dev_err!(
                pdev.as_ref(),
                "edu liveness check failed: wrote {:#010x}, read {:#010x}, expected {:#010x}\n",
                pattern,
                back,
                !pattern
            );
            return Err(ENODEV);
        }
    }
    Ok(ident)
}

impl pci::Driver for RteduDriver {
    type IdInfo = ();
    type Data<'bound> = RteduData<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    /// Before the driver data is dropped, with the device still reachable.
    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        this.inst.detach(pdev);
    }

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pin_init::pin_init_scope(move || {
            pdev.enable_device_mem()?;
            pdev.set_master();
            let bar = pdev.iomap_region_sized::<{ reg::END }>(0, c"rtedu")?;
            let ident = check_device(pdev, &bar)?;
            let bar = bar.into_devres()?;

            // DMA: the device handles `dma_bits` address bits.
            let bits = dma_bits_param();
            let dma = match DmaMask::try_new(bits) {
                // SAFETY: Nothing else allocates or maps DMA for this
                // device during probe.
                Ok(mask) => unsafe { pdev.dma_set_mask_and_coherent(mask) }
                    .and_then(|()| {
                        Coherent::<u8>::zeroed_slice(pdev.as_ref(), reg::DMA_BUF_SIZE, GFP_KERNEL)
                    })
                    .inspect_err(|e| {
                        dev_warn!(
                            pdev.as_ref(),
                            "DMA unavailable with a {}-bit mask ({:?}): load rtedu with the dma_bits= that matches QEMU's edu dma_mask=\n",
                            bits,
                            e
                        )
                    })
                    .ok(),
                Err(_) => None,
            };
            let dma_ok = dma.is_some();

            // MSI where available, INTx otherwise.
            let vectors = pdev.alloc_irq_vectors(
                1,
                1,
                pci::IrqTypes::default()
                    .with(pci::IrqType::Msi)
                    .with(pci::IrqType::Intx),
            )?;
            let vector = vectors.index(0)?;
            let (irq_type, type_name) = match vector.irq_type() {
                pci::IrqType::Intx => (0, "INTx"),
                pci::IrqType::Msi => (1, "MSI"),
                pci::IrqType::MsiX => (2, "MSI-X"),
            };
            let irq = kernel::irq::IrqRequest::from(vector).irq();

            let slot = Slot::claim()?;
            let index = slot.0;
            let inst = Arc::pin_init(
                try_pin_init!(Instance {
                    index: index as u32,
                    ident,
                    pci_domain: rtrs::pci::domain_nr(pdev),
                    pci_devid: u32::from(pdev.dev_id()),
                    irq,
                    irq_type,
                    dma_bits: if dma_ok { bits } else { 0 },
                    bar,
                    gone: Atomic::new(false),
                    pending: Atomic::new(0),
                    probe_irq_ns: Atomic::new(0),
                    irqs: Atomic::new(0),
                    spurious: Atomic::new(0),
                    irq_thread: IrqThread::new(module_parameters::irq_priority.value()),
                    // The readers' queue outlives sessions and unbind: every
                    // open file holds the instance.
                    sessions <- new_mutex!({
                        let mut sh = Sessions::new();
                        sh.set_readers(Some(Readers::new()?));
                        sh
                    }),
                    active <- new_mutex!(None),
                    ops <- new_mutex!(dma),
                    done <- new_mutex!(0),
                    done_cv <- new_condvar!(),
                }),
                GFP_KERNEL,
            )?;
            INSTANCES.lock()[index] = Some(inst.clone());
            dev_info!(
                pdev.as_ref(),
                "rtedu{}: edu {}.{}, irq {} ({}), DMA {}\n",
                index,
                ident >> 24,
                (ident >> 16) & 0xff,
                irq,
                type_name,
                if dma_ok { "on" } else { "off" }
            );
            // INTx lines may be shared with other devices.
            let shared = irq_type == 0;
            Ok(try_pin_init!(RteduData {
                // SAFETY: `vectors` is dropped after `irq` (field order) and
                // the driver data is never leaked.
                irq <- unsafe {
                    ThreadedIrq::new(irq, shared, c"rtedu", EduIrq { inst: inst.clone() })
                },
                misc <- MiscDeviceRegistration::register(MiscDeviceOptions { name: NAMES[index] }),
                vectors,
                inst,
                slot,
            }))
        })
    }
}

/// The `dma_bits` parameter, limited to what a DMA mask can be.
fn dma_bits_param() -> u32 {
    module_parameters::dma_bits.value().clamp(28, 32)
}
