// SPDX-License-Identifier: GPL-2.0

//! `rtlat timerlat hist`: rtla timerlat hist's output (Linux 7.3,
//! `timerlat_hist.c`: `timerlat_hist_header()`, `timerlat_print_stats()`,
//! `timerlat_print_summary()`, `timerlat_print_stats_all()`), at the end.

use super::common::{cpu_data, duration, missed_events, run_secs, trip_text, CpuData};
use crate::{
    collect::Outcome, live::Interval, mode::Mode, report::Trip, tally::Counts, tally::Tally,
};

/// What `hist` shows, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct HistView {
    /// `-u`: the user-return columns (`Usr`).
    pub user: bool,
    /// `-n`: nanoseconds.
    pub ns: bool,
    /// `-b`, in output units.
    pub bucket_size: u64,
    /// `-E`.
    pub entries: usize,
    pub no_irq: bool,
    pub no_thread: bool,
    pub no_header: bool,
    pub no_summary: bool,
    pub no_index: bool,
    pub with_zeros: bool,
    /// `--no-aa`.
    pub no_aa: bool,
}

/// The mode of `rtlat timerlat hist`.
pub struct Hist(pub HistView);

/// One context of one CPU in buckets: `entries` of them, then the overflow
/// (rtla's `hist[entries]`).
fn buckets(c: &Counts, size: u64, entries: usize) -> Vec<u64> {
    let mut b = vec![0u64; entries + 1];
    for (&v, &n) in &c.values {
        let i = usize::try_from(v / size).unwrap_or(usize::MAX).min(entries);
        b[i] += n;
    }
    b
}

/// rtla's `format_summary_value()`: `"%9llu "`, or `"%9c "` of `-`
/// without samples.
fn summary_value(count: u64, v: u64) -> String {
    if count == 0 {
        format!("{:>9} ", '-')
    } else {
        format!("{v:9} ")
    }
}

