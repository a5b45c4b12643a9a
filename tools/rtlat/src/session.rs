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
    thread,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use rtcore::uapi::{State, StopReason};

use crate::{
    collect::Ended,
    device::Device,
    live::Interval,
    mode::Mode,
    plan::{Phase, Plan},
    raw::RawWriter,
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

impl Run<'_> {
    /// Starts the configured session, streams its records (and runs the user
    /// threads) until `phase.duration`, Ctrl-C or a stop by the device,
    /// stops it, and returns once every record was read; `raw` gets every
    /// record as it came.
    pub fn session(&self, phase: &Phase, raw: Option<RawWriter>) -> Result<Ended, String> {
        let (dev, plan, main_stage) = (self.dev, self.plan, self.plan.main_stage);
        let stream = Arc::new(Mutex::new(Stream::new(self.mode.tally())));
        // The user threads, ready before the session starts (user.rs).
        let stop_users = Arc::new(AtomicBool::new(false));
        let gate = Arc::new(StartGate::default());
        let sink = self.mode.user_sink();
        let mut users = Users::default();
        if plan.user {
            for &cpu in self.cpus {
                let spawned = dev.try_clone().and_then(|udev| {
                    let (stop, gate, sink) = (stop_users.clone(), gate.clone(), sink.clone());
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
            let ready =
                gate.wait_ready(self.cpus.len(), || users.any_ended(), signals::interrupted);
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
        }
        // The reader's handle too, before the session starts.
        let start_time = now_epoch();
        let start_monotonic_ns = monotonic_ns();
        // Attached, the session runs already; its reader must not block, so
        // that the tool can leave it running (see the reader below).
        let start = || {
            if plan.attach {
                dev.set_nonblocking(true)
                    .map_err(|e| format!("reader: {e}"))
            } else {
                dev.start().map_err(|e| format!("start: {e}"))
            }
        };
        let mut rdev = match dev
            .try_clone()
            .map_err(|e| format!("reader: {e}"))
            .and_then(|r| start().map(|()| r))
        {
            Ok(r) => r,
            Err(e) => {
                gate.open(Start::Cancelled);
                users.reap(true);
                return Err(e);
            }
        };
        let started = Instant::now();
        gate.open(Start::Started);

        if !plan.user {
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
        let stop_reader = Arc::new(AtomicBool::new(false));
        let reader = {
            let stream = stream.clone();
            let mut raw = raw;
            let stop = stop_reader.clone();
            thread::spawn(move || {
                let mut ran_on = BTreeSet::new();
                // Until the end of the session's records; attached (a
                // non-blocking file), also until told to stop.
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
        };
        // The live view on a terminal (or on any output, for a mode whose
        // live text is meant as it is); status lines instead with --interval.
        let as_is = self.mode.live_as_is();
        let show_live =
            (as_is || std::io::stdout().is_terminal()) && !plan.quiet && plan.interval.is_none();
        let mut printed_lines = 0usize;
        let mut last_print = Instant::now() - Duration::from_secs(1);
        let mut last_status = Instant::now();
        let mut reason;
        let mut error = None;
        let mut status_ran_on = BTreeSet::new();
        loop {
            thread::sleep(Duration::from_millis(100));
            status_ran_on.extend(sched::current_cpu());
            let st = dev.status()?;
            let elapsed = started.elapsed();
            let state = State::from_raw(st.state);
            if plan.attach && !matches!(state, Some(State::Running | State::Stopped)) {
                // Its owner closed it (or configured another).
                reason = StopCause::Ended;
                break;
            }
            if state == Some(State::Stopped) {
                reason = if StopReason::from_raw(st.stop_reason) == Some(StopReason::Threshold) {
                    StopCause::Threshold
                } else if plan.attach {
                    // Its owner stopped it: the end of what there was to see.
                    StopCause::Ended
                } else {
                    error = Some(
                        "the device stopped the session (unbound, or reconfigured by another owner)"
                            .to_string(),
                    );
                    StopCause::Error
                };
                break;
            }
            if signals::interrupted() {
                reason = StopCause::Interrupted;
                break;
            }
            if phase.duration.is_some_and(|d| elapsed >= d) {
                reason = StopCause::Duration;
                break;
            }
            if let Some(e) = users.reap(false) {
                // A measuring thread failed: the run is cut short.
                error = Some(e);
                reason = StopCause::Error;
                break;
            }
            if sink.is_some() && !users.is_empty() && users.all_ended() {
                reason = StopCause::Count;
                break;
            }
            if signals::status_requested() {
                // SIGUSR1, as cyclictest: the current status on stderr, the
                // mode's way.
                let now = Interval::take(dev, self.cpus, plan, phase, &stream, elapsed);
                eprint!("{}", self.mode.on_status(&now, &st));
                // The live view starts below it.
                printed_lines = 0;
            }
            if signals::snapshot_requested() {
                // SIGUSR2, where the mode catches it.
                let now = Interval::take(dev, self.cpus, plan, phase, &stream, elapsed);
                self.mode.on_snapshot(&now);
            }
            if plan.interval.is_some_and(|i| last_status.elapsed() >= i) {
                last_status = Instant::now();
                let now = Interval::take(dev, self.cpus, plan, phase, &stream, elapsed);
                eprintln!("{}", now.status_line(&st));
            }
            if show_live && last_print.elapsed() >= Duration::from_secs(1) {
                last_print = Instant::now();
                let now = Interval::take(dev, self.cpus, plan, phase, &stream, elapsed);
                let text = self.mode.on_interval(&now);
                if printed_lines > 0 {
                    print!("\x1b[{printed_lines}A\x1b[J");
                }
                if !as_is {
                    printed_lines = text.lines().count();
                }
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
        }
        if printed_lines > 0 && (phase.warm_up || self.mode.replaces_live()) {
            // The measured session's lines replace the warm-up's; the
            // mode's text at the end replaces its live text.
            print!("\x1b[{printed_lines}A\x1b[J");
            let _ = std::io::stdout().flush();
        }
        if !plan.attach {
            dev.stop().map_err(|e| format!("stop: {e}"))?;
        }
        // Attached, the session may go on: the reader leaves with what it
        // has read (after the end it reads to the end of the stream).
        stop_reader.store(
            plan.attach && !matches!(reason, StopCause::Ended),
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
            went_on: plan.attach && !matches!(reason, StopCause::Ended),
        })
    }
}
