// SPDX-License-Identifier: GPL-2.0

//! What every measuring device of the suite shares: records, statistics,
//! thresholds, the session life cycle and the `/dev/rtlat` file semantics.
//!
//! A device (`/dev/rtlat`'s timers, `/dev/rtedu<N>`'s PCI device) produces
//! [`Record`]s on one or more [`Channel`]s (a CPU for rtlat, the device for
//! rtedu) and implements [`Source`]; this module does the rest, once:
//!
//! - [`Output::record`]: statistics per channel and stage (summary under a
//!   raw lock, histogram buckets as atomics), thresholds, the lock-free ring
//!   for `read()`; in any context, hard IRQ included (an irq-only rtlat
//!   session records from its timer). It wakes no one: waking readers takes
//!   sleeping locks on PREEMPT_RT, so it tells the caller when to, and
//!   [`Output::complete`] does both for producers in task context;
//! - [`Sessions`] and the file operations [`ioctl`], [`read`], [`poll`],
//!   [`release`] and [`fdinfo`]: one session per device, owned by the file
//!   that configured it, one streaming reader, the ioctls of
//!   `include/uapi/linux/rtlat.h`.
//!
//! Everything is allocated when a session is configured.

use kernel::{
    bindings,
    ffi::c_uint,
    fs::File,
    iov::IovIterDest,
    new_mutex, new_poll_condvar,
    prelude::*,
    seq_file::SeqFile,
    seq_print,
    str::CStr,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed,
            Release, //
        },
        lock::GlobalLockBackend,
        poll::{
            PollCondVar,
            PollTable, //
        },
        Arc,
        GlobalLock,
        Mutex, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

use super::{
    file as rfile, hist,
    raw_spinlock::RawSpinLockIrq,
    ring::{
        self,
        new_kring,
        KRing, //
    },
    task,
    time::ktime_ns,
    trace,
    uapi::{
        self,
        ioc,
        Config,
        Record,
        Stage,
        State,
        Stats,
        Status,
        StopReason,
        UapiError, //
    },
};

/// Statistics of one stage on one channel: summary under a raw lock (a few
/// words; interrupts off, since a hard-IRQ producer may take it), histogram
/// buckets as atomics (single writer, lock-free readers).
pub(crate) struct StageStats {
    summary: Pin<KBox<RawSpinLockIrq<hist::Summary>>>,
    buckets: KVec<Atomic<u64>>,
}

impl StageStats {
    fn new() -> Result<Self> {
        let mut buckets = KVec::with_capacity(hist::BUCKETS, GFP_KERNEL)?;
        for _ in 0..hist::BUCKETS {
            buckets.push(Atomic::new(0), GFP_KERNEL)?;
        }
        Ok(Self {
            summary: KBox::pin_init(
                crate::new_raw_spinlock_irq!(hist::Summary::new()),
                GFP_KERNEL,
            )?,
            buckets,
        })
    }

    fn add(&self, v: u64, seq: u64, time: u64) {
        self.buckets[hist::bucket_of(v)].fetch_add(1, Relaxed);
        self.summary.lock().add(v, seq, time);
    }

    fn reset(&self) {
        *self.summary.lock() = hist::Summary::new();
        for b in self.buckets.iter() {
            b.store(0, Relaxed);
        }
    }

    /// Copy of the summary.
    pub(crate) fn summary(&self) -> hist::Summary {
        *self.summary.lock()
    }

    /// Copy of the buckets.
    pub(crate) fn buckets(&self) -> Result<KVec<u64>> {
        let mut v = KVec::with_capacity(hist::BUCKETS, GFP_KERNEL)?;
        for b in self.buckets.iter() {
            v.push(b.load(Relaxed), GFP_KERNEL)?;
        }
        Ok(v)
    }
}

