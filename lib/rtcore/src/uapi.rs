// SPDX-License-Identifier: GPL-2.0

//! The rtlat user-space ABI: the Rust twin of `include/uapi/linux/rtlat.h`.
//!
//! Every structure starts with its `size` and the UAPI `version`, has
//! explicit-width fields in native byte order and no implicit padding, and is
//! encoded and decoded field by field here, so that the kernel module and the
//! tool share one definition and a mismatch is an error, never a
//! misinterpretation. The layouts are checked against the C header by the
//! kselftest `uapi_layout` test.

use super::blame;

/// Version of this ABI. Structures with another version are refused.
pub const VERSION: u32 = 1;

/// Number of CPUs the inline CPU-set bitmaps can name ([`Config::cpus`],
/// [`Status::cpus`], ...); the bitmaps at [`Config::cpus_ptr`] and in the
/// STATUS buffers name any.
pub const MAX_CPUS: usize = 256;
/// 64-bit words of an inline CPU-set bitmap.
pub const CPU_WORDS: usize = MAX_CPUS / 64;
/// Largest bitmap at [`Config::cpus_ptr`], bytes (32768 CPUs).
pub const CPUS_SIZE_MAX: u32 = 4096;

/// The CPUs of a bitmap (bit `c % 64` of word `c / 64` is CPU `c`), in
/// increasing order.
pub fn cpu_bits(set: &[u64]) -> impl Iterator<Item = u32> + '_ {
    set.iter().enumerate().flat_map(|(i, &w)| {
        (0..64u32)
            .filter(move |b| w & (1 << b) != 0)
            .map(move |b| i as u32 * 64 + b)
    })
}

/// Adds CPU `cpu` to the bitmap `set`; false (and nothing added) if the
/// bitmap is too short to name it.
pub fn set_cpu(set: &mut [u64], cpu: u32) -> bool {
    match set.get_mut(cpu as usize / 64) {
        Some(w) => {
            *w |= 1 << (cpu % 64);
            true
        }
        None => false,
    }
}

/// 64-bit words of a bitmap that names `nr` CPUs.
pub const fn cpu_words(nr: u32) -> u32 {
    nr.div_ceil(64)
}

/// Number of stages.
pub const NR_STAGES: usize = 4;

/// A stage of one activation, in the order they happen; its value is the
/// stage's index in the ABI (`RTLAT_STAGE_*`: per-stage arrays, bits of
/// [`Config::stages`], [`Stats::stage`], [`Status::trip_stage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum Stage {
    /// The timer interrupt (hard-IRQ context).
    Irq = 0,
    /// The kernel thread woken from the timer interrupt.
    Thread = 1,
    /// The user thread blocked in the device.
    User = 2,
    /// Response: from the expiry until the user thread came back for the
    /// next one.
    Response = 3,
}

impl Stage {
    /// Every stage, in index order.
    pub const ALL: [Stage; NR_STAGES] = [Self::Irq, Self::Thread, Self::User, Self::Response];

    /// The stage an ABI index names, if any.
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Irq),
            1 => Some(Self::Thread),
            2 => Some(Self::User),
            3 => Some(Self::Response),
            _ => None,
        }
    }

    /// The stage's index in per-stage arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The stage's bit in [`Config::stages`].
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// The stage's name, as the tool prints it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Irq => "irq",
            Self::Thread => "thread",
            Self::User => "user",
            Self::Response => "response",
        }
    }
}

impl<T> core::ops::Index<Stage> for [T; NR_STAGES] {
    type Output = T;

    fn index(&self, stage: Stage) -> &T {
        &self[stage.index()]
    }
}

impl<T> core::ops::IndexMut<Stage> for [T; NR_STAGES] {
    fn index_mut(&mut self, stage: Stage) -> &mut T {
        &mut self[stage.index()]
    }
}

/// Smallest and largest period, in ns.
pub const PERIOD_MIN_NS: u64 = 50_000;
/// Largest period (1 s).
pub const PERIOD_MAX_NS: u64 = 1_000_000_000;
/// Default period (1000 µs).
pub const PERIOD_DEFAULT_NS: u64 = 1_000_000;
/// Default SCHED_FIFO priority of the measuring threads.
pub const PRIORITY_DEFAULT: u32 = 95;
/// Default number of records per CPU ring.
pub const RING_DEFAULT: u32 = 4096;
/// Largest ring.
pub const RING_MAX: u32 = 1 << 20;
/// Largest total of ring memory of one session (all CPUs), bytes: a
/// configuration asking for more is refused with `ENOMEM`.
pub const RING_TOTAL_MAX_BYTES: u64 = 64 << 20;

/// Config flag: call `tracing_off()` when a threshold is exceeded.
pub const CFG_TRACING_OFF: u32 = 1;
/// All known config flags.
/// Explain late activations: what ran on their CPU between the expected
/// expiry and the thread ([`Config::blame_us`], `RTLAT_IOC_BLAME`).
pub const CFG_BLAME: u32 = 1 << 1;
/// Every `CFG_*` flag.
pub const CFG_FLAGS: u32 = CFG_TRACING_OFF | CFG_BLAME;

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

/// ioctl type byte.
pub const IOC_MAGIC: u32 = 0xb7;

/// Byte size of [`Config`].
pub const CONFIG_SIZE: usize = CONFIG_SIZE_V2 + 8 + 4 + 4;
/// Byte size of the second [`Config`] (without `cpus_ptr`), which the
/// kernel still takes from programs built against it.
pub const CONFIG_SIZE_V2: usize = CONFIG_SIZE_V1 + 8;
/// Byte size of the first [`Config`] (without `deadline_ns`), which the
/// kernel still takes from programs built against it.
pub const CONFIG_SIZE_V1: usize = 8 + 8 + 8 * CPU_WORDS + 4 + 4 + 8 * NR_STAGES + 4 + 4;
/// Byte size of [`Record`].
pub const RECORD_SIZE: usize = 64;
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
/// Byte size of [`Stats`] (without the buckets, which go to `buckets_ptr`).
pub const STATS_SIZE: usize = 8 + 4 + 4 + 8 + 4 + 4 + 8 * 10 + 8 * 7;

/// Errors of decoding a structure from user space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UapiError {
    /// Wrong `size` field or buffer length.
    Size,
    /// Wrong `version` field.
    Version,
    /// A field is out of range.
    Invalid,
    /// "Every online CPU" includes CPUs beyond [`MAX_CPUS`], which the
    /// layout asked for cannot name.
    TooManyCpus,
}

struct Rd<'a> {
    b: &'a [u8],
    at: usize,
}

impl Rd<'_> {
    fn u32(&mut self) -> u32 {
        let v = u32::from_ne_bytes([
            self.b[self.at],
            self.b[self.at + 1],
            self.b[self.at + 2],
            self.b[self.at + 3],
        ]);
        self.at += 4;
        v
    }
    fn u64(&mut self) -> u64 {
        let lo = u64::from(self.u32());
        let hi = u64::from(self.u32());
        if cfg!(target_endian = "little") {
            lo | (hi << 32)
        } else {
            hi | (lo << 32)
        }
    }
}

struct Wr<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Wr<'_> {
    fn u32(&mut self, v: u32) {
        self.b[self.at..self.at + 4].copy_from_slice(&v.to_ne_bytes());
        self.at += 4;
    }
    fn u64(&mut self, v: u64) {
        self.b[self.at..self.at + 8].copy_from_slice(&v.to_ne_bytes());
        self.at += 8;
    }
    fn i64(&mut self, v: i64) {
        self.u64(v as u64)
    }
}

/// Checks the `size`/`version` header of an encoded structure of `size` bytes.
fn header(b: &[u8], size: usize) -> Result<Rd<'_>, UapiError> {
    if b.len() != size {
        return Err(UapiError::Size);
    }
    let mut r = Rd { b, at: 0 };
    if r.u32() as usize != size {
        return Err(UapiError::Size);
    }
    if r.u32() != VERSION {
        return Err(UapiError::Version);
    }
    Ok(r)
}

/// `struct rtlat_config`: what to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Period in ns, [`PERIOD_MIN_NS`]..=[`PERIOD_MAX_NS`].
    pub period_ns: u64,
    /// CPUs to measure on; empty means every online CPU.
    pub cpus: [u64; CPU_WORDS],
    /// Stages to measure, a bit per stage: irq always; thread unless the
    /// session is irq-only; user (which needs thread) on request.
    pub stages: u32,
    /// SCHED_FIFO priority of the measuring kernel threads, 1..=99.
    pub priority: u32,
    /// Per stage: stop when a latency exceeds this many ns (0: no threshold).
    pub threshold_ns: [u64; NR_STAGES],
    /// `CFG_*` flags.
    pub flags: u32,
    /// Records per CPU ring (power of two; 0 for the default).
    pub ring_records: u32,
    /// The user stage's deadline, at most the period: a response time over
    /// this many ns, or none while the waiter has already been away longer
    /// (the next activation, or the stop, found it away), is a deadline
    /// miss, flagged and counted (0: no deadline).
    pub deadline_ns: u64,
    /// User address of the CPU set as a bitmap of [`Self::cpus_size`]
    /// bytes, for CPUs past [`MAX_CPUS`] ([`Self::cpus`] then empty); 0:
    /// [`Self::cpus`]. The kernel reads it at CONFIG.
    pub cpus_ptr: u64,
    /// Bytes at [`Self::cpus_ptr`]: a multiple of 8, at most
    /// [`CPUS_SIZE_MAX`]; 0 with no pointer.
    pub cpus_size: u32,
    /// Decoded from the current layout, which names any CPU: "every online
    /// CPU" may include CPUs past [`MAX_CPUS`]. False for a program built
    /// against an older layout, whose STATUS could not name them.
    pub wide: bool,
    /// With [`CFG_BLAME`]: explain the activations whose thread latency is
    /// at least this many µs (0: every one). Current layout only: with an
    /// older one, the flag explains every activation.
    pub blame_us: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            period_ns: PERIOD_DEFAULT_NS,
            cpus: [0; CPU_WORDS],
            stages: Stage::Irq.bit() | Stage::Thread.bit(),
            priority: PRIORITY_DEFAULT,
            threshold_ns: [0; NR_STAGES],
            flags: 0,
            ring_records: 0,
            deadline_ns: 0,
            cpus_ptr: 0,
            cpus_size: 0,
            wide: true,
            blame_us: 0,
        }
    }
}

