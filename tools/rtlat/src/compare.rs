// SPDX-License-Identifier: GPL-2.0

//! `rtlat compare A.json B.json`: two runs side by side: per CPU and stage
//! the count, min, avg, max and percentiles of each and their difference,
//! the totals, then every metadata field (tool, system, settings, command
//! line) whose value differs.

use std::{collections::BTreeMap, fmt::Write, fs, path::Path, process::ExitCode};

use rtcore::hist;
use serde_json::Value;

use crate::report::{self, Report};

fn load(file: &Path) -> Result<Report, String> {
    let s = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let r: Report = serde_json::from_str(&s).map_err(|e| format!("{}: {e}", file.display()))?;
    if r.schema != report::SCHEMA || !report::SCHEMA_VERSIONS_READ.contains(&r.schema_version) {
        return Err(format!(
            "{}: schema {} v{} is not {} v{:?}",
            file.display(),
            r.schema,
            r.schema_version,
            report::SCHEMA,
            report::SCHEMA_VERSIONS_READ
        ));
    }
    // Numbers that do not agree are not compared.
    r.consistency()
        .map_err(|e| format!("{}: inconsistent: {e}", file.display()))?;
    Ok(r)
}

/// `rtlat compare`: prints the comparison; exit status 0, or 1 if a file
/// cannot be read as a report.
pub fn run(a: &Path, b: &Path, ns: bool) -> ExitCode {
    match load(a).and_then(|ra| Ok((ra, load(b)?))) {
        Ok((ra, rb)) => {
            print!(
                "{}",
                compare(
                    &ra,
                    &rb,
                    &a.display().to_string(),
                    &b.display().to_string(),
                    ns
                )
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rtlat: {e}");
            ExitCode::from(crate::exit::ERROR)
        }
    }
}

/// Every leaf of `v` under `prefix`, as dotted paths and JSON text.
fn flatten(v: &Value, prefix: &str, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(x, &format!("{prefix}.{k}"), out);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, x) in a.iter().enumerate() {
                flatten(x, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string(), v.to_string());
        }
    }
}

/// The metadata of a report, flattened.
fn metadata(r: &Report) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let v = serde_json::to_value(r).unwrap_or(Value::Null);
    for k in ["tool", "system", "settings", "command_line"] {
        if let Some(x) = v.get(k) {
            flatten(x, k, &mut m);
        }
    }
    m
}

/// The statistics of one CPU and stage: name and value (ns, or a count).
fn stats(s: &report::StageReport) -> Vec<(String, Option<u64>)> {
    let mut v = vec![
        ("count".to_string(), Some(s.count)),
        ("min".into(), (s.count > 0).then_some(s.min_ns)),
        ("avg".into(), (s.count > 0).then_some(s.avg_ns)),
        ("max".into(), (s.count > 0).then_some(s.max_ns)),
    ];
    for name in hist::PERCENTILE_NAMES {
        v.push((name.to_string(), s.percentiles_ns.get(name).copied()));
    }
    v
}

/// True for the rows that are counts, not latencies.
fn is_count(name: &str) -> bool {
    matches!(name, "count" | "produced" | "dropped" | "missed")
}

