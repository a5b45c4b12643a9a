// SPDX-License-Identifier: GPL-2.0

//! Unit tests of the analysis: timelines, intervals explained, tallies and
//! excerpts.

extern crate std;

use super::*;

fn task(pid: u64, comm: &str) -> Source {
    Source::task(pid, comm.as_bytes(), 0, 0)
}

fn fifo(pid: u64, comm: &str, prio: i16) -> Source {
    Source::task(pid, comm.as_bytes(), 1, prio)
}

fn irq(n: u64, name: &str) -> Source {
    Source::new(Kind::HardIrq, n, name.as_bytes())
}

fn timer(f: u64) -> Source {
    Source::new(Kind::Timer, f, b"")
}

fn softirq(v: u64) -> Source {
    Source::new(Kind::Softirq, v, SOFTIRQ_NAMES[v as usize].as_bytes())
}

/// `explain`, checked for the add-up property, as (name or id, ns,
/// count), then other_ns.
fn explain<const N: usize>(
    t: &Tracker<N>,
    from: i64,
    to: i64,
) -> (std::vec::Vec<(std::string::String, u64, u32)>, u64) {
    let mut sh = [Share::EMPTY; 8];
    let ex = t.explain(from, to, &mut sh);
    let sum: u64 = sh[..ex.n].iter().map(|s| s.ns).sum::<u64>() + ex.other_ns;
    assert_eq!(sum, ex.total_ns, "parts add up");
    assert_eq!(ex.total_ns, (to - from).max(0) as u64);
    for w in sh[..ex.n].windows(2) {
        assert!(w[0].ns >= w[1].ns, "largest first");
    }
    let v = sh[..ex.n]
        .iter()
        .map(|s| {
            let name = std::string::String::from_utf8_lossy(s.source.name_bytes()).into_owned();
            let label = if name.is_empty() {
                std::format!("{}:{}", s.source.kind.name(), s.source.id)
            } else {
                name
            };
            (label, s.ns, s.count)
        })
        .collect();
    (v, ex.other_ns)
}

fn l(s: &str, ns: u64, c: u32) -> (std::string::String, u64, u32) {
    (s.into(), ns, c)
}

#[test]
fn preemption_off_blames_the_running_task() {
    // The noise thread runs with preemption off from 0; the timer
    // expected at 1000 interrupts at 1010 (its callback 1010..1012) and
    // wakes the thread, switched in only at 21000.
    let mut t = Tracker::<16>::new();
    t.event(0, Event::Switch(task(42, "noise")));
    t.event(1010, Event::Enter(timer(0xabc)));
    t.event(1012, Event::Exit(Kind::Timer, 0xabc));
    t.event(21000, Event::Switch(fifo(7, "rtlat/1", 95)));
    // The IRQ latency: the noise task ran.
    assert_eq!(explain(&t, 1000, 1010).0, [l("noise", 10, 1)]);
    // The thread latency after the IRQ: the noise task, then the
    // timer's own callback; the noise task counted once, its resume
    // after the callback is no new occurrence.
    assert_eq!(
        explain(&t, 1010, 21000).0,
        [l("noise", 19988, 1), l("timer:2748", 2, 1)]
    );
}

#[test]
fn interrupts_off_blames_the_task_before_the_interrupt() {
    let mut t = Tracker::<16>::new();
    t.event(0, Event::Switch(task(43, "irqoff")));
    // Expected at 1000, the interrupt at 20000 once interrupts are on.
    t.event(20000, Event::Enter(irq(11, "arch_timer")));
    t.event(20005, Event::Exit(Kind::HardIrq, 11));
    t.event(20100, Event::Switch(fifo(7, "rtlat/1", 95)));
    assert_eq!(explain(&t, 1000, 20000).0, [l("irqoff", 19000, 1)]);
    assert_eq!(
        explain(&t, 20000, 20100).0,
        [l("irqoff", 95, 1), l("arch_timer", 5, 1)]
    );
}