/// One stream of records: a ring for `read()`, statistics per stage, and the
/// periods it missed. `id` is what `Record::cpu`, `RTLAT_IOC_STATS` and the
/// status bitmaps call it (a CPU number).
pub(crate) struct Channel {
    pub(crate) id: u32,
    pub(crate) ring: KRing<Record>,
    /// Per stage, in [`Stage`] index order.
    stats: KVec<StageStats>,
    pub(crate) missed: Atomic<u64>,
    /// Sampling on this channel stopped for good (its CPU went offline).
    pub(crate) went_offline: Atomic<bool>,
    /// Its latest activation found no user waiter (a user-stage session).
    pub(crate) unattended: Atomic<bool>,
}

impl Channel {
    /// A channel with a ring of `config.ring_records` records. Sleeps.
    pub(crate) fn new(id: u32, config: &Config) -> Result<Self> {
        let ring_records = if config.ring_records == 0 {
            uapi::RING_DEFAULT
        } else {
            config.ring_records
        };
        let mut stats = KVec::with_capacity(uapi::NR_STAGES, GFP_KERNEL)?;
        for _ in 0..uapi::NR_STAGES {
            stats.push(StageStats::new()?, GFP_KERNEL)?;
        }
        Ok(Self {
            id,
            ring: new_kring(ring_records as usize)?,
            stats,
            missed: Atomic::new(0),
            went_offline: Atomic::new(false),
            unattended: Atomic::new(false),
        })
    }

    /// The statistics of `stage`.
    pub(crate) fn stats(&self, stage: Stage) -> &StageStats {
        &self.stats[stage.index()]
    }

    /// Readers are woken when this channel's ring reaches this many records.
    fn wake_batch(&self) -> usize {
        ring::wake_batch(self.ring.capacity())
    }
}

/// Refuses (`ENOMEM`) a session whose rings would take more than
/// [`uapi::RING_TOTAL_MAX_BYTES`] over its `nr_chans` channels.
pub(crate) fn check_ring_budget(nr_chans: usize, config: &Config) -> Result {
    let per_chan = if config.ring_records == 0 {
        uapi::RING_DEFAULT
    } else {
        config.ring_records
    };
    let total = (nr_chans as u64)
        .saturating_mul(u64::from(per_chan))
        .saturating_mul(uapi::RECORD_SIZE as u64);
    if total > uapi::RING_TOTAL_MAX_BYTES {
        return Err(ENOMEM);
    }
    Ok(())
}

/// Where the readers of a device wait: one per device, not per session, so
/// that a task in `poll()`/`select()` (which stays queued until it returns)
/// never waits on a queue freed with a session, and an `epoll` waiter sees
/// the next session's records too. Every open file of the device keeps it.
#[pin_data]
pub(crate) struct Readers {
    /// Counts notifications: a reader waits for it to change.
    #[pin]
    generation: Mutex<u64>,
    #[pin]
    readable: PollCondVar,
}

impl Readers {
    /// The readers' queue of a new device. Sleeps.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                generation <- new_mutex!(0),
                readable <- new_poll_condvar!(),
            }),
            GFP_KERNEL,
        )
    }

    /// Wakes the readers and pollers. Task context: the wait queue's lock
    /// sleeps on PREEMPT_RT.
    fn notify(&self) {
        let mut g = self.generation.lock();
        *g += 1;
        self.readable.notify_all();
    }

    /// Waits until [`Self::notify`] was called after `seen` was read; true
    /// if interrupted by a signal.
    fn wait(&self, seen: u64) -> bool {
        let mut g = self.generation.lock();
        while *g == seen {
            if self.readable.wait_interruptible(&mut g) {
                return true;
            }
        }
        false
    }

    fn generation(&self) -> u64 {
        *self.generation.lock()
    }
}

/// Why a threshold tripped.
#[derive(Clone, Copy)]
struct Trip {
    chan: u32,
    stage: Stage,
    value: u64,
    seq: u64,
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
    readers: Arc<Readers>,
    /// Serialises `read()` callers while they take records (the rings have a
    /// single consumer); never held while a reader sleeps for records.
    #[pin]
    read_lock: Mutex<()>,
    /// Written to the trace buffer when a threshold trips.
    trip_marker: &'static CStr,
    /// Wake the readers for every record (a device that measures the user
    /// stage in `read()`), not in batches.
    wake_each: bool,
    /// When the readers were last woken (ns).
    last_wake: Atomic<i64>,
}

