// SPDX-License-Identifier: GPL-2.0

//! `rtlat timerlat top`: rtla timerlat top's output (Linux 7.3,
//! `timerlat_top.c`: `timerlat_top_header()`, `timerlat_top_print()`,
//! `timerlat_top_print_sum()`, `timerlat_print_stats()`), once a second
//! unless `-q`, and at the end.

use std::time::Duration;

use super::common::{cpu_data, duration, missed_events, run_secs, trip_text, CpuData};
use crate::{
    collect::Outcome, live::Interval, mode::Mode, report::Trip, tally::Counts, tally::Tally,
};

/// rtla's `no_value`: a context without samples.
const NO_VALUE: &str = "        -";

/// What `top` shows, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct TopView {
    /// `-u`: the user-return columns.
    pub user: bool,
    /// `-n`: nanoseconds.
    pub ns: bool,
    /// `-q`: only the summary at the end, no clearing of the terminal.
    pub quiet: bool,
    /// rtla's `pretty_output` (stdout a terminal, not `-q`): the header in
    /// colours.
    pub pretty: bool,
    /// `--no-aa`.
    pub no_aa: bool,
}

/// The mode of `rtlat timerlat top`.
pub struct Top(pub TopView);

/// rtla's `update_min()`, `update_sum()`, `update_max()` over the CPUs of
/// one context.
#[derive(Default)]
struct Sum {
    count: u64,
    min: Option<u64>,
    sum: u64,
    max: u64,
}

impl Sum {
    fn add(&mut self, c: &Counts) {
        self.count += c.count;
        if c.count != 0 {
            self.min = Some(self.min.map_or(c.min, |m| m.min(c.min)));
        }
        self.sum += c.sum;
        self.max = self.max.max(c.max);
    }

    /// `"          %9llu %9llu %9llu"`: min, avg, max.
    fn values(&self) -> String {
        format!(
            "          {:9} {:9} {:9}",
            self.min.unwrap_or(0),
            self.sum.checked_div(self.count).unwrap_or(0),
            self.max
        )
    }
}

/// `"%9llu %9llu %9llu %9llu"`: cur, min, avg, max.
fn values(c: &Counts) -> String {
    format!("{:9} {:9} {:9} {:9}", c.last, c.min, c.avg(), c.max)
}

fn no_values() -> String {
    [NO_VALUE; 4].join(" ")
}

