// SPDX-License-Identifier: GPL-2.0

//! `rtlat cyclictest [options]`: cyclictest's command line and output on
//! `/dev/rtlat`'s user stage, the closest to what cyclictest measures: one
//! pinned SCHED_FIFO thread per CPU, woken at every interval (there by the
//! module's hard-IRQ hrtimer and its kernel thread, in cyclictest by its own
//! `clock_nanosleep`), its latency taken when it runs again.
//!
//! The options are read as rt-tests 2.x reads them ([`opts`]) and become a
//! [`Common`] for the one lifecycle every measuring command shares; the
//! output is [`Cyclictest`]'s, a [`crate::mode::Mode`]. What cannot be
//! honoured is refused by name, exit status 2. As cyclictest does,
//! `/dev/cpu_dma_latency` is held at 0 (or `--latency`'s value) while the
//! run lasts, unless `--laptop` or `--default-system`. `--fail-if` is the
//! native tool's gate: a failed one exits 4, even where cyclictest exits 0.

mod cnum;
mod getopt;
pub mod opts;

use std::{
    fs::{self, File, OpenOptions},
    io::{self, Write as _},
    os::unix::fs::OpenOptionsExt as _,
    path::{Path, PathBuf},
    process::ExitCode,
};

use clap::Parser;
use rtcore::uapi::Stage;

use crate::{
    cli::{Cli, Cmd, Common, Threshold},
    cmd::{
        cyclictest::{Rstat, TraceMark},
        Cyclictest,
    },
    exit, lifecycle, sched, signals, sysinfo,
};
use getopt::Refused;
use opts::{Env, Parsed, Settings};

const USAGE: &str = "\
rtlat cyclictest: cyclictest's options and output on /dev/rtlat's user stage
(one pinned SCHED_FIFO thread per CPU blocked in the device).

Usage: rtlat cyclictest <options>

-a [CPUSET] --affinity     thread N on the N-th CPU of CPUSET (default: of the
                           CPUs the process may run on); one thread per CPU
-b USEC  --breaktrace=USEC stop when a latency > USEC (trace marker with
                           --tracemark); exit status 0, as cyclictest
-c 0     --clock=monotonic the only clock
-d DIST  --distance=DIST   only 0 with more than one thread and no -h
-D TIME  --duration=TIME   seconds, or with m, h, d
         --default-system  /dev/cpu_dma_latency is left alone (a WARN line)
         --fail-if=EXPR    rtlat run's gate: exit status 4 if EXPR holds at
                           the end (e.g. user.p99.99>100us); repeatable
-h US    --histogram=US    histogram of 1-unit buckets 0..US-1 after the run
-H US    --histofall=US    the same with a summary column
         --histfile=PATH   the histogram into PATH instead of standard output
-i INTV  --interval=INTV   interval in us, 50 to 1000000 (default 1000)
         --json=FILE       results in rt-tests' JSON layout (- for stdout)
         --laptop          /dev/cpu_dma_latency is left alone (a WARN line)
         --latency=PM_QOS  hold /dev/cpu_dma_latency at PM_QOS us while the
                           run lasts (default 0, as cyclictest)
-l LOOPS --loops=LOOPS     activations per thread (default 0: endless)
         --mainaffinity=CPUSET  where the main thread runs
-m       --mlockall        memory is always locked
-N       --nsecs           nanoseconds instead of microseconds
-p PRIO  --priority=PRIO   SCHED_FIFO priority 1..99 (required: SCHED_OTHER,
                           cyclictest's default, is refused)
         --policy=fifo     (other, batch, idle, rr are refused)
-q       --quiet           a summary only at the end
-S       --smp             one thread per CPU (with -d 0 or -h)
-t [NUM] --threads[=NUM]   NUM threads, or one per CPU
         --tracemark       with -b: cyclictest's trace marker, then tracing off
-u       --unbuffered      output is flushed at once anyway
         --help            this text

Refused (exit status 2): -A/--aligned, --secaligned, -c other than monotonic,
-F/--fifo, -M, -o, -r, -R, -s, -v, -x, --deepest-idle-state, --priospread,
--smi, --spike, --spike-nodes, --dbg_cyclictest, --policy other than fifo.
SIGUSR1: the status on standard error; SIGUSR2: into /dev/shm/cyclictest<PID>.
The device node is $RTLAT_DEVICE, or /dev/rtlat.
See Documentation/rtlat-tool.rst, \"cyclictest front end\".
";

/// `rtlat cyclictest ARGS` (the words after `cyclictest`).
pub fn main(args: &[String]) -> ExitCode {
    let env = Env {
        possible: fs::read_to_string("/sys/devices/system/cpu/possible")
            .ok()
            .and_then(|s| sysinfo::parse_cpu_list(s.trim()).ok())
            .unwrap_or_else(sysinfo::online_cpus),
        configured: configured_cpus(),
        allowed: sched::affinity(),
    };
    let s = match opts::parse(args, &env) {
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Run(s)) => *s,
        Err(Refused(why)) => return refused(&why),
    };
    for w in &s.warnings {
        eprintln!("{w}");
    }
    let tracemark = if s.tracemark && s.breaktrace != 0 {
        match open_tracemark() {
            Ok(t) => Some(t),
            Err(why) => return refused(&format!("--tracemark cannot be honoured: {why}")),
        }
    } else {
        None
    };
    match run(s, tracemark) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rtlat: error: {e}");
            ExitCode::from(1)
        }
    }
}

