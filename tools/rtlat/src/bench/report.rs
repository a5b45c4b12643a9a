// SPDX-License-Identifier: GPL-2.0

//! `rtlat bench-report`'s builder: from a results log, the agreement of
//! rtlat with its peers, the overhead of each tool on the CPU-bound job and
//! the streaming rate; written as bench.md, bench.json and bench.svg.

use std::{collections::BTreeMap, fs, path::Path};

use serde::Serialize;

use crate::bench::{
    dist::{Dist, Summary},
    log::{DistKey, Explained, Inputs, Log, ScaleIn, Streaming, SUSTAINED},
};
use crate::bench_check::{without_analysis, OVERHEAD_TOOLS};

/// rtlat against one peer for one stage and load.
#[derive(Serialize)]
pub struct Agreement {
    pub load: String,
    pub stage: String,
    pub peer: String,
    pub rtlat: Summary,
    pub peer_summary: Summary,
    pub ratio_median: Option<f64>,
    pub ratio_p99: Option<f64>,
}

/// What one measuring tool cost the CPU-bound job.
#[derive(Serialize, Clone)]
pub struct Cost {
    /// `none`, `floor` (a do-nothing hard-IRQ timer), `rtlat`,
    /// `rtlat-blame` (`--blame`: every activation explained),
    /// `rtlat-blame-late` (`--blame=` the settings' `blame_us`),
    /// `rtlat-irq` (an irq-only session), `rtlat-monitor` (irq-only,
    /// histograms only), `timerlat` or `timerlat-aa` (with its
    /// auto-analysis, as `rtla timerlat -a` the settings' `blame_us`).
    pub tool: String,
    /// The job's work units per second, all CPUs, mean over the rounds.
    pub throughput: f64,
    /// Throughput lost against no measurement, %.
    pub loss_pct: f64,
    /// Activations per second and CPU the tool achieved while the job ran.
    pub activations_per_s_per_cpu: Option<f64>,
    /// That rate against the rate asked (1 when the tool kept up).
    pub rate_of_asked: Option<f64>,
    /// Job CPU time lost per activation, µs: the loss normalised by the
    /// rate the tool kept up (in TCG no tool keeps 10 kHz under the job).
    pub cost_per_activation_us: Option<f64>,
    /// Cost per activation above the floor's, µs: what the tool itself
    /// adds to the timer interrupt every tool must take.
    pub above_floor_us: Option<f64>,
    /// Throughput loss relative to timerlat's.
    pub loss_ratio_timerlat: Option<f64>,
    /// Cost per activation relative to timerlat's.
    pub cost_ratio_timerlat: Option<f64>,
    /// Cost above the floor relative to timerlat's.
    pub above_floor_ratio_timerlat: Option<f64>,
    /// An analysing tool's cost above the floor relative to the same tool's
    /// without its analysis: `rtlat-blame` and `rtlat-blame-late` against
    /// `rtlat`, `timerlat-aa` against `timerlat`.
    pub above_floor_ratio_without_analysis: Option<f64>,
    /// The `--blame` rows: the share of their sessions' activations
    /// explained (over the whole sessions, the second before the job
    /// included).
    pub explained_share: Option<f64>,
}

/// Throughput loss of a CPU-bound job with each tool sampling at the same
/// rate asked.
#[derive(Serialize)]
pub struct Overhead {
    /// The period asked of every tool, µs.
    pub period_us: f64,
    pub rounds: usize,
    pub tools: Vec<Cost>,
}

/// The period of the overhead rounds, µs (10 kHz: more than TCG keeps up).
const OVERHEAD_PERIOD_US: f64 = 100.0;

/// `read()` draining full rings against `/dev/zero` with the same reads
/// (`rtlat bench-drain`).
#[derive(Serialize)]
pub struct Drain {
    pub records: u64,
    /// What the rings hold: `records` is less when they did not fill.
    pub capacity: u64,
    pub bytes: u64,
    pub read_size: u64,
    /// How long the rings took to fill (not a cost: the producer's rate).
    pub fill_s: f64,
    pub drain_s: f64,
    pub records_per_s: f64,
    pub drain_bytes_per_s: f64,
    pub zero_bytes_per_s: f64,
    /// `drain_bytes_per_s / zero_bytes_per_s`: the figure.
    pub ratio_zero: f64,
}

