// SPDX-License-Identifier: GPL-2.0

//! `rtlat monitor`: leave it running. The kernel keeps the histograms; the
//! monitor reads its statistics (`RTLAT_IOC_STATS`) every interval and
//! writes what the interval added (a JSON line: [`snapshot`]), serves them
//! to Prometheus ([`metrics`], [`http`], [`textfile`]), and on a threshold
//! trip runs its actions ([`action`]) and starts a new session: its
//! counts join those before ([`state`]), so the monitor goes on measuring.
//!
//! The plan, the device, the housekeeping CPUs and the signals are the
//! ones every measuring command uses ([`crate::lifecycle`]); the loop is
//! its own, since a run of the lifecycle is one session that a trip ends.
//! No record is looked at unless asked: a thread drains the rings (so
//! nothing is dropped) and counts what it read per CPU. Its memory is set
//! by the CPUs and stages, never by how long it runs.

pub mod action;
pub mod example;
mod history;
mod http;
mod metrics;
mod snapshot;
mod state;
mod textfile;

use std::{
    io::Write,
    process::ExitCode,
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    thread::{self, JoinHandle},
    time::{Duration, Instant},
};

use rtcore::uapi::{Stage, State as DevState, StopReason};

pub use self::metrics::Format;
use self::{
    action::Actions,
    history::History,
    http::{Exposition, Published},
    metrics::Info,
    snapshot::{Clock, Snapshot, TripLine},
    state::State,
};
use crate::{
    cli::MonitorArgs,
    device::Device,
    exit,
    output::Unit,
    plan::Plan,
    report::{Build, Trip},
    sched,
    session::{monotonic_ns, now_epoch},
    signals, stream, sysinfo,
};

/// How often the metrics are refreshed for `--listen`.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);

/// Why a session ended.
#[derive(Clone, Copy, PartialEq)]
enum End {
    /// A threshold tripped (the kernel stopped the session).
    Trip,
    /// SIGTERM or SIGINT.
    Signal,
    /// `--duration` is over.
    Duration,
}

/// What the loop writes to.
struct Outputs {
    history: Option<History>,
    textfile: Option<std::path::PathBuf>,
    published: Option<Arc<Published>>,
    info: Info,
    /// The histogram's `le` boundaries, ns (`--buckets`).
    bounds: Vec<u64>,
}

/// The monitor's run.
struct Monitor<'a> {
    plan: &'a Plan,
    dev: &'a Device,
    cpus: Vec<u32>,
    stages: Vec<Stage>,
    state: State,
    /// Records read per CPU, by every session's reader.
    read: Arc<Vec<AtomicU64>>,
    /// CPUs the tool's threads ran on since the last snapshot, a bit each.
    ran_on: Arc<AtomicU64>,
    out: Outputs,
    started: Instant,
    last_snapshot: Instant,
    seq: u64,
    trips: Vec<TripLine>,
    trips_total: u64,
    interval: Duration,
    /// When the statistics were last read, s since the epoch (0: never).
    last_read: f64,
    /// Whether a kernel session is measuring.
    running: bool,
}

