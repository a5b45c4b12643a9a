// SPDX-License-Identifier: GPL-2.0

//! `rtlat bench-report`: turn the raw output of the benchmark guest
//! (scripts/bench-guest, through scripts/bench) into a markdown table, a JSON
//! file and an SVG overlay of the latency distributions.
//!
//! Every distribution, rtlat's and its peers', goes through the same
//! log-linear histogram (`rtcore::hist`) and the same percentile code, so the
//! comparison does not depend on how each tool summarises.

use std::{collections::BTreeMap, fmt::Write, fs, path::Path};

use rtcore::hist;
use serde::Serialize;

use crate::{plot, report::Report};

/// One distribution.
#[derive(Clone)]
struct Dist {
    buckets: Vec<u64>,
    max: u64,
}

impl Dist {
    fn new() -> Self {
        Self {
            buckets: vec![0; hist::BUCKETS],
            max: 0,
        }
    }
    fn add(&mut self, ns: u64, n: u64) {
        self.buckets[hist::bucket_of(ns)] += n;
        self.max = self.max.max(ns);
    }
    fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
    fn pct(&self, ppm: u32) -> u64 {
        hist::percentile(&self.buckets, ppm, self.max).unwrap_or(0)
    }
    fn summary(&self) -> Summary {
        Summary {
            count: self.count(),
            median_ns: self.pct(500_000),
            p99_ns: self.pct(990_000),
            p9999_ns: self.pct(999_900),
            max_ns: self.max,
        }
    }
}

/// Count, median, p99, p99.99 and max of one distribution.
#[derive(Serialize, Clone, Copy)]
pub struct Summary {
    pub count: u64,
    pub median_ns: u64,
    pub p99_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
}

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
#[derive(Serialize)]
pub struct Cost {
    /// `none`, `floor` (a do-nothing hard-IRQ timer), `rtlat`, `rtlat-irq`
    /// (an irq-only session) or `timerlat`.
    pub tool: String,
    /// The job's work units per second, all CPUs, mean over the rounds.
    pub throughput: f64,
    /// Throughput lost against no measurement, %.
    pub loss_pct: f64,
    /// Activations per second and CPU the tool achieved while the job ran.
    pub activations_per_s_per_cpu: Option<f64>,
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
}

/// Throughput loss of a CPU-bound job with each tool sampling at 10 kHz.
#[derive(Serialize)]
pub struct Overhead {
    pub rounds: usize,
    pub tools: Vec<Cost>,
}

/// The overhead rounds' tools, in the order they run.
const OVERHEAD_TOOLS: [&str; 5] = ["none", "floor", "rtlat", "rtlat-irq", "timerlat"];

/// The benchmark's fixed CPU-bound job: one thread per CPU in `cpus`, pinned
/// there by `pin`, does units of integer work until `length` has passed;
/// returns the units done per second, all CPUs together. The clock is read
/// once per unit (about a millisecond of work in TCG), so its resolution
/// does not matter.
pub fn job(
    cpus: &[u32],
    length: std::time::Duration,
    pin: fn(u32) -> Result<(), String>,
) -> Result<f64, String> {
    use std::time::Instant;
    const UNIT: u32 = 20_000;
    let start = Instant::now();
    let deadline = start + length;
    let workers: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::spawn(move || -> Result<f64, String> {
                pin(cpu)?;
                let t0 = Instant::now();
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(cpu);
                let mut units = 0u64;
                while Instant::now() < deadline {
                    for _ in 0..UNIT {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                    }
                    std::hint::black_box(x);
                    units += 1;
                }
                Ok(units as f64 / t0.elapsed().as_secs_f64())
            })
        })
        .collect();
    let mut total = 0.0;
    for w in workers {
        total += w.join().map_err(|_| "job thread panicked".to_string())??;
    }
    Ok(total)
}

