// SPDX-License-Identifier: GPL-2.0

//! `--blame`: why late activations were late, per CPU, from the device's
//! `RTLAT_IOC_BLAME` — the sources ranked over the run and the worst
//! activation's analysis — for the JSON report and the summary.

use std::fmt::Write as _;

use rtcore::{blame::Kind, uapi};
use serde::{Deserialize, Serialize};

use crate::output::Unit;

/// One CPU's blame, as the JSON report has it (all times in ns).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlameReport {
    /// Late activations explained: those whose thread latency reached the
    /// run's `--blame` threshold.
    pub explained: u64,
    /// Their thread latencies, summed.
    pub late_ns: u64,
    /// Time of sources past the ranked ones.
    pub other_ns: u64,
    /// The sources, most time first.
    pub culprits: Vec<Culprit>,
    /// The worst activation explained.
    pub worst: Option<Worst>,
    /// The next worst ones the CPU kept, worst first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_worst: Vec<Worst>,
}

/// What ran.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SourceJson {
    /// `task`, `irq`, `softirq`, `timer` or `unknown`.
    pub kind: String,
    /// A task's comm, an IRQ handler's name, a softirq vector's, an hrtimer
    /// callback's `module:symbol` (a Rust one demangled, [`callback_name`]).
    pub name: String,
    /// pid, IRQ number or softirq vector (0 for an hrtimer).
    pub id: u64,
    /// A task's policy (`SCHED_FIFO`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// A task's effective priority as it ran (RT priority, 100 for
    /// `SCHED_DEADLINE`, else its nice value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio: Option<i32>,
}

/// A source's time in a CPU's late activations.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Culprit {
    pub source: SourceJson,
    /// Its time in them, summed.
    pub ns: u64,
    /// How many it had a part in.
    pub count: u64,
    /// Its largest part in one.
    pub worst_ns: u64,
}

/// A source's part of one activation's latency.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub source: SourceJson,
    pub ns: u64,
    /// The times it began (or was running) in the interval.
    pub count: u32,
}

/// A worst activation, explained: `irq` from its expected expiry to its
/// interrupt, `thread` from there to its thread; with the `*_other_ns`,
/// each adds up to its interval.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Worst {
    pub seq: u64,
    pub expected_ns: u64,
    pub irq_ns: i64,
    pub thread_ns: i64,
    pub irq: Vec<Part>,
    pub irq_other_ns: u64,
    pub thread: Vec<Part>,
    pub thread_other_ns: u64,
    /// The code its interrupt interrupted, innermost first
    /// (`module:symbol+off/size`); empty if it interrupted user space.
    #[serde(default)]
    pub interrupted: Vec<String>,
}

fn policy_name(p: u32) -> String {
    match p {
        0 => "SCHED_OTHER".into(),
        1 => "SCHED_FIFO".into(),
        2 => "SCHED_RR".into(),
        3 => "SCHED_BATCH".into(),
        5 => "SCHED_IDLE".into(),
        6 => "SCHED_DEADLINE".into(),
        p => format!("policy {p}"),
    }
}

/// An hrtimer callback's name as a user reads it: a Rust symbol (the
/// kernel's, v0-mangled) demangled without its hashes, after its module
/// (`module:` kept); a C symbol, or one cut too short to demangle (a module
/// older than the whole names), as it is.
pub fn callback_name(name: &str) -> String {
    let (module, symbol) = match name.split_once(':') {
        Some((m, s)) => (Some(m), s),
        None => (None, name),
    };
    match (rustc_demangle::try_demangle(symbol), module) {
        (Ok(d), Some(m)) => format!("{m}:{d:#}"),
        (Ok(d), None) => format!("{d:#}"),
        (Err(_), _) => name.to_string(),
    }
}

