// SPDX-License-Identifier: GPL-2.0

//! cyclictest's command line, read as rt-tests 2.x reads it: glibc
//! `getopt_long` with cyclictest's option string and long options (short
//! clusters, `--name=value` and `--name value`, unambiguous prefixes of long
//! names, the optional arguments of `-a`, `-t`, `-A` and `--secaligned`
//! taken from the next word when it looks like one), `atoi` for numbers,
//! `parse_time_string` for `-D`, libnuma's cpustring syntax for `-a` and
//! `--mainaffinity`, then `process_options`' checks and defaults. What
//! rtlat cannot do the way cyclictest does it is refused by name
//! ([`Refused`]), never ignored.

use std::time::Duration;

use crate::gate::{self, Gate};

use super::{
    cnum::{atoi, parse_time_string, strtoul0},
    getopt::{getopt, refuse, Item, Opt, Refused},
};

/// The CPUs a cpuset resolves against.
#[derive(Clone, Debug)]
pub struct Env {
    /// Possible CPUs (`/sys/devices/system/cpu/possible`): what a cpuset may name.
    pub possible: Vec<u32>,
    /// Configured CPUs (libnuma's `numa_num_configured_cpus`): what `!` inverts over.
    pub configured: u32,
    /// The process's affinity: where `-S`, `-t` and `-a` without a cpuset put threads.
    pub allowed: Vec<u32>,
}

/// Scheduling policy of `--policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
}

impl Policy {
    /// cyclictest's `handlepolicy`: a case-insensitive prefix match, and
    /// SCHED_OTHER for anything it does not know (`normal` included).
    fn from_name(name: &str) -> Self {
        let starts = |p: &str| {
            name.len() >= p.len() && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        };
        if starts("other") {
            Self::Other
        } else if starts("batch") {
            Self::Batch
        } else if starts("idle") {
            Self::Idle
        } else if starts("fifo") {
            Self::Fifo
        } else if starts("rr") {
            Self::Rr
        } else {
            Self::Other
        }
    }

    /// cyclictest's `policyname`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Other => "other",
            Self::Batch => "batch",
            Self::Idle => "idle",
            Self::Fifo => "fifo",
            Self::Rr => "rr",
        }
    }

    fn realtime(self) -> bool {
        matches!(self, Self::Fifo | Self::Rr)
    }
}

/// How threads are placed (cyclictest's `setaffinity`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Affinity {
    Unspecified,
    /// Thread N on the N-th CPU the process may run on.
    UseAll,
    /// Thread N on the N-th CPU of the set (round robin).
    Specified(Vec<u32>),
}

/// The largest histogram (`HIST_MAX`).
pub const HIST_MAX: u32 = 1_000_000;
/// cyclictest's default distance between thread intervals, µs.
const DEFAULT_DISTANCE: i32 = 500;
/// Smallest and largest interval the device measures, µs.
const INTERVAL_US: std::ops::RangeInclusive<i32> = 50..=1_000_000;

/// What a `rtlat cyclictest` command line asks for.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// `--help` (or `-?`): print the usage, exit 0.
    Help,
    /// Measure.
    Run(Box<Settings>),
}

/// cyclictest's `-h`/`-H` histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    /// Buckets of one unit (µs, ns with `-N`): 0 to `size - 1`; above is an overflow.
    pub size: u32,
    /// `-H`: a column summing the threads.
    pub summary: bool,
    /// `--histfile`: write it there instead of standard output.
    pub file: Option<String>,
}

/// A cyclictest command line rtlat runs, resolved as cyclictest resolves it.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Thread N's CPU, ascending (one thread per CPU).
    pub cpus: Vec<u32>,
    /// SCHED_FIFO priority (`P:`).
    pub priority: u32,
    /// The policy shown on the live line.
    pub policy: Policy,
    /// `I:`, µs.
    pub interval_us: u64,
    /// `-D`; `None`: until Ctrl-C or `-l`.
    pub duration: Option<Duration>,
    /// `-l`: activations per thread; `None`: endless.
    pub loops: Option<u64>,
    pub histogram: Option<Histogram>,
    /// `--json FILE` (`-` is standard output).
    pub json: Option<String>,
    pub quiet: bool,
    /// `-N`: values in ns.
    pub nsecs: bool,
    /// `-b`: the break threshold as given (in the output unit); 0: none. A
    /// negative one never trips, but the thread ids are still printed.
    pub breaktrace: i32,
    /// `--tracemark` (with `-b`): write cyclictest's trace marker and stop tracing.
    pub tracemark: bool,
    /// `--latency`: the value /dev/cpu_dma_latency is held at, µs (0 by
    /// default, as cyclictest's `latency_target_value`).
    pub latency: i32,
    /// `--default-system`.
    pub default_system: bool,
    /// `--laptop`.
    pub laptop: bool,
    /// `--mainaffinity`, or `-a`'s cpuset: where the main thread runs.
    pub main_affinity: Option<Vec<u32>>,
    /// `-S`: no NUMA node is looked up (cyclictest's JSON says node -1).
    pub smp: bool,
    /// cyclictest's own messages about the command line, for standard error.
    pub warnings: Vec<String>,
    /// `--fail-if`: the native tool's gates.
    pub fail_if: Vec<Gate>,
}