fn refused(why: &str) -> ExitCode {
    eprintln!("rtlat cyclictest: {why} (rtlat cyclictest --help)");
    ExitCode::from(exit::USAGE)
}

/// libnuma's `numa_num_configured_cpus`: the `cpuN` of sysfs.
fn configured_cpus() -> u32 {
    fs::read_dir("/sys/devices/system/cpu")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("cpu"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count() as u32
}

/// rt-tests' `get_tracefs_prefix`: /sys/kernel/tracing, else where
/// /proc/mounts has tracefs.
fn tracefs() -> Option<PathBuf> {
    let std = Path::new("/sys/kernel/tracing");
    if std.join("trace_marker").exists() {
        return Some(std.to_path_buf());
    }
    fs::read_to_string("/proc/mounts")
        .ok()?
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (_, dir, ty) = (w.next()?, w.next()?, w.next()?);
            (ty == "tracefs").then(|| PathBuf::from(dir))
        })
        .next()
}

/// The files `--tracemark` writes: `trace_marker` (required) and `tracing_on`.
fn open_tracemark() -> Result<TraceMark, String> {
    let dir = tracefs().ok_or("no tracefs (mount it on /sys/kernel/tracing)")?;
    let open = |name: &str| OpenOptions::new().write(true).open(dir.join(name));
    let marker =
        open("trace_marker").map_err(|e| format!("{}: {e}", dir.join("trace_marker").display()))?;
    let tracing_on = match open("tracing_on") {
        Ok(f) => Some(f),
        Err(_) => {
            eprintln!(
                "WARN: unable to open tracing_on file: {}",
                dir.join("tracing_on").display()
            );
            None
        }
    };
    Ok(TraceMark { marker, tracing_on })
}

/// The NUMA node of `cpu` (-1 without NUMA), as cyclictest's JSON has it.
fn numa_node(cpu: u32) -> i64 {
    fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .unwrap_or(-1)
}

/// The options of the lifecycle for `s`: the user stage on `s`'s CPUs at
/// its interval and priority, its `-b` threshold, no JSON or SVG of the
/// tool's own (the mode writes cyclictest's).
fn common(s: &Settings) -> Result<Common, String> {
    let Cmd::Run(mut c) = Cli::try_parse_from(["rtlat", "run"])
        .map_err(|e| e.to_string())?
        .cmd
    else {
        return Err("the default options of rtlat run".into());
    };
    if let Some(dev) = std::env::var_os("RTLAT_DEVICE") {
        c.device = dev.into();
    }
    c.duration = s.duration;
    c.cpus = Some(opts::cpu_list(&s.cpus));
    c.period = s.interval_us;
    c.priority = s.priority;
    c.user = true;
    c.thresholds = s
        .break_ns()
        .map(|ns| Threshold {
            stage: Stage::User,
            ns,
        })
        .into_iter()
        .collect();
    c.quiet = s.quiet;
    c.ns = s.nsecs;
    c.ci.fail_if = s.fail_if.clone();
    Ok(c)
}

