// SPDX-License-Identifier: GPL-2.0

//! The command line: clap's definitions of every subcommand and option, the
//! parsers of their values, and the exit status of a refused command line.
//! What a measuring command does with its options is [`crate::plan`]'s.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{ArgGroup, Args, Parser, Subcommand};
use clap_complete::Shell;
use rtcore::uapi::{self, Stage};

use crate::exit;

pub mod action;
pub mod buckets;

const LONG_ABOUT: &str = "\
Measure wake-up latency on PREEMPT_RT with the rtlat kernel module (/dev/rtlat).

Per CPU, a hard-IRQ hrtimer fires every period; rtlat reports, for every
activation, the latency of the timer interrupt (irq), of a SCHED_FIFO kernel
thread woken from it (thread, what timerlat reports), and with --user of a
SCHED_FIFO user thread blocked in the device (user, what cyclictest reports)
and its response time. Missed periods are counted, never hidden.

The system is never tuned silently: CPU DMA latency, idle states, governors and
isolation are reported, and changed only when asked (--dma-latency).

EXIT STATUS
    0  the run completed (no threshold tripped, every gate passed)
    1  error (module not loaded, permission, device busy, an offline CPU, ...)
    2  usage: the command line was refused (unknown option, bad value)
    3  a threshold (--threshold) tripped; the run stopped there
    4  a run-to-end gate (--fail-if, --max-missed, --max-dropped) failed

EXAMPLES
    rtlat run --duration 1m --cpus 0-3 --priority 95
    rtlat run --user --duration 10m --threshold user=100 --json run.json --svg run.svg
    rtlat run --duration 1h --fail-if thread.p99.99>100us --max-missed 0 --interval 60
    rtlat hist --duration 30s --period 200 --entries 100
    rtlat monitor --history /var/log/rtlat/history.jsonl --listen 127.0.0.1:19101
    rtlat check-json run.json
    rtlat compare before.json after.json";