#[test]
fn nested_handlers_take_exclusive_time() {
    let mut t = Tracker::<32>::new();
    t.event(0, Event::Switch(task(1, "a")));
    t.event(100, Event::Enter(softirq(1)));
    t.event(150, Event::Enter(irq(5, "virtio0")));
    t.event(160, Event::Enter(timer(9)));
    t.event(170, Event::Exit(Kind::Timer, 9));
    t.event(180, Event::Exit(Kind::HardIrq, 5));
    t.event(300, Event::Exit(Kind::Softirq, 1));
    t.event(400, Event::Switch(task(2, "b")));
    let (v, other) = explain(&t, 0, 500);
    assert_eq!(
        v,
        [
            l("a", 200, 1),
            l("TIMER", 170, 1),
            l("b", 100, 1),
            l("virtio0", 20, 1),
            l("timer:9", 10, 1)
        ]
    );
    assert_eq!(other, 0);
    // Entered twice: two occurrences.
    t.event(600, Event::Enter(irq(5, "virtio0")));
    t.event(610, Event::Exit(Kind::HardIrq, 5));
    let (v, _) = explain(&t, 140, 700);
    assert!(v.contains(&l("virtio0", 30, 2)), "{v:?}");
}

#[test]
fn an_exit_unmatched_is_ignored_and_a_switch_parks_a_softirq() {
    let mut t = Tracker::<16>::new();
    t.event(0, Event::Switch(task(1, "a")));
    t.event(10, Event::Exit(Kind::HardIrq, 3));
    assert_eq!(t.current(), task(1, "a"));
    // A softirq preempted by a switch (PREEMPT_RT): the nesting goes
    // with its task and comes back with it, the rest of its time the
    // softirq's, begun once.
    t.event(20, Event::Enter(softirq(3)));
    t.event(30, Event::Switch(task(2, "b")));
    assert_eq!(t.current(), task(2, "b"));
    t.event(40, Event::Exit(Kind::Softirq, 3));
    assert_eq!(t.current(), task(2, "b"));
    t.event(45, Event::Switch(task(1, "a")));
    assert_eq!(t.current(), softirq(3));
    t.event(50, Event::Exit(Kind::Softirq, 3));
    assert_eq!(t.current(), task(1, "a"));
    assert_eq!(
        explain(&t, 0, 55).0,
        [l("a", 25, 1), l("NET_RX", 15, 1), l("b", 15, 1)]
    );
    // Another task's return finds nothing kept for it.
    t.event(52, Event::Switch(task(2, "b")));
    assert_eq!(t.current(), task(2, "b"));
    // Exiting an outer handler drops the inner ones left open.
    t.event(60, Event::Enter(irq(1, "x")));
    t.event(65, Event::Enter(irq(2, "y")));
    t.event(70, Event::Exit(Kind::HardIrq, 1));
    assert_eq!(t.current(), task(2, "b"));
}

#[test]
fn each_task_gets_its_own_softirq_back_and_no_hard_irq() {
    let mut t = Tracker::<64>::new();
    // a in NET_RX is preempted by ktimers, which enters TIMER and
    // blocks (on a lock a holds: a runs again, in NET_RX); then
    // ktimers resumes in TIMER.
    t.event(0, Event::Switch(task(1, "a")));
    t.event(10, Event::Enter(softirq(3)));
    t.event(20, Event::Switch(fifo(5, "ktimers/1", 1)));
    t.event(30, Event::Enter(softirq(1)));
    t.event(40, Event::Switch(task(1, "a")));
    assert_eq!(t.current(), softirq(3));
    t.event(50, Event::Exit(Kind::Softirq, 3));
    t.event(60, Event::Switch(fifo(5, "ktimers/1", 1)));
    assert_eq!(t.current(), softirq(1));
    t.event(70, Event::Exit(Kind::Softirq, 1));
    assert_eq!(t.current(), fifo(5, "ktimers/1", 1));
    // A hard IRQ left open (its exit unseen) is not kept: only the
    // softirq comes back.
    t.event(80, Event::Switch(task(2, "b")));
    t.event(90, Event::Enter(softirq(6)));
    t.event(95, Event::Enter(irq(4, "eth0")));
    t.event(100, Event::Switch(task(1, "a")));
    t.event(110, Event::Switch(task(2, "b")));
    assert_eq!(t.current(), softirq(6));
    // Nothing but a hard IRQ nested: nothing kept.
    t.event(120, Event::Exit(Kind::Softirq, 6));
    t.event(125, Event::Enter(irq(4, "eth0")));
    t.event(130, Event::Switch(task(1, "a")));
    t.event(140, Event::Switch(task(2, "b")));
    assert_eq!(t.current(), task(2, "b"));
    // More tasks in a softirq than kept: the oldest is forgotten.
    for pid in 10..(10 + PARKED as u64 + 2) {
        t.event(200 + pid as i64 * 10, Event::Switch(task(pid, "p")));
        t.event(205 + pid as i64 * 10, Event::Enter(softirq(pid % 10)));
    }
    t.event(400, Event::Switch(task(10, "p")));
    assert_eq!(t.current(), task(10, "p"));
    // (Parking 15's made room again: 11's went, the oldest.)
    t.event(410, Event::Switch(task(12, "p")));
    assert_eq!(t.current(), softirq(2));
}

