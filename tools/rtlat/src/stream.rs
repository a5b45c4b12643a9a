// SPDX-License-Identifier: GPL-2.0

//! The streaming reader ([`read_records`]), and what it keeps of a
//! session's records: the latest latency per CPU (cyclictest's `Act:`),
//! the time line of each CPU (the SVG's: per time bucket the worst latency
//! and a percentile, in bounded memory), and the measuring thread of each
//! CPU.

use std::{
    collections::BTreeMap,
    io::ErrorKind,
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use rtcore::{
    hist,
    uapi::{self, Stage},
};

use crate::{device::Device, tally::Tally};

/// Width of a time bucket at the start, ns; it doubles whenever the run
/// outgrows [`MAX_POINTS`].
pub const SLOT_NS: u64 = 100_000_000;
/// Time buckets a CPU's time line keeps at most, however long the run.
pub const MAX_POINTS: usize = 512;
/// The percentile each time bucket keeps beside its worst latency.
pub const POINT_PPM: u32 = 990_000;
/// Fine histogram buckets (`rtcore::hist`) per coarse bucket of a point:
/// 4 per octave, 19 % wide.
const GROUP: usize = 16;
/// Coarse buckets of a point.
const COARSE: usize = hist::BUCKETS.div_ceil(GROUP);

/// One time bucket: its worst latency and a coarse histogram.
#[derive(Clone)]
struct Point {
    max: u64,
    counts: [u32; COARSE],
}

impl Point {
    const EMPTY: Point = Point {
        max: 0,
        counts: [0; COARSE],
    };

    fn count(&self) -> u64 {
        self.counts.iter().map(|&c| u64::from(c)).sum()
    }

    fn merge(&mut self, o: &Point) {
        self.max = self.max.max(o.max);
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a = a.saturating_add(*b);
        }
    }

    /// The percentile `ppm` by `rtcore::hist::percentile`, each coarse
    /// bucket's count at the upper end of its group.
    fn percentile(&self, ppm: u32) -> Option<u64> {
        let mut fine = vec![0u64; hist::BUCKETS];
        for (g, &c) in self.counts.iter().enumerate() {
            fine[((g + 1) * GROUP).min(hist::BUCKETS) - 1] = u64::from(c);
        }
        hist::percentile(&fine, ppm, self.max)
    }
}

/// One CPU's latency over time, decimated: at most [`MAX_POINTS`] time
/// buckets; when a record falls beyond the last one, neighbouring buckets
/// are merged two by two and the width doubles. A day-long run keeps what a
/// minute keeps.
pub struct Timeline {
    /// Width of a bucket, ns.
    width_ns: u64,
    points: Vec<Point>,
}

impl Default for Timeline {
    fn default() -> Self {
        Self {
            width_ns: SLOT_NS,
            points: Vec::new(),
        }
    }
}

impl Timeline {
    /// A latency `v` at `t_ns` from the session's start.
    pub fn add(&mut self, t_ns: u64, v: u64) {
        let mut i = (t_ns / self.width_ns) as usize;
        while i >= MAX_POINTS {
            self.halve();
            i = (t_ns / self.width_ns) as usize;
        }
        if i >= self.points.len() {
            self.points.resize(i + 1, Point::EMPTY);
        }
        let p = &mut self.points[i];
        p.max = p.max.max(v);
        let c = &mut p.counts[hist::bucket_of(v) / GROUP];
        *c = c.saturating_add(1);
    }

    /// Merges the buckets two by two; the width doubles.
    fn halve(&mut self) {
        let merged = self
            .points
            .chunks(2)
            .map(|pair| {
                let mut p = pair[0].clone();
                if let Some(q) = pair.get(1) {
                    p.merge(q);
                }
                p
            })
            .collect();
        self.points = merged;
        self.width_ns *= 2;
    }

    /// Buckets kept (the memory used).
    #[cfg(test)]
    pub fn retained(&self) -> usize {
        self.points.len()
    }

    /// Width of a bucket, ns.
    #[cfg(test)]
    pub fn width_ns(&self) -> u64 {
        self.width_ns
    }

    /// The non-empty buckets: start (ns from the session's start), worst
    /// latency, the [`POINT_PPM`] percentile, the number of latencies.
    pub fn points(&self) -> Vec<(u64, u64, u64, u64)> {
        self.points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.count() > 0)
            .map(|(i, p)| {
                (
                    i as u64 * self.width_ns,
                    p.max,
                    p.percentile(POINT_PPM).unwrap_or(p.max),
                    p.count(),
                )
            })
            .collect()
    }
}

/// What the streaming reader collected.
#[derive(Default)]
pub struct Stream {
    /// Latest main-stage latency per CPU.
    pub act: BTreeMap<u32, i64>,
    /// Per CPU: the main stage's latency over time.
    pub timelines: BTreeMap<u32, Timeline>,
    pub records: u64,
    /// Per CPU: the thread whose latency is the main stage (the kernel
    /// thread `rtlat/N`, or the user thread), for cyclictest's `T:` lines.
    pub tids: BTreeMap<u32, i32>,
    /// What the mode counts itself from every record, if it does.
    pub tally: Option<Tally>,
    /// Expected time of the session's first record: time 0 of the time line.
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
        self.timelines
            .entry(r.cpu)
            .or_default()
            .add(r.expected_ns.saturating_sub(base), v as u64);
    }
}

