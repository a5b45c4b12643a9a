// SPDX-License-Identifier: GPL-2.0

//! The end of a run: the measured session's final statistics from the
//! device, per CPU and stage, and the report built from them.

use std::collections::{BTreeMap, BTreeSet};

use rtcore::{
    hist,
    uapi::{self, Stage, StopReason},
};

use crate::{
    blame::BlameReport,
    device::{Device, StageStats},
    exit,
    files::Plotted,
    plan::Plan,
    raw::RawReport,
    report::{self, Report, StopCause},
    stream::Stream,
    sysinfo::SysInfo,
};

/// What a run measured.
pub struct Outcome<'a> {
    pub plan: &'a Plan,
    pub report: Report,
    /// Per CPU, then per stage reported: the statistics and histogram.
    pub stats: Vec<StageStats>,
    /// What the reader collected of the measured session.
    pub stream: Stream,
    /// Why the session was cut short, if it was (`stop.reason` `error`).
    pub error: Option<String>,
}

/// The report of one stage on one CPU.
fn stage_report(x: &StageStats) -> report::StageReport {
    let (st, b) = (&x.stats, &x.buckets);
    let mut pct = BTreeMap::new();
    for (k, &ppm) in hist::PERCENTILES_PPM.iter().enumerate() {
        if let Some(v) = hist::percentile(b, ppm, st.max) {
            pct.insert(hist::PERCENTILE_NAMES[k].to_string(), v);
        }
    }
    report::StageReport {
        count: st.count,
        min_ns: st.min,
        avg_ns: x.avg(),
        max_ns: st.max,
        max_seq: st.max_seq,
        max_time_ns: st.max_time,
        percentiles_ns: pct,
        histogram: report::Histogram::from_buckets(b),
    }
}

/// The exit status a report gives: a run cut short by an error (records not
/// written, a session the device stopped), then a threshold trip (the run
/// stopped early) before a failed gate.
pub fn exit_status(r: &Report) -> u8 {
    if r.raw.as_ref().is_some_and(|raw| raw.error.is_some()) {
        // The records asked for are not all written.
        exit::ERROR
    } else if matches!(r.stop.reason, StopCause::Error) {
        // Truncated: an unbind, another owner's reconfiguration, or a
        // measuring thread that failed.
        exit::ERROR
    } else if r.stop.trip.is_some() {
        exit::THRESHOLD
    } else if r.gates.iter().any(|g| !g.passed) {
        exit::GATE
    } else {
        exit::OK
    }
}

impl Outcome<'_> {
    /// What the SVG plot shows of the run.
    pub fn plotted(&self) -> Plotted<'_> {
        Plotted {
            stats: &self.stats,
            stream: &self.stream,
            main_stage: self.plan.main_stage,
            period_us: self.plan.period_us,
            cpus: &self.report.cpus,
            blame: self.plan.blame_us.is_some(),
        }
    }
}

/// A session that ended (and is stopped).
pub struct Ended {
    /// Why it ended; `Count` is for a mode with a
    /// [`crate::mode::UserSink`].
    pub reason: StopCause,
    /// Why, for [`StopCause::Error`]: one line.
    pub error: Option<String>,
    pub stream: Stream,
    /// Wall-clock start and end, seconds since the epoch.
    pub start_time: f64,
    pub end_time: f64,
    /// CLOCK_MONOTONIC at the start, ns.
    pub start_monotonic_ns: u64,
    /// The raw file, if one was written.
    pub raw: Option<RawReport>,
    /// The CPUs the reader thread and the status loop were seen on.
    pub reader_ran_on: BTreeSet<u32>,
    pub status_ran_on: BTreeSet<u32>,
    /// Attached, the tool left before the session's end (its reader did
    /// not read to the end of the stream).
    pub went_on: bool,
}

