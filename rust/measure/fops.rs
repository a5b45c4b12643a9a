// SPDX-License-Identifier: GPL-2.0

//! The file operations of a measuring device: the ioctls of
//! `include/uapi/linux/rtlat.h`, `read()`, `poll()`, `release()` and
//! fdinfo.

use kernel::{
    ffi::c_uint,
    fs::File,
    iov::IovIterDest,
    prelude::*,
    seq_file::SeqFile,
    seq_print,
    sync::{
        atomic::Relaxed,
        poll::PollTable, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

use crate::rtrs::{
    context::Sleepable,
    file as rfile, hist, task,
    uapi::{
        self,
        ioc,
        Config,
        Stage,
        Stats,
        Status,
        StopReason, //
    },
};

use super::{
    privilege::{
        self,
        Access, //
    },
    session,
    session_of, //
    source::owned,
    uapi_err,
    CpuSet,
    Output,
    SessionLock,
    Sessions,
    Source,
};

/// `RTLAT_IOC_CONFIG`: a new session owned by file `id`, opened with
/// `access`.
fn config<S: Source, L: SessionLock<S>>(
    ctx: &Sleepable,
    lock: &L,
    dev: &S::Device,
    (id, access): (u64, Access),
    arg: usize,
    len: usize,
) -> Result<isize> {
    let mut buf = [0u8; uapi::CONFIG_SIZE];
    let buf = &mut buf[..len];
    UserSlice::new(UserPtr::from_addr(arg), len)
        .reader()
        .read_slice(buf)?;
    let mut config = Config::decode(buf).map_err(uapi_err)?;
    // (Its priority and flags decide: read first.)
    privilege::may_measure(access, &config)?;
    // The CPU set: inline, or the bitmap at cpus_ptr (read once, here; the
    // session keeps no user address).
    let mut set = KVec::new();
    if config.cpus_ptr != 0 {
        let words = config.cpus_size as usize / 8;
        let addr = usize::try_from(config.cpus_ptr).map_err(|_| EFAULT)?;
        let mut r = UserSlice::new(UserPtr::from_addr(addr), words * 8).reader();
        set = KVec::with_capacity(words, GFP_KERNEL)?;
        for _ in 0..words {
            set.push(r.read::<u64>()?, GFP_KERNEL)?;
        }
        config.cpus_ptr = 0;
        config.cpus_size = 0;
    } else {
        set.extend_from_slice(&config.cpus, GFP_KERNEL)?;
    }
    // May file `id` configure? Checked again when the new session goes in.
    let may = |sh: &Sessions<S>| match &sh.session {
        Some(s) if sh.owner != id || s.output().running() => Err(EBUSY),
        _ => Ok(()),
    };
    let readers = lock.with(ctx, |sh| {
        may(sh)?;
        sh.readers.clone().ok_or(ENODEV)
    })?;
    // Everything is allocated now, outside the device's lock (a large ring
    // takes a while) and outside any atomic context.
    let new = S::configure(ctx, dev, config, &set, readers)?;
    let swapped = lock.with(ctx, |sh| match may(sh) {
        Ok(()) => {
            let (old, kept) = sh.replace(id, new);
            if let Some(old) = &old {
                old.retire(ctx);
            }
            Ok((old, kept))
        }
        // Another file configured in the meantime: the new session goes,
        // outside the lock.
        Err(e) => Err((e, new)),
    });
    match swapped {
        // (The session `id` kept, if it had attached, is freed here,
        // outside the device's lock.)
        Ok((old, _kept)) => {
            if let Some(old) = old {
                // The new session is in: a fatal signal only ends the wait.
                old.stop(ctx, StopReason::User);
                let _ = old.wait_stopped(ctx);
            }
        }
        // Never started (no timer, no thread): dropping it is enough, and
        // stopping it could touch the device state of the session in place.
        Err((e, new)) => {
            drop(new);
            return Err(e);
        }
    }
    Ok(0)
}

/// `RTLAT_IOC_STATS`.
fn ioctl_stats(ctx: &Sleepable, out: &Output, arg: usize) -> Result<isize> {
    let mut buf = [0u8; uapi::STATS_SIZE];
    let (mut reader, mut writer) =
        UserSlice::new(UserPtr::from_addr(arg), buf.len()).reader_writer();
    reader.read_slice(&mut buf)?;
    let mut st = Stats::decode_request(&buf).map_err(uapi_err)?;
    let chan = out.chan(st.cpu).ok_or(EINVAL)?;
    let stage = chan.stats(Stage::from_raw(st.stage).ok_or(EINVAL)?);
    let (sum, buckets) = stage.snapshot(ctx)?;
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
        let mut out = UserSlice::new(UserPtr::from_addr(st.buckets_ptr as usize), n * 8).writer();
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

/// `RTLAT_IOC_STATUS` of any layout (`cmd`) for file `id`.
fn ioctl_status<S: Source, L: SessionLock<S>>(
    ctx: &Sleepable,
    lock: &L,
    id: u64,
    cmd: u32,
    arg: usize,
) -> Result<isize> {
    let session = session_of(ctx, lock, id);
    let out = session.as_ref().map(|s| s.output());
    let mut st = out.map(Output::status).unwrap_or_default();
    let len = match cmd {
        ioc::STATUS_V1 => uapi::STATUS_SIZE_V1,
        ioc::STATUS_V2 => uapi::STATUS_SIZE_V2,
        ioc::STATUS_V3 => uapi::STATUS_SIZE_V3,
        _ => uapi::STATUS_SIZE,
    };
    let mut buf = [0u8; uapi::STATUS_SIZE];
    let buf = &mut buf[..len];
    let (mut reader, mut writer) = UserSlice::new(UserPtr::from_addr(arg), len).reader_writer();
    if len < uapi::STATUS_SIZE {
        // An older layout's inline bitmaps cannot name every CPU of the
        // session: an error, not a set with CPUs missing.
        if out.is_some_and(Output::past_inline) {
            return Err(EOVERFLOW);
        }
        st.encode(buf);
        writer.write_slice(buf)?;
        return Ok(0);
    }
    reader.read_slice(buf)?;
    // All zero (a caller that set nothing, as with the older `_IOR`
    // layouts): no buffers. Else a request: its size, version, buffers.
    let req = if buf.iter().all(|&b| b == 0) {
        Status::default()
    } else {
        Status::decode(buf).map_err(uapi_err)?
    };
    let nr = kernel::cpu::nr_cpu_ids();
    let words = uapi::cpu_words(nr);
    let sets = [
        (req.cpus_ptr, CpuSet::Session),
        (req.offline_ptr, CpuSet::Offline),
        (req.unattended_ptr, CpuSet::Unattended),
    ];
    st.cpus_ptr = req.cpus_ptr;
    st.offline_ptr = req.offline_ptr;
    st.unattended_ptr = req.unattended_ptr;
    st.cpu_words = words;
    st.nr_cpu_ids = nr;
    st.encode(buf);
    let short = sets.iter().any(|&(p, _)| p != 0) && req.cpu_words < words;
    if !short {
        for (ptr, which) in sets {
            if ptr == 0 {
                continue;
            }
            let set = match out {
                Some(o) => o.cpu_set(which, words as usize)?,
                None => KVec::from_elem(0u64, words as usize, GFP_KERNEL)?,
            };
            let addr = usize::try_from(ptr).map_err(|_| EFAULT)?;
            let mut w = UserSlice::new(UserPtr::from_addr(addr), set.len() * 8).writer();
            for word in set.iter() {
                w.write(word)?;
            }
        }
    }
    // (Written back also when a buffer is too small: what it must hold.)
    writer.write_slice(buf)?;
    if short {
        return Err(EOVERFLOW);
    }
    Ok(0)
}

/// `RTLAT_IOC_BLAME` of either layout (`cmd`) for `session`: the
/// request's CPU and rank, answered in place.
fn ioctl_blame<S: Source>(
    ctx: &Sleepable,
    session: kernel::sync::Arc<S>,
    cmd: u32,
    arg: usize,
) -> Result<isize> {
    let len = match cmd {
        ioc::BLAME_V1 => uapi::BLAME_SIZE_V1,
        _ => uapi::BLAME_SIZE,
    };
    // On the heap (the kernel's stack is small), 12.5 KiB: from vmalloc
    // when no physically contiguous 16 KiB is free.
    let mut buf = KVVec::from_elem(0u8, len, GFP_KERNEL)?;
    let (mut reader, mut writer) = UserSlice::new(UserPtr::from_addr(arg), len).reader_writer();
    reader.read_slice(&mut buf)?;
    let req = uapi::Blame::decode_request(&buf).map_err(uapi_err)?;
    session.blame(ctx, req, &mut buf)?;
    writer.write_slice(&buf)?;
    Ok(0)
}

/// The ioctls of `include/uapi/linux/rtlat.h` for file `id`, opened with
/// `access`.
pub(crate) fn ioctl<S: Source, L: SessionLock<S>>(
    ctx: &Sleepable,
    lock: &L,
    dev: &S::Device,
    (id, access): (u64, Access),
    cmd: u32,
    arg: usize,
) -> Result<isize> {
    let file = (id, access);
    match cmd {
        ioc::CONFIG => config(ctx, lock, dev, file, arg, uapi::CONFIG_SIZE),
        ioc::CONFIG_V2 => config(ctx, lock, dev, file, arg, uapi::CONFIG_SIZE_V2),
        ioc::CONFIG_V1 => config(ctx, lock, dev, file, arg, uapi::CONFIG_SIZE_V1),
        ioc::START => {
            // Asked again of the caller: the file may have changed hands,
            // or the caller its limit, since CONFIG.
            let s = owned(ctx, lock, id)?;
            privilege::may_measure(access, &s.output().config)?;
            s.start(ctx)?;
            Ok(0)
        }
        ioc::STOP => {
            let s = owned(ctx, lock, id)?;
            s.stop(ctx, StopReason::User);
            s.wait_stopped(ctx)?;
            Ok(0)
        }
        ioc::ATTACH => {
            // (A session it kept before is freed outside the device's lock.)
            let before = lock.with(ctx, |sh| sh.attach(id))?;
            drop(before);
            Ok(0)
        }
        ioc::RESET => {
            owned(ctx, lock, id)?.reset(ctx);
            Ok(0)
        }
        ioc::STATUS | ioc::STATUS_V3 | ioc::STATUS_V2 | ioc::STATUS_V1 => {
            ioctl_status(ctx, lock, id, cmd, arg)
        }
        ioc::STATS => ioctl_stats(ctx, session_of(ctx, lock, id).ok_or(EINVAL)?.output(), arg),
        ioc::BLAME | ioc::BLAME_V1 => {
            // The answer names other tasks and what they ran.
            if !task::capable_perfmon() {
                return Err(EPERM);
            }
            ioctl_blame(ctx, session_of(ctx, lock, id).ok_or(EINVAL)?, cmd, arg)
        }
        ioc::USER_WAIT if !S::USER_WAIT => Err(ENOTTY),
        ioc::USER_WAIT => {
            let rec = session(ctx, lock).ok_or(EINVAL)?.user_wait(ctx)?;
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
/// freed. The close waits for the stop to finish only if a `SIGKILL` can
/// end that wait: not in an exiting task, which no signal reaches any more,
/// nor in a kernel thread; the stop then finishes on its own.
pub(crate) fn release<S: Source, L: SessionLock<S>>(ctx: &Sleepable, lock: &L, id: u64) {
    let (owned, kept) = lock.with(ctx, |sh| {
        let kept = sh.closed(id);
        if sh.owner == id {
            sh.owner = 0;
            let s = sh.session.take();
            if let Some(s) = &s {
                s.retire(ctx);
            }
            (s, kept)
        } else {
            (None, kept)
        }
    });
    if let Some(s) = owned {
        s.stop(ctx, StopReason::User);
        if task::current_killable() {
            // (Killed: the session is freed when its stop has finished.)
            let _ = s.wait_stopped(ctx);
        }
    }
    // (A session freed here is freed outside the device's lock.)
    drop(kept);
}

/// `read()` for file `id`: whole records, round robin over the channels;
/// blocks (unless `nonblock`) until there are some; 0 once the session has
/// stopped and everything was read.
pub(crate) fn read<S: Source, L: SessionLock<S>>(
    ctx: &Sleepable,
    lock: &L,
    id: u64,
    nonblock: bool,
    iov: &mut IovIterDest<'_>,
) -> Result<usize> {
    if iov.len() < uapi::RECORD_SIZE {
        return Err(EINVAL);
    }
    let session = lock.with(ctx, |sh| sh.reader_of(id))?;
    let out = session.output();
    let mut woken = false;
    loop {
        let seen = out.readers.generation(ctx);
        let n = {
            // A second reader of the same file waits here only while the
            // first takes records, never while it sleeps for more; and
            // interruptibly, as the first may take long to copy them (its
            // buffer faulting on slow memory: userfaultfd, FUSE).
            let mut next = if nonblock {
                out.read_lock.try_lock(ctx).ok_or(EAGAIN)?
            } else {
                out.read_lock.lock_interruptible(ctx)?
            };
            fill(ctx, &*session, out, &mut next, &mut woken, iov)?
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
        if out.readers.wait(ctx, seen) {
            return Err(ERESTARTSYS);
        }
        woken = true;
    }
}

/// Records taken from a ring and copied to user space at once by [`fill`]:
/// one copy per batch instead of one per record (1 KiB on the stack).
const READ_BATCH: usize = 16;

/// Moves whole records from the rings to `iov`, round robin over the
/// channels from `next` on, each ring's share of the room on a pass (at
/// least one record, at most [`READ_BATCH`]) at a time; the byte count.
/// `next` is left at the ring after the last one served: the next call goes
/// on from there, so reads smaller than one record per ring do not always
/// serve the first rings while the last ones fill and drop. A
/// batch whose copy faults leaves the records that did not arrive whole in
/// their ring (neither delivered nor dropped): `EFAULT` if nothing arrived.
///
/// The caller holds `out.read_lock`, whose value `next` is.
fn fill<S: Source>(
    ctx: &Sleepable,
    session: &S,
    out: &Output,
    next: &mut usize,
    woken: &mut bool,
    iov: &mut IovIterDest<'_>,
) -> Result<usize> {
    let mut n = 0;
    let mut buf = [[0u8; uapi::RECORD_SIZE]; READ_BATCH];
    let rings = out.chans.len();
    if rings == 0 {
        return Ok(0);
    }
    while iov.len() >= uapi::RECORD_SIZE {
        let mut any = false;
        // A fair share for each ring on this pass: the first CPUs' rings
        // do not fill a reader's buffer while the others' wait and drop.
        let share = (iov.len() / uapi::RECORD_SIZE / rings).clamp(1, READ_BATCH);
        for _ in 0..rings {
            let room = (iov.len() / uapi::RECORD_SIZE).min(share);
            if room == 0 {
                break;
            }
            let chan = &out.chans[*next % rings];
            *next = (*next + 1) % rings;
            // The first record after a wake-up is stamped (the reader's
            // wake-up, on its way to user space).
            let mut first = None;
            // SAFETY: `read_lock`, held by the caller, makes this the only
            // consumer.
            let k = unsafe {
                chan.ring.peek_each(room, |i, mut rec| {
                    if i == 0 {
                        let stamped = *woken && session.stamp_woken(chan, &mut rec);
                        first = Some((rec, stamped));
                    }
                    rec.encode(&mut buf[i]);
                })
            };
            if k == 0 {
                continue;
            }
            let copied = iov.copy_to_iter(buf[..k].as_flattened());
            let arrived = copied / uapi::RECORD_SIZE;
            // SAFETY: As above; `arrived <= k`, the records just shown.
            unsafe { chan.ring.consume(arrived) };
            if arrived > 0 && *woken {
                *woken = false;
                if let Some((rec, true)) = first {
                    session.woken_delivered(ctx, chan, &rec);
                }
            }
            n += arrived * uapi::RECORD_SIZE;
            if arrived < k {
                return if n > 0 { Ok(n) } else { Err(EFAULT) };
            }
            any = true;
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
    ctx: &Sleepable,
    lock: &L,
    file: &File,
    id: u64,
    table: &PollTable<'_>,
) -> c_uint {
    // The session this file reads: one it attached to, or the current one.
    let (session, readers) = lock.with(ctx, |sh| (sh.of_file(id), sh.readers.clone()));
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
pub(crate) fn fdinfo<S: Source, L: SessionLock<S>>(
    ctx: &Sleepable,
    lock: &L,
    id: u64,
    m: &SeqFile,
    name: &str,
) {
    let Some(session) = session_of(ctx, lock, id) else {
        seq_print!(m, "{}: no session\n", name);
        return;
    };
    let out = session.output();
    let st = out.status();
    seq_print!(
        m,
        "{}: state {} stop_reason {} period_ns {} produced {} delivered {} dropped {} missed {} deadline_misses {} stages {} deadline_ns {} priority {} threshold_ns {},{},{},{} ring_records {}\n",
        name,
        st.state,
        st.stop_reason,
        out.config.period_ns,
        st.produced,
        st.delivered,
        st.dropped,
        st.missed,
        st.deadline_misses,
        out.config.stages,
        out.config.deadline_ns,
        out.config.priority,
        out.config.threshold_ns[Stage::Irq],
        out.config.threshold_ns[Stage::Thread],
        out.config.threshold_ns[Stage::User],
        out.config.threshold_ns[Stage::Response],
        // Every channel's ring has the same size.
        out.chans.first().map_or(0, |c| c.ring.capacity())
    );
    for chan in out.chans.iter() {
        for (stage, s) in Stage::ALL.into_iter().zip(chan.stats.iter()) {
            let Ok((sum, b)) = s.snapshot(ctx) else {
                seq_print!(m, "cpu {} {}: no memory\n", chan.id, stage.name());
                continue;
            };
            if sum.count == 0 {
                continue;
            }
            let pct = |ppm| hist::percentile(&b, ppm, sum.max).unwrap_or(0);
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
