// SPDX-License-Identifier: GPL-2.0

//! Run-to-end gates: `--fail-if EXPR`, `--max-missed N`, `--max-dropped N`.
//!
//! Unlike a threshold (`--threshold`, which the kernel checks on every
//! activation and which stops the run at the first trip), a gate lets the
//! run go to its end and is evaluated once on the final statistics: the
//! kernel's histogram per CPU and stage, through the percentile code the
//! report uses (`rtcore::hist::percentile`). A failed gate is exit status 4.

use std::fmt;

use rtcore::{hist, uapi::Stage};

use crate::{
    device::StageStats,
    report::{GateReport, GateValue, Totals},
};

/// The statistic a gate looks at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stat {
    Min,
    Avg,
    Max,
    /// A percentile, in parts per million (p99.99: 999 900).
    Percentile(u32),
}

/// How the statistic compares with the limit for the gate to fail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    /// True if `value OP limit`: the gate fails.
    pub fn holds(self, value: u64, limit: u64) -> bool {
        match self {
            Op::Gt => value > limit,
            Op::Ge => value >= limit,
            Op::Lt => value < limit,
            Op::Le => value <= limit,
        }
    }
}

/// One `--fail-if`: fail if `stage.stat OP limit_ns` on some CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    /// The expression as given.
    pub expr: String,
    pub stage: Stage,
    pub stat: Stat,
    pub op: Op,
    pub limit_ns: u64,
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expr)
    }
}

/// The statistic `stat` of `x`; `None` without samples.
pub fn stat_of(x: &StageStats, stat: Stat) -> Option<u64> {
    if x.stats.count == 0 {
        return None;
    }
    match stat {
        Stat::Min => Some(x.stats.min),
        Stat::Avg => Some(x.avg()),
        Stat::Max => Some(x.stats.max),
        Stat::Percentile(ppm) => hist::percentile(&x.buckets, ppm, x.stats.max),
    }
}

fn parse_stat(s: &str, expr: &str) -> Result<Stat, String> {
    Ok(match s {
        "min" => Stat::Min,
        "avg" => Stat::Avg,
        "max" => Stat::Max,
        _ => {
            let bad = || {
                format!(
                    "'{expr}': bad statistic '{s}' (min, avg, max or a percentile pNN[.NN], e.g. p99.99)"
                )
            };
            let num = s.strip_prefix('p').ok_or_else(bad)?;
            if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return Err(bad());
            }
            let v: f64 = num.parse().map_err(|_| bad())?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(format!(
                    "'{expr}': percentile '{s}' is not above 0 and at most 100"
                ));
            }
            let ppm = v * 10_000.0;
            if (ppm - ppm.round()).abs() > 1e-6 {
                return Err(format!(
                    "'{expr}': percentile '{s}' is finer than the histogram's resolution (p99.9999)"
                ));
            }
            Stat::Percentile(ppm.round() as u32)
        }
    })
}

