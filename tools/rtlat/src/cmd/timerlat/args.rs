// SPDX-License-Identifier: GPL-2.0

//! rtla timerlat's command line (Linux 7.3, `tools/tracing/rtla/src/cli.c`
//! and `cli_p.h`): its options, their ranges and checks, and their mapping
//! onto rtlat's: a native command line (options of `rtlat run`), the
//! thresholds, the house-keeping CPUs and what the output shows. rtla
//! options rtlat cannot honour are parsed, so that the refusal names them,
//! and refused.

use clap::{Args, Parser, Subcommand};
use rtcore::uapi::Stage;

use super::{common::thread_stage, hist::HistView, top::TopView};
use crate::{cli::Threshold, gate::Gate, sysinfo};

const AFTER_HELP: &str = "\
Measured with /dev/rtlat (no tracer): -u, the default as for rtla on a kernel
with timerlat_fd, shows rtlat's user thread and, as \"Ret user\", the response
time; -k its kernel thread.

Refused by name (exit 1), rtlat cannot honour them: -a/--auto, --aa-only,
-s/--stack, -t/--trace, -e/--event, --filter, --trigger, -C/--cgroup,
-U/--user-load, -A/--aligned, --deepest-idle-state, --trace-buffer-size,
--dump-tasks, --on-threshold, --on-end, --bpf-action, --stack-format,
-D/--debug; -P other than f:prio.

Exit status as rtla's: 0 done, 1 error, 2 a threshold (-i, -T) stopped the
run, 129 a refused command line (and -h); rtlat's own: 4 a --fail-if gate
failed (its stages are rtlat run's: with -u, user is the thread context).";

/// `rtlat timerlat`: rtla timerlat's command line.
#[derive(Parser, Debug)]
#[command(
    name = "timerlat",
    bin_name = "rtlat timerlat",
    no_binary_name = true,
    disable_version_flag = true,
    infer_long_args = true,
    disable_help_subcommand = true,
    subcommand_value_name = "MODE",
    subcommand_help_heading = "Modes",
    about = "rtla timerlat's command line and output, measured with /dev/rtlat",
    after_help = "If no MODE is given, the top mode is called, passing the arguments."
)]
pub struct Cli {
    #[command(subcommand)]
    pub mode: ModeArgs,
}

#[derive(Subcommand, Debug)]
pub enum ModeArgs {
    /// Prints the summary of the timer latency per CPU (rtla timerlat top).
    #[command(after_help = AFTER_HELP)]
    Top(TopArgs),
    /// Prints a histogram of the timer latencies (rtla timerlat hist).
    #[command(after_help = AFTER_HELP)]
    Hist(HistArgs),
}

/// The options of `rtlat timerlat top`.
#[derive(Args, Debug)]
pub struct TopArgs {
    #[command(flatten)]
    pub opts: Opts,
    /// Print only a summary at the end.
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,
    /// Refused: stop at <us>, printing only the auto analysis.
    #[arg(long, value_name = "us", hide = true)]
    pub aa_only: Option<String>,
}

/// The options of `rtlat timerlat hist`.
#[derive(Args, Debug)]
pub struct HistArgs {
    #[command(flatten)]
    pub opts: Opts,
    /// Set the histogram bucket size (default 1).
    #[arg(short, long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=999_999), help_heading = "Histogram Options")]
    pub bucket_size: u32,
    /// Set the number of entries of the histogram (default 256).
    #[arg(short = 'E', long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(10..=9_999_999), help_heading = "Histogram Options")]
    pub entries: u32,
    /// Ignore IRQ latencies.
    #[arg(long, help_heading = "Histogram Options")]
    pub no_irq: bool,
    /// Ignore thread latencies.
    #[arg(long, help_heading = "Histogram Options")]
    pub no_thread: bool,
    /// Do not print header.
    #[arg(long, help_heading = "Histogram Options")]
    pub no_header: bool,
    /// Do not print summary.
    #[arg(long, help_heading = "Histogram Options")]
    pub no_summary: bool,
    /// Do not print index.
    #[arg(long, help_heading = "Histogram Options")]
    pub no_index: bool,
    /// Print zero only entries.
    #[arg(long, help_heading = "Histogram Options")]
    pub with_zeros: bool,
}

