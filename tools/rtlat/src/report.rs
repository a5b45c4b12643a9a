// SPDX-License-Identifier: GPL-2.0

//! The JSON report (`--json`): schema-versioned, one object per run.
//! `tools/rtlat/schema/rtlat-run.schema.json` is its JSON Schema.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{gate::GateReport, raw::RawReport, sysinfo::SysInfo};

/// Name of the schema.
pub const SCHEMA: &str = "rtlat-run";
/// Version of the schema written; bumped when a member changes meaning or
/// goes away, not when one is added (readers ignore members they do not
/// know, at the top level and in `system`). Version 2 added `gates`,
/// `exit_code`, `start_monotonic_ns`, `raw`, `housekeeping` and
/// `system`'s reproduction metadata.
pub const SCHEMA_VERSION: u32 = 2;
/// The versions `check-json` and `compare` read.
pub const SCHEMA_VERSIONS_READ: [u32; 2] = [1, 2];

/// A whole run. Members added after version 1 are optional when read.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Report {
    pub schema: String,
    pub schema_version: u32,
    pub tool: Tool,
    pub command_line: Vec<String>,
    /// Wall-clock start and end, seconds since the epoch.
    pub start_time: f64,
    pub end_time: f64,
    /// CLOCK_MONOTONIC at the measured session's start, ns: the clock of
    /// `max_time_ns` and of the records' expected times (v2).
    #[serde(default)]
    pub start_monotonic_ns: Option<u64>,
    pub system: SysInfoJson,
    pub settings: Settings,
    pub stop: Stop,
    pub totals: Totals,
    pub cpus: Vec<CpuReport>,
    /// The run-to-end gates and their results (v2).
    #[serde(default)]
    pub gates: Vec<GateReport>,
    /// The tool's exit status (v2).
    #[serde(default)]
    pub exit_code: Option<u8>,
    /// The `--raw` file (v2).
    #[serde(default)]
    pub raw: Option<RawReport>,
    /// Where the tool's own threads ran (v2).
    #[serde(default)]
    pub housekeeping: Option<Housekeeping>,
}

/// The CPUs of the tool's own threads, as CPU lists (`0-3,5`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Housekeeping {
    /// The CPUs they were allowed.
    pub cpus: String,
    /// How: `--housekeeping`, `the online CPUs not measured`, or `every
    /// online CPU is measured` (then they share the measured CPUs).
    pub chosen: String,
    /// The CPUs the reader thread was seen on (after each read) during the
    /// measured session.
    pub reader_ran_on: String,
    /// The CPUs the status loop (the main thread) was seen on.
    pub status_ran_on: String,
}

/// Tool, module and UAPI versions.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub uapi_version: u32,
    pub module_srcversion: Option<String>,
    /// How the tool was built (v2).
    #[serde(default)]
    pub build: Option<Build>,
}

/// How the tool was built.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// `git describe --always --dirty` of the source, or `unknown`.
    pub git: String,
    /// The target triple.
    pub target: String,
    /// `debug` or `release`.
    pub profile: String,
    /// `rustc --version`.
    pub rustc: String,
}

impl Build {
    /// This binary's.
    pub fn this() -> Self {
        Self {
            git: env!("RTLAT_GIT").into(),
            target: env!("RTLAT_TARGET").into(),
            profile: env!("RTLAT_PROFILE").into(),
            rustc: env!("RTLAT_RUSTC").into(),
        }
    }
}

/// System metadata ([`SysInfo`]), as written.
pub type SysInfoJson = serde_json::Value;

/// What was asked for.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub period_us: f64,
    pub cpus: Vec<u32>,
    pub stages: Vec<String>,
    pub priority: u32,
    pub thresholds_us: BTreeMap<String, f64>,
    pub duration_s: Option<f64>,
    pub warm_up_s: f64,
    pub user_threads: bool,
    pub dma_latency_us: Option<i32>,
    pub tracing_off: bool,
}

/// Why the run ended.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// `duration`, `interrupted`, `threshold` or `error`.
    pub reason: String,
    pub trip: Option<Trip>,
}

/// The activation that exceeded a threshold.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Trip {
    pub cpu: u32,
    pub stage: String,
    pub value_ns: u64,
    pub seq: u64,
}

/// Totals over all CPUs.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    pub produced: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub missed: u64,
}

