// SPDX-License-Identifier: GPL-2.0

//! The command line: clap's definitions of every subcommand and option, the
//! parsers of their values, and the exit status of a refused command line.
//! What a measuring command does with its options is [`crate::plan`]'s.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand};
use rtcore::uapi::Stage;

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
    0  the run completed and no threshold was exceeded
    1  error (module not loaded, permission, bad arguments, device busy, ...)
    2  a threshold (--threshold) was exceeded; the run stopped there

EXAMPLES
    rtlat run --duration 1m --cpus 0-3 --priority 95
    rtlat run --user --duration 10m --threshold user=100 --json run.json --svg run.svg
    rtlat hist --duration 30s --period 200 --entries 100
    rtlat check-json run.json";

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
    /// Check that a JSON report parses against this tool's schema.
    CheckJson {
        /// The report.
        file: PathBuf,
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
    /// Period in µs (50 to 1000000).
    #[arg(short, long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(50..=1_000_000))]
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
    /// Hold /dev/cpu_dma_latency at µs during the run (default: leave it, and report it).
    #[arg(long)]
    pub dma_latency: Option<i32>,
    /// Records per CPU ring in the kernel (power of two).
    #[arg(long, default_value_t = 4096)]
    pub ring: u32,
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

/// Exit status of a command line clap refused: 1 as for any other error (2
/// says a threshold was exceeded), 0 for --help and --version.
pub fn usage_exit(e: &clap::Error) -> u8 {
    u8::from(e.use_stderr())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn refused_command_lines_exit_1() {
        let exit = |args: &[&str]| match Cli::try_parse_from(args) {
            Ok(_) => None,
            Err(e) => Some(usage_exit(&e)),
        };
        assert_eq!(exit(&["rtlat", "run", "--warm-up=-1"]), Some(1));
        assert_eq!(exit(&["rtlat", "run", "--period", "10"]), Some(1));
        assert_eq!(exit(&["rtlat", "run", "--threshold", "irq"]), Some(1));
        assert_eq!(exit(&["rtlat", "frobnicate"]), Some(1));
        assert_eq!(exit(&["rtlat", "--help"]), Some(0));
        assert_eq!(exit(&["rtlat", "--version"]), Some(0));
        assert_eq!(exit(&["rtlat", "run", "--warm-up", "2s"]), None);
    }
}
