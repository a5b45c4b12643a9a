// SPDX-License-Identifier: GPL-2.0

//! KUnit suites of the shared RT-safe layer (`rust/`), run when this module is
//! loaded (`CONFIG_KUNIT=y`), plus a stress test that hammers a raw spinlock
//! and the record ring from hard-mode hrtimers and RT threads on every CPU.
//!
//! Results: the kernel log (KTAP) and `/sys/kernel/debug/kunit/<suite>/results`.

use kernel::prelude::*;

#[path = "../../rust/rtrs.rs"]
mod rtrs;

module! {
    type: RtrsLayerTest,
    name: "rtrs_layer_test",
    authors: ["The rtrs developers"],
    description: "KUnit tests and stress test of the rtrs RT-safe layer",
    license: "GPL",
}

struct RtrsLayerTest;

impl kernel::Module for RtrsLayerTest {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(RtrsLayerTest)
    }
}

#[kunit_tests(rtrs_layer)]
mod tests {
    use crate::rtrs::{
        blame::{
            Event,
            Kind,
            Share,
            Tracker, //
        },
        context::{
            CpuPinned,
            HardIrq,
            HardTimerCallback,
            IrqsOff,
            Sleepable, //
        },
        cpu::cpu_online,
        kthread::{
            RtThread,
            RtThreadFn,
            ThreadContext, //
        },
        percpu::{
            CpuSetIrq,
            PerCpu,
            PerCpuIrq,
            PerCpuLocked, //
        },
        preempt::{
            irqs_disabled,
            preemptible,
            with_irqs_off,
            MigrateGuard,
            PreemptGuard, //
        },
        raw_spinlock::{
            RawSpinLock,
            RawSpinLockIrq, //
        },
        ring::{
            new_kring,
            KRing, //
        },
        sync::TaskMutex,
        task::current_tid,
        time::ktime_ns,
        tracepoint::{
            ProbeHandler,
            Probes, //
        },
    };
    use kernel::{
        alloc::flags::GFP_KERNEL_ACCOUNT,
        prelude::*,
        sync::{
            atomic::{
                Atomic,
                Relaxed, //
            },
            Arc,
            ArcBorrow, //
        },
        time::{
            hrtimer::{
                HrTimer,
                HrTimerCallbackContext,
                HrTimerPointer,
                HrTimerRestart,
                RelativeHardMode, //
            },
            Delta,
            Instant,
            Monotonic, //
        },
    };

    #[pin_data]
    struct Counted {
        #[pin]
        plain: RawSpinLock<u64>,
        #[pin]
        irq: RawSpinLockIrq<u64>,
        #[pin]
        mutex: TaskMutex<u64>,
    }

    fn counted() -> Result<Pin<KBox<Counted>>> {
        KBox::pin_init(
            pin_init!(Counted {
                plain <- crate::new_raw_spinlock!(0),
                irq <- crate::new_raw_spinlock_irq!(0),
                mutex <- crate::new_task_mutex!(0),
            }),
            GFP_KERNEL,
        )
    }

    /// A kernel type embedded in a Rust struct (by the layer, or by the
    /// kernel crate's locks, condition variables and timers), as
    /// `rtrs_test_c_layout` names it.
    #[repr(u32)]
    #[derive(Clone, Copy, Debug)]
    enum CType {
        RawSpinlock = 0,
        Spinlock = 1,
        Mutex = 2,
        LocalLock = 3,
        WaitQueueHead = 4,
        Hrtimer = 5,
        LockClassKey = 6,
    }

    extern "C" {
        fn rtrs_test_c_layout(t: CType, align: *mut usize) -> usize;
    }

    /// The size and alignment of `T`, the binding of `t`, against C's.
    fn same_layout<T>(t: CType) -> bool {
        let mut align = 0usize;
        // SAFETY: `align` is a valid place for the answer; `t` is one of
        // the C enum's values (the same order).
        let size = unsafe { rtrs_test_c_layout(t, &mut align) };
        let rust = (core::mem::size_of::<T>(), core::mem::align_of::<T>());
        if rust != (size, align) {
            pr_err!(
                "{:?}: the Rust binding is {} bytes (align {}), C's {} (align {})\n",
                t,
                rust.0,
                rust.1,
                size,
                align
            );
        }
        rust == (size, align)
    }