impl Config {
    /// Decodes and validates a config (everything but the CPUs' online
    /// state), of any layout (the first has no deadline, the first two no
    /// `cpus_ptr`).
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        let size = match b.len() {
            n @ (CONFIG_SIZE_V1 | CONFIG_SIZE_V2) => n,
            _ => CONFIG_SIZE,
        };
        let mut r = header(b, size)?;
        let mut c = Config {
            period_ns: r.u64(),
            ..Default::default()
        };
        for w in c.cpus.iter_mut() {
            *w = r.u64();
        }
        c.stages = r.u32();
        c.priority = r.u32();
        for t in c.threshold_ns.iter_mut() {
            *t = r.u64();
        }
        c.flags = r.u32();
        c.ring_records = r.u32();
        if size >= CONFIG_SIZE_V2 {
            c.deadline_ns = r.u64();
        }
        c.wide = size == CONFIG_SIZE;
        if c.wide {
            c.cpus_ptr = r.u64();
            c.cpus_size = r.u32();
            c.blame_us = r.u32();
        }
        c.validate()?;
        Ok(c)
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), UapiError> {
        let known = Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit();
        if !(PERIOD_MIN_NS..=PERIOD_MAX_NS).contains(&self.period_ns)
            || !self.measures(Stage::Irq)
            || (self.user_stage() && !self.thread_stage())
            || self.stages & !known != 0
            // A threshold on a stage that is not measured would never trip.
            || Stage::ALL
                .into_iter()
                .any(|s| self.threshold_ns[s] != 0 && !self.measures(s))
            || !(1..=99).contains(&self.priority)
            || self.flags & !CFG_FLAGS != 0
            || (self.ring_records != 0
                && (!self.ring_records.is_power_of_two() || self.ring_records > RING_MAX))
            // A deadline is on the response, which only a user stage has,
            // within the period.
            || (self.deadline_ns != 0 && (!self.user_stage() || self.deadline_ns > self.period_ns))
            // The set is at cpus_ptr or inline, not both.
            || (self.cpus_ptr != 0) != (self.cpus_size != 0)
            || (self.cpus_ptr != 0 && self.cpus.iter().any(|&w| w != 0))
            || self.cpus_size % 8 != 0
            || self.cpus_size > CPUS_SIZE_MAX
            // Blame explains the thread stage, at a threshold it was asked for.
            || (self.flags & CFG_BLAME != 0 && !self.thread_stage())
            || (self.blame_us != 0 && self.flags & CFG_BLAME == 0)
        {
            return Err(UapiError::Invalid);
        }
        Ok(())
    }

    /// Encodes into `b` ([`CONFIG_SIZE`] bytes).
    pub fn encode(&self, b: &mut [u8; CONFIG_SIZE]) {
        let mut w = Wr { b, at: 0 };
        w.u32(CONFIG_SIZE as u32);
        w.u32(VERSION);
        w.u64(self.period_ns);
        for &c in self.cpus.iter() {
            w.u64(c);
        }
        w.u32(self.stages);
        w.u32(self.priority);
        for &t in self.threshold_ns.iter() {
            w.u64(t);
        }
        w.u32(self.flags);
        w.u32(self.ring_records);
        w.u64(self.deadline_ns);
        w.u64(self.cpus_ptr);
        w.u32(self.cpus_size);
        w.u32(self.blame_us);
    }

    /// The CPUs a session of this config samples, in increasing order,
    /// each passed to `add`: those of `set` (the bitmap [`Self::cpus`], or
    /// the one the caller read from [`Self::cpus_ptr`]), or every CPU
    /// `online` says is online if `set` is empty. `nr_cpu_ids` CPUs exist.
    /// A CPU of the set that does not exist or is offline is
    /// [`UapiError::Invalid`], as is a set with no CPU online; an online
    /// CPU past [`MAX_CPUS`] in "every online CPU" of a config of an older
    /// layout (not [`Self::wide`]) is [`UapiError::TooManyCpus`], not
    /// silently left out. `add` is called only once the set is known good.
    pub fn session_cpus(
        &self,
        set: &[u64],
        nr_cpu_ids: u32,
        online: impl Fn(u32) -> bool,
        add: impl FnMut(u32),
    ) -> Result<(), UapiError> {
        if set.iter().any(|&w| w != 0) {
            if cpu_bits(set).any(|cpu| cpu >= nr_cpu_ids || !online(cpu)) {
                return Err(UapiError::Invalid);
            }
            cpu_bits(set).for_each(add);
            return Ok(());
        }
        let all = || (0..nr_cpu_ids).filter(|&c| online(c));
        if !self.wide && all().any(|cpu| cpu as usize >= MAX_CPUS) {
            return Err(UapiError::TooManyCpus);
        }
        if all().next().is_none() {
            return Err(UapiError::Invalid);
        }
        all().for_each(add);
        Ok(())
    }

    /// True if the user stage is enabled.
    pub fn user_stage(&self) -> bool {
        self.stages & Stage::User.bit() != 0
    }

    /// True if the thread stage is enabled (false: an irq-only session).
    pub fn thread_stage(&self) -> bool {
        self.stages & Stage::Thread.bit() != 0
    }

    /// True if `stage` is measured (the response time comes with the user
    /// stage).
    pub fn measures(&self, stage: Stage) -> bool {
        match stage {
            Stage::Response => self.user_stage(),
            s => self.stages & s.bit() != 0,
        }
    }

    /// The records per ring of a session of `nr_chans` channels: the
    /// `ring_records` asked for, or for 0 [`RING_DEFAULT`] halved until the
    /// rings fit [`RING_TOTAL_MAX_BYTES`] (past 256 CPUs, so that the
    /// default session is never refused); `None` if they do not fit.
    pub fn ring_records_for(&self, nr_chans: usize) -> Option<u32> {
        let fits = |n: u32| {
            (nr_chans as u64)
                .saturating_mul(u64::from(n))
                .saturating_mul(RECORD_SIZE as u64)
                <= RING_TOTAL_MAX_BYTES
        };
        if self.ring_records != 0 {
            return fits(self.ring_records).then_some(self.ring_records);
        }
        let mut n = RING_DEFAULT;
        while !fits(n) {
            if n == 1 {
                return None;
            }
            n /= 2;
        }
        Some(n)
    }
}

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

/// `struct rtlat_stats`: request (cpu, stage, bucket buffer) and answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// In: the CPU.
    pub cpu: u32,
    /// In: the stage's index ([`Stage`]).
    pub stage: u32,
    /// In: user address of a `u64` array for the histogram, or 0.
    pub buckets_ptr: u64,
    /// In: capacity of that array; out: number of buckets written.
    pub nr_buckets: u32,
    /// Out: the histogram layout version (`hist::SUB_BITS` and `hist::OCTAVES`).
    pub hist_layout: u32,
    /// Out: samples.
    pub count: u64,
    /// Out: smallest sample, ns.
    pub min: u64,
    /// Out: largest sample, ns.
    pub max: u64,
    /// Out: sum of the samples, ns.
    pub sum: u64,
    /// Out: sequence number of the maximum.
    pub max_seq: u64,
    /// Out: expected expiry (CLOCK_MONOTONIC ns) of the maximum's activation.
    pub max_time: u64,
    /// Out: missed periods on this CPU.
    pub missed: u64,
    /// Out: records produced on this CPU.
    pub produced: u64,
    /// Out: records delivered to readers.
    pub delivered: u64,
    /// Out: records dropped.
    pub dropped: u64,
    /// Out: p50 ... p99.9999 (`hist::PERCENTILES_PPM`), ns; 0 when empty.
    pub percentiles: [u64; 7],
}

impl Stats {
    /// Decodes a request (only the input fields are read).
    pub fn decode_request(b: &[u8]) -> Result<Self, UapiError> {
        let mut r = header(b, STATS_SIZE)?;
        let s = Stats {
            cpu: r.u32(),
            stage: r.u32(),
            buckets_ptr: r.u64(),
            nr_buckets: r.u32(),
            ..Default::default()
        };
        if Stage::from_raw(s.stage).is_none() {
            return Err(UapiError::Invalid);
        }
        Ok(s)
    }