/// One CPU.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CpuReport {
    pub cpu: u32,
    pub missed: u64,
    pub dropped: u64,
    pub stages: BTreeMap<String, StageReport>,
}

/// One stage on one CPU; all values in ns.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct StageReport {
    pub count: u64,
    pub min_ns: u64,
    pub avg_ns: u64,
    pub max_ns: u64,
    pub max_seq: u64,
    /// CLOCK_MONOTONIC expected expiry of the activation of the max.
    pub max_time_ns: u64,
    pub percentiles_ns: BTreeMap<String, u64>,
    pub histogram: Histogram,
}

/// Non-empty buckets of the log-linear histogram.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Histogram {
    /// `log-linear`, with `sub_bits` and `octaves` of `rtcore::hist`.
    pub layout: String,
    pub sub_bits: u32,
    pub octaves: u32,
    /// `[low_ns, high_ns, count]` per non-empty bucket, in order.
    pub buckets: Vec<[u64; 3]>,
}

impl Histogram {
    /// From the raw buckets.
    pub fn from_buckets(b: &[u64]) -> Self {
        Self {
            layout: "log-linear".into(),
            sub_bits: rtcore::hist::SUB_BITS,
            octaves: rtcore::hist::OCTAVES,
            buckets: b
                .iter()
                .enumerate()
                .filter(|(_, &n)| n != 0)
                .map(|(i, &n)| {
                    [
                        rtcore::hist::bucket_low(i),
                        rtcore::hist::bucket_high(i).min(u64::MAX / 2),
                        n,
                    ]
                })
                .collect(),
        }
    }
}

impl Report {
    /// Checks that the numbers agree with each other: what the module
    /// counted per CPU and in total, and each stage's histogram and summary.
    pub fn consistency(&self) -> Result<(), String> {
        let t = &self.totals;
        if t.produced != t.delivered + t.dropped {
            return Err(format!(
                "produced {} != delivered {} + dropped {}",
                t.produced, t.delivered, t.dropped
            ));
        }
        let main: u64 = self
            .cpus
            .iter()
            .filter_map(|c| c.stages.get("irq"))
            .map(|s| s.count)
            .sum();
        // Every record has its irq stage, whatever else was measured.
        if main != t.produced {
            return Err(format!(
                "irq samples {main} != records produced {}",
                t.produced
            ));
        }
        let missed: u64 = self.cpus.iter().map(|c| c.missed).sum();
        if missed != t.missed {
            return Err(format!("missed per CPU {missed} != total {}", t.missed));
        }
        for c in &self.cpus {
            for (name, s) in &c.stages {
                let n: u64 = s.histogram.buckets.iter().map(|b| b[2]).sum();
                if n != s.count {
                    return Err(format!(
                        "cpu {} {name}: histogram holds {n}, count is {}",
                        c.cpu, s.count
                    ));
                }
                if s.count > 0 && !(s.min_ns <= s.avg_ns && s.avg_ns <= s.max_ns) {
                    return Err(format!("cpu {} {name}: min/avg/max out of order", c.cpu));
                }
            }
        }
        Ok(())
    }
}

