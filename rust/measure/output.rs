// SPDX-License-Identifier: GPL-2.0

//! The output side of a session: its state machine (idle, configured,
//! running, stopped, and why), its channels and its status.

use kernel::{
    bindings,
    prelude::*,
    str::CStr,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        Arc, //
    },
};

use crate::rtrs::{
    context::Sleepable,
    raw_spinlock::RawSpinLockIrq,
    sync::TaskMutex,
    time::ktime_ns,
    trace,
    uapi::{
        self,
        Config,
        Stage,
        State,
        Status,
        StopReason, //
    },
};

use super::{
    Channel,
    Readers, //
};

/// One of a session's CPU sets, as STATUS reports it.
#[derive(Clone, Copy)]
pub(crate) enum CpuSet {
    /// The session's channels.
    Session,
    /// Those whose CPU went offline.
    Offline,
    /// Those whose latest activation found no user waiter.
    Unattended,
}

impl CpuSet {
    /// True if channel `c` is in this set.
    fn has(self, c: &Channel) -> bool {
        match self {
            Self::Session => true,
            Self::Offline => c.went_offline.load(Relaxed),
            Self::Unattended => c.unattended.load(Relaxed),
        }
    }
}

/// Why a threshold tripped.
#[derive(Clone, Copy)]
pub(super) struct Trip {
    pub(super) chan: u32,
    pub(super) stage: Stage,
    pub(super) value: u64,
    pub(super) seq: u64,
}

/// The output side of a session: its channels, state and readers.
#[pin_data]
pub(crate) struct Output {
    pub(crate) config: Config,
    pub(crate) chans: KVec<Channel>,
    state: Atomic<u32>,
    stop_reason: Atomic<u32>,
    /// What tripped; its lock also makes a stop's state and reason change
    /// together, as [`Self::status`] reads them.
    #[pin]
    trip: RawSpinLockIrq<Option<Trip>>,
    started_ns: Atomic<i64>,
    /// Set when the source has stopped for good: no record will come.
    finished: Atomic<bool>,
    /// The device's readers (they outlive the session).
    pub(super) readers: Arc<Readers>,
    /// Serialises `read()` callers while they take records (the rings have a
    /// single consumer); never held while a reader sleeps for records. It
    /// holds the channel the next read serves first.
    #[pin]
    pub(super) read_lock: TaskMutex<usize>,
    /// Written to the trace buffer when a threshold trips.
    trip_marker: &'static CStr,
    /// Wake the readers for every record (a device that measures the user
    /// stage in `read()`), not in batches.
    pub(super) wake_each: bool,
    /// When the readers were last woken (ns).
    pub(super) last_wake: Atomic<i64>,
}