/// What [`Output::record`] leaves to its caller.
#[must_use]
pub(crate) struct Recorded {
    /// A threshold tripped and the session is marked stopped: halt the
    /// producers and wake the readers.
    pub(crate) tripped: bool,
    /// Wake the readers ([`Output::notify_readers`], task context).
    pub(crate) wake: bool,
}

/// Readers blocked in `read()` are woken in batches: when a ring reaches
/// [`ring::wake_batch`] records (64, or half a small ring), or when the last
/// wake-up is this old, so a record waits at most about
/// 10 ms (plus one period) and a reader wakes at most about 100 times a
/// second whatever the rate. Waking it for every record would cost a context
/// switch per activation on every CPU.
const WAKE_INTERVAL_NS: i64 = 10_000_000;

impl Output {
    /// The output of a configured session over `chans`.
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
            read_lock <- new_mutex!(()),
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

    /// Marks the session stopped for `reason` (the first reason wins) and
    /// wakes the readers. The source stops its producers itself.
    pub(crate) fn set_stopped(&self, reason: StopReason) {
        self.stop_with(reason, None);
        self.notify_readers();
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
    pub(crate) fn set_finished(&self) {
        self.finished.store(true, Release);
        self.notify_readers();
    }

    /// True once [`Self::set_finished`] was called.
    pub(crate) fn finished(&self) -> bool {
        self.finished.load(Acquire)
    }

    /// Wakes the readers (and pollers). Task context: the wait queue's lock
    /// sleeps on PREEMPT_RT.
    pub(crate) fn notify_readers(&self) {
        self.last_wake.store(ktime_ns(), Relaxed);
        self.readers.notify();
    }

    pub(crate) fn chan(&self, id: u32) -> Option<&Channel> {
        self.chans.iter().find(|c| c.id == id)
    }

    /// Adds the measured stages of `rec` to `chan`'s statistics; returns the
    /// first threshold it exceeds. Any context.
    fn account(&self, chan: &Channel, rec: &Record, stages: &[Stage]) -> Option<Trip> {
        let mut tripped = None;
        for &stage in stages {
            let lat = rec.lat_ns[stage];
            if lat < 0 {
                continue;
            }
            let lat = lat as u64;
            chan.stats(stage).add(lat, rec.seq, rec.expected_ns);
            if tripped.is_none() {
                tripped = self.exceeds(chan, rec, stage);
            }
        }
        tripped
    }

    /// The trip `rec` makes on `stage`, if it exceeds its threshold.
    fn exceeds(&self, chan: &Channel, rec: &Record, stage: Stage) -> Option<Trip> {
        let lat = rec.lat_ns[stage];
        let limit = self.config.threshold_ns[stage];
        (lat >= 0 && limit != 0 && lat as u64 > limit).then_some(Trip {
            chan: chan.id,
            stage,
            value: lat as u64,
            seq: rec.seq,
        })
    }

    /// Marks `rec` with [`uapi::REC_THRESHOLD`] if its `stage` exceeds the
    /// threshold; accounts nothing, trips nothing.
    pub(crate) fn mark_threshold(&self, chan: &Channel, rec: &mut Record, stage: Stage) {
        if self.exceeds(chan, rec, stage).is_some() {
            rec.flags |= uapi::REC_THRESHOLD;
        }
    }

    /// Checks the thresholds of `stages` of a record that is not complete
    /// yet, as soon as they are measured (a user-stage record is complete
    /// only when its waiter comes back, which may be late or never): marks
    /// it and stops the session on a trip; true if it tripped. Statistics
    /// wait for [`Self::record`], whose own check of these stages then finds
    /// the session stopped. Any context; wakes no one (the caller halts its
    /// producers and wakes the readers on a trip).
    pub(crate) fn check_early(&self, chan: &Channel, rec: &mut Record, stages: &[Stage]) -> bool {
        let Some(t) = stages.iter().find_map(|&s| self.exceeds(chan, rec, s)) else {
            return false;
        };
        rec.flags |= uapi::REC_THRESHOLD;
        self.trip(t)
    }

    /// A completed record, in any context (hard IRQ included): statistics,
    /// thresholds, then the ring. Only raw locks, atomics and the lock-free
    /// ring; nothing is woken. If it tripped a threshold the session is
    /// marked stopped; the caller must then halt its producers and, like
    /// when [`Recorded::wake`] is set, call [`Self::notify_readers`] from
    /// task context.
    ///
    /// # Safety
    ///
    /// Records of one channel are recorded by one context at a time (the
    /// ring has a single producer).
    pub(crate) unsafe fn record(&self, chan: &Channel, mut rec: Record) -> Recorded {
        let missed = u64::from(rec.missed);
        if missed != 0 {
            chan.missed.fetch_add(missed, Relaxed);
        }
        let tripped = self.account(chan, &rec, &Stage::ALL);
        if tripped.is_some() {
            rec.flags |= uapi::REC_THRESHOLD;
        }
        // SAFETY: Single producer per channel, by this function's contract.
        unsafe { chan.ring.push(rec) };
        // Reaching the batch (not staying above it: a reader that is away
        // must not cost a wake-up per record), or the interval since the last
        // wake-up. The time is taken now, so later records do not ask again
        // before the caller got round to it.
        let now = ktime_ns();
        let wake = self.wake_each
            || chan.ring.len() == chan.wake_batch()
            || now - self.last_wake.load(Relaxed) >= WAKE_INTERVAL_NS;
        if wake {
            self.last_wake.store(now, Relaxed);
        }
        Recorded {
            tripped: tripped.is_some_and(|t| self.trip(t)),
            wake,
        }
    }

    /// [`Self::record`] and, as it asks, the readers' wake-up: for producers
    /// in task context. Returns true if the record tripped a threshold; the
    /// caller must then halt its producers.
    ///
    /// # Safety
    ///
    /// As for [`Self::record`].
    pub(crate) unsafe fn complete(&self, chan: &Channel, rec: Record) -> bool {
        // SAFETY: The caller's contract is `record`'s.
        let r = unsafe { self.record(chan, rec) };
        if r.wake || r.tripped {
            self.notify_readers();
        }
        r.tripped
    }

    /// A stage measured by the reader itself (rtedu's user stage, stamped by
    /// `read()` on the record whose event woke it): statistics and
    /// thresholds; true if it tripped. Task context.
    pub(crate) fn complete_stage(&self, chan: &Channel, rec: &mut Record, stage: Stage) -> bool {
        match self.account(chan, rec, &[stage]) {
            Some(t) => {
                rec.flags |= uapi::REC_THRESHOLD;
                let tripped = self.trip(t);
                if tripped {
                    self.notify_readers();
                }
                tripped
            }
            None => false,
        }
    }

    /// Stops a running session for a threshold trip and records why; true
    /// if it was running (only the first of trips racing on several
    /// channels counts). Any context; wakes no one.
    fn trip(&self, t: Trip) -> bool {
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
            let i = c.id as usize;
            s.cpus[i / 64] |= 1 << (i % 64);
            if c.went_offline.load(Relaxed) {
                s.offline[i / 64] |= 1 << (i % 64);
            }
            if c.unattended.load(Relaxed) {
                s.unattended[i / 64] |= 1 << (i % 64);
            }
            let k = c.ring.counters();
            s.produced += k.produced;
            s.delivered += k.delivered;
            s.dropped += k.dropped;
            s.missed += c.missed.load(Relaxed);
        }
        s
    }

