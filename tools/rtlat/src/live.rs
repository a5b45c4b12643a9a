// SPDX-License-Identifier: GPL-2.0

//! One interval of a running session, as the modes show it live once a
//! second: the numbers of every CPU and stage at that moment, and the pieces
//! of text every mode shows (cyclictest's lines, the progress line).

use std::{collections::BTreeMap, sync::Mutex, time::Duration};

use rtcore::uapi::{self, Status};

use crate::{
    device::Device,
    output::{self, CpuLive, Live},
    plan::{Phase, Plan},
    stream::Stream,
    tally::Tally,
};

/// The numbers of a running session at one moment.
pub struct Interval<'a> {
    pub plan: &'a Plan,
    /// The session running.
    pub phase: &'a Phase,
    /// Per CPU of the session, in order: the numbers of each stage measured.
    pub cpus: Vec<CpuLive>,
    /// The measuring thread of each CPU.
    pub tids: BTreeMap<u32, i32>,
    /// Since the session started.
    pub elapsed: Duration,
    /// What the mode counted from the records so far, without the samples
    /// per value.
    pub tally: Option<Tally>,
}

impl<'a> Interval<'a> {
    /// Takes the numbers now: the device's statistics of each of `cpus`
    /// and stage, the latest latency the reader saw in `stream`.
    pub fn take(
        dev: &Device,
        cpus: &[u32],
        plan: &'a Plan,
        phase: &'a Phase,
        stream: &Mutex<Stream>,
        elapsed: Duration,
    ) -> Self {
        let (act, tids, tally) = {
            let s = stream.lock().unwrap();
            (
                s.act.clone(),
                s.tids.clone(),
                s.tally.as_ref().map(Tally::summaries),
            )
        };
        let cpus = cpus
            .iter()
            .map(|&cpu| {
                let mut per: [Option<Live>; uapi::NR_STAGES] = Default::default();
                for &st in &plan.stages {
                    if let Ok(x) = dev.stats(cpu, st) {
                        per[st] = Some(Live {
                            count: x.stats.count,
                            min: if x.stats.count == 0 { 0 } else { x.stats.min },
                            avg: x.avg(),
                            max: x.stats.max,
                            cur: if st == plan.main_stage {
                                act.get(&cpu).copied().unwrap_or(0)
                            } else {
                                0
                            },
                        });
                    }
                }
                CpuLive { cpu, stages: per }
            })
            .collect();
        Self {
            plan,
            phase,
            cpus,
            tids,
            elapsed,
            tally,
        }
    }

    /// cyclictest's lines: one per CPU with numbers in the main stage.
    pub fn cyclictest_lines(&self) -> String {
        let p = self.plan;
        let mut s = String::new();
        for (i, row) in self.cpus.iter().enumerate() {
            if let Some(l) = &row.stages[p.main_stage] {
                let tid = self.tids.get(&row.cpu).copied().unwrap_or(0);
                s += &output::cyclictest_line(i, tid, p.priority, p.period_us, l, p.unit);
                s.push('\n');
            }
        }
        s
    }

    /// One status line (`--interval`): the time, then per stage measured the
    /// activations and the worst min, avg and max over the CPUs (and the
    /// CPU of the max), then the missed periods and dropped records of `st`.
    pub fn status_line(&self, st: &Status) -> String {
        let (p, u) = (self.plan, self.plan.unit);
        let e = self.elapsed.as_secs();
        let mut s = format!(
            "rtlat: {}{:02}:{:02}:{:02}",
            if self.phase.warm_up { "warm-up " } else { "" },
            e / 3600,
            e / 60 % 60,
            e % 60
        );
        if let Some(left) = self.phase.duration.map(|d| d.as_secs().saturating_sub(e)) {
            s += &format!(" ({left} s left)");
        }
        for &stage in &p.stages {
            let rows: Vec<(u32, &Live)> = self
                .cpus
                .iter()
                .filter_map(|c| c.stages[stage].as_ref().map(|l| (c.cpu, l)))
                .filter(|(_, l)| l.count > 0)
                .collect();
            let count: u64 = rows.iter().map(|(_, l)| l.count).sum();
            match rows.iter().max_by_key(|(_, l)| l.max) {
                Some(&(cpu, worst)) => {
                    let min = rows.iter().map(|(_, l)| l.min).min().unwrap_or(0);
                    let avg = rows.iter().map(|(_, l)| l.avg * l.count).sum::<u64>() / count;
                    s += &format!(
                        " | {} C:{count} Min:{} Avg:{} Max:{} (CPU {cpu})",
                        stage.name(),
                        u.v(min),
                        u.v(avg),
                        u.v(worst.max)
                    );
                }
                None => s += &format!(" | {} C:0", stage.name()),
            }
        }
        s + &format!(" | missed {} dropped {}", st.missed, st.dropped)
    }

