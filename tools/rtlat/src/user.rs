// SPDX-License-Identifier: GPL-2.0

//! The user-stage threads of a session: one per CPU, pinned there at
//! SCHED_FIFO, each blocking in `RTLAT_IOC_USER_WAIT` until the session
//! ends. The device ends a waiter with `ESHUTDOWN` (the session stopped, or
//! its CPU went offline): that is the normal end. Any other error, a
//! failure to pin the thread or to make it SCHED_FIFO, or a panic is a
//! failure of the run, said in one line naming the CPU.

use std::{
    io,
    sync::atomic::{AtomicBool, Ordering},
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