    /// Decodes an answer.
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        let mut r = header(b, STATS_SIZE)?;
        let mut s = Stats {
            cpu: r.u32(),
            stage: r.u32(),
            buckets_ptr: r.u64(),
            nr_buckets: r.u32(),
            hist_layout: r.u32(),
            ..Default::default()
        };
        for v in [
            &mut s.count,
            &mut s.min,
            &mut s.max,
            &mut s.sum,
            &mut s.max_seq,
            &mut s.max_time,
            &mut s.missed,
            &mut s.produced,
            &mut s.delivered,
            &mut s.dropped,
        ] {
            *v = r.u64();
        }
        for p in s.percentiles.iter_mut() {
            *p = r.u64();
        }
        Ok(s)
    }

    /// Encodes into `b`.
    pub fn encode(&self, b: &mut [u8; STATS_SIZE]) {
        let mut w = Wr { b, at: 0 };
        w.u32(STATS_SIZE as u32);
        w.u32(VERSION);
        w.u32(self.cpu);
        w.u32(self.stage);
        w.u64(self.buckets_ptr);
        w.u32(self.nr_buckets);
        w.u32(self.hist_layout);
        for v in [
            self.count,
            self.min,
            self.max,
            self.sum,
            self.max_seq,
            self.max_time,
            self.missed,
            self.produced,
            self.delivered,
            self.dropped,
        ] {
            w.u64(v);
        }
        for &p in self.percentiles.iter() {
            w.u64(p);
        }
    }
}

/// Bytes of a source's name in a [`BlameEntry`]: a task's comm, an IRQ
/// handler's name, or an hrtimer callback's `module:symbol`.
pub const BLAME_NAME_LEN: usize = 48;
/// Bytes of a frame's name in [`BlameWorst::stack`]: `module:symbol+off/size`.
pub const BLAME_FRAME_LEN: usize = 64;
/// Byte size of a [`BlameEntry`].
pub const BLAME_ENTRY_SIZE: usize = 4 * 4 + 4 * 8 + BLAME_NAME_LEN;
/// The hrtimer callbacks an answer names whole ([`Blame::long_names`]):
/// the first distinct ones its entries name.
pub const BLAME_LONG_NAMES: usize = 16;
/// Bytes of a whole name in [`Blame::long_names`]: `module:symbol` with
/// kallsyms' longest symbol (`KSYM_NAME_LEN`, 512 bytes with its NUL) and
/// module name (55 bytes), NUL-padded.
pub const BLAME_LONG_NAME_LEN: usize = 576;
/// Byte size of [`Blame`] before the whole names (`RTLAT_IOC_BLAME_V1`).
pub const BLAME_SIZE_V1: usize = 8
    + 4
    + 4
    + 3 * 8
    + 4 * 4
    + 6 * 8
    + (blame::CULPRITS + blame::IRQ_PARTS + blame::THREAD_PARTS) * BLAME_ENTRY_SIZE
    + 4
    + 4
    + blame::STACK_DEPTH * BLAME_FRAME_LEN;
/// Byte size of [`Blame`]: the whole names after the first layout.
pub const BLAME_SIZE: usize = BLAME_SIZE_V1 + 4 + 4 + BLAME_LONG_NAMES * BLAME_LONG_NAME_LEN;

/// `struct rtlat_blame_entry`: one source and its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlameEntry {
    /// [`blame::Kind`] as its ABI value.
    pub kind: u32,
    /// A task's scheduling policy; 0 for the others.
    pub policy: u32,
    /// A task's effective priority (see [`blame::Source::prio`]).
    pub prio: i32,
    /// In the run's ranking: late activations it had a part in; in an
    /// analysis: the times it began (or was running) in the interval.
    pub count: u32,
    /// pid, IRQ number or softirq vector; 0 for an hrtimer (no kernel
    /// address leaves the kernel: its name says which).
    pub id: u64,
    /// An hrtimer's in an answer of the current layout: its callback's
    /// whole name is [`Blame::long_names`]`[aux - 1]` (0: none left, only
    /// `name`). 0 in the others (reserved).
    pub aux: u64,
    /// Its time, ns.
    pub ns: u64,
    /// In the run's ranking: its largest part in one activation; 0 in an
    /// analysis.
    pub worst_ns: u64,
    /// Its name, NUL-padded.
    pub name: [u8; BLAME_NAME_LEN],
}

impl BlameEntry {
    /// No source.
    pub const EMPTY: Self = Self {
        kind: 0,
        policy: 0,
        prio: 0,
        count: 0,
        id: 0,
        aux: 0,
        ns: 0,
        worst_ns: 0,
        name: [0; BLAME_NAME_LEN],
    };

    /// `s`, its time `ns` (`count`, `worst_ns`), named by its own name.
    pub fn new(s: &blame::Source, ns: u64, count: u64, worst_ns: u64) -> Self {
        let mut e = Self {
            kind: s.kind as u32,
            policy: u32::from(s.policy),
            prio: i32::from(s.prio),
            count: count.min(u64::from(u32::MAX)) as u32,
            // An hrtimer's identity and callback are kernel addresses.
            id: if s.kind == blame::Kind::Timer {
                0
            } else {
                s.id
            },
            aux: 0,
            ns,
            worst_ns,
            ..Self::EMPTY
        };
        let own = s.name_bytes();
        e.name[..own.len()].copy_from_slice(own);
        e
    }

    /// The name, up to its first NUL.
    pub fn name_bytes(&self) -> &[u8] {
        let n = self
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(BLAME_NAME_LEN);
        &self.name[..n]
    }

    fn encode(&self, w: &mut Wr<'_>) {
        w.u32(self.kind);
        w.u32(self.policy);
        w.u32(self.prio as u32);
        w.u32(self.count);
        w.u64(self.id);
        w.u64(self.aux);
        w.u64(self.ns);
        w.u64(self.worst_ns);
        w.b[w.at..w.at + BLAME_NAME_LEN].copy_from_slice(&self.name);
        w.at += BLAME_NAME_LEN;
    }

    fn decode(r: &mut Rd<'_>) -> Result<Self, UapiError> {
        let mut e = Self {
            kind: r.u32(),
            policy: r.u32(),
            prio: r.u32() as i32,
            count: r.u32(),
            id: r.u64(),
            aux: r.u64(),
            ns: r.u64(),
            worst_ns: r.u64(),
            ..Self::EMPTY
        };
        e.name.copy_from_slice(&r.b[r.at..r.at + BLAME_NAME_LEN]);
        r.at += BLAME_NAME_LEN;
        if blame::Kind::from_raw(e.kind).is_none() {
            return Err(UapiError::Invalid);
        }
        Ok(e)
    }
}

/// The worst late activation of a CPU, explained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlameWorst {
    /// Its sequence number.
    pub seq: u64,
    /// Its expected expiry, CLOCK_MONOTONIC ns.
    pub expected_ns: u64,
    /// Its irq and thread latencies, ns.
    pub irq_ns: i64,
    /// (See `irq_ns`.)
    pub thread_ns: i64,
    /// Time before the interrupt of sources past `irq`.
    pub irq_other_ns: u64,
    /// Time after the interrupt of sources past `thread`.
    pub thread_other_ns: u64,
    /// Entries of `irq` in use.
    pub nr_irq: u32,
    /// Entries of `thread` in use.
    pub nr_thread: u32,
    /// What ran from the expected expiry to the interrupt, largest first.
    pub irq: [BlameEntry; blame::IRQ_PARTS],
    /// What ran from the interrupt to the thread, largest first.
    pub thread: [BlameEntry; blame::THREAD_PARTS],
    /// Entries of `stack` in use.
    pub nr_stack: u32,
    /// The code its interrupt interrupted, innermost first, by name
    /// (`module:symbol+off/size`, NUL-padded; `?` unknown); none if it
    /// interrupted user space.
    pub stack: [[u8; BLAME_FRAME_LEN]; blame::STACK_DEPTH],
}

/// What a `RTLAT_IOC_BLAME` request asks: a CPU, and which of its worst
/// activations to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlameRequest {
    /// The CPU.
    pub cpu: u32,
    /// Which of the worst: 0 the worst, up to [`blame::WORST`] - 1.
    pub rank: u32,
    /// Whether to be told how many are kept (`nr_worst`): a tool older
    /// than the word sends 0 and wants it 0, as it was (`reserved2`).
    pub tell_nr_worst: bool,
    /// Whether the measuring task's time may come as
    /// [`blame::Kind::Measure`] (`BLAME_WANT_MEASURE` in the request's
    /// `want`, the answer's `has_worst`): a tool older than the kind sends
    /// 0 and is told it as the task it is, as before.
    pub measure_apart: bool,
}

impl BlameRequest {
    /// Rank `rank` of `cpu`, the number kept told, the measurement apart.
    pub const fn new(cpu: u32, rank: u32) -> Self {
        Self {
            cpu,
            rank,
            tell_nr_worst: true,
            measure_apart: true,
        }
    }
}

/// `want` (the answer's `has_worst`) of a request: the measuring task's
/// time as [`blame::Kind::Measure`]. Not bit 0: an answer has 1 there
/// (`has_worst`), and a program that sends its last answer back as its
/// next request, changing the rank, must not ask for what it does not
/// know. Bit 0 is ignored; the others are refused.
pub const BLAME_WANT_MEASURE: u32 = 1 << 1;
/// Where a request's `want` is (the answer's `has_worst`).
const BLAME_WANT_AT: usize = 40;

/// Where a request's rank is (the answer's `reserved` word before it).
const BLAME_RANK_AT: usize = 52;
/// Where `nr_worst` is (`reserved2` before it): after `nr_stack`.
const BLAME_NR_WORST_AT: usize = BLAME_SIZE_V1 - blame::STACK_DEPTH * BLAME_FRAME_LEN - 4;
/// Where the whole names are (after their count and a reserved word).
const BLAME_LONG_NAMES_AT: usize = BLAME_SIZE_V1 + 8;

/// The hrtimer callbacks an answer's encoder has named whole so far, in
/// the order of their [`Blame::long_names`].
struct LongNames {
    /// Their addresses (a source's `aux`).
    keys: [u64; BLAME_LONG_NAMES],
    /// Entries of `keys` in use.
    n: usize,
}

