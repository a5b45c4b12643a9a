// SPDX-License-Identifier: GPL-2.0

//! `rtlat run`, rtla timerlat top's counterpart: live, cyclictest's line per
//! CPU and the per-stage table; at the end, cyclictest's lines with missed
//! and dropped counts and every stage's percentiles.

use crate::{
    collect::Outcome,
    live::Interval,
    mode::Mode,
    output::{self, Live},
};

/// The mode of `rtlat run`.
pub struct Run;

impl Mode for Run {
    fn on_interval(&self, now: &Interval<'_>) -> String {
        let p = now.plan;
        now.cyclictest_lines()
            + &output::stage_table(&now.cpus, &p.stages, p.unit)
            + &now.progress()
    }

    fn on_end(&self, o: &Outcome<'_>) -> String {
        let plan = o.plan;
        let unit = plan.unit;
        let mut s = String::new();
        let main = plan.main_stage.name();
        for (i, cpu) in o.report.cpus.iter().enumerate() {
            if let Some(st) = cpu.stages.get(main) {
                let l = Live {
                    count: st.count,
                    min: st.min_ns,
                    avg: st.avg_ns,
                    max: st.max_ns,
                    cur: 0,
                };
                let tid = o.stream.tids.get(&cpu.cpu).copied().unwrap_or(0);
                s += &output::cyclictest_line(i, tid, plan.priority, plan.period_us, &l, unit);
                s += &format!(" Missed:{} Dropped:{}\n", cpu.missed, cpu.dropped);
            }
        }
        for cpu in &o.report.cpus {
            for (name, st) in &cpu.stages {
                let p = |k: &str| {
                    st.percentiles_ns
                        .get(k)
                        .map_or("-".to_string(), |v| unit.v(*v).to_string())
                };
                s += &format!(
                    "# cpu {:3} {:8}: count {} min {} avg {} max {} (seq {}) p50 {} p99 {} p99.9 {} p99.99 {} p99.9999 {}\n",
                    cpu.cpu,
                    name,
                    st.count,
                    unit.v(st.min_ns),
                    unit.v(st.avg_ns),
                    unit.v(st.max_ns),
                    st.max_seq,
                    p("p50"),
                    p("p99"),
                    p("p99.9"),
                    p("p99.99"),
                    p("p99.9999")
                );
            }
        }
        s
    }
}