    /// Every kernel type the layer embeds has the layout C gives it: a
    /// binding smaller than C's struct would let C write past it. (Not
    /// so for `task_struct` in the 7.3 debug kernels: bindgen's is 5248
    /// bytes, with `pid` at 1096, C's 5312, at 1144. The layer only
    /// points to tasks and reads their ids through the shim.)
    #[test]
    fn embedded_kernel_types_have_the_layout_c_gives_them() -> Result {
        use kernel::bindings;
        let all = [
            same_layout::<bindings::raw_spinlock_t>(CType::RawSpinlock),
            same_layout::<bindings::spinlock_t>(CType::Spinlock),
            same_layout::<bindings::mutex>(CType::Mutex),
            same_layout::<bindings::local_lock_t>(CType::LocalLock),
            same_layout::<bindings::wait_queue_head>(CType::WaitQueueHead),
            same_layout::<bindings::hrtimer>(CType::Hrtimer),
            same_layout::<bindings::lock_class_key>(CType::LockClassKey),
        ];
        assert!(all.iter().all(|&same| same));
        Ok(())
    }

    #[test]
    fn raw_spinlock_excludes_and_disables_preemption() -> Result {
        let c = counted()?;
        {
            let mut g = c.plain.lock();
            *g += 1;
            assert!(!preemptible());
            assert!(c.plain.try_lock().is_none());
        }
        assert!(preemptible());
        assert!(c.plain.try_lock().is_some());
        assert_eq!(*c.plain.lock(), 1);
        Ok(())
    }

    #[test]
    fn raw_spinlock_irq_disables_interrupts() -> Result {
        let c = counted()?;
        assert!(!irqs_disabled());
        {
            let mut g = c.irq.lock();
            *g += 1;
            // On PREEMPT_RT too: this is a raw lock, unlike `SpinLockIrq`.
            assert!(irqs_disabled());
        }
        assert!(!irqs_disabled());
        let g = c.irq.try_lock();
        assert!(g.is_some());
        assert!(irqs_disabled());
        drop(g);
        assert!(!irqs_disabled());
        Ok(())
    }

    #[test]
    fn percpu_irq_is_this_cpus_with_interrupts_off() -> Result {
        let mut p = PerCpuIrq::new(|cpu| u64::from(cpu) * 10)?;
        let (off, mine, nested) = with_irqs_off(|irqs| {
            let cpu = u64::from(irqs.cpu());
            let mine = p.with(irqs, |v| *v) == Some(cpu * 10);
            // A nested call on the same slot is refused, not aliased.
            let nested = p.with(irqs, |_| p.with(irqs, |v| *v));
            p.with(irqs, |v| *v += 1);
            (irqs_disabled(), mine, nested)
        });
        assert!(off);
        assert!(mine);
        assert_eq!(nested, Some(None));
        assert!(!irqs_disabled());
        let mut changed = 0;
        for (cpu, v) in p.iter_mut() {
            if *v != u64::from(cpu) * 10 {
                changed += 1;
            }
        }
        assert_eq!(changed, 1);
        Ok(())
    }

    #[test]
    fn cpu_set_irq_is_its_cpus_only() -> Result {
        let cpus = online_cpus()?;
        let Some((&first, rest)) = cpus.split_first() else {
            return Ok(());
        };
        let p = CpuSetIrq::<u64>::new_zeroed(&[first], GFP_KERNEL_ACCOUNT)?;
        assert!(p.contains(first));
        for &cpu in rest {
            assert!(!p.contains(cpu));
        }
        assert!(!p.contains(kernel::cpu::nr_cpu_ids()));
        let got = with_irqs_off(|irqs| (irqs.cpu(), p.with(irqs, |v| *v)));
        assert_eq!(got.1, (got.0 == first).then_some(0));
        assert!(CpuSetIrq::<u64>::new_zeroed(&[kernel::cpu::nr_cpu_ids()], GFP_KERNEL).is_err());
        Ok(())
    }

