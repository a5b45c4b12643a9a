// SPDX-License-Identifier: GPL-2.0

//! The /dev/rtlat device: open with clear errors, and the ioctls.

use std::{
    fs::{self, File, OpenOptions},
    io::{self, Read},
    os::{fd::AsRawFd, unix::fs::OpenOptionsExt},
    path::Path,
};

use rtcore::{
    hist,
    uapi::{self, ioc, Config, Record, Stage, Stats, Status},
};

/// An open rtlat device.
pub struct Device {
    file: File,
}

/// The statistics and histogram of one CPU and stage.
pub struct StageStats {
    pub cpu: u32,
    pub stage: Stage,
    pub stats: Stats,
    /// The log-linear histogram (`rtcore::hist`).
    pub buckets: Vec<u64>,
}

impl StageStats {
    /// Mean latency, ns (0 without samples).
    pub fn avg(&self) -> u64 {
        self.stats.sum.checked_div(self.stats.count).unwrap_or(0)
    }
}

/// Errors with the advice a user needs.
pub fn open_error(path: &Path, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) => format!(
            "{}: no such device: the rtlat module is not loaded (load it with 'insmod rtlat.ko' or 'modprobe rtlat')",
            path.display()
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "{}: permission denied: open it as a member of its group (a packaged system's is rtrs: adduser USER rtrs, then log in again) or as root",
            path.display()
        ),
        _ => format!("{}: {e}", path.display()),
    }
}

/// The caller's `RLIMIT_RTPRIO` (soft), `u64::MAX` if unlimited or unknown.
fn rtprio_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid `rlimit` for the call to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return u64::MAX;
    }
    r.rlim_cur
}

/// Why CONFIG was refused with `EPERM`, for a caller whose
/// `RLIMIT_RTPRIO` is `limit`, and what would allow it: what the
/// configuration asks for that the caller lacks, the likely causes first.
fn measure_refused(path: &Path, config: &Config, limit: u64) -> String {
    let p = config.priority;
    let mut why = Vec::new();
    if config.flags & uapi::CFG_BLAME != 0 {
        why.push("explaining activations (--blame) needs CAP_PERFMON".to_string());
    }
    if config.flags & uapi::CFG_TRACING_OFF != 0 {
        why.push("stopping the trace buffer at a trip needs CAP_SYS_ADMIN".to_string());
    }
    if u64::from(p) > limit || why.is_empty() {
        let now = if limit == u64::MAX {
            String::new()
        } else {
            format!(", ulimit -r says {limit}")
        };
        why.push(format!(
            "SCHED_FIFO priority {p} needs an RLIMIT_RTPRIO of at least {p} (ulimit -r; /etc/security/limits.d{now}) or CAP_SYS_NICE, on a device opened for writing"
        ));
    }
    format!(
        "{}: not allowed to measure: {}",
        path.display(),
        why.join("; ")
    )
}

/// Processes that have the device open (for "device busy").
fn holders(dev: &Path) -> Vec<String> {
    let target = fs::canonicalize(dev).unwrap_or_else(|_| dev.to_path_buf());
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for p in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = p.file_name().to_string_lossy().to_string();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let fds = fs::read_dir(p.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten();
        if fds
            .filter_map(|f| fs::read_link(f.path()).ok())
            .any(|l| l == target)
        {
            let comm = fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            out.push(format!("{pid} ({})", comm.trim()));
        }
    }
    out
}

