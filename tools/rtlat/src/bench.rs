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

/// Throughput loss of a CPU-bound job with each tool sampling at 10 kHz.
#[derive(Serialize)]
pub struct Overhead {
    pub rounds: usize,
    pub time_none_cs: f64,
    pub time_rtlat_cs: f64,
    pub time_timerlat_cs: f64,
    pub loss_rtlat_pct: f64,
    pub loss_timerlat_pct: f64,
    pub ratio_rtlat_timerlat: Option<f64>,
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

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b != 0).then(|| a as f64 / b as f64)
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
    let mut overhead: BTreeMap<String, Vec<f64>> = BTreeMap::new();
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
                ratio_median: ratio(sa.median_ns, sb.median_ns),
                ratio_p99: ratio(sa.p99_ns, sb.p99_ns),
            });
        }
    }
    let mean = |k: &str| {
        overhead
            .get(k)
            .map(|v| v.iter().sum::<f64>() / v.len().max(1) as f64)
    };
    let overhead = match (mean("none"), mean("rtlat"), mean("timerlat")) {
        (Some(n), Some(r), Some(t)) => {
            let lr = (1.0 - n / r) * 100.0;
            let lt = (1.0 - n / t) * 100.0;
            Some(Overhead {
                rounds: overhead["none"].len(),
                time_none_cs: n,
                time_rtlat_cs: r,
                time_timerlat_cs: t,
                loss_rtlat_pct: lr,
                loss_timerlat_pct: lt,
                ratio_rtlat_timerlat: (lt.abs() > f64::EPSILON).then(|| lr / lt),
            })
        }
        _ => None,
    };
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
            "\n| overhead (CPU-bound job on every CPU, {} rounds) | time | throughput loss |",
            o.rounds
        );
        let _ = writeln!(md, "|---|---:|---:|");
        let _ = writeln!(md, "| no measurement | {:.2} s | |", o.time_none_cs / 100.0);
        let _ = writeln!(
            md,
            "| rtlat at 10 kHz | {:.2} s | {:.1} % |",
            o.time_rtlat_cs / 100.0,
            o.loss_rtlat_pct
        );
        let _ = writeln!(
            md,
            "| timerlat at 10 kHz | {:.2} s | {:.1} % |",
            o.time_timerlat_cs / 100.0,
            o.loss_timerlat_pct
        );
        let _ = writeln!(
            md,
            "\nrtlat/timerlat overhead ratio: {}",
            rt(o.ratio_rtlat_timerlat)
        );
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
    fn sections_of_a_log() {
        let (b, f) = sections(
            "x\nRTRS-BENCH-BEGIN seconds=1\nRTRS-FILE a.txt\n1\n2\nRTRS-FILE-END\nRTRS-BENCH-END\n",
        );
        assert_eq!(b, "seconds=1");
        assert_eq!(f, vec![("a.txt".to_string(), "1\n2\n".to_string())]);
    }
}