/// Measure wake-up latency on PREEMPT_RT with /dev/rtlat.
#[derive(Parser)]
#[command(name = "rtlat", version, about, long_about = LONG_ABOUT)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Live status, one line per CPU in cyclictest's shape, and a per-stage table.
    Run(Common),
    /// Histogram in rtla timerlat hist's shape, with percentiles.
    Hist(HistArgs),
    /// Leave it running: the kernel's histograms read every interval, a JSON-lines history,
    /// threshold actions, OpenMetrics for Prometheus (--listen, --textfile).
    Monitor(MonitorArgs),
    /// cyclictest's options and output (T: lines, -h histogram, --json) on the user stage;
    /// `rtlat cyclictest --help` lists them.
    #[command(disable_help_flag = true)]
    Cyclictest {
        /// cyclictest's options, read as cyclictest reads them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Tables, JSON and SVG from the raw output of scripts/bench.
    BenchReport {
        /// The guest's results log.
        log: PathBuf,
        /// Where to write bench.md, bench.json and bench.svg.
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// Kernel release, for the report.
        #[arg(long, default_value = "")]
        kernel: String,
        /// Architecture, for the report.
        #[arg(long, default_value = "")]
        arch: String,
    },
    /// The benchmark's fixed CPU-bound job: one pinned thread per online CPU
    /// for SECONDS; prints the work units done per second, all CPUs together.
    #[command(hide = true)]
    BenchJob {
        /// How long to run.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
    },
    /// The benchmark's drain rate: fills rings holding about RECORDS on every online CPU
    /// (irq-only, the smallest period), stops, and times read() of them all and of as many
    /// bytes from /dev/zero, READ_SIZE bytes a read.
    #[command(hide = true)]
    BenchDrain {
        /// Device node.
        #[arg(long, default_value = "/dev/rtlat")]
        device: PathBuf,
        /// Records in all (each CPU's ring a power of two).
        #[arg(long, default_value_t = 1 << 20)]
        records: u64,
        /// Bytes per read().
        #[arg(long, default_value_t = 1 << 20)]
        read_size: usize,
        /// Give up filling after this long (e.g. 5m) and drain what is there.
        #[arg(long, default_value = "10m", value_parser = parse_duration)]
        fill_timeout: Duration,
    },
    /// The benchmark's scale rows: times CONFIG, START and STOP of sessions on the first CPUS
    /// online CPUs (irq and thread stages, 1 ms), ROUNDS of each; prints their medians.
    #[command(hide = true)]
    BenchStartstop {
        /// Device node.
        #[arg(long, default_value = "/dev/rtlat")]
        device: PathBuf,
        /// How many CPUs (the first online ones).
        #[arg(long)]
        cpus: usize,
        /// Sessions timed.
        #[arg(long, default_value_t = 10)]
        rounds: usize,
    },
    /// rtla timerlat's command line and output: rtlat timerlat [top|hist] [OPTIONS].
    #[command(disable_help_flag = true)]
    Timerlat {
        /// rtla timerlat's mode and options.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The metrics of `rtlat monitor` for a made-up run, to check them with Prometheus' tools.
    #[command(hide = true)]
    MetricsExample {
        /// OpenMetrics instead of Prometheus' classic text format.
        #[arg(long)]
        openmetrics: bool,
        /// rtlat's own percentiles of the same samples instead: CPU STAGE COUNT P50 P90 P99
        /// P99.9 (ns).
        #[arg(long, conflicts_with_all = ["openmetrics", "listen", "buckets"])]
        percentiles: bool,
        /// Serve them on ADDR:PORT as `rtlat monitor --listen` does, until killed.
        #[arg(long, value_name = "ADDR:PORT", value_parser = parse_listen)]
        listen: Option<SocketAddr>,
        /// The histogram's bounds, as `rtlat monitor --buckets`.
        #[arg(long, value_name = "BUCKETS", default_value = "fine", value_parser = buckets::parse)]
        buckets: buckets::Buckets,
    },
    /// Check that a JSON report (a run's, or a benchmark's bench.json)
    /// parses against this tool's schema.
    CheckJson {
        /// The report.
        file: PathBuf,
    },
    /// Compare two JSON reports: per CPU and stage the counts and percentiles of each and their
    /// difference, and the metadata fields that differ.
    Compare {
        /// The first report (A).
        a: PathBuf,
        /// The second report (B).
        b: PathBuf,
        /// Latencies in ns instead of µs.
        #[arg(long)]
        ns: bool,
    },
    /// Man pages or a shell's completion script, from this command line's definition.
    #[command(hide = true)]
    Generate {
        #[command(subcommand)]
        what: Generated,
    },
}

/// What `rtlat generate` writes.
#[derive(Subcommand, Clone)]
pub enum Generated {
    /// The man pages, rtlat.1 and one per visible subcommand (rtlat-run.1, ...), into DIR.
    Man {
        /// The directory to write them to (created if missing).
        dir: PathBuf,
    },
    /// The completion script of SHELL, to standard output.
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: Shell,
    },
}