fn ioctl(fd: i32, cmd: u32, arg: *mut u8) -> io::Result<()> {
    // SAFETY: `arg` points to a buffer of the size encoded in `cmd` (or is
    // null for commands without argument); the kernel checks the rest.
    let rc = unsafe { libc::ioctl(fd, cmd as _, arg) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Device {
    /// Opens the device; `nonblock` for the streaming reader.
    pub fn open(path: &Path, nonblock: bool) -> Result<Self, String> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(if nonblock { libc::O_NONBLOCK } else { 0 })
            .open(path)
            .map_err(|e| open_error(path, &e))?;
        Ok(Self { file })
    }

    fn fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// The CPUs of the configured session, in order (its status's set in
    /// full, whatever the CPUs' numbers).
    pub fn session_cpus(&self) -> Result<Vec<u32>, String> {
        // The words a set needs, then the set.
        let words = self.status()?.cpu_words as usize;
        let mut set = vec![0u64; words];
        self.status_with(&Status {
            cpus_ptr: set.as_mut_ptr() as u64,
            cpu_words: words as u32,
            ..Default::default()
        })?;
        Ok(uapi::cpu_bits(&set).collect())
    }

    /// The session status (its inline CPU sets name the CPUs below
    /// [`uapi::MAX_CPUS`]; [`Self::session_cpus`] all); also the UAPI
    /// version check.
    pub fn status(&self) -> Result<Status, String> {
        self.status_with(&Status::default())
    }

    /// STATUS with the request `req` (its buffers for the sets in full).
    fn status_with(&self, req: &Status) -> Result<Status, String> {
        let mut b = [0u8; uapi::STATUS_SIZE];
        req.encode(&mut b);
        ioctl(self.fd(), ioc::STATUS, b.as_mut_ptr()).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOTTY) | Some(libc::EINVAL) => format!(
                "the rtlat module does not speak UAPI version {} (status ioctl: {e}); use the tool built with the module",
                uapi::VERSION
            ),
            _ => format!("status: {e}"),
        })?;
        Status::decode(&b).map_err(|e| {
            format!(
                "UAPI mismatch between tool (version {}, status {} bytes) and module: {e:?}",
                uapi::VERSION,
                uapi::STATUS_SIZE
            )
        })
    }

    /// Configures a session owned by this file, on the CPUs `cpus` (none:
    /// the device's choice, every online CPU for /dev/rtlat); `c.cpus` is
    /// left out.
    pub fn config(&self, c: &Config, cpus: &[u32]) -> io::Result<()> {
        let mut c = *c;
        c.cpus = [0; uapi::CPU_WORDS];
        // Inline if they fit, else a bitmap the kernel reads at cpus_ptr
        // (too large a CPU number for one: EINVAL, not an empty set).
        let top = match cpus.iter().max() {
            None => 0,
            Some(&m) if m < uapi::CPUS_SIZE_MAX * 8 => m + 1,
            Some(_) => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
        };
        let mut wide = vec![0u64; uapi::cpu_words(top) as usize];
        let set: &mut [u64] = if top as usize <= uapi::MAX_CPUS {
            &mut c.cpus
        } else {
            c.cpus_ptr = wide.as_ptr() as u64;
            c.cpus_size = (wide.len() * 8) as u32;
            &mut wide
        };
        for &cpu in cpus {
            uapi::set_cpu(set, cpu);
        }
        let mut b = [0u8; uapi::CONFIG_SIZE];
        c.encode(&mut b);
        ioctl(self.fd(), ioc::CONFIG, b.as_mut_ptr())
    }

    /// Configures a session on the device at `path`, on the CPUs `cpus`
    /// (none: the device's choice), with the errors a user needs.
    pub fn configure(&self, path: &Path, config: &Config, cpus: &[u32]) -> Result<(), String> {
        self.config(config, cpus)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EBUSY) => {
                    let h = holders(path);
                    format!(
                        "{}: device busy: another session is configured or running{}",
                        path.display(),
                        if h.is_empty() {
                            String::new()
                        } else {
                            format!(" (open by {})", h.join(", "))
                        }
                    )
                }
                Some(libc::EPERM) => measure_refused(path, config, rtprio_limit()),
                _ => format!("{}: configure: {e}", path.display()),
            })
    }

    /// Starts, stops or resets the session.
    pub fn start(&self) -> io::Result<()> {
        ioctl(self.fd(), ioc::START, std::ptr::null_mut())
    }

    /// Stops the session.
    pub fn stop(&self) -> io::Result<()> {
        ioctl(self.fd(), ioc::STOP, std::ptr::null_mut())
    }

    /// Statistics and histogram of one CPU and stage.
    pub fn stats(&self, cpu: u32, stage: Stage) -> io::Result<StageStats> {
        let mut buckets = vec![0u64; hist::BUCKETS];
        let req = Stats {
            cpu,
            stage: stage as u32,
            buckets_ptr: buckets.as_mut_ptr() as u64,
            nr_buckets: buckets.len() as u32,
            ..Default::default()
        };
        let mut b = [0u8; uapi::STATS_SIZE];
        req.encode(&mut b);
        ioctl(self.fd(), ioc::STATS, b.as_mut_ptr())?;
        let st = Stats::decode(&b).map_err(|e| io::Error::other(format!("{e:?}")))?;
        buckets.truncate(st.nr_buckets as usize);
        Ok(StageStats {
            cpu,
            stage,
            stats: st,
            buckets,
        })
    }

    /// CPU `cpu`'s late activations explained (a session configured with
    /// `CFG_BLAME`), with its worst one.
    pub fn blame(&self, cpu: u32) -> io::Result<uapi::Blame> {
        self.blame_rank(cpu, 0)
    }

    /// The same with its worst one of rank `rank` (0: the worst; the
    /// answer's `nr_worst` says how many there are). Hrtimer callbacks are
    /// named whole ([`uapi::Blame::name_of`]), but by a module older than
    /// the whole names, which answers in the first layout.
    pub fn blame_rank(&self, cpu: u32, rank: u32) -> io::Result<uapi::Blame> {
        let req = uapi::BlameRequest::new(cpu, rank);
        let mut b = vec![0u8; uapi::BLAME_SIZE];
        uapi::Blame::encode_request(req, &mut b);
        match ioctl(self.fd(), ioc::BLAME, b.as_mut_ptr()) {
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => {
                b.truncate(uapi::BLAME_SIZE_V1);
                uapi::Blame::encode_request(req, &mut b);
                ioctl(self.fd(), ioc::BLAME_V1, b.as_mut_ptr())?;
            }
            r => r?,
        }
        uapi::Blame::decode(&b).map_err(|e| io::Error::other(format!("{e:?}")))
    }

    /// The user stage: blocks until the next activation on the caller's CPU.
    pub fn user_wait(&self) -> io::Result<Record> {
        let mut b = [0u8; uapi::RECORD_SIZE];
        ioctl(self.fd(), ioc::USER_WAIT, b.as_mut_ptr())?;
        Record::decode(&b).map_err(|e| io::Error::other(format!("{e:?}")))
    }

    /// Reads whole records into `buf`: how many bytes, 0 at the end of
    /// the session. A signal (`EINTR`) is retried.
    pub fn read_raw(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.file.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }

    /// Decodes the records of `bytes` (what [`Device::read_raw`] read).
    pub fn decode_records(bytes: &[u8]) -> Vec<Record> {
        bytes
            .chunks_exact(uapi::RECORD_SIZE)
            .filter_map(|c| Record::decode(c).ok())
            .collect()
    }

    /// The settings of the device's session, as this file's fdinfo says
    /// (`period_ns N` … `stages S` … `deadline_ns D priority P threshold_ns
    /// I,T,U,R`): what a file that did not configure it learns of it. The
    /// period and stages are required; what a module older than the tool
    /// does not say stays 0.
    pub fn session_settings(&self) -> Result<Config, String> {
        let path = format!("/proc/self/fdinfo/{}", self.fd());
        let text = fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let line = text
            .lines()
            .find(|l| l.contains(" period_ns "))
            .ok_or_else(|| format!("{path}: no session"))?;
        settings_of(line).map_err(|e| format!("{path}: {e}"))
    }

    /// Attaches this file to the current session as its streaming reader
    /// (`RTLAT_IOC_ATTACH`): its reads, STATUS and STATS answer from that
    /// session until the file closes, whatever its owner does meanwhile.
    pub fn attach(&self, path: &Path) -> Result<(), String> {
        ioctl(self.fd(), ioc::ATTACH, std::ptr::null_mut()).map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => format!(
                "{}: another process reads the session's records (one reader at a time)",
                path.display()
            ),
            Some(libc::EINVAL) => format!("{}: no running session to attach to", path.display()),
            Some(libc::ENOTTY) => format!(
                "{}: the module does not know RTLAT_IOC_ATTACH (older than the tool)",
                path.display()
            ),
            _ => format!("{}: attach: {e}", path.display()),
        })
    }

    /// Sets or clears `O_NONBLOCK` on the open file (every handle of it).
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        // SAFETY: fcntl on a valid descriptor with plain integer arguments.
        let flags = unsafe { libc::fcntl(self.fd(), libc::F_GETFL) };
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = if on {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        // SAFETY: As above.
        if unsafe { libc::fcntl(self.fd(), libc::F_SETFL, flags) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout` for records to read (or the end); true if
    /// there are.
    pub fn wait_readable(&self, timeout: std::time::Duration) -> io::Result<bool> {
        let mut p = libc::pollfd {
            fd: self.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: One valid pollfd for the duration of the call.
        match unsafe { libc::poll(&mut p, 1, ms) } {
            n if n < 0 => Err(io::Error::last_os_error()),
            n => Ok(n > 0),
        }
    }

    /// A second handle on the same open file (for threads).
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            file: self.file.try_clone()?,
        })
    }
}

/// The settings on a session's fdinfo line ([`Device::session_settings`]).
fn settings_of(line: &str) -> Result<Config, String> {
    let value = |name: &str| {
        let mut words = line.split_whitespace();
        words.find(|&w| w == name)?;
        words.next()
    };
    let field = |name: &str| value(name)?.parse::<u64>().ok();
    let (Some(period_ns), Some(stages)) = (field("period_ns"), field("stages")) else {
        return Err(format!(
            "no period_ns and stages in '{line}' (a module older than the tool)"
        ));
    };
    let mut c = Config {
        period_ns,
        stages: stages as u32,
        priority: field("priority").unwrap_or(0) as u32,
        deadline_ns: field("deadline_ns").unwrap_or(0),
        ..Default::default()
    };
    if let Some(list) = value("threshold_ns") {
        let v: Vec<u64> = list
            .split(',')
            .map(|v| v.parse().map_err(|_| format!("threshold_ns '{list}'")))
            .collect::<Result<_, _>>()?;
        if v.len() != c.threshold_ns.len() {
            return Err(format!("threshold_ns '{list}': not one per stage"));
        }
        c.threshold_ns.copy_from_slice(&v);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fdinfo_line_gives_the_settings() {
        let line =
            "rtlat: state 2 stop_reason 0 period_ns 40000000 produced 5 delivered 5 dropped 0 \
                    missed 0 deadline_misses 1 stages 7 deadline_ns 5000000 priority 90 \
                    threshold_ns 0,50000,0,0";
        let c = settings_of(line).unwrap();
        assert_eq!(
            (c.period_ns, c.stages, c.deadline_ns, c.priority),
            (40_000_000, 7, 5_000_000, 90)
        );
        assert_eq!(c.threshold_ns, [0, 50_000, 0, 0]);
        // A module older than the priority and thresholds: those stay 0.
        let old =
            "rtlat: state 2 stop_reason 0 period_ns 1000000 produced 1 delivered 1 dropped 0 \
                   missed 0 deadline_misses 0 stages 3 deadline_ns 0";
        let c = settings_of(old).unwrap();
        assert_eq!((c.period_ns, c.stages, c.priority), (1_000_000, 3, 0));
        assert!(settings_of("rtlat: state 2 produced 1").is_err());
        assert!(settings_of(&format!("{line},7")).is_err());
        assert!(settings_of(&line.replace("0,50000", "x,50000")).is_err());
    }

    #[test]
    fn a_refused_measurement_names_what_the_caller_lacks() {
        let mut c = Config {
            priority: 80,
            ..Config::default()
        };
        let p = Path::new("/dev/rtlat");
        // Past the limit: the limit, and what it is now.
        let s = measure_refused(p, &c, 10);
        assert!(s.starts_with("/dev/rtlat: not allowed to measure: SCHED_FIFO priority 80 needs "));
        assert!(s.contains(
            "RLIMIT_RTPRIO of at least 80 (ulimit -r; /etc/security/limits.d, ulimit -r says 10)"
        ));
        assert!(!s.contains("CAP_PERFMON") && !s.contains("CAP_SYS_ADMIN"));
        // Within the limit, a flag the caller may not have: that alone.
        c.flags = uapi::CFG_BLAME | uapi::CFG_TRACING_OFF;
        let s = measure_refused(p, &c, 99);
        assert_eq!(
            s,
            "/dev/rtlat: not allowed to measure: explaining activations (--blame) needs CAP_PERFMON; \
             stopping the trace buffer at a trip needs CAP_SYS_ADMIN"
        );
        // Both: the flags first.
        let s = measure_refused(p, &c, 0);
        let (flag, limit) = (s.find("CAP_PERFMON"), s.find("RLIMIT_RTPRIO"));
        assert!(flag.is_some() && limit.is_some() && flag < limit);
        // Within the limit, no flag: the rule itself (a read-only file).
        c.flags = 0;
        assert!(measure_refused(p, &c, u64::MAX)
            .ends_with("or CAP_SYS_NICE, on a device opened for writing"));
        assert!(open_error(p, &io::Error::from_raw_os_error(libc::EACCES)).contains("rtrs"));
    }
}
