// SPDX-License-Identifier: GPL-2.0

//! rtlat: measure wake-up latency with /dev/rtlat.
//!
//! The shape of rtla's timerlat: the command line ([`cli`]) gives a
//! [`plan`]; one lifecycle ([`lifecycle`]) carries it out for every
//! measuring command, and each command's [`mode`] says what it shows.

mod bench;
mod bench_check;
mod blame;
mod check_json;
mod cli;
mod cmd;
mod collect;
mod compare;
mod cyclictest;
mod exit;
mod files;
mod gate;
mod generate;
mod lifecycle;
mod live;
mod mode;
mod output;
mod plan;
mod plot;
mod raw;
mod report;
mod sched;
mod session;
mod signals;
mod stream;
mod sysinfo;
mod tally;
mod trace;
mod user;

use std::{process::ExitCode, time::Duration};

use clap::Parser;
use rtlat_client::device;

use cli::{Cli, Cmd};
use cmd::{Hist, Run};

fn main() -> ExitCode {
    signals::catch_status();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let lossy: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
    if let Err(e) = cli::refuse_reflexes(&lossy) {
        eprintln!("rtlat: error: {e}");
        return ExitCode::from(exit::USAGE);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(cli::usage_exit(&e));
        }
    };
    let result = match &cli.cmd {
        Cmd::Run(c) => lifecycle::run(c, &Run),
        Cmd::Hist(h) => lifecycle::run(&h.common, &Hist::new(h)),
        Cmd::Monitor(m) => cmd::monitor::run(m),
        Cmd::Cyclictest { args } => return cyclictest::main(args),
        Cmd::BenchJob { seconds } => {
            let cpus = sysinfo::online_cpus();
            bench::job(&cpus, Duration::from_secs_f64(*seconds), sched::pin_to).map(|rate| {
                println!("{rate:.1}");
                ExitCode::SUCCESS
            })
        }
        Cmd::BenchDrain {
            device,
            records,
            read_size,
            fill_timeout,
        } => bench::drain(device, *records, *read_size, *fill_timeout).map(|d| {
            println!("{}", d.line());
            ExitCode::SUCCESS
        }),
        Cmd::BenchStartstop {
            device,
            cpus,
            rounds,
        } => bench::start_stop(device, *cpus, *rounds).map(|s| {
            println!("{}", s.line());
            ExitCode::SUCCESS
        }),
        Cmd::BenchReport {
            log,
            out,
            kernel,
            arch,
        } => bench::report(log, out, kernel, arch).map(|md| {
            print!("{md}");
            ExitCode::SUCCESS
        }),
        Cmd::MetricsExample {
            openmetrics,
            percentiles,
            listen,
            buckets,
        } => {
            use cmd::monitor::example;
            let text = match (listen, percentiles) {
                (Some(addr), _) => example::serve(*addr, buckets).map(|()| String::new()),
                (None, true) => Ok(example::percentiles()),
                (None, false) => Ok(example::exposition(
                    if *openmetrics {
                        cmd::monitor::Format::OpenMetrics
                    } else {
                        cmd::monitor::Format::Text
                    },
                    buckets,
                )),
            };
            text.map(|t| {
                // A reader that goes away early (head) is no error here.
                let _ = std::io::Write::write_all(&mut std::io::stdout(), t.as_bytes());
                ExitCode::SUCCESS
            })
        }
        Cmd::CheckJson { file } => return check_json::check(file),
        Cmd::Compare { a, b, ns } => return compare::run(a, b, *ns),
        Cmd::Timerlat { args } => return cmd::timerlat::main(args),
        Cmd::Generate { what } => generate::run(what)
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| e.to_string()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rtlat: error: {e}");
            ExitCode::from(exit::ERROR)
        }
    }
}
