// SPDX-License-Identifier: GPL-2.0

//! rtlat: wake-up latency measurement on PREEMPT_RT, as a character device.
//!
//! `/dev/rtlat` (mode 0600) measures, per CPU and per timer activation, the
//! latency of the timer hard IRQ, of a SCHED_FIFO kernel thread woken from it
//! (timerlat's two samples) and, optionally, of a user thread blocked in the
//! device and its response time (cyclictest's number and timerlat's "Ret
//! user"), in one record per activation, with missed periods counted. The
//! user-space ABI is `include/uapi/linux/rtlat.h`; the design is described in
//! `Documentation/rtlat.rst`.
//!
//! One session at a time, owned by the file that configured it; closing that
//! file stops and frees it. `read()` on any other single file streams the
//! records.
//!
//! # What runs where
//!
//! - Hard IRQ (each CPU's hard-mode hrtimer, [`session`]'s `CpuState::run`):
//!   the irq stage; then it wakes the CPU's kernel thread, or claims and
//!   wakes a user waiter and forwards the timer. An irq-only session
//!   completes its record and checks its thresholds there. No sleeping
//!   lock, no allocation.
//! - Kernel thread `rtlat/N` (SCHED_FIFO, bound to its CPU; it sleeps
//!   between activations and takes the CPU's sleeping `produce` lock): the
//!   thread stage, the thresholds, the record completed, the next period
//!   armed. In an irq-only session it arms the first period only, wakes
//!   the readers and stops the session after a trip.
//! - User waiter (`RTLAT_IOC_USER_WAIT`, a task pinned to the CPU, asleep in
//!   the ioctl until claimed): the thread and user stages of the activation
//!   it was claimed for, their thresholds, and the previous one's response
//!   time.
//! - Blame's tracepoint probes (scheduler and interrupt entry and exit, with
//!   interrupts off): one event into that CPU's own timeline, no lock.
//! - The CPU hotplug callback (task context, on the CPU going offline):
//!   stops sampling there for the rest of the session.
//! - Task context (ioctls, `read()`, `poll()`, release): every allocation
//!   (CONFIG and START), and the waits for a stop; a stop's final work on
//!   the module's workqueue.
//!
//! # Files
//!
//! From the ground up: a file names only those before it in this list (and
//! the shared layer, `rust/`, as `rtrs`), but for `session/`'s files, which
//! name the session they are part of:
//!
//! - `blame.rs`: why a late activation was late, from its CPU's timeline.
//! - `session.rs`: a session, its states and one activation's ownership,
//!   as a `rtrs::measure::Source`; in `session/`, `cpu.rs` (one CPU's
//!   timer and what its hard IRQ hands on), `user.rs` (the user stage and
//!   its waiters) and `worker.rs` (one CPU's kernel thread).
//! - `rtlat_main.rs`: the module, the device, its file operations and the
//!   hotplug callback.
//! - `rtlat_shim.c`: the shared layer's C shim, linked into this module.

