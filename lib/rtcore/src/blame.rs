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

use core::cmp::Ordering;

/// Bytes of a source's name: a task's `comm`, a handler's name (cut).
pub const NAME_LEN: usize = 16;

/// Nesting depth kept: task, softirq, hard IRQ, hrtimer callback, and two
/// more for nested interrupts. Deeper entries replace the innermost.
pub const DEPTH: usize = 6;

/// Switched-out tasks whose softirq nesting a CPU's [`Tracker`] keeps.
pub const PARKED: usize = 4;

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
struct Transition {
    at: i64,
    source: Source,
    /// The source resumed (after a nested handler ended), rather than began.
    resumed: bool,
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
    log: [Transition; N],
    /// Transitions ever recorded.
    total: u64,
    stack: [Source; DEPTH],
    depth: usize,
    parked: [Parked; PARKED],
    /// The `parked` entry to reuse next when none is free.
    evict: usize,
}

/// A switched-out task's softirq nesting: `stack[..n]` above task `pid`.
#[derive(Clone, Copy)]
struct Parked {
    pid: u64,
    n: usize,
    stack: [Source; DEPTH - 1],
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
    fn newest(&self, k: usize) -> Option<&Transition> {
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

/// How much of an interval one source took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// The source.
    pub source: Source,
    /// Its exclusive time in the interval.
    pub ns: u64,
    /// The times it began (or was already running) in the interval.
    pub count: u32,
}

impl Share {
    /// An empty share.
    pub const EMPTY: Self = Self {
        source: Source::UNKNOWN,
        ns: 0,
        count: 0,
    };
}

/// Whether a segment is an occurrence of its source.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Count {
    /// It began one.
    Always,
    /// Only if the source was not seen before in the interval (it was
    /// running when the interval began, or resumed).
    IfNew,
}

/// What [`Tracker::explain`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explained {
    /// The shares filled, largest first.
    pub n: usize,
    /// Time of the sources that found no room among the shares.
    pub other_ns: u64,
    /// The interval's length: the shares and `other_ns` add up to it.
    pub total_ns: u64,
}

impl Explained {
    /// Nothing explained: an empty interval.
    pub const EMPTY: Self = Self {
        n: 0,
        other_ns: 0,
        total_ns: 0,
    };

    fn add(&mut self, shares: &mut [Share], s: &Source, ns: u64, count: Count) {
        if let Some(sh) = shares[..self.n].iter_mut().find(|sh| sh.source.same(s)) {
            sh.ns += ns;
            sh.count += u32::from(count == Count::Always);
            // A task renamed (exec) keeps its newest name.
            sh.source = *s;
            return;
        }
        let new = Share {
            source: *s,
            ns,
            count: 1,
        };
        if self.n < shares.len() {
            shares[self.n] = new;
            self.n += 1;
            return;
        }
        // No room: the smallest share goes to `other_ns` if this segment
        // is larger, so that a long culprit seen late is not lost among
        // short early ones. (A source evicted and seen again starts over.)
        match shares.iter_mut().min_by_key(|sh| sh.ns) {
            Some(min) if min.ns < ns => {
                self.other_ns += min.ns;
                *min = new;
            }
            _ => self.other_ns += ns,
        }
    }

    /// Largest first; ties by first seen (a stable insertion sort: `n` is
    /// small).
    fn sort(&self, shares: &mut [Share]) {
        let s = &mut shares[..self.n];
        for i in 1..s.len() {
            let mut j = i;
            while j > 0 && s[j - 1].ns.cmp(&s[j].ns) == Ordering::Less {
                s.swap(j - 1, j);
                j -= 1;
            }
        }
    }
}

/// Parts of a late activation's interrupt latency kept by [`Analysis`].
pub const IRQ_PARTS: usize = 4;
/// Parts of the time from its interrupt to its thread kept by [`Analysis`].
pub const THREAD_PARTS: usize = 8;
/// Sources a CPU's [`Tally`] ranks over a run.
pub const CULPRITS: usize = 16;
/// Frames kept of the code a late activation's interrupt interrupted.
pub const STACK_DEPTH: usize = 8;
/// The worst activations a CPU's [`Tally`] keeps explained.
pub const WORST: usize = 5;

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
    fn fold_measure(&mut self) {
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

/// A source's part in one CPU's late activations over a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Culprit {
    /// The source.
    pub source: Source,
    /// Its time in the late activations, both parts.
    pub ns: u64,
    /// Late activations it had a part in.
    pub count: u64,
    /// Its largest part in one activation.
    pub worst_ns: u64,
}

impl Culprit {
    /// No source.
    pub const EMPTY: Self = Self {
        source: Source::UNKNOWN,
        ns: 0,
        count: 0,
        worst_ns: 0,
    };
}

