// SPDX-License-Identifier: GPL-2.0

//! `rtlat check-json` of a benchmark's `bench.json` (written by `rtlat
//! bench-report`; schema `rtlat-bench-3`,
//! `tools/rtlat/schema/rtlat-bench.schema.json`): the report is complete,
//! as `make check`'s smoke run requires. Every load and stage has its
//! agreement row with samples on both sides; every tool of the overhead
//! rounds is there, each measuring one with its activation rate and cost,
//! rtlat's other sessions and timerlat's auto-analysis with their cost
//! relative to timerlat's, each analysis with its cost relative to the
//! same tool's without it, the `--blame` sessions with the share of their
//! activations they explained (some, where every one is to be); the
//! streaming run delivered records; full rings were drained. No bound on any number: TCG's compare
//! tools, they are not RT performance.

use std::{fs, path::Path, process::ExitCode};

use serde_json::Value;

/// The schema a benchmark report names.
pub const SCHEMA: &str = "rtlat-bench-3";

/// The loads and stages of the agreement rounds, as `bench::report`
/// writes them.
const LOADS: [&str; 2] = ["idle", "hackbench"];
const STAGES: [&str; 3] = ["irq", "thread", "user"];

/// The overhead rounds' tools, in the order they run (`bench::report`
/// writes a row of each).
pub const OVERHEAD_TOOLS: [&str; 9] = [
    "none",
    "floor",
    "rtlat",
    "rtlat-blame",
    "rtlat-blame-late",
    "rtlat-irq",
    "rtlat-monitor",
    "timerlat",
    "timerlat-aa",
];

/// The tool without its analysis, of a tool that analyses.
pub fn without_analysis(tool: &str) -> Option<&'static str> {
    match tool {
        "rtlat-blame" | "rtlat-blame-late" => Some("rtlat"),
        "timerlat-aa" => Some("timerlat"),
        _ => None,
    }
}

/// The tools every set has; the rate every tool keeps up also has
/// [`ANALYSES`]. `rtlat-blame-late` (a full run's) may be in either.
const BASE: [&str; 6] = [
    "none",
    "floor",
    "rtlat",
    "rtlat-irq",
    "rtlat-monitor",
    "timerlat",
];
const ANALYSES: [&str; 2] = ["rtlat-blame", "timerlat-aa"];

