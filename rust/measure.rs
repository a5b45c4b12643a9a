// SPDX-License-Identifier: GPL-2.0

//! What every measuring device of the suite shares: records, statistics,
//! thresholds, the session life cycle and the `/dev/rtlat` file semantics.
//!
//! A device (`/dev/rtlat`'s timers, `/dev/rtedu<N>`'s PCI device) produces
//! [`Record`]s on one or more [`Channel`]s (a CPU for rtlat, the device for
//! rtedu) and implements [`Source`]; this module does the rest, once:
//!
//! - [`Output::record`]: statistics per channel and stage (summary under a
//!   raw lock, histogram buckets as atomics), thresholds, the lock-free ring
//!   for `read()`; in any context, hard IRQ included (an irq-only rtlat
//!   session records from its timer). It wakes no one: waking readers takes
//!   sleeping locks on PREEMPT_RT, so it tells the caller when to, and
//!   [`Output::complete`] does both for producers in task context;
//! - [`Sessions`] and the file operations [`ioctl`], [`read`], [`poll`],
//!   [`release`] and [`fdinfo`]: one session per device, owned by the file
//!   that configured it, one streaming reader, the ioctls of
//!   `include/uapi/linux/rtlat.h`.
//!
//! Everything is allocated when a session is configured.
//!
//! One concept per file:
//!
//! - `stats.rs`: [`StageStats`], one stage's summary and histogram;
//! - `channel.rs`: [`Channel`], a stream of records (ring, statistics,
//!   missed periods), and the ring memory budget;
//! - `output.rs`: [`Output`], a session's state machine (`State`, stop
//!   reasons, the trip), its channels and its status;
//! - `record.rs`: the record path ([`Output::record`], thresholds, when to
//!   wake the readers);
//! - `readers.rs`: [`Readers`], where a device's readers wait;
//! - `source.rs`: [`Source`], what a device implements, and [`Sessions`],
//!   its one session and the files that own and read it;
//! - `privilege.rs`: who may configure and start ([`Access`]);
//! - `fops.rs`: the file operations.

mod channel;
mod fops;
mod output;
mod privilege;
mod readers;
mod record;
mod source;
mod stats;

use kernel::prelude::*;

use super::uapi::UapiError;

// The layer's API, re-exported; every module uses another subset of it
// (`#[allow]`, not `#[expect]`: unused in some crates only).
#[allow(unused_imports, reason = "shared layer: used by some modules only")]
pub(crate) use self::{
    channel::{
        ring_records,
        Channel, //
    },
    fops::{
        fdinfo,
        ioctl,
        poll,
        read,
        release, //
    },
    output::{
        CpuSet,
        Output, //
    },
    privilege::Access,
    readers::Readers,
    record::Recorded,
    source::{
        session,
        session_of,
        SessionLock,
        Sessions,
        Source, //
    },
    stats::StageStats,
};

/// `-ESHUTDOWN`: the session this call waited on was stopped (Linux 7.2's
/// `kernel::error::code` has no `ESHUTDOWN`).
pub(crate) fn eshutdown() -> Error {
    Error::from_errno(-(kernel::bindings::ESHUTDOWN as i32))
}

pub(crate) fn uapi_err(e: UapiError) -> Error {
    match e {
        UapiError::Size | UapiError::Version | UapiError::Invalid => EINVAL,
        UapiError::TooManyCpus => E2BIG,
    }
}
