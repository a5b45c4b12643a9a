// SPDX-License-Identifier: GPL-2.0

//! One CPU's timeline ([`Tracker`]): the [`Event`]s it is fed, the
//! transitions and nesting it keeps, and an interval of it explained.

use super::{
    explained::Count,
    Explained,
    Kind,
    Share,
    Source, //
};

/// Nesting depth kept: task, softirq, hard IRQ, hrtimer callback, and two
/// more for nested interrupts. Deeper entries replace the innermost.
pub const DEPTH: usize = 6;

/// Switched-out tasks whose softirq nesting a CPU's [`Tracker`] keeps.
pub const PARKED: usize = 4;

/// Something that happened on the CPU, at a time given beside it.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// A task was switched in (`sched_switch`'s next).
    Switch(Source),
    /// A handler began (hard IRQ, softirq, hrtimer callback): it runs until
    /// its [`Event::Exit`], nested in what ran.
    Enter(Source),
    /// The handler of this kind and id ended: what it interrupted resumes.
    /// One whose entry was not seen (it began before tracking did) is
    /// ignored.
    Exit(Kind, u64),
}

/// A transition of the timeline: from `at` on, the CPU ran `source`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Transition {
    pub(super) at: i64,
    pub(super) source: Source,
    /// The source resumed (after a nested handler ended), rather than began.
    pub(super) resumed: bool,
}

/// One CPU's timeline of the last `N` transitions, and its nesting.
///
/// # Invariants
///
/// `log[(total - k) % N]` for `1 <= k <= min(total, N)` are the transitions
/// kept, newest first, their times non-decreasing towards the newest;
/// `stack[..depth]` is the nesting, innermost last, and its innermost entry
/// is the newest transition's source when `depth > 0`. Each `parked` entry
/// with `n > 0` is what task `pid` had nested above it (a softirq first)
/// when it was switched out; no two of them are the same task's.
///
/// All zero bytes are [`Tracker::new`] (no transition, nothing nested,
/// [`Kind::Unknown`] being 0): the kernel allocates large timelines zeroed
/// rather than building them on its small stack.
pub struct Tracker<const N: usize> {
    pub(super) log: [Transition; N],
    /// Transitions ever recorded.
    pub(super) total: u64,
    pub(super) stack: [Source; DEPTH],
    pub(super) depth: usize,
    pub(super) parked: [Parked; PARKED],
    /// The `parked` entry to reuse next when none is free.
    pub(super) evict: usize,
}

/// A switched-out task's softirq nesting: `stack[..n]` above task `pid`.
#[derive(Clone, Copy)]
pub(super) struct Parked {
    pub(super) pid: u64,
    pub(super) n: usize,
    pub(super) stack: [Source; DEPTH - 1],
}

impl Parked {
    const EMPTY: Self = Self {
        pid: 0,
        n: 0,
        stack: [Source::UNKNOWN; DEPTH - 1],
    };
}

impl<const N: usize> Default for Tracker<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Tracker<N> {
    /// An empty timeline: everything [`Kind::Unknown`] until the first event.
    pub const fn new() -> Self {
        const {
            assert!(N >= 2, "a timeline needs at least two transitions");
        }
        Self {
            log: [Transition {
                at: 0,
                source: Source::UNKNOWN,
                resumed: false,
            }; N],
            total: 0,
            stack: [Source::UNKNOWN; DEPTH],
            depth: 0,
            parked: [Parked::EMPTY; PARKED],
            evict: 0,
        }
    }

    /// Transitions recorded since the tracker was made (kept or not).
    pub fn transitions(&self) -> u64 {
        self.total
    }

    /// What the CPU runs now, as far as the events tell.
    pub fn current(&self) -> Source {
        match self.depth {
            0 => Source::UNKNOWN,
            d => self.stack[d - 1],
        }
    }

    /// The `k`-th newest transition kept (`k = 1`: the newest).
    pub(super) fn newest(&self, k: usize) -> Option<&Transition> {
        (k >= 1 && k as u64 <= self.total && k <= N)
            .then(|| &self.log[((self.total - k as u64) % N as u64) as usize])
    }

    fn record(&mut self, at: i64, source: Source, resumed: bool) {
        let at = match self.newest(1) {
            // A time that goes back (two clocks read across contexts)
            // joins the newest transition's.
            Some(last) => at.max(last.at),
            None => at,
        };
        if let Some(last) = self.newest(1) {
            if last.source.same(&source) && last.source.name == source.name {
                return;
            }
        }
        let i = (self.total % N as u64) as usize;
        self.log[i] = Transition {
            at,
            source,
            resumed,
        };
        self.total += 1;
    }

