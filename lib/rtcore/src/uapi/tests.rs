// SPDX-License-Identifier: GPL-2.0

//! Unit tests of the ABI's coding: round trips, layouts, and what a
//! decoder refuses.

extern crate std;

use super::{
    super::blame,
    blame::{
        LongNames,
        BLAME_NR_WORST_AT,
        BLAME_RANK_AT,
        BLAME_WANT_AT, //
    },
    *,
};
use std::{vec, vec::Vec};

#[test]
fn state_and_stop_reason_round_trip_their_abi_integers() {
    for st in [
        State::Idle,
        State::Configured,
        State::Running,
        State::Stopped,
    ] {
        assert_eq!(State::from_raw(st as u32), Some(st));
    }
    for r in [StopReason::None, StopReason::User, StopReason::Threshold] {
        assert_eq!(StopReason::from_raw(r as u32), Some(r));
    }
    assert_eq!(State::from_raw(STATE_STOPPED + 1), None);
    assert_eq!(StopReason::from_raw(STOP_THRESHOLD + 1), None);
    assert_eq!(State::Running as u32, 2);
    assert_eq!(StopReason::Threshold as u32, 2);
}

#[test]
fn stages_round_trip_their_abi_indices() {
    for (i, st) in Stage::ALL.into_iter().enumerate() {
        assert_eq!(st.index(), i);
        assert_eq!(Stage::from_raw(i as u32), Some(st));
        assert_eq!(st.bit(), 1 << i);
    }
    assert_eq!(Stage::from_raw(NR_STAGES as u32), None);
    // The header's RTLAT_STAGE_* values.
    assert_eq!((Stage::Irq as u32, Stage::Response as u32), (0, 3));
    let mut per = [0u8; NR_STAGES];
    per[Stage::User] = 7;
    assert_eq!((per[2], per[Stage::User]), (7, 7));
    assert_eq!(
        Stage::ALL.map(Stage::name),
        ["irq", "thread", "user", "response"]
    );
}

#[test]
fn sizes_are_what_the_header_says() {
    assert_eq!(CONFIG_SIZE_V1, 96);
    assert_eq!(CONFIG_SIZE_V2, 104);
    assert_eq!(CONFIG_SIZE, 120);
    assert_eq!(RECORD_SIZE, 64);
    assert_eq!(STATUS_SIZE_V1, 144);
    assert_eq!(STATUS_SIZE_V2, 176);
    assert_eq!(STATUS_SIZE_V3, 184);
    assert_eq!(STATUS_SIZE, 216);
    assert_eq!(STATS_SIZE, 168);
    assert_eq!(ioc::START, 0xb702);
    assert_eq!(ioc::CONFIG_V1, 0x4060_b701);
    assert_eq!(ioc::CONFIG_V2, 0x4068_b701);
    assert_eq!(ioc::CONFIG, 0x4078_b701);
    assert_eq!(ioc::STATUS_V3, 0x80b8_b704);
    assert_eq!(ioc::STATUS, 0xc0d8_b704);
}

#[test]
fn cpu_bitmaps() {
    let mut set = [0u64; 5];
    for cpu in [0, 63, 64, 257, 319] {
        assert!(set_cpu(&mut set, cpu));
    }
    assert!(!set_cpu(&mut set, 320));
    assert_eq!(cpu_bits(&set).collect::<Vec<_>>(), [0, 63, 64, 257, 319]);
    assert_eq!(
        (cpu_words(0), cpu_words(1), cpu_words(64), cpu_words(65)),
        (0, 1, 1, 2)
    );
}

