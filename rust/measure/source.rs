// SPDX-License-Identifier: GPL-2.0

//! What a measuring device implements ([`Source`]), and the one session
//! of a device with the files that own and read it ([`Sessions`]).

use kernel::{
    prelude::*,
    sync::{
        lock::GlobalLockBackend,
        Arc,
        GlobalLock, //
    },
};

use crate::rtrs::{
    context::Sleepable,
    sync::TaskMutex,
    uapi::{
        self,
        Config,
        Record,
        StopReason, //
    },
};

use super::{Channel, Output, Readers};

/// A measuring session of a device.
pub(crate) trait Source: Send + Sync + Sized + 'static {
    /// Allocates everything a session with `config` needs; nothing is
    /// allocated later. `cpus` is its CPU set, a bitmap (`config.cpus`, or
    /// the one at `config.cpus_ptr`). `EINVAL` for what this device cannot
    /// measure.
    fn configure(
        ctx: &Sleepable,
        dev: &Self::Device,
        config: Config,
        cpus: &[u64],
        readers: Arc<Readers>,
    ) -> Result<Arc<Self>>;

    /// What [`Self::configure`] needs of the device.
    type Device;

    fn output(&self) -> &Output;

    /// Starts sampling (`RTLAT_IOC_START`).
    fn start(self: &Arc<Self>, ctx: &Sleepable) -> Result;

    /// Stops sampling for `reason`; [`Output::set_finished`] follows once
    /// no producer runs, before this returns or, for a producer that cannot
    /// run yet (a kernel thread kept off its CPU), later, from a work item:
    /// [`Self::wait_stopped`] waits for it. Sleeps, but never waits for a
    /// producer; idempotent.
    fn stop(self: &Arc<Self>, ctx: &Sleepable, reason: StopReason);

    /// The owner let go of the session, under the device's lock (its file
    /// closed, or a CONFIG put another in its place): whatever a session
    /// started after this must find in place, done at once. It takes no
    /// lock a START holds (that lock is taken under the device's lock
    /// nowhere else). [`Self::stop`] follows, outside the device's lock.
    fn retire(self: &Arc<Self>, _ctx: &Sleepable) {}

    /// Waits until the stop that [`Self::stop`] began has finished;
    /// `EINTR` if a fatal signal comes first (it finishes anyway, later).
    fn wait_stopped(&self, _ctx: &Sleepable) -> Result {
        Ok(())
    }

    /// Whether the device measures the user stage with
    /// `RTLAT_IOC_USER_WAIT`: if not, the ioctl is `ENOTTY` whether or not
    /// a session exists.
    const USER_WAIT: bool = false;

    /// `RTLAT_IOC_USER_WAIT`, where [`Self::USER_WAIT`]; `ENOTTY` otherwise.
    fn user_wait(&self, _ctx: &Sleepable) -> Result<Record> {
        Err(ENOTTY)
    }

    /// `RTLAT_IOC_RESET`: clears the statistics (and whatever else the
    /// session counts since START), sampling goes on.
    fn reset(&self, _ctx: &Sleepable) {
        self.output().reset();
    }

    /// `RTLAT_IOC_BLAME`: the request's CPU's late activations explained,
    /// with its worst of the request's rank, encoded into `buf` (an answer
    /// of either layout: [`uapi::BLAME_SIZE`], [`uapi::BLAME_SIZE_V1`]);
    /// `EINVAL` where the session does not explain them (the device cannot,
    /// or its config did not ask) or does not sample that CPU.
    fn blame(&self, _ctx: &Sleepable, _req: uapi::BlameRequest, _buf: &mut [u8]) -> Result {
        Err(EINVAL)
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
    fn woken_delivered(&self, _ctx: &Sleepable, _chan: &Channel, _rec: &Record) {}

    /// The device went away (unbound): once its records are read, `read()`
    /// fails with `ENODEV` instead of returning 0, and `poll()` reports
    /// `EPOLLERR`.
    fn gone(&self) -> bool {
        false
    }
}

/// The one session of a device and the files that own and read it.
pub(crate) struct Sessions<S> {
    pub(super) session: Option<Arc<S>>,
    /// File id of the owner (the file that configured the session).
    pub(super) owner: u64,
    /// File id of the current session's streaming reader, 0 if none.
    pub(super) reader: u64,
    /// File id of the file that attached (`RTLAT_IOC_ATTACH`), 0 if none.
    pub(super) attached: u64,
    /// The session file `attached` attached to: that file reads it to its
    /// end, and its STATUS and STATS answer from it, until it closes or
    /// configures a session of its own, even after the owner closed it or
    /// configured another (`rtlat run --attach` reports what it watched).
    pub(super) kept: Option<Arc<S>>,
    /// The device's readers' queue, from [`Self::set_readers`] on.
    pub(super) readers: Option<Arc<Readers>>,
}

impl<S> Sessions<S> {
    pub(crate) const fn new() -> Self {
        Self {
            session: None,
            owner: 0,
            reader: 0,
            attached: 0,
            kept: None,
            readers: None,
        }
    }

