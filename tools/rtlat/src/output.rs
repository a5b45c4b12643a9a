// SPDX-License-Identifier: GPL-2.0

//! Text output in the shapes users know: cyclictest's status lines, an
//! rtla-timerlat-top-like per-stage table, and rtla's histogram.

use std::fmt::Write;

use rtcore::{hist, uapi};

/// Units of the text output.
#[derive(Clone, Copy)]
pub struct Unit {
    pub ns: bool,
}

impl Unit {
    pub fn v(self, ns: u64) -> u64 {
        if self.ns {
            ns
        } else {
            ns / 1000
        }
    }
    pub fn signed(self, ns: i64) -> i64 {
        if self.ns {
            ns
        } else {
            ns / 1000
        }
    }
    pub fn name(self) -> &'static str {
        if self.ns {
            "nanoseconds (ns)"
        } else {
            "microseconds (us)"
        }
    }
}

/// Per-CPU, per-stage numbers shown while running.
#[derive(Clone, Debug, Default)]
pub struct Live {
    pub count: u64,
    pub min: u64,
    pub avg: u64,
    pub max: u64,
    pub cur: i64,
}

/// One CPU's row of the live table: the numbers of each stage measured.
pub struct CpuLive {
    pub cpu: u32,
    pub stages: [Option<Live>; uapi::NR_STAGES],
}

/// cyclictest's line: `T: 0 (  123) P:95 I:1000 C:  12345 Min:      2 Act:    5 Avg:    4 Max:     31`.
pub fn cyclictest_line(
    thread: usize,
    tid: i32,
    prio: u32,
    interval_us: u64,
    l: &Live,
    u: Unit,
) -> String {
    format!(
        "T:{thread:2} ({tid:5}) P:{prio:2} I:{interval_us} C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}",
        l.count,
        u.v(l.min),
        u.signed(l.cur),
        u.v(l.avg),
        u.v(l.max)
    )
}

/// rtla-timerlat-top-like table: one row per CPU, cur/min/avg/max per stage.
pub fn stage_table(rows: &[CpuLive], stages: &[uapi::Stage], u: Unit) -> String {
    let mut s = String::new();
    let _ = write!(s, "CPU COUNT      ");
    for &st in stages {
        let _ = write!(s, "| {:>8} cur   min   avg   max ", st.name());
    }
    s.push('\n');
    for CpuLive { cpu, stages: stats } in rows {
        let count = stats.iter().flatten().map(|l| l.count).next().unwrap_or(0);
        let _ = write!(s, "{cpu:3} #{count:<9}");
        for &st in stages {
            match &stats[st] {
                Some(l) => {
                    let _ = write!(
                        s,
                        "| {:>11} {:5} {:5} {:5} ",
                        u.signed(l.cur),
                        u.v(l.min),
                        u.v(l.avg),
                        u.v(l.max)
                    );
                }
                None => {
                    let _ = write!(s, "| {:>11} {:>5} {:>5} {:>5} ", "-", "-", "-", "-");
                }
            }
        }
        s.push('\n');
    }
    s
}

/// One column of the histogram output.
pub struct HistColumn {
    pub name: String,
    pub buckets: Vec<u64>,
    pub count: u64,
    pub min: u64,
    pub avg: u64,
    pub max: u64,
}

/// A histogram in fixed-width buckets.
pub struct Rebucketed {
    pub buckets: Vec<u64>,
    /// What lies beyond the last bucket ("over").
    pub over: u64,
}

/// Sums log-linear buckets into fixed-width buckets of `width` units,
/// `entries` of them.
pub fn rebucket(b: &[u64], width_ns: u64, entries: usize) -> Rebucketed {
    let mut out = Rebucketed {
        buckets: vec![0u64; entries],
        over: 0,
    };
    for (i, &n) in b.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let idx = (hist::bucket_low(i) / width_ns) as usize;
        if idx < entries {
            out.buckets[idx] += n;
        } else {
            out.over += n;
        }
    }
    out
}

