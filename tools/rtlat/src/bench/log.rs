// SPDX-License-Identifier: GPL-2.0

//! The results log of the benchmark guest (scripts/bench-guest): its
//! settings line, its file sections, and what each file holds: the
//! distributions of rtlat and its peers, the job's throughput with each
//! tool, the rate each tool kept up, the streaming run.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{bench::dist::Dist, report::Report};

/// Before a tool's name in [`Inputs`]' throughput and rates: the overhead
/// rounds at the rate every tool keeps up (the sustained-… files).
pub const SUSTAINED: &str = "sustained:";

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

/// One file section: `RTRS-FILE <name>` ... `RTRS-FILE-END`.
#[derive(Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub body: String,
}

/// A results log.
#[derive(Debug, PartialEq)]
pub struct Log {
    /// The settings of `RTRS-BENCH-BEGIN` (empty without it).
    pub begin: String,
    pub files: Vec<Section>,
}

impl Log {
    /// The file sections of a results log.
    pub fn parse(log: &str) -> Self {
        let mut begin = String::new();
        let mut files = Vec::new();
        let mut cur: Option<Section> = None;
        for line in log.lines() {
            if let Some(b) = line.strip_prefix("RTRS-BENCH-BEGIN ") {
                begin = b.to_string();
            } else if let Some(name) = line.strip_prefix("RTRS-FILE ") {
                cur = Some(Section {
                    name: name.to_string(),
                    body: String::new(),
                });
            } else if line == "RTRS-FILE-END" {
                if let Some(c) = cur.take() {
                    files.push(c);
                }
            } else if let Some(Section { body, .. }) = cur.as_mut() {
                body.push_str(line);
                body.push('\n');
            }
        }
        Self { begin, files }
    }
}

/// Which distribution: the load it ran under and the tool (and stage).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DistKey {
    pub load: String,
    pub tool: String,
}

impl DistKey {
    pub fn new(load: &str, tool: &str) -> Self {
        Self {
            load: load.into(),
            tool: tool.into(),
        }
    }
}

/// What the files of a log hold.
#[derive(Default)]
pub struct Inputs {
    pub dists: BTreeMap<DistKey, Dist>,
    /// Per tool: the job's throughput, per round.
    pub throughput: BTreeMap<String, Vec<f64>>,
    /// Per tool: activations per second per CPU while the job ran, per round.
    pub rates: BTreeMap<String, Vec<f64>>,
    /// Per `--blame` tool: its sessions' activations explained and
    /// produced, summed over the rounds.
    pub explained: BTreeMap<String, Explained>,
    pub streaming: Option<Streaming>,
    pub drain: Option<super::drain::Drained>,
    /// Per number of CPUs of the session: the scale rows' inputs.
    pub scale: BTreeMap<u64, ScaleIn>,
}

/// A `--blame` session's report (`rtlat run --json`): how many of its
/// activations it explained, of those it produced.
#[derive(Default, Clone, Copy, Debug, PartialEq)]
pub struct Explained {
    pub explained: u64,
    pub produced: u64,
}

impl Explained {
    /// The counts of a session's report, which must have its CPUs' blame
    /// (a report without, or a line saying what failed, is an error).
    pub fn of_report(body: &str) -> Result<Self, String> {
        let r: Report = serde_json::from_str(body).map_err(|e| {
            format!(
                "not a session's report ({e}): '{}'",
                body.trim().replace('\n', " | ")
            )
        })?;
        let mut explained = 0;
        for cpu in &r.cpus {
            explained += cpu
                .blame
                .as_ref()
                .ok_or(format!("CPU {}: no blame in the report", cpu.cpu))?
                .explained;
        }
        Ok(Self {
            explained,
            produced: r.totals.produced,
        })
    }
}

/// What the log holds for the session on N CPUs (`scale-N-…`, `scale.txt`).
#[derive(Default)]
pub struct ScaleIn {
    pub start_stop: Option<super::startstop::StartStop>,
    /// The job's throughput without measurement and with the session, per
    /// round.
    pub none: Vec<f64>,
    pub rtlat: Vec<f64>,
    /// Its activations per second and CPU during the job, per round.
    pub rates: Vec<f64>,
}