/// A `-P` argument: `o:prio|r:prio|f:prio|d:runtime:period`.
#[derive(Clone, Debug, PartialEq)]
pub enum Priority {
    Fifo(u32),
    /// SCHED_RR, SCHED_OTHER or SCHED_DEADLINE, as given.
    Other(String),
}

/// The options `top` and `hist` share.
#[derive(Args, Debug)]
pub struct Opts {
    /// Timerlat period in us.
    #[arg(short, long, value_name = "us", help_heading = "Tracing Options",
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub period: Option<u64>,
    /// Stop trace if irq latency is higher than the argument in us.
    #[arg(short, long, value_name = "us", help_heading = "Tracing Options")]
    pub irq: Option<u64>,
    /// Stop trace if thread latency is higher than the argument in us.
    #[arg(short = 'T', long, value_name = "us", help_heading = "Tracing Options")]
    pub thread: Option<u64>,
    /// Run the tracer only on the given cpus.
    #[arg(short, long, value_name = "cpu-list", value_parser = cpu_set,
          help_heading = "CPU Configuration")]
    pub cpus: Option<CpuSet>,
    /// Run rtla control threads only on the given cpus.
    #[arg(short = 'H', long = "house-keeping", value_name = "cpu-list", value_parser = cpu_set,
          help_heading = "CPU Configuration")]
    pub house_keeping: Option<CpuSet>,
    /// Set scheduling parameters (rtlat: f:prio only).
    #[arg(short = 'P', long, value_name = "o:prio|r:prio|f:prio|d:runtime:period",
          value_parser = priority, help_heading = "Thread Configuration")]
    pub priority: Option<Priority>,
    /// Use rtla user-space threads instead of kernel-space timerlat threads.
    #[arg(short, long, help_heading = "Thread Configuration")]
    pub user_threads: bool,
    /// Use timerlat kernel-space threads instead of rtla user-space threads.
    #[arg(short, long, help_heading = "Thread Configuration")]
    pub kernel_threads: bool,
    /// Display data in nanoseconds.
    #[arg(short, long, help_heading = "Output")]
    pub nano: bool,
    /// Set /dev/cpu_dma_latency latency <us> to reduce exit from idle latency.
    #[arg(long, value_name = "us", help_heading = "System Tuning",
          value_parser = clap::value_parser!(i32).range(0..=10_000))]
    pub dma_latency: Option<i32>,
    /// Let the workload run for s seconds before collecting data.
    #[arg(
        long,
        value_name = "s",
        allow_negative_numbers = true,
        help_heading = "System Tuning"
    )]
    pub warm_up: Option<i32>,
    /// Disable auto-analysis, reducing rtla timerlat cpu usage.
    #[arg(long, help_heading = "Auto Analysis and Actions")]
    pub no_aa: bool,
    /// Set the duration of the session.
    #[arg(short, long, value_name = "time[s|m|h|d]", value_parser = seconds,
          help_heading = "General")]
    pub duration: Option<u64>,
    /// rtlat's gate (long only): exit status 4 if EXPR holds at the end, as
    /// rtlat run's, e.g. user.p99.99>100us; repeatable.
    #[arg(long = "fail-if", value_name = "EXPR", value_parser = crate::gate::parse,
          help_heading = "General")]
    pub fail_if: Vec<Gate>,

    /// Save the stopped trace to [file|timerlat_trace.txt] (rtlat's own
    /// trace instance, kept at a threshold trip).
    #[arg(short = 't', long, value_name = "file", num_args = 0..=1,
          default_missing_value = "timerlat_trace.txt")]
    trace: Option<String>,
    /// The trace's buffer size, in kB.
    #[arg(long, value_name = "kB")]
    trace_buffer_size: Option<String>,

    // Refused (see `refused`): parsed so that the refusal names them.
    #[arg(short = 'a', long = "auto", value_name = "us", hide = true)]
    auto: Option<String>,
    #[arg(short = 's', long, value_name = "us", hide = true)]
    stack: Option<String>,
    #[arg(short = 'e', long, value_name = "sys:event", hide = true)]
    event: Vec<String>,
    #[arg(long, hide = true)]
    filter: Vec<String>,
    #[arg(long, hide = true)]
    trigger: Vec<String>,
    #[arg(short = 'C', long, num_args = 0..=1, default_missing_value = "", hide = true)]
    cgroup: Option<String>,
    #[arg(short = 'U', long, hide = true)]
    user_load: bool,
    #[arg(short = 'A', long, value_name = "us", hide = true)]
    aligned: Option<String>,
    #[arg(long, allow_hyphen_values = true, hide = true)]
    deepest_idle_state: Option<String>,
    #[arg(long, hide = true)]
    dump_tasks: bool,
    #[arg(long, hide = true)]
    on_threshold: Vec<String>,
    #[arg(long, hide = true)]
    on_end: Vec<String>,
    #[arg(long, hide = true)]
    bpf_action: Option<String>,
    #[arg(long, hide = true)]
    stack_format: Option<String>,
    #[arg(short = 'D', long, hide = true)]
    debug: bool,
}

