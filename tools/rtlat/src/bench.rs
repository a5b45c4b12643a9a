// SPDX-License-Identifier: GPL-2.0

//! The benchmark: `rtlat bench-job`, the CPU-bound job run in the guest
//! (scripts/bench-guest), `rtlat bench-drain`, the rate of `read()`
//! draining full rings, `rtlat bench-startstop`, the time of a session's
//! CONFIG, START and STOP on 1, 2, 4, 8 CPUs, and `rtlat bench-report`, which turns the guest's
//! raw output (through scripts/bench) into a markdown table, a JSON file and
//! an SVG overlay of the latency distributions.
//!
//! Every distribution, rtlat's and its peers', goes through the same
//! log-linear histogram (`rtcore::hist`) and the same percentile code, so the
//! comparison does not depend on how each tool summarises.

mod dist;
mod drain;
mod job;
mod kv;
mod log;
mod markdown;
mod output;
mod report;
mod startstop;

pub use drain::drain;
pub use job::job;
pub use output::report;
pub use startstop::start_stop;