/// The options of every measuring command.
#[derive(Args, Clone)]
pub struct Common {
    /// Device node.
    #[arg(long, default_value = "/dev/rtlat")]
    pub device: PathBuf,
    /// How long to measure (e.g. 30s, 5m, 1h); default until Ctrl-C.
    #[arg(short, long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// CPUs to measure on (list and ranges, e.g. 0-3,6); default all online.
    #[arg(short, long)]
    pub cpus: Option<String>,
    /// Period: µs from 100 (a number below 100 is refused: cyclictest's -p is a priority, rtlat's
    /// is -P), or with a unit from 50us to 1s (e.g. 50us, 2ms).
    #[arg(short, long, default_value = "1000", value_parser = parse_period)]
    pub period: u64,
    /// SCHED_FIFO priority of the measuring threads (1-99; SCHED_OTHER is refused).
    #[arg(short = 'P', long, default_value_t = 95, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub priority: u32,
    /// Stages to measure: irq always; thread unless only irq is listed (an irq-only run: the
    /// timer interrupt records each activation itself, no thread is woken, the lowest cost for
    /// long monitoring); user with --user.
    #[arg(long, value_delimiter = ',', default_value = "irq,thread")]
    pub stages: Vec<String>,
    /// Measure the user stage: one pinned, mlock'ed SCHED_FIFO thread per CPU blocks in the device.
    #[arg(short, long)]
    pub user: bool,
    /// Stop when a stage exceeds a latency, STAGE=µs (e.g. thread=100); repeatable.
    #[arg(short = 'T', long = "threshold", value_parser = parse_threshold)]
    pub thresholds: Vec<Threshold>,
    /// With a threshold: call tracing_off() so a trace running alongside keeps the culprit.
    #[arg(long)]
    pub tracing_off: bool,
    /// Explain late activations: every activation whose thread latency is at least US µs (0, the
    /// default: every one) is split into what ran on its CPU from its expected expiry (tasks, IRQs,
    /// softirqs, hrtimers, from the kernel's tracepoints, only while measuring); the summary and
    /// the JSON rank the sources per CPU and analyse the worst activation. Needs the thread stage.
    #[arg(long, value_name = "US", num_args = 0..=1, default_missing_value = "0")]
    pub blame: Option<u32>,
    /// At a threshold trip, save a trace of the run's own to FILE (as rtla timerlat -t): a
    /// tracefs instance on the measured CPUs with the scheduler, IRQ, softirq and hrtimer events,
    /// on the records' clock, stopped at the trip. A run that does not trip saves none.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "rtlat_trace.txt")]
    pub trace: Option<PathBuf>,
    /// --trace's buffer per CPU, in KiB.
    #[arg(long, value_name = "KIB", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=1048576))]
    pub trace_buffer_size: u32,
    /// Warm up first for this long (e.g. 5 or 5s): a session of its own, without thresholds,
    /// whose records and statistics are discarded; --duration is then measured after it.
    #[arg(long, default_value = "0", value_parser = parse_warm_up)]
    pub warm_up: Duration,
    /// Print nanoseconds instead of microseconds.
    #[arg(long)]
    pub ns: bool,
    /// No live output, only the final summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Write a JSON report.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write an SVG plot.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Hold /dev/cpu_dma_latency at US µs during the run, 0 to 2000000000 (default: leave it,
    /// and report it).
    #[arg(long, value_name = "US", allow_negative_numbers = true, value_parser = parse_dma_latency)]
    pub dma_latency: Option<i32>,
    /// Records per CPU ring in the kernel (a power of two); default 4096, fewer past 256 CPUs
    /// so that all rings fit the kernel's 64 MiB.
    #[arg(long, value_parser = parse_ring)]
    pub ring: Option<u32>,
    /// Attach to the running session another process owns (an application measured with the
    /// client library, Documentation/rtlat-client.rst): show and report its CPUs and stages
    /// while it runs, reading its records, without configuring, starting or stopping it. Ends
    /// when that session ends, at --duration, or on Ctrl-C.
    #[arg(long, conflicts_with_all = ["cpus", "period", "priority", "ring", "user", "thresholds", "tracing_off", "warm_up", "stages", "dma_latency", "blame"])]
    pub attach: bool,
    #[command(flatten)]
    pub ci: CiArgs,
}

/// The options for unattended and long runs: gates evaluated at the end,
/// status lines, the raw records, where the tool's own threads run.
#[derive(Args, Clone, Default)]
pub struct CiArgs {
    /// Fail the run (exit 4) if EXPR holds at the end, e.g. thread.p99.99>100us, irq.max>=50us,
    /// user.avg>20us: STAGE.STAT OP VALUE UNIT with STAT min, avg, max or pNN[.NN], OP >, >=,
    /// <, <=, UNIT ns, us, ms; on every CPU; repeatable.
    #[arg(long = "fail-if", value_name = "EXPR", value_parser = crate::gate::parse)]
    pub fail_if: Vec<crate::gate::Gate>,
    /// Fail the run (exit 4) if more than N periods were missed, all CPUs together.
    #[arg(long, value_name = "N")]
    pub max_missed: Option<u64>,
    /// Fail the run (exit 4) if more than N records were dropped, all CPUs together.
    #[arg(long, value_name = "N")]
    pub max_dropped: Option<u64>,
    /// Print a status line to stderr every SECS (e.g. 60, 10s, 5m), for logs without a terminal;
    /// replaces the live view. SIGUSR1 prints the current summary to stderr at any time.
    #[arg(long, value_name = "SECS", value_parser = parse_duration)]
    pub interval: Option<Duration>,
    /// CPUs for the tool's own threads (the reader, the status loop); default the online CPUs
    /// not measured (all if every one is).
    #[arg(long, value_name = "CPUS")]
    pub housekeeping: Option<String>,
    /// Write every record of the measured session to FILE as it came (see --raw-format).
    #[arg(long, value_name = "FILE")]
    pub raw: Option<PathBuf>,
    /// Format of --raw: csv (a header line with the fields, a line per record) or bin (a 32-byte
    /// header and the UAPI records as read).
    #[arg(long, value_enum, default_value_t = crate::raw::Format::Csv, requires = "raw")]
    pub raw_format: crate::raw::Format,
}