    /// Records `event`, which happened at `at` (ns, on the clock the caller
    /// explains with).
    pub fn event(&mut self, at: i64, event: Event) {
        match event {
            Event::Switch(next) => {
                // What `next` had nested when it left, if anything (taken
                // before the leaving task's goes in: it may need the room).
                let back = (next.kind == Kind::Task)
                    .then(|| self.parked.iter().position(|p| p.n > 0 && p.pid == next.id))
                    .flatten()
                    .map(|i| core::mem::replace(&mut self.parked[i], Parked::EMPTY));
                self.park();
                self.stack[0] = next;
                self.depth = 1;
                if let Some(p) = &back {
                    self.stack[1..=p.n].copy_from_slice(&p.stack[..p.n]);
                    self.depth = p.n + 1;
                }
                self.record(at, self.current(), back.is_some());
            }
            Event::Enter(s) => {
                if self.depth == DEPTH {
                    self.depth -= 1;
                }
                self.stack[self.depth] = s;
                self.depth += 1;
                self.record(at, s, false);
            }
            Event::Exit(kind, id) => {
                let Some(i) = self.stack[..self.depth]
                    .iter()
                    .rposition(|s| s.kind == kind && s.id == id)
                else {
                    return;
                };
                self.depth = i;
                let resumed = self.current();
                self.record(at, resumed, true);
            }
        }
    }

    /// Keeps what the running task has nested from a softirq on, but hard
    /// IRQs (which cannot span a switch: an entry left open is dropped),
    /// for its return (PREEMPT_RT).
    fn park(&mut self) {
        if self.depth < 2 || self.stack[0].kind != Kind::Task || self.stack[1].kind != Kind::Softirq
        {
            return;
        }
        let n = self.stack[1..self.depth]
            .iter()
            .position(|s| s.kind == Kind::HardIrq)
            .unwrap_or(self.depth - 1);
        let i = match self.parked.iter().position(|p| p.n == 0) {
            Some(i) => i,
            None => {
                let i = self.evict;
                self.evict = (i + 1) % PARKED;
                i
            }
        };
        let p = &mut self.parked[i];
        p.pid = self.stack[0].id;
        p.n = n;
        p.stack[..n].copy_from_slice(&self.stack[1..=n]);
    }

    /// Splits `[from, to)` into the sources that ran, by exclusive time,
    /// into `shares` (largest first; where it has no room left, the rest is
    /// the returned [`Explained::other_ns`]). The parts add up to `to -
    /// from` (nothing if `to <= from`). The interval should end no later
    /// than the newest event: the newest source is taken to run on until
    /// `to`.
    pub fn explain(&self, from: i64, to: i64, shares: &mut [Share]) -> Explained {
        let mut ex = Explained {
            n: 0,
            other_ns: 0,
            total_ns: (to - from).max(0) as u64,
        };
        if to <= from {
            return ex;
        }
        let kept = (self.total.min(N as u64)) as usize;
        let mut start = from;
        if kept == 0 {
            ex.add(shares, &Source::UNKNOWN, (to - from) as u64, Count::IfNew);
            ex.sort(shares);
            return ex;
        }
        // The newest transition at or before `from` (older ones end before
        // the interval: the walk is as long as the interval's transitions,
        // not the ring), else the oldest kept, then each newer one; each
        // segment ends where the next begins, the newest at `to`.
        let first = (1..=kept)
            .find(|&k| self.newest(k).is_some_and(|t| t.at <= from))
            .unwrap_or(kept);
        let oldest = self.newest(first).map_or(from, |t| t.at);
        if oldest > from {
            let end = oldest.min(to);
            ex.add(shares, &Source::UNKNOWN, (end - from) as u64, Count::IfNew);
            start = end;
        }
        for k in (1..=first).rev() {
            let Some(t) = self.newest(k) else { break };
            let end = match k {
                1 => to,
                _ => self.newest(k - 1).map_or(to, |n| n.at),
            };
            let (a, b) = (t.at.max(start), end.min(to));
            if b <= a {
                continue;
            }
            // An occurrence begins where the segment does, in the interval;
            // one already running when the interval began, or resumed after
            // a nested handler, counts only as the source's first.
            let count = if !t.resumed && t.at >= from {
                Count::Always
            } else {
                Count::IfNew
            };
            ex.add(shares, &t.source, (b - a) as u64, count);
        }
        ex.sort(shares);
        ex
    }
}