    /// `RTLAT_IOC_STATS`.
    fn ioctl_stats(&self, arg: usize) -> Result<isize> {
        let mut buf = [0u8; uapi::STATS_SIZE];
        let (mut reader, mut writer) =
            UserSlice::new(UserPtr::from_addr(arg), buf.len()).reader_writer();
        reader.read_slice(&mut buf)?;
        let mut st = Stats::decode_request(&buf).map_err(uapi_err)?;
        let chan = self.chan(st.cpu).ok_or(EINVAL)?;
        let stage = chan.stats(Stage::from_raw(st.stage).ok_or(EINVAL)?);
        let sum = stage.summary();
        let buckets = stage.buckets()?;
        let k = chan.ring.counters();
        st.hist_layout = uapi::HIST_LAYOUT;
        st.count = sum.count;
        st.min = if sum.count == 0 { 0 } else { sum.min };
        st.max = sum.max;
        st.sum = sum.sum;
        st.max_seq = sum.max_seq;
        st.max_time = sum.max_time;
        st.missed = chan.missed.load(Relaxed);
        st.produced = k.produced;
        st.delivered = k.delivered;
        st.dropped = k.dropped;
        for (p, &ppm) in st.percentiles.iter_mut().zip(hist::PERCENTILES_PPM.iter()) {
            *p = hist::percentile(&buckets, ppm, sum.max).unwrap_or(0);
        }
        if st.buckets_ptr != 0 {
            let n = (st.nr_buckets as usize).min(hist::BUCKETS);
            let mut out =
                UserSlice::new(UserPtr::from_addr(st.buckets_ptr as usize), n * 8).writer();
            for &b in buckets.iter().take(n) {
                out.write_slice(&b.to_ne_bytes())?;
            }
            st.nr_buckets = n as u32;
        } else {
            st.nr_buckets = 0;
        }
        st.encode(&mut buf);
        writer.write_slice(&buf)?;
        Ok(0)
    }
}