impl TopView {
    fn unit(&self) -> &'static str {
        if self.ns {
            "ns"
        } else {
            "us"
        }
    }

    /// `timerlat_top_header()`: three lines.
    pub fn header(&self, duration: &str) -> String {
        let (u, mut s) = (self.unit(), String::new());
        if self.pretty {
            s += "\x1b[2;37;40m";
        }
        s += "                                     Timer Latency                                              ";
        if self.user {
            s += "                                         ";
        }
        if self.pretty {
            s += "\x1b[0;0;0m";
        }
        s += "\n";
        s += &format!(
            "{duration:<6}   |          IRQ Timer Latency ({u})        |         Thread Timer Latency ({u})"
        );
        if self.user {
            s += &format!("      |    Ret user Timer Latency ({u})");
        }
        s += "\n";
        if self.pretty {
            s += "\x1b[2;30;47m";
        }
        s += "CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max";
        if self.user {
            s += " |      cur       min       avg       max";
        }
        if self.pretty {
            s += "\x1b[0;0;0m";
        }
        s + "\n"
    }

    /// `timerlat_top_print()`: one CPU's line, none without samples.
    pub fn cpu_row(&self, d: &CpuData) -> String {
        if !d.has_data() {
            return String::new();
        }
        let mut s = format!("{:3} #{:<9} |", d.cpu, d.irq.count);
        if d.irq.count == 0 {
            s += &format!("{} |", no_values());
        } else {
            s += &format!("{} |", values(&d.irq));
        }
        s += &if d.thread.count == 0 {
            no_values()
        } else {
            values(&d.thread)
        };
        if !self.user {
            return s + "\n";
        }
        s += " |";
        s += &if d.user.count == 0 {
            no_values()
        } else {
            values(&d.user)
        };
        s + "\n"
    }

    /// `timerlat_top_print_sum()`: the separator and the `ALL` line, the
    /// irq count in at most six digits and a power of ten.
    pub fn summary(&self, rows: &[CpuData]) -> String {
        let (mut irq, mut thread, mut user) = (Sum::default(), Sum::default(), Sum::default());
        for d in rows {
            irq.add(&d.irq);
            thread.add(&d.thread);
            user.add(&d.user);
        }
        if irq.count == 0 && thread.count == 0 {
            return String::new();
        }
        let (mut count, mut e) = (irq.count, 0);
        while count > 999_999 {
            e += 1;
            count /= 10;
        }
        let split = |n| "-".repeat(n);
        let mut s = format!("{}|{}|{}", split(15), split(40), split(39));
        if self.user {
            s += &format!("-|{}", split(39));
        }
        s += "\n";
        s += &format!("ALL #{count:<6} e{e} |");
        if irq.count == 0 {
            s += &format!("          {NO_VALUE} {NO_VALUE} {NO_VALUE} |");
        } else {
            s += &format!("{} |", irq.values());
        }
        s += &if thread.count == 0 {
            no_values()
        } else {
            thread.values()
        };
        if !self.user {
            return s + "\n";
        }
        s += " |";
        if user.count == 0 {
            // rtla ends this line without a newline.
            s + &format!("          {NO_VALUE} {NO_VALUE} {NO_VALUE} |")
        } else {
            s + &user.values() + "\n"
        }
    }

    /// `timerlat_print_stats()`: the terminal cleared (unless `-q`), the
    /// header, the CPUs' lines, the summary.
    pub fn stats(&self, rows: &[CpuData], secs: u64) -> String {
        let mut s = String::new();
        if !self.quiet {
            s += "\x1bc";
        }
        s += &self.header(&duration(secs));
        for d in rows {
            s += &self.cpu_row(d);
        }
        s + &self.summary(rows)
    }
}

impl Mode for Top {
    fn refused_exit(&self, _: &crate::plan::Refusal) -> u8 {
        // rtla exits 1 for an option it refuses.
        crate::exit::ERROR
    }

    fn tally(&self) -> Option<Tally> {
        Some(Tally::new(if self.0.ns { 1 } else { 1000 }, false))
    }

    fn live_as_is(&self) -> bool {
        true
    }