#[test]
fn too_deep_nesting_replaces_the_innermost() {
    let mut t = Tracker::<64>::new();
    t.event(0, Event::Switch(task(1, "a")));
    for i in 0..10 {
        t.event(10 + i, Event::Enter(irq(i as u64, "n")));
    }
    assert_eq!(t.current().id, 9);
    t.event(30, Event::Exit(Kind::HardIrq, 9));
    // The stack kept a, 0..3 and 9: 9 gone, 3 resumes.
    assert_eq!(t.current().id, 3);
}

#[test]
fn time_older_than_the_ring_is_unknown() {
    let mut t = Tracker::<4>::new();
    for i in 0..10 {
        t.event(i * 100, Event::Switch(task(i as u64, "t")));
    }
    // Kept: 600, 700, 800, 900.
    let mut sh = [Share::EMPTY; 8];
    let ex = t.explain(0, 1000, &mut sh);
    assert_eq!(sh[0].source.kind, Kind::Unknown);
    assert_eq!(sh[0].ns, 600);
    assert_eq!(ex.total_ns, 1000);
    assert_eq!(t.transitions(), 10);
    // Before any event: all unknown.
    let e = Tracker::<4>::new();
    let ex = e.explain(5, 10, &mut sh);
    assert_eq!((ex.n, sh[0].source.kind, sh[0].ns), (1, Kind::Unknown, 5));
    // An empty or inverted interval: nothing.
    assert_eq!(t.explain(10, 10, &mut sh).n, 0);
    assert_eq!(t.explain(10, 5, &mut sh).total_ns, 0);
}

#[test]
fn shares_beyond_room_are_other_but_the_largest_stay() {
    let mut t = Tracker::<64>::new();
    for i in 0..20 {
        t.event(i * 10, Event::Switch(task(i as u64, "t")));
    }
    // The culprit comes last: 500 of 700.
    t.event(200, Event::Switch(task(99, "culprit")));
    let mut sh = [Share::EMPTY; 3];
    let ex = t.explain(0, 700, &mut sh);
    assert_eq!(ex.n, 3);
    assert_eq!((sh[0].source.id, sh[0].ns), (99, 500));
    assert_eq!(ex.other_ns, 180);
    assert_eq!(sh.iter().map(|s| s.ns).sum::<u64>() + ex.other_ns, 700);
}

#[test]
fn a_timer_is_its_timer_whatever_its_callback_became() {
    // The exit names the timer only (its callback may have changed it,
    // or freed it): the entry's callback address is kept for the name.
    let mut t = Tracker::<16>::new();
    t.event(0, Event::Switch(task(1, "a")));
    let mut tm = Source::new(Kind::Timer, 0xffff_1000, b"");
    tm.aux = 0xffff_0042;
    t.event(10, Event::Enter(tm));
    t.event(30, Event::Exit(Kind::Timer, 0xffff_1000));
    assert_eq!(t.current().id, 1);
    let mut sh = [Share::EMPTY; 4];
    let ex = t.explain(0, 40, &mut sh);
    assert_eq!(ex.n, 2);
    let timer = sh[..ex.n].iter().find(|s| s.source.kind == Kind::Timer);
    assert_eq!(timer.map(|s| (s.ns, s.source.aux)), Some((20, 0xffff_0042)));
}

#[test]
fn a_clock_going_back_joins_the_newest_transition() {
    let mut t = Tracker::<8>::new();
    t.event(100, Event::Switch(task(1, "a")));
    t.event(90, Event::Switch(task(2, "b")));
    assert_eq!(explain(&t, 100, 110).0, [l("b", 10, 1)]);
    // The same source again is no transition.
    t.event(120, Event::Switch(task(2, "b")));
    assert_eq!(t.transitions(), 2);
}

