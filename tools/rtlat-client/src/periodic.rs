// SPDX-License-Identifier: GPL-2.0

//! An application's own periodic loop as the measured user stage.

use std::{
    io,
    path::PathBuf,
    time::Duration, //
};

use rtcore::uapi::{
    self,
    Config,
    Record,
    Stage,
    Status, //
};

use crate::{
    device::Device,
    sched, //
};

/// What [`Periodic::start`] sets up.
#[derive(Clone, Debug)]
pub struct Options {
    /// The device (`/dev/rtlat`).
    pub device: PathBuf,
    /// The CPU the loop runs on; the calling thread is pinned there.
    pub cpu: u32,
    /// The period.
    pub period: Duration,
    /// The deadline of each iteration, from its period's expected start to
    /// the next [`Periodic::wait`], at most the period; misses are counted
    /// (none: no deadline).
    pub deadline: Option<Duration>,
    /// SCHED_FIFO priority the calling thread is given (1..=99).
    pub priority: u32,
    /// SCHED_FIFO priority of the session's kernel thread, which records
    /// the periods the loop was not back for.
    pub kernel_priority: u32,
    /// Lock the process's memory (`mlockall`) first.
    pub lock_memory: bool,
    /// Records per CPU ring (power of two; 0: the default).
    pub ring_records: u32,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            device: PathBuf::from("/dev/rtlat"),
            cpu: 0,
            period: Duration::from_nanos(uapi::PERIOD_DEFAULT_NS),
            deadline: None,
            priority: 90,
            kernel_priority: uapi::PRIORITY_DEFAULT,
            lock_memory: true,
            ring_records: 0,
        }
    }
}

impl Options {
    /// The session's configuration: every stage, the deadline (the CPU is
    /// `cpu`, given to the device apart).
    pub fn config(&self) -> Result<Config, String> {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let c = Config {
            period_ns: ns(self.period),
            stages: Stage::Irq.bit() | Stage::Thread.bit() | Stage::User.bit(),
            priority: self.kernel_priority,
            ring_records: self.ring_records,
            deadline_ns: self.deadline.map_or(0, ns),
            ..Default::default()
        };
        c.validate()
            .map_err(|e| format!("invalid options ({e:?}): {self:?}"))?;
        if c.deadline_ns == 0 && self.deadline.is_some() {
            return Err("a deadline of 0 is no deadline: leave it out".into());
        }
        Ok(c)
    }
}

/// A running session whose user stage is the calling thread's own loop.
///
/// Dropping it stops the session.
pub struct Periodic {
    dev: Device,
}

impl Periodic {
    /// Locks memory (if asked), makes the calling thread SCHED_FIFO on
    /// `options.cpu`, and configures and starts a session there. The loop
    /// calls [`Self::wait`] from this thread. On failure the memory lock and
    /// the scheduling already set stay.
    pub fn start(options: &Options) -> Result<Self, String> {
        let config = options.config()?;
        if options.lock_memory {
            sched::lock_memory().map_err(|e| format!("mlockall: {e}"))?;
        }
        sched::set_fifo_pinned(options.cpu, options.priority)?;
        let dev = Device::open(&options.device, false)?;
        dev.configure(&options.device, &config, &[options.cpu])?;
        dev.start()
            .map_err(|e| format!("{}: start: {e}", options.device.display()))?;
        Ok(Self { dev })
    }

    /// Blocks until the next period starts on the caller's CPU and returns
    /// that activation's record: its irq, thread and user latencies (its
    /// response time is the time until the next call). `EINTR` on a
    /// signal, `ESHUTDOWN` once the session stopped (a threshold).
    pub fn wait(&self) -> io::Result<Record> {
        self.dev.user_wait()
    }

    /// The session's status: counts, deadline misses, a threshold's trip.
    pub fn status(&self) -> Result<Status, String> {
        self.dev.status()
    }

    /// Stops the session and returns its status and the records still in
    /// its rings (with their response times and `REC_DEADLINE_MISS`), or
    /// none if another process reads them.
    pub fn finish(mut self) -> Result<(Status, Vec<Record>), String> {
        self.dev.stop().map_err(|e| format!("stop: {e}"))?;
        let status = self.dev.status()?;
        let mut records = Vec::new();
        let mut buf = vec![0u8; 256 * uapi::RECORD_SIZE];
        loop {
            match self.dev.read_raw(&mut buf) {
                Ok(0) => break,
                Ok(n) => records.extend(Device::decode_records(&buf[..n])),
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => break,
                Err(e) => return Err(format!("read: {e}")),
            }
        }
        Ok((status, records))
    }
}