/// Parses a `--fail-if` expression, `STAGE.STAT OP VALUE UNIT`; an error
/// names the part that is wrong (clap makes it a usage error, exit 2).
pub fn parse(expr: &str) -> Result<Gate, String> {
    let at = expr.find(['<', '>']).ok_or_else(|| {
        format!("'{expr}': no comparison (>, >=, <, <=), e.g. thread.p99.99>100us")
    })?;
    let (left, rest) = expr.split_at(at);
    let (op, right) = match rest.as_bytes() {
        [b'>', b'=', ..] => (Op::Ge, &rest[2..]),
        [b'<', b'=', ..] => (Op::Le, &rest[2..]),
        [b'>', ..] => (Op::Gt, &rest[1..]),
        _ => (Op::Lt, &rest[1..]),
    };
    let (stage, stat) = left.trim().split_once('.').ok_or_else(|| {
        format!(
            "'{expr}': '{}' is not STAGE.STAT, e.g. thread.max",
            left.trim()
        )
    })?;
    let stage = [Stage::Irq, Stage::Thread, Stage::User, Stage::Response]
        .into_iter()
        .find(|s| s.name() == stage)
        .ok_or_else(|| {
            format!("'{expr}': unknown stage '{stage}' (irq, thread, user, response)")
        })?;
    let stat = parse_stat(stat, expr)?;
    let right = right.trim();
    let split = right
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(right.len());
    let (num, unit) = right.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{expr}': bad value '{right}', e.g. 100us"))?;
    let mult = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" => {
            return Err(format!(
                "'{expr}': the value '{num}' needs a unit (ns, us, ms)"
            ))
        }
        u => return Err(format!("'{expr}': unknown unit '{u}' (ns, us, ms)")),
    };
    let ns = v * mult;
    if ns.fract() != 0.0 || ns > 1e15 {
        return Err(format!(
            "'{expr}': the value '{right}' is not a whole number of ns"
        ));
    }
    Ok(Gate {
        expr: expr.to_string(),
        stage,
        stat,
        op,
        limit_ns: ns as u64,
    })
}

/// The gates of a run.
#[derive(Clone, Debug, Default)]
pub struct Gates {
    pub fail_if: Vec<Gate>,
    pub max_missed: Option<u64>,
    pub max_dropped: Option<u64>,
}

impl Gates {
    /// The first gate whose stage is not measured (`stages`; the response
    /// with `user`).
    pub fn unmeasured(&self, stages: &[Stage], user: bool) -> Option<&Gate> {
        self.fail_if.iter().find(|g| match g.stage {
            Stage::Response => !user,
            s => !stages.contains(&s),
        })
    }

    /// Checks that every gate's stage is measured (`stages`, `user`).
    pub fn check(&self, stages: &[Stage], user: bool) -> Result<(), String> {
        match self.unmeasured(stages, user) {
            None => Ok(()),
            Some(g) => Err(format!(
                "--fail-if '{g}': the {} stage is not measured{}",
                g.stage.name(),
                if matches!(g.stage, Stage::User | Stage::Response) {
                    " (--user)"
                } else {
                    ""
                }
            )),
        }
    }

    /// True if there is any gate.
    pub fn any(&self) -> bool {
        !self.fail_if.is_empty() || self.max_missed.is_some() || self.max_dropped.is_some()
    }

    /// Evaluates every gate on the final statistics `stats` (every CPU and
    /// stage reported) and the per-CPU missed and dropped counts.
    pub fn evaluate(
        &self,
        stats: &[StageStats],
        per_cpu: &[(u32, u64, u64)],
        totals: &Totals,
    ) -> Vec<GateReport> {
        let mut out = Vec::new();
        for g in &self.fail_if {
            let cpus: Vec<GateValue> = stats
                .iter()
                .filter(|x| x.stage == g.stage)
                .map(|x| {
                    let value = stat_of(x, g.stat);
                    GateValue {
                        cpu: x.cpu,
                        value,
                        failed: value.is_none_or(|v| g.op.holds(v, g.limit_ns)),
                    }
                })
                .collect();
            // The worst CPU: a failed one first, then the value furthest
            // on the failing side.
            let worst = cpus
                .iter()
                .max_by_key(|v| {
                    let side = match (g.op, v.value) {
                        (_, None) => u64::MAX,
                        (Op::Gt | Op::Ge, Some(x)) => x,
                        (Op::Lt | Op::Le, Some(x)) => u64::MAX - 1 - x,
                    };
                    (v.failed, side)
                })
                .cloned();
            out.push(GateReport {
                expr: g.expr.clone(),
                kind: "latency".into(),
                limit: g.limit_ns,
                value: worst.as_ref().and_then(|w| w.value),
                cpu: worst.as_ref().map(|w| w.cpu),
                // No CPU at all: nothing was measured, nothing passes.
                passed: !cpus.is_empty() && cpus.iter().all(|v| !v.failed),
                cpus,
            });
        }
        let counts = [
            ("missed", self.max_missed, totals.missed, 1),
            ("dropped", self.max_dropped, totals.dropped, 2),
        ];
        for (kind, limit, total, col) in counts {
            let Some(limit) = limit else { continue };
            out.push(GateReport {
                expr: format!("{kind}>{limit}"),
                kind: kind.into(),
                limit,
                value: Some(total),
                cpu: None,
                passed: total <= limit,
                cpus: per_cpu
                    .iter()
                    .map(|&(cpu, missed, dropped)| GateValue {
                        cpu,
                        value: Some(if col == 1 { missed } else { dropped }),
                        failed: false,
                    })
                    .collect(),
            });
        }
        out
    }
}