/// `rtlat check-json FILE` when FILE is a benchmark report (its `schema`
/// says `rtlat-bench…`): the exit status, 0 if it is complete. `None` for
/// anything else, which the run report's check judges.
pub fn check_json(file: &Path) -> Option<ExitCode> {
    let v: Value = serde_json::from_str(&fs::read_to_string(file).ok()?).ok()?;
    let schema = v.get("schema")?.as_str()?;
    if !schema.starts_with("rtlat-bench") {
        return None;
    }
    let verdict = if schema == SCHEMA {
        complete(&v)
    } else {
        Err(format!("schema {schema} is not {SCHEMA}"))
    };
    Some(match verdict {
        Ok(what) => {
            println!(
                "{}: valid {SCHEMA} report, complete: {what}",
                file.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rtlat: {}: {e}", file.display());
            ExitCode::from(1)
        }
    })
}

/// Whether the benchmark report `b` is complete; what it holds, or what it
/// lacks.
pub fn complete(b: &Value) -> Result<String, String> {
    let str_of = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let rows = b["agreement"].as_array().ok_or("no agreement rows")?;
    let mut got: Vec<(String, String)> = rows
        .iter()
        .map(|a| (str_of(&a["load"]), str_of(&a["stage"])))
        .collect();
    got.sort();
    let mut want: Vec<(String, String)> = LOADS
        .iter()
        .flat_map(|l| STAGES.iter().map(|s| (l.to_string(), s.to_string())))
        .collect();
    want.sort();
    if got != want {
        return Err(format!(
            "agreement rows (load, stage) {got:?}, not {want:?}"
        ));
    }
    for a in rows {
        for side in ["rtlat", "peer_summary"] {
            if a[side]["count"].as_u64().unwrap_or(0) == 0 {
                return Err(format!(
                    "agreement {} {}: no samples in {side}",
                    str_of(&a["load"]),
                    str_of(&a["stage"])
                ));
            }
        }
    }

    let mut ntools = 0;
    for set in ["overhead", "overhead_sustained"] {
        let tools = b[set]["tools"]
            .as_array()
            .ok_or(format!("no {set} rounds"))?;
        let names: Vec<String> = tools.iter().map(|c| str_of(&c["tool"])).collect();
        let mut want: Vec<&str> = BASE.to_vec();
        if set == "overhead_sustained" {
            want.extend(ANALYSES);
        }
        let lacks: Vec<&str> = want
            .into_iter()
            .filter(|t| !names.iter().any(|n| n == t))
            .collect();
        let unknown: Vec<&String> = names
            .iter()
            .filter(|n| !OVERHEAD_TOOLS.contains(&n.as_str()))
            .collect();
        if !lacks.is_empty() || !unknown.is_empty() {
            return Err(format!(
                "{set} tools {names:?}: lacking {lacks:?}, unknown {unknown:?}"
            ));
        }
        for c in tools.iter().filter(|c| c["tool"] != "none") {
            let tool = str_of(&c["tool"]);
            if c["activations_per_s_per_cpu"].as_f64().unwrap_or(0.0) <= 0.0 {
                return Err(format!("{set} {tool}: no activations"));
            }
            if !c["cost_per_activation_us"].is_number() {
                return Err(format!("{set} {tool}: no cost per activation"));
            }
            if (tool.starts_with("rtlat-") || tool == "timerlat-aa")
                && !c["cost_ratio_timerlat"].is_number()
            {
                return Err(format!("{set} {tool}: no cost relative to timerlat's"));
            }
            if without_analysis(&tool).is_some()
                && !c["above_floor_ratio_without_analysis"].is_number()
            {
                return Err(format!(
                    "{set} {tool}: no cost relative to the same tool's without the analysis"
                ));
            }
            let share = c["explained_share"].as_f64();
            if tool.starts_with("rtlat-blame") && share.is_none() {
                return Err(format!("{set} {tool}: no share of activations explained"));
            }
            if tool == "rtlat-blame" && share.unwrap_or(0.0) <= 0.0 {
                return Err(format!(
                    "{set} {tool}: explained none of its activations, asked to explain every one"
                ));
            }
        }
        ntools = ntools.max(tools.len());
    }

    let delivered = b["streaming"]["delivered"].as_u64().unwrap_or(0);
    if delivered == 0 {
        return Err("streaming: no records delivered".into());
    }
    let drained = b["drain"]["records"].as_u64().unwrap_or(0);
    if drained == 0 || !b["drain"]["ratio_zero"].is_number() {
        return Err("drain: no records drained, or no ratio to /dev/zero".into());
    }
    // A scale row for each of 1, 2, 4, 8 CPUs the guest has, each timed and
    // costed.
    let ncpu: u64 = b["settings"]["cpus"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .filter(|&n| n > 0)
        .ok_or("settings: no number of CPUs (cpus)")?;
    let rows_scale = b["scale"].as_array().ok_or("no scale rows")?;
    let got: Vec<u64> = rows_scale
        .iter()
        .filter_map(|r| r["cpus"].as_u64())
        .collect();
    let want: Vec<u64> = [1, 2, 4, 8].into_iter().filter(|&n| n <= ncpu).collect();
    if got != want {
        return Err(format!(
            "scale rows for {got:?} CPUs, not {want:?} (the guest has {ncpu})"
        ));
    }
    for r in rows_scale {
        if !r["start_us"].is_number() || !r["cost_per_activation_us"].is_number() {
            return Err(format!(
                "scale {} CPUs: no START time or no cost",
                r["cpus"]
            ));
        }
    }
    Ok(format!(
        "{} agreement rows, {ntools} tools' overhead at the rate every tool keeps up (some at 10 kHz too), {delivered} records streamed, {drained} drained, sessions on {want:?} CPUs timed",
        rows.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A benchmark report as `rtlat bench-report` writes it, from a
    /// results log with every round (1 CPU, one round).
    fn bench_json() -> Value {
        let run = crate::report::tests::sample();
        let mut user = run.clone();
        let thread = user.cpus[0].stages["thread"].clone();
        user.cpus[0].stages.clear();
        user.cpus[0].stages.insert("user".into(), thread);
        let (run, user) = (
            serde_json::to_string(&run).unwrap(),
            serde_json::to_string(&user).unwrap(),
        );
        let mut log = "RTRS-BENCH-BEGIN seconds=2 rounds=1 period_us=1000 cpus=1\n".to_string();
        for load in LOADS {
            log += &format!(
                "RTRS-FILE agree-{load}-1-rtlat.json\n{run}\nRTRS-FILE-END\n\
                 RTRS-FILE agree-{load}-1-timerlat.txt\n0 irq 4000\n0 thread 6000\nRTRS-FILE-END\n\
                 RTRS-FILE agree-{load}-1-rtlatuser.json\n{user}\nRTRS-FILE-END\n\
                 RTRS-FILE agree-{load}-1-cyclictest.txt\n000007 000010\n# Max Latencies: 00009\nRTRS-FILE-END\n"
            );
        }
        for (set, p) in [("overhead", 100_000), ("sustained", 1_000_000)] {
            let act = format!("activations 1900 ns 2000000000 cpus 1 period_ns {p}");
            // The analyses at the sustained rate only, as the guest runs
            // them (the late one as a full run does).
            let tools = if set == "sustained" {
                &OVERHEAD_TOOLS[1..]
            } else {
                &BASE[1..]
            };
            for tool in tools {
                log += &format!("RTRS-FILE {set}-1-{tool}.txt\n{act}\nRTRS-FILE-END\n");
            }
            if set == "sustained" {
                for tool in ["rtlat-blame", "rtlat-blame-late"] {
                    log += &format!("RTRS-FILE {set}-1-{tool}.json\n{run}\nRTRS-FILE-END\n");
                }
            }
            log += &format!("RTRS-FILE {set}.txt\nnone 100\n");
            for (tool, thr) in tools.iter().zip([90, 70, 66, 68, 80, 85, 60, 55]) {
                log += &format!("{tool} {thr}\n");
            }
            log += "RTRS-FILE-END\n";
        }
        log += "RTRS-FILE scale-1-startstop.txt\ncpus 1 rounds 10 config_ns 300000 start_ns 2000000 stop_ns 3000000\nRTRS-FILE-END\n\
                RTRS-FILE scale-1-rtlat.txt\nactivations 1900 ns 2000000000 cpus 1 period_ns 1000000\nRTRS-FILE-END\n\
                RTRS-FILE scale.txt\nnone-1 100\nrtlat-1 90\nRTRS-FILE-END\n";
        log += &format!(
            "RTRS-FILE stream.json\n{run}\nRTRS-FILE-END\n\
             RTRS-FILE drain.txt\nrecords 1000 capacity 1024 bytes 64000 read_size 1048576 fill_ns 1000000000 drain_ns 2000000 zero_ns 1000000\nRTRS-FILE-END\n\
             RTRS-BENCH-END\n"
        );
        let dir = std::env::temp_dir().join(format!("rtlat-bench-check-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("log"), log).unwrap();
        crate::bench::report(&dir.join("log"), &dir, "k", "x").unwrap();
        let b = serde_json::from_str(&fs::read_to_string(dir.join("bench.json")).unwrap()).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        b
    }

    #[test]
    fn complete_report_validates_against_the_schema() {
        let schema: Value =
            serde_json::from_str(include_str!("../schema/rtlat-bench.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let b = bench_json();
        let errors: Vec<String> = validator
            .iter_errors(&b)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        assert_eq!(b["schema"], SCHEMA);
        assert!(complete(&b).is_ok(), "{:?}", complete(&b));
        let mut bad = b.clone();
        bad["surprise"] = 1.into();
        assert!(!validator.is_valid(&bad));
        bad = b;
        bad["agreement"][0]["stage"] = "response".into();
        assert!(!validator.is_valid(&bad));
    }

    #[test]
    fn incomplete_reports_are_refused() {
        let b = bench_json();
        type Break = fn(&mut Value);
        let broken: [(&str, Break); 19] = [
            ("agreement rows", |b| {
                b["agreement"].as_array_mut().unwrap().pop();
            }),
            ("no samples in peer_summary", |b| {
                b["agreement"][2]["peer_summary"]["count"] = 0.into()
            }),
            ("no overhead rounds", |b| b["overhead"] = Value::Null),
            ("no overhead_sustained rounds", |b| {
                b["overhead_sustained"] = Value::Null
            }),
            ("overhead tools", |b| {
                b["overhead"]["tools"].as_array_mut().unwrap().pop();
            }),
            ("lacking [\"timerlat-aa\"]", |b| {
                b["overhead_sustained"]["tools"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|c| c["tool"] != "timerlat-aa");
            }),
            ("unknown [\"rtlat-blame-100\"]", |b| {
                b["overhead"]["tools"][2]["tool"] = "rtlat-blame-100".into();
            }),
            ("no activations", |b| {
                b["overhead"]["tools"][1]["activations_per_s_per_cpu"] = Value::Null
            }),
            ("relative to timerlat", |b| {
                let t = b["overhead"]["tools"].as_array_mut().unwrap();
                let irq = t.iter_mut().find(|c| c["tool"] == "rtlat-irq").unwrap();
                irq["cost_ratio_timerlat"] = Value::Null;
            }),
            ("timerlat-aa: no cost relative to timerlat's", |b| {
                let t = b["overhead_sustained"]["tools"].as_array_mut().unwrap();
                let aa = t.iter_mut().find(|c| c["tool"] == "timerlat-aa").unwrap();
                aa["cost_ratio_timerlat"] = Value::Null;
            }),
            ("relative to the same tool's without the analysis", |b| {
                let t = b["overhead_sustained"]["tools"].as_array_mut().unwrap();
                let aa = t.iter_mut().find(|c| c["tool"] == "timerlat-aa").unwrap();
                aa["above_floor_ratio_without_analysis"] = Value::Null;
            }),
            ("rtlat-blame-late: no share of activations explained", |b| {
                let t = b["overhead_sustained"]["tools"].as_array_mut().unwrap();
                let late = t
                    .iter_mut()
                    .find(|c| c["tool"] == "rtlat-blame-late")
                    .unwrap();
                late["explained_share"] = Value::Null;
            }),
            ("explained none of its activations", |b| {
                let t = b["overhead_sustained"]["tools"].as_array_mut().unwrap();
                let every = t.iter_mut().find(|c| c["tool"] == "rtlat-blame").unwrap();
                every["explained_share"] = 0.0.into();
            }),
            ("no records delivered", |b| {
                b["streaming"]["delivered"] = 0.into()
            }),
            ("no records drained", |b| b["drain"] = Value::Null),
            ("no ratio to /dev/zero", |b| {
                b["drain"]["ratio_zero"] = Value::Null
            }),
            ("no scale rows", |b| b["scale"] = Value::Null),
            ("scale rows for [] CPUs, not [1]", |b| {
                b["scale"].as_array_mut().unwrap().pop();
            }),
            ("no START time or no cost", |b| {
                b["scale"][0]["cost_per_activation_us"] = Value::Null
            }),
        ];
        for (why, f) in broken {
            let mut bad = b.clone();
            f(&mut bad);
            let e = complete(&bad).unwrap_err();
            assert!(e.contains(why), "{why}: {e}");
        }
    }
}
