// SPDX-License-Identifier: GPL-2.0

//! The JSON report (`--json`): schema-versioned, one object per run.
//! `tools/rtlat/schema/rtlat-run.schema.json` is its JSON Schema.

use std::collections::BTreeMap;

use rtcore::{hist, uapi::Stage};
use serde::{Deserialize, Serialize};

use crate::{raw::RawReport, sysinfo::SysInfo};

/// Name of the schema.
pub const SCHEMA: &str = "rtlat-run";
/// Version of the schema written; bumped when a member changes meaning or
/// goes away, not when one is added (readers ignore members they do not
/// know, at the top level and in `system`, `settings`, `stop` and
/// `totals`). Version 2 added `gates`,
/// `exit_code`, `start_monotonic_ns`, `raw`, `housekeeping` and
/// `system`'s reproduction metadata. Version 3 added `blame` to the CPUs'
/// objects (which older readers refuse to have unknown members) and
/// `settings.blame_us`; version 4, the blame's `next_worst`.
pub const SCHEMA_VERSION: u32 = 4;
/// The versions `check-json` and `compare` read.
pub const SCHEMA_VERSIONS_READ: [u32; 4] = [1, 2, 3, 4];

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
pub struct Settings {
    pub period_us: f64,
    pub cpus: Vec<u32>,
    pub stages: Vec<String>,
    pub priority: u32,
    pub thresholds_us: BTreeMap<String, f64>,
    pub duration_s: Option<f64>,
    pub warm_up_s: f64,
    pub user_threads: bool,
    /// The user stage's deadline (`run --attach` to a session that has
    /// one, the client library's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_us: Option<f64>,
    pub dma_latency_us: Option<i32>,
    pub tracing_off: bool,
    /// `--blame`: the thread latency from which activations are explained
    /// (v3); absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blame_us: Option<u32>,
    /// `--trace`: the file a threshold trip's trace was to go to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// Why a session ended: the report's `stop.reason`, one of the schema's
/// names.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StopCause {
    /// The duration asked for passed.
    Duration,
    /// A signal to stop: SIGINT, SIGTERM or SIGHUP
    /// ([`crate::signals::interrupted`]).
    Interrupted,
    /// A threshold was exceeded, and the device stopped the session.
    Threshold,
    /// Cut short: the device stopped the session (unbound, or reconfigured
    /// by another owner), or a measuring thread failed.
    Error,
    /// Attached (`run --attach`): the owner stopped its session, or closed
    /// or reconfigured it.
    Ended,
    /// Every user thread of a mode with a user sink ended: it measured the
    /// count its sink asked, or it failed and says why.
    Count,
}

/// Why the run ended.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Stop {
    pub reason: StopCause,
    pub trip: Option<Trip>,
    /// The session went on after the tool left (`run --attach`): its counts
    /// are a running session's, read one after the other, and records were
    /// still queued, so they need not add up.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub went_on: bool,
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

#[cfg(test)]
impl Stop {
    /// Stopped by a threshold trip of the user stage on CPU 1, `value_ns`
    /// late (the front ends' verdict tests).
    pub fn tripped(&mut self, value_ns: u64) {
        self.trip = Some(Trip {
            cpu: 1,
            stage: "user".into(),
            value_ns,
            seq: 9,
        });
        self.reason = StopCause::Threshold;
    }
}

/// Totals over all CPUs.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct Totals {
    pub produced: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub missed: u64,
    /// Records flagged as deadline misses (a session with a deadline).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deadline_misses: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One CPU.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CpuReport {
    pub cpu: u32,
    pub missed: u64,
    pub dropped: u64,
    pub stages: BTreeMap<String, StageReport>,
    /// `--blame`: the CPU's late activations explained (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blame: Option<crate::blame::BlameReport>,
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

impl Histogram {
    /// The dense buckets of `rtcore::hist` these non-empty ones stand for,
    /// if the layout is rtcore's and every bucket is one of its buckets
    /// (bounds as [`Histogram::from_buckets`] writes them), non-empty, in
    /// order, and the counts add up within u64.
    pub fn to_buckets(&self) -> Result<Vec<u64>, String> {
        if self.layout != "log-linear"
            || self.sub_bits != hist::SUB_BITS
            || self.octaves != hist::OCTAVES
        {
            return Err(format!(
                "histogram layout {} sub_bits {} octaves {} is not log-linear {} {}",
                self.layout,
                self.sub_bits,
                self.octaves,
                hist::SUB_BITS,
                hist::OCTAVES
            ));
        }
        let mut dense = vec![0u64; hist::BUCKETS];
        let mut total = 0u64;
        let mut next = 0;
        for &[low, high, n] in &self.buckets {
            let i = hist::bucket_of(low);
            if i < next
                || hist::bucket_low(i) != low
                || hist::bucket_high(i).min(u64::MAX / 2) != high
                || n == 0
            {
                return Err(format!(
                    "histogram bucket [{low}, {high}, {n}] is not a non-empty bucket of the layout, in order"
                ));
            }
            total = total
                .checked_add(n)
                .ok_or("histogram counts overflow".to_string())?;
            dense[i] = n;
            next = i + 1;
        }
        Ok(dense)
    }
}