/// One CPU's late activations over a run: the sources that delayed them,
/// by the time they took, and the latest activation explained.
///
/// # Invariants
///
/// `culprits[..n]` are distinct sources; the time of every activation
/// added is in them, in `other_ns`, or was the evicted part of a source
/// counted in `other_ns`: `sum(culprits[..n].ns) + other_ns == late_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Late activations explained.
    pub explained: u64,
    /// Their thread latency, summed.
    pub late_ns: u64,
    /// Time of the sources that found no room in `culprits`.
    pub other_ns: u64,
    /// Entries of `culprits` in use.
    pub n: usize,
    /// The sources, in no order (see [`Self::ranked`]).
    pub culprits: [Culprit; CULPRITS],
    /// Entries of `worst` in use.
    pub nworst: usize,
    /// The worst activations explained, largest thread latency first (ties:
    /// first seen).
    pub worst: [Analysis; WORST],
}

impl Default for Tally {
    fn default() -> Self {
        Self::new()
    }
}

impl Tally {
    /// Nothing explained yet.
    pub const fn new() -> Self {
        Self {
            explained: 0,
            late_ns: 0,
            other_ns: 0,
            n: 0,
            culprits: [Culprit::EMPTY; CULPRITS],
            nworst: 0,
            worst: [Analysis::EMPTY; WORST],
        }
    }

    /// Empties it in place, as [`Self::new`] makes it: a tally is too
    /// large to build anew on a kernel stack.
    pub fn clear(&mut self) {
        self.explained = 0;
        self.late_ns = 0;
        self.other_ns = 0;
        self.n = 0;
        for c in self.culprits.iter_mut() {
            *c = Culprit::EMPTY;
        }
        self.nworst = 0;
        for w in self.worst.iter_mut() {
            *w = Analysis::EMPTY;
        }
    }

    /// Copies into `out` what a report of its worst activation of rank
    /// `rank` needs: all but the other worst ones.
    pub fn excerpt(&self, rank: usize, out: &mut Excerpt) {
        out.explained = self.explained;
        out.late_ns = self.late_ns;
        out.other_ns = self.other_ns;
        out.n = self.n;
        out.culprits = self.culprits;
        out.nworst = self.nworst;
        out.has_worst = rank < self.nworst;
        // (Stored in place, from the tally or a constant: no copy of an
        // analysis on the stack.)
        match self.worst().get(rank) {
            Some(w) => out.worst = *w,
            None => out.worst = Analysis::EMPTY,
        }
    }

    /// Adds one explained activation. Where `culprits` has no room, the
    /// source with the least time goes to `other_ns` if this one took more.
    pub fn add(&mut self, a: &Analysis) {
        self.explained += 1;
        self.late_ns += a.irq_ex.total_ns + a.thread_ex.total_ns;
        self.other_ns += a.irq_ex.other_ns + a.thread_ex.other_ns;
        // One activation's parts, by source (a task may delay both the
        // interrupt and the thread).
        let mut mine = [Share::EMPTY; IRQ_PARTS + THREAD_PARTS];
        let mut k = 0;
        for sh in a.shares() {
            match mine[..k].iter_mut().find(|m| m.source.same(&sh.source)) {
                Some(m) => m.ns += sh.ns,
                None => {
                    mine[k] = *sh;
                    k += 1;
                }
            }
        }
        for m in &mine[..k] {
            self.credit(&m.source, m.ns);
        }
        self.keep_if_worst(a);
    }

    /// Keeps `a` among the worst if it is one of them.
    fn keep_if_worst(&mut self, a: &Analysis) {
        let Some(at) =
            (0..WORST).find(|&i| i == self.nworst || a.thread_ns > self.worst[i].thread_ns)
        else {
            return;
        };
        self.nworst = (self.nworst + 1).min(WORST);
        self.worst.copy_within(at..self.nworst - 1, at + 1);
        self.worst[at] = *a;
    }

    /// The worst activations explained, largest thread latency first.
    pub fn worst(&self) -> &[Analysis] {
        &self.worst[..self.nworst]
    }

    fn credit(&mut self, s: &Source, ns: u64) {
        if let Some(c) = self.culprits[..self.n]
            .iter_mut()
            .find(|c| c.source.same(s))
        {
            c.ns += ns;
            c.count += 1;
            c.worst_ns = c.worst_ns.max(ns);
            c.source = *s;
            return;
        }
        let new = Culprit {
            source: *s,
            ns,
            count: 1,
            worst_ns: ns,
        };
        if self.n < CULPRITS {
            self.culprits[self.n] = new;
            self.n += 1;
            return;
        }
        match self.culprits.iter_mut().min_by_key(|c| c.ns) {
            Some(min) if min.ns < ns => {
                self.other_ns += min.ns;
                *min = new;
            }
            _ => self.other_ns += ns,
        }
    }

    /// The indices of `culprits[..n]`, most time first (ties: first
    /// seen).
    pub fn ranked_order(&self) -> [u8; CULPRITS] {
        ranked_order(&self.culprits, self.n)
    }

    /// The sources, most time first.
    pub fn ranked(&self) -> [Culprit; CULPRITS] {
        let mut r = [Culprit::EMPTY; CULPRITS];
        for (x, &i) in r.iter_mut().zip(self.ranked_order()[..self.n].iter()) {
            *x = self.culprits[usize::from(i)];
        }
        r
    }
}

