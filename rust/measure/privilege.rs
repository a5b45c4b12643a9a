// SPDX-License-Identifier: GPL-2.0

//! Who may measure: what `RTLAT_IOC_CONFIG` and `RTLAT_IOC_START` ask of
//! the caller.
//!
//! A session runs kernel threads at the `SCHED_FIFO` priority of its
//! configuration. The caller may have it on a file opened for writing (one
//! passed to it counts; the node's mode and group say who may open it so:
//! `root:rtrs 0660` on a packaged system) if the priority is within its
//! `RLIMIT_RTPRIO` or it has `CAP_SYS_NICE`: the rule `sched_setscheduler()`
//! applies to a priority. Unlike `sched_setaffinity()`, nothing limits the
//! CPUs to the caller's cpuset: the group is the grant. `CAP_SYS_NICE` with
//! `CAP_SYS_ADMIN` is enough on any file, as before. What reaches past the session keeps its own requirement:
//! `RTLAT_CFG_BLAME` names other tasks and what they ran (`CAP_PERFMON` or
//! `CAP_SYS_ADMIN`, as perf asks), `RTLAT_CFG_TRACING_OFF` stops the
//! machine's trace buffer (`CAP_SYS_ADMIN`).

use kernel::{
    fs::{
        file::flags::{
            O_ACCMODE,
            O_RDONLY, //
        },
        File,
    },
    prelude::*,
};

use crate::rtrs::{
    task,
    uapi::{
        Config,
        CFG_BLAME,
        CFG_TRACING_OFF, //
    },
};

/// How a file of the device was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// `O_RDONLY`: the file may read and attach, not configure or start.
    Read,
    /// `O_WRONLY` or `O_RDWR`.
    Write,
}

impl Access {
    /// The access `file` was opened with.
    pub(crate) fn of(file: &File) -> Self {
        if file.flags() & O_ACCMODE == O_RDONLY {
            Access::Read
        } else {
            Access::Write
        }
    }
}

/// `Ok` if the caller, on a file opened with `access`, may configure or
/// start a session of `config`; `EPERM` if not.
pub(crate) fn may_measure(access: Access, config: &Config) -> Result {
    if config.flags & CFG_BLAME != 0 && !task::capable_perfmon() {
        return Err(EPERM);
    }
    if config.flags & CFG_TRACING_OFF != 0 && !task::capable_admin() {
        return Err(EPERM);
    }
    // (The limit before any capability: a member within it is not audited
    // for a capability it does not need.)
    if access == Access::Write && task::rtprio_allows(config.priority) {
        return Ok(());
    }
    if task::capable_rt() {
        return Ok(());
    }
    Err(EPERM)
}