#[test]
fn cpu_sets() {
    let all = |_| true;
    let cpus = |c: &Config, set: &[u64], nr, online: &dyn Fn(u32) -> bool| {
        let mut v = Vec::new();
        c.session_cpus(set, nr, online, |cpu| v.push(cpu))
            .map(|()| v)
    };
    let mut c = Config::default();
    // Empty: every online CPU, also with CPU 1 offline; past MAX_CPUS
    // too with the current layout.
    assert_eq!(cpus(&c, &c.cpus, 4, &|cpu| cpu != 1), Ok(vec![0, 2, 3]));
    assert_eq!(cpus(&c, &c.cpus, 300, &all).map(|v| v.len()), Ok(300));
    assert_eq!(cpus(&c, &[], 4, &|_| false), Err(UapiError::Invalid));
    // An older layout cannot name them: an error, not 256 of them.
    c.wide = false;
    assert_eq!(cpus(&c, &c.cpus, 300, &all), Err(UapiError::TooManyCpus));
    assert_eq!(
        cpus(&c, &c.cpus, 300, &|cpu| cpu < 256).map(|v| v.len()),
        Ok(256)
    );
    // Given: each CPU must exist and be online.
    c.cpus[0] = 0b101;
    assert_eq!(cpus(&c, &c.cpus, 4, &all), Ok(vec![0, 2]));
    assert_eq!(cpus(&c, &c.cpus, 2, &all), Err(UapiError::Invalid));
    assert_eq!(
        cpus(&c, &c.cpus, 4, &|cpu| cpu != 2),
        Err(UapiError::Invalid)
    );
    assert_eq!(cpus(&c, &c.cpus, 300, &all), Ok(vec![0, 2]));
    // A wide bitmap (as read from cpus_ptr): nothing added unless all
    // of it is good.
    let wide = [1, 0, 0, 0, 1 << 3];
    let mut added = 0;
    assert_eq!(
        c.session_cpus(&wide, 259, all, |_| added += 1),
        Err(UapiError::Invalid)
    );
    assert_eq!(added, 0);
    assert_eq!(cpus(&c, &wide, 260, &all), Ok(vec![0, 259]));
}

#[test]
fn the_default_ring_fits_the_budget_past_256_cpus() {
    let c = Config::default();
    assert_eq!(c.ring_records_for(1), Some(RING_DEFAULT));
    assert_eq!(c.ring_records_for(256), Some(RING_DEFAULT));
    // 257 CPUs of 4096 records would take 64.25 MiB.
    assert_eq!(c.ring_records_for(257), Some(RING_DEFAULT / 2));
    assert_eq!(c.ring_records_for(512), Some(RING_DEFAULT / 2));
    assert_eq!(c.ring_records_for(1024), Some(1024));
    assert_eq!(c.ring_records_for(4096), Some(256));
    assert_eq!(c.ring_records_for(8192), Some(128));
    for n in [1, 255, 256, 257, 1000, 4096, 8192] {
        let r = u64::from(c.ring_records_for(n).unwrap());
        assert!(n as u64 * r * RECORD_SIZE as u64 <= RING_TOTAL_MAX_BYTES);
        assert!(r.is_power_of_two());
    }
    // A size asked for is kept, or refused: never shrunk.
    let asked = Config {
        ring_records: RING_DEFAULT,
        ..Config::default()
    };
    assert_eq!(asked.ring_records_for(256), Some(RING_DEFAULT));
    assert_eq!(asked.ring_records_for(257), None);
    let most = Config {
        ring_records: RING_MAX,
        ..Config::default()
    };
    assert_eq!(most.ring_records_for(1), Some(RING_MAX));
    assert_eq!(most.ring_records_for(2), None);
}