/// Entry `e` of answer `b`, named: an hrtimer callback by its whole name.
fn source(b: &uapi::Blame, e: &uapi::BlameEntry) -> SourceJson {
    let kind = Kind::from_raw(e.kind).unwrap_or(Kind::Unknown);
    let raw = String::from_utf8_lossy(b.name_of(e)).into_owned();
    let name = if kind == Kind::Timer {
        callback_name(&raw)
    } else {
        raw
    };
    let task = kind == Kind::Task;
    SourceJson {
        kind: kind.name().into(),
        name,
        id: e.id,
        policy: task.then(|| policy_name(e.policy)),
        prio: task.then_some(e.prio),
    }
}

impl BlameReport {
    /// The report of the device's answers for one CPU: of rank 0 (the
    /// worst), then of the next ranks.
    pub fn from_uapi(b: &uapi::Blame, next: &[uapi::Blame]) -> Self {
        Self {
            explained: b.explained,
            late_ns: b.late_ns,
            other_ns: b.other_ns,
            culprits: b.culprits[..b.nr_culprits as usize]
                .iter()
                .map(|e| Culprit {
                    source: source(b, e),
                    ns: e.ns,
                    count: u64::from(e.count),
                    worst_ns: e.worst_ns,
                })
                .collect(),
            worst: b.worst.as_ref().map(|w| Worst::from_uapi(b, w)),
            next_worst: next
                .iter()
                .filter_map(|n| n.worst.as_ref().map(|w| Worst::from_uapi(n, w)))
                .collect(),
        }
    }
}

impl Worst {
    /// Worst activation `w` of answer `b`.
    fn from_uapi(b: &uapi::Blame, w: &uapi::BlameWorst) -> Self {
        let parts = |es: &[uapi::BlameEntry]| {
            es.iter()
                .map(|e| Part {
                    source: source(b, e),
                    ns: e.ns,
                    count: e.count,
                })
                .collect()
        };
        Self {
            seq: w.seq,
            expected_ns: w.expected_ns,
            irq_ns: w.irq_ns,
            thread_ns: w.thread_ns,
            irq: parts(&w.irq[..w.nr_irq as usize]),
            irq_other_ns: w.irq_other_ns,
            thread: parts(&w.thread[..w.nr_thread as usize]),
            thread_other_ns: w.thread_other_ns,
            interrupted: w.stack[..w.nr_stack as usize]
                .iter()
                .map(|f| {
                    let n = f.iter().position(|&c| c == 0).unwrap_or(f.len());
                    String::from_utf8_lossy(&f[..n]).into_owned()
                })
                .collect(),
        }
    }

    /// Its largest part, before the interrupt or after it.
    fn largest(&self) -> Option<&Part> {
        self.irq.iter().chain(&self.thread).max_by_key(|p| p.ns)
    }
}

impl SourceJson {
    /// How the summary names it: `task noise/1 [1234] SCHED_FIFO 99`,
    /// `irq 25 virtio0`, `softirq TIMER`, `timer module:symbol`.
    pub fn label(&self) -> String {
        match self.kind.as_str() {
            "task" if self.id == 0 => format!("idle ({})", self.name),
            "task" => format!(
                "task {} [{}] {} {}",
                self.name,
                self.id,
                self.policy.as_deref().unwrap_or("?"),
                self.prio.unwrap_or(0)
            ),
            "irq" => format!("irq {} {}", self.id, self.name),
            "softirq" => format!("softirq {}", self.name),
            "measure" => format!("measurement itself ({} [{}])", self.name, self.id),
            "timer" if self.name.is_empty() || self.name == "?" => "timer (unnamed)".into(),
            // A Rust callback's symbol cut too short to demangle (a
            // module older than the whole names): its module says more
            // than its first bytes.
            "timer" => match self.name.split_once(":_R") {
                Some((module, _)) => format!("timer {module}:(a Rust callback)"),
                None => format!("timer {}", self.name),
            },
            _ => "unknown (before the CPU's timeline)".into(),
        }
    }
}

