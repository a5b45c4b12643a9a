// SPDX-License-Identifier: GPL-2.0

//! rtlat: measure wake-up latency with /dev/rtlat.

mod bench;
mod bench_check;
mod device;
mod output;
mod plot;
mod report;
mod sysinfo;

use std::{
    collections::BTreeMap,
    fs,
    io::{IsTerminal, Write},
    path::PathBuf,
    process::ExitCode,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    thread,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use clap::{Args, Parser, Subcommand};
use rtcore::{
    hist,
    uapi::{self, Config, Stage, State, StopReason},
};

use device::Device;
use output::{HistColumn, Live, Unit};

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
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Live status, one line per CPU in cyclictest's shape, and a per-stage table.
    Run(Common),
    /// Histogram in rtla timerlat hist's shape, with percentiles.
    Hist(HistArgs),
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
    /// Check that a JSON report (a run's, or a benchmark's bench.json)
    /// parses against this tool's schema.
    CheckJson {
        /// The report.
        file: PathBuf,
    },
}

#[derive(Args, Clone)]
struct Common {
    /// Device node.
    #[arg(long, default_value = "/dev/rtlat")]
    device: PathBuf,
    /// How long to measure (e.g. 30s, 5m, 1h); default until Ctrl-C.
    #[arg(short, long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// CPUs to measure on (list and ranges, e.g. 0-3,6); default all online.
    #[arg(short, long)]
    cpus: Option<String>,
    /// Period in µs (50 to 1000000).
    #[arg(short, long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(50..=1_000_000))]
    period: u64,
    /// SCHED_FIFO priority of the measuring threads (1-99; SCHED_OTHER is refused).
    #[arg(short = 'P', long, default_value_t = 95, value_parser = clap::value_parser!(u32).range(1..=99))]
    priority: u32,
    /// Stages to measure: irq always; thread unless only irq is listed (an irq-only run: the
    /// timer interrupt records each activation itself, no thread is woken, the lowest cost for
    /// long monitoring); user with --user.
    #[arg(long, value_delimiter = ',', default_value = "irq,thread")]
    stages: Vec<String>,
    /// Measure the user stage: one pinned, mlock'ed SCHED_FIFO thread per CPU blocks in the device.
    #[arg(short, long)]
    user: bool,
    /// Stop when a stage exceeds a latency, STAGE=µs (e.g. thread=100); repeatable.
    #[arg(short = 'T', long = "threshold", value_parser = parse_threshold)]
    thresholds: Vec<(Stage, u64)>,
    /// With a threshold: call tracing_off() so a trace running alongside keeps the culprit.
    #[arg(long)]
    tracing_off: bool,
    /// Warm up first for this long (e.g. 5 or 5s): a session of its own, without thresholds,
    /// whose records and statistics are discarded; --duration is then measured after it.
    #[arg(long, default_value = "0", value_parser = parse_warm_up)]
    warm_up: Duration,
    /// Print nanoseconds instead of microseconds.
    #[arg(long)]
    ns: bool,
    /// No live output, only the final summary.
    #[arg(short, long)]
    quiet: bool,
    /// Write a JSON report.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write an SVG plot.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Hold /dev/cpu_dma_latency at µs during the run (default: leave it, and report it).
    #[arg(long)]
    dma_latency: Option<i32>,
    /// Records per CPU ring in the kernel (power of two).
    #[arg(long, default_value_t = 4096)]
    ring: u32,
}

#[derive(Args, Clone)]
struct HistArgs {
    #[command(flatten)]
    common: Common,
    /// Histogram bucket size, in the output unit.
    #[arg(short, long, default_value_t = 1)]
    bucket_size: u64,
    /// Number of histogram entries.
    #[arg(short = 'E', long, default_value_t = 256)]
    entries: usize,
    /// Print all-zero rows too.
    #[arg(long)]
    with_zeros: bool,
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

fn stage_index(name: &str) -> Result<Stage, String> {
    [Stage::Irq, Stage::Thread, Stage::User]
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| format!("unknown stage '{name}' (irq, thread, user)"))
}