impl LongNames {
    /// The index of callback `aux`'s whole name, and whether it is new:
    /// its own if named before, else the next one, if one is left.
    fn slot(&mut self, aux: u64) -> Option<(usize, bool)> {
        if let Some(k) = self.keys[..self.n].iter().position(|&a| a == aux) {
            return Some((k, false));
        }
        let k = self.n;
        *self.keys.get_mut(k)? = aux;
        self.n += 1;
        Some((k, true))
    }
}

/// `struct rtlat_blame` (`RTLAT_IOC_BLAME`): one CPU's late activations
/// explained, over the session so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blame {
    /// In: the CPU.
    pub cpu: u32,
    /// In: which of the worst activations `worst` is (0: the worst).
    pub rank: u32,
    /// The worst activations the CPU keeps explained: ranks up to this
    /// one less.
    pub nr_worst: u32,
    /// Late activations explained.
    pub explained: u64,
    /// Their thread latencies, summed (ns).
    pub late_ns: u64,
    /// Time of sources past `culprits` (ns).
    pub other_ns: u64,
    /// Entries of `culprits` in use.
    pub nr_culprits: u32,
    /// The sources, most time first: `ns` their time in the late
    /// activations, `count` how many they were part of, `worst_ns` their
    /// largest part in one.
    pub culprits: [BlameEntry; blame::CULPRITS],
    /// The worst activation of rank `rank`, if that many were explained.
    pub worst: Option<BlameWorst>,
    /// Entries of `long_names` in use (0 in an answer of the first
    /// layout).
    pub nr_long_names: u32,
    /// The whole names of the hrtimer callbacks its entries name (by their
    /// `aux`), `module:symbol` as kallsyms has them (a Rust symbol
    /// mangled), NUL-padded; an entry's `name` is the same, cut.
    pub long_names: [[u8; BLAME_LONG_NAME_LEN]; BLAME_LONG_NAMES],
}

impl Blame {
    /// Encodes the answer to `req` from its CPU's tally's excerpt for it
    /// ([`blame::Tally::excerpt`] of its rank) into `b`, entry by entry
    /// (the kernel's stack holds no whole answer); `name` may rename a
    /// source (the kernel names hrtimer callbacks by symbol), into a buffer
    /// holding its own name: an hrtimer's whole into the answer's
    /// `long_names` if `b` has them (the current layout; once per
    /// callback, while one is left), and cut into its entry's. `b` is an
    /// answer of either layout ([`BLAME_SIZE`], [`BLAME_SIZE_V1`]); one of
    /// another size is left alone. For a request
    /// that does not ask for [`blame::Kind::Measure`], `t` is folded back
    /// into the tasks first ([`blame::Excerpt::fold_measure`]), so that
    /// such a request is answered as before the kind.
    pub fn encode_excerpt(
        req: BlameRequest,
        t: &mut blame::Excerpt,
        mut name: impl FnMut(&blame::Source, &mut [u8]),
        mut frame: impl FnMut(u64, &mut [u8; BLAME_FRAME_LEN]),
        b: &mut [u8],
    ) {
        let mut long = match b.len() {
            BLAME_SIZE => Some(LongNames {
                keys: [0; BLAME_LONG_NAMES],
                n: 0,
            }),
            BLAME_SIZE_V1 => None,
            _ => return,
        };
        if !req.measure_apart {
            t.fold_measure();
        }
        let t = &*t;
        b.fill(0);
        let size = b.len();
        let mut w = Wr { b, at: 0 };
        w.u32(size as u32);
        w.u32(VERSION);
        w.u32(req.cpu);
        w.u32(t.n as u32);
        w.u64(t.explained);
        w.u64(t.late_ns);
        w.u64(t.other_ns);
        let a = t.worst();
        w.u32(u32::from(a.is_some()));
        w.u32(a.map_or(0, |a| a.irq_ex.n as u32));
        w.u32(a.map_or(0, |a| a.thread_ex.n as u32));
        w.u32(req.rank);
        w.u64(a.map_or(0, |a| a.seq));
        w.u64(a.map_or(0, |a| a.expected_ns as u64));
        w.i64(a.map_or(0, |a| a.irq_ns));
        w.i64(a.map_or(0, |a| a.thread_ns));
        w.u64(a.map_or(0, |a| a.irq_ex.other_ns));
        w.u64(a.map_or(0, |a| a.thread_ex.other_ns));
        let base = w.at;
        for (k, &i) in t.ranked_order()[..t.n].iter().enumerate() {
            let c = &t.culprits[usize::from(i)];
            let e = BlameEntry::new(&c.source, c.ns, c.count, c.worst_ns);
            Self::put_entry(
                w.b,
                base + k * BLAME_ENTRY_SIZE,
                e,
                &c.source,
                &mut long,
                &mut name,
            );
        }
        let tail =
            base + (blame::CULPRITS + blame::IRQ_PARTS + blame::THREAD_PARTS) * BLAME_ENTRY_SIZE;
        w.at = BLAME_NR_WORST_AT;
        w.u32(if req.tell_nr_worst {
            t.nworst as u32
        } else {
            0
        });
        if let Some(a) = a {
            let n = a.stack_n.min(blame::STACK_DEPTH);
            w.at = tail;
            w.u32(n as u32);
            for (k, &pc) in a.stack[..n].iter().enumerate() {
                let at = tail + 8 + k * BLAME_FRAME_LEN;
                let f: &mut [u8; BLAME_FRAME_LEN] = (&mut w.b[at..at + BLAME_FRAME_LEN])
                    .try_into()
                    .unwrap_or_else(|_| unreachable!());
                frame(pc, f);
            }
            let irq = base + blame::CULPRITS * BLAME_ENTRY_SIZE;
            let thread = irq + blame::IRQ_PARTS * BLAME_ENTRY_SIZE;
            for (at, parts) in [
                (irq, &a.irq[..a.irq_ex.n]),
                (thread, &a.thread[..a.thread_ex.n]),
            ] {
                for (k, s) in parts.iter().enumerate() {
                    let e = BlameEntry::new(&s.source, s.ns, u64::from(s.count), 0);
                    let at = at + k * BLAME_ENTRY_SIZE;
                    Self::put_entry(w.b, at, e, &s.source, &mut long, &mut name);
                }
            }
        }
        if let Some(l) = long {
            w.at = BLAME_SIZE_V1;
            w.u32(l.n as u32);
        }
    }

    /// Writes entry `e` of source `s` at `at` of answer `b`, named by
    /// `name`: an hrtimer callback whole in `b`'s `long_names` if `long`
    /// has one for it, and cut in `e`.
    fn put_entry(
        b: &mut [u8],
        at: usize,
        mut e: BlameEntry,
        s: &blame::Source,
        long: &mut Option<LongNames>,
        name: &mut impl FnMut(&blame::Source, &mut [u8]),
    ) {
        let slot = match long {
            Some(l) if s.kind == blame::Kind::Timer && s.aux != 0 => l.slot(s.aux),
            _ => None,
        };
        match slot {
            Some((k, new)) => {
                let from = BLAME_LONG_NAMES_AT + k * BLAME_LONG_NAME_LEN;
                let whole = &mut b[from..from + BLAME_LONG_NAME_LEN];
                if new {
                    whole[..BLAME_NAME_LEN].copy_from_slice(&e.name);
                    name(s, whole);
                }
                // (Cut as the first layout's: its bytes, NUL last.)
                let n = BLAME_NAME_LEN - 1;
                e.name[..n].copy_from_slice(&whole[..n]);
                e.name[n] = 0;
                e.aux = k as u64 + 1;
            }
            None => name(s, &mut e.name),
        }
        e.encode(&mut Wr { b, at });
    }

    /// Encodes the answer to `req` from its CPU's tally into `b`, as
    /// [`Self::encode_excerpt`] does from its excerpt.
    pub fn encode_tally(
        req: BlameRequest,
        t: &blame::Tally,
        name: impl FnMut(&blame::Source, &mut [u8]),
        frame: impl FnMut(u64, &mut [u8; BLAME_FRAME_LEN]),
        b: &mut [u8],
    ) {
        let mut e = blame::Excerpt::EMPTY;
        t.excerpt(req.rank as usize, &mut e);
        Self::encode_excerpt(req, &mut e, name, frame, b);
    }

    /// The answer to `req` from its CPU's tally, as [`Self::encode_tally`]
    /// writes it.
    pub fn from_tally(
        req: BlameRequest,
        t: &blame::Tally,
        name: impl FnMut(&blame::Source, &mut [u8]),
        frame: impl FnMut(u64, &mut [u8; BLAME_FRAME_LEN]),
    ) -> Self {
        let mut b = [0u8; BLAME_SIZE];
        Self::encode_tally(req, t, name, frame, &mut b);
        Self::decode(&b).unwrap_or_else(|e| panic!("an encoded tally decodes: {e:?}"))
    }

    /// Decodes a request of either layout (by `b`'s length): the CPU, the
    /// rank, which must be below [`blame::WORST`], and whether `nr_worst`
    /// is nonzero (the other words are the answer's, ignored).
    pub fn decode_request(b: &[u8]) -> Result<BlameRequest, UapiError> {
        let mut r = header(b, Self::layout(b))?;
        let cpu = r.u32();
        r.at = BLAME_WANT_AT;
        let want = r.u32();
        // (Bit 0 is an answer's has_worst, sent back.)
        if want & !(BLAME_WANT_MEASURE | 1) != 0 {
            return Err(UapiError::Invalid);
        }
        let measure_apart = want & BLAME_WANT_MEASURE != 0;
        r.at = BLAME_RANK_AT;
        let rank = r.u32();
        r.at = BLAME_NR_WORST_AT;
        let tell_nr_worst = r.u32() != 0;
        if rank as usize >= blame::WORST {
            return Err(UapiError::Invalid);
        }
        Ok(BlameRequest {
            cpu,
            rank,
            tell_nr_worst,
            measure_apart,
        })
    }

