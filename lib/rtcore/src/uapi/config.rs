// SPDX-License-Identifier: GPL-2.0

//! `struct rtlat_config` ([`Config`], `RTLAT_IOC_CONFIG`): what a session
//! measures, its layouts and its limits.

use super::{
    cpu_bits,
    wire::{
        header,
        Wr, //
    },
    Stage,
    UapiError,
    CPUS_SIZE_MAX,
    CPU_WORDS,
    MAX_CPUS,
    NR_STAGES,
    RECORD_SIZE,
    VERSION, //
};

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

/// Byte size of [`Config`].
pub const CONFIG_SIZE: usize = CONFIG_SIZE_V2 + 8 + 4 + 4;
/// Byte size of the second [`Config`] (without `cpus_ptr`), which the
/// kernel still takes from programs built against it.
pub const CONFIG_SIZE_V2: usize = CONFIG_SIZE_V1 + 8;
/// Byte size of the first [`Config`] (without `deadline_ns`), which the
/// kernel still takes from programs built against it.
pub const CONFIG_SIZE_V1: usize = 8 + 8 + 8 * CPU_WORDS + 4 + 4 + 8 * NR_STAGES + 4 + 4;

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
