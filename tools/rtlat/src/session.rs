// SPDX-License-Identifier: GPL-2.0

//! One session on the device: start it, stream its records (and run the
//! user threads) while the mode shows it live, until its duration, Ctrl-C or
//! a stop by the device; then stop it and read every record.

use std::{
    collections::BTreeSet,
    io::{IsTerminal, Write},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    thread::{self, JoinHandle},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use rtcore::uapi::{Stage, State, Status, StopReason};

use crate::{
    collect::Ended,
    device::Device,
    live::Interval,
    mode::{Mode, UserSink},
    plan::{Phase, Plan},
    raw::{RawReport, RawWriter},
    report::StopCause,
    sched, signals,
    stream::{self, Stream},
    sysinfo,
    user::{self, NotReady, Start, StartGate, Users},
};

/// What every session of a run shares.
pub struct Run<'a> {
    pub dev: &'a Device,
    /// The CPUs the device samples.
    pub cpus: &'a [u32],
    pub plan: &'a Plan,
    pub mode: &'a dyn Mode,
}

pub fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// CLOCK_MONOTONIC now, ns.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The reader thread: the raw file's account, if one was written, and the
/// CPUs it was seen on.
type Reader = JoinHandle<(Option<RawReport>, BTreeSet<u32>)>;

/// A started session: its threads, what they share, and when it started.
struct Started {
    stream: Arc<Mutex<Stream>>,
    users: Users,
    stop_users: Arc<AtomicBool>,
    /// The mode keeps its own account of the user stage: the session ends
    /// once every user thread did its count.
    counting: bool,
    reader: Reader,
    stop_reader: Arc<AtomicBool>,
    /// Wall-clock, seconds since the epoch.
    start_time: f64,
    /// CLOCK_MONOTONIC, ns.
    start_monotonic_ns: u64,
    /// When it started: the origin of its duration.
    at: Instant,
}

/// How the watch of a session ended.
struct Watched {
    reason: StopCause,
    /// Why, for [`StopCause::Error`]: one line.
    error: Option<String>,
    /// The CPUs the status loop was seen on.
    ran_on: BTreeSet<u32>,
    /// The live text's lines on the terminal.
    printed_lines: usize,
}

/// The live view while a session runs: the mode's text on a terminal each
/// second (or on any output, for a mode whose live text is meant as it
/// is), status lines instead with --interval, and the answers to SIGUSR1
/// and SIGUSR2.
struct LiveView {
    /// The mode's live text is meant as it is: not printed over.
    as_is: bool,
    /// The mode's text is shown each second.
    show: bool,
    /// The lines printed last, to print over.
    printed_lines: usize,
    last_print: Instant,
    last_status: Instant,
}

impl LiveView {
    fn new(run: &Run<'_>) -> Self {
        let as_is = run.mode.live_as_is();
        let plan = run.plan;
        Self {
            as_is,
            show: (as_is || std::io::stdout().is_terminal())
                && !plan.quiet
                && plan.interval.is_none(),
            printed_lines: 0,
            last_print: Instant::now() - Duration::from_secs(1),
            last_status: Instant::now(),
        }
    }

