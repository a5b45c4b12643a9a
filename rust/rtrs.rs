// SPDX-License-Identifier: GPL-2.0

//! The rtrs shared RT-safe layer: what a PREEMPT_RT driver needs and the
//! `kernel` crate (7.3) does not have.
//!
//! - [`context`]: zero-sized context tokens ([`context::HardIrq`],
//!   [`context::Sleepable`]) and hard-IRQ hrtimer callbacks that receive one;
//! - [`raw_spinlock`]: [`raw_spinlock::RawSpinLock`] and its irqsave variant,
//!   the only locks allowed in hard-IRQ context on PREEMPT_RT;
//! - [`preempt`]: preemption and migration guards, and what the current
//!   context is (hard IRQ, preemptible, interrupts off);
//! - [`cpu`]: online and possible CPUs; [`task`]: the current task's
//!   idleness, affinity and RT capabilities, and a task any context may
//!   wake ([`task::TaskWaker`]); [`time`]: CLOCK_MONOTONIC time
//!   stamps; [`trace`]: ftrace markers; [`barrier`]: the SMP barrier;
//! - [`percpu`]: per-CPU storage with access pinned to a CPU, or only from
//!   its own CPU with interrupts off;
//! - [`kthread`]: per-CPU kernel threads at a SCHED_FIFO priority;
//! - [`workqueue`]: a module's own ordered workqueue, drained before it
//!   unloads, for work that may wait long, and work items lent their task
//!   context ([`workqueue::TaskWork`]); [`module`]: a reference to the
//!   module that such work holds, so that `rmmod` is refused meanwhile;
//! - [`direct_wait`]: a task blocked until a hard IRQ claims and wakes it
//!   (one wake-up, no wait queue);
//! - [`cpuhp`]: CPU hotplug notifications, and holding hotplug off while a
//!   session picks and starts its CPUs;
//! - [`ring`]: the lock-free record ring for hard-IRQ producers;
//! - [`tracepoint`]: probes on the scheduler and interrupt tracepoints,
//!   feeding per-CPU timelines of what ran ([`blame`], `lib/rtcore`);
//! - [`sync`]: sleeping locks and a condition variable that can only be
//!   used with a [`context::Sleepable`] token, and a completion waited for
//!   killably;
//! - [`file`]: a misc device's file operations, each lent its task context
//!   ([`file::TaskFile`], [`file::FileOps`]), with `poll()`, and the module
//!   kept loaded while a device file is open;
//! - [`irq`]: interrupt handlers split into a hard-IRQ half (with a
//!   [`context::HardIrq`] token) and an IRQ thread at a chosen SCHED_FIFO
//!   priority;
//! - [`pci`]: what a PCI driver needs of its device beyond `kernel::pci`
//!   (turning bus mastering off, the PCI domain, an ID for any vendor, the
//!   task context of its callbacks);
//! - [`measure`]: records, statistics, thresholds and the `/dev/rtlat`
//!   file semantics every measuring device shares, over [`hist`] and
//!   [`uapi`] (`lib/rtcore`, shared with the tool).
//!
//! A module uses the layer by including it at its crate root:
//!
//! ```ignore
//! #[path = "../rust/rtrs.rs"]
//! mod rtrs;
//! ```
//!
//! and by linking the C shim into itself (Kbuild composite object, see
//! `Documentation/rt-rust.rst`). Each module compiles the same source; there is
//! one copy of each idea.

#![allow(
    dead_code,
    reason = "shared layer: every module uses another subset of it"
)]

pub(crate) mod barrier;
#[path = "../lib/rtcore/src/blame/mod.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
pub(crate) mod blame;
pub(crate) mod context;
pub(crate) mod cpu;
pub(crate) mod cpuhp;
pub(crate) mod direct_wait;
mod ffi;
pub(crate) mod file;
#[path = "../lib/rtcore/src/hist/mod.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
pub(crate) mod hist;
#[cfg(rtrs_irq)]
pub(crate) mod irq;
pub(crate) mod kthread;
pub(crate) mod measure;
pub(crate) mod module;
pub(crate) mod pci;
pub(crate) mod percpu;
pub(crate) mod preempt;
pub(crate) mod raw_spinlock;
pub(crate) mod ring;
pub(crate) mod sync;
pub(crate) mod task;
pub(crate) mod time;
pub(crate) mod trace;
pub(crate) mod tracepoint;
#[path = "../lib/rtcore/src/uapi/mod.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
pub(crate) mod uapi;
pub(crate) mod workqueue;