impl HistView {
    /// The contexts shown, in rtla's column order.
    fn shown<'a>(&self, d: &'a CpuData) -> Vec<&'a Counts> {
        let mut v = Vec::new();
        if !self.no_irq {
            v.push(&d.irq);
        }
        if !self.no_thread {
            v.push(&d.thread);
        }
        if self.user {
            v.push(&d.user);
        }
        v
    }

    /// `timerlat_hist_header()`: unless `--no-header`, the three comment
    /// lines and the column names.
    pub fn header(&self, rows: &[CpuData], duration: &str) -> String {
        if self.no_header {
            return String::new();
        }
        let (name, unit) = if self.ns {
            ("nanoseconds", "ns")
        } else {
            ("microseconds", "us")
        };
        let mut s = format!(
            "# RTLA timerlat histogram\n# Time unit is {name} ({unit})\n# Duration: {duration}\n"
        );
        if !self.no_index {
            s += "Index";
        }
        for d in rows.iter().filter(|d| d.has_data()) {
            if !self.no_irq {
                s += &format!("   IRQ-{:03}", d.cpu);
            }
            if !self.no_thread {
                s += &format!("   Thr-{:03}", d.cpu);
            }
            if self.user {
                s += &format!("   Usr-{:03}", d.cpu);
            }
        }
        s + "\n"
    }

    /// The bucket lines (without all-zero ones unless `--with-zeros`) and
    /// the `over:` line.
    pub fn body(&self, rows: &[CpuData]) -> String {
        let cols: Vec<Vec<u64>> = rows
            .iter()
            .filter(|d| d.has_data())
            .flat_map(|d| self.shown(d))
            .map(|c| buckets(c, self.bucket_size, self.entries))
            .collect();
        let mut s = String::new();
        for i in 0..self.entries {
            if !self.with_zeros && cols.iter().all(|b| b[i] == 0) {
                continue;
            }
            if !self.no_index {
                s += &format!("{:<6}", i as u64 * self.bucket_size);
            }
            for b in &cols {
                s += &format!("{:9} ", b[i]);
            }
            s += "\n";
        }
        if !self.no_index {
            s += "over: ";
        }
        for b in &cols {
            s += &format!("{:9} ", b[self.entries]);
        }
        s + "\n"
    }

    /// `timerlat_print_summary()`: unless `--no-summary`, count, min, avg
    /// and max of every column.
    pub fn summary(&self, rows: &[CpuData]) -> String {
        if self.no_summary {
            return String::new();
        }
        let cols: Vec<&Counts> = rows
            .iter()
            .filter(|d| d.has_data())
            .flat_map(|d| self.shown(d))
            .collect();
        self.count_lines(&cols)
    }

    /// `timerlat_print_stats_all()`: unless `--no-summary`, the `ALL`
    /// columns: every CPU's samples of a context together.
    pub fn all(&self, rows: &[CpuData]) -> String {
        if self.no_summary {
            return String::new();
        }
        let mut sum = CpuData::default();
        for d in rows.iter().filter(|d| d.has_data()) {
            sum.irq.merge(&d.irq);
            sum.thread.merge(&d.thread);
            sum.user.merge(&d.user);
        }
        let mut s = String::new();
        if !self.no_index {
            s += "ALL:  ";
        }
        if !self.no_irq {
            s += "      IRQ";
        }
        if !self.no_thread {
            s += "       Thr";
        }
        if self.user {
            s += "       Usr";
        }
        s += "\n";
        s + &self.count_lines(&self.shown(&sum))
    }

    /// The `count:`, `min:`, `avg:` and `max:` lines of columns `cols`
    /// (rtla's summary and `ALL` blocks).
    fn count_lines(&self, cols: &[&Counts]) -> String {
        let mut s = String::new();
        let mut line = |index: &str, f: &dyn Fn(&Counts) -> String| {
            if !self.no_index {
                s += index;
            }
            for c in cols {
                s += &f(c);
            }
            s += "\n";
        };
        line("count:", &|c| format!("{:9} ", c.count));
        line("min:  ", &|c| summary_value(c.count, c.min));
        line("avg:  ", &|c| summary_value(c.count, c.avg()));
        line("max:  ", &|c| summary_value(c.count, c.max));
        s
    }

    /// `timerlat_print_stats()`: everything, in order.
    pub fn stats(&self, rows: &[CpuData], secs: u64) -> String {
        self.header(rows, &duration(secs))
            + &self.body(rows)
            + &self.summary(rows)
            + &self.all(rows)
    }
}

impl Mode for Hist {
    fn refused_exit(&self, _: &crate::plan::Refusal) -> u8 {
        // rtla exits 1 for an option it refuses.
        crate::exit::ERROR
    }

    fn tally(&self) -> Option<Tally> {
        Some(Tally::new(if self.0.ns { 1 } else { 1000 }, true))
    }

    /// rtla's hist shows nothing while it runs.
    fn on_interval(&self, _now: &Interval<'_>) -> String {
        String::new()
    }

    fn on_end(&self, o: &Outcome<'_>) -> String {
        let rows = cpu_data(o.stream.tally.as_ref(), self.0.user);
        self.0.stats(&rows, run_secs(o)) + &missed_events(o)
    }