/// `-ESHUTDOWN`: the session this call waited on was stopped (Linux 7.2's
/// `kernel::error::code` has no `ESHUTDOWN`).
pub(crate) fn eshutdown() -> Error {
    Error::from_errno(-(kernel::bindings::ESHUTDOWN as i32))
}

pub(crate) fn uapi_err(e: UapiError) -> Error {
    match e {
        UapiError::Size | UapiError::Version | UapiError::Invalid => EINVAL,
        UapiError::TooManyCpus => E2BIG,
    }
}

/// A measuring session of a device.
pub(crate) trait Source: Send + Sync + Sized + 'static {
    /// Allocates everything a session with `config` needs; nothing is
    /// allocated later. `EINVAL` for what this device cannot measure.
    fn configure(dev: &Self::Device, config: Config, readers: Arc<Readers>) -> Result<Arc<Self>>;

    /// What [`Self::configure`] needs of the device.
    type Device;

    fn output(&self) -> &Output;

    /// Starts sampling (`RTLAT_IOC_START`).
    fn start(self: &Arc<Self>) -> Result;

    /// Stops sampling for `reason`, waits until no producer runs, and then
    /// calls [`Output::set_finished`]. Sleeps; idempotent.
    fn stop(&self, reason: StopReason);

    /// Whether the device measures the user stage with
    /// `RTLAT_IOC_USER_WAIT`: if not, the ioctl is `ENOTTY` whether or not
    /// a session exists.
    const USER_WAIT: bool = false;

    /// `RTLAT_IOC_USER_WAIT`, where [`Self::USER_WAIT`]; `ENOTTY` otherwise.
    fn user_wait(&self) -> Result<Record> {
        Err(ENOTTY)
    }

    /// `read()` slept and is about to copy `rec` (the first record it got
    /// after waking) to user space: a device that measures the user stage
    /// in `read()` stamps it here, and says whether it did.
    fn stamp_woken(&self, _chan: &Channel, _rec: &mut Record) -> bool {
        false
    }

    /// The record [`Self::stamp_woken`] stamped reached user space: its
    /// user stage counts now (not for a copy that faulted: the record
    /// stays in the ring without it, and the next read stamps it again).
    fn woken_delivered(&self, _chan: &Channel, _rec: &Record) {}

    /// The device went away (unbound): once its records are read, `read()`
    /// fails with `ENODEV` instead of returning 0, and `poll()` reports
    /// `EPOLLERR`.
    fn gone(&self) -> bool {
        false
    }
}