impl CiArgs {
    /// The run-to-end gates these options ask for.
    pub fn gates(&self) -> crate::gate::Gates {
        crate::gate::Gates {
            fail_if: self.fail_if.clone(),
            max_missed: self.max_missed,
            max_dropped: self.max_dropped,
        }
    }
}

/// The options of `rtlat hist`.
#[derive(Args, Clone)]
pub struct HistArgs {
    #[command(flatten)]
    pub common: Common,
    /// Histogram bucket size, in the output unit.
    #[arg(short, long, default_value_t = 1)]
    pub bucket_size: u64,
    /// Number of histogram entries.
    #[arg(short = 'E', long, default_value_t = 256)]
    pub entries: usize,
    /// Print all-zero rows too.
    #[arg(long)]
    pub with_zeros: bool,
}

/// The options of `rtlat monitor`: the measurement's (as `rtlat run`, an
/// irq-only session by default), where its history and metrics go, and
/// what a threshold trip does.
#[derive(Args, Clone)]
#[command(group(ArgGroup::new("an_end").args(["duration", "stop_at_trip"]).multiple(true)))]
pub struct MonitorArgs {
    /// Device node.
    #[arg(long, default_value = "/dev/rtlat")]
    pub device: PathBuf,
    /// How long to monitor (e.g. 1h, 7d); default until SIGTERM or Ctrl-C.
    #[arg(short, long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// CPUs to measure on (list and ranges, e.g. 2-3); default all online.
    #[arg(short, long)]
    pub cpus: Option<String>,
    /// Period: µs from 100, or with a unit from 50us to 1s (e.g. 50us, 2ms).
    #[arg(short, long, default_value = "1000", value_parser = parse_period)]
    pub period: u64,
    /// SCHED_FIFO priority of the measuring threads (1-99).
    #[arg(short = 'P', long, default_value_t = 95, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub priority: u32,
    /// Stages to measure; by default irq only (the timer interrupt records each activation
    /// itself: no thread woken, the lowest cost); irq,thread and irq,thread,user as for run.
    #[arg(long, value_delimiter = ',', default_value = "irq")]
    pub stages: Vec<String>,
    /// Measure the user stage (with the thread stage).
    #[arg(short, long)]
    pub user: bool,
    /// A trip when a stage exceeds a latency, STAGE=µs (e.g. irq=50); repeatable. The monitor
    /// runs the --on-threshold actions and goes on measuring (unless --stop-at-trip).
    #[arg(short = 'T', long = "threshold", value_parser = parse_threshold)]
    pub thresholds: Vec<Threshold>,
    /// What a trip does, as rtla's --on-threshold: trace[,file=PATH] (tracing is stopped at the
    /// trip, the trace buffer copied to PATH.N, N the trip's number, and tracing restarted),
    /// shell,command=CMD (run by sh -c with RTLAT_TRIP_CPU, _STAGE, _NS, _SEQ, _NUMBER set);
    /// repeatable, in order.
    #[arg(long = "on-threshold", value_name = "ACTION", value_parser = action::parse)]
    pub on_threshold: Vec<action::Action>,
    /// Stop at the first trip (exit 3) instead of going on.
    #[arg(long)]
    pub stop_at_trip: bool,
    /// A snapshot every SECS (e.g. 60, 10s, 5m): a line of --history, the --textfile.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_duration)]
    pub interval: Duration,
    /// Append a JSON line per interval to FILE (the histogram's delta, percentiles, max with
    /// its time and CPU, missed, dropped, trips); SIGHUP reopens it.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Rotate --history before it grows beyond BYTES (with a unit k, M, G: 16M).
    #[arg(long, value_name = "BYTES", default_value = "16M", value_parser = parse_size)]
    pub history_size: u64,
    /// Rotated files kept (FILE.1 the newest, FILE.N the oldest); 0 keeps none.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub history_keep: u32,
    /// Serve GET /metrics (OpenMetrics or Prometheus text) on ADDR:PORT, or PORT on 127.0.0.1.
    #[arg(long, value_name = "ADDR:PORT", value_parser = parse_listen)]
    pub listen: Option<SocketAddr>,
    /// After the --duration (or --stop-at-trip's trip), serve the final metrics this long
    /// (e.g. 30s) so that a scraper takes them; SIGTERM or Ctrl-C ends it sooner. The port
    /// stays taken meanwhile.
    #[arg(long, value_name = "TIME", requires_all = ["listen", "an_end"], value_parser = parse_duration)]
    pub linger: Option<Duration>,
    /// Write DIR/rtlat.prom every interval for node_exporter's textfile collector.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
    /// The latency histogram's `le` bounds in the metrics: fine (217, 6 % apart below 1 ms), coarse
    /// (19, the first fine one at or above each of 1, 2, 5, 10 µs ... 1 s), or boundaries of the
    /// kernel's buckets with their unit, comma-separated (e.g. 10.24us,51.2us,102.4us). Each
    /// count is exact.
    #[arg(long, value_name = "BUCKETS", default_value = "fine", value_parser = buckets::parse)]
    pub buckets: buckets::Buckets,
    /// CPUs for the tool's own threads; default the online CPUs not measured.
    #[arg(long, value_name = "CPUS")]
    pub housekeeping: Option<String>,
    /// Records per CPU ring in the kernel (a power of two); default 4096, fewer past 256 CPUs
    /// so that all rings fit the kernel's 64 MiB.
    #[arg(long, value_parser = parse_ring)]
    pub ring: Option<u32>,
    /// Print nanoseconds instead of microseconds (SIGUSR1's summary).
    #[arg(long)]
    pub ns: bool,
}

