// SPDX-License-Identifier: GPL-2.0

//! Blame: what ran on one CPU, kept as a timeline of exclusive segments, and
//! how much of any recent interval each source took.
//!
//! A CPU's [`Tracker`] is fed that CPU's scheduler and interrupt events in
//! the order they happened ([`Event`]: a task switched in; a hard IRQ
//! handler, softirq or hrtimer callback entered or left). It keeps the last
//! `N` transitions in a ring, each "from time `at` on, the CPU ran
//! `source`", and a small stack of what is nested: leaving a handler resumes
//! what it interrupted. [`Tracker::explain`] splits an interval `[from,
//! to)` into the sources that ran in it, each with its *exclusive* time (a
//! hard IRQ's time is not also its task's), so the parts add up to the
//! interval exactly; the time before the oldest transition the ring still
//! holds is [`Kind::Unknown`].
//!
//! A late timer activation is explained by two intervals: from its expected
//! expiry to its interrupt (what kept the interrupt out: a task with
//! interrupts off, another handler), and from its interrupt to the moment its
//! thread was switched in (what ran first: the task that kept preemption
//! off, a higher-priority task, handlers).
//!
//! No allocation, a bounded amount of work per call: fit for hard-IRQ
//! context, provided the caller serialises the calls of one tracker (the
//! kernel: interrupts off on that CPU).
//!
//! What it cannot see, by construction: an NMI; on x86, the interrupts
//! that are system vectors rather than IRQs (the local APIC timer, IPIs,
//! irq_work), whose time is the interrupted source's; on each CPU, what ran
//! before its first event (a task switch names the task).
//!
//! On PREEMPT_RT a softirq runs in a task and may be preempted: a switch
//! away from a task with a softirq (and what it nests but hard IRQs, which
//! cannot span a switch) keeps that nesting, and the task's return resumes
//! it. Without `PREEMPT_RT_NEEDS_BH_LOCK` several tasks of a CPU may be in
//! a softirq at once: [`PARKED`] nestings are kept, the oldest making room.
//!
//! One stage a file: what ran ([`Source`], `source.rs`); the timeline
//! that records it ([`Tracker`], `tracker.rs`); an interval split by source
//! ([`Explained`], `explained.rs`); one late activation explained
//! ([`Analysis`], `analysis.rs`); a CPU's activations over a run ([`Tally`],
//! `tally.rs`); and what one report copies out of it ([`Excerpt`],
//! `excerpt.rs`). Their items are all here, as `blame::X`.

mod analysis;
mod excerpt;
mod explained;
mod source;
mod tally;
#[cfg(test)]
mod tests;
mod tracker;

// Every public item of the files, at its path of before the split. Globs:
// in a kernel module, which reaches none of them from outside, a re-export
// it does not use is an unused import; a glob is one only if it uses
// nothing of its file.
pub use analysis::*;
pub use excerpt::*;
pub use explained::*;
pub use source::*;
pub use tally::*;
pub use tracker::*;