/// Records delivered by read() at the smallest period on every CPU.
#[derive(Serialize)]
pub struct Streaming {
    pub period_us: f64,
    pub cpus: usize,
    pub seconds: f64,
    pub produced: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub records_per_s: f64,
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
    pub streaming: Option<Streaming>,
    pub note: String,
}

/// The file sections of a results log.
fn sections(log: &str) -> (String, Vec<(String, String)>) {
    let mut begin = String::new();
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in log.lines() {
        if let Some(b) = line.strip_prefix("RTRS-BENCH-BEGIN ") {
            begin = b.to_string();
        } else if let Some(name) = line.strip_prefix("RTRS-FILE ") {
            cur = Some((name.to_string(), String::new()));
        } else if line == "RTRS-FILE-END" {
            if let Some(c) = cur.take() {
                out.push(c);
            }
        } else if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    (begin, out)
}

/// `a / b`, if `b` is not zero.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (b.abs() > f64::EPSILON).then(|| a / b)
}

/// cyclictest `-h` output: histogram rows (µs) summed over threads, plus
/// overflows at the reported max.
fn parse_cyclictest(text: &str, d: &mut Dist) {
    let mut overflows = 0u64;
    let mut max_us = 0u64;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Max Latencies:") {
            max_us = rest
                .split_whitespace()
                .filter_map(|v| v.parse().ok())
                .max()
                .unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("# Histogram Overflows:") {
            overflows = rest
                .split_whitespace()
                .filter_map(|v| v.parse::<u64>().ok())
                .sum();
        } else if !line.starts_with('#') {
            let mut it = line.split_whitespace();
            if let Some(Ok(us)) = it.next().map(str::parse::<u64>) {
                let n: u64 = it.filter_map(|v| v.parse::<u64>().ok()).sum();
                if n > 0 {
                    d.add(us * 1000, n);
                }
            }
        }
    }
    if overflows > 0 {
        d.add(max_us * 1000, overflows);
    }
    d.max = d.max.max(max_us * 1000);
}