/// The one session of a device and the files that own and read it.
pub(crate) struct Sessions<S> {
    session: Option<Arc<S>>,
    /// File id of the owner (the file that configured the session).
    owner: u64,
    /// File id of the streaming reader, 0 if none.
    reader: u64,
    /// The device's readers' queue, from [`Self::set_readers`] on.
    readers: Option<Arc<Readers>>,
}

impl<S> Sessions<S> {
    pub(crate) const fn new() -> Self {
        Self {
            session: None,
            owner: 0,
            reader: 0,
            readers: None,
        }
    }

    /// Gives the device its readers' queue (before any file is opened), or
    /// takes it back (`None`, when the device goes and no file is open).
    pub(crate) fn set_readers(&mut self, readers: Option<Arc<Readers>>) -> Option<Arc<Readers>> {
        core::mem::replace(&mut self.readers, readers)
    }

    /// Takes the session away (the device is going): the caller stops it.
    pub(crate) fn take(&mut self) -> Option<Arc<S>> {
        self.owner = 0;
        self.session.take()
    }
}

/// Where a device keeps its [`Sessions`]: a [`Mutex`] or a global lock.
pub(crate) trait SessionLock<S> {
    fn with<R>(&self, f: impl FnOnce(&mut Sessions<S>) -> R) -> R;
}

impl<S> SessionLock<S> for Mutex<Sessions<S>> {
    fn with<R>(&self, f: impl FnOnce(&mut Sessions<S>) -> R) -> R {
        f(&mut self.lock())
    }
}

impl<S, B: GlobalLockBackend<Item = Sessions<S>>> SessionLock<S> for &'static GlobalLock<B> {
    fn with<R>(&self, f: impl FnOnce(&mut Sessions<S>) -> R) -> R {
        f(&mut self.lock())
    }
}

/// The current session, if any.
pub(crate) fn session<S, L: SessionLock<S>>(lock: &L) -> Option<Arc<S>> {
    lock.with(|sh| sh.session.clone())
}

fn owned<S, L: SessionLock<S>>(lock: &L, id: u64) -> Result<Arc<S>> {
    lock.with(|sh| match &sh.session {
        None => Err(EINVAL),
        Some(_) if sh.owner != id => Err(EBUSY),
        Some(s) => Ok(s.clone()),
    })
}

/// `RTLAT_IOC_CONFIG`: a new session owned by file `id`.
fn config<S: Source, L: SessionLock<S>>(
    lock: &L,
    dev: &S::Device,
    id: u64,
    arg: usize,
) -> Result<isize> {
    if !task::capable_rt() {
        return Err(EPERM);
    }
    let mut buf = [0u8; uapi::CONFIG_SIZE];
    UserSlice::new(UserPtr::from_addr(arg), buf.len())
        .reader()
        .read_slice(&mut buf)?;
    let config = Config::decode(&buf).map_err(uapi_err)?;
    // May file `id` configure? Checked again when the new session goes in.
    let may = |sh: &Sessions<S>| match &sh.session {
        Some(s) if sh.owner != id || s.output().running() => Err(EBUSY),
        _ => Ok(()),
    };
    let readers = lock.with(|sh| {
        may(sh)?;
        sh.readers.clone().ok_or(ENODEV)
    })?;
    // Everything is allocated now, outside the device's lock (a large ring
    // takes a while) and outside any atomic context.
    let new = S::configure(dev, config, readers)?;
    let swapped = lock.with(|sh| match may(sh) {
        Ok(()) => {
            sh.owner = id;
            Ok(sh.session.replace(new))
        }
        // Another file configured in the meantime: the new session goes,
        // outside the lock.
        Err(e) => Err((e, new)),
    });
    match swapped {
        Ok(Some(old)) => old.stop(StopReason::User),
        Ok(None) => {}
        // Never started (no timer, no thread): dropping it is enough, and
        // stopping it could touch the device state of the session in place.
        Err((e, new)) => {
            drop(new);
            return Err(e);
        }
    }
    Ok(0)
}

