// SPDX-License-Identifier: GPL-2.0

//! A periodic control loop measured by `/dev/rtlat` (the Rust twin of
//! `samples/rtlat_loop.c`): each iteration waits for its period with
//! [`rtlat_client::Periodic::wait`], does its work (here: spinning for
//! `--work` µs, and once for `--slow` µs at iteration `--slow-at`), and
//! comes back. At the end it prints the session's deadline misses with
//! their response times, from the records.

use std::time::{
    Duration,
    Instant, //
};

use clap::Parser;
use rtlat_client::{
    uapi::{
        self,
        Stage, //
    },
    Options, Periodic,
};

/// A periodic control loop measured by /dev/rtlat.
#[derive(Parser)]
struct Args {
    /// The CPU of the loop.
    #[arg(long, default_value_t = 0)]
    cpu: u32,
    /// The period, µs.
    #[arg(long, default_value_t = 1000)]
    period_us: u64,
    /// Each iteration's deadline from its period's start, µs (0: none).
    #[arg(long, default_value_t = 0)]
    deadline_us: u64,
    /// Iterations.
    #[arg(long, default_value_t = 1000)]
    iterations: u32,
    /// Work of an iteration, µs.
    #[arg(long, default_value_t = 50)]
    work_us: u64,
    /// The iteration (from 1) that works `--slow-us` instead (0: none).
    #[arg(long, default_value_t = 0)]
    slow_at: u32,
    /// The slow iteration's work, µs.
    #[arg(long, default_value_t = 0)]
    slow_us: u64,
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn run(a: &Args) -> Result<(), String> {
    let lp = Periodic::start(&Options {
        cpu: a.cpu,
        period: Duration::from_micros(a.period_us),
        deadline: (a.deadline_us != 0).then(|| Duration::from_micros(a.deadline_us)),
        ..Default::default()
    })?;
    let mut worst = 0;
    for i in 1..=a.iterations {
        let rec = lp.wait().map_err(|e| format!("wait: {e}"))?;
        worst = worst.max(rec.lat_ns[Stage::User]);
        if i == a.slow_at {
            println!("rtlat_loop: slow iteration {i} seq {}", rec.seq);
            spin(Duration::from_micros(a.slow_us));
        } else {
            spin(Duration::from_micros(a.work_us));
        }
    }
    let (st, records) = lp.finish()?;
    println!(
        "rtlat_loop: iterations {} cpu {} period_us {} deadline_us {} worst_wakeup_us {} deadline_misses {}",
        a.iterations,
        a.cpu,
        a.period_us,
        a.deadline_us,
        worst / 1000,
        st.deadline_misses
    );
    for r in records
        .iter()
        .filter(|r| r.flags & uapi::REC_DEADLINE_MISS != 0)
    {
        match r.lat_ns[Stage::Response] {
            t if t >= 0 => println!("miss seq {} response_us {}", r.seq, t / 1000),
            _ => println!(
                "miss seq {} response_us none (not back by the next period)",
                r.seq
            ),
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    match run(&Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rtlat_loop: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