    /// The summary SIGUSR1 asks for: cyclictest's lines, the stage table,
    /// the progress, the missed periods and dropped records of `st`.
    pub fn summary(&self, st: &Status) -> String {
        let p = self.plan;
        self.cyclictest_lines()
            + &output::stage_table(&self.cpus, &p.stages, p.unit)
            + &self.progress()
            + &format!(
                "# missed periods {}, dropped records {}\n",
                st.missed, st.dropped
            )
    }

    /// The progress line: the warm-up's time left, or the time elapsed.
    pub fn progress(&self) -> String {
        let e = self.elapsed.as_secs();
        if self.phase.warm_up {
            let left = self
                .phase
                .duration
                .map_or(0, |d| d.as_secs().saturating_sub(e));
            return format!("# warm-up, {left} s left: discarded, thresholds not armed\n");
        }
        match self.phase.duration {
            Some(d) => {
                let left = d.as_secs().saturating_sub(e);
                format!(
                    "# elapsed {:02}:{:02}:{:02}, {} s left\n",
                    e / 3600,
                    e / 60 % 60,
                    e % 60,
                    left
                )
            }
            None => {
                format!(
                    "# elapsed {:02}:{:02}:{:02} (Ctrl-C to stop)\n",
                    e / 3600,
                    e / 60 % 60,
                    e % 60
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use rtcore::uapi::Stage;

    use super::*;
    use crate::cli::{Cli, Cmd};

    #[test]
    fn status_line_and_summary() {
        let Cmd::Run(c) = Cli::try_parse_from(["rtlat", "run", "-d", "60s", "--interval", "10"])
            .unwrap()
            .cmd
        else {
            unreachable!()
        };
        let plan = Plan::new(&c, &[0, 1], "0-1").unwrap();
        assert_eq!(plan.interval, Some(Duration::from_secs(10)));
        let live = |count, min, avg, max| {
            Some(Live {
                count,
                min,
                avg,
                max,
                cur: 0,
            })
        };
        let row = |cpu, irq, thread| {
            let mut stages: [Option<Live>; uapi::NR_STAGES] = Default::default();
            stages[Stage::Irq] = irq;
            stages[Stage::Thread] = thread;
            CpuLive { cpu, stages }
        };
        let now = Interval {
            plan: &plan,
            phase: &plan.phases.measured,
            cpus: vec![
                row(
                    0,
                    live(100, 1_000, 2_000, 9_000),
                    live(100, 3_000, 4_000, 12_000),
                ),
                row(
                    1,
                    live(300, 2_000, 3_000, 5_000),
                    live(300, 2_500, 6_000, 31_000),
                ),
            ],
            tids: BTreeMap::new(),
            tally: None,
            elapsed: Duration::from_secs(3725),
        };
        let st = Status {
            missed: 2,
            dropped: 5,
            ..Default::default()
        };
        assert_eq!(
            now.status_line(&st),
            "rtlat: 01:02:05 (0 s left) | irq C:400 Min:1 Avg:2 Max:9 (CPU 0) \
             | thread C:400 Min:2 Avg:5 Max:31 (CPU 1) | missed 2 dropped 5"
        );
        let s = now.summary(&st);
        assert!(s.starts_with("T: 0 (    0) P:95 I:1000 C:    100"), "{s}");
        assert!(s.contains("\nT: 1 ("), "{s}");
        assert!(
            s.ends_with("# missed periods 2, dropped records 5\n"),
            "{s}"
        );
    }
}