    /// Shows what is due of the session of `run` after `elapsed`, whose
    /// status is `st`.
    fn show(
        &mut self,
        run: &Run<'_>,
        phase: &Phase,
        stream: &Mutex<Stream>,
        st: &Status,
        elapsed: Duration,
    ) {
        let now = || Interval::take(run.dev, run.cpus, run.plan, phase, stream, elapsed);
        if signals::status_requested() {
            // SIGUSR1, as cyclictest: the current status on stderr, the
            // mode's way.
            eprint!("{}", run.mode.on_status(&now(), st));
            // The live view starts below it.
            self.printed_lines = 0;
        }
        if signals::snapshot_requested() {
            // SIGUSR2, where the mode catches it.
            run.mode.on_snapshot(&now());
        }
        if run
            .plan
            .interval
            .is_some_and(|i| self.last_status.elapsed() >= i)
        {
            self.last_status = Instant::now();
            eprintln!("{}", now().status_line(st));
        }
        if self.show && self.last_print.elapsed() >= Duration::from_secs(1) {
            self.last_print = Instant::now();
            let text = run.mode.on_interval(&now());
            if self.printed_lines > 0 {
                print!("\x1b[{}A\x1b[J", self.printed_lines);
            }
            if !self.as_is {
                self.printed_lines = text.lines().count();
            }
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    }
}

/// Starts the reader thread on `rdev`: every record into `stream` (and
/// `raw`), until the end of the session's records; attached (a
/// non-blocking file), also until `stop`.
fn spawn_reader(
    mut rdev: Device,
    stream: Arc<Mutex<Stream>>,
    mut raw: Option<RawWriter>,
    stop: Arc<AtomicBool>,
    main_stage: Stage,
) -> Reader {
    thread::spawn(move || {
        let mut ran_on = BTreeSet::new();
        stream::read_records(&mut rdev, &stop, |bytes, recs| {
            ran_on.extend(sched::current_cpu());
            if let Some(w) = &mut raw {
                w.write(bytes, recs);
            }
            let mut s = stream.lock().unwrap();
            for r in recs {
                s.add(r, main_stage);
            }
        });
        (raw.map(RawWriter::finish), ran_on)
    })
}

impl Run<'_> {
    /// Starts the configured session, streams its records (and runs the user
    /// threads) until `phase.duration`, Ctrl-C or a stop by the device,
    /// stops it, and returns once every record was read; `raw` gets every
    /// record as it came.
    pub fn session(&self, phase: &Phase, raw: Option<RawWriter>) -> Result<Ended, String> {
        let stream = Arc::new(Mutex::new(Stream::new(self.mode.tally())));
        let stop_users = Arc::new(AtomicBool::new(false));
        let gate = Arc::new(StartGate::default());
        let sink = self.mode.user_sink();
        let mut users = self.start_users(&stream, &stop_users, &gate, &sink)?;
        let start_time = now_epoch();
        let start_monotonic_ns = monotonic_ns();
        let rdev = match self.arm() {
            Ok(r) => r,
            Err(e) => {
                gate.open(Start::Cancelled);
                users.reap(true);
                return Err(e);
            }
        };
        let at = Instant::now();
        gate.open(Start::Started);
        if !self.plan.user {
            self.note_kernel_threads(&stream);
        }
        let stop_reader = Arc::new(AtomicBool::new(false));
        let reader = spawn_reader(
            rdev,
            stream.clone(),
            raw,
            stop_reader.clone(),
            self.plan.main_stage,
        );
        let mut started = Started {
            stream,
            users,
            stop_users,
            counting: sink.is_some(),
            reader,
            stop_reader,
            start_time,
            start_monotonic_ns,
            at,
        };
        let watched = self.watch(phase, &mut started)?;
        self.end(phase, started, watched)
    }

    /// Spawns the user threads of a plan with the user stage, one per CPU,
    /// and waits until each is pinned at the plan's priority (user.rs).
    /// They measure once `gate` opens, until `stop`, and hand each
    /// activation to `sink`.
    fn start_users(
        &self,
        stream: &Arc<Mutex<Stream>>,
        stop: &Arc<AtomicBool>,
        gate: &Arc<StartGate>,
        sink: &Option<Arc<dyn UserSink>>,
    ) -> Result<Users, String> {
        let (dev, plan) = (self.dev, self.plan);
        let mut users = Users::default();
        if !plan.user {
            return Ok(users);
        }
        for &cpu in self.cpus {
            let spawned = dev.try_clone().and_then(|udev| {
                let (stop, gate, sink) = (stop.clone(), gate.clone(), sink.clone());
                let (prio, stream) = (plan.priority, stream.clone());
                thread::Builder::new()
                    .name(format!("rtlat-user/{cpu}"))
                    .stack_size(user::STACK_SIZE)
                    .spawn(move || -> Result<(), String> {
                        let prepared = sched::set_fifo_pinned(cpu, prio)
                            .map_err(|e| format!("the user thread of CPU {cpu}: {e}"));
                        if gate.ready(prepared.is_ok()) == Start::Cancelled {
                            return prepared;
                        }
                        // SAFETY: gettid has no preconditions.
                        let tid = unsafe { libc::gettid() };
                        stream.lock().unwrap().tids.insert(cpu, tid);
                        user::wait_loop(
                            cpu,
                            &stop,
                            || udev.user_wait(),
                            |rec| sink.as_ref().is_none_or(|s| s.on_user(cpu, rec)),
                        )
                    })
            });
            match spawned {
                Ok(t) => users.push(cpu, t),
                Err(e) => {
                    gate.open(Start::Cancelled);
                    users.reap(true);
                    return Err(format!("the user thread of CPU {cpu}: {e}"));
                }
            }
        }
        let ready = gate.wait_ready(self.cpus.len(), || users.any_ended(), signals::interrupted);
        if let Err(why) = ready {
            gate.open(Start::Cancelled);
            let failure = users.reap(true);
            return Err(match why {
                NotReady::Interrupted => "interrupted before the session started".into(),
                NotReady::Failed => {
                    failure.unwrap_or_else(|| "a user thread ended before it was ready".into())
                }
            });
        }
        Ok(users)
    }

    /// The reader's handle, taken before the session starts, and the
    /// start. Attached, the session runs already; its reader must not
    /// block, so that the tool can leave it running.
    fn arm(&self) -> Result<Device, String> {
        let dev = self.dev;
        let rdev = dev.try_clone().map_err(|e| format!("reader: {e}"))?;
        if self.plan.attach {
            dev.set_nonblocking(true)
                .map_err(|e| format!("reader: {e}"))?;
        } else {
            dev.start().map_err(|e| format!("start: {e}"))?;
        }
        Ok(rdev)
    }