/// The lines that print the gates' results, `ns` or µs.
pub fn summary(gates: &[GateReport], ns: bool) -> String {
    let v = |x: u64| {
        if ns {
            format!("{x} ns")
        } else {
            format!("{:.3} us", x as f64 / 1000.0)
        }
    };
    let mut s = String::new();
    for g in gates {
        let verdict = if g.passed { "passed" } else { "FAILED" };
        let value = match (g.kind.as_str(), g.value, g.cpu) {
            ("latency", Some(x), Some(cpu)) => format!("{} on CPU {cpu}", v(x)),
            ("latency", None, Some(cpu)) => format!("no samples on CPU {cpu}"),
            ("latency", _, _) => "no CPU measured".into(),
            (kind, x, _) => format!("{} {kind}", x.unwrap_or(0)),
        };
        s += &format!("rtlat: gate {}: {verdict} ({value})\n", g.expr);
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use rtcore::uapi::Stats;

    use super::*;

    #[test]
    fn expressions() {
        let g = parse("thread.p99.99>100us").unwrap();
        assert_eq!(
            (g.stage, g.stat, g.op, g.limit_ns),
            (Stage::Thread, Stat::Percentile(999_900), Op::Gt, 100_000)
        );
        let g = parse("irq.max>=50us").unwrap();
        assert_eq!(
            (g.stage, g.stat, g.op, g.limit_ns),
            (Stage::Irq, Stat::Max, Op::Ge, 50_000)
        );
        let g = parse(" user.avg > 20 µs").unwrap();
        assert_eq!(
            (g.stage, g.stat, g.op, g.limit_ns),
            (Stage::User, Stat::Avg, Op::Gt, 20_000)
        );
        let g = parse("response.min<1.5ms").unwrap();
        assert_eq!((g.stat, g.op, g.limit_ns), (Stat::Min, Op::Lt, 1_500_000));
        assert_eq!(
            parse("thread.p50<=700ns").unwrap().stat,
            Stat::Percentile(500_000)
        );
        assert_eq!(
            parse("thread.p99.9999>1us").unwrap().stat,
            Stat::Percentile(999_999)
        );
        assert_eq!(
            parse("thread.p100>1us").unwrap().stat,
            Stat::Percentile(1_000_000)
        );
    }

    #[test]
    fn refused_expressions_name_the_bad_part() {
        let err = |e: &str| parse(e).unwrap_err();
        assert!(err("thread.p99>100").contains("'100' needs a unit"));
        assert!(err("thread.p99>100s").contains("unknown unit 's'"));
        assert!(err("thred.max>1us").contains("unknown stage 'thred'"));
        assert!(err("thread.mean>1us").contains("bad statistic 'mean'"));
        assert!(err("thread.p0>1us").contains("percentile 'p0'"));
        assert!(err("thread.p101>1us").contains("percentile 'p101'"));
        assert!(err("thread.p99.99999>1us").contains("finer"));
        assert!(err("thread.max=1us").contains("no comparison"));
        assert!(err("max>1us").contains("'max' is not STAGE.STAT"));
        assert!(err("thread.max>us").contains("bad value 'us'"));
        assert!(err("thread.max>1.5ns").contains("whole number"));
    }

    /// The statistics of `values` (ns) on `cpu`'s `stage`.
    pub(crate) fn stats(cpu: u32, stage: Stage, values: &[u64]) -> StageStats {
        let mut buckets = vec![0u64; hist::BUCKETS];
        let mut s = hist::Summary::new();
        for (i, &v) in values.iter().enumerate() {
            buckets[hist::bucket_of(v)] += 1;
            s.add(v, i as u64, 0);
        }
        StageStats {
            cpu,
            stage,
            stats: Stats {
                count: s.count,
                min: s.min,
                max: s.max,
                sum: s.sum,
                ..Default::default()
            },
            buckets,
        }
    }

    #[test]
    fn evaluated_on_the_final_histograms() {
        // CPU 0: 9 990 samples at 5 µs and 10 at 200 µs: its p99.9 is
        // 5 µs (to the bucket), its p99.99 200 µs. CPU 1: all at 5 µs.
        let mut v0 = vec![5_000u64; 9_990];
        v0.extend([200_000; 10]);
        let st = [
            stats(0, Stage::Thread, &v0),
            stats(1, Stage::Thread, &[5_000; 100]),
            stats(0, Stage::Irq, &[1_000; 10_000]),
            stats(1, Stage::Irq, &[]),
        ];
        let gates = Gates {
            fail_if: [
                "thread.p99.9>10us",
                "thread.p99.99>100us",
                "irq.max>=1us",
                "thread.avg<1us",
            ]
            .iter()
            .map(|e| parse(e).unwrap())
            .collect(),
            max_missed: Some(2),
            max_dropped: Some(0),
        };
        let totals = Totals {
            missed: 3,
            dropped: 0,
            ..Default::default()
        };
        let r = gates.evaluate(&st, &[(0, 1, 0), (1, 2, 0)], &totals);
        let verdicts: Vec<(&str, bool)> = r.iter().map(|g| (g.expr.as_str(), g.passed)).collect();
        assert_eq!(
            verdicts,
            [
                ("thread.p99.9>10us", true),
                ("thread.p99.99>100us", false),
                ("irq.max>=1us", false),
                ("thread.avg<1us", true),
                ("missed>2", false),
                ("dropped>0", true),
            ]
        );
        // The worst CPU and its value, as the report's percentile gives it.
        assert_eq!((r[1].cpu, r[1].value), (Some(0), Some(200_000)));
        assert_eq!(
            r[1].cpus[1],
            GateValue {
                cpu: 1,
                value: Some(5_000),
                failed: false
            }
        );
        // A CPU without samples fails, and is the one named.
        assert_eq!((r[2].cpu, r[2].value), (Some(1), None));
        assert!(r[2].cpus[1].failed);
        // max 1 µs >= 1 µs: the limit itself fails a >= gate.
        assert_eq!(
            r[2].cpus[0],
            GateValue {
                cpu: 0,
                value: Some(1_000),
                failed: true
            }
        );
        assert_eq!(r[4].value, Some(3));
        let text = summary(&r, false);
        assert!(
            text.contains("rtlat: gate thread.p99.99>100us: FAILED (200.000 us on CPU 0)"),
            "{text}"
        );
        assert!(
            text.contains("rtlat: gate missed>2: FAILED (3 missed)"),
            "{text}"
        );
        assert!(
            text.contains("rtlat: gate dropped>0: passed (0 dropped)"),
            "{text}"
        );
    }

    #[test]
    fn gates_need_their_stage() {
        let g = Gates {
            fail_if: vec![parse("user.max>1us").unwrap()],
            ..Default::default()
        };
        let e = g.check(&[Stage::Irq, Stage::Thread], false).unwrap_err();
        assert!(e.contains("user stage is not measured (--user)"), "{e}");
        assert_eq!(
            g.check(&[Stage::Irq, Stage::Thread, Stage::User], true),
            Ok(())
        );
    }
}