    /// The online CPUs.
    fn online_cpus() -> Result<KVec<u32>> {
        let mut cpus = KVec::new();
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if cpu_online(cpu) {
                cpus.push(cpu, GFP_KERNEL)?;
            }
        }
        Ok(cpus)
    }

    /// Counts the events of one CPU and those of the others.
    struct Where {
        cpu: u32,
        mine: Atomic<u64>,
        others: Atomic<u64>,
    }

    impl ProbeHandler for Where {
        fn event(&self, irqs: &IrqsOff, _at: i64, _event: Event) {
            if irqs.cpu() == self.cpu {
                self.mine.fetch_add(1, Relaxed);
            } else {
                self.others.fetch_add(1, Relaxed);
            }
        }
    }

    /// Sleeps on its CPU a few times: context switches there.
    struct Napper {
        done: Atomic<u64>,
    }

    impl RtThreadFn for Napper {
        fn run(this: &Self, _ctx: &ThreadContext<'_>) {
            for _ in 0..10 {
                kernel::time::delay::fsleep(Delta::from_millis(1));
            }
            this.done.fetch_add(1, Relaxed);
        }
    }

    /// The events of CPUs `a` and `b` (`a`'s, the others') while a thread
    /// naps on each, the probes attached for `set`.
    fn events_while_napping(a: u32, b: u32, set: &[u32]) -> Result<(u64, u64, bool)> {
        // SAFETY: KUnit runs test cases in a sleepable kernel thread.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        let w = Arc::new(
            Where {
                cpu: a,
                mine: Atomic::new(0),
                others: Atomic::new(0),
            },
            GFP_KERNEL,
        )?;
        let nap = Arc::new(
            Napper {
                done: Atomic::new(0),
            },
            GFP_KERNEL,
        )?;
        // Nothing is asserted while the probes are attached: a failed
        // assertion ends the test's thread without dropping them.
        let probes = Probes::attach(w.clone(), set, ctx)?;
        let ta = RtThread::new_on_cpu(nap.clone(), a, 0, c"rtrs_nap/%u");
        let tb = RtThread::new_on_cpu(nap.clone(), b, 0, c"rtrs_nap/%u");
        let done = wait_for(|| nap.done.load(Relaxed) == 2);
        drop((ta, tb));
        drop(probes);
        Ok((w.mine.load(Relaxed), w.others.load(Relaxed), done))
    }

    #[test]
    fn probes_leave_out_cpus_outside_their_set() -> Result {
        let cpus = online_cpus()?;
        let [a, b, ..] = cpus[..] else {
            // (One CPU online: there is no other to leave out.)
            return Ok(());
        };
        // Attached for both, each sees what its napping thread does.
        let (mine, others, done) = events_while_napping(a, b, &[a, b])?;
        assert!(done);
        assert!(mine > 0);
        assert!(others > 0);
        // Attached for `a` only, `b`'s probes return at once: its napping
        // thread's switches reach no handler.
        let (mine, others, done) = events_while_napping(a, b, &[a])?;
        assert!(done);
        assert!(mine > 0);
        assert_eq!(others, 0);
        Ok(())
    }

    /// Each CPU's timeline of what ran, as the tracepoint probes feed it.
    struct Timeline {
        cpus: PerCpuIrq<Tracker<64>>,
        events: Atomic<u64>,
    }

    impl ProbeHandler for Timeline {
        fn event(&self, irqs: &IrqsOff, at: i64, event: Event) {
            self.cpus.with(irqs, |t| t.event(at, event));
            self.events.fetch_add(1, Relaxed);
        }
    }

    #[test]
    fn probes_see_what_ran_and_stop_when_dropped() -> Result {
        // SAFETY: KUnit runs test cases in a sleepable kernel thread.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        let tl = Arc::new(
            Timeline {
                cpus: PerCpuIrq::new(|_| Tracker::new())?,
                events: Atomic::new(0),
            },
            GFP_KERNEL,
        )?;
        let me = u64::try_from(current_tid()).unwrap_or(0);
        let mut shares = [Share::EMPTY; 8];
        // Nothing is asserted while the probes are attached: a failed
        // assertion ends the test's thread without dropping them.
        let (seen, n) = {
            let probes = Probes::attach(tl.clone(), &online_cpus()?, ctx)?;
            let t0 = ktime_ns();
            // Sleeping gives the CPU away: switched out, then back in.
            kernel::time::delay::fsleep(Delta::from_millis(20));
            let seen = with_irqs_off(|irqs| {
                let t1 = ktime_ns();
                probes.handler().cpus.with(irqs, |t| {
                    let ex = t.explain(t0, t1, &mut shares);
                    (ex, t.transitions(), t1 - t0, t.current())
                })
            });
            drop(probes);
            (seen, tl.events.load(Relaxed))
        };
        let (ex, transitions, total, now) = seen.ok_or(EBUSY)?;
        assert!(n > 0);
        assert!(transitions > 0);
        let sum: u64 = shares[..ex.n].iter().map(|s| s.ns).sum::<u64>() + ex.other_ns;
        assert_eq!(sum, total as u64);
        assert!(ex.n > 0);
        // This thread was switched in on this CPU when its sleep ended (or
        // since), and runs: what the CPU's timeline says runs now. (Its
        // share of the interval is the smallest, and may have gone to
        // `other_ns` on a busy machine.)
        assert!(now.kind == Kind::Task && now.id == me);
        // Unregistered: no probe runs any more.
        kernel::time::delay::fsleep(Delta::from_millis(10));
        assert_eq!(tl.events.load(Relaxed), n);
        Ok(())
    }

    #[test]
    fn task_mutex_needs_a_token() -> Result {
        let c = counted()?;
        // SAFETY: KUnit runs test cases in a sleepable kernel thread.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        *c.mutex.lock(ctx) += 2;
        assert_eq!(*c.mutex.lock(ctx), 2);
        Ok(())
    }

    #[test]
    fn task_mutex_lock_interruptible_takes_the_same_lock() -> Result {
        let c = counted()?;
        // SAFETY: KUnit runs test cases in a sleepable kernel thread.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        {
            let mut g = c.mutex.lock_interruptible(ctx)?;
            *g += 3;
            assert!(c.mutex.try_lock(ctx).is_none());
        }
        assert_eq!(*c.mutex.lock(ctx), 3);
        Ok(())
    }

    #[test]
    fn guards_pin_the_cpu() -> Result {
        {
            let g = PreemptGuard::new();
            assert!(!preemptible());
            let cpu = g.cpu();
            assert!(cpu_online(cpu));
        }
        assert!(preemptible());
        {
            let g = MigrateGuard::new();
            // Migration is disabled but the task stays preemptible.
            assert!(preemptible());
            let cpu = g.cpu();
            assert_eq!(cpu, g.cpu());
        }
        Ok(())
    }

    #[test]
    fn percpu_slots_are_per_cpu() -> Result {
        let p = PerCpu::new(|cpu| Atomic::new(u64::from(cpu) * 10))?;
        for (cpu, slot) in p.iter() {
            assert_eq!(slot.load(Relaxed), u64::from(cpu) * 10);
        }
        assert!(p.get(u32::MAX).is_none());
        let g = PreemptGuard::new();
        assert_eq!(p.this_cpu(&g).load(Relaxed), u64::from(g.cpu()) * 10);
        p.this_cpu(&g).fetch_add(1, Relaxed);
        assert_eq!(
            p.get(g.cpu()).map(|s| s.load(Relaxed)),
            Some(u64::from(g.cpu()) * 10 + 1)
        );
        Ok(())
    }

    #[test]
    fn ring_accounts_for_every_record() -> Result {
        assert!(new_kring::<u64>(3).is_err());
        let r: KRing<u64> = new_kring(8)?;
        for i in 0..10u64 {
            // SAFETY: This test is the only producer and consumer.
            unsafe { r.push(i) };
        }
        let mut n = 0;
        // SAFETY: As above.
        while let Some(v) = unsafe { r.pop() } {
            assert_eq!(v, n);
            n += 1;
        }
        assert_eq!(n, 8);
        let c = r.counters();
        assert_eq!((c.produced, c.delivered, c.dropped), (10, 8, 2));
        Ok(())
    }

    /// Threads on every CPU bump their CPU's slot under the local lock.
    struct Bumper {
        counts: PerCpuLocked<u64>,
        done: Atomic<u64>,
    }

    impl RtThreadFn for Bumper {
        fn run(this: &Self, ctx: &ThreadContext<'_>) {
            for _ in 0..2000 {
                *this.counts.lock(ctx.sleepable()) += 1;
            }
            this.done.fetch_add(1, Relaxed);
        }
    }

    #[test]
    fn percpu_locked_gives_exclusive_access() -> Result {
        let b = Arc::new(
            Bumper {
                counts: crate::new_percpu_locked!(|_| 0u64)?,
                done: Atomic::new(0),
            },
            GFP_KERNEL,
        )?;
        let mut threads = KVec::new();
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if cpu_online(cpu) {
                // Two threads per CPU contend for the same slot.
                for _ in 0..2 {
                    threads.push(
                        RtThread::new_on_cpu(b.clone(), cpu, 0, c"rtrs_bump/%u")?,
                        GFP_KERNEL,
                    )?;
                }
            }
        }
        let n = threads.len() as u64;
        let done = wait_for(|| b.done.load(Relaxed) == n);
        drop(threads);
        assert!(done);
        let mut b = Arc::into_unique_or_drop(b).ok_or(EBUSY)?;
        let total: u64 = b.counts.iter_mut().map(|(_, c)| *c).sum();
        assert_eq!(total, n * 2000);
        Ok(())
    }

    /// Two containers are two lockdep classes: nesting their locks (in one
    /// order) is not reported as recursive locking, which would be a splat
    /// and fail the run.
    #[test]
    fn percpu_locked_nest_by_class() -> Result {
        let outer = crate::new_percpu_locked!(|_| 0u64, "rtrs_test_outer")?;
        let inner = crate::new_percpu_locked!(|_| 0u64, "rtrs_test_inner")?;
        // SAFETY: A KUnit test case runs in task context.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        {
            let mut a = outer.lock(ctx);
            let mut b = inner.lock(ctx);
            *a += 1;
            *b += 1;
        }
        let a = *outer.lock(ctx);
        let b = *inner.lock(ctx);
        assert_eq!((a, b), (1, 1));
        Ok(())
    }

    /// Data of the thread test: the thread reports where and how it runs.
    struct Probe {
        cpu_seen: Atomic<u64>,
        wakeups: Atomic<u64>,
        kick: Atomic<u64>,
    }

    impl RtThreadFn for Probe {
        fn run(this: &Self, ctx: &ThreadContext<'_>) {
            let mut seen = 0;
            while !ctx.should_stop() {
                if !ctx.wait_until(|| this.kick.load(Relaxed) != seen) {
                    break;
                }
                seen = this.kick.load(Relaxed);
                let g = MigrateGuard::new();
                this.cpu_seen.store(u64::from(g.cpu()), Relaxed);
                drop(g);
                this.wakeups.fetch_add(1, Relaxed);
            }
        }
    }

    /// Waits up to 30 s for `what`. Callers stop their threads and timers
    /// before asserting on the result: a failed KUnit assertion ends the
    /// test at once, without running destructors, and a thread left running
    /// would outlive the module.
    fn wait_for(what: impl Fn() -> bool) -> bool {
        let start = Instant::<Monotonic>::now();
        while start.elapsed().as_millis() < 30_000 {
            if what() {
                return true;
            }
            kernel::time::delay::fsleep(Delta::from_millis(1));
        }
        what()
    }

    #[test]
    fn rt_thread_runs_on_its_cpu_and_stops() -> Result {
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if !cpu_online(cpu) {
                continue;
            }
            let probe = Arc::new(
                Probe {
                    cpu_seen: Atomic::new(u64::MAX),
                    wakeups: Atomic::new(0),
                    kick: Atomic::new(0),
                },
                GFP_KERNEL,
            )?;
            let t = RtThread::new_on_cpu(probe.clone(), cpu, 10, c"rtrs_test/%u")?;
            let mut woke = true;
            for k in 1..=3u64 {
                probe.kick.store(k, Relaxed);
                t.wake();
                woke = woke && wait_for(|| probe.wakeups.load(Relaxed) >= k);
            }
            drop(t);
            assert!(woke);
            assert_eq!(probe.cpu_seen.load(Relaxed), u64::from(cpu));
        }
        assert!(RtThread::new_on_cpu(
            Arc::new(
                Probe {
                    cpu_seen: Atomic::new(0),
                    wakeups: Atomic::new(0),
                    kick: Atomic::new(0)
                },
                GFP_KERNEL
            )?,
            0,
            100,
            c"rtrs_test/%u"
        )
        .is_err());
        Ok(())
    }

    /// A hard-IRQ timer that checks its context and feeds a ring and a lock.
    #[pin_data]
    struct Beat {
        #[pin]
        timer: HrTimer<Self>,
        #[pin]
        total: RawSpinLockIrq<u64>,
        ring: KRing<u64>,
        fired: Atomic<u64>,
        in_hardirq: Atomic<u64>,
        limit: u64,
        per_cpu: PerCpu<Atomic<u64>>,
    }

    impl HardTimerCallback for Beat {
        type Pointer<'a> = Arc<Self>;

        fn run(
            this: ArcBorrow<'_, Self>,
            mut ctx: HrTimerCallbackContext<'_, Self>,
            irq: &HardIrq,
        ) -> HrTimerRestart {
            if crate::rtrs::preempt::in_hardirq() && irqs_disabled() {
                this.in_hardirq.fetch_add(1, Relaxed);
            }
            this.per_cpu.this_cpu(irq).fetch_add(1, Relaxed);
            let n = this.fired.fetch_add(1, Relaxed) + 1;
            // A raw lock shared with task context (which uses irqsave).
            *this.total.lock() += 1;
            // SAFETY: The timer callback is the only producer of this ring and
            // never runs concurrently with itself.
            unsafe { this.ring.push(n) };
            if n >= this.limit {
                return HrTimerRestart::NoRestart;
            }
            ctx.forward_now(Delta::from_micros(200));
            HrTimerRestart::Restart
        }
    }

    crate::hard_timer! {
        impl for Beat { mode: RelativeHardMode<Monotonic>, field: self.timer }
    }

    /// Consumer thread of the stress test: drains the ring, checks order.
    struct Drain {
        beat: Arc<Beat>,
        got: Atomic<u64>,
        bad: Atomic<u64>,
        last: Atomic<u64>,
        contended: Atomic<u64>,
    }

    impl RtThreadFn for Drain {
        fn run(this: &Self, ctx: &ThreadContext<'_>) {
            while !ctx.should_stop() {
                // SAFETY: This thread is the only consumer of the ring.
                while let Some(v) = unsafe { this.beat.ring.pop() } {
                    if v <= this.last.load(Relaxed) {
                        this.bad.fetch_add(1, Relaxed);
                    }
                    this.last.store(v, Relaxed);
                    this.got.fetch_add(1, Relaxed);
                }
                // Contend with the hard-IRQ side on the raw lock.
                *this.beat.total.lock() += 1;
                this.contended.fetch_add(1, Relaxed);
                kernel::time::delay::fsleep(Delta::from_micros(50));
            }
        }
    }

    #[test]
    fn stress_hard_timer_ring_and_raw_lock() -> Result {
        const LIMIT: u64 = 10_000; // 200 µs period: 2 s of beats.
        let beat = Arc::pin_init(
            try_pin_init!(Beat {
                timer <- HrTimer::new(),
                total <- crate::new_raw_spinlock_irq!(0),
                ring: new_kring(256)?,
                fired: Atomic::new(0),
                in_hardirq: Atomic::new(0),
                limit: LIMIT,
                per_cpu: PerCpu::new(|_| Atomic::new(0))?,
            }),
            GFP_KERNEL,
        )?;
        let mut drains = KVec::new();
        for cpu in 0..kernel::cpu::nr_cpu_ids() {
            if cpu_online(cpu) && drains.is_empty() {
                let d = Arc::new(
                    Drain {
                        beat: beat.clone(),
                        got: Atomic::new(0),
                        bad: Atomic::new(0),
                        last: Atomic::new(0),
                        contended: Atomic::new(0),
                    },
                    GFP_KERNEL,
                )?;
                drains.push(
                    RtThread::new_on_cpu(d, cpu, 50, c"rtrs_drain/%u")?,
                    GFP_KERNEL,
                )?;
            }
        }
        let start = Instant::<Monotonic>::now();
        let handle = beat.clone().start(Delta::from_micros(200));
        let fired = wait_for(|| beat.fired.load(Relaxed) >= LIMIT);
        // Let the consumer drain what is left.
        let drained = wait_for(|| beat.ring.is_empty());
        drop(handle);
        let d = drains[0].data().clone();
        drop(drains);
        assert!(fired);
        assert!(drained);
        let elapsed = start.elapsed();
        pr_info!(
            "stress: {} beats in {} ms, {} lock rounds from task context\n",
            beat.fired.load(Relaxed),
            elapsed.as_millis(),
            d.contended.load(Relaxed)
        );

        let c = beat.ring.counters();
        assert_eq!(beat.fired.load(Relaxed), LIMIT);
        assert_eq!(beat.in_hardirq.load(Relaxed), LIMIT);
        assert_eq!(c.produced, LIMIT);
        assert_eq!(c.produced, c.delivered + c.dropped);
        assert_eq!(d.got.load(Relaxed), c.delivered);
        assert_eq!(d.bad.load(Relaxed), 0);
        let per_cpu: u64 = beat.per_cpu.iter().map(|(_, a)| a.load(Relaxed)).sum();
        assert_eq!(per_cpu, LIMIT);
        assert_eq!(*beat.total.lock(), LIMIT + d.contended.load(Relaxed));
        Ok(())
    }
}
