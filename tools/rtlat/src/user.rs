// SPDX-License-Identifier: GPL-2.0

//! The user-stage threads of a session: one per CPU, pinned there at
//! SCHED_FIFO, each blocking in `RTLAT_IOC_USER_WAIT` until the session
//! ends. The device ends a waiter with `ESHUTDOWN` (the session stopped, or
//! its CPU went offline): that is the normal end. Any other error, a
//! failure to pin the thread or to make it SCHED_FIFO, or a panic is a
//! failure of the run, said in one line naming the CPU.
//!
//! The threads are made, pinned and set to their priority before the
//! session starts, and wait at a [`StartGate`] until it did: a thread's
//! start (its stack faulted in and locked with `mlockall`, its affinity and
//! policy set) can take seconds on a loaded machine, and a session that
//! ran meanwhile would hand its activations to no waiter (recorded, but
//! with no user stage): a short run could end without one user sample.

use std::{
    io,
    sync::{
        atomic::{AtomicBool, Ordering},
        Condvar, Mutex,
    },
    thread::JoinHandle,
};

use rtcore::uapi::Record;

/// The loop of the user thread of `cpu`: `wait` for each activation (the
/// device's `USER_WAIT`) and hand it to `on_record`, which says whether the
/// thread goes on, until `stop` or the end of the session.
pub fn wait_loop(
    cpu: u32,
    stop: &AtomicBool,
    mut wait: impl FnMut() -> io::Result<Record>,
    mut on_record: impl FnMut(&Record) -> bool,
) -> Result<(), String> {
    while !stop.load(Ordering::Relaxed) {
        match wait() {
            Ok(rec) => {
                if !on_record(&rec) {
                    break;
                }
            }
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) => {}
                // The device's end of the session (or of this CPU's part).
                Some(libc::ESHUTDOWN) => break,
                _ => return Err(format!("the user thread of CPU {cpu}: USER_WAIT: {e}")),
            },
        }
    }
    Ok(())
}

/// The stack of a user thread: its loop and the mode's sink need little,
/// and every byte of it is faulted in and locked (`mlockall`).
pub const STACK_SIZE: usize = 256 << 10;

/// Whether the session the user threads wait for started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Not yet decided.
    Pending,
    /// It started: the threads go to `USER_WAIT`.
    Started,
    /// It will not (a thread or the start failed): the threads end.
    Cancelled,
}

/// What the threads at a [`StartGate`] are: how many arrived, whether one
/// failed to prepare, and whether the session started.
struct GateState {
    arrived: usize,
    failed: bool,
    start: Start,
}

/// Where the user threads wait, ready, for the session to start.
pub struct StartGate {
    state: Mutex<GateState>,
    cv: Condvar,
}

impl Default for StartGate {
    fn default() -> Self {
        Self {
            state: Mutex::new(GateState {
                arrived: 0,
                failed: false,
                start: Start::Pending,
            }),
            cv: Condvar::new(),
        }
    }
}

/// Why the threads at a [`StartGate`] did not all get ready.
#[derive(Debug, PartialEq, Eq)]
pub enum NotReady {
    /// One failed to prepare (it says why when joined), or ended.
    Failed,
    /// The run was interrupted meanwhile.
    Interrupted,
}