    /// The layout's size a buffer of `b`'s length has: the first's, else
    /// the current one's.
    fn layout(b: &[u8]) -> usize {
        match b.len() {
            BLAME_SIZE_V1 => BLAME_SIZE_V1,
            _ => BLAME_SIZE,
        }
    }

    /// Encodes `req` into `b`, in the layout of its length (the current
    /// one, or the first, [`BLAME_SIZE_V1`]; nothing into one of another
    /// length).
    pub fn encode_request(req: BlameRequest, b: &mut [u8]) {
        if b.len() != BLAME_SIZE && b.len() != BLAME_SIZE_V1 {
            return;
        }
        b.fill(0);
        let size = b.len();
        let mut w = Wr { b, at: 0 };
        w.u32(size as u32);
        w.u32(VERSION);
        w.u32(req.cpu);
        w.at = BLAME_WANT_AT;
        w.u32(if req.measure_apart {
            BLAME_WANT_MEASURE
        } else {
            0
        });
        w.at = BLAME_RANK_AT;
        w.u32(req.rank);
        w.at = BLAME_NR_WORST_AT;
        w.u32(u32::from(req.tell_nr_worst));
    }

    /// Decodes an answer of either layout (by `b`'s length). One of a
    /// module older than `nr_worst` (which keeps one worst activation and
    /// answers 0 there) reads as `nr_worst` 1 if it has a worst.
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        let size = Self::layout(b);
        let mut r = header(b, size)?;
        let cpu = r.u32();
        let nr_culprits = r.u32();
        let (explained, late_ns, other_ns) = (r.u64(), r.u64(), r.u64());
        let has_worst = r.u32();
        let (nr_irq, nr_thread, rank) = (r.u32(), r.u32(), r.u32());
        let mut w = BlameWorst {
            nr_irq,
            nr_thread,
            seq: r.u64(),
            expected_ns: r.u64(),
            irq_ns: r.u64() as i64,
            thread_ns: r.u64() as i64,
            irq_other_ns: r.u64(),
            thread_other_ns: r.u64(),
            irq: [BlameEntry::EMPTY; blame::IRQ_PARTS],
            thread: [BlameEntry::EMPTY; blame::THREAD_PARTS],
            nr_stack: 0,
            stack: [[0; BLAME_FRAME_LEN]; blame::STACK_DEPTH],
        };
        if has_worst > 1
            || nr_culprits as usize > blame::CULPRITS
            || nr_irq as usize > blame::IRQ_PARTS
            || nr_thread as usize > blame::THREAD_PARTS
        {
            return Err(UapiError::Invalid);
        }
        let mut culprits = [BlameEntry::EMPTY; blame::CULPRITS];
        for e in culprits
            .iter_mut()
            .chain(w.irq.iter_mut())
            .chain(w.thread.iter_mut())
        {
            *e = BlameEntry::decode(&mut r)?;
        }
        w.nr_stack = r.u32();
        let nr_worst = match r.u32() {
            0 if rank == 0 => has_worst,
            n => n,
        };
        if w.nr_stack as usize > blame::STACK_DEPTH
            || nr_worst as usize > blame::WORST
            || u64::from(nr_worst) > explained
            || (has_worst == 1) != (rank < nr_worst)
        {
            return Err(UapiError::Invalid);
        }
        for f in w.stack.iter_mut() {
            f.copy_from_slice(&r.b[r.at..r.at + BLAME_FRAME_LEN]);
            r.at += BLAME_FRAME_LEN;
        }
        let mut nr_long_names = 0;
        let mut long_names = [[0; BLAME_LONG_NAME_LEN]; BLAME_LONG_NAMES];
        if size == BLAME_SIZE {
            nr_long_names = r.u32();
            r.at = BLAME_LONG_NAMES_AT;
            for n in long_names.iter_mut() {
                n.copy_from_slice(&r.b[r.at..r.at + BLAME_LONG_NAME_LEN]);
                r.at += BLAME_LONG_NAME_LEN;
            }
        }
        // An entry's `aux`: 0, or an hrtimer's whole name among those
        // given.
        let bad_aux = |e: &BlameEntry| {
            e.aux != 0 && (e.kind != blame::Kind::Timer as u32 || e.aux > u64::from(nr_long_names))
        };
        if nr_long_names as usize > BLAME_LONG_NAMES
            || culprits
                .iter()
                .chain(w.irq.iter())
                .chain(w.thread.iter())
                .any(bad_aux)
        {
            return Err(UapiError::Invalid);
        }
        Ok(Self {
            cpu,
            rank,
            nr_worst,
            explained,
            late_ns,
            other_ns,
            nr_culprits,
            culprits,
            worst: (has_worst == 1).then_some(w),
            nr_long_names,
            long_names,
        })
    }

    /// The name of entry `e` of this answer: its callback's whole one for
    /// an hrtimer that has it, else its own, up to the first NUL.
    pub fn name_of<'a>(&'a self, e: &'a BlameEntry) -> &'a [u8] {
        let whole = match usize::try_from(e.aux) {
            Ok(k @ 1..) if k <= self.nr_long_names as usize => self.long_names.get(k - 1),
            _ => None,
        };
        match whole {
            Some(n) => &n[..n.iter().position(|&b| b == 0).unwrap_or(n.len())],
            None => e.name_bytes(),
        }
    }
}

/// The histogram layout identifier reported in [`Stats::hist_layout`].
pub const HIST_LAYOUT: u32 = (super::hist::SUB_BITS << 8) | super::hist::OCTAVES;

/// ioctl command numbers (Linux generic `_IOC` encoding, as on x86_64, arm64
/// and riscv64).
pub mod ioc {
    use super::*;

