// SPDX-License-Identifier: GPL-2.0

//! One CPU's late activations over a run ([`Tally`]): the sources that
//! delayed them ([`Culprit`]), ranked, and the worst activations.

use super::{
    Analysis,
    Excerpt,
    Share,
    Source,
    IRQ_PARTS,
    THREAD_PARTS, //
};

/// Sources a CPU's [`Tally`] ranks over a run.
pub const CULPRITS: usize = 16;

/// The worst activations a CPU's [`Tally`] keeps explained.
pub const WORST: usize = 5;

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

/// The indices of `culprits[..n]`, most time first (ties: first seen).
pub(super) fn ranked_order(culprits: &[Culprit; CULPRITS], n: usize) -> [u8; CULPRITS] {
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