/// Runs the report on a results log; writes bench.md, bench.json, bench.svg
/// into `out`. Returns the markdown.
pub fn report(log_path: &Path, out: &Path, kernel: &str, arch: &str) -> Result<String, String> {
    let log = fs::read_to_string(log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let (begin, files) = sections(&log);
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
    let loads = ["idle", "hackbench"];
    // (load, tool-stage) -> distribution
    let mut d: BTreeMap<(String, String), Dist> = BTreeMap::new();
    // tool -> per-round throughputs, and activations per second per CPU
    let mut overhead: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut rates: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let seconds: f64 = settings
        .get("seconds")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let ncpu: f64 = settings
        .get("cpus")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let mut streaming = None;
    for (name, body) in &files {
        let mut parts = name.splitn(4, '-');
        let kind = parts.next().unwrap_or("");
        if kind == "agree" {
            let load = parts.next().unwrap_or("").to_string();
            let _round = parts.next();
            let what = parts.next().unwrap_or("");
            if what.starts_with("rtlat") {
                let r: Report = serde_json::from_str(body).map_err(|e| format!("{name}: {e}"))?;
                // Kernel stages from the plain runs, the user stage from
                // the --user runs.
                let user_run = what.starts_with("rtlatuser");
                for cpu in &r.cpus {
                    for (stage, s) in &cpu.stages {
                        if (stage == "user") != user_run || stage == "response" {
                            continue;
                        }
                        let e = d
                            .entry((load.clone(), format!("rtlat {stage}")))
                            .or_insert_with(Dist::new);
                        for b in &s.histogram.buckets {
                            e.add(b[0], b[2]);
                        }
                        e.max = e.max.max(s.max_ns);
                    }
                }
            } else if what.starts_with("timerlat") {
                for line in body.lines() {
                    let f: Vec<&str> = line.split_whitespace().collect();
                    if let [_, ctx, ns] = f[..] {
                        if let Ok(ns) = ns.parse() {
                            d.entry((load.clone(), format!("timerlat {ctx}")))
                                .or_insert_with(Dist::new)
                                .add(ns, 1);
                        }
                    }
                }
            } else if what.starts_with("cyclictest") {
                parse_cyclictest(
                    body,
                    d.entry((load.clone(), "cyclictest".into()))
                        .or_insert_with(Dist::new),
                );
            }
        } else if let Some(rest) = name.strip_prefix("overhead-") {
            // overhead-<round>-<tool>.json (rtlat's report of the round) or
            // overhead-<round>-timerlat.txt (its trace events).
            let tool = rest.split_once('-').map_or("", |(_, t)| t);
            if let Some(tool) = tool.strip_suffix(".json") {
                let r: Report = serde_json::from_str(body).map_err(|e| format!("{name}: {e}"))?;
                let secs = (r.end_time - r.start_time).max(0.001);
                let n = r.cpus.len().max(1) as f64;
                rates
                    .entry(tool.to_string())
                    .or_default()
                    .push(r.totals.produced as f64 / secs / n);
            } else if tool == "floor.txt" {
                // "activations N ns M cpus C", printed when it is unloaded.
                let f: Vec<&str> = body.split_whitespace().collect();
                if let ["activations", n, "ns", ns, "cpus", c] = f[..] {
                    if let (Ok(n), Ok(ns), Ok(c)) =
                        (n.parse::<f64>(), ns.parse::<f64>(), c.parse::<f64>())
                    {
                        if ns > 0.0 && c > 0.0 {
                            rates
                                .entry("floor".into())
                                .or_default()
                                .push(n / (ns / 1e9) / c);
                        }
                    }
                }
            } else if tool == "timerlat.txt" {
                // An irq and a thread sample per activation.
                if let Some(ev) = body.lines().find_map(|l| {
                    l.strip_prefix("events ")
                        .and_then(|v| v.trim().parse::<f64>().ok())
                }) {
                    rates
                        .entry("timerlat".into())
                        .or_default()
                        .push(ev / 2.0 / seconds / ncpu);
                }
            }
        } else if name == "overhead.txt" {
            for line in body.lines() {
                if let Some((k, v)) = line.split_once(' ') {
                    if let Ok(v) = v.trim().parse::<f64>() {
                        overhead.entry(k.to_string()).or_default().push(v);
                    }
                }
            }
        } else if name == "stream.json" {
            let r: Report = serde_json::from_str(body).map_err(|e| format!("{name}: {e}"))?;
            let secs = (r.end_time - r.start_time).max(0.001);
            streaming = Some(Streaming {
                period_us: r.settings.period_us,
                cpus: r.cpus.len(),
                seconds: secs,
                produced: r.totals.produced,
                delivered: r.totals.delivered,
                dropped: r.totals.dropped,
                records_per_s: r.totals.delivered as f64 / secs,
            });
        }
    }

    let pairs = [
        ("irq", "rtlat irq", "timerlat irq"),
        ("thread", "rtlat thread", "timerlat thread"),
        ("user", "rtlat user", "cyclictest"),
    ];
    let mut agreement = Vec::new();
    for load in loads {
        for (stage, ours, peer) in pairs {
            let (Some(a), Some(b)) = (
                d.get(&(load.into(), ours.into())),
                d.get(&(load.into(), peer.into())),
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
    let mean = |m: &BTreeMap<String, Vec<f64>>, k: &str| {
        m.get(k)
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
    };
    let overhead = mean(&overhead, "none").map(|none| {
        let mut tools: Vec<Cost> = OVERHEAD_TOOLS
            .iter()
            .filter_map(|&t| {
                let thr = mean(&overhead, t)?;
                let loss = 1.0 - thr / none;
                let rate = mean(&rates, t);
                Some(Cost {
                    tool: t.into(),
                    throughput: thr,
                    loss_pct: loss * 100.0,
                    activations_per_s_per_cpu: rate,
                    cost_per_activation_us: rate.filter(|&r| r > 0.0).map(|r| loss / r * 1e6),
                    above_floor_us: None,
                    loss_ratio_timerlat: None,
                    cost_ratio_timerlat: None,
                    above_floor_ratio_timerlat: None,
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
        let tl = tools
            .iter()
            .find(|c| c.tool == "timerlat")
            .map(|c| (c.loss_pct, c.cost_per_activation_us, c.above_floor_us));
        if let Some((tl_loss, tl_cost, tl_above)) = tl {
            for c in tools.iter_mut().filter(|c| c.tool.starts_with("rtlat")) {
                c.loss_ratio_timerlat = ratio(c.loss_pct, tl_loss);
                c.cost_ratio_timerlat = c
                    .cost_per_activation_us
                    .zip(tl_cost)
                    .and_then(|(a, b)| ratio(a, b));
                c.above_floor_ratio_timerlat = c
                    .above_floor_us
                    .zip(tl_above)
                    .and_then(|(a, b)| ratio(a, b));
            }
        }
        Overhead {
            rounds: overhead["none"].len(),
            tools,
        }
    });
    let bench = Bench {
        schema: "rtlat-bench-1".into(),
        kernel: kernel.into(),
        arch: arch.into(),
        accelerator: "tcg".into(),
        settings,
        agreement,
        overhead,
        streaming,
        note: "QEMU TCG guest: the numbers compare tools measured side by side in one boot; they are not absolute RT performance.".into(),
    };

    let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
    let rt = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}"));
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Kernel {kernel} ({arch}, QEMU TCG, {} CPUs), {}",
        bench.settings.get("cpus").map_or("?", |s| s),
        begin
    );
    let _ = writeln!(md, "\n{}\n", bench.note);
    let _ = writeln!(md, "| load | stage | tool | count | median µs | p99 µs | p99.99 µs | max µs | rtlat/peer median | rtlat/peer p99 |");
    let _ = writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for a in &bench.agreement {
        for (tool, s, r) in [
            ("rtlat", &a.rtlat, true),
            (a.peer.as_str(), &a.peer_summary, false),
        ] {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                a.load,
                a.stage,
                tool,
                s.count,
                us(s.median_ns),
                us(s.p99_ns),
                us(s.p9999_ns),
                us(s.max_ns),
                if r { rt(a.ratio_median) } else { String::new() },
                if r { rt(a.ratio_p99) } else { String::new() }
            );
        }
    }
    if let Some(o) = &bench.overhead {
        let _ = writeln!(
            md,
            "\n| overhead at 10 kHz (CPU-bound job on every CPU, {} rounds) | job throughput | loss | activations/s per CPU | job time per activation | above the floor | loss / timerlat's | per activation / timerlat's | above the floor / timerlat's |",
            o.rounds
        );
        let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for c in &o.tools {
            let name = match c.tool.as_str() {
                "none" => "no measurement",
                "floor" => "floor: a do-nothing hard-IRQ timer",
                "rtlat" => "rtlat (irq, thread; streaming)",
                "rtlat-irq" => "rtlat --stages irq (streaming)",
                t => t,
            };
            let _ = writeln!(
                md,
                "| {name} | {:.0}/s | {} | {} | {} | {} | {} | {} | {} |",
                c.throughput,
                if c.tool == "none" {
                    String::new()
                } else {
                    format!("{:.1} %", c.loss_pct)
                },
                c.activations_per_s_per_cpu
                    .map_or(String::new(), |r| format!("{r:.0}")),
                c.cost_per_activation_us
                    .map_or(String::new(), |v| format!("{v:.1} µs")),
                c.above_floor_us
                    .map_or(String::new(), |v| format!("{v:.1} µs")),
                c.loss_ratio_timerlat
                    .map_or(String::new(), |r| format!("{r:.2}")),
                c.cost_ratio_timerlat
                    .map_or(String::new(), |r| format!("{r:.2}")),
                c.above_floor_ratio_timerlat
                    .map_or(String::new(), |r| format!("{r:.2}")),
            );
        }
    }
    if let Some(s) = &bench.streaming {
        let _ = writeln!(
            md,
            "\nStreaming at {} µs on {} CPUs for {:.1} s: {:.0} records/s delivered by read(), {} produced, {} dropped.",
            s.period_us, s.cpus, s.seconds, s.records_per_s, s.produced, s.dropped
        );
    }
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    fs::write(out.join("bench.md"), &md).map_err(|e| e.to_string())?;
    fs::write(
        out.join("bench.json"),
        serde_json::to_string_pretty(&bench).map_err(|e| e.to_string())? + "\n",
    )
    .map_err(|e| e.to_string())?;
    let series: Vec<plot::HistSeries> = d
        .iter()
        .filter(|((load, _), _)| load == "idle")
        .map(|((load, tool), dist)| {
            plot::HistSeries::from_buckets(format!("{tool} ({load})"), &dist.buckets)
        })
        .collect();
    let svg = out.join("bench.svg");
    plot::write_svg(
        &svg.to_string_lossy(),
        &format!("rtlat and its peers, {kernel} {arch} (TCG)"),
        &series,
        &[],
    )?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclictest_histogram() {
        let text = "# Histogram\n000003 000010\t000005\n000007 000001\t000000\n# Min Latencies: 00003 00003\n# Avg Latencies: 00003 00003\n# Max Latencies: 00050 00007\n# Histogram Overflows: 00001 00000\n";
        let mut d = Dist::new();
        parse_cyclictest(text, &mut d);
        assert_eq!(d.count(), 17);
        assert_eq!(d.max, 50_000);
        assert_eq!(d.pct(500_000), hist::bucket_high(hist::bucket_of(3000)));
    }

    #[test]
    fn overhead_per_activation_and_above_the_floor() {
        // 1 CPU, 2 s rounds; rtlat's reports: 901 records in 1 s.
        let rep = serde_json::to_string(&crate::report::tests::sample()).unwrap();
        let log = format!(
            "RTRS-BENCH-BEGIN seconds=2 rounds=1 period_us=1000 cpus=1\n\
             RTRS-FILE overhead-1-floor.txt\nactivations 2000 ns 2000000000 cpus 1\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat.json\n{rep}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-rtlat-irq.json\n{rep}\nRTRS-FILE-END\n\
             RTRS-FILE overhead-1-timerlat.txt\nevents 1802\nRTRS-FILE-END\n\
             RTRS-FILE overhead.txt\nnone 100\nfloor 90\nrtlat 70\nrtlat-irq 80\ntimerlat 60\nRTRS-FILE-END\n\
             RTRS-BENCH-END\n"
        );
        let dir = std::env::temp_dir().join(format!("rtlat-bench-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("log"), log).unwrap();
        report(&dir.join("log"), &dir, "k", "x").unwrap();
        let b: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join("bench.json")).unwrap()).unwrap();
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
        // rtlat: 30 % over 901/s; timerlat: 40 % over 1802 / 2 / 2 s.
        assert!(near(get("rtlat", "loss_pct"), 30.0));
        assert!(near(get("timerlat", "activations_per_s_per_cpu"), 450.5));
        let r = 0.3 / 901.0 * 1e6;
        let t = 0.4 / 450.5 * 1e6;
        assert!(near(get("rtlat", "above_floor_us"), r - 100.0));
        assert!(near(get("rtlat", "loss_ratio_timerlat"), 0.75));
        assert!(near(get("rtlat", "cost_ratio_timerlat"), r / t));
        assert!(near(
            get("rtlat", "above_floor_ratio_timerlat"),
            (r - 100.0) / (t - 100.0)
        ));
    }

    #[test]
    fn sections_of_a_log() {
        let (b, f) = sections(
            "x\nRTRS-BENCH-BEGIN seconds=1\nRTRS-FILE a.txt\n1\n2\nRTRS-FILE-END\nRTRS-BENCH-END\n",
        );
        assert_eq!(b, "seconds=1");
        assert_eq!(f, vec![("a.txt".to_string(), "1\n2\n".to_string())]);
    }
}