/// Runs `rtlat monitor` with options `a`.
pub fn run(a: &MonitorArgs) -> Result<ExitCode, String> {
    let info = sysinfo::collect();
    if !info.realtime {
        eprintln!(
            "rtlat: WARNING: '{}' is not a PREEMPT_RT kernel: the numbers do not show RT behaviour",
            info.version
        );
    }
    let plan = match Plan::new(&a.common(), &sysinfo::online_cpus(), &info.online_cpus) {
        Ok(plan) => plan,
        // Options that do not fit together are a usage error (2), as for
        // every measuring command.
        Err(r) => {
            eprintln!("rtlat: error: {r}");
            return Ok(ExitCode::from(r.exit_status()));
        }
    };

    // Every output is ready before the device is touched: a port in use or
    // an unwritable file is refused without measuring.
    let listener = a.listen.map(http::bind).transpose()?;
    let history = a
        .history
        .as_ref()
        .map(|p| History::open(p, a.history_size, a.history_keep))
        .transpose()?;
    if let Some(d) = &a.textfile {
        textfile::check(d)?;
    }

    let dev = Device::open(&plan.device, false)?;
    dev.status()?;
    let config = plan.phases.measured.config;
    dev.configure(&plan.device, &config, &plan.cpus)?;
    let cpus = dev.session_cpus()?;
    if plan.user {
        sched::lock_memory();
    }
    let online = sysinfo::online_cpus();
    let (hk, chosen) = housekeeping(
        plan.housekeeping.as_deref(),
        &sched::affinity(),
        &online,
        &cpus,
    );
    sched::pin_to_set(&hk)?;
    // (SIGHUP reopens the files before it is caught at all.)
    signals::install_reopen();
    signals::install();

    let published = listener.map(|l| {
        let p = Arc::new(Published::default());
        http::serve(l, p.clone());
        p
    });
    eprintln!(
        "rtlat monitor: CPUs {} ({}), its own threads on CPUs {} ({chosen}){}",
        sysinfo::format_cpu_list(&cpus),
        plan.reported_stages()
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(","),
        sysinfo::format_cpu_list(&sched::affinity()),
        a.listen.map_or(String::new(), |l| format!(
            ", metrics on http://{l}/metrics"
        ))
    );

    let out = Outputs {
        history,
        textfile: a.textfile.clone(),
        published,
        info: Info {
            kernel_release: info.release.clone(),
            preemption: info.preemption.clone(),
            arch: info.machine.clone(),
            isolated_cpus: info.isolated_cpus.clone().unwrap_or_default(),
            version: env!("CARGO_PKG_VERSION").into(),
            build: Build::this(),
        },
        bounds: metrics::bounds(&a.buckets),
    };
    let mut m = Monitor::new(&plan, &dev, cpus, a.interval, out);
    // A scrape before the first read gets the metrics at zero, not nothing.
    m.publish();
    let mut actions = Actions::new(&a.on_threshold);
    let end = m.watch(a, &mut actions)?;
    if let (Some(linger), Some(_)) = (a.linger, &m.out.published) {
        if end != End::Signal {
            // The device is another run's to take meanwhile.
            drop(m);
            drop(dev);
            linger_on(linger);
        }
    }
    Ok(ExitCode::from(if end == End::Trip {
        exit::THRESHOLD
    } else {
        exit::OK
    }))
}

/// `--linger`: the HTTP workers go on serving the final metrics for
/// `time`, or until SIGTERM or Ctrl-C.
fn linger_on(time: Duration) {
    eprintln!(
        "rtlat monitor: the end; serving the final metrics for {} s more",
        time.as_secs_f64()
    );
    let t0 = Instant::now();
    while t0.elapsed() < time && !signals::interrupted() {
        thread::sleep(Duration::from_millis(100).min(time.saturating_sub(t0.elapsed())));
    }
}

/// The CPUs of the tool's own threads: `--housekeeping`'s; else the CPUs
/// it was started on (`inherited`) if they are fewer than the `online` ones
/// (systemd's `CPUAffinity=`, taskset); else as every measuring command
/// chooses them ([`sched::housekeeping`]). With how they were chosen.
fn housekeeping(
    option: Option<&[u32]>,
    inherited: &[u32],
    online: &[u32],
    measured: &[u32],
) -> (Vec<u32>, &'static str) {
    if option.is_none() && !inherited.is_empty() && online.iter().any(|c| !inherited.contains(c)) {
        return (inherited.to_vec(), "the CPUs it was started on");
    }
    sched::housekeeping(option, online, measured)
}

/// Notes the CPU the calling thread runs on in `set`.
fn note_cpu(set: &AtomicU64) {
    if let Some(c) = sched::current_cpu().filter(|&c| c < 64) {
        set.fetch_or(1 << c, Ordering::Relaxed);
    }
}