#[test]
fn config_round_trip_and_validation() {
    let mut c = Config::default();
    c.cpus[0] = 0b101;
    c.threshold_ns[Stage::Thread] = 50_000;
    let mut b = [0u8; CONFIG_SIZE];
    c.encode(&mut b);
    assert_eq!(Config::decode(&b), Ok(c));
    assert_eq!(cpu_bits(&c.cpus).collect::<Vec<_>>(), [0, 2]);
    // Irq-only, with an irq threshold: valid.
    let mut irq = Config {
        stages: Stage::Irq.bit(),
        ..Default::default()
    };
    irq.threshold_ns[Stage::Irq] = 10_000;
    irq.encode(&mut b);
    assert_eq!(Config::decode(&b), Ok(irq));
    assert!(!irq.thread_stage() && irq.measures(Stage::Irq) && !irq.measures(Stage::Response));
    c.encode(&mut b);
    assert_eq!(Config::decode(&b[..CONFIG_SIZE - 1]), Err(UapiError::Size));
    let mut bad = b;
    bad[4] = 9;
    assert_eq!(Config::decode(&bad), Err(UapiError::Version));
    for f in [
        |c: &mut Config| c.period_ns = PERIOD_MIN_NS - 1,
        |c: &mut Config| c.period_ns = PERIOD_MAX_NS + 1,
        |c: &mut Config| c.priority = 0,
        |c: &mut Config| c.priority = 100,
        |c: &mut Config| c.stages = Stage::User.bit(),
        |c: &mut Config| c.stages = Stage::Thread.bit(),
        |c: &mut Config| c.stages = Stage::Irq.bit() | Stage::User.bit(),
        |c: &mut Config| {
            c.stages = Stage::Irq.bit();
            c.threshold_ns[Stage::Thread] = 1;
        },
        |c: &mut Config| c.threshold_ns[Stage::User] = 1,
        |c: &mut Config| c.threshold_ns[Stage::Response] = 1,
        |c: &mut Config| c.stages |= 1 << 7,
        |c: &mut Config| c.flags = 1 << 9,
        |c: &mut Config| c.ring_records = 1000,
        // A deadline without the user stage, whose response it bounds.
        |c: &mut Config| c.deadline_ns = 500_000,
        // One longer than the period.
        |c: &mut Config| {
            c.stages |= Stage::User.bit();
            c.deadline_ns = c.period_ns + 1;
        },
    ] {
        let mut x = Config::default();
        f(&mut x);
        x.encode(&mut b);
        assert_eq!(Config::decode(&b), Err(UapiError::Invalid), "{x:?}");
    }
    // A deadline with the user stage; the first layout has none.
    let mut u = Config {
        stages: Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit(),
        deadline_ns: 500_000,
        ..Default::default()
    };
    u.encode(&mut b);
    assert_eq!(Config::decode(&b), Ok(u));
    // The second layout: no cpus_ptr, not wide.
    let mut b2 = [0u8; CONFIG_SIZE_V2];
    b2.copy_from_slice(&b[..CONFIG_SIZE_V2]);
    b2[..4].copy_from_slice(&(CONFIG_SIZE_V2 as u32).to_ne_bytes());
    u.wide = false;
    assert_eq!(Config::decode(&b2), Ok(u));
    let mut b1 = [0u8; CONFIG_SIZE_V1];
    b1.copy_from_slice(&b[..CONFIG_SIZE_V1]);
    b1[..4].copy_from_slice(&(CONFIG_SIZE_V1 as u32).to_ne_bytes());
    u.deadline_ns = 0;
    assert_eq!(Config::decode(&b1), Ok(u));
    // The set at cpus_ptr: a size that is a multiple of 8 up to the
    // bound, with no inline set.
    let p = Config {
        cpus_ptr: 0x1000,
        cpus_size: 40,
        ..Default::default()
    };
    p.encode(&mut b);
    assert_eq!(Config::decode(&b), Ok(p));
    for f in [
        |c: &mut Config| c.cpus_size = 0,
        |c: &mut Config| c.cpus_size = 12,
        |c: &mut Config| c.cpus_size = CPUS_SIZE_MAX + 8,
        |c: &mut Config| c.cpus[0] = 1,
        |c: &mut Config| c.cpus_ptr = 0,
    ] {
        let mut x = p;
        f(&mut x);
        x.encode(&mut b);
        assert_eq!(Config::decode(&b), Err(UapiError::Invalid), "{x:?}");
    }
    // Blame: a threshold only with the flag (the word was reserved, zero,
    // before), and only with a thread stage to explain.
    p.encode(&mut b);
    b[CONFIG_SIZE - 1] = 1;
    assert_eq!(Config::decode(&b), Err(UapiError::Invalid));
    let bl = Config {
        flags: CFG_BLAME,
        blame_us: 100,
        ..Default::default()
    };
    bl.encode(&mut b);
    assert_eq!(Config::decode(&b), Ok(bl));
    let irq_only = Config {
        stages: Stage::Irq.bit(),
        ..bl
    };
    irq_only.encode(&mut b);
    assert_eq!(Config::decode(&b), Err(UapiError::Invalid));
    // A first-layout size field on a buffer of the new size: refused.
    b[..4].copy_from_slice(&(CONFIG_SIZE_V1 as u32).to_ne_bytes());
    assert_eq!(Config::decode(&b), Err(UapiError::Size));
}