/// What one report needs of a [`Tally`] ([`Tally::excerpt`]): its totals,
/// its sources, and one of its worst activations. Under half a tally
/// (1.9 of 5.1 KiB): the kernel copies it out under the tally's lock, and
/// encodes it after.
///
/// # Invariants
///
/// `culprits[..n]` are distinct sources, as a [`Tally`]'s; `worst` is the
/// activation asked for if `has_worst`, else [`Analysis::EMPTY`].
///
/// All zero bytes are an excerpt of an empty tally ([`Kind::Unknown`]
/// being 0): the kernel allocates one zeroed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Excerpt {
    /// As [`Tally::explained`].
    pub explained: u64,
    /// As [`Tally::late_ns`].
    pub late_ns: u64,
    /// As [`Tally::other_ns`].
    pub other_ns: u64,
    /// As [`Tally::n`].
    pub n: usize,
    /// As [`Tally::culprits`].
    pub culprits: [Culprit; CULPRITS],
    /// As [`Tally::nworst`].
    pub nworst: usize,
    /// Whether the tally had a worst activation of the rank asked for.
    pub has_worst: bool,
    /// That activation.
    pub worst: Analysis,
}

impl Excerpt {
    /// The excerpt of an empty tally.
    pub const EMPTY: Self = Self {
        explained: 0,
        late_ns: 0,
        other_ns: 0,
        n: 0,
        culprits: [Culprit::EMPTY; CULPRITS],
        nworst: 0,
        has_worst: false,
        worst: Analysis::EMPTY,
    };

    /// The worst activation asked for, if the tally had it.
    pub fn worst(&self) -> Option<&Analysis> {
        self.has_worst.then_some(&self.worst)
    }

    /// Folds the measuring task's time ([`Kind::Measure`]) back into its
    /// task's, for a reader that does not know the kind: as the tally
    /// would be had it never been told apart. A task is the measurement or
    /// not in a whole activation, so counts add up; the merged source
    /// keeps the place first seen.
    pub fn fold_measure(&mut self) {
        self.worst.fold_measure();
        let mut i = 0;
        while i < self.n {
            if self.culprits[i].source.kind != Kind::Measure {
                i += 1;
                continue;
            }
            self.culprits[i].source.kind = Kind::Task;
            let me = self.culprits[i].source;
            let Some(j) = (0..self.n).find(|&j| j != i && self.culprits[j].source.same(&me)) else {
                i += 1;
                continue;
            };
            let (keep, gone) = (i.min(j), i.max(j));
            let g = self.culprits[gone];
            let k = &mut self.culprits[keep];
            k.ns += g.ns;
            k.count += g.count;
            k.worst_ns = k.worst_ns.max(g.worst_ns);
            self.culprits.copy_within(gone + 1..self.n, gone);
            self.n -= 1;
            self.culprits[self.n] = Culprit::EMPTY;
            // (`i` is looked at again: it may now hold the next one.)
        }
    }

    /// The indices of `culprits[..n]`, most time first (ties: first
    /// seen).
    pub fn ranked_order(&self) -> [u8; CULPRITS] {
        ranked_order(&self.culprits, self.n)
    }
}