impl MonitorArgs {
    /// The options as those of a measuring command, for [`crate::plan::Plan`].
    pub fn common(&self) -> Common {
        Common {
            device: self.device.clone(),
            duration: self.duration,
            cpus: self.cpus.clone(),
            period: self.period,
            priority: self.priority,
            stages: self.stages.clone(),
            user: self.user,
            thresholds: self.thresholds.clone(),
            tracing_off: self.on_threshold.iter().any(|a| a.stops_tracing()),
            blame: None,
            trace: None,
            trace_buffer_size: 4096,
            warm_up: Duration::ZERO,
            ns: self.ns,
            quiet: true,
            json: None,
            svg: None,
            dma_latency: None,
            ring: self.ring,
            attach: false,
            ci: CiArgs {
                housekeeping: self.housekeeping.clone(),
                ..Default::default()
            },
        }
    }
}

/// `--listen`: `ADDR:PORT`, `[V6ADDR]:PORT`, `:PORT` or `PORT` (on 127.0.0.1).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let bad = || format!("bad address '{s}': ADDR:PORT, e.g. 127.0.0.1:19101, or a port");
    let port_only = s.strip_prefix(':').unwrap_or(s);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().map_err(|_| bad())
}

/// A size in bytes, with an optional unit k, M or G (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (num, mult) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let v: u64 = num
        .parse()
        .map_err(|_| format!("bad size '{s}' (bytes, or with k, M, G)"))?;
    match v.checked_mul(mult) {
        Some(0) => Err(format!("size '{s}' must be above 0")),
        Some(n) => Ok(n),
        None => Err(format!("size '{s}' is too large")),
    }
}

/// `--threshold STAGE=µs`: stop when `stage` exceeds `ns`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold {
    pub stage: Stage,
    /// The latency, in ns.
    pub ns: u64,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, mult) = match s.chars().last() {
        Some('s') => (&s[..s.len() - 1], 1.0),
        Some('m') => (&s[..s.len() - 1], 60.0),
        Some('h') => (&s[..s.len() - 1], 3600.0),
        Some('d') => (&s[..s.len() - 1], 86400.0),
        _ => (s, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad duration '{s}' (e.g. 30s, 5m, 1h)"))?;
    if v.is_nan() || v <= 0.0 {
        return Err(format!("bad duration '{s}'"));
    }
    Duration::try_from_secs_f64(v * mult).map_err(|_| format!("duration '{s}' is too long"))
}

/// `--warm-up`: a duration as for `--duration`, or 0 for none.
fn parse_warm_up(s: &str) -> Result<Duration, String> {
    if s.trim_end_matches(['s', 'm', 'h', 'd']).parse::<f64>() == Ok(0.0) {
        return Ok(Duration::ZERO);
    }
    parse_duration(s)
}

/// The stage a name of `--stages` or `--threshold` gives.
pub fn parse_stage(name: &str) -> Result<Stage, String> {
    [Stage::Irq, Stage::Thread, Stage::User]
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| format!("unknown stage '{name}' (irq, thread, user)"))
}

