// SPDX-License-Identifier: GPL-2.0

//! `rtlat bench-startstop`, run in the benchmark guest: how long CONFIG,
//! START and STOP take for a session on the first `cpus` online CPUs (the
//! median of `rounds`), so that the cost per CPU shows as the machine
//! grows.
//!
//! Each round configures a session (irq and thread stages, 1 ms, small
//! rings), starts it (a SCHED_FIFO kernel thread and a hard timer per
//! CPU), lets it run a few periods and stops it (every timer cancelled,
//! every thread joined); nothing reads the records.

use std::{
    path::Path,
    thread,
    time::{
        Duration,
        Instant, //
    },
};

use rtcore::uapi::{
    Config,
    Stage, //
};

use crate::{
    device::Device,
    sysinfo, //
};

/// What `rtlat bench-startstop` measured (one line of its output; medians
/// in ns).
#[derive(Debug, PartialEq)]
pub struct StartStop {
    pub cpus: u64,
    pub rounds: u64,
    pub config_ns: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
}

impl StartStop {
    const KEYS: [&str; 5] = ["cpus", "rounds", "config_ns", "start_ns", "stop_ns"];

    /// The line `rtlat bench-report` reads back ([`StartStop::parse`]).
    pub fn line(&self) -> String {
        super::kv::line(
            &Self::KEYS,
            [
                self.cpus,
                self.rounds,
                self.config_ns,
                self.start_ns,
                self.stop_ns,
            ],
        )
    }

    /// Parses [`StartStop::line`]'s output; anything else (an error
    /// message) is refused.
    pub fn parse(s: &str) -> Result<Self, String> {
        let v = super::kv::parse(s, &Self::KEYS, "bench-startstop")?;
        let bad = || super::kv::refused(s, "bench-startstop");
        let [cpus, rounds, config_ns, start_ns, stop_ns] = v;
        if cpus == 0 || rounds == 0 || start_ns == 0 || stop_ns == 0 {
            return Err(format!("{}: no CPU, no round or a time of zero", bad()));
        }
        Ok(Self {
            cpus,
            rounds,
            config_ns,
            start_ns,
            stop_ns,
        })
    }
}

/// The median of `v` (not empty).
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Times `rounds` sessions on the first `cpus` online CPUs.
pub fn start_stop(device: &Path, cpus: usize, rounds: usize) -> Result<StartStop, String> {
    let online = sysinfo::online_cpus();
    if cpus == 0 || cpus > online.len() || rounds == 0 {
        return Err(format!(
            "{cpus} CPUs and {rounds} rounds: at least one of each, and at most the {} online",
            online.len()
        ));
    }
    let on = &online[..cpus];
    let dev = Device::open(device, false)?;
    dev.status()?;
    let config = Config {
        stages: Stage::Irq.bit() | Stage::Thread.bit(),
        ring_records: 64,
        ..Config::default()
    };
    let ns = |t: Instant| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let (mut cfg, mut start, mut stop) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        dev.configure(device, &config, on)?;
        cfg.push(ns(t));
        let t = Instant::now();
        dev.start().map_err(|e| format!("start: {e}"))?;
        start.push(ns(t));
        thread::sleep(Duration::from_millis(20));
        let t = Instant::now();
        dev.stop().map_err(|e| format!("stop: {e}"))?;
        stop.push(ns(t));
    }
    Ok(StartStop {
        cpus: cpus as u64,
        rounds: rounds as u64,
        config_ns: median(&mut cfg),
        start_ns: median(&mut start),
        stop_ns: median(&mut stop),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_reads_back_and_bad_lines_are_refused() {
        let s = StartStop {
            cpus: 8,
            rounds: 10,
            config_ns: 300_000,
            start_ns: 2_000_000,
            stop_ns: 4_000_000,
        };
        assert_eq!(StartStop::parse(&s.line()), Ok(s));
        for bad in [
            "",
            "cpus 8 rounds 10 config_ns 1 start_ns 1",
            "cpus 0 rounds 10 config_ns 1 start_ns 1 stop_ns 1",
            "cpus 8 rounds 10 config_ns 1 start_ns 0 stop_ns 1",
            "rounds 10 cpus 8 config_ns 1 start_ns 1 stop_ns 1",
            "cpus 8 rounds x config_ns 1 start_ns 1 stop_ns 1",
            "rtlat: error: /dev/rtlat: configure: Invalid argument",
        ] {
            assert!(StartStop::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(median(&mut [5, 1, 3]), 3);
    }
}