impl Settings {
    /// The `-b` threshold on the user stage, in ns: cyclictest breaks when
    /// the latency in its unit (µs truncated, or ns) exceeds `-b`; the
    /// device stops when the ns latency exceeds the threshold.
    pub fn break_ns(&self) -> Option<u64> {
        let b = u64::try_from(self.breaktrace).ok().filter(|&b| b > 0)?;
        Some(if self.nsecs { b } else { (b + 1) * 1000 - 1 })
    }

    /// cyclictest's `set_latency_target`: the value /dev/cpu_dma_latency
    /// is held at while the run lasts, or why it is left alone (its
    /// warning, without `WARN: `).
    pub fn latency_target(&self) -> Result<i32, &'static str> {
        if self.laptop {
            Err("not setting cpu_dma_latency to save battery power")
        } else if self.default_system {
            Err("not setting cpu_dma_latency from cyclictest")
        } else {
            Ok(self.latency)
        }
    }
}

/// An option's argument as the user gave it (`given`, if any), and the
/// `value` cyclictest's parser made of it where that reads otherwise (atoi
/// truncates, stops at the first non-digit): `4294967296 (read as 0)`.
fn as_given(given: Option<&str>, value: impl std::fmt::Display) -> String {
    let value = value.to_string();
    match given {
        Some(g) if g.trim() != value => format!("{g} (read as {value})"),
        _ => value,
    }
}

/// libnuma's `numa_parse_cpustring_all` and rt-tests' `parse_cpumask`: a
/// list of CPUs and ranges (`0-3,6`), `all`, `!` (all but), `+` (relative
/// to the possible CPUs); with `!` or `+` only the CPUs the process may run
/// on. `Err` where libnuma does not parse it, `Ok(None)` for an empty set
/// (cyclictest's NULL mask).
fn parse_cpumask(s: &str, env: &Env) -> Result<Option<Vec<u32>>, ()> {
    let allowed = |c: u64| env.possible.iter().any(|&p| u64::from(p) == c);
    let mut mask: Vec<u32> = Vec::new();
    let mut rest = s;
    let invert = rest.starts_with('!');
    if invert {
        rest = &rest[1..];
    }
    let relative = rest.starts_with('+');
    if relative {
        rest = &rest[1..];
    }
    // libnuma's get_nr: a number, or with `+` the number-th possible CPU.
    let nr = |s: &str| -> (u64, usize) {
        let (v, n) = strtoul0(s);
        if !relative || n == 0 {
            return (v, n);
        }
        let cpu = usize::try_from(v)
            .ok()
            .and_then(|k| env.possible.get(k))
            .map_or(u64::MAX, |&c| u64::from(c));
        (cpu, n)
    };
    if !s.is_empty() {
        loop {
            if rest == "all" {
                mask.extend(&env.possible);
                break;
            }
            let (a, n) = nr(rest);
            if n == 0 || !allowed(a) {
                return Err(());
            }
            mask.push(a as u32);
            rest = &rest[n..];
            if let Some(r) = rest.strip_prefix('-') {
                let (b, n2) = nr(r);
                if n2 == 0 || !allowed(b) {
                    return Err(());
                }
                mask.extend((a..=b).filter(|&c| allowed(c)).map(|c| c as u32));
                rest = &r[n2..];
            }
            match rest.strip_prefix(',') {
                Some(r) => rest = r,
                None if rest.is_empty() => break,
                None => return Err(()),
            }
        }
    }
    mask.sort_unstable();
    mask.dedup();
    if invert {
        mask = (0..env.configured).filter(|c| !mask.contains(c)).collect();
    }
    if mask.is_empty() {
        return Ok(None);
    }
    if s.contains(['!', '+']) {
        mask.retain(|c| env.allowed.contains(c));
    }
    Ok(Some(mask))
}