impl StartGate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A thread arrived, `prepared` or not (a thread that failed says why
    /// when joined); blocks until the session started or will not, and
    /// says which.
    pub fn ready(&self, prepared: bool) -> Start {
        let mut g = self.lock();
        g.arrived += 1;
        g.failed |= !prepared;
        self.cv.notify_all();
        while g.start == Start::Pending {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.start
    }

    /// Blocks until `n` threads arrived prepared; not if one failed, if
    /// `gone()` (a thread ended before it arrived) or `interrupted()`
    /// (checked every 100 ms).
    pub fn wait_ready(
        &self,
        n: usize,
        gone: impl Fn() -> bool,
        interrupted: impl Fn() -> bool,
    ) -> Result<(), NotReady> {
        let mut g = self.lock();
        loop {
            if g.failed {
                return Err(NotReady::Failed);
            }
            if g.arrived >= n {
                return Ok(());
            }
            if interrupted() {
                return Err(NotReady::Interrupted);
            }
            if gone() {
                return Err(NotReady::Failed);
            }
            g = self
                .cv
                .wait_timeout(g, std::time::Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Opens the gate: `Started` or `Cancelled`.
    pub fn open(&self, how: Start) {
        self.lock().start = how;
        self.cv.notify_all();
    }
}

/// A user thread: its failure, if it failed.
type Thread = JoinHandle<Result<(), String>>;

/// The user threads of a session, by CPU, until each is joined.
#[derive(Default)]
pub struct Users {
    threads: Vec<(u32, Option<Thread>)>,
}

impl Users {
    /// Adds the thread of `cpu`.
    pub fn push(&mut self, cpu: u32, t: Thread) {
        self.threads.push((cpu, Some(t)));
    }

    /// True if there is no user thread.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// Joins the threads that ended (every thread if `all`, waiting for
    /// them); the first failure among them, if any.
    pub fn reap(&mut self, all: bool) -> Option<String> {
        let mut failure = None;
        for (cpu, slot) in &mut self.threads {
            if !all && !slot.as_ref().is_some_and(JoinHandle::is_finished) {
                continue;
            }
            let Some(t) = slot.take() else {
                continue;
            };
            let e = match t.join() {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e,
                Err(_) => format!("the user thread of CPU {cpu} panicked"),
            };
            failure.get_or_insert(e);
        }
        failure
    }

    /// True if a thread ended (or was joined).
    pub fn any_ended(&self) -> bool {
        self.threads
            .iter()
            .any(|(_, t)| t.as_ref().is_none_or(JoinHandle::is_finished))
    }

    /// True once every thread was joined.
    pub fn all_ended(&self) -> bool {
        self.threads.iter().all(|(_, t)| t.is_none())
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    fn os(errno: i32) -> io::Result<Record> {
        Err(io::Error::from_raw_os_error(errno))
    }

    #[test]
    fn only_the_end_of_the_session_ends_a_thread_cleanly() {
        let stop = AtomicBool::new(false);
        let mut answers = vec![os(libc::ESHUTDOWN), Ok(Record::default()), os(libc::EINTR)];
        let mut seen = 0;
        let r = wait_loop(
            3,
            &stop,
            || answers.pop().unwrap(),
            |_| {
                seen += 1;
                true
            },
        );
        assert_eq!((r, seen), (Ok(()), 1));

        for errno in [libc::EINVAL, libc::EBUSY, libc::EFAULT] {
            let e = wait_loop(5, &stop, || os(errno), |_| true).unwrap_err();
            let want = io::Error::from_raw_os_error(errno).to_string();
            assert!(e.contains("CPU 5") && e.contains(&want), "{e}");
        }
        let decode = || Err(io::Error::other("BadSize"));
        let e = wait_loop(7, &stop, decode, |_| true).unwrap_err();
        assert!(e.contains("CPU 7") && e.contains("BadSize"), "{e}");
        // A sink that is done ends the thread.
        assert_eq!(
            wait_loop(0, &stop, || Ok(Record::default()), |_| false),
            Ok(())
        );
    }

    #[test]
    fn the_gate_holds_ready_threads_until_the_session_started() {
        use std::sync::Arc;

        let never = || false;
        for how in [Start::Started, Start::Cancelled] {
            let gate = Arc::new(StartGate::default());
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    let gate = gate.clone();
                    thread::spawn(move || gate.ready(true))
                })
                .collect();
            assert_eq!(gate.wait_ready(3, never, never), Ok(()));
            assert_eq!(gate.lock().arrived, 3);
            assert!(waiters.iter().all(|w| !w.is_finished()), "held");
            gate.open(how);
            for w in waiters {
                assert_eq!(w.join().unwrap(), how);
            }
        }
        // A thread that failed to prepare, one that ended before it
        // arrived, a Ctrl-C: no waiting for the others.
        let gate = Arc::new(StartGate::default());
        let g = gate.clone();
        let failed = thread::spawn(move || g.ready(false));
        assert_eq!(gate.wait_ready(2, never, never), Err(NotReady::Failed));
        assert_eq!(
            StartGate::default().wait_ready(1, || true, never),
            Err(NotReady::Failed)
        );
        assert_eq!(
            StartGate::default().wait_ready(1, never, || true),
            Err(NotReady::Interrupted)
        );
        gate.open(Start::Cancelled);
        assert_eq!(failed.join().unwrap(), Start::Cancelled);
    }

    #[test]
    fn a_failed_or_panicked_thread_is_a_failure() {
        let mut users = Users::default();
        users.push(0, thread::spawn(|| Ok(())));
        users.push(
            1,
            thread::spawn(|| Err("the user thread of CPU 1: EPERM".into())),
        );
        assert_eq!(
            users.reap(true).as_deref(),
            Some("the user thread of CPU 1: EPERM")
        );
        assert!(users.all_ended());

        let mut users = Users::default();
        users.push(2, thread::spawn(|| panic!("on purpose")));
        assert_eq!(
            users.reap(true).as_deref(),
            Some("the user thread of CPU 2 panicked")
        );
        assert_eq!(users.reap(true), None, "joined once");
    }
}