use kernel::{
    ffi::c_uint,
    fs::File,
    iov::IovIterDest,
    miscdevice::{
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    prelude::*,
    seq_file::SeqFile,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        poll::PollTable, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

mod blame;
mod session;

use rtrs::{
    context::Sleepable,
    file::{
        FileOps,
        TaskFile, //
    },
    measure::{
        self,
        Access,
        Readers,
        Sessions, //
    },
    workqueue::ModuleQueue,
};
use session::Session;

module! {
    type: RtlatModule,
    name: "rtlat",
    authors: ["The rtrs developers"],
    description: "Wake-up latency measurement device for PREEMPT_RT (/dev/rtlat)",
    license: "GPL",
}

/// The device: the registration and the one session.
///
/// Fields drop in order: the device goes first, then the queue where
/// sessions finish stopping (waiting for every stop still under way), the
/// readers' queue last.
#[pin_data]
struct RtlatModule {
    #[pin]
    misc: MiscDeviceRegistration<FileOps<RtlatFile>>,
    _teardown: rtrs::workqueue::Installed,
    _hotplug: rtrs::cpuhp::Registration<RtlatFile>,
    _readers: InstalledReaders,
}

/// The readers' queue, given to [`SHARED`] for as long as this lives: also
/// when a later part of the module's initialisation fails.
///
/// # Invariants
///
/// `SHARED` holds a reference to the queue from [`Self::new`] to drop.
struct InstalledReaders;

impl InstalledReaders {
    fn new() -> Result<Self> {
        SHARED.lock().set_readers(Some(Readers::new()?));
        Ok(Self)
    }
}

impl Drop for InstalledReaders {
    fn drop(&mut self) {
        // No file is open (each holds the module, and the device is gone
        // or never registered): nobody waits on it.
        drop(SHARED.lock().set_readers(None));
    }
}

kernel::sync::global_lock! {
    // SAFETY: Initialised in the module initialiser before the device exists.
    unsafe(uninit) static SHARED: Mutex<Sessions<Session>> = Sessions::new();
}

/// Where sessions finish stopping: a stop waits there for kernel threads
/// that cannot run yet, its caller killably (`Session::stop`).
static TEARDOWN: ModuleQueue = ModuleQueue::new();

/// Ids of open files.
static NEXT_ID: Atomic<u64> = Atomic::new(1);

impl kernel::InPlaceModule for RtlatModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: Called once, before anything can use the lock.
        unsafe { SHARED.init() };
        try_pin_init!(Self {
            // The readers' queue lives as long as the device (every open
            // file holds the module).
            _readers: InstalledReaders::new()?,
            _hotplug: rtrs::cpuhp::Registration::new(c"rtlat:online")?,
            // SAFETY: Dropped after `misc` (fields drop in order): no file
            // is open then, and only file operations queue on it.
            _teardown: unsafe { TEARDOWN.install(c"rtlat_stop") }?,
            misc <- MiscDeviceRegistration::register(MiscDeviceOptions { name: c"rtlat" }),
        })
    }
}

/// One open file of /dev/rtlat.
struct RtlatFile {
    id: u64,
    /// Whether it may configure and start (`measure::Access`).
    access: Access,
}

impl TaskFile for RtlatFile {
    fn open(
        _ctx: &Sleepable,
        file: &File,
        _misc: &MiscDeviceRegistration<FileOps<Self>>,
    ) -> Result<Self> {
        Ok(RtlatFile {
            id: NEXT_ID.fetch_add(1, Relaxed),
            access: Access::of(file),
        })
    }

    fn release(ctx: &Sleepable, this: Self) {
        measure::release(ctx, &&SHARED, this.id);
    }

    fn ioctl(ctx: &Sleepable, this: &Self, cmd: u32, arg: usize) -> Result<isize> {
        measure::ioctl(ctx, &&SHARED, &&TEARDOWN, (this.id, this.access), cmd, arg)
    }

    fn read(
        ctx: &Sleepable,
        this: &Self,
        nonblock: bool,
        iov: &mut IovIterDest<'_>,
    ) -> Result<usize> {
        measure::read(ctx, &&SHARED, this.id, nonblock, iov)
    }

    fn poll(ctx: &Sleepable, this: &Self, file: &File, table: &PollTable<'_>) -> c_uint {
        measure::poll(ctx, &&SHARED, file, this.id, table)
    }

    fn fdinfo(ctx: &Sleepable, this: &Self, m: &SeqFile) {
        measure::fdinfo(ctx, &&SHARED, this.id, m, "rtlat");
    }
}

impl rtrs::cpuhp::CpuHotplug for RtlatFile {
    fn offline(ctx: &Sleepable, cpu: u32) {
        if let Some(s) = measure::session(ctx, &&SHARED) {
            s.cpu_offline(ctx, cpu);
        }
    }
}
