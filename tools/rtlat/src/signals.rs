// SPDX-License-Identifier: GPL-2.0

//! Ctrl-C, SIGTERM and SIGHUP (a terminal gone): they end the session
//! cleanly (the summary is printed, the JSON and SVG written, a `--trace`
//! instance removed) instead of killing the tool. SIGUSR1, as with
//! cyclictest: the current summary on stderr, and the run goes on. SIGUSR2
//! for `rtlat cyclictest` (it asks for it): cyclictest's running status
//! into its file, and the run goes on; elsewhere it keeps its default
//! action. SIGHUP for `rtlat monitor` (it asks for it): reopen the files it
//! appends to, as after a log rotation.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static STATUS: AtomicBool = AtomicBool::new(false);
static SNAPSHOT: AtomicBool = AtomicBool::new(false);
static REOPEN: AtomicBool = AtomicBool::new(false);
/// SIGHUP asks for the files to be reopened rather than for the end.
static HUP_REOPENS: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGUSR1 {
        STATUS.store(true, Ordering::SeqCst);
    } else if sig == libc::SIGUSR2 {
        SNAPSHOT.store(true, Ordering::SeqCst);
    } else if sig == libc::SIGHUP && HUP_REOPENS.load(Ordering::SeqCst) {
        REOPEN.store(true, Ordering::SeqCst);
    } else {
        INTERRUPTED.store(true, Ordering::SeqCst);
    }
}

/// How often a caught signal is caught.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Catch {
    /// Every time.
    Always,
    /// The first time; the next one has its default action
    /// (`SA_RESETHAND`). For the signals that end the run: a second Ctrl-C
    /// ends a tool that a blocking call keeps from seeing the first (an
    /// `open()` of a FIFO with no reader, restarted by `SA_RESTART`).
    Once,
}

/// Catches `sig` from now on; system calls it interrupts are restarted
/// where they can be (`SA_RESTART`).
fn catch(sig: libc::c_int, how: Catch) {
    // SAFETY: The handler only stores to atomics, which is
    // async-signal-safe; the sigaction is initialised.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        if how == Catch::Once {
            sa.sa_flags |= libc::SA_RESETHAND;
        }
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Catches SIGUSR1 from now on: first thing in `main`, so that the status
/// asked for while the tool starts (before [`install`]) does not kill it
/// (the default action). The status is then printed once a session runs.
pub fn catch_status() {
    catch(libc::SIGUSR1, Catch::Always);
}

/// Catches SIGINT, SIGTERM and SIGHUP once (they end the run; a second one
/// kills the tool), and SIGUSR1 always, from now on.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        catch(sig, Catch::Once);
    }
    catch(libc::SIGUSR1, Catch::Always);
}

/// Catches SIGHUP too (see [`reopen_requested`]): for a command that
/// appends to files, where it would otherwise end the process.
pub fn install_reopen() {
    HUP_REOPENS.store(true, Ordering::SeqCst);
    catch(libc::SIGHUP, Catch::Always);
}

/// Catches SIGUSR2 from now on (see [`snapshot_requested`]): for
/// `rtlat cyclictest`, as cyclictest catches it.
pub fn catch_snapshot() {
    catch(libc::SIGUSR2, Catch::Always);
}

/// True once after each SIGUSR2: cyclictest's running status was asked for.
pub fn snapshot_requested() -> bool {
    SNAPSHOT.swap(false, Ordering::SeqCst)
}

/// True once after each SIGUSR1: the summary was asked for.
pub fn status_requested() -> bool {
    STATUS.swap(false, Ordering::SeqCst)
}

/// True once after each SIGHUP: the files are to be reopened.
pub fn reopen_requested() -> bool {
    REOPEN.swap(false, Ordering::SeqCst)
}

/// True once SIGINT, SIGTERM or (unless it reopens) SIGHUP arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigusr1_asks_for_the_summary_and_does_not_stop() {
        install();
        assert!(!status_requested());
        // SAFETY: raise() on this process, whose handler is installed.
        unsafe { libc::raise(libc::SIGUSR1) };
        assert!(status_requested());
        assert!(!status_requested(), "once per signal");
        assert!(!interrupted());
    }

    /// The flags of `sig`'s current action.
    fn flags(sig: libc::c_int) -> libc::c_int {
        // SAFETY: A query only (no new action); `old` is initialised.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old);
            old.sa_flags
        }
    }

    #[test]
    fn a_second_ctrl_c_kills() {
        install();
        for sig in [libc::SIGINT, libc::SIGTERM] {
            assert_ne!(flags(sig) & libc::SA_RESETHAND, 0, "signal {sig}");
        }
        assert_eq!(flags(libc::SIGUSR1) & libc::SA_RESETHAND, 0);
    }

    #[test]
    fn sigusr2_is_caught_only_when_asked() {
        // The other commands keep its default action (it ends them).
        install();
        install_reopen();
        // SAFETY: A query only (no new action); `old` is initialised.
        let handler = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGUSR2, std::ptr::null(), &mut old);
            old.sa_sigaction
        };
        assert_eq!(handler, libc::SIG_DFL);
        // rtlat cyclictest's: the running status, and the run goes on.
        catch_snapshot();
        assert!(!snapshot_requested());
        // SAFETY: raise() on this process, whose handler is installed.
        unsafe { libc::raise(libc::SIGUSR2) };
        assert!(snapshot_requested());
        assert!(!snapshot_requested(), "once per signal");
        assert!(!interrupted());
        assert_eq!(flags(libc::SIGUSR2) & libc::SA_RESETHAND, 0);
    }

    #[test]
    fn sighup_asks_to_reopen_and_does_not_stop() {
        install_reopen();
        assert!(!reopen_requested());
        // SAFETY: raise() on this process, whose handler is installed.
        unsafe { libc::raise(libc::SIGHUP) };
        assert!(reopen_requested());
        assert!(!reopen_requested(), "once per signal");
        assert!(!interrupted());
    }
}
