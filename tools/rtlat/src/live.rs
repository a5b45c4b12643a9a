// SPDX-License-Identifier: GPL-2.0

//! One interval of a running session, as the modes show it live once a
//! second: the numbers of every CPU and stage at that moment, and the pieces
//! of text every mode shows (cyclictest's lines, the progress line).

use std::{collections::BTreeMap, sync::Mutex, time::Duration};

use rtcore::uapi;

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
