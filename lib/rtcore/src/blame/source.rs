// SPDX-License-Identifier: GPL-2.0

//! What ran: a source of CPU time ([`Source`]) and its [`Kind`].

// (Named by the documentation only.)
#[cfg(doc)]
use super::Analysis;

/// Bytes of a source's name: a task's `comm`, a handler's name (cut).
pub const NAME_LEN: usize = 16;

/// What kind of source ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Kind {
    /// Not known: before the oldest transition kept, or before the first
    /// event.
    Unknown = 0,
    /// A task (`id`: pid; 0 is the idle task).
    Task = 1,
    /// A hard IRQ handler (`id`: the IRQ number).
    HardIrq = 2,
    /// A softirq (`id`: the vector, `HI` = 0 … `RCU` = 9).
    Softirq = 3,
    /// An hrtimer callback (`id`: the timer's address; `aux`: the
    /// callback's, for the name).
    Timer = 4,
    /// The task that measured the activation (`id`: its pid), in its own
    /// latency: its way from being switched in to its clock read, or its
    /// earlier work that kept the interrupt out. The measurement's own
    /// cost, not a cause on the CPU ([`Analysis::measured_by`]).
    Measure = 5,
}

impl Kind {
    /// The kind an ABI value names, if any.
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Unknown),
            1 => Some(Self::Task),
            2 => Some(Self::HardIrq),
            3 => Some(Self::Softirq),
            4 => Some(Self::Timer),
            5 => Some(Self::Measure),
            _ => None,
        }
    }

    /// The kind's name, as reports print it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Task => "task",
            Self::HardIrq => "irq",
            Self::Softirq => "softirq",
            Self::Timer => "timer",
            Self::Measure => "measure",
        }
    }
}

/// Names of the softirq vectors, by number (`include/linux/interrupt.h`).
pub const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// One source of CPU time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// What it is.
    pub kind: Kind,
    /// A task's scheduling policy (`SCHED_OTHER` 0, `SCHED_FIFO` 1, ...);
    /// 0 for the others.
    pub policy: u16,
    /// A task's effective priority, as it ran: its RT priority (1..99) when
    /// it ran as an RT task (its policy, or boosted by priority inheritance),
    /// 100 under `SCHED_DEADLINE`, else its nice value; 0 for the others.
    pub prio: i16,
    /// Its identity within its kind (see [`Kind`]).
    pub id: u64,
    /// What names it where `name` cannot (an hrtimer's callback address);
    /// 0 for the others.
    pub aux: u64,
    /// Its name, NUL-padded.
    pub name: [u8; NAME_LEN],
}

impl Source {
    /// Nothing known.
    pub const UNKNOWN: Self = Self {
        kind: Kind::Unknown,
        policy: 0,
        prio: 0,
        id: 0,
        aux: 0,
        name: [0; NAME_LEN],
    };

    /// A source of `kind` and `id`, named by `name` (cut to [`NAME_LEN`]).
    pub fn new(kind: Kind, id: u64, name: &[u8]) -> Self {
        let mut s = Self {
            kind,
            id,
            ..Self::UNKNOWN
        };
        let n = name.len().min(NAME_LEN);
        s.name[..n].copy_from_slice(&name[..n]);
        s
    }

    /// A task.
    pub fn task(pid: u64, comm: &[u8], policy: u16, prio: i16) -> Self {
        Self {
            policy,
            prio,
            ..Self::new(Kind::Task, pid, comm)
        }
    }

    /// The same source as `other`: kind and identity (a task renamed is
    /// still itself).
    pub fn same(&self, other: &Self) -> bool {
        self.kind == other.kind && self.id == other.id
    }

    /// The name, up to its first NUL.
    pub fn name_bytes(&self) -> &[u8] {
        let n = self.name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        &self.name[..n]
    }
}
