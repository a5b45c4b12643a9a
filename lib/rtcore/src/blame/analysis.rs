// SPDX-License-Identifier: GPL-2.0

//! One late activation explained ([`Analysis`]): its interrupt latency and
//! the rest of its thread latency, each split by source.

use super::{
    Explained,
    Kind,
    Share,
    Tracker, //
};

/// Parts of a late activation's interrupt latency kept by [`Analysis`].
pub const IRQ_PARTS: usize = 4;
/// Parts of the time from its interrupt to its thread kept by [`Analysis`].
pub const THREAD_PARTS: usize = 8;

/// Frames kept of the code a late activation's interrupt interrupted.
pub const STACK_DEPTH: usize = 8;

/// One late activation explained: its interrupt latency (from the expected
/// expiry to the interrupt) and the rest of its thread latency (from the
/// interrupt to the thread), each split into the sources that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The activation's sequence number.
    pub seq: u64,
    /// Its expected expiry (ns, the tracker's clock).
    pub expected_ns: i64,
    /// Its interrupt latency (ns after the expected expiry).
    pub irq_ns: i64,
    /// Its thread latency (ns after the expected expiry).
    pub thread_ns: i64,
    /// What ran before the interrupt, largest first.
    pub irq: [Share; IRQ_PARTS],
    /// How `irq` adds up.
    pub irq_ex: Explained,
    /// What ran from the interrupt to the thread, largest first.
    pub thread: [Share; THREAD_PARTS],
    /// How `thread` adds up.
    pub thread_ex: Explained,
    /// The code its interrupt interrupted, innermost first (code
    /// addresses, set by the caller; `stack_n` of them): where an
    /// interrupts-off section ended, or what a blocking task ran.
    pub stack: [u64; STACK_DEPTH],
    /// Entries of `stack` in use.
    pub stack_n: usize,
}

impl Analysis {
    /// Nothing explained.
    pub const EMPTY: Self = Self {
        seq: 0,
        expected_ns: 0,
        irq_ns: 0,
        thread_ns: 0,
        irq: [Share::EMPTY; IRQ_PARTS],
        irq_ex: Explained::EMPTY,
        thread: [Share::EMPTY; THREAD_PARTS],
        thread_ex: Explained::EMPTY,
        stack: [0; STACK_DEPTH],
        stack_n: 0,
    };

    /// Explains activation `seq`, expected at `expected`, whose interrupt
    /// came `irq_ns` and thread `thread_ns` after it, from the timeline of
    /// its CPU. Bounded work (one pass over the timeline per part).
    pub fn explain<const N: usize>(
        t: &Tracker<N>,
        seq: u64,
        expected: i64,
        irq_ns: i64,
        thread_ns: i64,
    ) -> Self {
        let mut a = Self {
            seq,
            expected_ns: expected,
            irq_ns,
            thread_ns,
            ..Self::EMPTY
        };
        let irq_at = expected + irq_ns.max(0);
        a.irq_ex = t.explain(expected, irq_at, &mut a.irq);
        a.thread_ex = t.explain(irq_at, expected + thread_ns, &mut a.thread);
        a
    }

    /// Names the time of task `pid`, the one that measured the activation,
    /// [`Kind::Measure`]: what the measurement itself took is not ranked
    /// with the causes a user should chase.
    pub fn measured_by(&mut self, pid: u64) {
        let parts = self.irq[..self.irq_ex.n]
            .iter_mut()
            .chain(self.thread[..self.thread_ex.n].iter_mut());
        for sh in parts {
            if sh.source.kind == Kind::Task && sh.source.id == pid {
                sh.source.kind = Kind::Measure;
            }
        }
    }

    /// The measuring task's parts named as its task's again (the inverse
    /// of [`Self::measured_by`]).
    pub(super) fn fold_measure(&mut self) {
        let parts = self.irq[..self.irq_ex.n]
            .iter_mut()
            .chain(self.thread[..self.thread_ex.n].iter_mut());
        for sh in parts {
            if sh.source.kind == Kind::Measure {
                sh.source.kind = Kind::Task;
            }
        }
    }

    /// Both parts' shares, the interrupt's first.
    pub fn shares(&self) -> impl Iterator<Item = &Share> {
        self.irq[..self.irq_ex.n]
            .iter()
            .chain(self.thread[..self.thread_ex.n].iter())
    }
}
