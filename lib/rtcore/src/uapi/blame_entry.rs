// SPDX-License-Identifier: GPL-2.0

//! `struct rtlat_blame_entry` ([`BlameEntry`]): one source of CPU time and
//! its time, as a [`Blame`](super::Blame) answer lists them.

// (Named by the documentation only.)
#[cfg(doc)]
use super::Blame;

use super::{
    super::blame,
    wire::{
        Rd,
        Wr, //
    },
    UapiError, //
};

/// Bytes of a source's name in a [`BlameEntry`]: a task's comm, an IRQ
/// handler's name, or an hrtimer callback's `module:symbol`.
pub const BLAME_NAME_LEN: usize = 48;

/// Byte size of a [`BlameEntry`].
pub const BLAME_ENTRY_SIZE: usize = 4 * 4 + 4 * 8 + BLAME_NAME_LEN;

/// `struct rtlat_blame_entry`: one source and its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlameEntry {
    /// [`blame::Kind`] as its ABI value.
    pub kind: u32,
    /// A task's scheduling policy; 0 for the others.
    pub policy: u32,
    /// A task's effective priority (see [`blame::Source::prio`]).
    pub prio: i32,
    /// In the run's ranking: late activations it had a part in; in an
    /// analysis: the times it began (or was running) in the interval.
    pub count: u32,
    /// pid, IRQ number or softirq vector; 0 for an hrtimer (no kernel
    /// address leaves the kernel: its name says which).
    pub id: u64,
    /// An hrtimer's in an answer of the current layout: its callback's
    /// whole name is [`Blame::long_names`]`[aux - 1]` (0: none left, only
    /// `name`). 0 in the others (reserved).
    pub aux: u64,
    /// Its time, ns.
    pub ns: u64,
    /// In the run's ranking: its largest part in one activation; 0 in an
    /// analysis.
    pub worst_ns: u64,
    /// Its name, NUL-padded.
    pub name: [u8; BLAME_NAME_LEN],
}

impl BlameEntry {
    /// No source.
    pub const EMPTY: Self = Self {
        kind: 0,
        policy: 0,
        prio: 0,
        count: 0,
        id: 0,
        aux: 0,
        ns: 0,
        worst_ns: 0,
        name: [0; BLAME_NAME_LEN],
    };

    /// `s`, its time `ns` (`count`, `worst_ns`), named by its own name.
    pub fn new(s: &blame::Source, ns: u64, count: u64, worst_ns: u64) -> Self {
        let mut e = Self {
            kind: s.kind as u32,
            policy: u32::from(s.policy),
            prio: i32::from(s.prio),
            count: count.min(u64::from(u32::MAX)) as u32,
            // An hrtimer's identity and callback are kernel addresses.
            id: if s.kind == blame::Kind::Timer {
                0
            } else {
                s.id
            },
            aux: 0,
            ns,
            worst_ns,
            ..Self::EMPTY
        };
        let own = s.name_bytes();
        e.name[..own.len()].copy_from_slice(own);
        e
    }

    /// The name, up to its first NUL.
    pub fn name_bytes(&self) -> &[u8] {
        let n = self
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(BLAME_NAME_LEN);
        &self.name[..n]
    }

    pub(super) fn encode(&self, w: &mut Wr<'_>) {
        w.u32(self.kind);
        w.u32(self.policy);
        w.u32(self.prio as u32);
        w.u32(self.count);
        w.u64(self.id);
        w.u64(self.aux);
        w.u64(self.ns);
        w.u64(self.worst_ns);
        w.b[w.at..w.at + BLAME_NAME_LEN].copy_from_slice(&self.name);
        w.at += BLAME_NAME_LEN;
    }

    pub(super) fn decode(r: &mut Rd<'_>) -> Result<Self, UapiError> {
        let mut e = Self {
            kind: r.u32(),
            policy: r.u32(),
            prio: r.u32() as i32,
            count: r.u32(),
            id: r.u64(),
            aux: r.u64(),
            ns: r.u64(),
            worst_ns: r.u64(),
            ..Self::EMPTY
        };
        e.name.copy_from_slice(&r.b[r.at..r.at + BLAME_NAME_LEN]);
        r.at += BLAME_NAME_LEN;
        if blame::Kind::from_raw(e.kind).is_none() {
            return Err(UapiError::Invalid);
        }
        Ok(e)
    }
}
