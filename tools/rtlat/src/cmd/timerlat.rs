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
//! (and `-h`); and the native tool's 4 for a failed `--fail-if` gate.

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

#[cfg(test)]
mod tests {
    use rtcore::uapi::Stage;

    use super::*;
    use crate::{collect, exit, gate::tests::stats, mode::Mode, plan::Plan, report::StopCause};

    #[test]
    fn a_failed_gate_fails_the_run_after_rtlas_numbers() {
        let p = args::parse(&[
            "top",
            "-q",
            "-d",
            "2",
            "-T",
            "100",
            "--fail-if",
            "user.max>50us",
        ])
        .unwrap();
        let mut c = Native::try_parse_from(&p.native).unwrap().common;
        c.thresholds = p.thresholds.clone();
        let plan = Plan::new(&c, &[0, 1], "0-1").unwrap();
        let View::Top(v) = p.view else { panic!() };
        let mode = top::Top(v);
        let mut o = collect::tests::outcome(&plan);
        let st = [
            stats(0, Stage::User, &[5_000]),
            stats(1, Stage::User, &[80_000]),
        ];
        o.report.gates = plan.gates.evaluate(&st, &[], &o.report.totals);
        o.report.stop.trip = None;
        o.report.stop.reason = StopCause::Duration;
        assert_eq!(
            lifecycle::gate_lines(&o),
            "rtlat: gate user.max>50us: FAILED (80.000 us on CPU 1)\n"
        );
        assert_eq!(lifecycle::verdict(&o, &mode), (exit::GATE, None));
        // A threshold that stopped the run: rtla's 2 and its line.
        o.report.stop.tripped(150_000);
        let (code, line) = lifecycle::verdict(&o, &mode);
        assert_eq!(code, 2);
        assert!(line.unwrap().starts_with("timerlat hit stop tracing\n"));
        // Every gate passed: rtla's 0.
        o.report.stop.trip = None;
        o.report.stop.reason = StopCause::Duration;
        o.report.gates.iter_mut().for_each(|g| g.passed = true);
        assert_eq!(lifecycle::verdict(&o, &mode), (exit::OK, None));
    }

    #[test]
    fn a_gate_on_a_stage_not_measured_is_rtlas_refusal() {
        let p = args::parse(&["top", "-k", "--fail-if", "user.max>50us"]).unwrap();
        let c = Native::try_parse_from(&p.native).unwrap().common;
        let e = Plan::new(&c, &[0, 1], "0-1").err().unwrap();
        assert_eq!(
            e.to_string(),
            "--fail-if 'user.max>50us': the user stage is not measured (--user)"
        );
        let View::Top(v) = p.view else { panic!() };
        assert_eq!(top::Top(v).refused_exit(&e), exit::ERROR);
    }
}
