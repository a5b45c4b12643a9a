// SPDX-License-Identifier: GPL-2.0

//! The mode of a measuring command, in the manner of rtla's `struct
//! tool_ops`: a mode says what a run shows, live and at the end; everything
//! else, from checking the options to writing the JSON and SVG, is the
//! lifecycle every mode shares ([`crate::lifecycle`]). The commands'
//! modes are in [`crate::cmd`].

use std::sync::Arc;

use rtcore::uapi::{Record, Status};

use crate::{
    collect::Outcome,
    live::Interval,
    plan::Refusal,
    report::{StopCause, Trip},
    tally::Tally,
};

/// What a user-stage thread does with each activation it measured, the way
/// cyclictest's measuring threads keep their own numbers: called by that
/// thread between two waits, so it must be short and must not block.
pub trait UserSink: Send + Sync {
    /// The record `USER_WAIT` returned to the thread of `cpu`; false when
    /// that thread is done (it measured its count of activations): it stops
    /// waiting, and once every user thread ended (done, or failed) the
    /// session ends.
    fn on_user(&self, cpu: u32, rec: &Record) -> bool;
}

/// What one measuring command shows of a run.
pub trait Mode {
    /// The live text of one interval: shown once a second on a terminal
    /// while a session runs (the warm-up too), unless `--quiet`; it
    /// replaces the previous interval's.
    fn on_interval(&self, now: &Interval<'_>) -> String;

    /// The text printed once the run is over and its statistics collected
    /// (before the threshold line, if one was exceeded).
    fn on_end(&self, end: &Outcome<'_>) -> String;

    /// The status SIGUSR1 asks for, on stderr, with the device's status
    /// `st`; by default the native summary ([`Interval::summary`]).
    fn on_status(&self, now: &Interval<'_>, st: &Status) -> String {
        now.summary(st)
    }

    /// The running status SIGUSR2 asks for, where the mode catches it
    /// (`rtlat cyclictest`: into cyclictest's status file); nothing by
    /// default.
    fn on_snapshot(&self, _now: &Interval<'_>) {}

    /// What the mode counts itself from every record of a session (see
    /// [`Tally`]), handed back in [`Interval::tally`] and in the outcome's
    /// stream; by default nothing: the device's statistics are enough.
    fn tally(&self) -> Option<Tally> {
        None
    }

    /// Whether the live text is printed as it is, on any output, each
    /// interval's after the previous one's (the text clears the screen
    /// itself, as rtla's top does). By default it is shown on a terminal
    /// only, and replaces the previous interval's.
    fn live_as_is(&self) -> bool {
        false
    }

    /// What is printed after `on_end`'s text when a threshold stopped the
    /// run, and the exit status then.
    fn on_trip(&self, t: &Trip) -> (String, u8) {
        (
            format!(
                "rtlat: threshold exceeded on CPU {} ({} stage): {} ns at activation {}\n",
                t.cpu, t.stage, t.value_ns, t.seq
            ),
            crate::exit::THRESHOLD,
        )
    }

    /// The mode's own account of the user stage, kept by the user-stage
    /// threads; none by default.
    fn user_sink(&self) -> Option<Arc<dyn UserSink>> {
        None
    }

    /// True if the text at the end replaces the last live text (erased
    /// then), as a screen that is redrawn a last time; by default it
    /// follows it.
    fn replaces_live(&self) -> bool {
        false
    }

    /// Creates the files the mode writes at the end, before anything is
    /// measured: a path that cannot be written refuses the run at once.
    fn open_files(&self) -> Result<(), String> {
        Ok(())
    }

    /// Files the mode writes at the end, besides `--json` and `--svg`
    /// (created by [`Mode::open_files`]).
    fn write_files(&self, _end: &Outcome<'_>) -> Result<(), String> {
        Ok(())
    }

    /// The exit status of options the plan refused (see [`Refusal`]); by
    /// default the native tool's: 2 for the command line, 1 for the system.
    fn refused_exit(&self, r: &Refusal) -> u8 {
        r.exit_status()
    }

    /// The exit status the mode's peer gives a run that ended for `reason`
    /// (the report's `stop.reason`), a threshold trip included, which the
    /// mode then reports its peer's way in its text; `None`: the tool's own
    /// (and its line on a trip). A failed gate turns a peer's 0 into the
    /// gate's status.
    fn peer_exit(&self, _reason: StopCause) -> Option<u8> {
        None
    }
}
