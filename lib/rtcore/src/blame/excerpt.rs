// SPDX-License-Identifier: GPL-2.0

//! What one report needs of a [`Tally`] ([`Excerpt`]), copied out of it.

use super::{
    tally::ranked_order,
    Analysis,
    Culprit,
    Kind,
    CULPRITS, //
};

// (Named by the documentation only.)
#[cfg(doc)]
use super::Tally;

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
