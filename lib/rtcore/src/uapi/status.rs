// SPDX-License-Identifier: GPL-2.0

//! `struct rtlat_status` ([`Status`], `RTLAT_IOC_STATUS`): a session's
//! state, why it stopped, its CPUs and its totals, in each of its layouts.

use super::{
    wire::{
        header,
        Wr, //
    },
    UapiError,
    CPU_WORDS,
    VERSION, //
};
// (Named by the documentation only.)
#[cfg(doc)]
use super::{
    cpu_words,
    Stage,
    REC_DEADLINE_MISS,
    REC_NO_WAITER, //
};

/// Session states.
pub const STATE_IDLE: u32 = 0;
/// Configured, not started.
pub const STATE_CONFIGURED: u32 = 1;
/// Sampling.
pub const STATE_RUNNING: u32 = 2;
/// Stopped; statistics and records remain readable.
pub const STATE_STOPPED: u32 = 3;

/// Why a session stopped.
pub const STOP_NONE: u32 = 0;
/// `RTLAT_IOC_STOP`.
pub const STOP_USER: u32 = 1;
/// A threshold was exceeded.
pub const STOP_THRESHOLD: u32 = 2;

/// A session's state: [`Status::state`] as an enum (the ABI keeps the
/// integers `STATE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum State {
    /// No session.
    Idle = STATE_IDLE,
    /// Configured, not started.
    Configured = STATE_CONFIGURED,
    /// Sampling.
    Running = STATE_RUNNING,
    /// Stopped; statistics and records remain readable.
    Stopped = STATE_STOPPED,
}

impl State {
    /// The state an ABI integer names, if any.
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            STATE_IDLE => Some(Self::Idle),
            STATE_CONFIGURED => Some(Self::Configured),
            STATE_RUNNING => Some(Self::Running),
            STATE_STOPPED => Some(Self::Stopped),
            _ => None,
        }
    }
}

/// Why a session stopped: [`Status::stop_reason`] as an enum (the ABI keeps
/// the integers `STOP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum StopReason {
    /// Not stopped.
    None = STOP_NONE,
    /// `RTLAT_IOC_STOP`, a close, a reconfiguration or an unbind.
    User = STOP_USER,
    /// A threshold was exceeded.
    Threshold = STOP_THRESHOLD,
}

impl StopReason {
    /// The reason an ABI integer names, if any.
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            STOP_NONE => Some(Self::None),
            STOP_USER => Some(Self::User),
            STOP_THRESHOLD => Some(Self::Threshold),
            _ => None,
        }
    }
}

/// Byte size of [`Status`].
pub const STATUS_SIZE: usize = STATUS_SIZE_V3 + 3 * 8 + 4 + 4;
/// Byte size of the third [`Status`] (without the sets in full).
pub const STATUS_SIZE_V3: usize = STATUS_SIZE_V2 + 8;
/// Byte size of the second [`Status`] (without `deadline_misses`).
pub const STATUS_SIZE_V2: usize = STATUS_SIZE_V1 + 8 * CPU_WORDS;
/// Byte size of the first [`Status`] (without `unattended`), which the
/// kernel still answers for programs built against it.
pub const STATUS_SIZE_V1: usize =
    8 + 4 + 4 + 4 + 4 + 8 + 8 + 8 + 8 * CPU_WORDS + 8 * CPU_WORDS + 8 * 4;