/// `rtlat cyclictest ARGS` (without the program name): help, settings to
/// run, or why not.
pub fn parse(args: &[String], env: &Env) -> Result<Parsed, Refused> {
    let mut affinity = Affinity::Unspecified;
    let mut option_affinity = false;
    let mut smp = false;
    let mut num_threads: i32 = 1;
    let mut priority: i32 = 0;
    let mut policy = Policy::Other;
    let mut interval: i32 = 1000;
    let mut distance: i32 = -1;
    let mut duration: i64 = 0;
    let mut max_cycles: i32 = 0;
    let mut histogram: i32 = 0;
    let mut histofall = false;
    let mut histfile = None;
    let mut json = None;
    let mut quiet = false;
    let mut nsecs = false;
    let mut breaktrace = 0;
    let mut tracemark = false;
    let mut latency = 0;
    let mut default_system = false;
    let mut laptop = false;
    let mut main_affinity = None;
    let mut warnings = Vec::new();
    let mut fail_if = Vec::new();
    // The arguments of -D, -d, -h/-H and -i as given, for a refusal.
    let (mut duration_arg, mut distance_arg, mut histogram_arg, mut interval_arg) =
        (None, None, None, None);

    let (items, operands) = getopt(args);
    // Words taken as an optional argument from after their option.
    let mut taken = Vec::new();
    // The next word, if it is an operand getopt left there.
    let peek = |next: usize| args.get(next).map(String::as_str);
    for item in items {
        let Item {
            opt,
            name,
            value,
            next,
        } = item?;
        let v = value.as_deref().unwrap_or("");
        let cannot = |why: &str| refuse(format!("{name} cannot be honoured: {why}"));
        match opt {
            Opt::Help => return Ok(Parsed::Help),
            Opt::Affinity => {
                option_affinity = true;
                let set = match &value {
                    Some(s) => Some(s.clone()),
                    None => peek(next)
                        .filter(|w| atoi(w) != 0 || w.starts_with(['0', '!', '+', 'a']))
                        .map(|w| {
                            taken.push(next);
                            w.to_string()
                        }),
                };
                if smp {
                    // Ignored, with a warning below (and so is its cpuset).
                    continue;
                }
                affinity = match set {
                    Some(s) => match parse_cpumask(&s, env) {
                        Ok(Some(m)) => Affinity::Specified(m),
                        _ => return refuse(format!("{name} '{s}': not a set of possible CPUs")),
                    },
                    None => Affinity::UseAll,
                };
            }
            Opt::Aligned | Opt::Secaligned => {
                return cannot(
                    "the module arms each CPU's first activation one interval after the start, \
                     not at a common or aligned time",
                )
            }
            Opt::Breaktrace => breaktrace = atoi(v),
            Opt::Clock => {
                if !matches!(v, "0" | "monotonic") {
                    return refuse(format!(
                        "{name} {v} cannot be honoured: the module's timer runs on CLOCK_MONOTONIC"
                    ));
                }
            }
            Opt::DefaultSystem => default_system = true,
            Opt::Distance => {
                distance = atoi(v);
                distance_arg = Some(v.to_string());
            }
            Opt::Duration => {
                duration = parse_time_string(v);
                duration_arg = Some(v.to_string());
            }
            Opt::Latency => latency = atoi(v).max(0),
            Opt::Fifo => return cannot("no named pipe of live statistics"),
            Opt::Histofall | Opt::Histogram => {
                histofall |= opt == Opt::Histofall;
                histogram = atoi(v);
                histogram_arg = Some(v.to_string());
                if histogram == 0 {
                    return refuse(format!("{name} '{v}': the histogram needs a size in µs"));
                }
            }
            Opt::Histfile => histfile = Some(v.to_string()),
            Opt::Interval => {
                interval = atoi(v);
                interval_arg = Some(v.to_string());
            }
            Opt::Json => json = Some(v.to_string()),
            Opt::Laptop => laptop = true,
            Opt::Loops => max_cycles = atoi(v),
            Opt::MainAffinity => match parse_cpumask(v, env) {
                Ok(Some(m)) => main_affinity = Some(m),
                _ => return refuse(format!("{name} '{v}': not a set of possible CPUs")),
            },
            Opt::Mlockall => {}
            Opt::Refresh => return cannot("the live lines are refreshed once a second"),
            Opt::Nsecs => nsecs = true,
            Opt::Oscope | Opt::Verbose => {
                return cannot("no per-activation output (rtlat run --json keeps every statistic)")
            }
            Opt::Priority => {
                priority = atoi(v);
                if !policy.realtime() {
                    policy = Policy::Fifo;
                }
            }
            Opt::Quiet => quiet = true,
            Opt::Priospread => {
                return cannot("every measuring thread runs at the one priority of -p")
            }
            Opt::Relative | Opt::System | Opt::PosixTimers => {
                return cannot(
                    "the timer is the module's absolute hard-IRQ hrtimer, \
                     not clock_nanosleep, nanosleep, itimers or POSIX timers",
                )
            }
            Opt::Resolution => return cannot("the clock resolution is not checked"),
            Opt::Smi => return cannot("SMIs are not counted"),
            Opt::Smp => {
                if option_affinity && !smp {
                    // As on any system with NUMA (libnuma initialised by -a).
                    return refuse(format!(
                        "{name}: numa and smp options are mutually exclusive (-a before -S)"
                    ));
                }
                smp = true;
                num_threads = -1;
                affinity = Affinity::UseAll;
            }
            Opt::Spike | Opt::SpikeNodes => return cannot("spikes are not recorded one by one"),
            Opt::Threads => {
                let n = match &value {
                    Some(s) => atoi(s),
                    None => match peek(next).filter(|w| atoi(w) != 0) {
                        Some(w) => {
                            taken.push(next);
                            atoi(w)
                        }
                        None => -1,
                    },
                };
                if smp {
                    // Ignored (and so is its number).
                    warnings.push("WARN: -t ignored due to smp mode".into());
                    continue;
                }
                num_threads = n;
            }
            Opt::Tracemark => tracemark = true,
            Opt::Unbuffered => {}
            Opt::DbgCyclictest => return cannot("there is no clock resolution check to debug"),
            Opt::Policy => policy = Policy::from_name(v),
            Opt::DeepestIdleState => {
                return cannot("idle states are reported, not changed (see the JSON of rtlat run)")
            }
            // The native tool's gate and its message.
            Opt::FailIf => match gate::parse(v) {
                Ok(g) => fail_if.push(g),
                Err(e) => return refuse(format!("{name}: {e}")),
            },
        }
    }
    if let Some(&w) = operands.iter().find(|w| !taken.contains(w)) {
        return refuse(format!("unexpected argument '{}'", args[w]));
    }

    // process_options' checks and defaults, in its order.
    if affinity == Affinity::Unspecified {
        // rt-tests 2.0 to 2.6 (Debian 12's cyclictest): -a without a set.
        affinity = Affinity::UseAll;
    }
    if option_affinity && smp {
        warnings.push("WARN: -a ignored due to smp mode".into());
    }
    if histogram < 0 {
        return refuse(format!(
            "-h/-H {}: the histogram size must be positive",
            as_given(histogram_arg.as_deref(), histogram)
        ));
    }
    let histogram = (histogram as u32).min(HIST_MAX);
    if histogram != 0 && distance != -1 {
        warnings.push("WARN: distance is ignored and set to 0, if histogram enabled".into());
    }
    if distance == -1 {
        distance = DEFAULT_DISTANCE;
    }
    if !(0..=99).contains(&priority) {
        return refuse(format!("-p {priority}: the priority must be 0 to 99"));
    }
    if num_threads == -1 {
        num_threads = match &affinity {
            Affinity::Specified(m) => m.len() as i32,
            _ => env.allowed.len() as i32,
        };
    }
    if priority != 0 && !policy.realtime() {
        warnings.push("policy and priority don't match: setting policy to SCHED_FIFO".into());
        policy = Policy::Fifo;
    }
    if policy.realtime() && priority == 0 {
        priority = num_threads + 1;
        warnings.push(format!("defaulting realtime priority to {priority}"));
    }
    if num_threads < 1 {
        return refuse(format!("-t {num_threads}: at least one thread"));
    }

    // What rtlat can measure of it.
    match policy {
        Policy::Fifo => {}
        Policy::Rr => {
            return refuse("--policy rr cannot be honoured: the measuring threads run SCHED_FIFO")
        }
        _ => {
            return refuse(format!(
                "SCHED_{} cannot be honoured (cyclictest's default without -p): the measuring \
                 threads run SCHED_FIFO; give -p PRIO",
                policy.name().to_uppercase()
            ))
        }
    }
    if priority > 99 {
        return refuse(format!(
            "{num_threads} threads: the default priority {priority} is above 99; give -p PRIO"
        ));
    }
    let pool = match &affinity {
        Affinity::Specified(m) => m.clone(),
        _ => env.allowed.clone(),
    };
    if pool.is_empty() {
        return refuse("no CPU to run on");
    }
    let cpus: Vec<u32> = (0..num_threads as usize)
        .map(|i| pool[i % pool.len()])
        .collect();
    if cpus.len() > pool.len() {
        return refuse(format!(
            "{num_threads} threads on {} CPU(s) ({}) cannot be honoured: rtlat measures one \
             thread per CPU",
            pool.len(),
            cpu_list(&pool)
        ));
    }
    if num_threads > 1 && histogram == 0 && distance != 0 {
        return refuse(format!(
            "-d {}{}: thread N would wake every {interval} + N*{distance} us, but rtlat \
             measures every CPU at one interval; give -d 0 (or -h, which sets it to 0)",
            as_given(distance_arg.as_deref(), distance),
            if distance_arg.is_none() {
                " (the default)"
            } else {
                ""
            }
        ));
    }
    if !INTERVAL_US.contains(&interval) {
        return refuse(format!(
            "-i {}: the interval must be {} to {} us",
            as_given(interval_arg.as_deref(), interval),
            INTERVAL_US.start(),
            INTERVAL_US.end()
        ));
    }
    if duration < 0 {
        return refuse(format!(
            "-D {}: a duration cannot be negative",
            as_given(duration_arg.as_deref(), duration)
        ));
    }
    // cyclictest's -a also sets the main thread's affinity, which
    // --mainaffinity then replaces.
    let main_affinity = main_affinity.or(match &affinity {
        Affinity::Specified(m) if !smp => Some(m.clone()),
        _ => None,
    });
    Ok(Parsed::Run(Box::new(Settings {
        cpus,
        priority: priority as u32,
        policy,
        interval_us: interval as u64,
        duration: (duration > 0).then(|| Duration::from_secs(duration as u64)),
        loops: u64::try_from(max_cycles).ok().filter(|&l| l > 0),
        histogram: (histogram > 0).then_some(Histogram {
            size: histogram,
            summary: histofall,
            file: histfile,
        }),
        json,
        quiet,
        nsecs,
        breaktrace,
        tracemark,
        latency,
        default_system,
        laptop,
        main_affinity,
        smp,
        warnings,
        fail_if,
    })))
}