impl<'a> Monitor<'a> {
    /// The monitor of the configured session of `dev`, on `cpus`, before
    /// its first session.
    fn new(
        plan: &'a Plan,
        dev: &'a Device,
        cpus: Vec<u32>,
        interval: Duration,
        out: Outputs,
    ) -> Self {
        let stages = plan.reported_stages();
        // (Records per CPU, by the CPU's number.)
        let top = cpus.iter().max().map_or(0, |&m| m as usize);
        Monitor {
            plan,
            dev,
            state: State::new(&cpus, &stages),
            cpus,
            stages,
            read: Arc::new((0..=top).map(|_| AtomicU64::new(0)).collect()),
            ran_on: Arc::new(AtomicU64::new(0)),
            out,
            started: Instant::now(),
            last_snapshot: Instant::now(),
            seq: 0,
            trips: Vec::new(),
            trips_total: 0,
            interval,
            last_read: 0.0,
            running: false,
        }
    }

    /// Runs sessions until the end (a signal, `--duration`, or a trip with
    /// `--stop-at-trip`) and writes the last snapshot. On an error the
    /// textfile and the endpoint are written once more with
    /// `rtlat_session_running` 0: nothing measures once the monitor has
    /// exited.
    fn watch(&mut self, a: &MonitorArgs, actions: &mut Actions) -> Result<End, String> {
        let end = self.sessions(a, actions);
        if end.is_err() {
            self.running = false;
            self.write_textfile();
            self.publish();
        }
        end
    }

    /// [`Self::watch`]'s sessions: one after another while a trip ends
    /// them, else the last.
    fn sessions(&mut self, a: &MonitorArgs, actions: &mut Actions) -> Result<End, String> {
        let plan = self.plan;
        loop {
            let mut end = self.session(actions)?;
            // A trip at the end, or one after another, must not hold the
            // monitor past its duration or a SIGTERM.
            if end == End::Trip && !a.stop_at_trip {
                if signals::interrupted() {
                    end = End::Signal;
                } else if a.duration.is_some_and(|d| self.started.elapsed() >= d) {
                    end = End::Duration;
                }
            }
            if end == End::Trip && !a.stop_at_trip {
                // A new session, fresh statistics in the kernel; the state
                // keeps adding them up.
                let config = plan.phases.measured.config;
                self.dev.configure(&plan.device, &config, &plan.cpus)?;
                continue;
            }
            self.snapshot(true)?;
            return Ok(end);
        }
    }