/// The indices of `culprits[..n]`, most time first (ties: first seen).
fn ranked_order(culprits: &[Culprit; CULPRITS], n: usize) -> [u8; CULPRITS] {
    const {
        assert!(CULPRITS <= 256, "indices are bytes");
    }
    let mut r = [0u8; CULPRITS];
    for (i, x) in r.iter_mut().enumerate() {
        *x = i as u8;
    }
    let ns = |i: u8| culprits[usize::from(i)].ns;
    let s = &mut r[..n];
    for i in 1..s.len() {
        let mut j = i;
        while j > 0 && ns(s[j - 1]) < ns(s[j]) {
            s.swap(j - 1, j);
            j -= 1;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    fn task(pid: u64, comm: &str) -> Source {
        Source::task(pid, comm.as_bytes(), 0, 0)
    }

    fn fifo(pid: u64, comm: &str, prio: i16) -> Source {
        Source::task(pid, comm.as_bytes(), 1, prio)
    }

    fn irq(n: u64, name: &str) -> Source {
        Source::new(Kind::HardIrq, n, name.as_bytes())
    }

    fn timer(f: u64) -> Source {
        Source::new(Kind::Timer, f, b"")
    }

    fn softirq(v: u64) -> Source {
        Source::new(Kind::Softirq, v, SOFTIRQ_NAMES[v as usize].as_bytes())
    }

    /// `explain`, checked for the add-up property, as (name or id, ns,
    /// count), then other_ns.
    fn explain<const N: usize>(
        t: &Tracker<N>,
        from: i64,
        to: i64,
    ) -> (std::vec::Vec<(std::string::String, u64, u32)>, u64) {
        let mut sh = [Share::EMPTY; 8];
        let ex = t.explain(from, to, &mut sh);
        let sum: u64 = sh[..ex.n].iter().map(|s| s.ns).sum::<u64>() + ex.other_ns;
        assert_eq!(sum, ex.total_ns, "parts add up");
        assert_eq!(ex.total_ns, (to - from).max(0) as u64);
        for w in sh[..ex.n].windows(2) {
            assert!(w[0].ns >= w[1].ns, "largest first");
        }
        let v = sh[..ex.n]
            .iter()
            .map(|s| {
                let name = std::string::String::from_utf8_lossy(s.source.name_bytes()).into_owned();
                let label = if name.is_empty() {
                    std::format!("{}:{}", s.source.kind.name(), s.source.id)
                } else {
                    name
                };
                (label, s.ns, s.count)
            })
            .collect();
        (v, ex.other_ns)
    }

    fn l(s: &str, ns: u64, c: u32) -> (std::string::String, u64, u32) {
        (s.into(), ns, c)
    }

    #[test]
    fn preemption_off_blames_the_running_task() {
        // The noise thread runs with preemption off from 0; the timer
        // expected at 1000 interrupts at 1010 (its callback 1010..1012) and
        // wakes the thread, switched in only at 21000.
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(task(42, "noise")));
        t.event(1010, Event::Enter(timer(0xabc)));
        t.event(1012, Event::Exit(Kind::Timer, 0xabc));
        t.event(21000, Event::Switch(fifo(7, "rtlat/1", 95)));
        // The IRQ latency: the noise task ran.
        assert_eq!(explain(&t, 1000, 1010).0, [l("noise", 10, 1)]);
        // The thread latency after the IRQ: the noise task, then the
        // timer's own callback; the noise task counted once, its resume
        // after the callback is no new occurrence.
        assert_eq!(
            explain(&t, 1010, 21000).0,
            [l("noise", 19988, 1), l("timer:2748", 2, 1)]
        );
    }

    #[test]
    fn interrupts_off_blames_the_task_before_the_interrupt() {
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(task(43, "irqoff")));
        // Expected at 1000, the interrupt at 20000 once interrupts are on.
        t.event(20000, Event::Enter(irq(11, "arch_timer")));
        t.event(20005, Event::Exit(Kind::HardIrq, 11));
        t.event(20100, Event::Switch(fifo(7, "rtlat/1", 95)));
        assert_eq!(explain(&t, 1000, 20000).0, [l("irqoff", 19000, 1)]);
        assert_eq!(
            explain(&t, 20000, 20100).0,
            [l("irqoff", 95, 1), l("arch_timer", 5, 1)]
        );
    }

    #[test]
    fn nested_handlers_take_exclusive_time() {
        let mut t = Tracker::<32>::new();
        t.event(0, Event::Switch(task(1, "a")));
        t.event(100, Event::Enter(softirq(1)));
        t.event(150, Event::Enter(irq(5, "virtio0")));
        t.event(160, Event::Enter(timer(9)));
        t.event(170, Event::Exit(Kind::Timer, 9));
        t.event(180, Event::Exit(Kind::HardIrq, 5));
        t.event(300, Event::Exit(Kind::Softirq, 1));
        t.event(400, Event::Switch(task(2, "b")));
        let (v, other) = explain(&t, 0, 500);
        assert_eq!(
            v,
            [
                l("a", 200, 1),
                l("TIMER", 170, 1),
                l("b", 100, 1),
                l("virtio0", 20, 1),
                l("timer:9", 10, 1)
            ]
        );
        assert_eq!(other, 0);
        // Entered twice: two occurrences.
        t.event(600, Event::Enter(irq(5, "virtio0")));
        t.event(610, Event::Exit(Kind::HardIrq, 5));
        let (v, _) = explain(&t, 140, 700);
        assert!(v.contains(&l("virtio0", 30, 2)), "{v:?}");
    }

    #[test]
    fn an_exit_unmatched_is_ignored_and_a_switch_parks_a_softirq() {
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(task(1, "a")));
        t.event(10, Event::Exit(Kind::HardIrq, 3));
        assert_eq!(t.current(), task(1, "a"));
        // A softirq preempted by a switch (PREEMPT_RT): the nesting goes
        // with its task and comes back with it, the rest of its time the
        // softirq's, begun once.
        t.event(20, Event::Enter(softirq(3)));
        t.event(30, Event::Switch(task(2, "b")));
        assert_eq!(t.current(), task(2, "b"));
        t.event(40, Event::Exit(Kind::Softirq, 3));
        assert_eq!(t.current(), task(2, "b"));
        t.event(45, Event::Switch(task(1, "a")));
        assert_eq!(t.current(), softirq(3));
        t.event(50, Event::Exit(Kind::Softirq, 3));
        assert_eq!(t.current(), task(1, "a"));
        assert_eq!(
            explain(&t, 0, 55).0,
            [l("a", 25, 1), l("NET_RX", 15, 1), l("b", 15, 1)]
        );
        // Another task's return finds nothing kept for it.
        t.event(52, Event::Switch(task(2, "b")));
        assert_eq!(t.current(), task(2, "b"));
        // Exiting an outer handler drops the inner ones left open.
        t.event(60, Event::Enter(irq(1, "x")));
        t.event(65, Event::Enter(irq(2, "y")));
        t.event(70, Event::Exit(Kind::HardIrq, 1));
        assert_eq!(t.current(), task(2, "b"));
    }

    #[test]
    fn each_task_gets_its_own_softirq_back_and_no_hard_irq() {
        let mut t = Tracker::<64>::new();
        // a in NET_RX is preempted by ktimers, which enters TIMER and
        // blocks (on a lock a holds: a runs again, in NET_RX); then
        // ktimers resumes in TIMER.
        t.event(0, Event::Switch(task(1, "a")));
        t.event(10, Event::Enter(softirq(3)));
        t.event(20, Event::Switch(fifo(5, "ktimers/1", 1)));
        t.event(30, Event::Enter(softirq(1)));
        t.event(40, Event::Switch(task(1, "a")));
        assert_eq!(t.current(), softirq(3));
        t.event(50, Event::Exit(Kind::Softirq, 3));
        t.event(60, Event::Switch(fifo(5, "ktimers/1", 1)));
        assert_eq!(t.current(), softirq(1));
        t.event(70, Event::Exit(Kind::Softirq, 1));
        assert_eq!(t.current(), fifo(5, "ktimers/1", 1));
        // A hard IRQ left open (its exit unseen) is not kept: only the
        // softirq comes back.
        t.event(80, Event::Switch(task(2, "b")));
        t.event(90, Event::Enter(softirq(6)));
        t.event(95, Event::Enter(irq(4, "eth0")));
        t.event(100, Event::Switch(task(1, "a")));
        t.event(110, Event::Switch(task(2, "b")));
        assert_eq!(t.current(), softirq(6));
        // Nothing but a hard IRQ nested: nothing kept.
        t.event(120, Event::Exit(Kind::Softirq, 6));
        t.event(125, Event::Enter(irq(4, "eth0")));
        t.event(130, Event::Switch(task(1, "a")));
        t.event(140, Event::Switch(task(2, "b")));
        assert_eq!(t.current(), task(2, "b"));
        // More tasks in a softirq than kept: the oldest is forgotten.
        for pid in 10..(10 + PARKED as u64 + 2) {
            t.event(200 + pid as i64 * 10, Event::Switch(task(pid, "p")));
            t.event(205 + pid as i64 * 10, Event::Enter(softirq(pid % 10)));
        }
        t.event(400, Event::Switch(task(10, "p")));
        assert_eq!(t.current(), task(10, "p"));
        // (Parking 15's made room again: 11's went, the oldest.)
        t.event(410, Event::Switch(task(12, "p")));
        assert_eq!(t.current(), softirq(2));
    }

    #[test]
    fn too_deep_nesting_replaces_the_innermost() {
        let mut t = Tracker::<64>::new();
        t.event(0, Event::Switch(task(1, "a")));
        for i in 0..10 {
            t.event(10 + i, Event::Enter(irq(i as u64, "n")));
        }
        assert_eq!(t.current().id, 9);
        t.event(30, Event::Exit(Kind::HardIrq, 9));
        // The stack kept a, 0..3 and 9: 9 gone, 3 resumes.
        assert_eq!(t.current().id, 3);
    }

    #[test]
    fn time_older_than_the_ring_is_unknown() {
        let mut t = Tracker::<4>::new();
        for i in 0..10 {
            t.event(i * 100, Event::Switch(task(i as u64, "t")));
        }
        // Kept: 600, 700, 800, 900.
        let mut sh = [Share::EMPTY; 8];
        let ex = t.explain(0, 1000, &mut sh);
        assert_eq!(sh[0].source.kind, Kind::Unknown);
        assert_eq!(sh[0].ns, 600);
        assert_eq!(ex.total_ns, 1000);
        assert_eq!(t.transitions(), 10);
        // Before any event: all unknown.
        let e = Tracker::<4>::new();
        let ex = e.explain(5, 10, &mut sh);
        assert_eq!((ex.n, sh[0].source.kind, sh[0].ns), (1, Kind::Unknown, 5));
        // An empty or inverted interval: nothing.
        assert_eq!(t.explain(10, 10, &mut sh).n, 0);
        assert_eq!(t.explain(10, 5, &mut sh).total_ns, 0);
    }

    #[test]
    fn shares_beyond_room_are_other_but_the_largest_stay() {
        let mut t = Tracker::<64>::new();
        for i in 0..20 {
            t.event(i * 10, Event::Switch(task(i as u64, "t")));
        }
        // The culprit comes last: 500 of 700.
        t.event(200, Event::Switch(task(99, "culprit")));
        let mut sh = [Share::EMPTY; 3];
        let ex = t.explain(0, 700, &mut sh);
        assert_eq!(ex.n, 3);
        assert_eq!((sh[0].source.id, sh[0].ns), (99, 500));
        assert_eq!(ex.other_ns, 180);
        assert_eq!(sh.iter().map(|s| s.ns).sum::<u64>() + ex.other_ns, 700);
    }

    #[test]
    fn a_timer_is_its_timer_whatever_its_callback_became() {
        // The exit names the timer only (its callback may have changed it,
        // or freed it): the entry's callback address is kept for the name.
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(task(1, "a")));
        let mut tm = Source::new(Kind::Timer, 0xffff_1000, b"");
        tm.aux = 0xffff_0042;
        t.event(10, Event::Enter(tm));
        t.event(30, Event::Exit(Kind::Timer, 0xffff_1000));
        assert_eq!(t.current().id, 1);
        let mut sh = [Share::EMPTY; 4];
        let ex = t.explain(0, 40, &mut sh);
        assert_eq!(ex.n, 2);
        let timer = sh[..ex.n].iter().find(|s| s.source.kind == Kind::Timer);
        assert_eq!(timer.map(|s| (s.ns, s.source.aux)), Some((20, 0xffff_0042)));
    }

    #[test]
    fn a_clock_going_back_joins_the_newest_transition() {
        let mut t = Tracker::<8>::new();
        t.event(100, Event::Switch(task(1, "a")));
        t.event(90, Event::Switch(task(2, "b")));
        assert_eq!(explain(&t, 100, 110).0, [l("b", 10, 1)]);
        // The same source again is no transition.
        t.event(120, Event::Switch(task(2, "b")));
        assert_eq!(t.transitions(), 2);
    }

    /// Random event streams: the parts always add up, no share is empty of
    /// both time and count, and a source's time never exceeds the interval.
    #[test]
    fn random_streams_add_up() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let mut t = Tracker::<32>::new();
            let mut now = 0i64;
            for _ in 0..100 {
                now += (next() % 50) as i64;
                let id = next() % 4;
                let ev = match next() % 5 {
                    0 => Event::Switch(task(id, "t")),
                    1 => Event::Enter(irq(id, "i")),
                    2 => Event::Exit(Kind::HardIrq, id),
                    3 => Event::Enter(softirq(id)),
                    _ => Event::Exit(Kind::Softirq, id),
                };
                t.event(now, ev);
            }
            for _ in 0..10 {
                let a = (next() % (now as u64 + 1)) as i64;
                let b = a + (next() % 500) as i64;
                let (v, _) = explain(&t, a, b);
                for (_, ns, c) in v {
                    assert!(ns <= (b - a) as u64);
                    assert!(ns > 0 || c > 0);
                }
                // Against the timeline read nanosecond by nanosecond: at
                // each, the newest transition kept at or before it (none:
                // unknown).
                let mut sh = [Share::EMPTY; 8];
                let ex = t.explain(a, b, &mut sh);
                if ex.other_ns > 0 {
                    continue;
                }
                let kept = t.total.min(32) as usize;
                let mut want: std::vec::Vec<(Source, u64)> = std::vec::Vec::new();
                for ns in a..b {
                    let s = (1..=kept)
                        .filter_map(|k| t.newest(k))
                        .find(|tr| tr.at <= ns)
                        .map_or(Source::UNKNOWN, |tr| tr.source);
                    match want.iter_mut().find(|(w, _)| w.same(&s)) {
                        Some(w) => w.1 += 1,
                        None => want.push((s, 1)),
                    }
                }
                for (s, ns) in &want {
                    let got = sh[..ex.n].iter().find(|x| x.source.same(s)).map(|x| x.ns);
                    assert_eq!(got, Some(*ns), "{s:?} in [{a}, {b})");
                }
                assert_eq!(want.len(), ex.n);
            }
        }
    }

    #[test]
    fn an_analysis_splits_the_thread_latency_at_the_interrupt() {
        // Interrupts off in "irqoff" from 0 to 20000: the timer expected at
        // 1000 comes at 20000; then "hog" (FIFO 99) runs before the thread.
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(task(43, "irqoff")));
        t.event(20000, Event::Enter(timer(0xabc)));
        t.event(20002, Event::Exit(Kind::Timer, 0xabc));
        t.event(20010, Event::Switch(fifo(9, "hog", 99)));
        t.event(30010, Event::Switch(fifo(7, "rtlat/1", 95)));
        let a = Analysis::explain(&t, 5, 1000, 19000, 29020);
        assert_eq!(a.irq_ex.total_ns + a.thread_ex.total_ns, 29020);
        assert_eq!(a.irq[..a.irq_ex.n].len(), 1);
        assert_eq!(a.irq[0].source, task(43, "irqoff"));
        assert_eq!(a.irq[0].ns, 19000);
        assert_eq!(a.thread[0].source, fifo(9, "hog", 99));
        assert_eq!(a.thread[0].ns, 10000);
        let mut tally = Tally::new();
        tally.add(&a);
        let r = tally.ranked();
        assert_eq!(tally.n, 4);
        assert_eq!(r[0].source.name_bytes(), b"irqoff");
        // "irqoff" ran before the interrupt and after it (8 ns): one part.
        assert_eq!((r[0].ns, r[0].count, r[0].worst_ns), (19008, 1, 19008));
        assert_eq!(r[1].source.name_bytes(), b"hog");
        assert_eq!(tally.worst(), &[a]);
    }

    #[test]
    fn the_measuring_task_is_the_measurement() {
        let mut t = Tracker::<64>::new();
        t.event(0, Event::Switch(fifo(7, "rtlat/1", 95)));
        // Its earlier work keeps the interrupt out, then a task runs
        // first, then it is switched in and reads its clock.
        t.event(1_000, Event::Switch(task(42, "noise/1")));
        t.event(1_500, Event::Enter(irq(25, "virtio0")));
        t.event(1_600, Event::Exit(Kind::HardIrq, 25));
        t.event(5_000, Event::Switch(fifo(7, "rtlat/1", 95)));
        let mut a = Analysis::explain(&t, 1, 800, 800, 5_300);
        a.measured_by(7);
        let by = |k: Kind| -> u64 {
            a.shares()
                .filter(|s| s.source.kind == k)
                .map(|s| s.ns)
                .sum()
        };
        // Its own: 800..1000 before the interrupt, 5000..6100 after it;
        // the task's: 1000..1500 and 1600..5000.
        assert_eq!(by(Kind::Measure), 200 + 1_100);
        assert_eq!(by(Kind::Task), 500 + 3_400);
        assert_eq!(by(Kind::HardIrq), 100);
        assert!(a
            .shares()
            .all(|s| s.source.kind != Kind::Measure || s.source.id == 7));
        // Another task's pid names nothing.
        let mut b = Analysis::explain(&t, 1, 800, 800, 5_300);
        b.measured_by(8);
        assert_eq!(
            b.shares()
                .filter(|s| s.source.kind == Kind::Measure)
                .count(),
            0
        );
        let mut tally = Tally::new();
        tally.add(&a);
        assert_eq!(tally.ranked()[0].source.kind, Kind::Task);
        assert!(tally.culprits[..tally.n]
            .iter()
            .any(|c| c.source.kind == Kind::Measure && c.ns == 1_300));
    }

    #[test]
    fn folding_the_measurement_gives_the_task_back_whole() {
        // Task 7 measures the first activation; in the second it only
        // runs (another task measured it).
        let mut t = Tracker::<64>::new();
        t.event(0, Event::Switch(task(42, "noise/1")));
        t.event(600, Event::Switch(fifo(7, "rtlat/1", 95)));
        let mut a = Analysis::explain(&t, 1, 100, 100, 900);
        a.measured_by(7);
        let mut u = Tracker::<64>::new();
        u.event(0, Event::Switch(fifo(7, "rtlat/1", 95)));
        u.event(700, Event::Switch(task(9, "other")));
        let mut b = Analysis::explain(&u, 2, 100, 100, 900);
        b.measured_by(9);
        let mut apart = Tally::new();
        apart.add(&a);
        apart.add(&b);
        let mut never = Tally::new();
        never.add(&Analysis::explain(&t, 1, 100, 100, 900));
        never.add(&Analysis::explain(&u, 2, 100, 100, 900));
        assert_eq!(apart.n, 4);
        for rank in 0..2 {
            let (mut folded, mut want) = (Excerpt::EMPTY, Excerpt::EMPTY);
            apart.excerpt(rank, &mut folded);
            folded.fold_measure();
            never.excerpt(rank, &mut want);
            assert_eq!(folded, want);
            assert!(folded.has_worst);
        }
        let mut folded = Excerpt::EMPTY;
        apart.excerpt(0, &mut folded);
        folded.fold_measure();
        // (It was two rows of pid 7, of 400 and 600 ns, the first ranked
        // after the noise task.)
        let top = folded.culprits[usize::from(folded.ranked_order()[0])];
        assert_eq!((top.source.id, top.ns, top.count), (7, 1000, 2));
    }

    /// A tally of `k` activations, each later one longer, from `k`
    /// sources.
    fn busy_tally(k: u64) -> Tally {
        let mut tally = Tally::new();
        for i in 0..k {
            let mut t = Tracker::<4>::new();
            t.event(0, Event::Switch(task(100 + i, "noise")));
            let len = 1000 + i as i64 * 10;
            t.event(len, Event::Switch(fifo(7, "rtlat/1", 95)));
            let mut a = Analysis::explain(&t, i, 0, 0, len);
            a.stack = [0xffff_0000 + i; STACK_DEPTH];
            a.stack_n = 3;
            tally.add(&a);
        }
        tally
    }

    #[test]
    fn a_cleared_tally_is_new() {
        let mut tally = busy_tally(CULPRITS as u64 * 2);
        assert_eq!((tally.n, tally.nworst), (CULPRITS, WORST));
        assert_ne!(tally, Tally::new());
        tally.clear();
        assert_eq!(tally, Tally::new());
        // And counts afresh.
        tally.add(&busy_tally(1).worst[0]);
        assert_eq!(tally, busy_tally(1));
    }

    #[test]
    fn an_excerpt_is_the_tally_but_the_other_worst() {
        let tally = busy_tally(CULPRITS as u64 + 3);
        let mut e = Excerpt::EMPTY;
        for rank in 0..WORST + 1 {
            tally.excerpt(rank, &mut e);
            assert_eq!(
                (e.explained, e.late_ns, e.other_ns, e.n, e.nworst),
                (
                    tally.explained,
                    tally.late_ns,
                    tally.other_ns,
                    tally.n,
                    tally.nworst
                )
            );
            assert_eq!(e.culprits, tally.culprits);
            assert_eq!(e.ranked_order(), tally.ranked_order());
            assert_eq!(e.worst(), tally.worst().get(rank));
        }
        // Past the worst kept: none, and nothing left of the one before.
        assert_eq!(e.worst, Analysis::EMPTY);
        let mut few = Excerpt::EMPTY;
        Tally::new().excerpt(0, &mut few);
        assert_eq!(few, Excerpt::EMPTY);
        assert!(core::mem::size_of::<Excerpt>() * 2 < core::mem::size_of::<Tally>());
    }

    #[test]
    fn a_tally_adds_up_and_keeps_the_largest_sources() {
        let mut tally = Tally::new();
        let mut worst = 0;
        // Many one-source activations: more sources than the tally has
        // room for, the later ones larger.
        for i in 0..(CULPRITS as u64 * 3) {
            let mut t = Tracker::<4>::new();
            t.event(0, Event::Switch(task(100 + i, "noise")));
            let len = 1000 + i as i64 * 10;
            t.event(len, Event::Switch(fifo(7, "rtlat/1", 95)));
            let a = Analysis::explain(&t, i, 0, 0, len);
            worst = worst.max(len);
            tally.add(&a);
            // The same source before and after the interrupt of one more
            // (short) activation: one count.
            if i == 0 {
                let b = Analysis::explain(&t, i, 0, 10, 20);
                tally.add(&b);
            }
        }
        let r = tally.ranked();
        let sum: u64 = r[..tally.n].iter().map(|c| c.ns).sum();
        assert_eq!(sum + tally.other_ns, tally.late_ns);
        assert_eq!(tally.n, CULPRITS);
        for w in r[..tally.n].windows(2) {
            assert!(w[0].ns >= w[1].ns);
        }
        // The largest (latest) sources stayed.
        assert_eq!(r[0].source.id, 100 + CULPRITS as u64 * 3 - 1);
        assert_eq!(tally.worst().first().map(|w| w.thread_ns), Some(worst));
        assert_eq!(tally.explained, CULPRITS as u64 * 3 + 1);
    }

    #[test]
    fn a_tally_keeps_the_worst_activations_in_order() {
        // Thread latencies in an order that inserts at the front, the back,
        // the middle, past the end, and ties (the first seen ranks first).
        let lens = [50, 70, 60, 10, 70, 80, 20, 65, 90, 60];
        let mut tally = Tally::new();
        for (seq, &len) in lens.iter().enumerate() {
            let mut t = Tracker::<4>::new();
            t.event(0, Event::Switch(task(100, "noise")));
            t.event(len, Event::Switch(fifo(7, "rtlat/1", 95)));
            tally.add(&Analysis::explain(&t, seq as u64, 0, 0, len));
            assert_eq!(tally.worst().len(), (seq + 1).min(WORST));
        }
        let kept: std::vec::Vec<(i64, u64)> =
            tally.worst().iter().map(|a| (a.thread_ns, a.seq)).collect();
        assert_eq!(kept, [(90, 8), (80, 5), (70, 1), (70, 4), (65, 7)]);
    }

    #[test]
    fn zeroed_is_new() {
        // SAFETY: Only integers, a bool and a `repr(u32)` enum, all zero.
        let z: Tracker<4> = unsafe { core::mem::zeroed() };
        let n = Tracker::<4>::new();
        assert_eq!((z.total, z.depth), (n.total, n.depth));
        assert_eq!(z.evict, n.evict);
        for (a, b) in z.parked.iter().zip(n.parked.iter()) {
            assert_eq!((a.pid, a.n, a.stack), (b.pid, b.n, b.stack));
        }
        assert_eq!(z.stack, n.stack);
        for (a, b) in z.log.iter().zip(n.log.iter()) {
            assert_eq!((a.at, a.source, a.resumed), (b.at, b.source, b.resumed));
        }
        assert_eq!(Kind::Unknown as u32, 0);
    }

    #[test]
    fn zeroed_tally_and_excerpt_are_empty() {
        // SAFETY: Only integers, bools and `repr(u32)` enums, all zero.
        let (t, e): (Tally, Excerpt) = unsafe { (core::mem::zeroed(), core::mem::zeroed()) };
        assert_eq!(t, Tally::new());
        assert_eq!(e, Excerpt::EMPTY);
    }
}
