// SPDX-License-Identifier: GPL-2.0

//! bench.md: the benchmark's tables, agreement, overhead, streaming and the
//! drain rate.

use std::fmt::Write;

use crate::bench::report::{Bench, Overhead};

/// The tables of `bench`, under a line with its settings (`begin`, as the
/// log gives them).
pub fn markdown(bench: &Bench, begin: &str) -> String {
    let (kernel, arch) = (&bench.kernel, &bench.arch);
    let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
    let rt = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}"));
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Kernel {kernel} ({arch}, QEMU TCG, {} CPUs), {}",
        bench.settings.get("cpus").map_or("?", |s| s),
        begin
    );
    let _ = writeln!(md, "\n{}\n", bench.note);
    let _ = writeln!(md, "| load | stage | tool | count | median µs | p99 µs | p99.99 µs | max µs | rtlat/peer median | rtlat/peer p99 |");
    let _ = writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for a in &bench.agreement {
        for (tool, s, r) in [
            ("rtlat", &a.rtlat, true),
            (a.peer.as_str(), &a.peer_summary, false),
        ] {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                a.load,
                a.stage,
                tool,
                s.count,
                us(s.median_ns),
                us(s.p99_ns),
                us(s.p9999_ns),
                us(s.max_ns),
                if r { rt(a.ratio_median) } else { String::new() },
                if r { rt(a.ratio_p99) } else { String::new() }
            );
        }
    }
    for (o, what) in [
        (&bench.overhead, "more than TCG keeps up"),
        (
            &bench.overhead_sustained,
            "a rate every tool should keep up: below 95 % is marked",
        ),
    ] {
        if let Some(o) = o {
            overhead_table(
                &mut md,
                o,
                what,
                bench.settings.get("blame_us").map_or("?", |s| s),
            );
        }
    }
    if let Some(s) = &bench.streaming {
        let _ = writeln!(
            md,
            "\nStreaming at {} µs on {} CPUs for {:.1} s: {:.0} records/s delivered by read(), {} produced, {} dropped.",
            s.period_us, s.cpus, s.seconds, s.records_per_s, s.produced, s.dropped
        );
    }
    if !bench.scale.is_empty() {
        let _ = writeln!(
            md,
            "\n| session on N CPUs of {} | CONFIG | START | STOP | job loss (1 kHz) | activations/s per CPU | job time per activation |",
            bench.settings.get("cpus").map_or("?", |s| s)
        );
        let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|");
        let f1 = |v: Option<f64>, unit: &str| v.map_or(String::new(), |v| format!("{v:.1}{unit}"));
        for s in &bench.scale {
            let _ = writeln!(
                md,
                "| {} | {:.0} µs | {:.0} µs | {:.0} µs | {} | {} | {} |",
                s.cpus,
                s.config_us,
                s.start_us,
                s.stop_us,
                f1(s.loss_pct, " %"),
                s.activations_per_s_per_cpu
                    .map_or(String::new(), |r| format!("{r:.0}")),
                f1(s.cost_per_activation_us, " µs"),
            );
        }
    }
    if let Some(d) = &bench.drain {
        let _ = writeln!(
            md,
            "\nDraining full rings: {} records of {} ({:.1} MiB; filled in {:.1} s) read() in {:.3} s with {} KiB reads: {:.0} records/s, {:.0} MiB/s; /dev/zero with the same reads: {:.0} MiB/s; **ratio {:.2}**.",
            d.records,
            d.capacity,
            d.bytes as f64 / 1048576.0,
            d.fill_s,
            d.drain_s,
            d.read_size / 1024,
            d.records_per_s,
            d.drain_bytes_per_s / 1048576.0,
            d.zero_bytes_per_s / 1048576.0,
            d.ratio_zero
        );
    }
    md
}

/// One overhead table: the tools' costs at the period `o` asked, `what`
/// that rate is; `blame_us` the threshold of the late-only analyses.
fn overhead_table(md: &mut String, o: &Overhead, what: &str, blame_us: &str) {
    let _ = writeln!(
        md,
        "\n| overhead at {:.0} Hz ({what}; CPU-bound job on every CPU, {} rounds) | job throughput | loss | activations/s per CPU | of the asked rate | job time per activation | above the floor | loss / timerlat's | per activation / timerlat's | above the floor / timerlat's | above the floor / without the analysis |",
        1e6 / o.period_us,
        o.rounds
    );
    let _ = writeln!(
        md,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for c in &o.tools {
        let explained = c
            .explained_share
            .map_or(String::new(), |e| format!("; {:.0} % explained", e * 100.0));
        let name = match c.tool.as_str() {
            "none" => "no measurement".into(),
            "floor" => "floor: a do-nothing hard-IRQ timer".into(),
            "rtlat" => "rtlat (irq, thread; streaming)".into(),
            "rtlat-blame" => format!("rtlat --blame (every activation{explained})"),
            "rtlat-blame-late" => format!("rtlat --blame={blame_us} (probes on{explained})"),
            "rtlat-irq" => "rtlat --stages irq (streaming)".into(),
            "rtlat-monitor" => "rtlat monitor (irq; histograms only)".into(),
            "timerlat-aa" => format!("timerlat, auto-analysis as rtla timerlat -a {blame_us}"),
            t => t.to_string(),
        };
        let f1 = |v: Option<f64>, unit: &str| v.map_or(String::new(), |v| format!("{v:.1}{unit}"));
        let f2 = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.2}"));
        let _ = writeln!(
            md,
            "| {name} | {:.0}/s | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.throughput,
            if c.tool == "none" {
                String::new()
            } else {
                format!("{:.1} %", c.loss_pct)
            },
            c.activations_per_s_per_cpu
                .map_or(String::new(), |r| format!("{r:.0}")),
            c.rate_of_asked.map_or(String::new(), |r| if r < 0.95 {
                format!("**{:.0} %, not kept up**", r * 100.0)
            } else {
                format!("{:.0} %", r * 100.0)
            }),
            f1(c.cost_per_activation_us, " µs"),
            f1(c.above_floor_us, " µs"),
            f2(c.loss_ratio_timerlat),
            f2(c.cost_ratio_timerlat),
            f2(c.above_floor_ratio_timerlat),
            f2(c.above_floor_ratio_without_analysis),
        );
    }
}
