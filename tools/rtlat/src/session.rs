// SPDX-License-Identifier: GPL-2.0

//! One session on the device: start it, stream its records (and run the
//! user threads) while the mode shows it live, until its duration, Ctrl-C or
//! a stop by the device; then stop it and read every record.

use std::{
    io::{IsTerminal, Write},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    thread,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use rtcore::uapi::{self, State, StopReason};

use crate::{
    device::Device,
    live::Interval,
    mode::Mode,
    plan::{Phase, Plan},
    sched, signals,
    stream::Stream,
    sysinfo,
};

/// What every session of a run shares.
pub struct Run<'a> {
    pub dev: &'a Device,
    /// The CPUs the device samples.
    pub cpus: &'a [u32],
    pub plan: &'a Plan,
    pub mode: &'a dyn Mode,
}

/// A session that ended (and is stopped).
pub struct Ended {
    /// `duration`, `interrupted`, `threshold`, `error`, or `count`: every
    /// user thread of a mode with a [`crate::mode::UserSink`] ended (it
    /// measured the count its sink asked, or it failed and says why).
    pub reason: &'static str,
    pub stream: Stream,
    /// Wall-clock start and end, seconds since the epoch.
    pub start_time: f64,
    pub end_time: f64,
}

fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Run<'_> {
    /// Starts the configured session, streams its records (and runs the user
    /// threads) until `phase.duration`, Ctrl-C or a stop by the device,
    /// stops it, and returns once every record was read.
    pub fn session(&self, phase: &Phase) -> Result<Ended, String> {
        let (dev, plan, main_stage) = (self.dev, self.plan, self.plan.main_stage);
        let start_time = now_epoch();
        dev.start().map_err(|e| format!("start: {e}"))?;
        let started = Instant::now();

        let stream = Arc::new(Mutex::new(Stream::default()));
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
        let sink = self.mode.user_sink();
        let mut users = Vec::new();
        if plan.user {
            for &cpu in self.cpus {
                let udev = dev.try_clone().map_err(|e| format!("user thread: {e}"))?;
                let stop = stop_users.clone();
                let sink = sink.clone();
                let prio = plan.priority;
                let stream = stream.clone();
                users.push(thread::spawn(move || -> Result<(), String> {
                    sched::set_fifo_pinned(cpu, prio)?;
                    // SAFETY: gettid has no preconditions.
                    let tid = unsafe { libc::gettid() };
                    stream.lock().unwrap().tids.insert(cpu, tid);
                    while !stop.load(Ordering::Relaxed) {
                        match udev.user_wait() {
                            Ok(rec) => {
                                if sink.as_ref().is_some_and(|s| !s.on_user(cpu, &rec)) {
                                    break;
                                }
                            }
                            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                            Err(_) => break,
                        }
                    }
                    Ok(())
                }));
            }
        }

        let tty = std::io::stdout().is_terminal() && !plan.quiet;
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
            if signals::interrupted() {
                reason = "interrupted";
                break;
            }
            if phase.duration.is_some_and(|d| elapsed >= d) {
                reason = "duration";
                break;
            }
            if sink.is_some() && !users.is_empty() && users.iter().all(|u| u.is_finished()) {
                reason = "count";
                break;
            }
            if tty && last_print.elapsed() >= Duration::from_secs(1) {
                last_print = Instant::now();
                let now = Interval::take(dev, self.cpus, plan, phase, &stream, elapsed);
                let text = self.mode.on_interval(&now);
                if printed_lines > 0 {
                    print!("\x1b[{printed_lines}A\x1b[J");
                }
                printed_lines = text.lines().count();
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