/// Activations per second and CPU of an overhead file's line
/// "activations N ns T cpus C period_ns P", whose period must be `period_ns`
/// (the set's): a tool that ran at another rate, or a line that says what
/// failed, is an error quoting it.
pub fn activations(body: &str, period_ns: u64) -> Result<f64, String> {
    let line = body.trim();
    let f: Vec<&str> = line.split_whitespace().collect();
    let bad = || format!("not an activations line: '{line}'");
    let ["activations", n, "ns", ns, "cpus", c, "period_ns", p] = f[..] else {
        return Err(bad());
    };
    let (Ok(n), Ok(ns), Ok(c), Ok(p)) = (
        n.parse::<u64>(),
        ns.parse::<u64>(),
        c.parse::<u64>(),
        p.parse::<u64>(),
    ) else {
        return Err(bad());
    };
    if ns == 0 || c == 0 {
        return Err(format!("{}: no time or no CPU", bad()));
    }
    if p != period_ns {
        return Err(format!(
            "period {p} ns, not the set's {period_ns} ns: '{line}'"
        ));
    }
    Ok(n as f64 / (ns as f64 / 1e9) / c as f64)
}

/// cyclictest `-h` output: histogram rows (µs) summed over threads, plus
/// overflows at the reported max.
pub fn parse_cyclictest(text: &str, d: &mut Dist) {
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

impl Inputs {
    /// Reads the files of a log whose overhead rounds asked the periods
    /// `overhead_period_ns` and `sustained_period_ns`.
    pub fn read(
        files: &[Section],
        overhead_period_ns: u64,
        sustained_period_ns: u64,
    ) -> Result<Self, String> {
        let mut inputs = Self::default();
        let Self {
            dists: d,
            throughput,
            rates,
            explained,
            streaming,
            drain,
            scale,
        } = &mut inputs;
        for Section { name, body } in files {
            let mut parts = name.splitn(4, '-');
            let kind = parts.next().unwrap_or("");
            if kind == "agree" {
                let load = parts.next().unwrap_or("");
                let _round = parts.next();
                let what = parts.next().unwrap_or("");
                if what.starts_with("rtlat") {
                    let r: Report =
                        serde_json::from_str(body).map_err(|e| format!("{name}: {e}"))?;
                    // Kernel stages from the plain runs, the user stage from
                    // the --user runs.
                    let user_run = what.starts_with("rtlatuser");
                    for cpu in &r.cpus {
                        for (stage, s) in &cpu.stages {
                            if (stage == "user") != user_run || stage == "response" {
                                continue;
                            }
                            let e = d
                                .entry(DistKey::new(load, &format!("rtlat {stage}")))
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
                                d.entry(DistKey::new(load, &format!("timerlat {ctx}")))
                                    .or_insert_with(Dist::new)
                                    .add(ns, 1);
                            }
                        }
                    }
                } else if what.starts_with("cyclictest") {
                    parse_cyclictest(
                        body,
                        d.entry(DistKey::new(load, "cyclictest"))
                            .or_insert_with(Dist::new),
                    );
                }
            } else if let Some((set, rest)) = name
                .strip_prefix("overhead-")
                .map(|r| ("", r))
                .or_else(|| name.strip_prefix("sustained-").map(|r| (SUSTAINED, r)))
            {
                // overhead-<round>-<tool>.txt: "activations N ns T cpus C
                // period_ns P", what the tool achieved during the job (the
                // floor's own count, the session's, timerlat's events);
                // sustained-… the same at the rate every tool keeps up, kept
                // under the tool's name with SUSTAINED before it.
                // overhead-<round>-<tool>.json: a --blame session's report.
                if let Some(tool) = rest
                    .split_once('-')
                    .and_then(|(_, t)| t.strip_suffix(".json"))
                {
                    let e = Explained::of_report(body).map_err(|e| format!("{name}: {e}"))?;
                    let sum = explained.entry(format!("{set}{tool}")).or_default();
                    sum.explained += e.explained;
                    sum.produced += e.produced;
                    continue;
                }
                let tool = rest
                    .split_once('-')
                    .and_then(|(_, t)| t.strip_suffix(".txt"))
                    .ok_or(format!("{name}: not <set>-<round>-<tool>.txt"))?;
                let period = if set.is_empty() {
                    overhead_period_ns
                } else {
                    sustained_period_ns
                };
                let rate = activations(body, period).map_err(|e| format!("{name}: {e}"))?;
                rates.entry(format!("{set}{tool}")).or_default().push(rate);
            } else if name == "overhead.txt" || name == "sustained.txt" {
                let set = if name == "sustained.txt" {
                    SUSTAINED
                } else {
                    ""
                };
                for line in body.lines() {
                    if let Some((k, v)) = line.split_once(' ') {
                        if let Ok(v) = v.trim().parse::<f64>() {
                            throughput.entry(format!("{set}{k}")).or_default().push(v);
                        }
                    }
                }
            } else if let Some(rest) = name.strip_prefix("scale-") {
                // scale-<cpus>-startstop.txt: rtlat bench-startstop's line;
                // scale-<cpus>-rtlat.txt: the session's activations during
                // the job, at the sustained rate.
                let (n, what) = rest
                    .split_once('-')
                    .and_then(|(n, w)| Some((n.parse::<u64>().ok()?, w)))
                    .ok_or(format!("{name}: not scale-<cpus>-<what>.txt"))?;
                let e = scale.entry(n).or_default();
                let quoted = |e: String| {
                    format!(
                        "{name}: {e} (the file: '{}')",
                        body.trim().replace('\n', " | ")
                    )
                };
                match what {
                    "startstop.txt" => {
                        e.start_stop =
                            Some(super::startstop::StartStop::parse(body).map_err(quoted)?)
                    }
                    "rtlat.txt" => e
                        .rates
                        .push(activations(body, sustained_period_ns).map_err(quoted)?),
                    _ => return Err(format!("{name}: not scale-<cpus>-<what>.txt")),
                }
            } else if name == "scale.txt" {
                // "none-<cpus> <throughput>", "rtlat-<cpus> <throughput>".
                for line in body.lines() {
                    let parsed = line.split_once(' ').and_then(|(k, v)| {
                        let (tool, n) = k.split_once('-')?;
                        Some((tool, n.parse::<u64>().ok()?, v.trim().parse::<f64>().ok()?))
                    });
                    match parsed {
                        Some(("none", n, v)) => scale.entry(n).or_default().none.push(v),
                        Some(("rtlat", n, v)) => scale.entry(n).or_default().rtlat.push(v),
                        _ => return Err(format!("{name}: not a scale line: '{line}'")),
                    }
                }
            } else if name == "stream.json" {
                let r: Report = serde_json::from_str(body).map_err(|e| format!("{name}: {e}"))?;
                let secs = (r.end_time - r.start_time).max(0.001);
                *streaming = Some(Streaming {
                    period_us: r.settings.period_us,
                    cpus: r.cpus.len(),
                    seconds: secs,
                    produced: r.totals.produced,
                    delivered: r.totals.delivered,
                    dropped: r.totals.dropped,
                    records_per_s: r.totals.delivered as f64 / secs,
                });
            } else if name == "drain.txt" {
                // (A failed run's file is its error: quoted whole.)
                *drain = Some(super::drain::Drained::parse(body).map_err(|e| {
                    format!(
                        "{name}: {e} (the file: '{}')",
                        body.trim().replace('\n', " | ")
                    )
                })?);
            }
        }
        Ok(inputs)
    }
}

#[cfg(test)]
mod tests {
    use rtcore::hist;

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
        let log = Log::parse(
            "x\nRTRS-BENCH-BEGIN seconds=1\nRTRS-FILE a.txt\n1\n2\nRTRS-FILE-END\nRTRS-BENCH-END\n",
        );
        assert_eq!(log.begin, "seconds=1");
        assert_eq!(
            log.files,
            vec![Section {
                name: "a.txt".to_string(),
                body: "1\n2\n".to_string()
            }]
        );
    }
}