/// The stage named `name`, if it is one.
fn stage_named(name: &str) -> Option<Stage> {
    [Stage::Irq, Stage::Thread, Stage::User, Stage::Response]
        .into_iter()
        .find(|s| s.name() == name)
}

impl StageReport {
    /// Checks the histogram and that the summary agrees with it: the count,
    /// min and max in its first and last buckets, the mean between them,
    /// and each percentile the one `rtcore::hist::percentile` gives.
    fn consistency(&self) -> Result<(), String> {
        let b = self.histogram.to_buckets()?;
        let n: u128 = b.iter().map(|&x| u128::from(x)).sum();
        if n != u128::from(self.count) {
            return Err(format!("histogram holds {n}, count is {}", self.count));
        }
        if self.count == 0 {
            if !self.percentiles_ns.is_empty() {
                return Err("percentiles without samples".into());
            }
            return Ok(());
        }
        let first = b.iter().position(|&x| x != 0).unwrap_or(0);
        let last = b.iter().rposition(|&x| x != 0).unwrap_or(0);
        if hist::bucket_of(self.min_ns) != first || hist::bucket_of(self.max_ns) != last {
            return Err(format!(
                "min {} / max {} are not in the histogram's first / last bucket",
                self.min_ns, self.max_ns
            ));
        }
        if !(self.min_ns <= self.avg_ns && self.avg_ns <= self.max_ns) {
            return Err("min/avg/max out of order".into());
        }
        for (name, &v) in &self.percentiles_ns {
            let k = hist::PERCENTILE_NAMES
                .iter()
                .position(|p| p == name)
                .ok_or_else(|| format!("unknown percentile '{name}'"))?;
            let want = hist::percentile(&b, hist::PERCENTILES_PPM[k], self.max_ns);
            if want != Some(v) {
                return Err(format!(
                    "{name} {v} is not the histogram's ({})",
                    want.map_or("none".into(), |w| w.to_string())
                ));
            }
        }
        Ok(())
    }
}

impl Report {
    /// Checks that the numbers agree with each other: what the module
    /// counted per CPU and in total, and each stage's histogram and summary
    /// (whatever the numbers, never overflowing).
    pub fn consistency(&self) -> Result<(), String> {
        let t = &self.totals;
        let accounted = u128::from(t.delivered) + u128::from(t.dropped);
        if self.stop.went_on {
            // Records were still queued, and coming.
            if accounted > u128::from(t.produced) {
                return Err(format!(
                    "delivered {} + dropped {} > produced {}",
                    t.delivered, t.dropped, t.produced
                ));
            }
        } else if u128::from(t.produced) != accounted {
            return Err(format!(
                "produced {} != delivered {} + dropped {}",
                t.produced, t.delivered, t.dropped
            ));
        }
        let main: u128 = self
            .cpus
            .iter()
            .filter_map(|c| c.stages.get("irq"))
            .map(|s| u128::from(s.count))
            .sum();
        // Every record has its irq stage, whatever else was measured.
        if main != u128::from(t.produced) && !self.stop.went_on {
            return Err(format!(
                "irq samples {main} != records produced {}",
                t.produced
            ));
        }
        let missed: u128 = self.cpus.iter().map(|c| u128::from(c.missed)).sum();
        if missed != u128::from(t.missed) {
            return Err(format!("missed per CPU {missed} != total {}", t.missed));
        }
        if let Some(trip) = &self.stop.trip {
            if trip.stage != "unknown" && stage_named(&trip.stage).is_none() {
                return Err(format!("the trip's stage '{}' is not a stage", trip.stage));
            }
        }
        for name in &self.settings.stages {
            if stage_named(name).is_none() {
                return Err(format!("settings: '{name}' is not a stage"));
            }
        }
        for c in &self.cpus {
            for (name, s) in &c.stages {
                if stage_named(name).is_none() {
                    return Err(format!("cpu {}: '{name}' is not a stage", c.cpu));
                }
                s.consistency()
                    .map_err(|e| format!("cpu {} {name}: {e}", c.cpu))?;
            }
        }
        Ok(())
    }
}