    /// Starts a session and watches it until it ends; its final
    /// statistics are in the state then.
    fn session(&mut self, actions: &mut Actions) -> Result<End, String> {
        let dev = self.dev;
        dev.start().map_err(|e| format!("start: {e}"))?;
        self.running = true;
        self.state.sessions += 1;
        let reader = self.reader()?;
        let stop_users = Arc::new(AtomicBool::new(false));
        let users = self.users(&stop_users)?;
        let mut last_publish = Instant::now() - PUBLISH_EVERY;
        let duration = self.plan.phases.measured.duration;
        let end = loop {
            thread::sleep(Duration::from_millis(100));
            note_cpu(&self.ran_on);
            actions.reap();
            if signals::reopen_requested() {
                if let Some(h) = &mut self.out.history {
                    if let Err(e) = h.reopen() {
                        eprintln!("rtlat: error: {e}");
                    }
                }
            }
            let st = dev.status()?;
            if DevState::from_raw(st.state) == Some(DevState::Stopped) {
                if StopReason::from_raw(st.stop_reason) == Some(StopReason::Threshold) {
                    break End::Trip;
                }
                return Err("the session was stopped from outside (the module unbound?)".into());
            }
            if signals::interrupted() {
                break End::Signal;
            }
            if duration.is_some_and(|d| self.started.elapsed() >= d) {
                break End::Duration;
            }
            let summary = signals::status_requested();
            let snap = self.last_snapshot.elapsed() >= self.interval;
            let publish = self.out.published.is_some() && last_publish.elapsed() >= PUBLISH_EVERY;
            if summary || snap || publish {
                self.read_stats()?;
            }
            if summary {
                eprint!("{}", self.summary());
            }
            if publish {
                last_publish = Instant::now();
                self.publish();
            }
            if snap {
                self.snapshot(false)?;
            }
        };
        dev.stop().map_err(|e| format!("stop: {e}"))?;
        self.running = false;
        stop_users.store(true, Ordering::Relaxed);
        for u in users {
            if let Ok(Err(e)) = u.join() {
                eprintln!("rtlat: user thread: {e}");
            }
        }
        reader
            .join()
            .map_err(|_| "the reader thread panicked".to_string())?;
        // Every record was read: the session's final statistics.
        self.read_stats()?;
        if end == End::Trip {
            let st = dev.status()?;
            let stage = Stage::from_raw(st.trip_stage);
            let trip = Trip {
                cpu: st.trip_cpu,
                stage: stage.map_or("unknown", Stage::name).into(),
                value_ns: st.trip_value_ns,
                seq: st.trip_seq,
            };
            if let Some(s) = stage {
                self.state.trip(trip.cpu, s);
            }
            self.trips_total += 1;
            let n = self.trips_total;
            eprintln!(
                "rtlat monitor: trip {n}: CPU {} ({} stage): {} ns at activation {}",
                trip.cpu, trip.stage, trip.value_ns, trip.seq
            );
            let done = actions.run(&trip, n);
            for d in &done {
                eprintln!("rtlat monitor: trip {n}: {d}");
            }
            // Bounded by the interval's trips; kept whole up to a limit.
            if self.trips.len() < 1000 {
                self.trips.push(TripLine {
                    number: n,
                    time: now_epoch(),
                    cpu: trip.cpu,
                    stage: trip.stage,
                    value_ns: trip.value_ns,
                    seq: trip.seq,
                    actions: done,
                });
            }
        }
        self.state.end_session();
        // The session's end, its trip counted: until the next session's
        // first tick (the next configure), the endpoint says that nothing
        // measures.
        self.publish();
        Ok(end)
    }

