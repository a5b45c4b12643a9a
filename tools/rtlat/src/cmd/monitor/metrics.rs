// SPDX-License-Identifier: GPL-2.0

//! The metrics of `rtlat monitor`, for Prometheus: one encoder for the
//! OpenMetrics text format (`application/openmetrics-text`, what a
//! scraper asks for first) and Prometheus' classic text format (0.0.4,
//! for node_exporter's textfile collector and older scrapers).
//!
//! The names are a contract, versioned by [`VERSION`] (in the info
//! metric): a name or label is never changed within a version.
//!
//! The histogram's `le` boundaries are boundaries of the kernel's
//! log-linear buckets (`rtcore::hist`), so each cumulative count is exact.
//! By default ([`Buckets::Fine`]) 16 a power of two from 512 ns to about
//! 1 ms (6 % wide: a quantile within 0.6 µs at 10 µs), 4 a power of two on
//! to about 1 s; `--buckets coarse` or a list exposes fewer. A boundary
//! `B` ns of the kernel's buckets counts the samples of `B - 1` ns or less,
//! and is written as `le` = `(B - 1)` ns in seconds.

use std::fmt::Write;

use rtcore::hist;

use crate::{cli::buckets::Buckets, report::Build};

/// Version of the metric names and labels.
pub const VERSION: &str = "1";

/// Content type of the OpenMetrics text format.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Content type of Prometheus' classic text format.
pub const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Which text format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    OpenMetrics,
    Text,
}

impl Format {
    /// The format an HTTP `Accept` header asks for: OpenMetrics when it
    /// names `application/openmetrics-text`, else the classic text format.
    pub fn from_accept(accept: Option<&str>) -> Self {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => OPENMETRICS,
            Format::Text => TEXT,
        }
    }
}

/// What the system is, and how the tool was built, for the info metrics.
#[derive(Clone, Debug)]
pub struct Info {
    pub kernel_release: String,
    pub preemption: String,
    pub arch: String,
    /// `/sys/devices/system/cpu/isolated` (empty if none).
    pub isolated_cpus: String,
    pub version: String,
    /// The build's source revision, target, profile and compiler.
    pub build: Build,
}

/// One CPU and stage since the monitor started.
pub struct Series<'a> {
    pub cpu: u32,
    pub stage: &'static str,
    /// `rtcore::hist`'s buckets.
    pub buckets: &'a [u64],
    pub count: u64,
    /// ns.
    pub sum: u64,
    /// ns.
    pub max: u64,
    /// Wall-clock time of the maximum's activation, s since the epoch (0:
    /// no sample).
    pub max_time: f64,
    pub trips: u64,
}

/// One CPU's counters since the monitor started.
pub struct CpuCounters {
    pub cpu: u32,
    pub missed: u64,
    pub dropped: u64,
}

/// Everything the metrics show.
pub struct View<'a> {
    pub info: &'a Info,
    /// The histogram's boundaries ([`bounds`]).
    pub bounds: &'a [u64],
    pub series: Vec<Series<'a>>,
    pub cpus: Vec<CpuCounters>,
    /// Wall-clock time of the last read of the kernel's statistics, s
    /// since the epoch (0: none yet).
    pub last_update: f64,
    /// Whether a kernel session is measuring.
    pub running: bool,
}

/// The fine `le` boundaries: exclusive upper ends `B` of kernel buckets,
/// ns.
fn fine() -> Vec<u64> {
    let mut b = vec![512];
    for e in 9..30u32 {
        let steps: u64 = if e < 20 { 16 } else { 4 };
        for k in 1..=steps {
            b.push((1u64 << e) + (k << e) / steps);
        }
    }
    b
}

/// The coarse ones: the first fine boundary at or above each of 1, 2, 5,
/// 10 µs ... 1 s. Their counts are the fine exposition's at the same `le`.
fn coarse() -> Vec<u64> {
    let fine = fine();
    let mut b: Vec<u64> = (0..7u32)
        .flat_map(|k| [1, 2, 5].map(|m| m * 10u64.pow(k) * 1000))
        .filter(|&ns| ns <= 1_000_000_000)
        .filter_map(|ns| fine.iter().copied().find(|&f| f >= ns))
        .collect();
    b.dedup();
    b
}

