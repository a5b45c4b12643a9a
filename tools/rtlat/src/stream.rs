// SPDX-License-Identifier: GPL-2.0

//! What the streaming reader keeps of a session's records: the latest
//! latency per CPU (cyclictest's `Act:`), the worst per CPU and 100 ms slot
//! (the SVG's time line), and the measuring thread of each CPU.

use std::collections::BTreeMap;

use rtcore::uapi::{self, Stage};

use crate::tally::Tally;

/// Width of a time slot, ns.
pub const SLOT_NS: u64 = 100_000_000;

/// What the streaming reader collected.
#[derive(Default)]
pub struct Stream {
    /// Latest main-stage latency per CPU.
    pub act: BTreeMap<u32, i64>,
    /// Per CPU: worst main-stage latency per time slot.
    pub slots: BTreeMap<u32, BTreeMap<u64, i64>>,
    pub records: u64,
    /// Per CPU: the thread whose latency is the main stage (the kernel
    /// thread `rtlat/N`, or the user thread), for cyclictest's `T:` lines.
    pub tids: BTreeMap<u32, i32>,
    /// What the mode counts itself from every record, if it does.
    pub tally: Option<Tally>,
    /// Expected time of the session's first record: time 0 of the slots.
    t0: Option<u64>,
}

impl Stream {
    /// An empty stream, counting into `tally` if the mode keeps one.
    pub fn new(tally: Option<Tally>) -> Self {
        Self {
            tally,
            ..Self::default()
        }
    }

    /// One record read from the device; `main` is the stage shown.
    pub fn add(&mut self, r: &uapi::Record, main: Stage) {
        self.records += 1;
        if let Some(t) = &mut self.tally {
            t.add(r);
        }
        let v = r.lat_ns[main];
        if v < 0 {
            return;
        }
        let base = *self.t0.get_or_insert(r.expected_ns);
        self.act.insert(r.cpu, v);
        let slot = r.expected_ns.saturating_sub(base) / SLOT_NS;
        let e = self
            .slots
            .entry(r.cpu)
            .or_default()
            .entry(slot)
            .or_insert(0);
        *e = (*e).max(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(cpu: u32, expected_ns: u64, thread: i64) -> uapi::Record {
        uapi::Record {
            cpu,
            expected_ns,
            lat_ns: [1_000, thread, -1, -1],
            ..Default::default()
        }
    }

    #[test]
    fn time_line_starts_with_the_sessions_first_record() {
        // A session that starts late on the monotonic clock (after a
        // warm-up): its slots count from its own first record.
        let t = 50_000_000_000;
        let mut s = Stream::default();
        s.add(&rec(0, t, 4_000), Stage::Thread);
        s.add(&rec(1, t + 1_000_000, 9_000), Stage::Thread);
        s.add(&rec(0, t + SLOT_NS + 1, 7_000), Stage::Thread);
        s.add(&rec(0, t + SLOT_NS + 2, 3_000), Stage::Thread);
        // Not measured in the main stage: counted, not plotted.
        s.add(&rec(1, t + 5 * SLOT_NS, -1), Stage::Thread);
        assert_eq!(s.records, 5);
        assert_eq!(s.slots[&0], BTreeMap::from([(0, 4_000), (1, 7_000)]));
        assert_eq!(s.slots[&1], BTreeMap::from([(0, 9_000)]));
        assert_eq!(s.act[&0], 3_000);
        assert!(s.tally.is_none());
    }

    #[test]
    fn the_modes_tally_counts_every_record() {
        let mut s = Stream::new(Some(Tally::new(1000, false)));
        s.add(&rec(0, 0, 4_000), Stage::Thread);
        s.add(&rec(0, 1, -1), Stage::Thread);
        let t = s.tally.expect("a tally");
        assert_eq!(t.get(0, Stage::Irq).count, 2);
        assert_eq!(t.get(0, Stage::Thread).count, 1);
    }
}