/// Random event streams: the parts always add up, no share is empty of
/// both time and count, and a source's time never exceeds the interval.
#[test]
fn random_streams_add_up() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..200 {
        let mut t = Tracker::<32>::new();
        let mut now = 0i64;
        for _ in 0..100 {
            now += (next() % 50) as i64;
            let id = next() % 4;
            let ev = match next() % 5 {
                0 => Event::Switch(task(id, "t")),
                1 => Event::Enter(irq(id, "i")),
                2 => Event::Exit(Kind::HardIrq, id),
                3 => Event::Enter(softirq(id)),
                _ => Event::Exit(Kind::Softirq, id),
            };
            t.event(now, ev);
        }
        for _ in 0..10 {
            let a = (next() % (now as u64 + 1)) as i64;
            let b = a + (next() % 500) as i64;
            let (v, _) = explain(&t, a, b);
            for (_, ns, c) in v {
                assert!(ns <= (b - a) as u64);
                assert!(ns > 0 || c > 0);
            }
            // Against the timeline read nanosecond by nanosecond: at
            // each, the newest transition kept at or before it (none:
            // unknown).
            let mut sh = [Share::EMPTY; 8];
            let ex = t.explain(a, b, &mut sh);
            if ex.other_ns > 0 {
                continue;
            }
            let kept = t.total.min(32) as usize;
            let mut want: std::vec::Vec<(Source, u64)> = std::vec::Vec::new();
            for ns in a..b {
                let s = (1..=kept)
                    .filter_map(|k| t.newest(k))
                    .find(|tr| tr.at <= ns)
                    .map_or(Source::UNKNOWN, |tr| tr.source);
                match want.iter_mut().find(|(w, _)| w.same(&s)) {
                    Some(w) => w.1 += 1,
                    None => want.push((s, 1)),
                }
            }
            for (s, ns) in &want {
                let got = sh[..ex.n].iter().find(|x| x.source.same(s)).map(|x| x.ns);
                assert_eq!(got, Some(*ns), "{s:?} in [{a}, {b})");
            }
            assert_eq!(want.len(), ex.n);
        }
    }
}

#[test]
fn an_analysis_splits_the_thread_latency_at_the_interrupt() {
    // Interrupts off in "irqoff" from 0 to 20000: the timer expected at
    // 1000 comes at 20000; then "hog" (FIFO 99) runs before the thread.
    let mut t = Tracker::<16>::new();
    t.event(0, Event::Switch(task(43, "irqoff")));
    t.event(20000, Event::Enter(timer(0xabc)));
    t.event(20002, Event::Exit(Kind::Timer, 0xabc));
    t.event(20010, Event::Switch(fifo(9, "hog", 99)));
    t.event(30010, Event::Switch(fifo(7, "rtlat/1", 95)));
    let a = Analysis::explain(&t, 5, 1000, 19000, 29020);
    assert_eq!(a.irq_ex.total_ns + a.thread_ex.total_ns, 29020);
    assert_eq!(a.irq[..a.irq_ex.n].len(), 1);
    assert_eq!(a.irq[0].source, task(43, "irqoff"));
    assert_eq!(a.irq[0].ns, 19000);
    assert_eq!(a.thread[0].source, fifo(9, "hog", 99));
    assert_eq!(a.thread[0].ns, 10000);
    let mut tally = Tally::new();
    tally.add(&a);
    let r = tally.ranked();
    assert_eq!(tally.n, 4);
    assert_eq!(r[0].source.name_bytes(), b"irqoff");
    // "irqoff" ran before the interrupt and after it (8 ns): one part.
    assert_eq!((r[0].ns, r[0].count, r[0].worst_ns), (19008, 1, 19008));
    assert_eq!(r[1].source.name_bytes(), b"hog");
    assert_eq!(tally.worst(), &[a]);
}