/// A `-c`/`-H` CPU list: as given, and its CPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuSet {
    pub list: String,
    pub cpus: Vec<u32>,
}

/// rtla's `parse_cpu_set()`: a list of CPUs and ranges, every one below the
/// number of CPUs configured.
fn cpu_set(s: &str) -> Result<CpuSet, String> {
    let bad = || format!("'{s}' is not a valid cpu set");
    let cpus = sysinfo::parse_cpu_list(s).map_err(|_| bad())?;
    // SAFETY: sysconf has no preconditions (glibc's get_nprocs_conf(), as rtla's nr_cpus).
    let configured = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as u32;
    if cpus.is_empty() || cpus.iter().any(|&c| c >= configured) {
        return Err(bad());
    }
    Ok(CpuSet {
        list: s.to_string(),
        cpus,
    })
}

/// rtla's `parse_seconds_duration()`: whole seconds, or minutes, hours,
/// days with m, h, d (s for seconds); not 0.
fn seconds(s: &str) -> Result<u64, String> {
    let bad = || format!("'{s}' is not a valid duration");
    let (num, mult) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult = match c.to_ascii_lowercase() {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86400,
                _ => return Err(bad()),
            };
            (&s[..i], mult)
        }
        _ => (s, 1),
    };
    match num.parse::<u64>() {
        Ok(n) if n > 0 => n.checked_mul(mult).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// rtla's `parse_prio()`, as far as rtlat needs: `f:prio` (1-99) is
/// honoured; `r:`, `o:` and `d:` are well-formed but refused later.
fn priority(s: &str) -> Result<Priority, String> {
    let bad = || format!("'{s}' is not a valid priority");
    let (kind, rest) = s.split_at_checked(1).ok_or_else(bad)?;
    let value = rest.strip_prefix(':').ok_or_else(bad)?;
    match kind.to_ascii_lowercase().as_str() {
        "f" | "r" => match value.parse::<u32>() {
            Ok(p @ 1..=99) if kind.eq_ignore_ascii_case("f") => Ok(Priority::Fifo(p)),
            Ok(1..=99) => Ok(Priority::Other(s.to_string())),
            _ => Err(bad()),
        },
        "o" => match value.parse::<i32>() {
            Ok(-20..=19) => Ok(Priority::Other(s.to_string())),
            _ => Err(bad()),
        },
        "d" if !value.is_empty() => Ok(Priority::Other(s.to_string())),
        _ => Err(bad()),
    }
}

/// Why a command line is not run.
#[derive(Debug)]
pub enum Refusal {
    /// rtla's option parser refuses it (or `-h`): clap's message, exit 129.
    Usage(clap::Error),
    /// rtla's `fatal()` checks, and the options rtlat cannot honour: exit 1.
    Fatal(String),
}

impl Refusal {
    /// The exit status, as rtla's: `usage_with_options()` exits 129 (also
    /// for `-h`), `fatal()` 1.
    pub fn status(&self) -> u8 {
        match self {
            Self::Usage(_) => 129,
            Self::Fatal(_) => 1,
        }
    }
}

/// What the output shows.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    Top(TopView),
    Hist(HistView),
}

/// A command line, mapped.
#[derive(Debug, PartialEq)]
pub struct Parsed {
    /// The same run as options of `rtlat run`.
    pub native: Vec<String>,
    /// `-i` and `-T`: rtla stops at a latency of `us` or more (whole µs),
    /// the device above a number of ns: `us` × 1000 − 1.
    pub thresholds: Vec<Threshold>,
    /// `-c`.
    pub cpus: Option<Vec<u32>>,
    pub view: View,
}