    /// The kernel threads' ids into `stream`. They exist once START
    /// returned (none for a device whose events are completed by its IRQ
    /// thread).
    fn note_kernel_threads(&self, stream: &Mutex<Stream>) {
        let pids = sysinfo::task_pids();
        let mut s = stream.lock().unwrap();
        for &cpu in self.cpus {
            if let Some(&tid) = pids.get(&format!("rtlat/{cpu}")) {
                s.tids.insert(cpu, tid);
            }
        }
    }

    /// Watches the started session every 100 ms, with its live view,
    /// until it is to end.
    fn watch(&self, phase: &Phase, s: &mut Started) -> Result<Watched, String> {
        let mut live = LiveView::new(self);
        let mut ran_on = BTreeSet::new();
        loop {
            thread::sleep(Duration::from_millis(100));
            ran_on.extend(sched::current_cpu());
            let st = self.dev.status()?;
            let elapsed = s.at.elapsed();
            if let Some((reason, error)) = self.stop_cause(&st, phase, elapsed, s) {
                return Ok(Watched {
                    reason,
                    error,
                    ran_on,
                    printed_lines: live.printed_lines,
                });
            }
            live.show(self, phase, &s.stream, &st, elapsed);
        }
    }

    /// Why the session is to end now, if it is, and what went wrong for
    /// [`StopCause::Error`]: its state `st`, a signal, the phase's
    /// duration over after `elapsed`, or the user threads.
    fn stop_cause(
        &self,
        st: &Status,
        phase: &Phase,
        elapsed: Duration,
        s: &mut Started,
    ) -> Option<(StopCause, Option<String>)> {
        let attach = self.plan.attach;
        let state = State::from_raw(st.state);
        if attach && !matches!(state, Some(State::Running | State::Stopped)) {
            // Its owner closed it (or configured another).
            return Some((StopCause::Ended, None));
        }
        if state == Some(State::Stopped) {
            if StopReason::from_raw(st.stop_reason) == Some(StopReason::Threshold) {
                return Some((StopCause::Threshold, None));
            }
            if attach {
                // Its owner stopped it: the end of what there was to see.
                return Some((StopCause::Ended, None));
            }
            let e = "the device stopped the session (unbound, or reconfigured by another owner)";
            return Some((StopCause::Error, Some(e.to_string())));
        }
        if signals::interrupted() {
            return Some((StopCause::Interrupted, None));
        }
        if phase.duration.is_some_and(|d| elapsed >= d) {
            return Some((StopCause::Duration, None));
        }
        if let Some(e) = s.users.reap(false) {
            // A measuring thread failed: the run is cut short.
            return Some((StopCause::Error, Some(e)));
        }
        if s.counting && !s.users.is_empty() && s.users.all_ended() {
            return Some((StopCause::Count, None));
        }
        None
    }

    /// Ends the session watched to `w`: stops it (unless attached), then
    /// the user threads and the reader, and takes what they collected.
    fn end(&self, phase: &Phase, s: Started, w: Watched) -> Result<Ended, String> {
        let Watched {
            mut reason,
            mut error,
            ran_on: status_ran_on,
            printed_lines,
        } = w;
        let Started {
            stream,
            mut users,
            stop_users,
            reader,
            stop_reader,
            start_time,
            start_monotonic_ns,
            ..
        } = s;
        let attach = self.plan.attach;
        if printed_lines > 0 && (phase.warm_up || self.mode.replaces_live()) {
            // The measured session's lines replace the warm-up's; the
            // mode's text at the end replaces its live text.
            print!("\x1b[{printed_lines}A\x1b[J");
            let _ = std::io::stdout().flush();
        }
        if !attach {
            self.dev.stop().map_err(|e| format!("stop: {e}"))?;
        }
        // Attached, the session may go on: the reader leaves with what it
        // has read (after the end it reads to the end of the stream).
        stop_reader.store(
            attach && !matches!(reason, StopCause::Ended),
            Ordering::Relaxed,
        );
        stop_users.store(true, Ordering::Relaxed);
        if let Some(e) = users.reap(true) {
            if error.is_none() {
                error = Some(e);
                reason = StopCause::Error;
            }
        }
        let (raw, reader_ran_on) = reader
            .join()
            .map_err(|_| "the reader thread panicked".to_string())?;
        let end_time = now_epoch();
        let stream = Arc::try_unwrap(stream)
            .map_err(|_| "the record stream is still in use".to_string())?
            .into_inner()
            .map_err(|_| "a thread of the session panicked".to_string())?;
        Ok(Ended {
            reason,
            error,
            stream,
            start_time,
            end_time,
            start_monotonic_ns,
            raw,
            reader_ran_on,
            status_ran_on,
            went_on: attach && !matches!(reason, StopCause::Ended),
        })
    }
}