impl From<super::drain::Drained> for Drain {
    fn from(d: super::drain::Drained) -> Self {
        let s = |ns: u64| ns as f64 / 1e9;
        let bps = d.bytes as f64 / s(d.drain_ns);
        let zbps = d.bytes as f64 / s(d.zero_ns);
        Self {
            records: d.records,
            capacity: d.capacity,
            bytes: d.bytes,
            read_size: d.read_size,
            fill_s: s(d.fill_ns),
            drain_s: s(d.drain_ns),
            records_per_s: d.records as f64 / s(d.drain_ns),
            drain_bytes_per_s: bps,
            zero_bytes_per_s: zbps,
            ratio_zero: bps / zbps,
        }
    }
}

/// A session on `cpus` of the guest's CPUs: how long its CONFIG, START
/// and STOP take, and what it costs the job (at the sustained rate).
#[derive(Serialize)]
pub struct Scale {
    pub cpus: u64,
    /// Sessions timed.
    pub rounds: u64,
    /// Their medians, µs.
    pub config_us: f64,
    pub start_us: f64,
    pub stop_us: f64,
    /// The job's throughput lost, %, against the rounds without measurement
    /// beside it.
    pub loss_pct: Option<f64>,
    pub activations_per_s_per_cpu: Option<f64>,
    /// Job CPU time lost per activation, µs (the job runs on every CPU of
    /// the guest, the session on `cpus` of them).
    pub cost_per_activation_us: Option<f64>,
}

/// The scale rows of the log's inputs, the guest having `ncpu` CPUs.
fn scale(inputs: &BTreeMap<u64, ScaleIn>, ncpu: f64) -> Vec<Scale> {
    inputs
        .iter()
        .filter_map(|(&cpus, s)| {
            let ss = s.start_stop.as_ref()?;
            let loss = mean(&s.none)
                .zip(mean(&s.rtlat))
                .map(|(none, with)| 1.0 - with / none);
            let rate = mean(&s.rates);
            Some(Scale {
                cpus,
                rounds: ss.rounds,
                config_us: ss.config_ns as f64 / 1e3,
                start_us: ss.start_ns as f64 / 1e3,
                stop_us: ss.stop_ns as f64 / 1e3,
                loss_pct: loss.map(|l| l * 100.0),
                activations_per_s_per_cpu: rate,
                cost_per_activation_us: loss
                    .zip(rate.filter(|&r| r > 0.0))
                    .map(|(l, r)| l * ncpu / (r * cpus as f64) * 1e6),
            })
        })
        .collect()
}

/// The whole benchmark.
#[derive(Serialize)]
pub struct Bench {
    pub schema: String,
    pub kernel: String,
    pub arch: String,
    pub accelerator: String,
    pub settings: BTreeMap<String, String>,
    pub agreement: Vec<Agreement>,
    pub overhead: Option<Overhead>,
    /// The same at a rate every tool keeps up (`sustained_period_us`).
    pub overhead_sustained: Option<Overhead>,
    pub streaming: Option<Streaming>,
    pub drain: Option<Drain>,
    /// Sessions on 1, 2, 4, 8 CPUs (as many as the guest has).
    pub scale: Vec<Scale>,
    pub note: String,
}

/// A stage's distributions compared: rtlat's and its peer's.
struct Pairing {
    stage: &'static str,
    ours: &'static str,
    peer: &'static str,
}

/// Which peer each stage of rtlat is compared with.
const PAIRINGS: [Pairing; 3] = [
    Pairing {
        stage: "irq",
        ours: "rtlat irq",
        peer: "timerlat irq",
    },
    Pairing {
        stage: "thread",
        ours: "rtlat thread",
        peer: "timerlat thread",
    },
    Pairing {
        stage: "user",
        ours: "rtlat user",
        peer: "cyclictest",
    },
];

/// The mean of `v`, if it has values.
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// `a / b`, if `b` is not zero.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (b.abs() > f64::EPSILON).then(|| a / b)
}

/// rtlat against its peers, per load and stage, where both were measured.
fn agreement(d: &BTreeMap<DistKey, Dist>) -> Vec<Agreement> {
    let mut agreement = Vec::new();
    for load in ["idle", "hackbench"] {
        for Pairing { stage, ours, peer } in PAIRINGS {
            let (Some(a), Some(b)) = (
                d.get(&DistKey::new(load, ours)),
                d.get(&DistKey::new(load, peer)),
            ) else {
                continue;
            };
            let (sa, sb) = (a.summary(), b.summary());
            agreement.push(Agreement {
                load: load.into(),
                stage: stage.into(),
                peer: peer.into(),
                rtlat: sa,
                peer_summary: sb,
                ratio_median: ratio(sa.median_ns as f64, sb.median_ns as f64),
                ratio_p99: ratio(sa.p99_ns as f64, sb.p99_ns as f64),
            });
        }
    }
    agreement
}

