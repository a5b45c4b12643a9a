// SPDX-License-Identifier: GPL-2.0

//! What `timerlat top` and `timerlat hist` share: a CPU's numbers in rtla's
//! three contexts, and rtla's duration, missed-events and stop lines.

use rtcore::uapi::Stage;

use crate::{
    collect::Outcome,
    report::Trip,
    tally::{Counts, Tally},
};

/// The numbers of one CPU in rtla's three contexts, in output units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuData {
    pub cpu: u32,
    pub irq: Counts,
    /// The thread context: the kernel thread, or with `-u` the user thread.
    pub thread: Counts,
    /// The user-return context of `-u`: the response time.
    pub user: Counts,
}

impl CpuData {
    /// rtla skips a CPU without irq and thread samples ("is this cpu
    /// offline?").
    pub(super) fn has_data(&self) -> bool {
        self.irq.count != 0 || self.thread.count != 0
    }
}

/// The rtlat stage rtla's thread context shows.
pub(super) fn thread_stage(user: bool) -> Stage {
    if user {
        Stage::User
    } else {
        Stage::Thread
    }
}

/// Every CPU of `tally`, in order, in rtla's contexts (`user`: `-u`).
pub(super) fn cpu_data(tally: Option<&Tally>, user: bool) -> Vec<CpuData> {
    let Some(t) = tally else {
        return Vec::new();
    };
    t.cpus
        .keys()
        .map(|&cpu| CpuData {
            cpu,
            irq: t.get(cpu, Stage::Irq),
            thread: t.get(cpu, thread_stage(user)),
            user: if user {
                t.get(cpu, Stage::Response)
            } else {
                Counts::default()
            },
        })
        .collect()
}

/// rtla's `get_duration()`: days (the `tm_yday` of the elapsed time),
/// hours, minutes, seconds.
pub(super) fn duration(secs: u64) -> String {
    format!(
        "{:3} {:02}:{:02}:{:02}",
        secs / 86400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

/// The run's duration as rtla computes it: whole seconds of the wall clock
/// at the end minus whole seconds at the start (`time(NULL)` both times).
pub(super) fn run_secs(o: &Outcome<'_>) -> u64 {
    let (start, end) = (o.report.start_time.floor(), o.report.end_time.floor());
    (end - start).max(0.0) as u64
}

/// rtla's `osnoise_report_missed_events()`: records the device dropped
/// (its ring was full) are samples missing from the numbers.
pub(super) fn missed_events(o: &Outcome<'_>) -> String {
    missed_line(o.report.totals.dropped, o.stream.records)
}

/// rtla's line for `missed` samples lost and `processed` counted.
pub(super) fn missed_line(missed: u64, processed: u64) -> String {
    if missed == 0 {
        return String::new();
    }
    format!(
        "{} ({:.2}%) events missed, results might not be accurate\n",
        missed,
        missed as f64 / (processed + missed) as f64 * 100.0
    )
}

/// What follows the statistics when a threshold stopped the run: rtla's
/// line (`"%s hit stop tracing\n"` with the tracer's name) and, unless
/// `--no-aa`, in place of rtla's auto analysis (which rtlat does not do),
/// where it stopped; exit status 2.
pub(super) fn trip_text(t: &Trip, no_aa: bool) -> (String, u8) {
    let mut s = String::from("timerlat hit stop tracing\n");
    if !no_aa {
        let ctx = if t.stage == Stage::Irq.name() {
            "IRQ"
        } else {
            "Thread"
        };
        s += &format!(
            "## CPU {} hit stop tracing: {} latency {:.2} us at activation {} ({} stage; no auto analysis) ##\n",
            t.cpu,
            ctx,
            t.value_ns as f64 / 1000.0,
            t.seq,
            t.stage
        );
    }
    (s, 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtcore::uapi::Record;

    #[test]
    fn durations_as_rtla() {
        assert_eq!(duration(2), "  0 00:00:02");
        assert_eq!(duration(3 * 86400 + 3600 + 61), "  3 01:01:01");
        assert_eq!(duration(123 * 86400), "123 00:00:00");
    }

    #[test]
    fn contexts_show_the_stages() {
        let mut t = Tally::new(1000, false);
        t.add(&Record {
            cpu: 2,
            lat_ns: [1_500, 3_500, 5_500, 9_500],
            ..Default::default()
        });
        let k = cpu_data(Some(&t), false);
        assert_eq!(k.len(), 1);
        assert_eq!((k[0].cpu, k[0].irq.max, k[0].thread.max), (2, 1, 3));
        assert_eq!(k[0].user, Counts::default());
        let u = cpu_data(Some(&t), true);
        assert_eq!((u[0].irq.max, u[0].thread.max, u[0].user.max), (1, 5, 9));
        assert!(cpu_data(None, true).is_empty());
    }

    #[test]
    fn missed_events_line() {
        assert_eq!(missed_line(0, 100), "");
        assert_eq!(
            missed_line(1, 2),
            "1 (33.33%) events missed, results might not be accurate\n"
        );
    }

    #[test]
    fn trip_lines() {
        let t = Trip {
            cpu: 3,
            stage: "user".into(),
            value_ns: 123_456,
            seq: 42,
        };
        assert_eq!(
            trip_text(&t, false),
            (
                "timerlat hit stop tracing\n## CPU 3 hit stop tracing: Thread latency 123.46 us at activation 42 (user stage; no auto analysis) ##\n".into(),
                2
            )
        );
        assert_eq!(
            trip_text(&t, true),
            ("timerlat hit stop tracing\n".into(), 2)
        );
        let irq = Trip {
            stage: "irq".into(),
            ..t
        };
        assert!(trip_text(&irq, false).0.contains(": IRQ latency 123.46 us"));
    }
}