    /// The thread that drains the rings: it counts the records it read per
    /// CPU, nothing more.
    fn reader(&self) -> Result<JoinHandle<()>, String> {
        let mut rdev = self.dev.try_clone().map_err(|e| format!("reader: {e}"))?;
        let read = self.read.clone();
        let ran_on = self.ran_on.clone();
        Ok(thread::spawn(move || {
            // The file blocks: the end of the session's stream ends it.
            let never = AtomicBool::new(false);
            stream::read_records(&mut rdev, &never, |_, recs| {
                note_cpu(&ran_on);
                for r in recs {
                    if let Some(c) = read.get(r.cpu as usize) {
                        c.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }))
    }

    /// With the user stage: a pinned SCHED_FIFO thread per CPU blocks in
    /// the device until `stop`.
    fn users(&self, stop: &Arc<AtomicBool>) -> Result<Vec<JoinHandle<Result<(), String>>>, String> {
        let mut users = Vec::new();
        if !self.plan.user {
            return Ok(users);
        }
        for &cpu in &self.cpus {
            let udev = self
                .dev
                .try_clone()
                .map_err(|e| format!("user thread: {e}"))?;
            let (stop, prio) = (stop.clone(), self.plan.priority);
            users.push(thread::spawn(move || -> Result<(), String> {
                sched::set_fifo_pinned(cpu, prio)?;
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
        Ok(users)
    }

    /// Reads the running session's statistics into the state.
    fn read_stats(&mut self) -> Result<(), String> {
        let mut all = Vec::with_capacity(self.cpus.len() * self.stages.len());
        for &cpu in &self.cpus {
            for &stage in &self.stages {
                all.push(
                    self.dev
                        .stats(cpu, stage)
                        .map_err(|e| format!("stats cpu {cpu}: {e}"))?,
                );
            }
        }
        self.state.update(&all);
        for c in &mut self.state.cpus {
            c.read = self.read[c.cpu as usize].load(Ordering::Relaxed);
        }
        self.last_read = now_epoch();
        Ok(())
    }

    fn clock() -> Clock {
        Clock {
            epoch: now_epoch(),
            mono_ns: monotonic_ns(),
        }
    }

    /// The metrics of the state, in `f`.
    fn exposition(&self, f: Format) -> String {
        let clock = Self::clock();
        let totals: Vec<_> = (0..self.state.series.len())
            .map(|i| self.state.total(i))
            .collect();
        let view = metrics::View {
            info: &self.out.info,
            bounds: &self.out.bounds,
            series: self
                .state
                .series
                .iter()
                .zip(&totals)
                .map(|(s, t)| metrics::Series {
                    cpu: s.cpu,
                    stage: s.stage.name(),
                    buckets: &t.buckets,
                    count: t.count,
                    sum: t.sum,
                    max: t.max,
                    max_time: if t.count > 0 {
                        clock.wall(t.max_time)
                    } else {
                        0.0
                    },
                    trips: s.trips,
                })
                .collect(),
            cpus: (0..self.state.cpus.len())
                .map(|i| {
                    let r = self.state.ring(i);
                    metrics::CpuCounters {
                        cpu: self.state.cpus[i].cpu,
                        missed: r.missed,
                        dropped: r.dropped,
                    }
                })
                .collect(),
            last_update: self.last_read,
            running: self.running,
        };
        metrics::encode(&view, f)
    }

    fn publish(&self) {
        if let Some(p) = &self.out.published {
            p.set(Exposition {
                openmetrics: self.exposition(Format::OpenMetrics),
                text: self.exposition(Format::Text),
            });
        }
    }

    /// Takes a snapshot of the interval (the state was just read) and
    /// writes it: the history (stdout without one), the textfile, the
    /// metrics. A write that fails is said on stderr, and the monitor goes on.
    fn snapshot(&mut self, last: bool) -> Result<(), String> {
        let interval = self.last_snapshot.elapsed();
        self.last_snapshot = Instant::now();
        self.seq += 1;
        let clock = Self::clock();
        let ran_on = self.ran_on.swap(0, Ordering::Relaxed);
        let snap = Snapshot {
            schema: snapshot::SCHEMA,
            version: snapshot::VERSION,
            seq: self.seq,
            time: clock.epoch,
            interval_s: interval.as_secs_f64(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            last,
            sessions: self.state.sessions,
            rss_kb: snapshot::rss_kb(),
            ran_on: (0..64).filter(|c| ran_on & (1 << c) != 0).collect(),
            max: snapshot::max_of(&self.state, clock),
            cpus: snapshot::cpus(&mut self.state, clock),
            trips: std::mem::take(&mut self.trips),
            trips_total: self.trips_total,
        };
        let line = serde_json::to_string(&snap).map_err(|e| format!("snapshot: {e}"))?;
        match &mut self.out.history {
            Some(h) => {
                if let Err(e) = h.append(&line) {
                    eprintln!("rtlat: error: {e}");
                }
            }
            None => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
        self.write_textfile();
        self.publish();
        Ok(())
    }

    /// Writes the textfile, if there is one. A failure is said on stderr.
    fn write_textfile(&self) {
        if let Some(dir) = &self.out.textfile {
            if let Err(e) = textfile::write(dir, &self.exposition(Format::Text)) {
                eprintln!("rtlat: error: {e}");
            }
        }
    }

    /// SIGUSR1's summary: per CPU and stage since the start.
    fn summary(&self) -> String {
        let unit = Unit {
            ns: self.plan.unit.ns,
        };
        let e = self.started.elapsed().as_secs();
        let mut s = format!(
            "# rtlat monitor: elapsed {:02}:{:02}:{:02}, {} session(s), {} trip(s), rss {} KiB\n",
            e / 3600,
            e / 60 % 60,
            e % 60,
            self.state.sessions,
            self.trips_total,
            snapshot::rss_kb()
        );
        let p = |t: &state::Counts, ppm| {
            t.percentile(ppm)
                .map_or("-".into(), |v| unit.v(v).to_string())
        };
        for (i, ser) in self.state.series.iter().enumerate() {
            let t = self.state.total(i);
            let ci = self
                .state
                .cpus
                .iter()
                .position(|c| c.cpu == ser.cpu)
                .unwrap_or(0);
            let r = self.state.ring(ci);
            s += &format!(
                "# cpu {:3} {:8}: count {} max {} p99 {} p99.99 {} missed {} dropped {} trips {}\n",
                ser.cpu,
                ser.stage.name(),
                t.count,
                unit.v(t.max),
                p(&t, 990_000),
                p(&t, 999_900),
                r.missed,
                r.dropped,
                ser.trips
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use std::{fs, path::Path};

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Cmd};

    #[test]
    fn an_error_leaves_the_outputs_saying_nothing_measures() {
        let dir = std::env::temp_dir().join(format!("rtlat-monitor-error-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let argv = ["rtlat", "monitor", "--cpus", "1", "--textfile"];
        let cli = Cli::try_parse_from(argv.into_iter().chain(dir.to_str())).unwrap();
        let Cmd::Monitor(a) = cli.cmd else {
            unreachable!()
        };
        let plan = Plan::new(&a.common(), &[0, 1], "0-1").unwrap();
        // /dev/null takes no ioctl: the session's START fails.
        let dev = Device::open(Path::new("/dev/null"), false).unwrap();
        let published = Arc::new(Published::default());
        let out = Outputs {
            history: None,
            textfile: a.textfile.clone(),
            published: Some(published.clone()),
            info: Info {
                kernel_release: "7.3.0-rt1".into(),
                preemption: "PREEMPT_RT".into(),
                arch: "x86_64".into(),
                isolated_cpus: String::new(),
                version: "0.1.0".into(),
                build: Build::this(),
            },
            bounds: metrics::bounds(&a.buckets),
        };
        let mut m = Monitor::new(&plan, &dev, vec![1], a.interval, out);
        // As the last interval left them: measuring, read at a known time.
        (m.running, m.last_read) = (true, 1_700_000_000.0);
        m.write_textfile();
        let file = dir.join(textfile::NAME);
        assert!(fs::read_to_string(&file)
            .unwrap()
            .contains("\nrtlat_session_running 1\n"));

        let e = m.watch(&a, &mut Actions::new(&a.on_threshold)).err();
        assert!(
            e.as_ref().is_some_and(|e| e.starts_with("start: ")),
            "{e:?}"
        );
        let text = fs::read_to_string(&file).unwrap();
        assert!(text.contains("\nrtlat_session_running 0\n"), "{text}");
        // The last read stays when it was: the staleness alert ages it.
        assert!(text.contains("\nrtlat_last_update_timestamp_seconds 1700000000.000\n"));
        let served = published.get();
        assert!(served.text.contains("\nrtlat_session_running 0\n"));
        assert!(served.openmetrics.contains("\nrtlat_session_running 0\n"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn housekeeping_follows_the_affinity_it_was_given() {
        let online = [0, 1, 2, 3];
        assert_eq!(
            housekeeping(None, &[0], &online, &online),
            (vec![0], "the CPUs it was started on")
        );
        assert_eq!(
            housekeeping(Some(&[3]), &[0], &online, &online),
            (vec![3], "--housekeeping")
        );
        assert_eq!(
            housekeeping(None, &online, &online, &[2, 3]),
            (vec![0, 1], "the online CPUs not measured")
        );
    }
}