/// The PM QoS file cyclictest holds.
const DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// The text of an I/O error as `strerror` gives it.
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// cyclictest's `set_latency_target` once it holds the limit: `path`
/// opened for reading and writing, `us` written to it; the limit is held
/// while the file is open. An error is cyclictest's warning, and the run
/// goes on without it (no such file without CONFIG_CPU_IDLE, not root).
fn hold_latency_target(path: &Path, us: i32) -> Result<File, String> {
    let p = path.display();
    fs::metadata(path).map_err(|e| format!("WARN: stat {p} failed: {}", strerror(&e)))?;
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("WARN: open {p}: {}", strerror(&e)))?;
    f.write_all(&us.to_ne_bytes())
        .map_err(|e| format!("# error setting cpu_dma_latency to {us}!: {}", strerror(&e)))?;
    Ok(f)
}

/// cyclictest's `rstat_setup`: its running status file at `path` (a stale
/// one of that name removed first), readable and writable by all. An error
/// is cyclictest's message; the run goes on without the file.
fn rstat_setup(path: PathBuf) -> Result<Rstat, String> {
    match fs::remove_file(&path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(format!("ERROR: shm_unlink {}", strerror(&e)));
        }
        _ => {}
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| format!("ERROR: shm_open {}", strerror(&e)))?;
    Ok(Rstat { path, file })
}