fn parse_threshold(s: &str) -> Result<Threshold, String> {
    let (stage, us) = s
        .split_once('=')
        .ok_or_else(|| format!("threshold '{s}': use STAGE=µs, e.g. thread=100"))?;
    let us: u64 = us
        .parse()
        .map_err(|_| format!("threshold '{s}': bad number"))?;
    if us == 0 {
        return Err(format!("threshold '{s}': must be above 0"));
    }
    Ok(Threshold {
        stage: parse_stage(stage)?,
        ns: us * 1000,
    })
}

/// Exit status of a command line clap refused: [`exit::USAGE`], or 0 for
/// --help and --version.
pub fn usage_exit(e: &clap::Error) -> u8 {
    if e.use_stderr() {
        exit::USAGE
    } else {
        exit::OK
    }
}

/// `--ring`: records per CPU ring, a power of two the kernel takes.
fn parse_ring(s: &str) -> Result<u32, String> {
    let bad = || format!("'{s}' records: a power of two from 1 to {}", uapi::RING_MAX);
    let n: u32 = s.trim().parse().map_err(|_| bad())?;
    if !n.is_power_of_two() || n > uapi::RING_MAX {
        return Err(bad());
    }
    Ok(n)
}

/// The kernel's CPU latency limit when nothing asks for one, µs
/// (`PM_QOS_CPU_LATENCY_DEFAULT_VALUE`).
const DMA_LATENCY_MAX: i32 = 2_000_000_000;

/// `--dma-latency`: a limit in µs the kernel takes as such. It would take a
/// negative one too: -1 as no limit at all, others as one below zero.
fn parse_dma_latency(s: &str) -> Result<i32, String> {
    let bad = || format!("'{s}' µs: a CPU DMA latency limit from 0 to {DMA_LATENCY_MAX} µs");
    let us: i32 = s.trim().parse().map_err(|_| bad())?;
    if !(0..=DMA_LATENCY_MAX).contains(&us) {
        return Err(bad());
    }
    Ok(us)
}

/// `--period`: a bare number is µs and must be 100 or more (`-p 95` is
/// cyclictest's priority, never a 95 µs period); with a unit (`50us`,
/// `2ms`, `1s`) anything from 50 µs to 1 s.
fn parse_period(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad period '{s}': µs, e.g. 1000, or with a unit, e.g. 50us, 2ms"))?;
    let us = match unit {
        "" => {
            if v < 100.0 {
                return Err(format!(
                    "-p/--period is the period in µs, and {s} µs is too short to be meant: \
                     for a SCHED_FIFO priority use -P/--priority {s}; \
                     for a period below 100 µs give its unit, e.g. --period {s}us"
                ));
            }
            v
        }
        "us" | "µs" => v,
        "ms" => v * 1e3,
        "s" => v * 1e6,
        _ => return Err(format!("bad period '{s}': unit '{unit}' (us, ms, s)")),
    };
    if us.fract() != 0.0 || !(50.0..=1_000_000.0).contains(&us) {
        return Err(format!(
            "period '{s}' is not a whole number of µs from 50 µs to 1 s"
        ));
    }
    Ok(us as u64)
}