impl Opts {
    /// The first option given that rtlat cannot honour, and why.
    fn refused(&self) -> Option<(&'static str, &'static str)> {
        let no_trace = "rtlat reads its own records, there is no trace";
        let checks: [(bool, &str, &str); 15] = [
            (
                self.auto.is_some(),
                "-a/--auto",
                "it saves a trace and its auto analysis at the stop; stop at a thread latency with -T us",
            ),
            (self.stack.is_some(), "-s/--stack", "rtlat does not save stack traces"),
            (!self.event.is_empty(), "-e/--event", no_trace),
            (!self.filter.is_empty(), "--filter", no_trace),
            (!self.trigger.is_empty(), "--trigger", no_trace),
            (self.cgroup.is_some(), "-C/--cgroup", "rtlat does not move its threads to a cgroup"),
            (
                self.user_load,
                "-U/--user-load",
                "rtlat measures its own user threads (-u), not a workload of yours",
            ),
            (self.aligned.is_some(), "-A/--aligned", "rtlat's activations are not aligned across CPUs"),
            (
                self.deepest_idle_state.is_some(),
                "--deepest-idle-state",
                "rtlat does not change idle states (it reports them in rtlat run's JSON)",
            ),
            (self.dump_tasks, "--dump-tasks", "rtlat has no auto analysis"),
            (!self.on_threshold.is_empty(), "--on-threshold", "rtlat has no actions"),
            (!self.on_end.is_empty(), "--on-end", "rtlat has no actions"),
            (self.bpf_action.is_some(), "--bpf-action", "rtlat does not run BPF programs"),
            (self.stack_format.is_some(), "--stack-format", "rtlat does not save stack traces"),
            (self.debug, "-D/--debug", "rtlat has no debug output"),
        ];
        checks
            .into_iter()
            .find(|c| c.0)
            .map(|(_, name, why)| (name, why))
    }
}

fn refuse(name: &str, why: &str) -> Refusal {
    Refusal::Fatal(format!("rtlat timerlat: {name} is not supported: {why}"))
}