fn run(s: Settings, tracemark: Option<TraceMark>) -> Result<ExitCode, String> {
    let c = common(&s)?;
    // cyclictest's set_latency_target: held until the run's end.
    let _dma: Option<File> = match s.latency_target() {
        Err(why) => {
            eprintln!("WARN: {why}");
            None
        }
        Ok(us) => match hold_latency_target(Path::new(DMA_LATENCY), us) {
            Ok(f) => {
                println!("# {DMA_LATENCY} set to {us}us");
                Some(f)
            }
            Err(e) => {
                eprintln!("{e}");
                None
            }
        },
    };
    if let Some(m) = &s.main_affinity {
        // Before any other thread starts: they inherit it (the measuring
        // threads then pin themselves).
        if let Err(e) = sched::set_affinity(m) {
            eprintln!("WARN: Couldn't setaffinity in main thread: {e}");
        }
    }
    let nodes = s
        .cpus
        .iter()
        .map(|&cpu| {
            if s.smp || !Path::new("/sys/devices/system/node").exists() {
                -1
            } else {
                numa_node(cpu)
            }
        })
        .collect();
    // SIGUSR2: the running status into /dev/shm/cyclictest<PID> (glibc's
    // shm_open directory), as cyclictest.
    signals::catch_snapshot();
    let rstat = rstat_setup(format!("/dev/shm/cyclictest{}", std::process::id()).into())
        .map_err(|e| eprintln!("{e}"))
        .ok();
    let mode = Cyclictest::new(s, tracemark, nodes).with_rstat(rstat);
    lifecycle::run(&c, &mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        collect::{self, Outcome},
        plan::Plan,
        report::StopCause,
    };

    #[test]
    fn the_latency_target_held_or_cyclictests_warning() {
        let dir = std::env::temp_dir().join(format!("rtlat-pmqos-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // Written as the kernel reads it: 4 bytes, native order.
        let file = dir.join("cpu_dma_latency");
        fs::write(&file, b"").unwrap();
        let held = hold_latency_target(&file, 7).unwrap();
        assert_eq!(fs::read(&file).unwrap(), 7i32.to_ne_bytes());
        drop(held);
        // No file (no CONFIG_CPU_IDLE), one that cannot be opened.
        let none = dir.join("none");
        assert_eq!(
            hold_latency_target(&none, 0).unwrap_err(),
            format!(
                "WARN: stat {} failed: No such file or directory",
                none.display()
            )
        );
        assert_eq!(
            hold_latency_target(&dir, 0).unwrap_err(),
            format!("WARN: open {}: Is a directory", dir.display())
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_running_status_file_as_rstat_setup_makes_it() {
        let dir = std::env::temp_dir().join(format!("rtlat-rstat-setup-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // A stale file of that name is replaced by an empty one.
        let path = dir.join("cyclictest1");
        fs::write(&path, "stale").unwrap();
        let r = rstat_setup(path.clone()).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"");
        drop(r);
        assert!(!path.exists());
        assert_eq!(
            rstat_setup(dir.join("none/cyclictest1")).err().unwrap(),
            "ERROR: shm_open No such file or directory"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    fn parse(args: &str) -> Result<Parsed, Refused> {
        let env = Env {
            possible: (0..4).collect(),
            configured: 4,
            allowed: (0..4).collect(),
        };
        let args: Vec<String> = args.split_whitespace().map(String::from).collect();
        opts::parse(&args, &env)
    }

    fn settings(args: &str) -> Settings {
        match parse(args) {
            Ok(Parsed::Run(s)) => *s,
            other => panic!("{args}: {other:?}"),
        }
    }

    #[test]
    fn fail_if_is_the_native_gate() {
        let s = settings(
            "-q -p 80 --fail-if user.max>1ns --fail-if=user.p99>1000ms --fail-i thread.avg<1us",
        );
        let want: Vec<_> = ["user.max>1ns", "user.p99>1000ms", "thread.avg<1us"]
            .into_iter()
            .map(|e| crate::gate::parse(e).unwrap())
            .collect();
        assert_eq!(common(&s).unwrap().ci.fail_if, want);
        // A bad expression: the native message, refused (exit 2).
        assert_eq!(
            parse("-p 80 --fail-if user.max=1us"),
            Err(Refused(
                "--fail-if: 'user.max=1us': no comparison (>, >=, <, <=), e.g. thread.p99.99>100us"
                    .into()
            ))
        );
        assert_eq!(
            parse("-p 80 --fail-if"),
            Err(Refused("option '--fail-if' requires an argument".into()))
        );
        // Long only: no letter of cyclictest's is taken.
        assert_eq!(
            parse("-p 80 -f user.max>1ns"),
            Err(Refused("unknown option '-f'".into()))
        );
    }

    /// The end of a run of `rtlat cyclictest ARGS` on CPUs 0 and 1 whose
    /// user stage measured `cpu0` and `cpu1` (ns); its gates evaluated.
    fn gated_end(
        args: &str,
        cpu0: &[u64],
        cpu1: &[u64],
        f: impl Fn(&mut Outcome<'_>, &Cyclictest),
    ) {
        use crate::gate::tests::stats;
        let s = settings(args);
        let plan = Plan::new(&common(&s).unwrap(), &[0, 1, 2, 3], "0-3").unwrap();
        let mode = Cyclictest::new(s, None, vec![0, 0]);
        let mut o = collect::tests::outcome(&plan);
        let st = [stats(0, Stage::User, cpu0), stats(1, Stage::User, cpu1)];
        o.report.gates = plan.gates.evaluate(&st, &[], &o.report.totals);
        o.report.stop.trip = None;
        o.report.stop.reason = StopCause::Duration;
        f(&mut o, &mode);
    }

    #[test]
    fn a_failed_gate_is_never_cyclictests_0() {
        let args = "-q -p 80 -t 2 -d 0 -b 100 --fail-if user.max>50us --fail-if user.p99>1000ms";
        gated_end(args, &[5_000; 100], &[5_000, 80_000], |o, mode| {
            // The native tool's lines, for stderr.
            let lines = lifecycle::gate_lines(o);
            assert!(
                lines.starts_with("rtlat: gate user.max>50us: FAILED (80.000 us on CPU 1)\n"),
                "{lines}"
            );
            assert!(
                lines.contains("\nrtlat: gate user.p99>1000ms: passed ("),
                "{lines}"
            );
            // The gate's status, where cyclictest would exit 0 ...
            assert_eq!(lifecycle::verdict(o, mode), (exit::GATE, None));
            // ... after a -b break too.
            o.report.stop.tripped(150_000);
            assert_eq!(lifecycle::verdict(o, mode), (exit::GATE, None));
            // A run cut short stays cyclictest's 1.
            o.report.stop.trip = None;
            o.report.stop.reason = StopCause::Error;
            assert_eq!(lifecycle::verdict(o, mode).0, exit::ERROR);
        });
        // Every gate passed: cyclictest's 0, after a break or not.
        gated_end(args, &[5_000; 100], &[5_000; 100], |o, mode| {
            let lines = lifecycle::gate_lines(o);
            assert!(
                lines.starts_with("rtlat: gate user.max>50us: passed (5.000 us on CPU "),
                "{lines}"
            );
            assert_eq!(lifecycle::verdict(o, mode), (exit::OK, None));
            o.report.stop.reason = StopCause::Threshold;
            assert_eq!(lifecycle::verdict(o, mode), (exit::OK, None));
        });
        // -N: the values in ns, as the native tool's --ns.
        gated_end(
            "-q -N -p 80 -t 2 -d 0 --fail-if user.min>=1us",
            &[1_000],
            &[900],
            |o, _| {
                assert_eq!(
                    lifecycle::gate_lines(o),
                    "rtlat: gate user.min>=1us: FAILED (1000 ns on CPU 0)\n"
                );
            },
        );
    }
}