    fn on_trip(&self, t: &Trip) -> (String, u8) {
        trip_text(t, self.0.no_aa)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A context with these samples (in output units).
    fn samples(v: &[u64]) -> Counts {
        let mut c = Counts::default();
        for &x in v {
            if c.count == 0 || x < c.min {
                c.min = x;
            }
            c.max = c.max.max(x);
            c.count += 1;
            c.sum += x;
            c.last = x;
            *c.values.entry(x).or_insert(0) += 1;
        }
        c
    }

    fn view() -> HistView {
        HistView {
            user: false,
            ns: false,
            bucket_size: 1,
            entries: 256,
            no_irq: false,
            no_thread: false,
            no_header: false,
            no_summary: false,
            no_index: false,
            with_zeros: false,
            no_aa: false,
        }
    }

    fn rows() -> Vec<CpuData> {
        vec![
            CpuData {
                cpu: 0,
                irq: samples(&[1, 1, 2, 300]),
                thread: samples(&[3, 4, 4]),
                user: samples(&[9, 12]),
            },
            // No samples: no columns (an offline CPU, for rtla).
            CpuData {
                cpu: 1,
                ..Default::default()
            },
            CpuData {
                cpu: 12,
                irq: samples(&[2]),
                thread: Counts::default(),
                user: Counts::default(),
            },
        ]
    }

    #[test]
    fn buckets_of_whole_units() {
        let c = Counts {
            values: BTreeMap::from([(0, 1), (9, 2), (10, 3), (19, 4), (20, 5), (1_000, 6)]),
            ..Default::default()
        };
        assert_eq!(buckets(&c, 10, 2), [3, 7, 11]);
        assert_eq!(buckets(&c, 1, 10), [1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 18]);
    }

    #[test]
    fn whole_histogram() {
        assert_eq!(
            view().stats(&rows(), 2),
            concat!(
                "# RTLA timerlat histogram\n",
                "# Time unit is microseconds (us)\n",
                "# Duration:   0 00:00:02\n",
                "Index   IRQ-000   Thr-000   IRQ-012   Thr-012\n",
                "1             2         0         0         0 \n",
                "2             1         0         1         0 \n",
                "3             0         1         0         0 \n",
                "4             0         2         0         0 \n",
                "over:         1         0         0         0 \n",
                "count:        4         3         1         0 \n",
                "min:          1         3         2         - \n",
                "avg:         76         3         2         - \n",
                "max:        300         4         2         - \n",
                "ALL:        IRQ       Thr\n",
                "count:        5         3 \n",
                "min:          1         3 \n",
                "avg:         61         3 \n",
                "max:        300         4 \n",
            )
        );
    }

    #[test]
    fn user_columns_nanoseconds_and_buckets() {
        let v = HistView {
            user: true,
            ns: true,
            bucket_size: 2,
            entries: 10,
            with_zeros: true,
            ..view()
        };
        assert_eq!(
            v.stats(&rows()[..1], 90061),
            concat!(
                "# RTLA timerlat histogram\n",
                "# Time unit is nanoseconds (ns)\n",
                "# Duration:   1 01:01:01\n",
                "Index   IRQ-000   Thr-000   Usr-000\n",
                "0             2         0         0 \n",
                "2             1         1         0 \n",
                "4             0         2         0 \n",
                "6             0         0         0 \n",
                "8             0         0         1 \n",
                "10            0         0         0 \n",
                "12            0         0         1 \n",
                "14            0         0         0 \n",
                "16            0         0         0 \n",
                "18            0         0         0 \n",
                "over:         1         0         0 \n",
                "count:        4         3         2 \n",
                "min:          1         3         9 \n",
                "avg:         76         3        10 \n",
                "max:        300         4        12 \n",
                "ALL:        IRQ       Thr       Usr\n",
                "count:        4         3         2 \n",
                "min:          1         3         9 \n",
                "avg:         76         3        10 \n",
                "max:        300         4        12 \n",
            )
        );
    }

    #[test]
    fn columns_and_parts_left_out() {
        let v = HistView {
            no_irq: true,
            no_summary: true,
            ..view()
        };
        assert_eq!(
            v.stats(&rows(), 0),
            concat!(
                "# RTLA timerlat histogram\n",
                "# Time unit is microseconds (us)\n",
                "# Duration:   0 00:00:00\n",
                "Index   Thr-000   Thr-012\n",
                "3             1         0 \n",
                "4             2         0 \n",
                "over:         0         0 \n",
            )
        );
        let v = HistView {
            no_thread: true,
            no_header: true,
            no_index: true,
            with_zeros: true,
            entries: 3,
            ..view()
        };
        assert_eq!(
            v.stats(&rows(), 0),
            concat!(
                "        0         0 \n",
                "        2         0 \n",
                "        1         1 \n",
                "        1         0 \n",
                "        4         1 \n",
                "        1         2 \n",
                "       76         2 \n",
                "      300         2 \n",
                "      IRQ\n",
                "        5 \n",
                "        1 \n",
                "       61 \n",
                "      300 \n",
            )
        );
    }
}