/// A CPU list as `0-3,6`.
pub fn cpu_list(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A system with CPUs 0-7, all of them allowed.
    fn env() -> Env {
        Env {
            possible: (0..8).collect(),
            configured: 8,
            allowed: (0..8).collect(),
        }
    }

    fn parse_with(args: &str, env: &Env) -> Result<Parsed, Refused> {
        let args: Vec<String> = args.split_whitespace().map(String::from).collect();
        parse(&args, env)
    }

    /// The settings of `rtlat cyclictest ARGS`.
    fn run(args: &str) -> Settings {
        match parse_with(args, &env()) {
            Ok(Parsed::Run(s)) => *s,
            other => panic!("{args}: {other:?}"),
        }
    }

    /// Why `rtlat cyclictest ARGS` is refused.
    fn refused(args: &str) -> String {
        match parse_with(args, &env()) {
            Err(Refused(why)) => why,
            other => panic!("{args}: accepted: {other:?}"),
        }
    }

    #[test]
    fn defaults_with_a_priority() {
        let s = run("-p 80");
        assert_eq!(s.cpus, [0]);
        assert_eq!((s.priority, s.policy), (80, Policy::Fifo));
        assert_eq!(s.interval_us, 1000);
        assert_eq!(
            (s.duration, s.loops, s.histogram.clone()),
            (None, None, None)
        );
        assert!(!s.quiet && !s.nsecs && !s.smp && !s.tracemark);
        assert_eq!((s.breaktrace, s.break_ns()), (0, None));
        assert_eq!((s.latency, s.default_system, s.laptop), (0, false, false));
        assert_eq!((s.json.clone(), s.main_affinity.clone()), (None, None));
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn priority_and_policy() {
        for a in [
            "-p 80",
            "-p80",
            "--priority=80",
            "--priority 80",
            "--prior 80",
            "-mqp80",
        ] {
            assert_eq!(run(a).priority, 80, "{a}");
        }
        assert!(refused("--prio 80").contains("ambiguous"));
        assert_eq!(refused("-p 100"), "-p 100: the priority must be 0 to 99");
        assert_eq!(refused("-p -1"), "-p -1: the priority must be 0 to 99");
        // Without -p, or with a policy that is not real-time: SCHED_OTHER.
        for a in [
            "",
            "-t 1",
            "--policy=other",
            "--policy batch",
            "--policy=idle",
            "--policy normal",
        ] {
            assert!(
                refused(a).contains("cannot be honoured") && refused(a).contains("-p PRIO"),
                "{a}"
            );
        }
        assert!(refused("").starts_with("SCHED_OTHER"));
        assert!(refused("--policy batch").starts_with("SCHED_BATCH"));
        assert!(refused("--policy=rr -p 5").starts_with("--policy rr cannot be honoured"));
        // A policy without a priority: num_threads + 1, as cyclictest says.
        let s = run("--policy=FIFO");
        assert_eq!(s.priority, 2);
        assert_eq!(s.warnings, ["defaulting realtime priority to 2"]);
        assert_eq!(run("-p 0").priority, 2);
        let s = run("-S -h 10 -p 0");
        assert_eq!(s.priority, 9);
        // -p makes a policy that is not real-time SCHED_FIFO ...
        let s = run("--policy normal -p 5");
        assert_eq!((s.priority, s.policy), (5, Policy::Fifo));
        assert!(s.warnings.is_empty());
        // ... and so does a priority with such a policy after it, as cyclictest says.
        let s = run("-p 5 --policy=batch");
        assert_eq!((s.priority, s.policy), (5, Policy::Fifo));
        assert_eq!(
            s.warnings,
            ["policy and priority don't match: setting policy to SCHED_FIFO"]
        );
    }

    #[test]
    fn interval_duration_loops() {
        for a in [
            "-i 200",
            "-i200",
            "--interval=200",
            "--interval 200",
            "--int 200",
        ] {
            assert_eq!(run(&format!("-p 1 {a}")).interval_us, 200, "{a}");
        }
        assert_eq!(
            refused("-p 1 -i 49"),
            "-i 49: the interval must be 50 to 1000000 us"
        );
        assert!(refused("-p 1 -i 1000001").starts_with("-i 1000001:"));
        assert!(refused("-p 1 -i x").starts_with("-i x (read as 0):"));
        let d = |a: &str| run(&format!("-p 1 {a}")).duration.map(|d| d.as_secs());
        assert_eq!(d("-D 10"), Some(10));
        assert_eq!(d("-D10"), Some(10));
        assert_eq!(d("-D 30s"), Some(30));
        assert_eq!(d("-D 2m"), Some(120));
        assert_eq!(d("--duration=2M"), Some(120));
        assert_eq!(d("--duration 1h"), Some(3600));
        assert_eq!(d("-D 1d"), Some(86400));
        assert_eq!(d("-D 7x"), Some(7));
        assert_eq!(d("-D 0"), None);
        assert_eq!(d("-D abc"), None);
        assert_eq!(
            refused("-p 1 -D -5"),
            "-D -5: a duration cannot be negative"
        );
        let l = |a: &str| run(&format!("-p 1 {a}")).loops;
        assert_eq!(l("-l 100"), Some(100));
        assert_eq!(l("--loops=7"), Some(7));
        assert_eq!(l("-l 0"), None);
        // cyclictest compares a negative count as unsigned: never reached.
        assert_eq!(l("-l -1"), None);
    }

    #[test]
    fn affinity_threads_smp() {
        let cpus = |a: &str| run(&format!("-p 1 {a}")).cpus;
        // Without -a, thread N on the N-th allowed CPU (rt-tests 2.0 to 2.6).
        assert_eq!(cpus(""), [0]);
        assert_eq!(cpus("-a"), [0]);
        for a in ["-a 2", "-a2", "--affinity=2", "--affinity 2", "--aff=2"] {
            assert_eq!(cpus(a), [2], "{a}");
        }
        assert_eq!(cpus("-a 1-2 -t -d 0"), [1, 2]);
        assert_eq!(cpus("-a 3-5,0 -t 4 -d 0"), [0, 3, 4, 5]);
        assert_eq!(cpus("-a 0x3"), [3]);
        assert_eq!(cpus("-a +2"), [2]);
        assert_eq!(cpus("-a !1-6 -t -h 5"), [0, 7]);
        assert_eq!(cpus("-a all -t -d 0").len(), 8);
        assert_eq!(cpus("-a 1,all -t -d 0").len(), 8);
        assert_eq!(cpus("-a 1-3 -t 2 -d 0"), [1, 2]);
        for bad in [
            "-a 8",
            "-a 010",
            "-a 1,",
            "-a 1-x",
            "-a 3-9",
            "--affinity=",
            "-a all,1",
        ] {
            assert!(
                refused(&format!("-p 1 {bad}")).contains("not a set of possible CPUs"),
                "{bad}"
            );
        }
        // One thread per CPU.
        assert_eq!(
            refused("-p 1 -a 3-5,0 -t 5 -d 0"),
            "5 threads on 4 CPU(s) (0,3-5) cannot be honoured: rtlat measures one thread per CPU"
        );
        assert!(refused("-p 1 -t 9 -d 0").starts_with("9 threads on 8 CPU(s) (0-7)"));
        // -t.
        for a in ["-t 3", "-t3", "--threads=3", "--threads 3", "--thr=3"] {
            assert_eq!(cpus(&format!("{a} -d 0")), [0, 1, 2], "{a}");
        }
        assert_eq!(cpus("-t -d 0").len(), 8);
        assert_eq!(cpus("-d 0 -t").len(), 8);
        assert_eq!(refused("-p 1 -t 0 -d 0"), "unexpected argument '0'");
        // The word after -t is its number and, starting with '-', options too.
        assert_eq!(refused("-p 1 -t -3 -d 0"), "unknown option '-3'");
        assert_eq!(refused("-p 1 -t-3 -d 0"), "-t -3: at least one thread");
        // -S: every allowed CPU; -t and -a after it are ignored, with cyclictest's warnings.
        let s = run("-p 1 -S -d 0");
        assert_eq!((s.cpus.len(), s.smp), (8, true));
        assert!(s.warnings.is_empty());
        let s = run("-p 1 --smp -t 2 -a 3 -h 5");
        assert_eq!(s.cpus.len(), 8);
        assert_eq!(
            s.warnings,
            [
                "WARN: -t ignored due to smp mode",
                "WARN: -a ignored due to smp mode"
            ]
        );
        assert_eq!(
            refused("-p 1 -a 1 -S"),
            "-S: numa and smp options are mutually exclusive (-a before -S)"
        );
        // With a cpuset or the allowed CPUs of the process.
        let few = Env {
            allowed: vec![2, 5],
            ..env()
        };
        let Ok(Parsed::Run(s)) = parse_with("-p 1 -S -d 0", &few) else {
            panic!()
        };
        assert_eq!(s.cpus, [2, 5]);
        let Ok(Parsed::Run(s)) = parse_with("-p 1 -a +0-7 -t -d 0", &few) else {
            panic!()
        };
        assert_eq!(s.cpus, [2, 5]);
    }

    #[test]
    fn distance() {
        // Several threads at one interval only.
        assert_eq!(
            refused("-p 1 -t 2"),
            "-d 500 (the default): thread N would wake every 1000 + N*500 us, but rtlat \
             measures every CPU at one interval; give -d 0 (or -h, which sets it to 0)"
        );
        assert!(refused("-p 1 -t 2 -d 100").starts_with("-d 100: "));
        assert_eq!(run("-p 1 -t 2 --distance=0").cpus, [0, 1]);
        assert_eq!(run("-p 1 -d 300").cpus, [0]);
        assert!(run("-p 1 -t 2 -h 10").warnings.is_empty());
        assert_eq!(
            run("-p 1 -t 2 -h 10 -d 100").warnings,
            ["WARN: distance is ignored and set to 0, if histogram enabled"]
        );
    }

    #[test]
    fn histogram_json_output_options() {
        let h = |a: &str| run(&format!("-p 1 {a}")).histogram;
        let hist = |size, summary, file: Option<&str>| {
            Some(Histogram {
                size,
                summary,
                file: file.map(String::from),
            })
        };
        assert_eq!(h("-h 100"), hist(100, false, None));
        assert_eq!(h("-h100"), hist(100, false, None));
        assert_eq!(h("--histogram=100"), hist(100, false, None));
        assert_eq!(h("-H 50"), hist(50, true, None));
        assert_eq!(h("--histofall 50"), hist(50, true, None));
        assert_eq!(h("-h 2000000"), hist(HIST_MAX, false, None));
        assert_eq!(
            h("-h 10 --histfile=/tmp/h"),
            hist(10, false, Some("/tmp/h"))
        );
        assert_eq!(
            h("--histfile /tmp/h -h 10"),
            hist(10, false, Some("/tmp/h"))
        );
        assert_eq!(
            refused("-p 1 -h 0"),
            "-h '0': the histogram needs a size in µs"
        );
        assert_eq!(
            refused("-p 1 -H x"),
            "-H 'x': the histogram needs a size in µs"
        );
        assert_eq!(
            refused("-p 1 -h -5"),
            "-h/-H -5: the histogram size must be positive"
        );
        assert_eq!(refused("-p 1 -h"), "option '-h' requires an argument");
        // Refusals quote the argument as it was given, atoi's value after it.
        assert_eq!(
            refused("-p 1 -h 2147483648"),
            "-h/-H 2147483648 (read as -2147483648): the histogram size must be positive"
        );
        assert_eq!(
            refused("-p 1 -i 4294967296"),
            "-i 4294967296 (read as 0): the interval must be 50 to 1000000 us"
        );
        assert_eq!(
            refused("-p 1 --interval=4294967296"),
            "-i 4294967296 (read as 0): the interval must be 50 to 1000000 us"
        );
        assert_eq!(
            refused("-p 1 -D 99999999999999999999"),
            "-D 99999999999999999999 (read as -1): a duration cannot be negative"
        );
        assert_eq!(
            refused("-p 1 -t 2 -d 4294967297"),
            "-d 4294967297 (read as 1): thread N would wake every 1000 + N*1 us, but rtlat \
             measures every CPU at one interval; give -d 0 (or -h, which sets it to 0)"
        );
        let s = run("-p 1 --json=/tmp/c.json -q -N -m -u");
        assert_eq!(s.json.as_deref(), Some("/tmp/c.json"));
        assert!(s.quiet && s.nsecs);
        assert_eq!(run("-p 1 --json -").json.as_deref(), Some("-"));
        assert!(run("-p 1 --quiet --nsecs --mlockall --unbuffered").nsecs);
    }

    #[test]
    fn breaktrace_and_tracemark() {
        let s = run("-p 1 -b 50 --tracemark");
        assert_eq!((s.breaktrace, s.tracemark), (50, true));
        // cyclictest breaks when the µs latency (truncated) exceeds 50:
        // from 51000 ns on; the device stops above its threshold.
        assert_eq!(s.break_ns(), Some(50_999));
        assert_eq!(run("-p 1 --breaktrace=50 -N").break_ns(), Some(50));
        assert_eq!(run("-p 1 --breaktrace 7").break_ns(), Some(7_999));
        // A negative -b never trips (cyclictest compares it as unsigned).
        let s = run("-p 1 -b -3");
        assert_eq!((s.breaktrace, s.break_ns()), (-3, None));
        assert_eq!(run("-p 1 -b 0").break_ns(), None);
    }

    #[test]
    fn latency_target_as_set_latency_target() {
        // Held at 0 by default, at --latency's value else.
        assert_eq!(run("-p 1").latency_target(), Ok(0));
        assert_eq!(run("-p 1 -q").latency_target(), Ok(0));
        assert_eq!(run("-p 1 --latency=10").latency_target(), Ok(10));
        // --laptop first, then --default-system: their warnings.
        let laptop = Err("not setting cpu_dma_latency to save battery power");
        let system = Err("not setting cpu_dma_latency from cyclictest");
        assert_eq!(run("-p 1 --laptop --latency=5").latency_target(), laptop);
        assert_eq!(
            run("-p 1 --default-system --laptop").latency_target(),
            laptop
        );
        assert_eq!(run("-p 1 --default-system").latency_target(), system);
    }

    #[test]
    fn power_management_and_main_affinity() {
        assert_eq!(run("-p 1 --latency=10").latency, 10);
        assert_eq!(run("-p 1 --latency -4").latency, 0);
        assert!(run("-p 1 --default-system").default_system);
        assert!(run("-p 1 --laptop").laptop);
        let m = |a: &str| run(&format!("-p 1 {a}")).main_affinity;
        assert_eq!(m("--mainaffinity=1"), Some(vec![1]));
        assert_eq!(m("--mainaffinity 1-2"), Some(vec![1, 2]));
        // -a sets the main thread's affinity too; --mainaffinity replaces it.
        assert_eq!(m("-a 2"), Some(vec![2]));
        assert_eq!(m("-a 2 --mainaffinity=3"), Some(vec![3]));
        assert_eq!(m("-a"), None);
        assert_eq!(m("-S -d 0"), None);
        assert!(refused("-p 1 --mainaffinity=9").starts_with("--mainaffinity '9'"));
        assert_eq!(
            refused("-p 1 --mainaffinity"),
            "option '--mainaffinity' requires an argument"
        );
    }

    #[test]
    fn refused_by_name() {
        for (a, name) in [
            ("-A", "-A"),
            ("-A 5", "-A"),
            ("--aligned=5", "--aligned"),
            ("--secaligned", "--secaligned"),
            ("-F /tmp/f", "-F"),
            ("--fifo=/tmp/f", "--fifo"),
            ("-M", "-M"),
            ("--refresh_on_max", "--refresh_on_max"),
            ("-o 2", "-o"),
            ("-r", "-r"),
            ("--relative", "--relative"),
            ("-R", "-R"),
            ("-s", "-s"),
            ("--system", "--system"),
            ("-v", "-v"),
            ("--verbose", "--verbose"),
            ("-x", "-x"),
            ("--posix_timers", "--posix_timers"),
            ("--smi", "--smi"),
            ("--spike=5", "--spike"),
            ("--spike-nodes=3", "--spike-nodes"),
            ("--priospread", "--priospread"),
            ("--dbg_cyclictest", "--dbg_cyclictest"),
            ("--deepest-idle-state=1", "--deepest-idle-state"),
        ] {
            let why = refused(&format!("-p 1 {a}"));
            assert!(
                why.starts_with(&format!("{name} cannot be honoured: ")),
                "{a}: {why}"
            );
        }
        for c in ["1", "realtime", "aux0"] {
            assert_eq!(
                refused(&format!("-p 1 -c {c}")),
                format!("-c {c} cannot be honoured: the module's timer runs on CLOCK_MONOTONIC")
            );
        }
        assert_eq!(run("-p 1 -c 0").priority, 1);
        assert_eq!(run("-p 1 --clock=monotonic").priority, 1);
    }

    #[test]
    fn getopt_errors_and_help() {
        assert_eq!(refused("-Z"), "unknown option '-Z'");
        assert_eq!(refused("-p 1 -mZ"), "unknown option '-Z'");
        assert_eq!(refused("--nope"), "unknown option '--nope'");
        assert_eq!(
            refused("--hist 5"),
            "option '--hist' is ambiguous: --histogram, --histofall, --histfile"
        );
        assert_eq!(refused("--sm"), "option '--sm' is ambiguous: --smi, --smp");
        assert_eq!(refused("-p"), "option '-p' requires an argument");
        assert_eq!(
            refused("-p 1 --duration"),
            "option '--duration' requires an argument"
        );
        assert_eq!(
            refused("-p 1 --quiet=1"),
            "option '--quiet' takes no argument"
        );
        assert_eq!(refused("-p 1 stray"), "unexpected argument 'stray'");
        assert_eq!(refused("-p 1 -- -q"), "unexpected argument '-q'");
        // A required argument is the next word, whatever it looks like.
        assert_eq!(run("--json -q -p 1").json.as_deref(), Some("-q"));
        // The first problem in order is the one reported.
        assert_eq!(refused("-Z -x"), "unknown option '-Z'");
        for a in ["--help", "--he", "-?", "-p 1 --help -Z"] {
            assert_eq!(parse_with(a, &env()), Ok(Parsed::Help), "{a}");
        }
        // cyclictest's -h is the histogram, not help.
        assert!(matches!(
            parse_with("-p 1 -h 5", &env()),
            Ok(Parsed::Run(_))
        ));
    }

    #[test]
    fn c_number_parsers() {
        assert_eq!(atoi("42"), 42);
        assert_eq!(atoi("  -7x"), -7);
        assert_eq!(atoi("+3"), 3);
        assert_eq!(atoi("x1"), 0);
        assert_eq!(atoi(""), 0);
        assert_eq!(atoi("99999999999"), 99_999_999_999i64 as i32);
        assert_eq!(parse_time_string("90"), 90);
        assert_eq!(parse_time_string("3h"), 10800);
        assert_eq!(parse_time_string("s"), 0);
        assert_eq!(strtoul0("0x1f,"), (31, 4));
        assert_eq!(strtoul0("017"), (15, 3));
        assert_eq!(strtoul0("0"), (0, 1));
        assert_eq!(strtoul0("9"), (9, 1));
        assert_eq!(strtoul0("x"), (0, 0));
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