/// Options typed by reflex with another meaning: `-h VALUE` is cyclictest's
/// histogram, but `-h` is `--help` here and would print the help and exit 0
/// instead of measuring. `-h N`, `-hN` and `-h=N` with a number are refused
/// before clap sees them (a usage error). `args` includes the
/// program name.
pub fn refuse_reflexes(args: &[String]) -> Result<(), String> {
    // The front ends take their peers' -h (cyclictest's histogram, rtla's
    // help) as their peers do.
    let front_end = |a: &String| a == "cyclictest" || a == "timerlat";
    if args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .is_some_and(front_end)
    {
        return Ok(());
    }
    for (i, a) in args.iter().enumerate().skip(1) {
        if a == "--" {
            break;
        }
        let value = match a.strip_prefix("-h") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(rest) => Some(rest.trim_start_matches('=')),
            None => None,
        };
        // cyclictest's -h takes a number of µs.
        if let Some(v) = value.filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())) {
            return Err(format!(
                "'-h {v}': -h is --help and takes no value; for a histogram use 'rtlat hist' \
                 (-E/--entries {v} entries of -b/--bucket-size 1 µs)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_and_size_values() {
        assert_eq!(
            parse_listen("19101"),
            Ok("127.0.0.1:19101".parse().unwrap())
        );
        assert_eq!(
            parse_listen(":19101"),
            Ok("127.0.0.1:19101".parse().unwrap())
        );
        assert_eq!(
            parse_listen("0.0.0.0:80"),
            Ok("0.0.0.0:80".parse().unwrap())
        );
        assert_eq!(
            parse_listen("[::1]:19101"),
            Ok("[::1]:19101".parse().unwrap())
        );
        for bad in ["", "host:19101", "1.2.3.4", "99999", "1.2.3.4:x"] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        for bad in ["0", "-1", "M", "1T", "99999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ring_values() {
        assert_eq!(parse_ring("1"), Ok(1));
        assert_eq!(parse_ring("4096"), Ok(4096));
        assert_eq!(parse_ring("1048576"), Ok(1 << 20));
        for bad in ["0", "1000", "2097152", "-4", "4k", ""] {
            let e = parse_ring(bad).unwrap_err();
            assert!(e.contains("a power of two from 1 to 1048576"), "{bad}: {e}");
        }
    }

    #[test]
    fn dma_latency_values() {
        assert_eq!(parse_dma_latency("0"), Ok(0));
        assert_eq!(parse_dma_latency("10"), Ok(10));
        assert_eq!(parse_dma_latency("2000000000"), Ok(2_000_000_000));
        for bad in ["-1", "-5", "2000000001", "99999999999", "10us", ""] {
            let e = parse_dma_latency(bad).unwrap_err();
            assert!(
                e.contains("a CPU DMA latency limit from 0 to 2000000000 µs"),
                "{bad}: {e}"
            );
        }
        // A negative value after the option is its value, refused in words.
        let Err(e) = Cli::try_parse_from(["rtlat", "run", "--dma-latency", "-1"]) else {
            panic!("--dma-latency -1 parsed");
        };
        assert_eq!(usage_exit(&e), 2);
        assert!(
            e.to_string().contains("'-1' µs: a CPU DMA latency limit"),
            "{e}"
        );
    }

    #[test]
    fn warm_up_values() {
        assert_eq!(parse_warm_up("0"), Ok(Duration::ZERO));
        assert_eq!(parse_warm_up("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_warm_up("0.0m"), Ok(Duration::ZERO));
        assert_eq!(parse_warm_up("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_warm_up("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_warm_up("1m"), Ok(Duration::from_secs(60)));
        for bad in ["-1", "x", "", "nan", "1e300"] {
            assert!(parse_warm_up(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("1e300h").is_err());
    }

    #[test]
    fn refused_command_lines_exit_2() {
        let exit = |args: &[&str]| match Cli::try_parse_from(args) {
            Ok(_) => None,
            Err(e) => Some(usage_exit(&e)),
        };
        assert_eq!(exit(&["rtlat", "run", "--warm-up=-1"]), Some(2));
        assert_eq!(exit(&["rtlat", "run", "--period", "10"]), Some(2));
        assert_eq!(exit(&["rtlat", "run", "--threshold", "irq"]), Some(2));
        assert_eq!(
            exit(&["rtlat", "run", "--fail-if", "thread.p99>10"]),
            Some(2)
        );
        assert_eq!(exit(&["rtlat", "frobnicate"]), Some(2));
        assert_eq!(exit(&["rtlat", "--help"]), Some(0));
        assert_eq!(exit(&["rtlat", "--version"]), Some(0));
        assert_eq!(exit(&["rtlat", "run", "--warm-up", "2s"]), None);
        // --attach watches another's session: nothing that would change it.
        assert_eq!(exit(&["rtlat", "run", "--attach", "-d", "1s"]), None);
        for bad in [["--user", ""], ["--cpus", "1"], ["--threshold", "irq=5"]] {
            let argv: Vec<&str> = ["rtlat", "run", "--attach"]
                .into_iter()
                .chain(bad.into_iter().filter(|a| !a.is_empty()))
                .collect();
            assert_eq!(exit(&argv), Some(2), "{argv:?}");
        }
        // --linger serves the final metrics: nothing to linger on without --listen.
        assert_eq!(exit(&["rtlat", "monitor", "--linger", "10s"]), Some(2));
        // Nor without an end: a monitor stopped by a signal does not linger.
        let linger = ["rtlat", "monitor", "--linger", "10s", "--listen", "19101"];
        assert_eq!(exit(&linger), Some(2));
        assert_eq!(
            exit(&["rtlat", "monitor", "--linger", "x", "--listen", "19101", "-d", "1h"]),
            Some(2)
        );
        for end in [
            &["-d", "1h"][..],
            &["--stop-at-trip"],
            &["-d", "1h", "--stop-at-trip"],
        ] {
            let args: Vec<&str> = linger.iter().chain(end).copied().collect();
            assert_eq!(exit(&args), None, "{args:?}");
        }
    }

    #[test]
    fn monitor_buckets_are_fine_unless_asked() {
        let b = |args: &[&str]| {
            let argv = ["rtlat", "monitor"].iter().chain(args).copied();
            match Cli::try_parse_from(argv) {
                Ok(Cli {
                    cmd: Cmd::Monitor(m),
                }) => Ok(m.buckets),
                Ok(_) => unreachable!(),
                Err(e) => Err((usage_exit(&e), e.to_string())),
            }
        };
        assert_eq!(b(&[]), Ok(buckets::Buckets::Fine));
        assert_eq!(b(&["--buckets", "coarse"]), Ok(buckets::Buckets::Coarse));
        assert_eq!(
            b(&["--buckets", "51.2us,10.24us"]),
            Ok(buckets::Buckets::List(vec![10_240, 51_200]))
        );
        let (status, msg) = b(&["--buckets", "50us"]).unwrap_err();
        assert_eq!(status, 2);
        assert!(
            msg.contains("'50us' is no boundary of the kernel's histogram buckets; the nearest are 49.664us and 50.176us"),
            "{msg}"
        );
        // metrics-example's percentiles have no buckets: --buckets with
        // them is refused, not ignored.
        let example = |args: &[&str]| {
            let argv = ["rtlat", "metrics-example"].iter().chain(args).copied();
            Cli::try_parse_from(argv).map_err(|e| usage_exit(&e))
        };
        assert!(example(&["--percentiles"]).is_ok());
        assert!(example(&["--buckets", "coarse"]).is_ok());
        assert_eq!(
            example(&["--percentiles", "--buckets", "coarse"]).err(),
            Some(2)
        );
    }

    #[test]
    fn period_is_never_a_priority() {
        let p = |args: &[&str]| {
            let argv = ["rtlat", "run"].iter().chain(args).copied();
            match Cli::try_parse_from(argv) {
                Ok(Cli { cmd: Cmd::Run(c) }) => Ok(c.period),
                Ok(_) => unreachable!(),
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(p(&[]), Ok(1000));
        assert_eq!(p(&["-p", "200"]), Ok(200));
        assert_eq!(p(&["-p", "100"]), Ok(100));
        assert_eq!(p(&["--period", "50us"]), Ok(50));
        assert_eq!(p(&["-p", "2ms"]), Ok(2000));
        assert_eq!(p(&["-p", "1s"]), Ok(1_000_000));
        let err = p(&["-p", "95"]).unwrap_err();
        assert!(
            err.contains("-P/--priority 95") && err.contains("--period 95us"),
            "{err}"
        );
        for bad in ["99", "40us", "2s", "1.5us", "x", "10m"] {
            assert!(p(&["-p", bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn h_with_a_value_is_refused() {
        let r = |args: &str| {
            let v: Vec<String> = args.split_whitespace().map(String::from).collect();
            refuse_reflexes(&v)
        };
        let err = r("rtlat run -h 100").unwrap_err();
        assert!(err.contains("'-h 100'") && err.contains("--help") && err.contains("rtlat hist"));
        assert!(r("rtlat run -h100").unwrap_err().contains("'-h 100'"));
        assert!(r("rtlat run -h=100").unwrap_err().contains("'-h 100'"));
        assert_eq!(r("rtlat run -h"), Ok(()));
        assert_eq!(r("rtlat -h run"), Ok(()));
        assert_eq!(r("rtlat run -d 5s -h --json x"), Ok(()));
        assert_eq!(r("rtlat run --help"), Ok(()));
        assert_eq!(r("rtlat run -- -h 100"), Ok(()));
        assert_eq!(r("rtlat cyclictest -q -h 100"), Ok(()));
        assert_eq!(r("rtlat timerlat hist -h"), Ok(()));
    }
}
