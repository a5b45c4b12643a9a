// SPDX-License-Identifier: GPL-2.0

//! The modes of the measuring commands, in the manner of rtla's `struct
//! tool_ops`: a mode says what a run shows, live and at the end; everything
//! else, from checking the options to writing the JSON and SVG, is the
//! lifecycle every mode shares ([`crate::lifecycle`]).

mod hist;
mod top;

pub use hist::Hist;
pub use top::Top;

use crate::{collect::Outcome, live::Interval};

/// What one measuring command shows of a run.
pub trait Mode {
    /// The live text of one interval: shown once a second on a terminal
    /// while a session runs (the warm-up too), unless `--quiet`; it
    /// replaces the previous interval's.
    fn on_interval(&self, now: &Interval<'_>) -> String;

    /// The text printed once the run is over and its statistics collected
    /// (before the threshold line, if one was exceeded).
    fn on_end(&self, end: &Outcome<'_>) -> String;
}