/// The summary of CPU `cpu`'s blame, explained from `threshold_us` on.
pub fn text(cpu: u32, b: &BlameReport, threshold_us: u32, unit: Unit) -> String {
    let u = if unit.ns { "ns" } else { "us" };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Blame on CPU {cpu}: {} activations with a thread latency of {threshold_us} us or more explained, {} {u} late in all",
        b.explained,
        unit.v(b.late_ns)
    );
    if b.culprits.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "  {:>6}  {:>12}  {:>6}  {:>12}  source",
        "share", "total", "count", "worst"
    );
    let share = |ns: u64| 100.0 * ns as f64 / b.late_ns.max(1) as f64;
    let row = |s: &mut String, c: &Culprit| {
        let _ = writeln!(
            s,
            "  {:>5.1}%  {:>9} {u}  {:>6}  {:>9} {u}  {}",
            share(c.ns),
            unit.v(c.ns),
            c.count,
            unit.v(c.worst_ns),
            c.source.label()
        );
    };
    // The causes, ranked; the measurement's own time after them.
    let (own, causes): (Vec<&Culprit>, Vec<&Culprit>) =
        b.culprits.iter().partition(|c| c.source.kind == "measure");
    for c in causes {
        row(&mut s, c);
    }
    if b.other_ns > 0 {
        let _ = writeln!(
            s,
            "  {:>5.1}%  {:>9} {u}  {:>6}  {:>12}  others",
            share(b.other_ns),
            unit.v(b.other_ns),
            "",
            ""
        );
    }
    for c in own {
        row(&mut s, c);
    }
    if let Some(w) = &b.worst {
        s.push_str(&analysis(cpu, w, unit));
    }
    for w in &b.next_worst {
        let _ = write!(
            s,
            "  next: seq {}, thread latency {} {u}",
            w.seq,
            unit.signed(w.thread_ns)
        );
        if let Some(p) = w.largest() {
            let _ = write!(s, ", most of it {} {} {u}", p.source.label(), unit.v(p.ns));
        }
        s.push('\n');
    }
    s
}