impl Output {
    pub(crate) fn new(
        config: Config,
        chans: KVec<Channel>,
        trip_marker: &'static CStr,
        wake_each: bool,
        readers: Arc<Readers>,
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            config,
            chans,
            state: Atomic::new(State::Configured as u32),
            stop_reason: Atomic::new(StopReason::None as u32),
            trip <- crate::new_raw_spinlock_irq!(None),
            started_ns: Atomic::new(0),
            finished: Atomic::new(false),
            readers,
            read_lock <- crate::new_task_mutex!(0),
            trip_marker,
            wake_each,
            last_wake: Atomic::new(0),
        })
    }

    /// The session's state. `state` is written only by [`Self::new`] and
    /// [`Self::transition`], with [`State`] values: the fallback is never
    /// taken.
    pub(crate) fn state(&self) -> State {
        State::from_raw(self.state.load(Relaxed)).unwrap_or(State::Idle)
    }

    pub(crate) fn running(&self) -> bool {
        self.state() == State::Running
    }

    /// Moves `state` from `from` to `to`; false if it was not `from`.
    fn transition(&self, from: State, to: State) -> bool {
        self.state.cmpxchg(from as u32, to as u32, Relaxed).is_ok()
    }

    /// Configured -> running; `EBUSY` from any other state.
    pub(crate) fn set_running(&self) -> Result {
        // The start time is that of the START that was accepted: set under
        // the trip lock, as `status` reads it, and only on success.
        let _g = self.trip.lock();
        if !self.transition(State::Configured, State::Running) {
            return Err(EBUSY);
        }
        self.started_ns.store(ktime_ns(), Relaxed);
        Ok(())
    }

    /// Marks the session stopped for `reason` (the first reason wins). The
    /// source stops its producers itself. Wakes no one: what a reader or
    /// poller waits for (a record, the stream's end) does not change here.
    /// A stop must not take the readers' lock either: a producer's kernel
    /// thread may hold it while a task of a higher priority keeps it off
    /// its CPU, and the stop would wait for that task.
    pub(crate) fn set_stopped(&self, reason: StopReason) {
        self.stop_with(reason, None);
    }

    /// Moves the session to stopped for `reason`, from running or (without
    /// a trip) configured, and records `trip`; true if this call stopped it
    /// (the first reason wins). The state, its reason and the trip change
    /// together under the trip lock, as [`Self::status`] reads them. Any
    /// context; wakes no one.
    fn stop_with(&self, reason: StopReason, trip: Option<Trip>) -> bool {
        let mut g = self.trip.lock();
        let stopped = self.transition(State::Running, State::Stopped)
            || (trip.is_none() && self.transition(State::Configured, State::Stopped));
        if stopped {
            self.stop_reason.store(reason as u32, Relaxed);
            if trip.is_some() {
                *g = trip;
            }
        }
        stopped
    }

    /// The source has stopped for good and every record is in the rings:
    /// the stream may end.
    pub(crate) fn set_finished(&self, ctx: &Sleepable) {
        self.finished.store(true, Release);
        self.notify_readers(ctx);
    }

    /// True once [`Self::set_finished`] was called.
    pub(crate) fn finished(&self) -> bool {
        self.finished.load(Acquire)
    }

    /// Wakes the readers (and pollers). Task context: the wait queue's lock
    /// sleeps on PREEMPT_RT, hence the token.
    pub(crate) fn notify_readers(&self, ctx: &Sleepable) {
        self.last_wake.store(ktime_ns(), Relaxed);
        self.readers.notify(ctx);
    }

    pub(crate) fn chan(&self, id: u32) -> Option<&Channel> {
        self.chans.iter().find(|c| c.id == id)
    }

    /// Stops a running session for a threshold trip and records why; true
    /// if it was running (only the first of trips racing on several
    /// channels counts). Any context; wakes no one.
    pub(super) fn trip(&self, t: Trip) -> bool {
        if !self.stop_with(StopReason::Threshold, Some(t)) {
            return false;
        }
        trace::trace_marker(self.trip_marker);
        if self.config.flags & uapi::CFG_TRACING_OFF != 0 {
            // SAFETY: `tracing_off` has no precondition.
            unsafe { bindings::tracing_off() };
        }
        true
    }

    /// Resets every statistic (sampling continues).
    pub(crate) fn reset(&self) {
        for c in self.chans.iter() {
            for s in c.stats.iter() {
                s.reset();
            }
            c.missed.store(0, Relaxed);
            c.deadline_misses.store(0, Relaxed);
        }
    }

    pub(crate) fn status(&self) -> Status {
        // A consistent state, reason and trip (see `stop_with`).
        let (t, state, stop_reason, started_ns) = {
            let g = self.trip.lock();
            (
                *g,
                self.state.load(Relaxed),
                self.stop_reason.load(Relaxed),
                self.started_ns.load(Relaxed),
            )
        };
        let mut s = Status {
            state,
            stop_reason,
            trip_cpu: t.map_or(0, |t| t.chan),
            trip_stage: t.map_or(0, |t| t.stage as u32),
            trip_value_ns: t.map_or(0, |t| t.value),
            trip_seq: t.map_or(0, |t| t.seq),
            started_ns: started_ns as u64,
            ..Default::default()
        };
        for c in self.chans.iter() {
            // (Channels past the inline bitmaps are in the sets in full,
            // `Self::cpu_set`.)
            for (set, which) in [
                (&mut s.cpus, CpuSet::Session),
                (&mut s.offline, CpuSet::Offline),
                (&mut s.unattended, CpuSet::Unattended),
            ] {
                if which.has(c) {
                    uapi::set_cpu(set, c.id);
                }
            }
            let k = c.ring.counters();
            s.produced += k.produced;
            s.delivered += k.delivered;
            s.dropped += k.dropped;
            s.missed += c.missed.load(Relaxed);
            s.deadline_misses += c.deadline_misses.load(Relaxed);
        }
        s
    }

    /// True if a channel's number is past what the inline bitmaps of
    /// STATUS can name (only the sets in full have it).
    pub(crate) fn past_inline(&self) -> bool {
        self.chans.iter().any(|c| c.id as usize >= uapi::MAX_CPUS)
    }

    /// The set `which` in full: a bitmap of `words` words (every channel
    /// number below `words * 64`).
    pub(crate) fn cpu_set(&self, which: CpuSet, words: usize) -> Result<KVec<u64>> {
        let mut set = KVec::from_elem(0u64, words, GFP_KERNEL)?;
        for c in self.chans.iter() {
            if which.has(c) && !uapi::set_cpu(&mut set, c.id) {
                return Err(EOVERFLOW);
            }
        }
        Ok(set)
    }
}
