// SPDX-License-Identifier: GPL-2.0

//! `struct rtlat_record` ([`Record`]): one timer activation, as `read()`
//! and `RTLAT_IOC_USER_WAIT` deliver it, and its flags.

use super::{
    wire::{
        Rd,
        Wr, //
    },
    UapiError,
    NR_STAGES,
    VERSION, //
};

/// Record flag: the stage's latency was not measured.
pub const REC_NO_USER: u32 = 1 << 0;
/// Record flag: no response time (first activation of a user waiter).
pub const REC_NO_RESPONSE: u32 = 1 << 1;
/// Record flag: the CPU was idle when the timer fired.
pub const REC_IDLE: u32 = 1 << 2;
/// Record flag: this activation tripped a threshold.
pub const REC_THRESHOLD: u32 = 1 << 3;
/// Record flag: the thread stage was not measured (an irq-only session).
pub const REC_NO_THREAD: u32 = 1 << 4;
/// Record flag: a user-stage session's activation that found no user waiter
/// blocked in `USER_WAIT` on its CPU; the kernel thread recorded it.
pub const REC_NO_WAITER: u32 = 1 << 5;
/// Record flag: the timer's hard IRQ woke the user waiter itself; the thread
/// stage is the waiter's time as it ran in the kernel, before the user stage.
pub const REC_DIRECT: u32 = 1 << 6;
/// Record flag: the response came later than the session's `deadline_ns`,
/// or had not come while the waiter had been away longer than that (then
/// `lat_ns[RESPONSE]` is -1).
pub const REC_DEADLINE_MISS: u32 = 1 << 7;

/// Byte size of [`Record`].
pub const RECORD_SIZE: usize = 64;

/// `struct rtlat_record`: one timer activation, every stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// CPU of the activation.
    pub cpu: u32,
    /// Sequence number, strictly increasing per CPU and session.
    pub seq: u64,
    /// Expected expiry, CLOCK_MONOTONIC ns.
    pub expected_ns: u64,
    /// Latency of each stage in ns against the expected expiry; -1 when not measured.
    pub lat_ns: [i64; NR_STAGES],
    /// Periods skipped before this activation because the previous one ran late.
    pub missed: u32,
    /// `REC_*` flags.
    pub flags: u32,
}

impl Record {
    /// Encodes into `b` ([`RECORD_SIZE`] bytes).
    pub fn encode(&self, b: &mut [u8; RECORD_SIZE]) {
        let mut w = Wr { b, at: 0 };
        // A record's header is shorter: u16 version, u16 size.
        w.u32((VERSION & 0xffff) | ((RECORD_SIZE as u32) << 16));
        w.u32(self.cpu);
        w.u64(self.seq);
        w.u64(self.expected_ns);
        for &l in self.lat_ns.iter() {
            w.i64(l);
        }
        w.u32(self.missed);
        w.u32(self.flags);
    }

    /// Decodes a record.
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        if b.len() != RECORD_SIZE {
            return Err(UapiError::Size);
        }
        let mut r = Rd { b, at: 0 };
        let h = r.u32();
        if (h >> 16) as usize != RECORD_SIZE {
            return Err(UapiError::Size);
        }
        if h & 0xffff != VERSION {
            return Err(UapiError::Version);
        }
        let mut rec = Record {
            cpu: r.u32(),
            seq: r.u64(),
            expected_ns: r.u64(),
            ..Default::default()
        };
        for l in rec.lat_ns.iter_mut() {
            *l = r.u64() as i64;
        }
        rec.missed = r.u32();
        rec.flags = r.u32();
        Ok(rec)
    }
}