/// What each tool cost the job, against the rounds without measurement
/// (none without them).
/// The rounds of the set whose names begin with `set` ("" or
/// [`SUSTAINED`]), at `period_us`.
fn overhead(
    throughput: &BTreeMap<String, Vec<f64>>,
    rates: &BTreeMap<String, Vec<f64>>,
    explained: &BTreeMap<String, Explained>,
    set: &str,
    period_us: f64,
) -> Option<Overhead> {
    let mean =
        |m: &BTreeMap<String, Vec<f64>>, k: &str| m.get(&format!("{set}{k}")).and_then(|v| mean(v));
    let asked = 1e6 / period_us;
    mean(throughput, "none").map(|none| {
        let mut tools: Vec<Cost> = OVERHEAD_TOOLS
            .iter()
            .filter_map(|&t| {
                let thr = mean(throughput, t)?;
                let loss = 1.0 - thr / none;
                let rate = mean(rates, t);
                Some(Cost {
                    tool: t.into(),
                    throughput: thr,
                    loss_pct: loss * 100.0,
                    activations_per_s_per_cpu: rate,
                    rate_of_asked: rate.map(|r| r / asked),
                    cost_per_activation_us: rate.filter(|&r| r > 0.0).map(|r| loss / r * 1e6),
                    above_floor_us: None,
                    loss_ratio_timerlat: None,
                    cost_ratio_timerlat: None,
                    above_floor_ratio_timerlat: None,
                    above_floor_ratio_without_analysis: None,
                    explained_share: explained
                        .get(&format!("{set}{t}"))
                        .and_then(|e| ratio(e.explained as f64, e.produced as f64)),
                })
            })
            .collect();
        let floor = tools
            .iter()
            .find(|c| c.tool == "floor")
            .and_then(|c| c.cost_per_activation_us);
        for c in tools
            .iter_mut()
            .filter(|c| c.tool != "none" && c.tool != "floor")
        {
            c.above_floor_us = c.cost_per_activation_us.zip(floor).map(|(a, f)| a - f);
        }
        if let Some(tl) = tools.iter().find(|c| c.tool == "timerlat").cloned() {
            for c in tools
                .iter_mut()
                .filter(|c| c.tool.starts_with("rtlat") || c.tool == "timerlat-aa")
            {
                c.loss_ratio_timerlat = ratio(c.loss_pct, tl.loss_pct);
                c.cost_ratio_timerlat = c
                    .cost_per_activation_us
                    .zip(tl.cost_per_activation_us)
                    .and_then(|(a, b)| ratio(a, b));
                c.above_floor_ratio_timerlat = c
                    .above_floor_us
                    .zip(tl.above_floor_us)
                    .and_then(|(a, b)| ratio(a, b));
            }
        }
        let above_floor = |t: &str| {
            tools
                .iter()
                .find(|c| c.tool == t)
                .and_then(|c| c.above_floor_us)
        };
        let plain: Vec<Option<f64>> = tools
            .iter()
            .map(|c| without_analysis(&c.tool).and_then(above_floor))
            .collect();
        for (c, plain) in tools.iter_mut().zip(plain) {
            c.above_floor_ratio_without_analysis =
                c.above_floor_us.zip(plain).and_then(|(a, b)| ratio(a, b));
        }
        Overhead {
            period_us,
            rounds: throughput[&format!("{set}none")].len(),
            tools,
        }
    })
}