/// Serialises `info` for the report.
pub fn sysinfo_json(info: &SysInfo) -> SysInfoJson {
    serde_json::to_value(info).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A report as `measure` builds it, from synthetic data.
    pub(crate) fn sample() -> Report {
        let mut b = vec![0u64; rtcore::hist::BUCKETS];
        b[rtcore::hist::bucket_of(4_000)] = 900;
        b[rtcore::hist::bucket_of(31_000)] = 1;
        let mut pct = BTreeMap::new();
        pct.insert("p50".to_string(), 4_031);
        let stage = StageReport {
            count: 901,
            min_ns: 3_990,
            avg_ns: 4_030,
            max_ns: 31_000,
            max_seq: 77,
            max_time_ns: 123_456_789,
            percentiles_ns: pct,
            histogram: Histogram::from_buckets(&b),
        };
        let mut stages = BTreeMap::new();
        stages.insert("thread".to_string(), stage.clone());
        stages.insert("irq".to_string(), stage);
        Report {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "rtlat".into(),
                version: "0.1.0".into(),
                uapi_version: 1,
                module_srcversion: None,
                build: Some(Build::this()),
            },
            start_monotonic_ns: Some(50_000_000_000),
            command_line: vec!["rtlat".into(), "run".into()],
            start_time: 1.0,
            end_time: 2.0,
            system: sysinfo_json(&crate::sysinfo::collect()),
            settings: Settings {
                period_us: 1000.0,
                cpus: vec![0],
                stages: vec!["irq".into(), "thread".into()],
                priority: 95,
                thresholds_us: BTreeMap::new(),
                duration_s: Some(1.0),
                warm_up_s: 0.0,
                user_threads: false,
                dma_latency_us: None,
                tracing_off: false,
            },
            stop: Stop {
                reason: "threshold".into(),
                trip: Some(Trip {
                    cpu: 0,
                    stage: "thread".into(),
                    value_ns: 31_000,
                    seq: 77,
                }),
            },
            totals: Totals {
                produced: 901,
                delivered: 901,
                dropped: 0,
                missed: 3,
            },
            cpus: vec![CpuReport {
                cpu: 0,
                missed: 3,
                dropped: 0,
                stages,
            }],
            gates: vec![GateReport {
                expr: "thread.p99.99>20us".into(),
                kind: "latency".into(),
                limit: 20_000,
                value: Some(31_000),
                cpu: Some(0),
                passed: false,
                cpus: vec![crate::gate::GateValue {
                    cpu: 0,
                    value: Some(31_000),
                    failed: true,
                }],
            }],
            exit_code: Some(3),
            housekeeping: Some(Housekeeping {
                cpus: "1-3".into(),
                chosen: "the online CPUs not measured".into(),
                reader_ran_on: "2".into(),
                status_ran_on: "1,3".into(),
            }),
            raw: Some(RawReport {
                file: "run.csv".into(),
                format: "csv".into(),
                records: 901,
                error: None,
            }),
        }
    }

    #[test]
    fn report_validates_against_the_schema() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../schema/rtlat-run.schema.json")).unwrap();
        let v = serde_json::to_value(sample()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        // And a broken one does not.
        let mut bad = v.clone();
        bad["settings"]["priority"] = 0.into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["settings"]["surprise"] = 1.into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["gates"][0]["passed"] = "no".into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["exit_code"] = 7.into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["raw"]["format"] = "xml".into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["housekeeping"]["cpus"] = 1.into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["tool"]["build"]["profile"] = 1.into();
        assert!(!validator.is_valid(&bad));
        bad = v.clone();
        bad["system"]["kernel_config"]["options"]["CONFIG_HZ"] = 250.into();
        assert!(!validator.is_valid(&bad));
        // The reproduction metadata is there.
        for k in [
            "cpu_model",
            "cpu_count",
            "smt_control",
            "hypervisor",
            "virtualization",
            "rcu_nocbs",
            "irq_affinity",
            "idle_states",
            "sched_rt_runtime_us",
            "kernel_config",
        ] {
            assert!(v["system"].get(k).is_some(), "system.{k}");
        }
        // Members added later are allowed at the top level.
        let mut later = v.clone();
        later["surprise"] = 1.into();
        assert!(validator.is_valid(&later));
        // A version 1 report: without the members version 2 added.
        let mut v1 = v;
        v1["schema_version"] = 1.into();
        for k in [
            "gates",
            "exit_code",
            "raw",
            "housekeeping",
            "start_monotonic_ns",
        ] {
            v1.as_object_mut().unwrap().remove(k);
        }
        v1["tool"].as_object_mut().unwrap().remove("build");
        for k in ["cpu_model", "kernel_config", "irq_affinity", "idle_states"] {
            v1["system"].as_object_mut().unwrap().remove(k);
        }
        assert!(
            validator.is_valid(&v1),
            "{:#?}",
            validator
                .iter_errors(&v1)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
        let r: Report = serde_json::from_value(v1).unwrap();
        assert!(r.gates.is_empty() && r.exit_code.is_none());
    }

    #[test]
    fn typed_round_trip() {
        let s = serde_json::to_string(&sample()).unwrap();
        let r: Report = serde_json::from_str(&s).unwrap();
        assert_eq!(r.cpus[0].stages["thread"].histogram.buckets.len(), 2);
        assert_eq!(r.stop.trip.as_ref().unwrap().value_ns, 31_000);
        assert_eq!(r.consistency(), Ok(()));
        let mut bad = r.clone();
        bad.totals.dropped = 5;
        assert!(bad.consistency().is_err());
        assert!(serde_json::from_str::<Report>(&s.replace("\"totals\"", "\"totalz\"")).is_err());
    }
}
