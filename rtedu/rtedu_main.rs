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
//! - Hard IRQ ([`irq::EduIrq::hard`], `IRQF_ONESHOT` so not force-threaded):
//!   timestamp, read and acknowledge the device's interrupt status, note the
//!   bits for the thread. MMIO and atomics only.
//! - Hard-mode hrtimer ([`session::EduSession::run`]): write the raise register.
//! - IRQ thread ([`irq::EduIrq::thread`]): complete the latency record (ring,
//!   statistics, thresholds), wake factorial and DMA waiters.
//! - Task context (ioctls, `read()`): everything that allocates or sleeps.
//!
//! # Unbinding
//!
//! Open files keep the [`session::EduInstance`] (not the device). Unbinding marks it
//! gone, stops its session (readers get `ENODEV` once the queued records
//! are read), wakes and waits out the device operations, waits for a DMA
//! transfer that an interrupted operation left running, turns bus mastering
//! off and frees the DMA buffer (or keeps it, if the device does not get
//! idle), then frees the interrupt and the vectors and disables the
//! device; the BAR mapping is revoked by devres after that. Every later
//! file operation fails with `ENODEV`.
//!
//! # Files
//!
//! From the ground up: a file names only those before it in this list (and
//! this file's module parameters and instance table):
//!
//! - `regs.rs`: the device's registers and BAR type.
//! - `instance.rs`: one bound device and its operations (factorial, DMA),
//!   detaching at unbind; it holds the sessions measured on it, of a type
//!   it does not name.
//! - `session.rs`: the latency session (hard-mode hrtimer raising the
//!   device's interrupt) as a `rtrs::measure::Source`, and `EduInstance`,
//!   the instance with it.
//! - `irq.rs`: the interrupt handler pair.
//! - `uapi.rs`: the device's own ioctls.
//! - `file.rs`: an open `/dev/rtedu<N>`.
//! - `driver.rs`: the PCI driver, probe and unbind.

use kernel::{
    pci,
    prelude::*,
    str::CStr,
    sync::{
        atomic::Atomic,
        Arc, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

mod driver;
mod file;
mod instance;
mod irq;
mod regs;
mod session;
mod uapi;

use driver::RteduDriver;
use session::EduInstance;

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
    unsafe(uninit) static INSTANCES: Mutex<[Option<Arc<EduInstance>>; MAX_INSTANCES]> =
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
