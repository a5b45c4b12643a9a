// SPDX-License-Identifier: GPL-2.0

//! The stages of one activation ([`Stage`]), indices of the ABI's
//! per-stage arrays.

// (Named by the documentation only.)
#[cfg(doc)]
use super::{
    Config,
    Stats,
    Status, //
};

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