/// The `le` boundaries `b` names, ns, ascending.
pub fn bounds(b: &Buckets) -> Vec<u64> {
    match b {
        Buckets::Fine => fine(),
        Buckets::Coarse => coarse(),
        Buckets::List(l) => l.clone(),
    }
}

/// Seconds from ns, as Prometheus reads a float.
fn secs(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// A label value, escaped.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Metadata of a family: `name` is the OpenMetrics family name; the
/// classic format names a counter's family with its `_total` and an info
/// family with its `_info` (a gauge there).
fn family(out: &mut String, f: Format, name: &str, kind: &str, unit: Option<&str>, help: &str) {
    let (name, kind) = match (f, kind) {
        (Format::Text, "counter") => (format!("{name}_total"), kind),
        (Format::Text, "info") => (format!("{name}_info"), "gauge"),
        _ => (name.to_string(), kind),
    };
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    if let (Format::OpenMetrics, Some(u)) = (f, unit) {
        let _ = writeln!(out, "# UNIT {name} {u}");
    }
}

/// The exposition of `v` in format `f`.
pub fn encode(v: &View<'_>, f: Format) -> String {
    let mut o = String::new();
    let lbl = |s: &Series<'_>| format!("cpu=\"{}\",stage=\"{}\"", s.cpu, s.stage);

    family(
        &mut o,
        f,
        "rtlat_system",
        "info",
        None,
        "The measured system and the version of these metrics.",
    );
    let i = v.info;
    let _ = writeln!(
        o,
        "rtlat_system_info{{kernel_release=\"{}\",preemption=\"{}\",arch=\"{}\",isolated_cpus=\"{}\",version=\"{}\",metrics_version=\"{VERSION}\"}} 1",
        esc(&i.kernel_release),
        esc(&i.preemption),
        esc(&i.arch),
        esc(&i.isolated_cpus),
        esc(&i.version)
    );

    // The tool's build, as Prometheus' own *_build_info: the source
    // revision tells two builds of one version apart.
    family(
        &mut o,
        f,
        "rtlat_build",
        "info",
        None,
        "How this rtlat was built: its version, source revision, target, profile and compiler.",
    );
    let b = &i.build;
    let _ = writeln!(
        o,
        "rtlat_build_info{{version=\"{}\",revision=\"{}\",target=\"{}\",profile=\"{}\",rustc=\"{}\"}} 1",
        esc(&i.version),
        esc(&b.git),
        esc(&b.target),
        esc(&b.profile),
        esc(&b.rustc)
    );

    // Whether the numbers below are fresh: a loop that stalled, or a
    // monitor between sessions, would otherwise look healthy.
    family(
        &mut o,
        f,
        "rtlat_last_update_timestamp_seconds",
        "gauge",
        Some("seconds"),
        "When the monitor last read the kernel's statistics, seconds since the epoch (0: not yet).",
    );
    let _ = writeln!(
        o,
        "rtlat_last_update_timestamp_seconds {:.3}",
        v.last_update
    );
    family(
        &mut o,
        f,
        "rtlat_session_running",
        "gauge",
        None,
        "1 while a kernel session measures; 0 before the first, between two, after the last or an error.",
    );
    let _ = writeln!(o, "rtlat_session_running {}", u8::from(v.running));

    family(
        &mut o,
        f,
        "rtlat_latency_seconds",
        "histogram",
        Some("seconds"),
        "Wake-up latency of each activation, per CPU and stage (irq, thread, user, response).",
    );
    for s in &v.series {
        let l = lbl(s);
        let mut cum = 0u64;
        let mut next = 0usize;
        for &b in v.bounds {
            let end = hist::bucket_of(b).min(s.buckets.len());
            cum += s.buckets[next.min(end)..end].iter().sum::<u64>();
            next = next.max(end);
            let _ = writeln!(
                o,
                "rtlat_latency_seconds_bucket{{{l},le=\"{}\"}} {cum}",
                secs(b - 1)
            );
        }
        let _ = writeln!(
            o,
            "rtlat_latency_seconds_bucket{{{l},le=\"+Inf\"}} {}",
            s.count
        );
        let _ = writeln!(o, "rtlat_latency_seconds_count{{{l}}} {}", s.count);
        let _ = writeln!(o, "rtlat_latency_seconds_sum{{{l}}} {}", secs(s.sum));
    }

    family(
        &mut o,
        f,
        "rtlat_activations",
        "counter",
        None,
        "Activations measured, per CPU and stage.",
    );
    for s in &v.series {
        let _ = writeln!(o, "rtlat_activations_total{{{}}} {}", lbl(s), s.count);
    }
    family(
        &mut o,
        f,
        "rtlat_threshold_trips",
        "counter",
        None,
        "Threshold trips, per CPU and stage.",
    );
    for s in &v.series {
        let _ = writeln!(o, "rtlat_threshold_trips_total{{{}}} {}", lbl(s), s.trips);
    }
    family(
        &mut o,
        f,
        "rtlat_missed_periods",
        "counter",
        None,
        "Timer periods skipped because an activation ran late, per CPU.",
    );
    for c in &v.cpus {
        let _ = writeln!(
            o,
            "rtlat_missed_periods_total{{cpu=\"{}\"}} {}",
            c.cpu, c.missed
        );
    }
    family(
        &mut o,
        f,
        "rtlat_dropped_records",
        "counter",
        None,
        "Records lost because the CPU's ring was full, per CPU.",
    );
    for c in &v.cpus {
        let _ = writeln!(
            o,
            "rtlat_dropped_records_total{{cpu=\"{}\"}} {}",
            c.cpu, c.dropped
        );
    }

    family(
        &mut o,
        f,
        "rtlat_latency_max_seconds",
        "gauge",
        Some("seconds"),
        "Largest latency since the monitor started, per CPU and stage.",
    );
    for s in &v.series {
        let _ = writeln!(o, "rtlat_latency_max_seconds{{{}}} {}", lbl(s), secs(s.max));
    }
    family(
        &mut o,
        f,
        "rtlat_latency_max_timestamp_seconds",
        "gauge",
        Some("seconds"),
        "When the largest latency happened, seconds since the epoch (0: none yet).",
    );
    for s in &v.series {
        let _ = writeln!(
            o,
            "rtlat_latency_max_timestamp_seconds{{{}}} {:.6}",
            lbl(s),
            s.max_time
        );
    }
    if f == Format::OpenMetrics {
        o.push_str("# EOF\n");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::{
        super::example::{view, Made},
        *,
    };

    /// Two CPUs, irq and thread, with known samples: 300 ns to 48 µs, and
    /// 20 s (beyond the last finite bound).
    fn sample_made() -> Vec<Made> {
        (0..4)
            .map(|k| {
                let mut buckets = vec![0u64; hist::BUCKETS];
                for v in [300, 1_000, 1_500, 9_999, 10_000, 48_000, 20_000_000_000] {
                    buckets[hist::bucket_of(v + k)] += 1;
                }
                Made {
                    cpu: (k / 2) as u32,
                    stage: ["irq", "thread"][k as usize % 2],
                    count: buckets.iter().sum(),
                    buckets,
                    sum: 12_345_000,
                    max: 48_000,
                }
            })
            .collect()
    }

    fn sample_info() -> Info {
        Info {
            kernel_release: "7.3.0-rt1".into(),
            preemption: "PREEMPT_RT".into(),
            arch: "x86_64".into(),
            isolated_cpus: "1".into(),
            version: "0.1.0 \"q\"".into(),
            build: Build {
                git: "v0.1-12-g0123456789ab-dirty".into(),
                target: "x86_64-unknown-linux-gnu".into(),
                profile: "release".into(),
                rustc: "rustc 1.85.1 (4eb161250 2025-03-15)".into(),
            },
        }
    }

    #[test]
    fn the_bounds_are_kernel_bucket_boundaries() {
        let b = bounds(&Buckets::Fine);
        assert_eq!(b.len(), 1 + 11 * 16 + 10 * 4);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        for &x in &b {
            // A boundary: the first value of a kernel bucket.
            assert_eq!(hist::bucket_low(hist::bucket_of(x)), x, "{x}");
        }
        assert_eq!(*b.last().unwrap(), 1 << 30);
        // 6 % apart below 1 ms.
        let i = b.iter().position(|&x| x > 10_000).unwrap();
        assert!(b[i] - b[i - 1] <= 512, "{} {}", b[i - 1], b[i]);
    }

    #[test]
    fn both_formats_from_one_encoder() {
        let (info, made, b) = (sample_info(), sample_made(), fine());
        let v = view(&info, &made, &b);
        let om = encode(&v, Format::OpenMetrics);
        let txt = encode(&v, Format::Text);
        assert!(om.ends_with("# EOF\n"));
        assert!(!txt.contains("# EOF"));
        assert!(om.contains("# TYPE rtlat_activations counter\n"));
        assert!(txt.contains("# TYPE rtlat_activations_total counter\n"));
        assert!(om.contains("# TYPE rtlat_system info\n"));
        assert!(txt.contains("# TYPE rtlat_system_info gauge\n"));
        assert!(om.contains("# UNIT rtlat_latency_seconds seconds\n"));
        assert!(!txt.contains("# UNIT"));
        // The samples are the same.
        let samples = |s: &str| -> Vec<String> {
            s.lines()
                .filter(|l| !l.starts_with('#'))
                .map(String::from)
                .collect()
        };
        assert_eq!(samples(&om), samples(&txt));
        assert!(txt.contains(
            "rtlat_system_info{kernel_release=\"7.3.0-rt1\",preemption=\"PREEMPT_RT\",arch=\"x86_64\",isolated_cpus=\"1\",version=\"0.1.0 \\\"q\\\"\",metrics_version=\"1\"} 1\n"
        ));
        assert!(txt.contains("rtlat_missed_periods_total{cpu=\"0\"} 1\n"));
        assert!(txt.contains("rtlat_dropped_records_total{cpu=\"1\"} 7\n"));
        assert!(txt.contains("rtlat_threshold_trips_total{cpu=\"1\",stage=\"thread\"} 3\n"));
        assert!(txt.contains("rtlat_latency_max_seconds{cpu=\"0\",stage=\"irq\"} 0.000048\n"));
        assert!(txt.contains(
            "rtlat_latency_max_timestamp_seconds{cpu=\"0\",stage=\"irq\"} 1700000000.250000\n"
        ));
        assert!(txt.contains("rtlat_latency_seconds_sum{cpu=\"0\",stage=\"irq\"} 0.012345\n"));
    }

    #[test]
    fn the_build_is_an_info_metric() {
        let (info, made, b) = (sample_info(), sample_made(), fine());
        let v = view(&info, &made, &b);
        let line = "rtlat_build_info{version=\"0.1.0 \\\"q\\\"\",revision=\"v0.1-12-g0123456789ab-dirty\",\
                    target=\"x86_64-unknown-linux-gnu\",profile=\"release\",\
                    rustc=\"rustc 1.85.1 (4eb161250 2025-03-15)\"} 1\n";
        let om = encode(&v, Format::OpenMetrics);
        assert!(
            om.contains(&format!("# TYPE rtlat_build info\n{line}")),
            "{om}"
        );
        let txt = encode(&v, Format::Text);
        assert!(
            txt.contains(&format!("# TYPE rtlat_build_info gauge\n{line}")),
            "{txt}"
        );
    }

    #[test]
    fn freshness_is_exposed() {
        let (info, made, b) = (sample_info(), sample_made(), fine());
        let mut v = view(&info, &made, &b);
        let om = encode(&v, Format::OpenMetrics);
        assert!(om.contains(
            "# TYPE rtlat_last_update_timestamp_seconds gauge\n\
             # UNIT rtlat_last_update_timestamp_seconds seconds\n\
             rtlat_last_update_timestamp_seconds 1700000060.500\n"
        ));
        assert!(om.contains("# TYPE rtlat_session_running gauge\nrtlat_session_running 1\n"));
        // Before the first read, and after the end.
        (v.last_update, v.running) = (0.0, false);
        let txt = encode(&v, Format::Text);
        assert!(txt.contains("\nrtlat_last_update_timestamp_seconds 0.000\n"));
        assert!(txt.contains("\nrtlat_session_running 0\n"));
    }

    #[test]
    fn cumulative_buckets_count_the_samples_below_each_bound() {
        let (info, made, b) = (sample_info(), sample_made(), fine());
        let txt = encode(&view(&info, &made, &b), Format::Text);
        let bucket = |le: &str| -> u64 {
            let key =
                format!("rtlat_latency_seconds_bucket{{cpu=\"0\",stage=\"irq\",le=\"{le}\"}} ");
            let line = txt
                .lines()
                .find(|l| l.starts_with(&key))
                .unwrap_or_else(|| panic!("{key}"));
            line[key.len()..].parse().unwrap()
        };
        // 300 ns alone is at most 511 ns.
        assert_eq!(bucket("0.000000511"), 1);
        // 1000 and 1500 below 1536 ns; 1500 is not below 1472.
        assert_eq!(bucket("0.000001535"), 3);
        assert_eq!(bucket("0.000001471"), 2);
        // 20 s is beyond the last finite bound, counted in +Inf only.
        assert_eq!(bucket("1.073741823"), 6);
        assert_eq!(bucket("+Inf"), 7);
        let mut last = 0;
        for l in txt
            .lines()
            .filter(|l| l.starts_with("rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\""))
        {
            let n: u64 = l.rsplit(' ').next().unwrap().parse().unwrap();
            assert!(n >= last, "not cumulative at {l}");
            last = n;
        }
    }

    /// The histogram's lines of `txt`, those of CPU 0's irq stage.
    fn bucket_lines(txt: &str) -> Vec<&str> {
        txt.lines()
            .filter(|l| l.starts_with("rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\""))
            .collect()
    }

    #[test]
    fn coarse_bounds_are_a_1_2_5_series_of_fine_ones() {
        let (f, c) = (fine(), bounds(&Buckets::Coarse));
        assert_eq!(c.len(), 19);
        assert!(c.iter().all(|b| f.contains(b)));
        assert!(c.windows(2).all(|w| w[0] < w[1]));
        // At or above the nominal value: within 2.4 % below 1 ms, 5 % to
        // 20 ms, 7.4 % at 500 ms and 1 s.
        let nominal = (0..7u32).flat_map(|k| [1, 2, 5].map(|m| m * 10u64.pow(k) * 1000));
        for (b, n) in c.iter().zip(nominal) {
            assert!(*b >= n && (*b - n) * 1000 <= n * 74, "{b} for {n}");
        }
        assert_eq!(&c[..3], [1_024, 2_048, 5_120]);
        assert_eq!(c[c.len() - 1], 1 << 30);
    }

    #[test]
    fn a_coarse_bucket_counts_what_the_fine_one_does() {
        let (info, made) = (sample_info(), sample_made());
        let (f, c) = (fine(), bounds(&Buckets::Coarse));
        let fine_txt = encode(&view(&info, &made, &f), Format::Text);
        let coarse_txt = encode(&view(&info, &made, &c), Format::Text);
        let (fine_lines, coarse_lines) = (bucket_lines(&fine_txt), bucket_lines(&coarse_txt));
        assert_eq!(fine_lines.len(), 218);
        assert_eq!(coarse_lines.len(), 20);
        // Every coarse line, its count included, is a fine one.
        for l in &coarse_lines {
            assert!(fine_lines.contains(l), "{l}");
        }
        assert!(coarse_lines.contains(
            &"rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\",le=\"0.000010239\"} 5"
        ));
        // The rest of the exposition is the same.
        let rest = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with("rtlat_latency_seconds_bucket{"))
                .map(String::from)
                .collect()
        };
        assert_eq!(rest(&fine_txt), rest(&coarse_txt));
    }

    #[test]
    fn a_listed_bound_counts_exactly_where_the_fine_ones_do_not_fall() {
        let (info, made) = (sample_info(), sample_made());
        // 1000 and 9984 ns are no fine bounds (992, 1024; 9728, 10240) but
        // kernel ones: 300 ns alone is below 1000 ns, 9999 ns is not below
        // 9984 ns.
        let b = bounds(&crate::cli::buckets::parse("1us,9.984us,10.24us").unwrap());
        let txt = encode(&view(&info, &made, &b), Format::Text);
        assert_eq!(
            bucket_lines(&txt),
            [
                "rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\",le=\"0.000000999\"} 1",
                "rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\",le=\"0.000009983\"} 3",
                "rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\",le=\"0.000010239\"} 5",
                "rtlat_latency_seconds_bucket{cpu=\"0\",stage=\"irq\",le=\"+Inf\"} 7",
            ]
        );
    }

    #[test]
    fn accept_picks_the_format() {
        assert_eq!(Format::from_accept(None), Format::Text);
        assert_eq!(Format::from_accept(Some("text/plain")), Format::Text);
        assert_eq!(
            Format::from_accept(Some(
                "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
            )),
            Format::OpenMetrics
        );
        assert!(Format::OpenMetrics
            .content_type()
            .starts_with("application/openmetrics-text"));
    }
}