/// The worst activation's analysis, in the shape of `rtla timerlat -a`:
/// the thread latency as the IRQ latency (with what ran before the
/// interrupt) plus what ran after it.
pub fn analysis(cpu: u32, w: &Worst, unit: Unit) -> String {
    let u = if unit.ns { "ns" } else { "us" };
    let list = |parts: &[Part], other: u64| {
        let mut v: Vec<String> = parts
            .iter()
            .map(|p| format!("{} {} {u}", p.source.label(), unit.v(p.ns)))
            .collect();
        if other > 0 {
            v.push(format!("others {} {u}", unit.v(other)));
        }
        v
    };
    let mut s = format!(
        "Worst on CPU {cpu} (seq {}): thread latency {} {u} = IRQ latency {} {u}",
        w.seq,
        unit.signed(w.thread_ns),
        unit.signed(w.irq_ns)
    );
    let before = list(&w.irq, w.irq_other_ns);
    if !before.is_empty() {
        let _ = write!(s, " ({})", before.join(", "));
    }
    for p in list(&w.thread, w.thread_other_ns) {
        let _ = write!(s, " + {p}");
    }
    s.push('\n');
    if !w.interrupted.is_empty() {
        let _ = writeln!(
            s,
            "  its interrupt interrupted: {}",
            w.interrupted.join(" <- ")
        );
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use rtcore::blame::{Analysis, Event, Source, Tally, Tracker};

    use super::*;

    /// The device's answers for CPU 1, of rank 0 and 1. The worst: "noise"
    /// (FIFO 99) holds the CPU from before the expiry until the thread
    /// runs, an IRQ in between; the next: "hog" (SCHED_OTHER) holds it
    /// after the interrupt.
    pub(crate) fn sample_answers() -> [uapi::Blame; 2] {
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(Source::task(42, b"noise/1", 1, 99)));
        t.event(
            1_500,
            Event::Enter(Source::new(Kind::HardIrq, 25, b"virtio0")),
        );
        t.event(1_600, Event::Exit(Kind::HardIrq, 25));
        t.event(20_000, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        let mut tally = Tally::new();
        let mut a = Analysis::explain(&t, 9, 1_000, 600, 19_010);
        a.stack[..2].copy_from_slice(&[1, 2]);
        a.stack_n = 2;
        tally.add(&a);
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(Source::task(43, b"hog", 0, 0)));
        t.event(5_000, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        tally.add(&Analysis::explain(&t, 12, 1_000, 100, 4_000));
        [0, 1].map(|rank| {
            uapi::Blame::from_tally(
                uapi::BlameRequest::new(1, rank),
                &tally,
                |_, _| {},
                |pc, f| {
                    let n: &[u8] = if pc == 1 {
                        b"noise_fn+0x10/0x40 [noise]"
                    } else {
                        b"kthread+0x2c/0x40"
                    };
                    f[..n.len()].copy_from_slice(n);
                },
            )
        })
    }

    /// The report of [`sample_answers`].
    pub(crate) fn sample() -> BlameReport {
        let [worst, next] = sample_answers();
        BlameReport::from_uapi(&worst, &[next])
    }

    #[test]
    fn the_worst_adds_up_and_reads_as_rtla_does() {
        let r = sample();
        assert_eq!(r.explained, 2);
        assert_eq!(r.culprits[0].source.name, "noise/1");
        assert_eq!(r.culprits[0].source.policy.as_deref(), Some("SCHED_FIFO"));
        let w = r.worst.as_ref().unwrap();
        let sum: u64 = w
            .irq
            .iter()
            .chain(w.thread.iter())
            .map(|p| p.ns)
            .sum::<u64>()
            + w.irq_other_ns
            + w.thread_other_ns;
        assert_eq!(sum as i64, w.thread_ns);
        let a = analysis(1, w, Unit { ns: true });
        assert_eq!(
            a,
            "Worst on CPU 1 (seq 9): thread latency 19010 ns = IRQ latency 600 ns \
             (task noise/1 [42] SCHED_FIFO 99 500 ns, irq 25 virtio0 100 ns) \
             + task noise/1 [42] SCHED_FIFO 99 18400 ns + task rtlat/1 [7] SCHED_FIFO 95 10 ns\n\
             \x20 its interrupt interrupted: noise_fn+0x10/0x40 [noise] <- kthread+0x2c/0x40\n"
        );
        let rust = SourceJson {
            kind: "timer".into(),
            name: "rtrs_noise:_RNvXs1_NtNtNtCs1EKtwoKEMO2_6kernel4".into(),
            id: 1,
            policy: None,
            prio: None,
        };
        assert_eq!(rust.label(), "timer rtrs_noise:(a Rust callback)");
        let t = text(1, &r, 5, Unit { ns: true });
        assert!(t.contains("Blame on CPU 1: 2 activations"), "{t}");
        let first = t.lines().nth(2).unwrap();
        assert!(first.contains("task noise/1 [42]"), "{t}");
        assert!(first.trim_start().starts_with("82.1%"), "{t}");
        // The next worst, by its largest part.
        assert_eq!(r.next_worst.len(), 1);
        assert!(
            t.ends_with(
                "  next: seq 12, thread latency 4000 ns, most of it task hog [43] SCHED_OTHER 0 3900 ns\n"
            ),
            "{t}"
        );
    }
    /// A Rust hrtimer callback's symbol as a guest's kallsyms has it
    /// (`rtrs_noise.ko`'s injector), longer than an entry's name.
    const RUST_CALLBACK: &str = "rtrs_noise:_RNvXs1_NtNtNtCs1EKtwoKEMO2_6kernel4time7hrtimer3arcINtNtNtBb_4sync3arc3ArcNtCs7imXckM5qqB_15rtrs_noise_main8InjectorENtB7_18RawHrTimerCallback3runB1c_";

    /// The answer, in a buffer of `len` bytes (a layout), for a CPU whose
    /// late activation was an hrtimer callback named `RUST_CALLBACK`.
    fn rust_timer_answer(len: usize) -> uapi::Blame {
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(Source::task(0, b"swapper/1", 0, 0)));
        let timer = Source {
            aux: 0xffff_1000,
            ..Source::new(Kind::Timer, 0xffff_2000, b"")
        };
        t.event(1_000, Event::Enter(timer));
        t.event(21_000, Event::Exit(Kind::Timer, timer.id));
        t.event(21_100, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        let mut tally = Tally::new();
        tally.add(&Analysis::explain(&t, 1, 500, 20_600, 20_700));
        let mut b = vec![0u8; len];
        uapi::Blame::encode_tally(
            uapi::BlameRequest::new(1, 0),
            &tally,
            |s, buf| {
                if s.kind == Kind::Timer {
                    let n = RUST_CALLBACK.len().min(buf.len() - 1);
                    buf[..n].copy_from_slice(&RUST_CALLBACK.as_bytes()[..n]);
                    buf[n..].fill(0);
                }
            },
            |_, _| {},
            &mut b,
        );
        uapi::Blame::decode(&b).unwrap()
    }

    #[test]
    fn a_rust_hrtimer_callback_reads_demangled() {
        const READABLE: &str = "rtrs_noise:<kernel::sync::arc::Arc<rtrs_noise_main::Injector> \
                                as kernel::time::hrtimer::RawHrTimerCallback>::run";
        assert_eq!(callback_name(RUST_CALLBACK), READABLE);
        // Without a module (the kernel's own), a C symbol, and a Rust one
        // cut too short: as they are.
        assert_eq!(
            callback_name(&RUST_CALLBACK["rtrs_noise:".len()..]),
            &READABLE["rtrs_noise:".len()..]
        );
        assert_eq!(callback_name("hrtimer_wakeup"), "hrtimer_wakeup");
        let cut = &RUST_CALLBACK[..uapi::BLAME_NAME_LEN - 1];
        assert_eq!(callback_name(cut), cut);
        // From the device: the ranking and the worst's parts name it so.
        let r = BlameReport::from_uapi(&rust_timer_answer(uapi::BLAME_SIZE), &[]);
        let timer = r
            .culprits
            .iter()
            .find(|c| c.source.kind == "timer")
            .unwrap();
        assert_eq!(timer.source.name, READABLE);
        assert_eq!(timer.source.label(), format!("timer {READABLE}"));
        let w = r.worst.as_ref().unwrap();
        assert_eq!(w.irq[0].source.name, READABLE);
        let t = text(1, &r, 5, Unit { ns: true });
        assert!(
            t.contains("kernel::time::hrtimer::RawHrTimerCallback>::run"),
            "{t}"
        );
        // A module of the first layout cuts it: its module, said so.
        let old = BlameReport::from_uapi(&rust_timer_answer(uapi::BLAME_SIZE_V1), &[]);
        let timer = old
            .culprits
            .iter()
            .find(|c| c.source.kind == "timer")
            .unwrap();
        assert_eq!(timer.source.name, cut);
        assert_eq!(timer.source.label(), "timer rtrs_noise:(a Rust callback)");
    }

    #[test]
    fn the_measurement_is_listed_after_the_causes() {
        // The measuring thread (pid 7) takes most of the latency: its own
        // time, not the first cause.
        let mut t = Tracker::<16>::new();
        t.event(0, Event::Switch(Source::task(42, b"noise/1", 0, 0)));
        t.event(2_000, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
        let mut a = Analysis::explain(&t, 3, 1_000, 100, 9_000);
        a.measured_by(7);
        let mut tally = Tally::new();
        tally.add(&a);
        let b =
            uapi::Blame::from_tally(uapi::BlameRequest::new(1, 0), &tally, |_, _| {}, |_, _| {});
        let r = BlameReport::from_uapi(&b, &[]);
        assert_eq!(r.culprits[0].source.kind, "measure");
        let t = text(1, &r, 5, Unit { ns: true });
        let rows: Vec<&str> = t.lines().skip(2).take(2).collect();
        assert!(rows[0].contains("task noise/1 [42]"), "{t}");
        assert!(rows[1].ends_with("measurement itself (rtlat/1 [7])"), "{t}");
        assert!(rows[1].trim_start().starts_with("88.9%"), "{t}");
    }
}