/// `struct rtlat_status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// `STATE_*` ([`State`]).
    pub state: u32,
    /// `STOP_*` ([`StopReason`]).
    pub stop_reason: u32,
    /// For a threshold stop: the CPU, stage, value and sequence that tripped it.
    pub trip_cpu: u32,
    /// The stage's index of the trip ([`Stage`]).
    pub trip_stage: u32,
    /// Latency that tripped, ns.
    pub trip_value_ns: u64,
    /// Sequence number of the activation that tripped.
    pub trip_seq: u64,
    /// When sampling started, CLOCK_MONOTONIC ns (0 if never).
    pub started_ns: u64,
    /// CPUs sampling in this session.
    pub cpus: [u64; CPU_WORDS],
    /// CPUs of the session that went offline (sampling there stopped).
    pub offline: [u64; CPU_WORDS],
    /// Totals over all CPUs: records produced, delivered to readers, dropped,
    /// and missed periods.
    pub produced: u64,
    /// Records delivered by `read()`.
    pub delivered: u64,
    /// Records dropped because a ring was full.
    pub dropped: u64,
    /// Missed periods.
    pub missed: u64,
    /// CPUs of a user-stage session whose latest activation found no user
    /// waiter (recorded with [`REC_NO_WAITER`] by the kernel thread).
    pub unattended: [u64; CPU_WORDS],
    /// Records flagged [`REC_DEADLINE_MISS`], over all CPUs.
    pub deadline_misses: u64,
    /// In: user address of a buffer of [`Self::cpu_words`] words for
    /// [`Self::cpus`] in full, or 0.
    pub cpus_ptr: u64,
    /// In: the same for [`Self::offline`].
    pub offline_ptr: u64,
    /// In: the same for [`Self::unattended`].
    pub unattended_ptr: u64,
    /// In: the words of each buffer; out: the words a set needs
    /// ([`cpu_words`] of [`Self::nr_cpu_ids`]).
    pub cpu_words: u32,
    /// Out: the kernel's number of possible CPUs.
    pub nr_cpu_ids: u32,
}

impl Status {
    /// Encodes into `b`, which is [`STATUS_SIZE`], [`STATUS_SIZE_V3`],
    /// [`STATUS_SIZE_V2`] or [`STATUS_SIZE_V1`] bytes long (an older
    /// layout, for its older ioctl: the fields it has); the size field
    /// says which.
    pub fn encode(&self, b: &mut [u8]) {
        let size = b.len();
        debug_assert!(
            [STATUS_SIZE, STATUS_SIZE_V3, STATUS_SIZE_V2, STATUS_SIZE_V1].contains(&size)
        );
        let mut w = Wr { b, at: 0 };
        w.u32(size as u32);
        w.u32(VERSION);
        w.u32(self.state);
        w.u32(self.stop_reason);
        w.u32(self.trip_cpu);
        w.u32(self.trip_stage);
        w.u64(self.trip_value_ns);
        w.u64(self.trip_seq);
        w.u64(self.started_ns);
        for &c in self.cpus.iter() {
            w.u64(c);
        }
        for &c in self.offline.iter() {
            w.u64(c);
        }
        w.u64(self.produced);
        w.u64(self.delivered);
        w.u64(self.dropped);
        w.u64(self.missed);
        if size >= STATUS_SIZE_V2 {
            for &c in self.unattended.iter() {
                w.u64(c);
            }
        }
        if size >= STATUS_SIZE_V3 {
            w.u64(self.deadline_misses);
        }
        if size >= STATUS_SIZE {
            w.u64(self.cpus_ptr);
            w.u64(self.offline_ptr);
            w.u64(self.unattended_ptr);
            w.u32(self.cpu_words);
            w.u32(self.nr_cpu_ids);
        }
    }

    /// Decodes a status of any layout (the older ones lack the newer
    /// fields, left zero).
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        let size = match b.len() {
            n @ (STATUS_SIZE_V1 | STATUS_SIZE_V2 | STATUS_SIZE_V3) => n,
            _ => STATUS_SIZE,
        };
        let mut r = header(b, size)?;
        let mut s = Status {
            state: r.u32(),
            stop_reason: r.u32(),
            trip_cpu: r.u32(),
            trip_stage: r.u32(),
            trip_value_ns: r.u64(),
            trip_seq: r.u64(),
            started_ns: r.u64(),
            ..Default::default()
        };
        for c in s.cpus.iter_mut() {
            *c = r.u64();
        }
        for c in s.offline.iter_mut() {
            *c = r.u64();
        }
        s.produced = r.u64();
        s.delivered = r.u64();
        s.dropped = r.u64();
        s.missed = r.u64();
        if size >= STATUS_SIZE_V2 {
            for c in s.unattended.iter_mut() {
                *c = r.u64();
            }
        }
        if size >= STATUS_SIZE_V3 {
            s.deadline_misses = r.u64();
        }
        if size >= STATUS_SIZE {
            s.cpus_ptr = r.u64();
            s.offline_ptr = r.u64();
            s.unattended_ptr = r.u64();
            s.cpu_words = r.u32();
            s.nr_cpu_ids = r.u32();
        }
        Ok(s)
    }
}