/// The comparison of `a` (named `na`) and `b` (`nb`), µs or `ns`.
pub fn compare(a: &Report, b: &Report, na: &str, nb: &str, ns: bool) -> String {
    let mut s = String::new();
    let unit = if ns { "ns" } else { "us" };
    let show = |name: &str, v: Option<u64>| match v {
        None => "-".to_string(),
        Some(x) if is_count(name) || ns => x.to_string(),
        Some(x) => format!("{:.3}", x as f64 / 1000.0),
    };
    let _ = writeln!(s, "# rtlat compare: A {na}, B {nb}; latencies in {unit}");
    let _ = writeln!(
        s,
        "{:>4} {:<8} {:<9} {:>14} {:>14} {:>14} {:>9}",
        "CPU", "stage", "stat", "A", "B", "B-A", "B/A-1"
    );
    let mut keys: Vec<(u32, String)> = Vec::new();
    for r in [a, b] {
        for c in &r.cpus {
            for st in c.stages.keys() {
                if !keys.contains(&(c.cpu, st.clone())) {
                    keys.push((c.cpu, st.clone()));
                }
            }
        }
    }
    keys.sort();
    let find = |r: &Report, cpu: u32, st: &str| {
        r.cpus
            .iter()
            .find(|c| c.cpu == cpu)
            .and_then(|c| c.stages.get(st))
            .map(stats)
    };
    let row = |s: &mut String, cpu: &str, st: &str, name: &str, x: Option<u64>, y: Option<u64>| {
        let (diff, rel) = match (x, y) {
            (Some(x), Some(y)) => {
                let d = y as i128 - x as i128;
                let d_text = if is_count(name) || ns {
                    format!("{d:+}")
                } else {
                    format!("{:+.3}", d as f64 / 1000.0)
                };
                let rel = if x > 0 {
                    format!("{:+.1}%", d as f64 * 100.0 / x as f64)
                } else {
                    "-".into()
                };
                (d_text, rel)
            }
            _ => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "{cpu:>4} {st:<8} {name:<9} {:>14} {:>14} {diff:>14} {rel:>9}",
            show(name, x),
            show(name, y)
        );
    };
    for (cpu, st) in &keys {
        let (sa, sb) = (find(a, *cpu, st), find(b, *cpu, st));
        let names = sa.as_ref().or(sb.as_ref()).cloned().unwrap_or_default();
        for (i, (name, _)) in names.iter().enumerate() {
            let x = sa.as_ref().and_then(|v| v[i].1);
            let y = sb.as_ref().and_then(|v| v[i].1);
            row(&mut s, &cpu.to_string(), st, name, x, y);
        }
    }
    let (ta, tb) = (&a.totals, &b.totals);
    for (name, x, y) in [
        ("produced", ta.produced, tb.produced),
        ("dropped", ta.dropped, tb.dropped),
        ("missed", ta.missed, tb.missed),
    ] {
        row(&mut s, "all", "totals", name, Some(x), Some(y));
    }
    let (ma, mb) = (metadata(a), metadata(b));
    let mut differ = Vec::new();
    for k in ma.keys().chain(mb.keys().filter(|k| !ma.contains_key(*k))) {
        let (x, y) = (ma.get(k), mb.get(k));
        if x != y {
            let v = |o: Option<&String>| o.cloned().unwrap_or_else(|| "(absent)".into());
            differ.push(format!("{k}: {} -> {}", v(x), v(y)));
        }
    }
    let _ = writeln!(s, "# metadata that differs (A -> B): {}", differ.len());
    for d in differ {
        let _ = writeln!(s, "{d}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn differences_per_cpu_stage_and_metadata() {
        let a = sample();
        let mut b = sample();
        let th = b.cpus[0].stages.get_mut("thread").unwrap();
        th.count = 1_802;
        th.max_ns = 41_000;
        th.percentiles_ns.insert("p50".into(), 4_500);
        b.settings.period_us = 200.0;
        b.system["release"] = "7.3.0-rt1".into();
        b.system["new_field"] = 1.into();
        b.totals.missed = 0;
        let text = compare(&a, &b, "a.json", "b.json", false);
        let line = |cpu: &str, st: &str, name: &str| {
            text.lines()
                .find(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    w.len() > 3 && w[0] == cpu && w[1] == st && w[2] == name
                })
                .map(|l| l.split_whitespace().skip(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_else(|| panic!("no {cpu} {st} {name} in\n{text}"))
        };
        assert_eq!(line("0", "thread", "count"), "901 1802 +901 +100.0%");
        assert_eq!(line("0", "thread", "max"), "31.000 41.000 +10.000 +32.3%");
        assert_eq!(line("0", "thread", "p50"), "4.031 4.500 +0.469 +11.6%");
        assert_eq!(line("0", "irq", "max"), "31.000 31.000 +0.000 +0.0%");
        assert_eq!(line("0", "thread", "p99"), "- - - -");
        assert_eq!(line("all", "totals", "missed"), "3 0 -3 -100.0%");
        let meta: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("# metadata"))
            .collect();
        assert_eq!(
            meta,
            [
                "# metadata that differs (A -> B): 3",
                "settings.period_us: 1000.0 -> 200.0",
                &format!("system.release: {} -> \"7.3.0-rt1\"", a.system["release"]),
                "system.new_field: (absent) -> 1",
            ]
        );
        // The same run: nothing differs.
        let same = compare(&a, &a, "a", "a", true);
        assert!(
            same.ends_with("# metadata that differs (A -> B): 0\n"),
            "{same}"
        );
        assert!(
            same.contains(
                "   0 thread   max                31000          31000             +0     +0.0%"
            ),
            "{same}"
        );
    }
}