#[test]
fn the_measuring_task_is_the_measurement() {
    let mut t = Tracker::<64>::new();
    t.event(0, Event::Switch(fifo(7, "rtlat/1", 95)));
    // Its earlier work keeps the interrupt out, then a task runs
    // first, then it is switched in and reads its clock.
    t.event(1_000, Event::Switch(task(42, "noise/1")));
    t.event(1_500, Event::Enter(irq(25, "virtio0")));
    t.event(1_600, Event::Exit(Kind::HardIrq, 25));
    t.event(5_000, Event::Switch(fifo(7, "rtlat/1", 95)));
    let mut a = Analysis::explain(&t, 1, 800, 800, 5_300);
    a.measured_by(7);
    let by = |k: Kind| -> u64 {
        a.shares()
            .filter(|s| s.source.kind == k)
            .map(|s| s.ns)
            .sum()
    };
    // Its own: 800..1000 before the interrupt, 5000..6100 after it;
    // the task's: 1000..1500 and 1600..5000.
    assert_eq!(by(Kind::Measure), 200 + 1_100);
    assert_eq!(by(Kind::Task), 500 + 3_400);
    assert_eq!(by(Kind::HardIrq), 100);
    assert!(a
        .shares()
        .all(|s| s.source.kind != Kind::Measure || s.source.id == 7));
    // Another task's pid names nothing.
    let mut b = Analysis::explain(&t, 1, 800, 800, 5_300);
    b.measured_by(8);
    assert_eq!(
        b.shares()
            .filter(|s| s.source.kind == Kind::Measure)
            .count(),
        0
    );
    let mut tally = Tally::new();
    tally.add(&a);
    assert_eq!(tally.ranked()[0].source.kind, Kind::Task);
    assert!(tally.culprits[..tally.n]
        .iter()
        .any(|c| c.source.kind == Kind::Measure && c.ns == 1_300));
}

#[test]
fn folding_the_measurement_gives_the_task_back_whole() {
    // Task 7 measures the first activation; in the second it only
    // runs (another task measured it).
    let mut t = Tracker::<64>::new();
    t.event(0, Event::Switch(task(42, "noise/1")));
    t.event(600, Event::Switch(fifo(7, "rtlat/1", 95)));
    let mut a = Analysis::explain(&t, 1, 100, 100, 900);
    a.measured_by(7);
    let mut u = Tracker::<64>::new();
    u.event(0, Event::Switch(fifo(7, "rtlat/1", 95)));
    u.event(700, Event::Switch(task(9, "other")));
    let mut b = Analysis::explain(&u, 2, 100, 100, 900);
    b.measured_by(9);
    let mut apart = Tally::new();
    apart.add(&a);
    apart.add(&b);
    let mut never = Tally::new();
    never.add(&Analysis::explain(&t, 1, 100, 100, 900));
    never.add(&Analysis::explain(&u, 2, 100, 100, 900));
    assert_eq!(apart.n, 4);
    for rank in 0..2 {
        let (mut folded, mut want) = (Excerpt::EMPTY, Excerpt::EMPTY);
        apart.excerpt(rank, &mut folded);
        folded.fold_measure();
        never.excerpt(rank, &mut want);
        assert_eq!(folded, want);
        assert!(folded.has_worst);
    }
    let mut folded = Excerpt::EMPTY;
    apart.excerpt(0, &mut folded);
    folded.fold_measure();
    // (It was two rows of pid 7, of 400 and 600 ns, the first ranked
    // after the noise task.)
    let top = folded.culprits[usize::from(folded.ranked_order()[0])];
    assert_eq!((top.source.id, top.ns, top.count), (7, 1000, 2));
}

/// A tally of `k` activations, each later one longer, from `k`
/// sources.
fn busy_tally(k: u64) -> Tally {
    let mut tally = Tally::new();
    for i in 0..k {
        let mut t = Tracker::<4>::new();
        t.event(0, Event::Switch(task(100 + i, "noise")));
        let len = 1000 + i as i64 * 10;
        t.event(len, Event::Switch(fifo(7, "rtlat/1", 95)));
        let mut a = Analysis::explain(&t, i, 0, 0, len);
        a.stack = [0xffff_0000 + i; STACK_DEPTH];
        a.stack_n = 3;
        tally.add(&a);
    }
    tally
}

#[test]
fn a_cleared_tally_is_new() {
    let mut tally = busy_tally(CULPRITS as u64 * 2);
    assert_eq!((tally.n, tally.nworst), (CULPRITS, WORST));
    assert_ne!(tally, Tally::new());
    tally.clear();
    assert_eq!(tally, Tally::new());
    // And counts afresh.
    tally.add(&busy_tally(1).worst[0]);
    assert_eq!(tally, busy_tally(1));
}