fn parse_threshold(s: &str) -> Result<(Stage, u64), String> {
    let (stage, us) = s
        .split_once('=')
        .ok_or_else(|| format!("threshold '{s}': use STAGE=µs, e.g. thread=100"))?;
    let us: u64 = us
        .parse()
        .map_err(|_| format!("threshold '{s}': bad number"))?;
    if us == 0 {
        return Err(format!("threshold '{s}': must be above 0"));
    }
    Ok((stage_index(stage)?, us * 1000))
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn install_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: The handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// Processes that have the device open (for "device busy").
fn holders(dev: &std::path::Path) -> Vec<String> {
    let target = fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for p in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = p.file_name().to_string_lossy().to_string();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let fds = fs::read_dir(p.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten();
        if fds
            .filter_map(|f| fs::read_link(f.path()).ok())
            .any(|l| l == target)
        {
            let comm = fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            out.push(format!("{pid} ({})", comm.trim()));
        }
    }
    out
}

/// What the streaming reader collected.
#[derive(Default)]
struct Stream {
    /// Latest main-stage latency per CPU.
    act: BTreeMap<u32, i64>,
    /// Per CPU: worst main-stage latency per time slot.
    slots: BTreeMap<u32, BTreeMap<u64, i64>>,
    records: u64,
    /// Per CPU: the thread whose latency is the main stage (the kernel
    /// thread `rtlat/N`, or the user thread), for cyclictest's `T:` lines.
    tids: BTreeMap<u32, i32>,
    /// Expected time of the session's first record: time 0 of the slots.
    t0: Option<u64>,
}

const SLOT_NS: u64 = 100_000_000;

impl Stream {
    /// One record read from the device; `main` is the stage shown.
    fn add(&mut self, r: &uapi::Record, main: Stage) {
        self.records += 1;
        let v = r.lat_ns[main];
        if v < 0 {
            return;
        }
        let base = *self.t0.get_or_insert(r.expected_ns);
        self.act.insert(r.cpu, v);
        let slot = r.expected_ns.saturating_sub(base) / SLOT_NS;
        let e = self
            .slots
            .entry(r.cpu)
            .or_default()
            .entry(slot)
            .or_insert(0);
        *e = (*e).max(v);
    }
}

/// One session of a run on the device.
#[derive(Debug, PartialEq)]
struct Phase {
    config: Config,
    /// How long it runs; `None`: until Ctrl-C.
    duration: Option<Duration>,
    /// The warm-up: its records and statistics are discarded.
    warm_up: bool,
}

/// The sessions of a run: with a warm-up, first a session of its own for
/// `warm_up` (see [`warm_up_config`]), then the measured one with `config`
/// for `duration`. The measured session is configured anew, so its
/// statistics, ring counters, missed periods, records and time line cover
/// only the measured part.
fn phases(
    config: &Config,
    warm_up: Duration,
    duration: Option<Duration>,
) -> (Option<Phase>, Phase) {
    let warm = (!warm_up.is_zero()).then(|| Phase {
        config: warm_up_config(config),
        duration: Some(warm_up),
        warm_up: true,
    });
    let measured = Phase {
        config: *config,
        duration,
        warm_up: false,
    };
    (warm, measured)
}

/// The warm-up session's settings: those of the run, without thresholds
/// (a latency there is not a result, so it must not stop the run) and
/// without `tracing_off`.
fn warm_up_config(config: &Config) -> Config {
    Config {
        threshold_ns: [0; uapi::NR_STAGES],
        flags: config.flags & !uapi::CFG_TRACING_OFF,
        ..*config
    }
}

fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Pins the calling thread to `cpu`.
fn pin_to(cpu: u32) -> Result<(), String> {
    // SAFETY: A plain syscall on the calling thread with an initialised set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

fn set_fifo_pinned(cpu: u32, prio: u32) -> Result<(), String> {
    pin_to(cpu)?;
    // SAFETY: A plain syscall on the calling thread with initialised arguments.
    unsafe {
        let p = libc::sched_param {
            sched_priority: prio as i32,
        };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
            return Err(format!(
                "cannot set SCHED_FIFO {prio}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// Configures a session on `dev`, with the errors a user needs.
fn configure(dev: &Device, config: &Config, c: &Common) -> Result<(), String> {
    dev.config(config).map_err(|e| match e.raw_os_error() {
        Some(libc::EBUSY) => {
            let h = holders(&c.device);
            format!(
                "{}: device busy: another session is configured or running{}",
                c.device.display(),
                if h.is_empty() {
                    String::new()
                } else {
                    format!(" (open by {})", h.join(", "))
                }
            )
        }
        Some(libc::EPERM) => format!(
            "{}: CAP_SYS_NICE and CAP_SYS_ADMIN are needed to measure",
            c.device.display()
        ),
        _ => format!("{}: configure: {e}", c.device.display()),
    })
}

/// What every session of a run shares.
struct Run<'a> {
    dev: &'a Device,
    cpus: &'a [u32],
    stages: &'a [Stage],
    main_stage: Stage,
    user: bool,
    c: &'a Common,
    live_stages: bool,
}

/// A session that ended (and is stopped).
struct Ended {
    /// `duration`, `interrupted`, `threshold` or `error`.
    reason: &'static str,
    stream: Stream,
    /// Wall-clock start and end, seconds since the epoch.
    start_time: f64,
    end_time: f64,
}

impl Run<'_> {
    /// Starts the configured session, streams its records (and runs the user
    /// threads) until `phase.duration`, Ctrl-C or a stop by the device,
    /// stops it, and returns once every record was read.
    fn session(&self, phase: &Phase) -> Result<Ended, String> {
        let (dev, c, main_stage) = (self.dev, self.c, self.main_stage);
        let start_time = now_epoch();
        dev.start().map_err(|e| format!("start: {e}"))?;
        let started = Instant::now();

        let stream = Arc::new(Mutex::new(Stream::default()));
        if !self.user {
            // The kernel threads exist once START returned (none for a device
            // whose events are completed by its IRQ thread).
            let pids = sysinfo::task_pids();
            let mut s = stream.lock().unwrap();
            for &cpu in self.cpus {
                if let Some(&tid) = pids.get(&format!("rtlat/{cpu}")) {
                    s.tids.insert(cpu, tid);
                }
            }
        }
        let reader = {
            let mut rdev = dev.try_clone().map_err(|e| format!("reader: {e}"))?;
            let stream = stream.clone();
            thread::spawn(move || {
                let mut buf = vec![0u8; 256 * uapi::RECORD_SIZE];
                while let Ok(Some(recs)) = rdev.read_records(&mut buf) {
                    let mut s = stream.lock().unwrap();
                    for r in &recs {
                        s.add(r, main_stage);
                    }
                }
            })
        };
        let stop_users = Arc::new(AtomicBool::new(false));
        let mut users = Vec::new();
        if self.user {
            for &cpu in self.cpus {
                let udev = dev.try_clone().map_err(|e| format!("user thread: {e}"))?;
                let stop = stop_users.clone();
                let prio = c.priority;
                let stream = stream.clone();
                users.push(thread::spawn(move || -> Result<(), String> {
                    set_fifo_pinned(cpu, prio)?;
                    // SAFETY: gettid has no preconditions.
                    let tid = unsafe { libc::gettid() };
                    stream.lock().unwrap().tids.insert(cpu, tid);
                    while !stop.load(Ordering::Relaxed) {
                        match udev.user_wait() {
                            Ok(_) => {}
                            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                            Err(_) => break,
                        }
                    }
                    Ok(())
                }));
            }
        }

        let tty = std::io::stdout().is_terminal() && !c.quiet;
        let unit = Unit { ns: c.ns };
        let mut printed_lines = 0usize;
        let mut last_print = Instant::now() - Duration::from_secs(1);
        let reason;
        loop {
            thread::sleep(Duration::from_millis(100));
            let st = dev.status()?;
            let elapsed = started.elapsed();
            if State::from_raw(st.state) == Some(State::Stopped) {
                reason = if StopReason::from_raw(st.stop_reason) == Some(StopReason::Threshold) {
                    "threshold"
                } else {
                    "error"
                };
                break;
            }
            if INTERRUPTED.load(Ordering::SeqCst) {
                reason = "interrupted";
                break;
            }
            if phase.duration.is_some_and(|d| elapsed >= d) {
                reason = "duration";
                break;
            }
            if tty && last_print.elapsed() >= Duration::from_secs(1) {
                last_print = Instant::now();
                let text = live_text(self, phase, &stream, unit, elapsed);
                if printed_lines > 0 {
                    print!("\x1b[{printed_lines}A\x1b[J");
                }
                printed_lines = text.lines().count();
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
        }
        if printed_lines > 0 && phase.warm_up {
            // The measured session's lines replace the warm-up's.
            print!("\x1b[{printed_lines}A\x1b[J");
            let _ = std::io::stdout().flush();
        }
        dev.stop().map_err(|e| format!("stop: {e}"))?;
        stop_users.store(true, Ordering::Relaxed);
        for u in users {
            if let Ok(Err(e)) = u.join() {
                eprintln!("rtlat: user thread: {e}");
            }
        }
        let _ = reader.join();
        let end_time = now_epoch();
        let stream = Arc::try_unwrap(stream)
            .map_err(|_| "the record stream is still in use".to_string())?
            .into_inner()
            .map_err(|_| "a thread of the session panicked".to_string())?;
        Ok(Ended {
            reason,
            stream,
            start_time,
            end_time,
        })
    }
}

struct Outcome {
    report: report::Report,
    hist_cols: Vec<(u32, Stage, Vec<u64>, uapi::Stats)>,
    tids: BTreeMap<u32, i32>,
    /// The last stage measured, the one cyclictest's line shows.
    main_stage: Stage,
}

fn measure(c: &Common, live_stages: bool) -> Result<Outcome, String> {
    let info = sysinfo::collect();
    if !info.realtime {
        eprintln!(
            "rtlat: WARNING: '{}' is not a PREEMPT_RT kernel: the numbers do not show RT behaviour",
            info.version
        );
    }
    let online = sysinfo::online_cpus();
    let cpus = match &c.cpus {
        Some(list) => sysinfo::parse_cpu_list(list)?,
        None => online.clone(),
    };
    if cpus.is_empty() {
        return Err("no CPU to measure on".into());
    }
    for cpu in &cpus {
        if !online.contains(cpu) {
            return Err(format!(
                "CPU {cpu} is not online (online: {})",
                info.online_cpus
            ));
        }
        if *cpu as usize >= uapi::MAX_CPUS {
            return Err(format!(
                "CPU {cpu} is beyond the {} CPUs rtlat supports",
                uapi::MAX_CPUS
            ));
        }
    }
    let mut stages = vec![Stage::Irq];
    for s in &c.stages {
        let i = stage_index(s)?;
        if !stages.contains(&i) {
            stages.push(i);
        }
    }
    let user = c.user || stages.contains(&Stage::User);
    if user && !stages.contains(&Stage::Thread) {
        return Err("the user stage needs the thread stage (--stages irq,thread,user)".into());
    }
    if user && !stages.contains(&Stage::User) {
        stages.push(Stage::User);
    }
    stages.sort_unstable();
    let main_stage = *stages.last().unwrap_or(&Stage::Irq);
    for (st, _) in &c.thresholds {
        if *st == Stage::User && !user {
            return Err("a user threshold needs --user".into());
        }
        if *st == Stage::Thread && !stages.contains(&Stage::Thread) {
            return Err("a thread threshold needs the thread stage".into());
        }
    }

    let mut config = Config {
        period_ns: c.period * 1000,
        priority: c.priority,
        ring_records: c.ring,
        ..Default::default()
    };
    // Without --cpus the device picks its channels (every online CPU for
    // /dev/rtlat, the device itself for /dev/rtedu<N>): the status says which.
    if c.cpus.is_some() {
        for &cpu in &cpus {
            config.cpus[cpu as usize / 64] |= 1 << (cpu % 64);
        }
    }
    config.stages = stages.iter().map(|s| s.bit()).sum();
    for &(st, ns) in &c.thresholds {
        config.threshold_ns[st] = ns;
    }
    if c.tracing_off {
        config.flags |= uapi::CFG_TRACING_OFF;
    }
    config
        .validate()
        .map_err(|e| format!("invalid settings: {e:?}"))?;

    // Only when asked: hold the CPU DMA latency (and report it either way).
    let _dma = match c.dma_latency {
        Some(us) => {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .open("/dev/cpu_dma_latency")
                .map_err(|e| format!("/dev/cpu_dma_latency: {e}"))?;
            f.write_all(&us.to_ne_bytes())
                .map_err(|e| format!("/dev/cpu_dma_latency: {e}"))?;
            Some(f)
        }
        None => None,
    };

    let dev = Device::open(&c.device, false)?;
    dev.status()?;
    let (warm, measured) = phases(&config, c.warm_up, c.duration);
    configure(&dev, &warm.as_ref().unwrap_or(&measured).config, c)?;
    let cpus: Vec<u32> = {
        let st = dev.status()?;
        (0..uapi::MAX_CPUS as u32)
            .filter(|&i| st.cpus[i as usize / 64] & (1 << (i % 64)) != 0)
            .collect()
    };
    if user {
        // SAFETY: mlockall has no memory-safety preconditions.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            eprintln!(
                "rtlat: WARNING: mlockall: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    install_signals();
    let run = Run {
        dev: &dev,
        cpus: &cpus,
        stages: &stages,
        main_stage,
        user,
        c,
        live_stages,
    };
    if let Some(w) = &warm {
        // Its records were read and are dropped here, with its statistics.
        match run.session(w)?.reason {
            "duration" => {}
            "interrupted" => return Err("interrupted during the warm-up: nothing measured".into()),
            _ => return Err("the session stopped during the warm-up: nothing measured".into()),
        }
        // The owner reconfigures its stopped session: a new one, with fresh
        // statistics and ring counters, and the thresholds armed.
        configure(&dev, &measured.config, c)?;
    }
    let Ended {
        reason,
        stream,
        start_time,
        end_time,
    } = run.session(&measured)?;
    let status = dev.status()?;

    // Final statistics from the module.
    let mut cpu_reports = Vec::new();
    let mut hist_cols = Vec::new();
    let mut all_stages = stages.clone();
    if user {
        all_stages.push(Stage::Response);
    }
    for &cpu in &cpus {
        let mut sr = BTreeMap::new();
        let mut missed = 0;
        let mut dropped = 0;
        for &stage in &all_stages {
            let (st, b) = dev
                .stats(cpu, stage)
                .map_err(|e| format!("stats cpu {cpu}: {e}"))?;
            missed = st.missed;
            dropped = st.dropped;
            let mut pct = BTreeMap::new();
            for (k, &ppm) in hist::PERCENTILES_PPM.iter().enumerate() {
                if let Some(v) = hist::percentile(&b, ppm, st.max) {
                    pct.insert(hist::PERCENTILE_NAMES[k].to_string(), v);
                }
            }
            sr.insert(
                stage.name().to_string(),
                report::StageReport {
                    count: st.count,
                    min_ns: st.min,
                    avg_ns: st.sum.checked_div(st.count).unwrap_or(0),
                    max_ns: st.max,
                    max_seq: st.max_seq,
                    max_time_ns: st.max_time,
                    percentiles_ns: pct,
                    histogram: report::Histogram::from_buckets(&b),
                },
            );
            hist_cols.push((cpu, stage, b, st));
        }
        cpu_reports.push(report::CpuReport {
            cpu,
            missed,
            dropped,
            stages: sr,
        });
    }
    let trip =
        (StopReason::from_raw(status.stop_reason) == Some(StopReason::Threshold)).then(|| {
            report::Trip {
                cpu: status.trip_cpu,
                stage: Stage::from_raw(status.trip_stage)
                    .map_or("unknown", Stage::name)
                    .to_string(),
                value_ns: status.trip_value_ns,
                seq: status.trip_seq,
            }
        });
    let report = report::Report {
        schema: report::SCHEMA.into(),
        schema_version: report::SCHEMA_VERSION,
        tool: report::Tool {
            name: "rtlat".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            uapi_version: uapi::VERSION,
            module_srcversion: info.module_srcversion.clone(),
        },
        command_line: std::env::args().collect(),
        start_time,
        end_time,
        system: report::sysinfo_json(&info),
        settings: report::Settings {
            period_us: c.period as f64,
            cpus: cpus.clone(),
            stages: stages.iter().map(|s| s.name().to_string()).collect(),
            priority: c.priority,
            thresholds_us: c
                .thresholds
                .iter()
                .map(|&(s, ns)| (s.name().to_string(), ns as f64 / 1000.0))
                .collect(),
            duration_s: c.duration.map(|d| d.as_secs_f64()),
            warm_up_s: c.warm_up.as_secs_f64(),
            user_threads: user,
            dma_latency_us: c.dma_latency,
            tracing_off: c.tracing_off,
        },
        stop: report::Stop {
            reason: if trip.is_some() {
                "threshold".into()
            } else {
                reason.into()
            },
            trip,
        },
        totals: report::Totals {
            produced: status.produced,
            delivered: status.delivered,
            dropped: status.dropped,
            missed: status.missed,
        },
        cpus: cpu_reports,
    };
    if let Some(p) = &c.json {
        let s = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        fs::write(p, s + "\n").map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &c.svg {
        let hists: Vec<plot::HistSeries> = hist_cols
            .iter()
            .filter(|(_, _, _, st)| st.count > 0)
            .map(|(cpu, stage, b, _)| {
                plot::HistSeries::from_buckets(format!("cpu{cpu} {}", stage.name()), b)
            })
            .collect();
        let times: Vec<plot::TimeSeries> = stream
            .slots
            .iter()
            .map(|(cpu, slots)| plot::TimeSeries {
                name: format!("cpu{cpu} {}", main_stage.name()),
                points: slots
                    .iter()
                    .map(|(&k, &v)| ((k * SLOT_NS) as f64 / 1e9, v as f64 / 1000.0))
                    .collect(),
            })
            .collect();
        let title = format!(
            "rtlat on {} ({}), period {} µs",
            info.release, info.machine, c.period
        );
        plot::write_svg(&p.to_string_lossy(), &title, &hists, &times)?;
    }
    Ok(Outcome {
        report,
        hist_cols,
        tids: stream.tids,
        main_stage,
    })
}

/// The live lines: per CPU in cyclictest's shape, the stage table, progress.
fn live_text(
    run: &Run<'_>,
    phase: &Phase,
    stream: &Arc<Mutex<Stream>>,
    unit: Unit,
    elapsed: Duration,
) -> String {
    let Run {
        dev,
        cpus,
        stages,
        main_stage,
        c,
        live_stages: table,
        ..
    } = *run;
    let (act, tids) = {
        let s = stream.lock().unwrap();
        (s.act.clone(), s.tids.clone())
    };
    let mut s = String::new();
    let mut rows = Vec::new();
    for (i, &cpu) in cpus.iter().enumerate() {
        let mut per: [Option<Live>; uapi::NR_STAGES] = Default::default();
        for &st in stages {
            if let Ok((x, _)) = dev.stats(cpu, st) {
                per[st] = Some(Live {
                    count: x.count,
                    min: if x.count == 0 { 0 } else { x.min },
                    avg: x.sum.checked_div(x.count).unwrap_or(0),
                    max: x.max,
                    cur: if st == main_stage {
                        act.get(&cpu).copied().unwrap_or(0)
                    } else {
                        0
                    },
                });
            }
        }
        if let Some(l) = &per[main_stage] {
            let tid = tids.get(&cpu).copied().unwrap_or(0);
            s += &output::cyclictest_line(i, tid, c.priority, c.period, l, unit);
            s.push('\n');
        }
        rows.push((cpu, per));
    }
    if table {
        s += &output::stage_table(&rows, stages, unit);
    }
    let e = elapsed.as_secs();
    if phase.warm_up {
        let left = phase.duration.map_or(0, |d| d.as_secs().saturating_sub(e));
        s += &format!("# warm-up, {left} s left: discarded, thresholds not armed\n");
        return s;
    }
    match phase.duration {
        Some(d) => {
            let left = d.as_secs().saturating_sub(e);
            s += &format!(
                "# elapsed {:02}:{:02}:{:02}, {} s left\n",
                e / 3600,
                e / 60 % 60,
                e % 60,
                left
            )
        }
        None => {
            s += &format!(
                "# elapsed {:02}:{:02}:{:02} (Ctrl-C to stop)\n",
                e / 3600,
                e / 60 % 60,
                e % 60
            )
        }
    }
    s
}

fn summary_run(o: &Outcome, c: &Common) -> String {
    let unit = Unit { ns: c.ns };
    let mut s = String::new();
    let main = o.main_stage.name();
    for (i, cpu) in o.report.cpus.iter().enumerate() {
        if let Some(st) = cpu.stages.get(main) {
            let l = Live {
                count: st.count,
                min: st.min_ns,
                avg: st.avg_ns,
                max: st.max_ns,
                cur: 0,
            };
            let tid = o.tids.get(&cpu.cpu).copied().unwrap_or(0);
            s += &output::cyclictest_line(i, tid, c.priority, c.period, &l, unit);
            s += &format!(" Missed:{} Dropped:{}\n", cpu.missed, cpu.dropped);
        }
    }
    for cpu in &o.report.cpus {
        for (name, st) in &cpu.stages {
            let p = |k: &str| {
                st.percentiles_ns
                    .get(k)
                    .map_or("-".to_string(), |v| unit.v(*v).to_string())
            };
            s += &format!(
                "# cpu {:3} {:8}: count {} min {} avg {} max {} (seq {}) p50 {} p99 {} p99.9 {} p99.99 {} p99.9999 {}\n",
                cpu.cpu,
                name,
                st.count,
                unit.v(st.min_ns),
                unit.v(st.avg_ns),
                unit.v(st.max_ns),
                st.max_seq,
                p("p50"),
                p("p99"),
                p("p99.9"),
                p("p99.99"),
                p("p99.9999")
            );
        }
    }
    s
}

fn summary_hist(o: &Outcome, h: &HistArgs) -> String {
    let prefix = |stage: Stage| match stage {
        Stage::Irq => "IRQ",
        Stage::Thread => "Thr",
        Stage::User => "Usr",
        Stage::Response => "Rsp",
    };
    let cols: Vec<HistColumn> = o
        .hist_cols
        .iter()
        .map(|(cpu, stage, b, st)| HistColumn {
            name: format!("{}-{cpu:03}", prefix(*stage)),
            buckets: b.clone(),
            count: st.count,
            min: st.min,
            avg: st.sum.checked_div(st.count).unwrap_or(0),
            max: st.max,
        })
        .collect();
    let secs = (o.report.end_time - o.report.start_time).max(0.0) as u64;
    let dur = format!(
        "{} {:02}:{:02}:{:02}",
        secs / 86400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    );
    output::histogram(
        &cols,
        h.bucket_size.max(1),
        h.entries,
        &dur,
        h.with_zeros,
        Unit { ns: h.common.ns },
    )
}

fn finish(o: &Outcome, text: String) -> ExitCode {
    print!("{text}");
    match &o.report.stop.trip {
        Some(t) => {
            println!(
                "rtlat: threshold exceeded on CPU {} ({} stage): {} ns at activation {}",
                t.cpu, t.stage, t.value_ns, t.seq
            );
            ExitCode::from(2)
        }
        None => ExitCode::SUCCESS,
    }
}

/// Exit status of a command line clap refused: 1 as for any other error (2
/// says a threshold was exceeded), 0 for --help and --version.
fn usage_exit(e: &clap::Error) -> u8 {
    u8::from(e.use_stderr())
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(usage_exit(&e));
        }
    };
    let result = match &cli.cmd {
        Cmd::Run(c) => measure(c, true).map(|o| {
            let t = summary_run(&o, c);
            (o, t)
        }),
        Cmd::Hist(h) => measure(&h.common, false).map(|o| {
            let t = summary_hist(&o, h);
            (o, t)
        }),
        Cmd::BenchJob { seconds } => {
            let cpus = sysinfo::online_cpus();
            return match bench::job(&cpus, Duration::from_secs_f64(*seconds), pin_to) {
                Ok(rate) => {
                    println!("{rate:.1}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rtlat: error: {e}");
                    ExitCode::from(1)
                }
            };
        }
        Cmd::BenchReport {
            log,
            out,
            kernel,
            arch,
        } => {
            return match bench::report(log, out, kernel, arch) {
                Ok(md) => {
                    print!("{md}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rtlat: error: {e}");
                    ExitCode::from(1)
                }
            };
        }
        Cmd::CheckJson { file } => {
            if let Some(code) = bench_check::check_json(file) {
                return code;
            }
            return match fs::read_to_string(file)
                .map_err(|e| e.to_string())
                .and_then(|s| serde_json::from_str::<report::Report>(&s).map_err(|e| e.to_string()))
            {
                Ok(r)
                    if r.schema == report::SCHEMA && r.schema_version == report::SCHEMA_VERSION =>
                {
                    match r.consistency() {
                        Ok(()) => {
                            println!(
                                "{}: valid {} v{} report, {} CPUs, consistent",
                                file.display(),
                                r.schema,
                                r.schema_version,
                                r.cpus.len()
                            );
                            ExitCode::SUCCESS
                        }
                        Err(e) => {
                            eprintln!("rtlat: {}: inconsistent: {e}", file.display());
                            ExitCode::from(1)
                        }
                    }
                }
                Ok(r) => {
                    eprintln!(
                        "rtlat: {}: schema {} v{} is not {} v{}",
                        file.display(),
                        r.schema,
                        r.schema_version,
                        report::SCHEMA,
                        report::SCHEMA_VERSION
                    );
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("rtlat: {}: {e}", file.display());
                    ExitCode::from(1)
                }
            };
        }
    };
    match result {
        Ok((o, text)) => finish(&o, text),
        Err(e) => {
            eprintln!("rtlat: error: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn armed() -> Config {
        let mut c = Config {
            period_ns: 200_000,
            priority: 90,
            ring_records: 1024,
            stages: Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit(),
            flags: uapi::CFG_TRACING_OFF,
            ..Default::default()
        };
        c.cpus[0] = 0b101;
        c.threshold_ns[Stage::Thread] = 50_000;
        c.threshold_ns[Stage::User] = 80_000;
        c
    }

    #[test]
    fn without_warm_up_one_measured_session() {
        let d = Some(Duration::from_secs(10));
        let (warm, measured) = phases(&armed(), Duration::ZERO, d);
        assert!(warm.is_none());
        assert_eq!(
            measured,
            Phase {
                config: armed(),
                duration: d,
                warm_up: false
            }
        );
    }

    #[test]
    fn warm_up_is_a_session_of_its_own_without_thresholds() {
        let d = Some(Duration::from_secs(10));
        let (warm, measured) = phases(&armed(), Duration::from_secs(3), d);
        let warm = warm.expect("a warm-up session");
        assert!(warm.warm_up);
        assert_eq!(warm.duration, Some(Duration::from_secs(3)));
        // Nothing armed: no threshold, no tracing_off ...
        assert_eq!(warm.config.threshold_ns, [0; uapi::NR_STAGES]);
        assert_eq!(warm.config.flags & uapi::CFG_TRACING_OFF, 0);
        assert_eq!(warm.config.validate(), Ok(()));
        // ... and otherwise what is measured.
        let a = armed();
        assert_eq!(
            Config {
                threshold_ns: a.threshold_ns,
                flags: a.flags,
                ..warm.config
            },
            a
        );
        // The measured session: the settings as asked, for the whole --duration.
        assert_eq!(
            measured,
            Phase {
                config: a,
                duration: d,
                warm_up: false
            }
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

    fn rec(cpu: u32, expected_ns: u64, thread: i64) -> uapi::Record {
        uapi::Record {
            cpu,
            expected_ns,
            lat_ns: [1_000, thread, -1, -1],
            ..Default::default()
        }
    }

    #[test]
    fn time_line_starts_with_the_sessions_first_record() {
        // A session that starts late on the monotonic clock (after a
        // warm-up): its slots count from its own first record.
        let t = 50_000_000_000;
        let mut s = Stream::default();
        s.add(&rec(0, t, 4_000), Stage::Thread);
        s.add(&rec(1, t + 1_000_000, 9_000), Stage::Thread);
        s.add(&rec(0, t + SLOT_NS + 1, 7_000), Stage::Thread);
        s.add(&rec(0, t + SLOT_NS + 2, 3_000), Stage::Thread);
        // Not measured in the main stage: counted, not plotted.
        s.add(&rec(1, t + 5 * SLOT_NS, -1), Stage::Thread);
        assert_eq!(s.records, 5);
        assert_eq!(s.slots[&0], BTreeMap::from([(0, 4_000), (1, 7_000)]));
        assert_eq!(s.slots[&1], BTreeMap::from([(0, 9_000)]));
        assert_eq!(s.act[&0], 3_000);
    }
}
