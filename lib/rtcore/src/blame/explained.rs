// SPDX-License-Identifier: GPL-2.0

//! An interval split by source: each one's [`Share`], and how they add up
//! ([`Explained`]).

use super::Source;
use core::cmp::Ordering;

// (Named by the documentation only.)
#[cfg(doc)]
use super::Tracker;

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
pub(super) enum Count {
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

    pub(super) fn add(&mut self, shares: &mut [Share], s: &Source, ns: u64, count: Count) {
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
    pub(super) fn sort(&self, shares: &mut [Share]) {
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