/// The report of the benchmark output in the results log at `log_path`:
/// the model, the guest's settings line and the latency distributions
/// read (for the plot).
pub(super) fn build(
    log_path: &Path,
    kernel: &str,
    arch: &str,
) -> Result<(Bench, String, BTreeMap<DistKey, Dist>), String> {
    let log = fs::read_to_string(log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let Log { begin, files } = Log::parse(&log);
    if begin.is_empty() {
        return Err(format!("{}: no benchmark output", log_path.display()));
    }
    let settings: BTreeMap<String, String> = begin
        .split_whitespace()
        .filter_map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let sustained_period_us: f64 = settings
        .get("sustained_period_us")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000.0);
    let inputs = Inputs::read(
        &files,
        (OVERHEAD_PERIOD_US * 1000.0) as u64,
        (sustained_period_us * 1000.0) as u64,
    )?;

    // (Without the guest's CPUs, no cost: scale rows without one.)
    let ncpu = settings
        .get("cpus")
        .and_then(|c| c.parse().ok())
        .unwrap_or(f64::NAN);
    let bench = Bench {
        schema: crate::bench_check::SCHEMA.into(),
        kernel: kernel.into(),
        arch: arch.into(),
        accelerator: "tcg".into(),
        settings,
        agreement: agreement(&inputs.dists),
        overhead: overhead(
            &inputs.throughput,
            &inputs.rates,
            &inputs.explained,
            "",
            OVERHEAD_PERIOD_US,
        ),
        overhead_sustained: overhead(
            &inputs.throughput,
            &inputs.rates,
            &inputs.explained,
            SUSTAINED,
            sustained_period_us,
        ),
        streaming: inputs.streaming,
        drain: inputs.drain.map(Drain::from),
        scale: scale(&inputs.scale, ncpu),
        note: "QEMU TCG guest: the numbers compare tools measured side by side in one boot; they are not absolute RT performance.".into(),
    };
    Ok((bench, begin, inputs.dists))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_per_activation_and_above_the_floor() {
        // What each achieved during the job: 1000/s for the floor, 901/s
        // for rtlat, 800/s per CPU for the monitor on 2 CPUs, 450.5/s for
        // timerlat; 995/s for the floor of the sustained set.
        let act = |n: u64, ns: u64, c: u32, p: u64| {
            format!("activations {n} ns {ns} cpus {c} period_ns {p}")
        };
        let (fl, rt, mo, tl, sfl) = (
            act(2000, 2_000_000_000, 1, 100_000),
            act(1802, 2_000_000_000, 1, 100_000),
            act(4000, 2_500_000_000, 2, 100_000),
            act(901, 2_000_000_000, 1, 100_000),
            act(1990, 2_000_000_000, 1, 2_000_000),
        );
        // The --blame session's report: 450 of its 900 activations
        // explained.
        let mut run = crate::report::tests::sample();
        run.totals.produced = 900;
        run.cpus[0].blame.as_mut().unwrap().explained = 450;
        let run = serde_json::to_string(&run).unwrap();
        let log = format!(
            "RTRS-BENCH-BEGIN seconds=2 rounds=1 period_us=1000 sustained_period_us=2000 cpus=1\n\
             RTRS-FILE overhead-1-floor.txt\n{fl}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat.txt\n{rt}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat-blame.txt\n{rt}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat-blame.json\n{run}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-timerlat-aa.txt\n{tl}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat-irq.txt\n{rt}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat-monitor.txt\n{mo}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-timerlat.txt\n{tl}\nRTRS-FILE-END\n\
             RTRS-FILE overhead.txt\nnone 100\nfloor 90\nrtlat 70\nrtlat-blame 60\nrtlat-irq 80\nrtlat-monitor 88\ntimerlat 60\ntimerlat-aa 50\nRTRS-FILE-END\n\
             RTRS-FILE sustained-1-floor.txt\n{sfl}\nRTRS-FILE-END\n\
             RTRS-FILE sustained.txt\nnone 100\nfloor 99\nRTRS-FILE-END\n\
             RTRS-BENCH-END\n"
        );
        let dir = std::env::temp_dir().join(format!("rtlat-bench-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("log"), log).unwrap();
        let (bench, _, _) = build(&dir.join("log"), "k", "x").unwrap();
        let b = serde_json::to_value(&bench).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        let tools = b["overhead"]["tools"].as_array().unwrap();
        let get = |t: &str, k: &str| {
            tools.iter().find(|c| c["tool"] == t).unwrap()[k]
                .as_f64()
                .unwrap()
        };
        let near = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.abs().max(1.0);
        // Floor: 10 % lost over 1000 activations/s: 100 µs each.
        assert!(near(get("floor", "activations_per_s_per_cpu"), 1000.0));
        assert!(near(get("floor", "cost_per_activation_us"), 100.0));
        // Asked 10 kHz, kept 1 kHz.
        assert!(near(get("floor", "rate_of_asked"), 0.1));
        // The sustained rounds, apart: 1 % lost over 995/s of the 500/s asked.
        let sus = &b["overhead_sustained"];
        assert_eq!(sus["period_us"], 2000.0);
        let floor = sus["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["tool"] == "floor")
            .unwrap();
        assert!(near(
            floor["rate_of_asked"].as_f64().unwrap(),
            995.0 / 500.0
        ));
        assert!(near(
            floor["cost_per_activation_us"].as_f64().unwrap(),
            0.01 / 995.0 * 1e6
        ));
        assert_eq!(b["overhead"]["period_us"], 100.0);
        // rtlat: 30 % over 901/s; timerlat: 40 % over 1802 / 2 / 2 s.
        assert!(near(get("rtlat", "loss_pct"), 30.0));
        assert!(near(get("timerlat", "activations_per_s_per_cpu"), 450.5));
        // The monitor: 12 % over 800/s per CPU, relative to timerlat too.
        assert!(near(
            get("rtlat-monitor", "activations_per_s_per_cpu"),
            800.0
        ));
        assert!(near(get("rtlat-monitor", "cost_per_activation_us"), 150.0));
        assert!(near(
            get("rtlat-monitor", "cost_ratio_timerlat"),
            150.0 / (0.4 / 450.5 * 1e6)
        ));
        let r = 0.3 / 901.0 * 1e6;
        let t = 0.4 / 450.5 * 1e6;
        assert!(near(get("rtlat", "above_floor_us"), r - 100.0));
        assert!(near(get("rtlat", "loss_ratio_timerlat"), 0.75));
        assert!(near(get("rtlat", "cost_ratio_timerlat"), r / t));
        assert!(near(
            get("rtlat", "above_floor_ratio_timerlat"),
            (r - 100.0) / (t - 100.0)
        ));
        // rtlat --blame: 40 % over 901/s, against timerlat and against
        // rtlat; half its session's activations explained.
        let rb = 0.4 / 901.0 * 1e6;
        assert!(near(get("rtlat-blame", "cost_ratio_timerlat"), rb / t));
        assert!(near(
            get("rtlat-blame", "above_floor_ratio_without_analysis"),
            (rb - 100.0) / (r - 100.0)
        ));
        assert!(near(get("rtlat-blame", "explained_share"), 0.5));
        // timerlat's auto-analysis: 50 % over 450.5/s, against timerlat.
        let ta = 0.5 / 450.5 * 1e6;
        assert!(near(get("timerlat-aa", "cost_ratio_timerlat"), ta / t));
        assert!(near(
            get("timerlat-aa", "above_floor_ratio_without_analysis"),
            (ta - 100.0) / (t - 100.0)
        ));
        for (tool, k) in [
            ("rtlat", "explained_share"),
            ("rtlat", "above_floor_ratio_without_analysis"),
            ("timerlat", "cost_ratio_timerlat"),
            ("timerlat-aa", "explained_share"),
        ] {
            assert!(tools.iter().find(|c| c["tool"] == tool).unwrap()[k].is_null());
        }
    }

    /// The report of a log whose one file is `name`, with each body of
    /// `cases` in turn, must fail naming that file and the case's reason.
    fn refused(name: &str, cases: &[(&str, &str)]) {
        for (i, (body, why)) in cases.iter().enumerate() {
            let log = format!(
                "RTRS-BENCH-BEGIN seconds=2 rounds=1 period_us=1000 cpus=1\n\
                 RTRS-FILE {name}\n{body}\nRTRS-FILE-END\n\
                 RTRS-BENCH-END\n"
            );
            let dir = std::env::temp_dir().join(format!(
                "rtlat-bench-refused-{}-{name}-{i}",
                std::process::id()
            ));
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("log"), log).unwrap();
            let Err(err) = build(&dir.join("log"), "k", "x") else {
                panic!("{name}: case {i} not refused");
            };
            fs::remove_dir_all(&dir).unwrap();
            assert!(err.contains(name) && err.contains(why), "{err}");
        }
    }

    #[test]
    fn a_blame_report_without_blame_or_a_failure_is_refused() {
        let mut run = crate::report::tests::sample();
        run.cpus[0].blame = None;
        let run = serde_json::to_string(&run).unwrap();
        refused(
            "sustained-1-rtlat-blame.json",
            &[
                (run.as_str(), "CPU 0: no blame in the report"),
                (
                    "rtlat --blame=0 wrote no report: rtlat: error: x",
                    "not a session's report",
                ),
            ],
        );
    }

    #[test]
    fn an_overhead_file_of_another_rate_or_a_failure_is_refused() {
        refused(
            "overhead-1-rtlat-monitor.txt",
            &[
                ("", "not an activations line"),
                (
                    "rtlat measured nothing: rtlat: error: x",
                    "rtlat measured nothing",
                ),
                (
                    "activations 9 ns 1000 cpus 1 period_ns 1000000",
                    "not the set's 100000 ns",
                ),
                (
                    "activations 9 ns 0 cpus 1 period_ns 100000",
                    "no time or no CPU",
                ),
            ],
        );
    }
}