    const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
        (dir << 30) | ((size as u32) << 16) | (IOC_MAGIC << 8) | nr
    }
    const W: u32 = 1;
    const R: u32 = 2;

    /// `_IOW(0xb7, 1, struct rtlat_config)`: configure a session.
    pub const CONFIG: u32 = ioc(W, 1, CONFIG_SIZE);
    /// The same ioctl with the first layout of `struct rtlat_config`.
    pub const CONFIG_V1: u32 = ioc(W, 1, CONFIG_SIZE_V1);
    /// The same ioctl with the second layout (without `cpus_ptr`).
    pub const CONFIG_V2: u32 = ioc(W, 1, CONFIG_SIZE_V2);
    /// `_IO(0xb7, 2)`: start sampling.
    pub const START: u32 = ioc(0, 2, 0);
    /// `_IO(0xb7, 3)`: stop sampling.
    pub const STOP: u32 = ioc(0, 3, 0);
    /// `_IOWR(0xb7, 4, struct rtlat_status)`.
    pub const STATUS: u32 = ioc(R | W, 4, STATUS_SIZE);
    /// The same ioctl with the first layout of `struct rtlat_status`.
    pub const STATUS_V1: u32 = ioc(R, 4, STATUS_SIZE_V1);
    /// The same ioctl with the second layout (without `deadline_misses`).
    pub const STATUS_V2: u32 = ioc(R, 4, STATUS_SIZE_V2);
    /// The same ioctl with the third layout (without the sets in full).
    pub const STATUS_V3: u32 = ioc(R, 4, STATUS_SIZE_V3);
    /// `_IOWR(0xb7, 5, struct rtlat_stats)`.
    pub const STATS: u32 = ioc(R | W, 5, STATS_SIZE);
    /// `_IO(0xb7, 6)`: reset statistics, keep sampling.
    pub const RESET: u32 = ioc(0, 6, 0);
    /// `_IOR(0xb7, 7, struct rtlat_record)`: block as the user stage of this
    /// CPU until the next activation; returns its record.
    pub const USER_WAIT: u32 = ioc(R, 7, RECORD_SIZE);
    /// `_IO(0xb7, 8)`: become the streaming reader of the current session
    /// and keep it: this file's read(), STATUS and STATS answer from it
    /// until the file closes, whatever its owner does meanwhile.
    pub const ATTACH: u32 = ioc(0, 8, 0);
    /// `_IOWR(0xb7, 9, struct rtlat_blame)`: a CPU's late activations
    /// explained (a session configured with `RTLAT_CFG_BLAME`).
    pub const BLAME: u32 = ioc(R | W, 9, BLAME_SIZE);
    /// `RTLAT_IOC_BLAME_V1`: the first layout, without the whole names.
    pub const BLAME_V1: u32 = ioc(R | W, 9, BLAME_SIZE_V1);
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::{vec, vec::Vec};

    #[test]
    fn state_and_stop_reason_round_trip_their_abi_integers() {
        for st in [
            State::Idle,
            State::Configured,
            State::Running,
            State::Stopped,
        ] {
            assert_eq!(State::from_raw(st as u32), Some(st));
        }
        for r in [StopReason::None, StopReason::User, StopReason::Threshold] {
            assert_eq!(StopReason::from_raw(r as u32), Some(r));
        }
        assert_eq!(State::from_raw(STATE_STOPPED + 1), None);
        assert_eq!(StopReason::from_raw(STOP_THRESHOLD + 1), None);
        assert_eq!(State::Running as u32, 2);
        assert_eq!(StopReason::Threshold as u32, 2);
    }

    #[test]
    fn stages_round_trip_their_abi_indices() {
        for (i, st) in Stage::ALL.into_iter().enumerate() {
            assert_eq!(st.index(), i);
            assert_eq!(Stage::from_raw(i as u32), Some(st));
            assert_eq!(st.bit(), 1 << i);
        }
        assert_eq!(Stage::from_raw(NR_STAGES as u32), None);
        // The header's RTLAT_STAGE_* values.
        assert_eq!((Stage::Irq as u32, Stage::Response as u32), (0, 3));
        let mut per = [0u8; NR_STAGES];
        per[Stage::User] = 7;
        assert_eq!((per[2], per[Stage::User]), (7, 7));
        assert_eq!(
            Stage::ALL.map(Stage::name),
            ["irq", "thread", "user", "response"]
        );
    }

    #[test]
    fn sizes_are_what_the_header_says() {
        assert_eq!(CONFIG_SIZE_V1, 96);
        assert_eq!(CONFIG_SIZE_V2, 104);
        assert_eq!(CONFIG_SIZE, 120);
        assert_eq!(RECORD_SIZE, 64);
        assert_eq!(STATUS_SIZE_V1, 144);
        assert_eq!(STATUS_SIZE_V2, 176);
        assert_eq!(STATUS_SIZE_V3, 184);
        assert_eq!(STATUS_SIZE, 216);
        assert_eq!(STATS_SIZE, 168);
        assert_eq!(ioc::START, 0xb702);
        assert_eq!(ioc::CONFIG_V1, 0x4060_b701);
        assert_eq!(ioc::CONFIG_V2, 0x4068_b701);
        assert_eq!(ioc::CONFIG, 0x4078_b701);
        assert_eq!(ioc::STATUS_V3, 0x80b8_b704);
        assert_eq!(ioc::STATUS, 0xc0d8_b704);
    }

    #[test]
    fn cpu_bitmaps() {
        let mut set = [0u64; 5];
        for cpu in [0, 63, 64, 257, 319] {
            assert!(set_cpu(&mut set, cpu));
        }
        assert!(!set_cpu(&mut set, 320));
        assert_eq!(cpu_bits(&set).collect::<Vec<_>>(), [0, 63, 64, 257, 319]);
        assert_eq!(
            (cpu_words(0), cpu_words(1), cpu_words(64), cpu_words(65)),
            (0, 1, 1, 2)
        );
    }

    #[test]
    fn cpu_sets() {
        let all = |_| true;
        let cpus = |c: &Config, set: &[u64], nr, online: &dyn Fn(u32) -> bool| {
            let mut v = Vec::new();
            c.session_cpus(set, nr, online, |cpu| v.push(cpu))
                .map(|()| v)
        };
        let mut c = Config::default();
        // Empty: every online CPU, also with CPU 1 offline; past MAX_CPUS
        // too with the current layout.
        assert_eq!(cpus(&c, &c.cpus, 4, &|cpu| cpu != 1), Ok(vec![0, 2, 3]));
        assert_eq!(cpus(&c, &c.cpus, 300, &all).map(|v| v.len()), Ok(300));
        assert_eq!(cpus(&c, &[], 4, &|_| false), Err(UapiError::Invalid));
        // An older layout cannot name them: an error, not 256 of them.
        c.wide = false;
        assert_eq!(cpus(&c, &c.cpus, 300, &all), Err(UapiError::TooManyCpus));
        assert_eq!(
            cpus(&c, &c.cpus, 300, &|cpu| cpu < 256).map(|v| v.len()),
            Ok(256)
        );
        // Given: each CPU must exist and be online.
        c.cpus[0] = 0b101;
        assert_eq!(cpus(&c, &c.cpus, 4, &all), Ok(vec![0, 2]));
        assert_eq!(cpus(&c, &c.cpus, 2, &all), Err(UapiError::Invalid));
        assert_eq!(
            cpus(&c, &c.cpus, 4, &|cpu| cpu != 2),
            Err(UapiError::Invalid)
        );
        assert_eq!(cpus(&c, &c.cpus, 300, &all), Ok(vec![0, 2]));
        // A wide bitmap (as read from cpus_ptr): nothing added unless all
        // of it is good.
        let wide = [1, 0, 0, 0, 1 << 3];
        let mut added = 0;
        assert_eq!(
            c.session_cpus(&wide, 259, all, |_| added += 1),
            Err(UapiError::Invalid)
        );
        assert_eq!(added, 0);
        assert_eq!(cpus(&c, &wide, 260, &all), Ok(vec![0, 259]));
    }

    #[test]
    fn the_default_ring_fits_the_budget_past_256_cpus() {
        let c = Config::default();
        assert_eq!(c.ring_records_for(1), Some(RING_DEFAULT));
        assert_eq!(c.ring_records_for(256), Some(RING_DEFAULT));
        // 257 CPUs of 4096 records would take 64.25 MiB.
        assert_eq!(c.ring_records_for(257), Some(RING_DEFAULT / 2));
        assert_eq!(c.ring_records_for(512), Some(RING_DEFAULT / 2));
        assert_eq!(c.ring_records_for(1024), Some(1024));
        assert_eq!(c.ring_records_for(4096), Some(256));
        assert_eq!(c.ring_records_for(8192), Some(128));
        for n in [1, 255, 256, 257, 1000, 4096, 8192] {
            let r = u64::from(c.ring_records_for(n).unwrap());
            assert!(n as u64 * r * RECORD_SIZE as u64 <= RING_TOTAL_MAX_BYTES);
            assert!(r.is_power_of_two());
        }
        // A size asked for is kept, or refused: never shrunk.
        let asked = Config {
            ring_records: RING_DEFAULT,
            ..Config::default()
        };
        assert_eq!(asked.ring_records_for(256), Some(RING_DEFAULT));
        assert_eq!(asked.ring_records_for(257), None);
        let most = Config {
            ring_records: RING_MAX,
            ..Config::default()
        };
        assert_eq!(most.ring_records_for(1), Some(RING_MAX));
        assert_eq!(most.ring_records_for(2), None);
    }

    #[test]
    fn config_round_trip_and_validation() {
        let mut c = Config::default();
        c.cpus[0] = 0b101;
        c.threshold_ns[Stage::Thread] = 50_000;
        let mut b = [0u8; CONFIG_SIZE];
        c.encode(&mut b);
        assert_eq!(Config::decode(&b), Ok(c));
        assert_eq!(cpu_bits(&c.cpus).collect::<Vec<_>>(), [0, 2]);
        // Irq-only, with an irq threshold: valid.
        let mut irq = Config {
            stages: Stage::Irq.bit(),
            ..Default::default()
        };
        irq.threshold_ns[Stage::Irq] = 10_000;
        irq.encode(&mut b);
        assert_eq!(Config::decode(&b), Ok(irq));
        assert!(!irq.thread_stage() && irq.measures(Stage::Irq) && !irq.measures(Stage::Response));
        c.encode(&mut b);
        assert_eq!(Config::decode(&b[..CONFIG_SIZE - 1]), Err(UapiError::Size));
        let mut bad = b;
        bad[4] = 9;
        assert_eq!(Config::decode(&bad), Err(UapiError::Version));
        for f in [
            |c: &mut Config| c.period_ns = PERIOD_MIN_NS - 1,
            |c: &mut Config| c.period_ns = PERIOD_MAX_NS + 1,
            |c: &mut Config| c.priority = 0,
            |c: &mut Config| c.priority = 100,
            |c: &mut Config| c.stages = Stage::User.bit(),
            |c: &mut Config| c.stages = Stage::Thread.bit(),
            |c: &mut Config| c.stages = Stage::Irq.bit() | Stage::User.bit(),
            |c: &mut Config| {
                c.stages = Stage::Irq.bit();
                c.threshold_ns[Stage::Thread] = 1;
            },
            |c: &mut Config| c.threshold_ns[Stage::User] = 1,
            |c: &mut Config| c.threshold_ns[Stage::Response] = 1,
            |c: &mut Config| c.stages |= 1 << 7,
            |c: &mut Config| c.flags = 1 << 9,
            |c: &mut Config| c.ring_records = 1000,
            // A deadline without the user stage, whose response it bounds.
            |c: &mut Config| c.deadline_ns = 500_000,
            // One longer than the period.
            |c: &mut Config| {
                c.stages |= Stage::User.bit();
                c.deadline_ns = c.period_ns + 1;
            },
        ] {
            let mut x = Config::default();
            f(&mut x);
            x.encode(&mut b);
            assert_eq!(Config::decode(&b), Err(UapiError::Invalid), "{x:?}");
        }
        // A deadline with the user stage; the first layout has none.
        let mut u = Config {
            stages: Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit(),
            deadline_ns: 500_000,
            ..Default::default()
        };
        u.encode(&mut b);
        assert_eq!(Config::decode(&b), Ok(u));
        // The second layout: no cpus_ptr, not wide.
        let mut b2 = [0u8; CONFIG_SIZE_V2];
        b2.copy_from_slice(&b[..CONFIG_SIZE_V2]);
        b2[..4].copy_from_slice(&(CONFIG_SIZE_V2 as u32).to_ne_bytes());
        u.wide = false;
        assert_eq!(Config::decode(&b2), Ok(u));
        let mut b1 = [0u8; CONFIG_SIZE_V1];
        b1.copy_from_slice(&b[..CONFIG_SIZE_V1]);
        b1[..4].copy_from_slice(&(CONFIG_SIZE_V1 as u32).to_ne_bytes());
        u.deadline_ns = 0;
        assert_eq!(Config::decode(&b1), Ok(u));
        // The set at cpus_ptr: a size that is a multiple of 8 up to the
        // bound, with no inline set.
        let p = Config {
            cpus_ptr: 0x1000,
            cpus_size: 40,
            ..Default::default()
        };
        p.encode(&mut b);
        assert_eq!(Config::decode(&b), Ok(p));
        for f in [
            |c: &mut Config| c.cpus_size = 0,
            |c: &mut Config| c.cpus_size = 12,
            |c: &mut Config| c.cpus_size = CPUS_SIZE_MAX + 8,
            |c: &mut Config| c.cpus[0] = 1,
            |c: &mut Config| c.cpus_ptr = 0,
        ] {
            let mut x = p;
            f(&mut x);
            x.encode(&mut b);
            assert_eq!(Config::decode(&b), Err(UapiError::Invalid), "{x:?}");
        }
        // Blame: a threshold only with the flag (the word was reserved, zero,
        // before), and only with a thread stage to explain.
        p.encode(&mut b);
        b[CONFIG_SIZE - 1] = 1;
        assert_eq!(Config::decode(&b), Err(UapiError::Invalid));
        let bl = Config {
            flags: CFG_BLAME,
            blame_us: 100,
            ..Default::default()
        };
        bl.encode(&mut b);
        assert_eq!(Config::decode(&b), Ok(bl));
        let irq_only = Config {
            stages: Stage::Irq.bit(),
            ..bl
        };
        irq_only.encode(&mut b);
        assert_eq!(Config::decode(&b), Err(UapiError::Invalid));
        // A first-layout size field on a buffer of the new size: refused.
        b[..4].copy_from_slice(&(CONFIG_SIZE_V1 as u32).to_ne_bytes());
        assert_eq!(Config::decode(&b), Err(UapiError::Size));
    }

    #[test]
    fn blame_round_trips_with_names_and_refuses_bad_counts() {
        use blame::{
            Analysis,
            Event,
            Kind,
            Source,
            Tally,
            Tracker, //
        };
        assert_eq!(BLAME_ENTRY_SIZE, 96);
        assert_eq!((BLAME_SIZE_V1, BLAME_SIZE), (3312, 12536));
        assert_eq!((ioc::BLAME_V1, ioc::BLAME), (0xccf0_b709, 0xf0f8_b709));
        let mut t = Tracker::<8>::new();
        t.event(0, Event::Switch(Source::task(42, b"noise_fifo/1", 1, 96)));
        t.event(
            500,
            Event::Enter(Source::new(Kind::Timer, 0xffff_0000, b"")),
        );
        t.event(600, Event::Exit(Kind::Timer, 0xffff_0000));
        t.event(900, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        let mut tally = Tally::new();
        let mut a = Analysis::explain(&t, 3, 100, 450, 850);
        a.stack[..2].copy_from_slice(&[0x10, 0x20]);
        a.stack_n = 2;
        tally.add(&a);
        let frame = |pc: u64, f: &mut [u8; BLAME_FRAME_LEN]| {
            f[..3].copy_from_slice(if pc == 0x10 { b"f+1" } else { b"g+2" });
        };
        let name = |s: &Source, name: &mut [u8]| {
            if s.kind == Kind::Timer {
                name.fill(0);
                name[..7].copy_from_slice(b"mod:sym");
            }
        };
        let req = BlameRequest::new;
        let b = Blame::from_tally(req(1, 0), &tally, name, frame);
        assert_eq!((b.rank, b.nr_worst), (0, 1));
        assert_eq!(b.nr_culprits, 3);
        assert_eq!(b.culprits[0].name_bytes(), b"noise_fifo/1");
        assert_eq!((b.culprits[0].policy, b.culprits[0].prio), (1, 96));
        assert_eq!(b.culprits[1].name_bytes(), b"mod:sym");
        // No kernel address: not the hrtimer's, not its callback's.
        assert_eq!((b.culprits[1].id, b.culprits[1].aux), (0, 0));
        let w = b.worst.unwrap();
        assert_eq!((w.nr_irq, w.nr_thread, w.thread_ns), (2, 3, 850));
        assert_eq!(w.thread[0].name_bytes(), b"noise_fifo/1");
        assert_eq!(w.nr_stack, 2);
        assert_eq!(
            (&w.stack[0][..4], &w.stack[1][..4]),
            (&b"f+1\0"[..], &b"g+2\0"[..])
        );
        let mut buf = [0u8; BLAME_SIZE];
        Blame::encode_request(req(5, 3), &mut buf);
        assert_eq!(Blame::decode_request(&buf), Ok(req(5, 3)));
        // A rank past those a tally keeps: refused.
        Blame::encode_request(req(5, blame::WORST as u32), &mut buf);
        assert_eq!(Blame::decode_request(&buf), Err(UapiError::Invalid));
        // Nothing explained: no worst.
        assert_eq!(
            Blame::from_tally(req(0, 0), &Tally::new(), |_, _| {}, |_, _| {}).worst,
            None
        );
        // A second, less late activation: rank 1, with its own parts; rank
        // 2 is none.
        let mut t2 = Tracker::<8>::new();
        t2.event(0, Event::Switch(Source::task(43, b"hog", 0, 0)));
        t2.event(700, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        tally.add(&Analysis::explain(&t2, 4, 0, 100, 700));
        let second = Blame::from_tally(req(1, 1), &tally, name, frame);
        assert_eq!((second.rank, second.nr_worst), (1, 2));
        let w2 = second.worst.unwrap();
        assert_eq!((w2.seq, w2.thread_ns, w2.nr_stack), (4, 700, 0));
        assert_eq!(w2.thread[0].name_bytes(), b"hog");
        assert_eq!(
            second.culprits,
            Blame::from_tally(req(1, 0), &tally, name, frame).culprits
        );
        let none = Blame::from_tally(req(1, 2), &tally, name, frame);
        assert_eq!((none.rank, none.nr_worst, none.worst), (2, 2, None));
        // Counts past the arrays, an unknown kind, a worst of a rank past
        // those kept: refused.
        let mut tally = Tally::new();
        tally.add(&a);
        Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
        assert_eq!(Blame::decode(&buf), Ok(b));
        buf[12..16].copy_from_slice(&17u32.to_ne_bytes());
        assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
        Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
        buf[104..108].copy_from_slice(&9u32.to_ne_bytes());
        assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
        Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
        buf[BLAME_RANK_AT..BLAME_RANK_AT + 4].copy_from_slice(&1u32.to_ne_bytes());
        assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
        // More frames, or more worst ones, than the arrays hold.
        let at = BLAME_NR_WORST_AT - 4;
        for (at, n) in [(at, blame::STACK_DEPTH + 1), (at + 4, blame::WORST + 1)] {
            Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
            buf[at..at + 4].copy_from_slice(&(n as u32).to_ne_bytes());
            assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
        }
        assert_eq!(Blame::decode(&buf[..100]), Err(UapiError::Size));
        // A tool older than nr_worst (0 there in its request) gets 0 there,
        // as it checks; the answer of a module older than nr_worst (0
        // there, one worst kept) reads as one kept.
        let old = BlameRequest {
            tell_nr_worst: false,
            ..req(1, 0)
        };
        Blame::encode_request(old, &mut buf);
        assert_eq!(Blame::decode_request(&buf), Ok(old));
        Blame::encode_tally(old, &tally, name, frame, &mut buf);
        assert_eq!(&buf[BLAME_NR_WORST_AT..BLAME_NR_WORST_AT + 4], &[0; 4]);
        let b = Blame::decode(&buf).unwrap();
        assert_eq!((b.nr_worst, b.worst.is_some()), (1, true));
        // More kept than explained: refused.
        Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
        buf[BLAME_NR_WORST_AT..BLAME_NR_WORST_AT + 4].copy_from_slice(&2u32.to_ne_bytes());
        assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
    }

    /// A Rust hrtimer callback's symbol as kallsyms has it (from a guest's
    /// `rtrs_noise.ko`), longer than an entry's name.
    pub const RUST_CALLBACK: &str = "rtrs_noise:_RNvXs1_NtNtNtCs1EKtwoKEMO2_6kernel4time7hrtimer3arcINtNtNtBb_4sync3arc3ArcNtCs7imXckM5qqB_15rtrs_noise_main8InjectorENtB7_18RawHrTimerCallback3runB1c_";

    #[test]
    fn blame_names_hrtimer_callbacks_whole_and_the_first_layout_cut() {
        use blame::{
            Analysis,
            Event,
            Kind,
            Source,
            Tally,
            Tracker, //
        };
        let timer = |id: u64, aux: u64| Source {
            aux,
            ..Source::new(Kind::Timer, id, b"")
        };
        // Two timers of one Rust callback, one of a C callback, a task.
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(Source::task(42, b"noise", 0, 0)));
        for (at, s) in [
            (100, timer(1, 0xa)),
            (300, timer(2, 0xa)),
            (500, timer(3, 0xc)),
        ] {
            t.event(at, Event::Enter(s));
            t.event(at + 100, Event::Exit(Kind::Timer, s.id));
        }
        t.event(900, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        let mut tally = Tally::new();
        tally.add(&Analysis::explain(&t, 1, 0, 250, 900));
        let calls = core::cell::Cell::new(0);
        let mut name = |s: &Source, buf: &mut [u8]| {
            if s.kind != Kind::Timer {
                return;
            }
            calls.set(calls.get() + 1);
            let n: &[u8] = if s.aux == 0xa {
                RUST_CALLBACK.as_bytes()
            } else {
                b"hrtimer_wakeup"
            };
            buf.fill(0);
            let k = n.len().min(buf.len() - 1);
            buf[..k].copy_from_slice(&n[..k]);
        };
        let mut buf = std::vec![0u8; BLAME_SIZE];
        Blame::encode_tally(
            BlameRequest::new(0, 0),
            &tally,
            &mut name,
            |_, _| {},
            &mut buf,
        );
        let b = Blame::decode(&buf).unwrap();
        // Each callback named once, whole, in the order first seen.
        assert_eq!((calls.get(), b.nr_long_names), (2, 2));
        let w = b.worst.unwrap();
        let all = || {
            b.culprits[..b.nr_culprits as usize]
                .iter()
                .chain(w.irq[..w.nr_irq as usize].iter())
                .chain(w.thread[..w.nr_thread as usize].iter())
        };
        let mut rust = 0;
        for e in all() {
            if e.kind != Kind::Timer as u32 {
                assert_eq!(e.aux, 0);
                assert_eq!(b.name_of(e), e.name_bytes());
                continue;
            }
            // No kernel address; the whole name by `aux`, the entry's cut.
            assert_eq!(e.id, 0);
            let whole = b.name_of(e);
            assert!(whole.starts_with(e.name_bytes()));
            if whole == RUST_CALLBACK.as_bytes() {
                rust += 1;
                assert_eq!(e.aux, 1);
                assert_eq!(e.name_bytes(), &whole[..BLAME_NAME_LEN - 1]);
            } else {
                assert_eq!((e.aux, whole), (2, &b"hrtimer_wakeup"[..]));
            }
        }
        // Both timers of the callback, in the ranking and in the parts.
        assert_eq!(rust, 4);
        // The first layout: the same answer, names cut, no whole ones.
        let mut v1 = std::vec![0u8; BLAME_SIZE_V1];
        Blame::encode_tally(
            BlameRequest::new(0, 0),
            &tally,
            &mut name,
            |_, _| {},
            &mut v1,
        );
        let old = Blame::decode(&v1).unwrap();
        assert_eq!(&v1[..4], &(BLAME_SIZE_V1 as u32).to_ne_bytes());
        assert_eq!(old.nr_long_names, 0);
        for (o, n) in old.culprits.iter().zip(b.culprits.iter()) {
            assert_eq!((o.aux, o.name), (0, n.name));
            assert_eq!(old.name_of(o), o.name_bytes());
        }
        // The request, in either layout; another size is not one.
        for len in [BLAME_SIZE, BLAME_SIZE_V1] {
            let mut r = std::vec![0u8; len];
            Blame::encode_request(BlameRequest::new(3, 1), &mut r);
            assert_eq!(Blame::decode_request(&r), Ok(BlameRequest::new(3, 1)));
        }
        let mut odd = std::vec![0u8; BLAME_SIZE_V1 + 8];
        Blame::encode_request(BlameRequest::new(3, 1), &mut odd);
        assert!(odd.iter().all(|&x| x == 0));
        // A whole name past those given, or on another kind, or more of
        // them than the array holds: refused.
        let aux_at = |k: usize| 104 + k * BLAME_ENTRY_SIZE + 24;
        let task = (0..b.nr_culprits as usize)
            .find(|&k| b.culprits[k].kind == Kind::Task as u32)
            .unwrap();
        let rusty = (0..b.nr_culprits as usize)
            .find(|&k| b.culprits[k].aux == 1)
            .unwrap();
        for (at, v) in [(aux_at(rusty), 3u64), (aux_at(task), 1)] {
            let mut bad = buf.clone();
            bad[at..at + 8].copy_from_slice(&v.to_ne_bytes());
            assert_eq!(Blame::decode(&bad), Err(UapiError::Invalid));
        }
        let mut bad = buf.clone();
        bad[BLAME_SIZE_V1..BLAME_SIZE_V1 + 4]
            .copy_from_slice(&(BLAME_LONG_NAMES as u32 + 1).to_ne_bytes());
        assert_eq!(Blame::decode(&bad), Err(UapiError::Invalid));
    }

    #[test]
    fn whole_names_run_out_after_the_first_callbacks() {
        let mut l = LongNames {
            keys: [0; BLAME_LONG_NAMES],
            n: 0,
        };
        for k in 0..BLAME_LONG_NAMES {
            assert_eq!(l.slot(0x100 + k as u64), Some((k, true)));
        }
        assert_eq!(l.slot(0x100 + 3), Some((3, false)));
        assert_eq!(l.slot(0x999), None);
        assert_eq!(l.n, BLAME_LONG_NAMES);
    }

    #[test]
    fn the_measurement_apart_only_to_who_asks() {
        let mut t = blame::Tracker::<16>::new();
        t.event(
            0,
            blame::Event::Switch(blame::Source::task(42, b"noise", 0, 0)),
        );
        t.event(
            600,
            blame::Event::Switch(blame::Source::task(7, b"rtlat/1", 1, 95)),
        );
        let mut a = blame::Analysis::explain(&t, 1, 100, 100, 900);
        a.measured_by(7);
        let mut tally = blame::Tally::new();
        tally.add(&a);
        let kinds = |req: BlameRequest| {
            let b = Blame::from_tally(req, &tally, |_, _| {}, |_, _| {});
            let w = b.worst.unwrap();
            let all: std::vec::Vec<u32> = b.culprits[..b.nr_culprits as usize]
                .iter()
                .chain(w.thread[..w.nr_thread as usize].iter())
                .filter(|e| e.id == 7)
                .map(|e| e.kind)
                .collect();
            all
        };
        let measure = blame::Kind::Measure as u32;
        let task = blame::Kind::Task as u32;
        assert_eq!(kinds(BlameRequest::new(1, 0)), [measure, measure]);
        // A tool older than the kind (0 in `want`) is told a task, with
        // the task's policy and priority, as before.
        let old = BlameRequest {
            measure_apart: false,
            ..BlameRequest::new(1, 0)
        };
        assert_eq!(kinds(old), [task, task]);
        let mut buf = [0u8; BLAME_SIZE];
        Blame::encode_request(old, &mut buf);
        assert_eq!(Blame::decode_request(&buf), Ok(old));
        Blame::encode_request(BlameRequest::new(1, 0), &mut buf);
        assert_eq!(Blame::decode_request(&buf), Ok(BlameRequest::new(1, 0)));
        assert_eq!(
            &buf[BLAME_WANT_AT..BLAME_WANT_AT + 4],
            &BLAME_WANT_MEASURE.to_ne_bytes()
        );
        // An older tool's answer sent back as its next request (has_worst
        // 1 there) does not ask for the kind; an unknown bit is refused.
        let mut answer = [0u8; BLAME_SIZE];
        Blame::encode_tally(old, &tally, |_, _| {}, |_, _| {}, &mut answer);
        assert_eq!(
            &answer[BLAME_WANT_AT..BLAME_WANT_AT + 4],
            &1u32.to_ne_bytes()
        );
        assert_eq!(Blame::decode_request(&answer), Ok(old));
        answer[BLAME_WANT_AT..BLAME_WANT_AT + 4].copy_from_slice(&4u32.to_ne_bytes());
        assert_eq!(Blame::decode_request(&answer), Err(UapiError::Invalid));
    }

    #[test]
    fn record_status_stats_round_trip() {
        let r = Record {
            cpu: 3,
            seq: 42,
            expected_ns: 1 << 40,
            lat_ns: [1, 2, -1, -1],
            missed: 2,
            flags: REC_NO_USER,
        };
        let mut b = [0u8; RECORD_SIZE];
        r.encode(&mut b);
        assert_eq!(Record::decode(&b), Ok(r));
        let s = Status {
            state: STATE_RUNNING,
            produced: 9,
            delivered: 7,
            dropped: 2,
            unattended: [0b10, 0, 0, 1],
            deadline_misses: 3,
            ..Default::default()
        };
        let mut b = [0u8; STATUS_SIZE];
        s.encode(&mut b);
        assert_eq!(Status::decode(&b), Ok(s));
        // The first layout: everything but `unattended`, its own size field.
        let mut b1 = [0u8; STATUS_SIZE_V1];
        s.encode(&mut b1);
        assert_eq!(b1[..4], (STATUS_SIZE_V1 as u32).to_ne_bytes());
        assert_eq!(b1[8..], b[8..STATUS_SIZE_V1]);
        let old = Status::decode(&b1).unwrap();
        assert_eq!(old.unattended, [0; CPU_WORDS]);
        assert_eq!(old.produced, 9);
        // The second: `unattended` too, no deadline misses.
        let mut b2 = [0u8; STATUS_SIZE_V2];
        s.encode(&mut b2);
        assert_eq!(b2[..4], (STATUS_SIZE_V2 as u32).to_ne_bytes());
        assert_eq!(b2[8..], b[8..STATUS_SIZE_V2]);
        let old = Status::decode(&b2).unwrap();
        assert_eq!((old.unattended, old.deadline_misses), (s.unattended, 0));
        // The third: deadline misses too, not the sets in full.
        let s = Status {
            cpus_ptr: 0x1000,
            unattended_ptr: 0x2000,
            cpu_words: 5,
            nr_cpu_ids: 260,
            ..s
        };
        let mut b = [0u8; STATUS_SIZE];
        s.encode(&mut b);
        assert_eq!(Status::decode(&b), Ok(s));
        let mut b3 = [0u8; STATUS_SIZE_V3];
        s.encode(&mut b3);
        assert_eq!(b3[8..], b[8..STATUS_SIZE_V3]);
        let old = Status::decode(&b3).unwrap();
        assert_eq!((old.deadline_misses, old.cpu_words), (3, 0));
        let st = Stats {
            cpu: 1,
            stage: 2,
            count: 5,
            percentiles: [1, 2, 3, 4, 5, 6, 7],
            ..Default::default()
        };
        let mut b = [0u8; STATS_SIZE];
        st.encode(&mut b);
        assert_eq!(Stats::decode(&b), Ok(st));
        assert_eq!(
            Stats::decode_request(&b).map(|s| (s.cpu, s.stage)),
            Ok((1, 2))
        );
    }
}