/// Parses `rtlat timerlat ARGS` (the arguments after `timerlat`).
pub fn parse<S: AsRef<str>>(argv: &[S]) -> Result<Parsed, Refusal> {
    // As rtla's timerlat_main(): no mode, or an option first: top.
    let mut a: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    match a.first() {
        None => a.insert(0, "top"),
        Some(&("-h" | "--help")) => {}
        Some(s) if s.starts_with('-') => a.insert(0, "top"),
        _ => {}
    }
    let cli = Cli::try_parse_from(a).map_err(Refusal::Usage)?;
    let (opts, extra) = match &cli.mode {
        ModeArgs::Top(t) => (&t.opts, t.aa_only.as_ref().map(|_| "--aa-only")),
        ModeArgs::Hist(h) => (&h.opts, None),
    };
    if let Some(name) = extra {
        return Err(refuse(name, "rtlat has no auto analysis"));
    }
    if let Some((name, why)) = opts.refused() {
        return Err(refuse(name, why));
    }
    if let Some(Priority::Other(p)) = &opts.priority {
        return Err(Refusal::Fatal(format!(
            "rtlat timerlat: -P/--priority {p} is not supported: rtlat's threads are SCHED_FIFO (f:prio)"
        )));
    }
    // rtla's fatal() checks, in its order.
    if let ModeArgs::Hist(h) = &cli.mode {
        if h.no_irq && h.no_thread {
            return Err(Refusal::Fatal(
                "no-irq and no-thread set, there is nothing to do here".into(),
            ));
        }
        if h.no_index && !h.with_zeros {
            return Err(Refusal::Fatal(
                "no-index set with with-zeros is not set - it does not make sense".into(),
            ));
        }
    }
    if opts.kernel_threads && opts.user_threads {
        return Err(Refusal::Fatal(
            "--kernel-threads and --user-threads are mutually exclusive!".into(),
        ));
    }

    // rtla measures with its user threads wherever the kernel has
    // timerlat_fd (Linux 6.5 on), -u or not; -k for kernel threads. rtlat's
    // user stage is always there.
    let user = !opts.kernel_threads;
    let mut native: Vec<String> = Vec::new();
    let mut arg = |k: &str, v: Option<String>| {
        native.push(k.into());
        native.extend(v);
    };
    if let Some(p) = opts.period {
        arg("--period", Some(p.to_string()));
    }
    // rtla's trace of the stop: rtlat's own trace instance, kept at a trip.
    if let Some(f) = &opts.trace {
        arg("--trace", Some(f.clone()));
    }
    if let Some(kb) = &opts.trace_buffer_size {
        arg("--trace-buffer-size", Some(kb.clone()));
    }
    if let Some(c) = &opts.cpus {
        arg("--cpus", Some(c.list.clone()));
    }
    // rtla's house-keeping: with -H the tool's own threads run there; with
    // -c alone off the measured CPUs (auto_house_keeping()), the native
    // tool's default.
    if let Some(h) = &opts.house_keeping {
        arg("--housekeeping", Some(h.list.clone()));
    }
    if let Some(Priority::Fifo(p)) = opts.priority {
        arg("--priority", Some(p.to_string()));
    }
    if user {
        arg("--user", None);
    }
    if opts.nano {
        arg("--ns", None);
    }
    if let Some(d) = opts.dma_latency {
        arg("--dma-latency", Some(d.to_string()));
    }
    if let Some(w) = opts.warm_up.filter(|&w| w > 0) {
        arg("--warm-up", Some(format!("{w}s")));
    }
    if let Some(d) = opts.duration {
        arg("--duration", Some(format!("{d}s")));
    }
    let quiet = match &cli.mode {
        ModeArgs::Top(t) => t.quiet,
        // rtla's hist shows nothing until the end.
        ModeArgs::Hist(_) => true,
    };
    if quiet {
        arg("--quiet", None);
    }
    for g in &opts.fail_if {
        arg("--fail-if", Some(g.expr.clone()));
    }

    // 0 is rtla's "no threshold".
    let thresholds = [(opts.irq, Stage::Irq), (opts.thread, thread_stage(user))]
        .into_iter()
        .filter_map(|(us, stage)| {
            us.filter(|&us| us > 0).map(|us| Threshold {
                stage,
                ns: us.saturating_mul(1000) - 1,
            })
        })
        .collect();

    let view = match &cli.mode {
        ModeArgs::Top(t) => View::Top(TopView {
            user,
            ns: opts.nano,
            quiet: t.quiet,
            pretty: false,
            no_aa: opts.no_aa,
        }),
        ModeArgs::Hist(h) => View::Hist(HistView {
            user,
            ns: opts.nano,
            bucket_size: u64::from(h.bucket_size),
            entries: h.entries as usize,
            no_irq: h.no_irq,
            no_thread: h.no_thread,
            no_header: h.no_header,
            no_summary: h.no_summary,
            no_index: h.no_index,
            with_zeros: h.with_zeros,
            no_aa: opts.no_aa,
        }),
    };
    Ok(Parsed {
        native,
        thresholds,
        cpus: opts.cpus.as_ref().map(|c| c.cpus.clone()),
        view,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The `--duration` the native command line got.
    fn native_duration(p: &Parsed) -> Option<Duration> {
        let i = p.native.iter().position(|a| a == "--duration")?;
        let s = p.native[i + 1].strip_suffix('s')?;
        s.parse().ok().map(Duration::from_secs)
    }

    fn parse_str(s: &str) -> Result<Parsed, Refusal> {
        parse(&s.split_whitespace().collect::<Vec<_>>())
    }

    fn ok(s: &str) -> Parsed {
        match parse_str(s) {
            Ok(p) => p,
            Err(e) => panic!("{s}: {e:?}"),
        }
    }

    /// The message of a fatal refusal (exit 1).
    fn fatal(s: &str) -> String {
        match parse_str(s) {
            Err(Refusal::Fatal(m)) => m,
            other => panic!("{s}: {other:?}"),
        }
    }

    /// clap's message of a usage refusal (exit 129).
    fn usage(s: &str) -> String {
        match parse_str(s) {
            Err(Refusal::Usage(e)) => e.to_string(),
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn top_maps_onto_rtlat_run() {
        // User threads unless -k, as rtla on a kernel with timerlat_fd.
        let p = ok("top -d 2s -c 0 -q");
        assert_eq!(
            p.native,
            ["--cpus", "0", "--user", "--duration", "2s", "--quiet"]
        );
        assert_eq!(p.cpus, Some(vec![0]));
        assert!(p.thresholds.is_empty());
        assert_eq!(
            p.view,
            View::Top(TopView {
                user: true,
                ns: false,
                quiet: true,
                pretty: false,
                no_aa: false
            })
        );
        // rtla timerlat without a mode, or with an option first, is top.
        assert_eq!(ok("-d 2 -q").native, p.native[2..]);
        assert!(matches!(ok("").view, View::Top(_)));
        assert_eq!(
            native_duration(&ok("top -d 1m")),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            native_duration(&ok("top -d 2h")),
            Some(Duration::from_secs(7200))
        );
        assert_eq!(
            native_duration(&ok("top --duration=3d")),
            Some(Duration::from_secs(259200))
        );
        // -t: rtlat's own trace, kept at a trip, in rtla's default file.
        let t = |s: &str| {
            let n = ok(s).native;
            let i = n.iter().position(|a| a == "--trace").unwrap();
            let end = n[i..]
                .iter()
                .position(|a| a == "--quiet")
                .map_or(n.len(), |k| i + k);
            n[i..end].to_vec()
        };
        assert_eq!(t("top -k -T 50 -t"), ["--trace", "timerlat_trace.txt"]);
        assert_eq!(
            t("hist -k -T 50 --trace=out.txt --trace-buffer-size 512"),
            ["--trace", "out.txt", "--trace-buffer-size", "512"]
        );
        // Long options abbreviated, as rtla's parser takes them.
        assert_eq!(
            native_duration(&ok("top --dur 5")),
            Some(Duration::from_secs(5))
        );

        let p = ok("top -u -p 200 -P f:90 -n --dma-latency 0 --warm-up 3 -H 0 -i 30 -T 50 --no-aa");
        assert_eq!(
            p.native,
            [
                "--period",
                "200",
                "--housekeeping",
                "0",
                "--priority",
                "90",
                "--user",
                "--ns",
                "--dma-latency",
                "0",
                "--warm-up",
                "3s"
            ]
        );
        // rtla stops at 30 µs or more: the device above 29999 ns; with -u
        // the thread context is the user thread.
        assert_eq!(
            p.thresholds,
            [
                Threshold {
                    stage: Stage::Irq,
                    ns: 29_999
                },
                Threshold {
                    stage: Stage::User,
                    ns: 49_999
                }
            ]
        );
        let View::Top(v) = p.view else { panic!() };
        assert!(v.user && v.ns && !v.quiet && v.no_aa);
        // -k is the thread stage; 0 is no threshold; --warm-up 0 none.
        let p = ok("top -k -T 7 -i 0 --warm-up 0");
        assert_eq!(
            p.thresholds,
            [Threshold {
                stage: Stage::Thread,
                ns: 6_999
            }]
        );
        assert!(p.native.is_empty());
    }

    #[test]
    fn hist_maps_onto_rtlat_run() {
        let p = ok("hist -k -d 2 -c 0 -E 50 --no-summary");
        assert_eq!(p.native, ["--cpus", "0", "--duration", "2s", "--quiet"]);
        let View::Hist(v) = p.view else { panic!() };
        assert_eq!(
            v,
            HistView {
                user: false,
                ns: false,
                bucket_size: 1,
                entries: 50,
                no_irq: false,
                no_thread: false,
                no_header: false,
                no_summary: true,
                no_index: false,
                with_zeros: false,
                no_aa: false,
            }
        );
        let View::Hist(v) =
            ok("hist -u -b 10 --no-irq --no-header --no-index --with-zeros -n").view
        else {
            panic!()
        };
        assert!(v.user && v.ns && v.no_irq && v.no_header && v.no_index && v.with_zeros);
        assert_eq!((v.bucket_size, v.entries), (10, 256));
    }

    #[test]
    fn fail_if_goes_to_the_native_command_line() {
        let p = ok("top -q -d 2 --fail-if user.max>1ns --fail-if=irq.p99.9>=50us");
        assert_eq!(
            p.native,
            [
                "--user",
                "--duration",
                "2s",
                "--quiet",
                "--fail-if",
                "user.max>1ns",
                "--fail-if",
                "irq.p99.9>=50us"
            ]
        );
        let p = ok("hist -k -d 2 --fail-i thread.p99>100us");
        assert_eq!(
            p.native[p.native.len() - 2..],
            ["--fail-if", "thread.p99>100us"]
        );
        // A bad expression: rtla's usage refusal (exit 129), with the
        // native message.
        let bad = parse_str("top --fail-if thread.max=1us").unwrap_err();
        assert_eq!(bad.status(), 129);
        let msg = bad_usage(bad);
        assert!(
            msg.contains(
                "'thread.max=1us': no comparison (>, >=, <, <=), e.g. thread.p99.99>100us"
            ),
            "{msg}"
        );
        assert!(usage("hist --fail-if thred.max>1us").contains("unknown stage 'thred'"));
        // Long only: no letter of rtla's is taken.
        assert!(usage("top -f user.max>1ns").contains("'-f'"));
    }

    /// clap's message of a usage refusal.
    fn bad_usage(r: Refusal) -> String {
        match r {
            Refusal::Usage(e) => e.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_rtlat_cannot_honour_are_refused_by_name() {
        let msg = fatal("top -a 50");
        assert_eq!(
            msg,
            "rtlat timerlat: -a/--auto is not supported: it saves a trace and its auto analysis at the stop; stop at a thread latency with -T us"
        );
        assert!(fatal("hist --auto=50").contains("-a/--auto is not supported"));
        for (args, name) in [
            ("top --aa-only 30", "--aa-only"),
            ("top -s 30", "-s/--stack"),
            ("top -e sched:sched_switch", "-e/--event"),
            ("top --filter x", "--filter"),
            ("top --trigger x", "--trigger"),
            ("top -C", "-C/--cgroup"),
            ("top -U", "-U/--user-load"),
            ("top -A 10", "-A/--aligned"),
            ("top --deepest-idle-state -1", "--deepest-idle-state"),
            ("top --dump-tasks", "--dump-tasks"),
            ("top --on-threshold shell,command=ls", "--on-threshold"),
            ("top --on-end shell,command=ls", "--on-end"),
            ("top --bpf-action p.o", "--bpf-action"),
            ("top --stack-format full", "--stack-format"),
            ("top -D", "-D/--debug"),
        ] {
            let m = fatal(args);
            assert!(
                m.starts_with(&format!("rtlat timerlat: {name} is not supported: ")),
                "{args}: {m}"
            );
        }
        assert_eq!(
            fatal("top -P r:90"),
            "rtlat timerlat: -P/--priority r:90 is not supported: rtlat's threads are SCHED_FIFO (f:prio)"
        );
        assert!(fatal("top -P o:0").contains("-P/--priority o:0"));
        assert!(fatal("top -P d:1ms:10ms").contains("-P/--priority d:1ms:10ms"));
    }

    #[test]
    fn exit_status_of_a_refusal() {
        assert_eq!(parse_str("top -p 10").err().map(|r| r.status()), Some(129));
        assert_eq!(parse_str("--help").err().map(|r| r.status()), Some(129));
        assert_eq!(parse_str("top -a 10").err().map(|r| r.status()), Some(1));
        assert_eq!(parse_str("top -u -k").err().map(|r| r.status()), Some(1));
    }

    #[test]
    fn rtla_fatal_checks() {
        assert_eq!(
            fatal("top -u -k"),
            "--kernel-threads and --user-threads are mutually exclusive!"
        );
        assert_eq!(
            fatal("hist --no-irq --no-thread"),
            "no-irq and no-thread set, there is nothing to do here"
        );
        assert_eq!(
            fatal("hist --no-index"),
            "no-index set with with-zeros is not set - it does not make sense"
        );
    }

    #[test]
    fn command_lines_rtla_refuses() {
        for bad in [
            "top -p 99",
            "top -p 1000001",
            "top -d 0",
            "top -d 1x",
            "top -d -1",
            "top -c 3-1",
            "top -c x",
            "top -c 100000",
            "top -P 95",
            "top -P f:0",
            "top -P f:100",
            "top -P x:1",
            "top --dma-latency 10001",
            "hist -E 9",
            "hist -b 0",
            "hist -q",
            "top --no-irq",
            "top --bogus",
            "frob",
        ] {
            let _ = usage(bad);
        }
        assert!(usage("top -p 50").contains("50"));
        assert!(usage("top -c 100000").contains("is not a valid cpu set"));
        // -h is a usage refusal too (exit 129, as rtla).
        assert!(usage("-h").contains("top"));
        assert!(usage("hist -h").contains("--bucket-size"));
    }
}