/// The ioctls of `include/uapi/linux/rtlat.h` for file `id`.
pub(crate) fn ioctl<S: Source, L: SessionLock<S>>(
    lock: &L,
    dev: &S::Device,
    id: u64,
    cmd: u32,
    arg: usize,
) -> Result<isize> {
    match cmd {
        ioc::CONFIG => config(lock, dev, id, arg),
        ioc::START => {
            if !task::capable_rt() {
                return Err(EPERM);
            }
            owned(lock, id)?.start()?;
            Ok(0)
        }
        ioc::STOP => {
            owned(lock, id)?.stop(StopReason::User);
            Ok(0)
        }
        ioc::RESET => {
            owned(lock, id)?.output().reset();
            Ok(0)
        }
        ioc::STATUS | ioc::STATUS_V1 => {
            let st = session(lock)
                .map(|s| s.output().status())
                .unwrap_or_default();
            let mut buf = [0u8; uapi::STATUS_SIZE];
            let len = if cmd == ioc::STATUS_V1 {
                uapi::STATUS_SIZE_V1
            } else {
                uapi::STATUS_SIZE
            };
            st.encode(&mut buf[..len]);
            UserSlice::new(UserPtr::from_addr(arg), len)
                .writer()
                .write_slice(&buf[..len])?;
            Ok(0)
        }
        ioc::STATS => session(lock).ok_or(EINVAL)?.output().ioctl_stats(arg),
        ioc::USER_WAIT if !S::USER_WAIT => Err(ENOTTY),
        ioc::USER_WAIT => {
            let rec = session(lock).ok_or(EINVAL)?.user_wait()?;
            let mut buf = [0u8; uapi::RECORD_SIZE];
            rec.encode(&mut buf);
            UserSlice::new(UserPtr::from_addr(arg), buf.len())
                .writer()
                .write_slice(&buf)?;
            Ok(0)
        }
        _ => Err(ENOTTY),
    }
}

/// File `id` is closed: if it owned the session, the session stops and is
/// freed.
pub(crate) fn release<S: Source, L: SessionLock<S>>(lock: &L, id: u64) {
    let owned = lock.with(|sh| {
        if sh.reader == id {
            sh.reader = 0;
        }
        if sh.owner == id {
            sh.owner = 0;
            sh.session.take()
        } else {
            None
        }
    });
    if let Some(s) = owned {
        s.stop(StopReason::User);
    }
}

/// `read()` for file `id`: whole records, round robin over the channels;
/// blocks (unless `nonblock`) until there are some; 0 once the session has
/// stopped and everything was read.
pub(crate) fn read<S: Source, L: SessionLock<S>>(
    lock: &L,
    id: u64,
    nonblock: bool,
    iov: &mut IovIterDest<'_>,
) -> Result<usize> {
    if iov.len() < uapi::RECORD_SIZE {
        return Err(EINVAL);
    }
    let session = lock.with(|sh| {
        if sh.reader != 0 && sh.reader != id {
            return Err(EBUSY);
        }
        let s = sh.session.clone().ok_or(EINVAL)?;
        sh.reader = id;
        Ok(s)
    })?;
    let out = session.output();
    let mut woken = false;
    loop {
        let seen = out.readers.generation();
        let n = {
            // A second reader of the same file waits here only while the
            // first takes records, never while it sleeps for more.
            let _serial = if nonblock {
                out.read_lock.try_lock().ok_or(EAGAIN)?
            } else {
                out.read_lock.lock()
            };
            fill(&*session, out, &mut woken, iov)?
        };
        if n > 0 {
            return Ok(n);
        }
        // The stream ends once the session has stopped for good and every
        // record was read.
        if out.finished() && out.chans.iter().all(|c| c.ring.is_empty()) {
            return if session.gone() { Err(ENODEV) } else { Ok(0) };
        }
        if nonblock {
            return Err(EAGAIN);
        }
        if out.readers.wait(seen) {
            return Err(ERESTARTSYS);
        }
        woken = true;
    }
}