/// Serialises `info` for the report.
pub fn sysinfo_json(info: &SysInfo) -> SysInfoJson {
    serde_json::to_value(info).unwrap_or(serde_json::Value::Null)
}

/// One CPU's value of a gate.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GateValue {
    pub cpu: u32,
    /// The statistic (ns), or the count; `null` without samples.
    pub value: Option<u64>,
    /// The gate's condition holds here (or there were no samples).
    pub failed: bool,
}

/// A gate and its result, as the JSON report records it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GateReport {
    /// The condition that fails the run: the `--fail-if` expression, or
    /// `missed>N` for `--max-missed N`, `dropped>N` for `--max-dropped N`.
    pub expr: String,
    /// `latency` (the limit and values in ns), `missed` or `dropped` (counts).
    pub kind: String,
    pub limit: u64,
    /// The value the verdict rests on: the worst CPU's statistic, or the
    /// count over all CPUs.
    pub value: Option<u64>,
    /// The CPU of `value` (latency gates).
    pub cpu: Option<u32>,
    pub passed: bool,
    /// Per CPU.
    pub cpus: Vec<GateValue>,
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
            min_ns: 4_000,
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
                deadline_us: None,
                dma_latency_us: None,
                tracing_off: false,
                blame_us: Some(5000),
                trace: None,
            },
            stop: Stop {
                reason: StopCause::Threshold,
                trip: Some(Trip {
                    cpu: 0,
                    stage: "thread".into(),
                    value_ns: 31_000,
                    seq: 77,
                }),
                went_on: false,
            },
            totals: Totals {
                produced: 901,
                delivered: 901,
                dropped: 0,
                missed: 3,
                deadline_misses: 0,
            },
            cpus: vec![CpuReport {
                cpu: 0,
                missed: 3,
                dropped: 0,
                stages,
                blame: Some(crate::blame::tests::sample()),
            }],
            gates: vec![GateReport {
                expr: "thread.p99.99>20us".into(),
                kind: "latency".into(),
                limit: 20_000,
                value: Some(31_000),
                cpu: Some(0),
                passed: false,
                cpus: vec![GateValue {
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
        bad["cpus"][0]["surprise"] = 1.into();
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
        // Members added later are allowed at the top level and in the
        // objects that grow, and read.
        let mut later = v.clone();
        later["surprise"] = 1.into();
        for k in ["system", "settings", "stop", "totals"] {
            later[k]["surprise"] = 1.into();
        }
        assert!(validator.is_valid(&later));
        assert!(serde_json::from_value::<Report>(later).is_ok());
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
    fn stop_causes_are_the_schemas_names() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../schema/rtlat-run.schema.json")).unwrap();
        let names = &schema["properties"]["stop"]["properties"]["reason"]["enum"];
        let all = [
            StopCause::Duration,
            StopCause::Interrupted,
            StopCause::Threshold,
            StopCause::Error,
            StopCause::Ended,
            StopCause::Count,
        ];
        let written: Vec<_> = all.iter().map(|c| serde_json::json!(c)).collect();
        assert_eq!(&serde_json::Value::from(written), names);
        for (c, name) in all.iter().zip(names.as_array().unwrap()) {
            let read: StopCause = serde_json::from_value(name.clone()).unwrap();
            assert_eq!(read, *c);
        }
        // A name outside the schema's is refused.
        assert!(serde_json::from_value::<StopCause>("stopped".into()).is_err());
    }

    /// The report of `sample` with `edit` applied to its JSON: what
    /// check-json says of it, or the serde error.
    fn check(edit: impl FnOnce(&mut serde_json::Value)) -> Result<(), String> {
        let mut v = serde_json::to_value(sample()).unwrap();
        edit(&mut v);
        let r: Report = serde_json::from_value(v).map_err(|e| e.to_string())?;
        r.consistency()
    }

    #[test]
    fn hostile_numbers_are_refused() {
        assert_eq!(check(|_| {}), Ok(()));
        let refused = |what: &str, edit: &dyn Fn(&mut serde_json::Value)| {
            let e = check(edit).expect_err(what);
            assert_eq!(e.lines().count(), 1, "{what}: {e}");
        };
        let irq = "/cpus/0/stages/irq";
        let at = |v: &mut serde_json::Value, path: &str, x: serde_json::Value| {
            *v.pointer_mut(path).unwrap() = x;
        };
        refused("buckets summing past u64", &|v| {
            at(
                v,
                &format!("{irq}/histogram/buckets"),
                serde_json::json!([[0, 0, u64::MAX], [1, 1, 902]]),
            );
        });
        refused("produced past u64", &|v| {
            at(v, "/totals/delivered", u64::MAX.into());
            at(v, "/totals/dropped", 2.into());
            at(v, "/totals/produced", 1.into());
        });
        refused("irq counts past u64", &|v| {
            let c = v.pointer_mut("/cpus/0").unwrap().clone();
            v["cpus"].as_array_mut().unwrap().push(c);
            at(v, "/cpus/1/stages/irq/count", u64::MAX.into());
        });
        refused("sub_bits 63", &|v| {
            at(v, &format!("{irq}/histogram/sub_bits"), 63.into())
        });
        refused("octaves 4e9", &|v| {
            at(
                v,
                &format!("{irq}/histogram/octaves"),
                4_000_000_000u64.into(),
            )
        });
        refused("layout", &|v| {
            at(v, &format!("{irq}/histogram/layout"), "linear".into())
        });
        refused("a stage named bogus", &|v| {
            let s = v.pointer(irq).unwrap().clone();
            v["cpus"][0]["stages"]["bogus"] = s;
        });
        refused("min=avg=max=u64::MAX with 4 us buckets", &|v| {
            for k in ["min_ns", "avg_ns", "max_ns"] {
                at(v, &format!("{irq}/{k}"), u64::MAX.into());
            }
        });
        refused("p50=u64::MAX", &|v| {
            at(v, &format!("{irq}/percentiles_ns/p50"), u64::MAX.into())
        });
        refused("an unknown percentile", &|v| {
            v["cpus"][0]["stages"]["irq"]["percentiles_ns"]["p42"] = 1.into();
        });
        refused("bucket bounds", &|v| {
            at(v, &format!("{irq}/histogram/buckets/0/1"), 4_100.into())
        });
        refused("buckets out of order", &|v| {
            let b = v.pointer_mut(&format!("{irq}/histogram/buckets")).unwrap();
            b.as_array_mut().unwrap().reverse();
        });
        refused("an empty bucket", &|v| {
            at(v, &format!("{irq}/histogram/buckets/0/2"), 0.into())
        });
        refused("max beyond the histogram", &|v| {
            at(v, &format!("{irq}/max_ns"), 40_000.into())
        });
        refused("a trip on a bogus stage", &|v| {
            at(v, "/stop/trip/stage", "bogus".into())
        });
    }

    #[test]
    fn no_number_makes_check_json_or_compare_panic() {
        // Every number of a valid report, one at a time, set to extremes.
        fn leaves(v: &serde_json::Value, path: String, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        leaves(x, format!("{path}/{k}"), out);
                    }
                }
                serde_json::Value::Array(a) => {
                    for (i, x) in a.iter().enumerate() {
                        leaves(x, format!("{path}/{i}"), out);
                    }
                }
                serde_json::Value::Number(_) => out.push(path),
                _ => {}
            }
        }
        let good = sample();
        let v = serde_json::to_value(&good).unwrap();
        let mut paths = Vec::new();
        leaves(&v, String::new(), &mut paths);
        assert!(paths.len() > 40, "{}", paths.len());
        let extremes: [serde_json::Value; 9] = [
            0.into(),
            1.into(),
            (u64::MAX).into(),
            (u64::MAX - 1).into(),
            (1u64 << 63).into(),
            (u64::from(u32::MAX) + 1).into(),
            (-1).into(),
            1e300.into(),
            4_000_000_000u64.into(),
        ];
        let mut refused = 0;
        for p in &paths {
            for x in &extremes {
                let mut bad = v.clone();
                *bad.pointer_mut(p).unwrap() = x.clone();
                let Ok(r) = serde_json::from_value::<Report>(bad) else {
                    continue;
                };
                let run = std::panic::catch_unwind(|| {
                    let c = r.consistency();
                    if c.is_ok() {
                        let _ = crate::compare::compare(&good, &r, "a", "b", false);
                    }
                    c
                });
                match run {
                    Ok(Err(e)) => {
                        refused += 1;
                        assert_eq!(e.lines().count(), 1, "{p} = {x}: {e}");
                    }
                    Ok(Ok(())) => {}
                    Err(_) => panic!("{p} = {x}: panicked"),
                }
            }
        }
        assert!(refused > 50, "{refused}");
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
        // An attached run that left the session running: records queued
        // still, and counted since, but never more delivered than produced.
        let mut live = r.clone();
        live.stop.went_on = true;
        live.totals.produced += 40;
        assert_eq!(live.consistency(), Ok(()));
        live.totals.delivered += 41;
        assert!(live.consistency().is_err());
        live.stop.went_on = false;
        live.totals.delivered -= 41;
        assert!(live.consistency().is_err());
        assert!(serde_json::from_str::<Report>(&s.replace("\"totals\"", "\"totalz\"")).is_err());
    }
}