#[test]
fn an_excerpt_is_the_tally_but_the_other_worst() {
    let tally = busy_tally(CULPRITS as u64 + 3);
    let mut e = Excerpt::EMPTY;
    for rank in 0..WORST + 1 {
        tally.excerpt(rank, &mut e);
        assert_eq!(
            (e.explained, e.late_ns, e.other_ns, e.n, e.nworst),
            (
                tally.explained,
                tally.late_ns,
                tally.other_ns,
                tally.n,
                tally.nworst
            )
        );
        assert_eq!(e.culprits, tally.culprits);
        assert_eq!(e.ranked_order(), tally.ranked_order());
        assert_eq!(e.worst(), tally.worst().get(rank));
    }
    // Past the worst kept: none, and nothing left of the one before.
    assert_eq!(e.worst, Analysis::EMPTY);
    let mut few = Excerpt::EMPTY;
    Tally::new().excerpt(0, &mut few);
    assert_eq!(few, Excerpt::EMPTY);
    assert!(core::mem::size_of::<Excerpt>() * 2 < core::mem::size_of::<Tally>());
}

#[test]
fn a_tally_adds_up_and_keeps_the_largest_sources() {
    let mut tally = Tally::new();
    let mut worst = 0;
    // Many one-source activations: more sources than the tally has
    // room for, the later ones larger.
    for i in 0..(CULPRITS as u64 * 3) {
        let mut t = Tracker::<4>::new();
        t.event(0, Event::Switch(task(100 + i, "noise")));
        let len = 1000 + i as i64 * 10;
        t.event(len, Event::Switch(fifo(7, "rtlat/1", 95)));
        let a = Analysis::explain(&t, i, 0, 0, len);
        worst = worst.max(len);
        tally.add(&a);
        // The same source before and after the interrupt of one more
        // (short) activation: one count.
        if i == 0 {
            let b = Analysis::explain(&t, i, 0, 10, 20);
            tally.add(&b);
        }
    }
    let r = tally.ranked();
    let sum: u64 = r[..tally.n].iter().map(|c| c.ns).sum();
    assert_eq!(sum + tally.other_ns, tally.late_ns);
    assert_eq!(tally.n, CULPRITS);
    for w in r[..tally.n].windows(2) {
        assert!(w[0].ns >= w[1].ns);
    }
    // The largest (latest) sources stayed.
    assert_eq!(r[0].source.id, 100 + CULPRITS as u64 * 3 - 1);
    assert_eq!(tally.worst().first().map(|w| w.thread_ns), Some(worst));
    assert_eq!(tally.explained, CULPRITS as u64 * 3 + 1);
}

#[test]
fn a_tally_keeps_the_worst_activations_in_order() {
    // Thread latencies in an order that inserts at the front, the back,
    // the middle, past the end, and ties (the first seen ranks first).
    let lens = [50, 70, 60, 10, 70, 80, 20, 65, 90, 60];
    let mut tally = Tally::new();
    for (seq, &len) in lens.iter().enumerate() {
        let mut t = Tracker::<4>::new();
        t.event(0, Event::Switch(task(100, "noise")));
        t.event(len, Event::Switch(fifo(7, "rtlat/1", 95)));
        tally.add(&Analysis::explain(&t, seq as u64, 0, 0, len));
        assert_eq!(tally.worst().len(), (seq + 1).min(WORST));
    }
    let kept: std::vec::Vec<(i64, u64)> =
        tally.worst().iter().map(|a| (a.thread_ns, a.seq)).collect();
    assert_eq!(kept, [(90, 8), (80, 5), (70, 1), (70, 4), (65, 7)]);
}

#[test]
fn zeroed_is_new() {
    // SAFETY: Only integers, a bool and a `repr(u32)` enum, all zero.
    let z: Tracker<4> = unsafe { core::mem::zeroed() };
    let n = Tracker::<4>::new();
    assert_eq!((z.total, z.depth), (n.total, n.depth));
    assert_eq!(z.evict, n.evict);
    for (a, b) in z.parked.iter().zip(n.parked.iter()) {
        assert_eq!((a.pid, a.n, a.stack), (b.pid, b.n, b.stack));
    }
    assert_eq!(z.stack, n.stack);
    for (a, b) in z.log.iter().zip(n.log.iter()) {
        assert_eq!((a.at, a.source, a.resumed), (b.at, b.source, b.resumed));
    }
    assert_eq!(Kind::Unknown as u32, 0);
}

#[test]
fn zeroed_tally_and_excerpt_are_empty() {
    // SAFETY: Only integers, bools and `repr(u32)` enums, all zero.
    let (t, e): (Tally, Excerpt) = unsafe { (core::mem::zeroed(), core::mem::zeroed()) };
    assert_eq!(t, Tally::new());
    assert_eq!(e, Excerpt::EMPTY);
}