/// Moves whole records from the rings to `iov`, round robin over the
/// channels; the byte count. A record whose copy faults stays in its ring
/// (neither delivered nor dropped): `EFAULT` if it was the first.
///
/// The caller holds `out.read_lock`.
fn fill<S: Source>(
    session: &S,
    out: &Output,
    woken: &mut bool,
    iov: &mut IovIterDest<'_>,
) -> Result<usize> {
    let mut n = 0;
    let mut buf = [0u8; uapi::RECORD_SIZE];
    while iov.len() >= uapi::RECORD_SIZE {
        let mut any = false;
        for chan in out.chans.iter() {
            if iov.len() < uapi::RECORD_SIZE {
                break;
            }
            let mut faulted = false;
            // SAFETY: `read_lock`, held by the caller, makes this the only
            // consumer.
            let taken = unsafe {
                chan.ring.pop_if(|mut rec| {
                    let stamped = *woken && session.stamp_woken(chan, &mut rec);
                    rec.encode(&mut buf);
                    faulted = iov.copy_to_iter(&buf) != buf.len();
                    if !faulted && *woken {
                        *woken = false;
                        if stamped {
                            session.woken_delivered(chan, &rec);
                        }
                    }
                    !faulted
                })
            };
            if faulted {
                return if n > 0 { Ok(n) } else { Err(EFAULT) };
            }
            if taken.is_some() {
                n += buf.len();
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    Ok(n)
}

/// `poll()`: readable when a ring has records, readable and hung up when
/// the stream has ended (or there is no session).
pub(crate) fn poll<S: Source, L: SessionLock<S>>(
    lock: &L,
    file: &File,
    table: &PollTable<'_>,
) -> c_uint {
    let (session, readers) = lock.with(|sh| (sh.session.clone(), sh.readers.clone()));
    let Some(readers) = readers else {
        return rfile::POLL_HUP | rfile::POLL_ERR;
    };
    // The device's queue, not the session's: a poller stays queued on it
    // until poll() returns, whatever happens to the session meanwhile.
    table.register_wait(file, &readers.readable);
    let Some(session) = session else {
        return rfile::POLL_HUP;
    };
    let out = session.output();
    let mut mask = 0;
    if out.chans.iter().any(|c| !c.ring.is_empty()) {
        mask |= rfile::POLL_READABLE;
    }
    if out.finished() {
        mask |= rfile::POLL_READABLE | rfile::POLL_HUP;
    }
    if session.gone() {
        mask |= rfile::POLL_ERR;
    }
    mask
}

/// `/proc/<pid>/fdinfo/<fd>`: the session's state and per-channel summary.
pub(crate) fn fdinfo<S: Source, L: SessionLock<S>>(lock: &L, m: &SeqFile, name: &str) {
    let Some(session) = session(lock) else {
        seq_print!(m, "{}: no session\n", name);
        return;
    };
    let out = session.output();
    let st = out.status();
    seq_print!(
        m,
        "{}: state {} stop_reason {} period_ns {} produced {} delivered {} dropped {} missed {}\n",
        name,
        st.state,
        st.stop_reason,
        out.config.period_ns,
        st.produced,
        st.delivered,
        st.dropped,
        st.missed
    );
    for chan in out.chans.iter() {
        for (stage, s) in Stage::ALL.into_iter().zip(chan.stats.iter()) {
            let sum = s.summary();
            if sum.count == 0 {
                continue;
            }
            let b = s.buckets();
            let pct = |ppm| {
                b.as_ref()
                    .ok()
                    .and_then(|b| hist::percentile(b, ppm, sum.max))
                    .unwrap_or(0)
            };
            seq_print!(
                m,
                "cpu {} {}: count {} min {} avg {} max {} p50 {} p99 {} p99.9 {} p99.99 {} missed {} dropped {}\n",
                chan.id,
                stage.name(),
                sum.count,
                sum.min,
                sum.mean(),
                sum.max,
                pct(500_000),
                pct(990_000),
                pct(999_000),
                pct(999_900),
                chan.missed.load(Relaxed),
                chan.ring.counters().dropped
            );
        }
    }
}