    /// rtla prints the numbers so far every second after the start (none
    /// during the warm-up).
    fn on_interval(&self, now: &Interval<'_>) -> String {
        if now.phase.warm_up || now.elapsed < Duration::from_secs(1) {
            return String::new();
        }
        let rows = cpu_data(now.tally.as_ref(), self.0.user);
        self.0.stats(&rows, now.elapsed.as_secs())
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
    use super::*;

    fn counts(count: u64, min: u64, sum: u64, max: u64, last: u64) -> Counts {
        Counts {
            count,
            sum,
            min,
            max,
            last,
            ..Default::default()
        }
    }

    fn view(user: bool) -> TopView {
        TopView {
            user,
            ns: false,
            quiet: true,
            pretty: false,
            no_aa: false,
        }
    }

    fn cpu(cpu: u32, irq: Counts, thread: Counts, user: Counts) -> CpuData {
        CpuData {
            cpu,
            irq,
            thread,
            user,
        }
    }

    #[test]
    fn header_lines() {
        assert_eq!(
            view(false).header("  0 00:00:02"),
            concat!(
                "                                     Timer Latency                                              \n",
                "  0 00:00:02   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)\n",
                "CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max\n"
            )
        );
        let v = TopView {
            ns: true,
            pretty: true,
            ..view(true)
        };
        assert_eq!(
            v.header("  1 02:03:04"),
            concat!(
                "\x1b[2;37;40m                                     Timer Latency                                              ",
                "                                         \x1b[0;0;0m\n",
                "  1 02:03:04   |          IRQ Timer Latency (ns)        |         Thread Timer Latency (ns)",
                "      |    Ret user Timer Latency (ns)\n",
                "\x1b[2;30;47mCPU COUNT      |      cur       min       avg       max |      cur       min       avg       max",
                " |      cur       min       avg       max\x1b[0;0;0m\n"
            )
        );
    }

    #[test]
    fn cpu_rows() {
        let d = cpu(
            3,
            counts(1000, 1, 2345, 12, 2),
            counts(999, 4, 6993, 31, 5),
            Counts::default(),
        );
        assert_eq!(
            view(false).cpu_row(&d),
            "  3 #1000      |        2         1         2        12 |        5         4         7        31\n"
        );
        assert_eq!(
            view(true).cpu_row(&d),
            "  3 #1000      |        2         1         2        12 |        5         4         7        31 |        -         -         -         -\n"
        );
        let u = cpu(
            12,
            counts(5, 1, 5, 1, 1),
            Counts::default(),
            counts(4, 10, 48, 15, 11),
        );
        assert_eq!(
            view(true).cpu_row(&u),
            " 12 #5         |        1         1         1         1 |        -         -         -         - |       11        10        12        15\n"
        );
        let t = cpu(
            0,
            Counts::default(),
            counts(1, 9, 9, 9, 9),
            Counts::default(),
        );
        assert_eq!(
            view(false).cpu_row(&t),
            "  0 #0         |        -         -         -         - |        9         9         9         9\n"
        );
        // "is this cpu offline?"
        assert_eq!(
            view(true).cpu_row(&cpu(
                1,
                Counts::default(),
                Counts::default(),
                counts(1, 1, 1, 1, 1)
            )),
            ""
        );
    }

    #[test]
    fn summary_lines() {
        let rows = [
            cpu(
                0,
                counts(2000, 1, 4000, 12, 2),
                counts(2000, 3, 10000, 40, 5),
                counts(2000, 8, 20000, 90, 9),
            ),
            cpu(
                1,
                counts(1000, 0, 3000, 7, 2),
                counts(1000, 4, 7000, 50, 5),
                Counts::default(),
            ),
            cpu(2, Counts::default(), Counts::default(), Counts::default()),
        ];
        assert_eq!(
            view(false).summary(&rows),
            concat!(
                "---------------|----------------------------------------|---------------------------------------\n",
                "ALL #3000   e0 |                  0         2        12 |                  3         5        50\n"
            )
        );
        assert_eq!(
            view(true).summary(&rows),
            concat!(
                "---------------|----------------------------------------|----------------------------------------|---------------------------------------\n",
                "ALL #3000   e0 |                  0         2        12 |                  3         5        50 |                  8        10        90\n"
            )
        );
        // Seven digits and more: a power of ten.
        let big = [cpu(
            0,
            counts(12_345_678, 1, 12_345_678, 1, 1),
            Counts::default(),
            Counts::default(),
        )];
        assert!(view(false)
            .summary(&big)
            .ends_with("ALL #123456 e2 |                  1         1         1 |        -         -         -         -\n"));
        // -u without user samples: rtla's line has no newline.
        assert!(view(true)
            .summary(&big)
            .ends_with("        -         -         - |                  -         -         - |"));
        assert_eq!(view(true).summary(&rows[2..]), "");
    }

    #[test]
    fn whole_table() {
        let rows = [cpu(
            0,
            counts(3, 1, 6, 3, 3),
            counts(3, 2, 9, 4, 4),
            Counts::default(),
        )];
        let v = view(false);
        let s = v.stats(&rows, 2);
        assert_eq!(
            s,
            concat!(
                "                                     Timer Latency                                              \n",
                "  0 00:00:02   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)\n",
                "CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max\n",
                "  0 #3         |        3         1         2         3 |        4         2         3         4\n",
                "---------------|----------------------------------------|---------------------------------------\n",
                "ALL #3      e0 |                  1         2         3 |                  2         3         4\n"
            )
        );
        // Not -q: the terminal is cleared first (even on a pipe, as rtla).
        let loud = TopView { quiet: false, ..v };
        assert_eq!(loud.stats(&rows, 2), format!("\x1bc{s}"));
    }
}