/// rtla-timerlat-hist-shaped output plus the percentiles.
pub fn histogram(
    cols: &[HistColumn],
    bucket: u64,
    entries: usize,
    duration: &str,
    with_zeros: bool,
    u: Unit,
) -> String {
    let width_ns = if u.ns { bucket } else { bucket * 1000 };
    let mut s = String::new();
    let _ = writeln!(s, "# RTLA timerlat histogram (rtlat)");
    let _ = writeln!(s, "# Time unit is {}", u.name());
    let _ = writeln!(s, "# Duration: {duration}");
    let _ = write!(s, "Index ");
    for c in cols {
        let _ = write!(s, " {:>9}", c.name);
    }
    s.push('\n');
    let re: Vec<Rebucketed> = cols
        .iter()
        .map(|c| rebucket(&c.buckets, width_ns, entries))
        .collect();
    for i in 0..entries {
        if !with_zeros && re.iter().all(|r| r.buckets[i] == 0) {
            continue;
        }
        let _ = write!(s, "{:<6}", i as u64 * bucket);
        for r in &re {
            let _ = write!(s, " {:>9}", r.buckets[i]);
        }
        s.push('\n');
    }
    let row = |s: &mut String, name: &str, f: &dyn Fn(usize, &HistColumn) -> String| {
        let _ = write!(s, "{name:<6}");
        for (i, c) in cols.iter().enumerate() {
            let _ = write!(s, " {:>9}", f(i, c));
        }
        s.push('\n');
    };
    row(&mut s, "over:", &|i, _| re[i].over.to_string());
    row(&mut s, "count:", &|_, c| c.count.to_string());
    row(&mut s, "min:", &|_, c| {
        if c.count == 0 {
            "-".into()
        } else {
            u.v(c.min).to_string()
        }
    });
    row(&mut s, "avg:", &|_, c| {
        if c.count == 0 {
            "-".into()
        } else {
            u.v(c.avg).to_string()
        }
    });
    row(&mut s, "max:", &|_, c| {
        if c.count == 0 {
            "-".into()
        } else {
            u.v(c.max).to_string()
        }
    });
    let _ = writeln!(
        s,
        "# Percentiles ({}; bucket upper bounds, at most 1.6 % above the exact value)",
        u.name()
    );
    for (k, &ppm) in hist::PERCENTILES_PPM.iter().enumerate() {
        row(
            &mut s,
            &format!("{}:", hist::PERCENTILE_NAMES[k]),
            &|_, c| {
                hist::percentile(&c.buckets, ppm, c.max).map_or("-".into(), |v| u.v(v).to_string())
            },
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclictest_shape() {
        let l = Live {
            count: 12345,
            min: 2000,
            avg: 4000,
            max: 31000,
            cur: 5000,
        };
        assert_eq!(
            cyclictest_line(0, 2604, 95, 1000, &l, Unit { ns: false }),
            "T: 0 ( 2604) P:95 I:1000 C:  12345 Min:      2 Act:    5 Avg:    4 Max:      31"
        );
    }

    #[test]
    fn rebucketing_and_histogram_shape() {
        let mut b = vec![0u64; hist::BUCKETS];
        b[hist::bucket_of(1_500)] += 3;
        b[hist::bucket_of(2_100)] += 1;
        b[hist::bucket_of(900_000)] += 1;
        let r = rebucket(&b, 1000, 256);
        assert_eq!((r.buckets[1], r.buckets[2], r.over), (3, 1, 1));
        let col = HistColumn {
            name: "Thr-000".into(),
            buckets: b,
            count: 5,
            min: 1_500,
            avg: 181_000,
            max: 900_000,
        };
        let h = histogram(&[col], 1, 256, "0 00:00:01", false, Unit { ns: false });
        assert!(h.starts_with("# RTLA timerlat histogram"));
        assert!(
            h.contains("Index    Thr-000\n1              3\n2              1\n"),
            "{h}"
        );
        assert!(
            h.contains("over:          1\ncount:         5\nmin:           1\n"),
            "{h}"
        );
        assert!(h.contains("p50:"));
    }
}
