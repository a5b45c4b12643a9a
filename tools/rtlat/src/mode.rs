// SPDX-License-Identifier: GPL-2.0

//! The modes of the measuring commands, in the manner of rtla's `struct
//! tool_ops`: a mode says what a run shows, live and at the end; everything
//! else, from checking the options to writing the JSON and SVG, is the
//! lifecycle every mode shares ([`crate::lifecycle`]).

mod hist;
pub mod timerlat;
mod top;

pub use hist::Hist;
pub use top::Top;

use crate::{collect::Outcome, live::Interval, report::Trip, tally::Tally};

/// What one measuring command shows of a run.
pub trait Mode {
    /// The live text of one interval: shown once a second on a terminal
    /// while a session runs (the warm-up too), unless `--quiet`; it
    /// replaces the previous interval's.
    fn on_interval(&self, now: &Interval<'_>) -> String;

    /// The text printed once the run is over and its statistics collected
    /// (before the threshold line, if one was exceeded).
    fn on_end(&self, end: &Outcome<'_>) -> String;

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
            crate::cli::EXIT_THRESHOLD,
        )
    }
}
