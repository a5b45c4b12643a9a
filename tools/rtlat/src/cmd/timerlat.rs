// SPDX-License-Identifier: GPL-2.0

//! `rtlat timerlat [top|hist] [options]`: a drop-in front end for `rtla
//! timerlat` (Linux 7.3, `tools/tracing/rtla`), measured with /dev/rtlat.
//!
//! rtla's options are mapped onto rtlat's own ([`args`]): the result is a
//! native command line (`rtlat run` options) and the thresholds, so the run
//! is the shared lifecycle's, with the mode of `top` ([`top`]) or `hist`
//! ([`hist`]) printing rtla's output, built from rtla's format strings. An
//! rtla option rtlat cannot honour is refused by name, never ignored.
//!
//! rtla's samples have three contexts; each shows one rtlat stage:
//!
//! | rtla context          | `-k` (default)   | `-u`                       |
//! |-----------------------|------------------|----------------------------|
//! | irq (`IRQ`)           | irq              | irq                        |
//! | thread (`Thr`)        | thread (kernel)  | user (the user thread)     |
//! | user return (`Usr`)   | -                | response                   |
//!
//! The numbers are rtla's arithmetic on rtlat's records: every latency is
//! truncated to whole µs (ns with `-n`) first, then counted, summed (the
//! average is the sum of truncated values over the count) and put in
//! buckets of `-b` units.
//!
//! Exit status as rtla's: 0 done, 1 error (and an option refused), 2 a
//! threshold stopped the run, 129 a command line rtla's parser refuses
//! (and `-h`).

mod args;
mod common;
mod hist;
mod top;

use std::{io::IsTerminal, process::ExitCode};

use crate::{cli::Common, lifecycle};
use clap::Parser;

use args::{Parsed, View};

/// The options of `rtlat run` a mapped command line is parsed with.
#[derive(Parser)]
#[command(no_binary_name = true)]
struct Native {
    #[command(flatten)]
    common: Common,
}

/// Runs `rtlat timerlat ARGS` (the arguments after `timerlat`).
pub fn main(argv: &[String]) -> ExitCode {
    let parsed = match args::parse(argv) {
        Ok(p) => p,
        Err(r) => {
            match &r {
                args::Refusal::Usage(e) => {
                    let _ = e.print();
                }
                args::Refusal::Fatal(msg) => eprintln!("{msg}"),
            }
            return ExitCode::from(r.status());
        }
    };
    match run(&parsed) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rtlat: error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Carries out a parsed command line.
fn run(p: &Parsed) -> Result<ExitCode, String> {
    let mut common = Native::try_parse_from(&p.native)
        .map_err(|e| format!("{}: {e}", p.native.join(" ")))?
        .common;
    common.thresholds = p.thresholds.clone();
    let pretty = std::io::stdout().is_terminal();
    match &p.view {
        View::Top(v) => {
            let mut v = v.clone();
            v.pretty = pretty && !v.quiet;
            lifecycle::run(&common, &top::Top(v))
        }
        View::Hist(v) => lifecycle::run(&common, &hist::Hist(v.clone())),
    }
}