#[test]
fn blame_round_trips_with_names_and_refuses_bad_counts() {
    use blame::{
        Analysis,
        Event,
        Kind,
        Source,
        Tally,
        Tracker, //
    };
    assert_eq!(BLAME_ENTRY_SIZE, 96);
    assert_eq!((BLAME_SIZE_V1, BLAME_SIZE), (3312, 12536));
    assert_eq!((ioc::BLAME_V1, ioc::BLAME), (0xccf0_b709, 0xf0f8_b709));
    let mut t = Tracker::<8>::new();
    t.event(0, Event::Switch(Source::task(42, b"noise_fifo/1", 1, 96)));
    t.event(
        500,
        Event::Enter(Source::new(Kind::Timer, 0xffff_0000, b"")),
    );
    t.event(600, Event::Exit(Kind::Timer, 0xffff_0000));
    t.event(900, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
    let mut tally = Tally::new();
    let mut a = Analysis::explain(&t, 3, 100, 450, 850);
    a.stack[..2].copy_from_slice(&[0x10, 0x20]);
    a.stack_n = 2;
    tally.add(&a);
    let frame = |pc: u64, f: &mut [u8; BLAME_FRAME_LEN]| {
        f[..3].copy_from_slice(if pc == 0x10 { b"f+1" } else { b"g+2" });
    };
    let name = |s: &Source, name: &mut [u8]| {
        if s.kind == Kind::Timer {
            name.fill(0);
            name[..7].copy_from_slice(b"mod:sym");
        }
    };
    let req = BlameRequest::new;
    let b = Blame::from_tally(req(1, 0), &tally, name, frame);
    assert_eq!((b.rank, b.nr_worst), (0, 1));
    assert_eq!(b.nr_culprits, 3);
    assert_eq!(b.culprits[0].name_bytes(), b"noise_fifo/1");
    assert_eq!((b.culprits[0].policy, b.culprits[0].prio), (1, 96));
    assert_eq!(b.culprits[1].name_bytes(), b"mod:sym");
    // No kernel address: not the hrtimer's, not its callback's.
    assert_eq!((b.culprits[1].id, b.culprits[1].aux), (0, 0));
    let w = b.worst.unwrap();
    assert_eq!((w.nr_irq, w.nr_thread, w.thread_ns), (2, 3, 850));
    assert_eq!(w.thread[0].name_bytes(), b"noise_fifo/1");
    assert_eq!(w.nr_stack, 2);
    assert_eq!(
        (&w.stack[0][..4], &w.stack[1][..4]),
        (&b"f+1\0"[..], &b"g+2\0"[..])
    );
    let mut buf = [0u8; BLAME_SIZE];
    Blame::encode_request(req(5, 3), &mut buf);
    assert_eq!(Blame::decode_request(&buf), Ok(req(5, 3)));
    // A rank past those a tally keeps: refused.
    Blame::encode_request(req(5, blame::WORST as u32), &mut buf);
    assert_eq!(Blame::decode_request(&buf), Err(UapiError::Invalid));
    // Nothing explained: no worst.
    assert_eq!(
        Blame::from_tally(req(0, 0), &Tally::new(), |_, _| {}, |_, _| {}).worst,
        None
    );
    // A second, less late activation: rank 1, with its own parts; rank
    // 2 is none.
    let mut t2 = Tracker::<8>::new();
    t2.event(0, Event::Switch(Source::task(43, b"hog", 0, 0)));
    t2.event(700, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
    tally.add(&Analysis::explain(&t2, 4, 0, 100, 700));
    let second = Blame::from_tally(req(1, 1), &tally, name, frame);
    assert_eq!((second.rank, second.nr_worst), (1, 2));
    let w2 = second.worst.unwrap();
    assert_eq!((w2.seq, w2.thread_ns, w2.nr_stack), (4, 700, 0));
    assert_eq!(w2.thread[0].name_bytes(), b"hog");
    assert_eq!(
        second.culprits,
        Blame::from_tally(req(1, 0), &tally, name, frame).culprits
    );
    let none = Blame::from_tally(req(1, 2), &tally, name, frame);
    assert_eq!((none.rank, none.nr_worst, none.worst), (2, 2, None));
    // Counts past the arrays, an unknown kind, a worst of a rank past
    // those kept: refused.
    let mut tally = Tally::new();
    tally.add(&a);
    Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
    assert_eq!(Blame::decode(&buf), Ok(b));
    buf[12..16].copy_from_slice(&17u32.to_ne_bytes());
    assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
    Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
    buf[104..108].copy_from_slice(&9u32.to_ne_bytes());
    assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
    Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
    buf[BLAME_RANK_AT..BLAME_RANK_AT + 4].copy_from_slice(&1u32.to_ne_bytes());
    assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
    // More frames, or more worst ones, than the arrays hold.
    let at = BLAME_NR_WORST_AT - 4;
    for (at, n) in [(at, blame::STACK_DEPTH + 1), (at + 4, blame::WORST + 1)] {
        Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
        buf[at..at + 4].copy_from_slice(&(n as u32).to_ne_bytes());
        assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
    }
    assert_eq!(Blame::decode(&buf[..100]), Err(UapiError::Size));
    // A tool older than nr_worst (0 there in its request) gets 0 there,
    // as it checks; the answer of a module older than nr_worst (0
    // there, one worst kept) reads as one kept.
    let old = BlameRequest {
        tell_nr_worst: false,
        ..req(1, 0)
    };
    Blame::encode_request(old, &mut buf);
    assert_eq!(Blame::decode_request(&buf), Ok(old));
    Blame::encode_tally(old, &tally, name, frame, &mut buf);
    assert_eq!(&buf[BLAME_NR_WORST_AT..BLAME_NR_WORST_AT + 4], &[0; 4]);
    let b = Blame::decode(&buf).unwrap();
    assert_eq!((b.nr_worst, b.worst.is_some()), (1, true));
    // More kept than explained: refused.
    Blame::encode_tally(req(1, 0), &tally, name, frame, &mut buf);
    buf[BLAME_NR_WORST_AT..BLAME_NR_WORST_AT + 4].copy_from_slice(&2u32.to_ne_bytes());
    assert_eq!(Blame::decode(&buf), Err(UapiError::Invalid));
}

/// A Rust hrtimer callback's symbol as kallsyms has it (from a guest's
/// `rtrs_noise.ko`), longer than an entry's name.
pub const RUST_CALLBACK: &str = "rtrs_noise:_RNvXs1_NtNtNtCs1EKtwoKEMO2_6kernel4time7hrtimer3arcINtNtNtBb_4sync3arc3ArcNtCs7imXckM5qqB_15rtrs_noise_main8InjectorENtB7_18RawHrTimerCallback3runB1c_";

#[test]
fn blame_names_hrtimer_callbacks_whole_and_the_first_layout_cut() {
    use blame::{
        Analysis,
        Event,
        Kind,
        Source,
        Tally,
        Tracker, //
    };
    let timer = |id: u64, aux: u64| Source {
        aux,
        ..Source::new(Kind::Timer, id, b"")
    };
    // Two timers of one Rust callback, one of a C callback, a task.
    let mut t = Tracker::<16>::new();
    t.event(0, Event::Switch(Source::task(42, b"noise", 0, 0)));
    for (at, s) in [
        (100, timer(1, 0xa)),
        (300, timer(2, 0xa)),
        (500, timer(3, 0xc)),
    ] {
        t.event(at, Event::Enter(s));
        t.event(at + 100, Event::Exit(Kind::Timer, s.id));
    }
    t.event(900, Event::Switch(Source::task(7, b"rtlat/1", 1, 95)));
    let mut tally = Tally::new();
    tally.add(&Analysis::explain(&t, 1, 0, 250, 900));
    let calls = core::cell::Cell::new(0);
    let mut name = |s: &Source, buf: &mut [u8]| {
        if s.kind != Kind::Timer {
            return;
        }
        calls.set(calls.get() + 1);
        let n: &[u8] = if s.aux == 0xa {
            RUST_CALLBACK.as_bytes()
        } else {
            b"hrtimer_wakeup"
        };
        buf.fill(0);
        let k = n.len().min(buf.len() - 1);
        buf[..k].copy_from_slice(&n[..k]);
    };
    let mut buf = std::vec![0u8; BLAME_SIZE];
    Blame::encode_tally(
        BlameRequest::new(0, 0),
        &tally,
        &mut name,
        |_, _| {},
        &mut buf,
    );
    let b = Blame::decode(&buf).unwrap();
    // Each callback named once, whole, in the order first seen.
    assert_eq!((calls.get(), b.nr_long_names), (2, 2));
    let w = b.worst.unwrap();
    let all = || {
        b.culprits[..b.nr_culprits as usize]
            .iter()
            .chain(w.irq[..w.nr_irq as usize].iter())
            .chain(w.thread[..w.nr_thread as usize].iter())
    };
    let mut rust = 0;
    for e in all() {
        if e.kind != Kind::Timer as u32 {
            assert_eq!(e.aux, 0);
            assert_eq!(b.name_of(e), e.name_bytes());
            continue;
        }
        // No kernel address; the whole name by `aux`, the entry's cut.
        assert_eq!(e.id, 0);
        let whole = b.name_of(e);
        assert!(whole.starts_with(e.name_bytes()));
        if whole == RUST_CALLBACK.as_bytes() {
            rust += 1;
            assert_eq!(e.aux, 1);
            assert_eq!(e.name_bytes(), &whole[..BLAME_NAME_LEN - 1]);
        } else {
            assert_eq!((e.aux, whole), (2, &b"hrtimer_wakeup"[..]));
        }
    }
    // Both timers of the callback, in the ranking and in the parts.
    assert_eq!(rust, 4);
    // The first layout: the same answer, names cut, no whole ones.
    let mut v1 = std::vec![0u8; BLAME_SIZE_V1];
    Blame::encode_tally(
        BlameRequest::new(0, 0),
        &tally,
        &mut name,
        |_, _| {},
        &mut v1,
    );
    let old = Blame::decode(&v1).unwrap();
    assert_eq!(&v1[..4], &(BLAME_SIZE_V1 as u32).to_ne_bytes());
    assert_eq!(old.nr_long_names, 0);
    for (o, n) in old.culprits.iter().zip(b.culprits.iter()) {
        assert_eq!((o.aux, o.name), (0, n.name));
        assert_eq!(old.name_of(o), o.name_bytes());
    }
    // The request, in either layout; another size is not one.
    for len in [BLAME_SIZE, BLAME_SIZE_V1] {
        let mut r = std::vec![0u8; len];
        Blame::encode_request(BlameRequest::new(3, 1), &mut r);
        assert_eq!(Blame::decode_request(&r), Ok(BlameRequest::new(3, 1)));
    }
    let mut odd = std::vec![0u8; BLAME_SIZE_V1 + 8];
    Blame::encode_request(BlameRequest::new(3, 1), &mut odd);
    assert!(odd.iter().all(|&x| x == 0));
    // A whole name past those given, or on another kind, or more of
    // them than the array holds: refused.
    let aux_at = |k: usize| 104 + k * BLAME_ENTRY_SIZE + 24;
    let task = (0..b.nr_culprits as usize)
        .find(|&k| b.culprits[k].kind == Kind::Task as u32)
        .unwrap();
    let rusty = (0..b.nr_culprits as usize)
        .find(|&k| b.culprits[k].aux == 1)
        .unwrap();
    for (at, v) in [(aux_at(rusty), 3u64), (aux_at(task), 1)] {
        let mut bad = buf.clone();
        bad[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        assert_eq!(Blame::decode(&bad), Err(UapiError::Invalid));
    }
    let mut bad = buf.clone();
    bad[BLAME_SIZE_V1..BLAME_SIZE_V1 + 4]
        .copy_from_slice(&(BLAME_LONG_NAMES as u32 + 1).to_ne_bytes());
    assert_eq!(Blame::decode(&bad), Err(UapiError::Invalid));
}

#[test]
fn whole_names_run_out_after_the_first_callbacks() {
    let mut l = LongNames {
        keys: [0; BLAME_LONG_NAMES],
        n: 0,
    };
    for k in 0..BLAME_LONG_NAMES {
        assert_eq!(l.slot(0x100 + k as u64), Some((k, true)));
    }
    assert_eq!(l.slot(0x100 + 3), Some((3, false)));
    assert_eq!(l.slot(0x999), None);
    assert_eq!(l.n, BLAME_LONG_NAMES);
}

#[test]
fn the_measurement_apart_only_to_who_asks() {
    let mut t = blame::Tracker::<16>::new();
    t.event(
        0,
        blame::Event::Switch(blame::Source::task(42, b"noise", 0, 0)),
    );
    t.event(
        600,
        blame::Event::Switch(blame::Source::task(7, b"rtlat/1", 1, 95)),
    );
    let mut a = blame::Analysis::explain(&t, 1, 100, 100, 900);
    a.measured_by(7);
    let mut tally = blame::Tally::new();
    tally.add(&a);
    let kinds = |req: BlameRequest| {
        let b = Blame::from_tally(req, &tally, |_, _| {}, |_, _| {});
        let w = b.worst.unwrap();
        let all: std::vec::Vec<u32> = b.culprits[..b.nr_culprits as usize]
            .iter()
            .chain(w.thread[..w.nr_thread as usize].iter())
            .filter(|e| e.id == 7)
            .map(|e| e.kind)
            .collect();
        all
    };
    let measure = blame::Kind::Measure as u32;
    let task = blame::Kind::Task as u32;
    assert_eq!(kinds(BlameRequest::new(1, 0)), [measure, measure]);
    // A tool older than the kind (0 in `want`) is told a task, with
    // the task's policy and priority, as before.
    let old = BlameRequest {
        measure_apart: false,
        ..BlameRequest::new(1, 0)
    };
    assert_eq!(kinds(old), [task, task]);
    let mut buf = [0u8; BLAME_SIZE];
    Blame::encode_request(old, &mut buf);
    assert_eq!(Blame::decode_request(&buf), Ok(old));
    Blame::encode_request(BlameRequest::new(1, 0), &mut buf);
    assert_eq!(Blame::decode_request(&buf), Ok(BlameRequest::new(1, 0)));
    assert_eq!(
        &buf[BLAME_WANT_AT..BLAME_WANT_AT + 4],
        &BLAME_WANT_MEASURE.to_ne_bytes()
    );
    // An older tool's answer sent back as its next request (has_worst
    // 1 there) does not ask for the kind; an unknown bit is refused.
    let mut answer = [0u8; BLAME_SIZE];
    Blame::encode_tally(old, &tally, |_, _| {}, |_, _| {}, &mut answer);
    assert_eq!(
        &answer[BLAME_WANT_AT..BLAME_WANT_AT + 4],
        &1u32.to_ne_bytes()
    );
    assert_eq!(Blame::decode_request(&answer), Ok(old));
    answer[BLAME_WANT_AT..BLAME_WANT_AT + 4].copy_from_slice(&4u32.to_ne_bytes());
    assert_eq!(Blame::decode_request(&answer), Err(UapiError::Invalid));
}

#[test]
fn record_status_stats_round_trip() {
    let r = Record {
        cpu: 3,
        seq: 42,
        expected_ns: 1 << 40,
        lat_ns: [1, 2, -1, -1],
        missed: 2,
        flags: REC_NO_USER,
    };
    let mut b = [0u8; RECORD_SIZE];
    r.encode(&mut b);
    assert_eq!(Record::decode(&b), Ok(r));
    let s = Status {
        state: STATE_RUNNING,
        produced: 9,
        delivered: 7,
        dropped: 2,
        unattended: [0b10, 0, 0, 1],
        deadline_misses: 3,
        ..Default::default()
    };
    let mut b = [0u8; STATUS_SIZE];
    s.encode(&mut b);
    assert_eq!(Status::decode(&b), Ok(s));
    // The first layout: everything but `unattended`, its own size field.
    let mut b1 = [0u8; STATUS_SIZE_V1];
    s.encode(&mut b1);
    assert_eq!(b1[..4], (STATUS_SIZE_V1 as u32).to_ne_bytes());
    assert_eq!(b1[8..], b[8..STATUS_SIZE_V1]);
    let old = Status::decode(&b1).unwrap();
    assert_eq!(old.unattended, [0; CPU_WORDS]);
    assert_eq!(old.produced, 9);
    // The second: `unattended` too, no deadline misses.
    let mut b2 = [0u8; STATUS_SIZE_V2];
    s.encode(&mut b2);
    assert_eq!(b2[..4], (STATUS_SIZE_V2 as u32).to_ne_bytes());
    assert_eq!(b2[8..], b[8..STATUS_SIZE_V2]);
    let old = Status::decode(&b2).unwrap();
    assert_eq!((old.unattended, old.deadline_misses), (s.unattended, 0));
    // The third: deadline misses too, not the sets in full.
    let s = Status {
        cpus_ptr: 0x1000,
        unattended_ptr: 0x2000,
        cpu_words: 5,
        nr_cpu_ids: 260,
        ..s
    };
    let mut b = [0u8; STATUS_SIZE];
    s.encode(&mut b);
    assert_eq!(Status::decode(&b), Ok(s));
    let mut b3 = [0u8; STATUS_SIZE_V3];
    s.encode(&mut b3);
    assert_eq!(b3[8..], b[8..STATUS_SIZE_V3]);
    let old = Status::decode(&b3).unwrap();
    assert_eq!((old.deadline_misses, old.cpu_words), (3, 0));
    let st = Stats {
        cpu: 1,
        stage: 2,
        count: 5,
        percentiles: [1, 2, 3, 4, 5, 6, 7],
        ..Default::default()
    };
    let mut b = [0u8; STATS_SIZE];
    st.encode(&mut b);
    assert_eq!(Stats::decode(&b), Ok(st));
    assert_eq!(
        Stats::decode_request(&b).map(|s| (s.cpu, s.stage)),
        Ok((1, 2))
    );
}