/// Reads the session's records from `dev` until the end of its stream (a
/// read of 0, or an error). A non-blocking file (`run --attach`'s) waits
/// for more, and also ends once `stop` is set. `each` gets what each read
/// brought: its bytes, and the records decoded from them.
pub fn read_records(
    dev: &mut Device,
    stop: &AtomicBool,
    mut each: impl FnMut(&[u8], &[uapi::Record]),
) {
    let mut buf = vec![0u8; 256 * uapi::RECORD_SIZE];
    loop {
        let n = match dev.read_raw(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let _ = dev.wait_readable(Duration::from_millis(100));
                continue;
            }
            Ok(n @ 1..) => n,
            _ => return,
        };
        each(&buf[..n], &Device::decode_records(&buf[..n]));
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
    fn the_reader_decodes_every_read() {
        // More records than one read takes, from a file that ends.
        let path = std::env::temp_dir().join(format!("rtlat-stream-{}", std::process::id()));
        let mut bytes = Vec::new();
        for seq in 0..300u64 {
            let mut b = [0u8; uapi::RECORD_SIZE];
            let r = uapi::Record {
                seq,
                ..rec((seq % 3) as u32, seq * 1_000, 2_000)
            };
            r.encode(&mut b);
            bytes.extend_from_slice(&b);
        }
        std::fs::write(&path, &bytes).unwrap();
        let mut dev = Device::open(&path, false).unwrap();
        let (mut reads, mut seqs, mut per_cpu) = (0, Vec::new(), [0; 3]);
        read_records(&mut dev, &AtomicBool::new(false), |b, recs| {
            reads += 1;
            assert_eq!(b.len(), recs.len() * uapi::RECORD_SIZE);
            for (r, raw) in recs.iter().zip(b.chunks_exact(uapi::RECORD_SIZE)) {
                // The CPU field where the bytes have it.
                assert_eq!(r.cpu.to_ne_bytes(), raw[4..8]);
                seqs.push(r.seq);
                per_cpu[r.cpu as usize] += 1;
            }
        });
        let _ = std::fs::remove_file(&path);
        assert_eq!(reads, 2);
        assert_eq!(seqs, (0..300).collect::<Vec<_>>());
        assert_eq!(per_cpu, [100; 3]);
    }

    #[test]
    fn time_line_starts_with_the_sessions_first_record() {
        // A session that starts late on the monotonic clock (after a
        // warm-up): its time line counts from its own first record.
        let t = 50_000_000_000;
        let mut s = Stream::default();
        s.add(&rec(0, t, 4_000), Stage::Thread);
        s.add(&rec(1, t + 1_000_000, 9_000), Stage::Thread);
        s.add(&rec(0, t + SLOT_NS + 1, 7_000), Stage::Thread);
        s.add(&rec(0, t + SLOT_NS + 2, 3_000), Stage::Thread);
        // Not measured in the main stage: counted, not plotted.
        s.add(&rec(1, t + 5 * SLOT_NS, -1), Stage::Thread);
        assert_eq!(s.records, 5);
        let max = |cpu| -> Vec<(u64, u64, u64)> {
            s.timelines[&cpu]
                .points()
                .iter()
                .map(|&(t, max, _, n)| (t, max, n))
                .collect()
        };
        assert_eq!(max(0), [(0, 4_000, 1), (SLOT_NS, 7_000, 2)]);
        assert_eq!(max(1), [(0, 9_000, 1)]);
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

    #[test]
    fn a_day_keeps_what_a_minute_keeps() {
        // 20 ms periods: a minute is 3 000 records, 27.8 hours 5 000 000.
        let period = 20_000_000;
        let feed = |n: u64| {
            let mut tl = Timeline::default();
            let mut most = 0;
            for k in 0..n {
                // 2-9 µs, 2 % at 50 µs, and one spike of 900 µs.
                let v = if k == n * 3 / 4 {
                    900_000
                } else if k % 50 == 0 {
                    50_000
                } else {
                    2_000 + (k * 37) % 7_000
                };
                tl.add(k * period, v);
                most = most.max(tl.retained());
            }
            (tl, most)
        };
        let (minute, most_m) = feed(3_000);
        let (day, most_d) = feed(5_000_000);
        assert!(
            most_m <= MAX_POINTS && most_d <= MAX_POINTS,
            "{most_m} {most_d}"
        );
        assert!(day.retained() > MAX_POINTS / 2, "{}", day.retained());
        let pts = day.points();
        // Nothing lost: every latency is counted, the spike is the max
        // and lies where it happened, the time line spans the whole run.
        assert_eq!(pts.iter().map(|p| p.3).sum::<u64>(), 5_000_000);
        let spike = pts.iter().max_by_key(|p| p.1).unwrap();
        assert_eq!(spike.1, 900_000);
        let at = 5_000_000 * 3 / 4 * period;
        assert!(spike.0 <= at && at < spike.0 + day.width_ns());
        assert!(pts.last().unwrap().0 + day.width_ns() > 4_999_999 * period);
        // A bucket's p99: in its 2 % at 50 µs, to the coarse bucket.
        let p99 = pts[1].2;
        assert!((50_000..=60_000).contains(&p99), "{p99}");
        assert_eq!(minute.width_ns(), 2 * SLOT_NS);
        assert_eq!(minute.points().iter().map(|p| p.3).sum::<u64>(), 3_000);
    }
}