/// Reads the final statistics of the `ended` measured session on `dev`,
/// which samples `cpus`, and builds the report of the run.
pub fn collect<'a>(
    dev: &Device,
    cpus: &[u32],
    plan: &'a Plan,
    info: &SysInfo,
    ended: Ended,
) -> Result<Outcome<'a>, String> {
    let Ended {
        reason,
        error,
        stream,
        start_time,
        end_time,
        start_monotonic_ns,
        raw,
        went_on,
        ..
    } = ended;
    let status = dev.status()?;

    // Final statistics from the module.
    let mut cpu_reports = Vec::new();
    let mut stats = Vec::new();
    let all_stages = plan.reported_stages();
    for &cpu in cpus {
        let mut sr = BTreeMap::new();
        let mut missed = 0;
        let mut dropped = 0;
        for &stage in &all_stages {
            let x = dev
                .stats(cpu, stage)
                .map_err(|e| format!("stats cpu {cpu}: {e}"))?;
            missed = x.stats.missed;
            dropped = x.stats.dropped;
            sr.insert(stage.name().to_string(), stage_report(&x));
            stats.push(x);
        }
        // (A session that stopped early explains what it measured.)
        let blame = match plan.blame_us {
            Some(_) => {
                let err = |e: std::io::Error| format!("blame cpu {cpu}: {e}");
                let first = dev.blame(cpu).map_err(err)?;
                let next = (1..first.nr_worst)
                    .map(|rank| dev.blame_rank(cpu, rank))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(err)?;
                Some(BlameReport::from_uapi(&first, &next))
            }
            None => None,
        };
        cpu_reports.push(report::CpuReport {
            cpu,
            missed,
            dropped,
            stages: sr,
            blame,
        });
    }
    let trip =
        (StopReason::from_raw(status.stop_reason) == Some(StopReason::Threshold)).then(|| {
            report::Trip {
                cpu: status.trip_cpu,
                stage: Stage::from_raw(status.trip_stage)
                    .map_or("unknown", Stage::name)
                    .to_string(),
                value_ns: status.trip_value_ns,
                seq: status.trip_seq,
            }
        });
    let per_cpu: Vec<(u32, u64, u64)> = cpu_reports
        .iter()
        .map(|c| (c.cpu, c.missed, c.dropped))
        .collect();
    let totals = report::Totals {
        produced: status.produced,
        delivered: status.delivered,
        dropped: status.dropped,
        missed: status.missed,
        deadline_misses: status.deadline_misses,
    };
    let gates = plan.gates.evaluate(&stats, &per_cpu, &totals);
    let report = Report {
        schema: report::SCHEMA.into(),
        schema_version: report::SCHEMA_VERSION,
        tool: report::Tool {
            name: "rtlat".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            uapi_version: uapi::VERSION,
            module_srcversion: info.module_srcversion.clone(),
            build: Some(report::Build::this()),
        },
        start_monotonic_ns: Some(start_monotonic_ns),
        command_line: std::env::args().collect(),
        start_time,
        end_time,
        system: report::sysinfo_json(info),
        settings: plan.settings(cpus),
        stop: report::Stop {
            reason: if trip.is_some() {
                StopCause::Threshold
            } else {
                reason
            },
            trip,
            went_on,
        },
        totals,
        cpus: cpu_reports,
        gates,
        raw,
        // The lifecycle's.
        housekeeping: None,
        // Known once the report is complete: see `exit_status`.
        exit_code: None,
    };
    Ok(Outcome {
        plan,
        report,
        stats,
        stream,
        error,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{
        Cli,
        Cmd, //
    };

    /// The plan of `rtlat run ARGS` on a machine whose online CPUs are
    /// `cpus`.
    pub(crate) fn plan(args: &[&str], cpus: &[u32]) -> Plan {
        let Cmd::Run(c) = Cli::try_parse_from([&["rtlat", "run"], args].concat())
            .unwrap()
            .cmd
        else {
            unreachable!()
        };
        let list = cpus
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        Plan::new(&c, cpus, &list).unwrap()
    }

    /// The outcome of a run of `plan` whose report is
    /// `report::tests::sample()`, and nothing else collected.
    pub(crate) fn outcome(plan: &Plan) -> Outcome<'_> {
        Outcome {
            plan,
            report: report::tests::sample(),
            stats: Vec::new(),
            stream: Stream::default(),
            error: None,
        }
    }

    #[test]
    fn threshold_before_gate() {
        let mut r = report::tests::sample();
        assert!(r.stop.trip.is_some() && !r.gates[0].passed);
        assert_eq!(exit_status(&r), 3);
        r.stop.trip = None;
        assert_eq!(exit_status(&r), 4);
        r.gates[0].passed = true;
        assert_eq!(exit_status(&r), 0);
        r.gates.clear();
        assert_eq!(exit_status(&r), 0);
        let raw = r.raw.as_mut().unwrap();
        raw.error = Some("raw.csv: No space left on device".into());
        assert_eq!(exit_status(&r), 1);
    }

    #[test]
    fn a_session_the_device_stopped_is_an_error() {
        let mut r = report::tests::sample();
        r.stop.trip = None;
        r.gates.clear();
        r.stop.reason = StopCause::Error;
        assert_eq!(exit_status(&r), 1);
        for reason in [
            StopCause::Duration,
            StopCause::Interrupted,
            StopCause::Count,
        ] {
            r.stop.reason = reason;
            assert_eq!(exit_status(&r), 0, "{reason:?}");
        }
    }
}