    /// Gives the device its readers' queue (before any file is opened), or
    /// takes it back (`None`, when the device goes and no file is open).
    pub(crate) fn set_readers(&mut self, readers: Option<Arc<Readers>>) -> Option<Arc<Readers>> {
        core::mem::replace(&mut self.readers, readers)
    }

    /// The session file `id` attached to, if it did.
    fn kept_by(&self, id: u64) -> Option<&Arc<S>> {
        self.kept.as_ref().filter(|_| self.attached == id)
    }

    /// The session file `id` sees: the one it attached to, else the
    /// current one.
    pub(super) fn of_file(&self, id: u64) -> Option<Arc<S>> {
        self.kept_by(id).or(self.session.as_ref()).cloned()
    }

    /// `read()` of file `id`: the session it reads, or `EBUSY` if another
    /// file streams the current one. The session a file attached to has
    /// that file as its only reader.
    pub(super) fn reader_of(&mut self, id: u64) -> Result<Arc<S>> {
        if let Some(k) = self.kept_by(id) {
            return Ok(k.clone());
        }
        if self.reader != 0 && self.reader != id {
            return Err(EBUSY);
        }
        let s = self.session.clone().ok_or(EINVAL)?;
        self.reader = id;
        Ok(s)
    }

    /// `RTLAT_IOC_ATTACH` of file `id`: it becomes the streaming reader of
    /// the current session, kept for it (see `kept`). Returns the session
    /// it kept before, if any, for the caller to drop outside the lock.
    pub(super) fn attach(&mut self, id: u64) -> Result<Option<Arc<S>>> {
        // The owner reads its session as it is, the one it configures next
        // included; without a session there is nothing to attach to.
        let Some(s) = self.session.as_ref().filter(|_| self.owner != id) else {
            return Err(EINVAL);
        };
        // One reader of the current session, one file keeping a session.
        if self.reader != 0 && self.reader != id || self.attached != 0 && self.attached != id {
            return Err(EBUSY);
        }
        self.reader = id;
        self.attached = id;
        Ok(self.kept.replace(s.clone()))
    }

    /// File `id`'s new session goes in, owned by it. A file that attached
    /// keeps the session it attached to but no longer holds the current
    /// one's reading; `id` itself, if it had attached, sees its own from
    /// now on. Returns the session replaced and the one `id` kept, for the
    /// caller to stop and drop outside the lock.
    pub(super) fn replace(&mut self, id: u64, new: Arc<S>) -> (Option<Arc<S>>, Option<Arc<S>>) {
        if self.reader != 0 && self.reader == self.attached {
            self.reader = 0;
        }
        let kept = if self.attached == id {
            self.attached = 0;
            self.kept.take()
        } else {
            None
        };
        self.owner = id;
        (self.session.replace(new), kept)
    }

    /// File `id` is closed: it reads and keeps nothing any more. Returns
    /// the session it kept, for the caller to drop outside the lock.
    pub(super) fn closed(&mut self, id: u64) -> Option<Arc<S>> {
        if self.reader == id {
            self.reader = 0;
        }
        if self.attached == id {
            self.attached = 0;
            self.kept.take()
        } else {
            None
        }
    }
}

/// Where a device keeps its [`Sessions`]: a [`TaskMutex`] or a global
/// mutex. Both sleep, hence the token.
pub(crate) trait SessionLock<S> {
    fn with<R>(&self, ctx: &Sleepable, f: impl FnOnce(&mut Sessions<S>) -> R) -> R;
}

impl<S> SessionLock<S> for TaskMutex<Sessions<S>> {
    fn with<R>(&self, ctx: &Sleepable, f: impl FnOnce(&mut Sessions<S>) -> R) -> R {
        f(&mut self.lock(ctx))
    }
}

impl<S, B: GlobalLockBackend<Item = Sessions<S>>> SessionLock<S> for &'static GlobalLock<B> {
    fn with<R>(&self, _ctx: &Sleepable, f: impl FnOnce(&mut Sessions<S>) -> R) -> R {
        f(&mut self.lock())
    }
}

/// The current session, if any.
pub(crate) fn session<S, L: SessionLock<S>>(ctx: &Sleepable, lock: &L) -> Option<Arc<S>> {
    lock.with(ctx, |sh| sh.session.clone())
}

/// The session file `id` sees ([`Sessions::of_file`]).
pub(crate) fn session_of<S, L: SessionLock<S>>(
    ctx: &Sleepable,
    lock: &L,
    id: u64,
) -> Option<Arc<S>> {
    lock.with(ctx, |sh| sh.of_file(id))
}

pub(super) fn owned<S, L: SessionLock<S>>(ctx: &Sleepable, lock: &L, id: u64) -> Result<Arc<S>> {
    lock.with(ctx, |sh| match &sh.session {
        None => Err(EINVAL),
        Some(_) if sh.owner != id => Err(EBUSY),
        Some(s) => Ok(s.clone()),
    })
}
