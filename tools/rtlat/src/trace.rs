// SPDX-License-Identifier: GPL-2.0

//! `--trace`: a trace of the run's own, kept when a threshold trips.
//!
//! A tracefs instance of its own (`instances/rtlat-PID`, never the global
//! buffer, which another tracer may be using), on the measured CPUs, with
//! the events that tell what ran ([`EVENTS`]) on the clock rtlat's records
//! use (`mono`: a record's `expected_ns` is found in it as is). It traces
//! from just before the session starts; when the session ends on a
//! threshold trip, tracing stops (within the tool's 0.1 s status poll: the
//! buffer keeps what came before) and the trace is saved to the file, as
//! `rtla timerlat -t` saves its own. A run that does not trip saves
//! nothing. The instance is made and set up before the warm-up (a refusal
//! costs no measuring), and removed at the end, on an error, on SIGINT,
//! SIGTERM or SIGHUP (the run ends cleanly) and on a panic; not on
//! SIGKILL.

use std::{
    fs::{self, File},
    io::{BufRead, BufReader, BufWriter, Write},
    path::{Path, PathBuf},
    sync::{Mutex, Once},
};

use crate::files::Output;

/// The events traced: what ran on a CPU and what woke what.
pub const EVENTS: [&str; 8] = [
    "sched/sched_switch",
    "sched/sched_wakeup",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "timer/hrtimer_expire_entry",
    "timer/hrtimer_expire_exit",
];

/// The tracing directory, if tracefs is mounted.
pub fn tracefs() -> Option<&'static Path> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.join("tracing_on").exists())
}

/// A CPU list as a `tracing_cpumask`: comma-separated 32-bit hex words,
/// the highest first.
fn cpumask(cpus: &[u32]) -> String {
    let words = cpus.iter().max().map_or(1, |&m| m as usize / 32 + 1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c as usize / 32] |= 1 << (c % 32);
    }
    w.iter()
        .rev()
        .map(|x| format!("{x:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The instance this process made, while it exists: removed by the panic
/// hook too (the tool aborts on a panic, and no drop runs then).
static LIVE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Stops tracing in the instance `dir` and removes it.
fn remove(dir: &Path) {
    let _ = fs::write(dir.join("tracing_on"), "0");
    let _ = fs::remove_dir(dir);
}

/// Removes the live instance on a panic, then panics as before.
fn hook_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(dir) = LIVE.lock().ok().and_then(|mut l| l.take()) {
                remove(&dir);
            }
            previous(info);
        }));
    });
}

/// The run's trace instance, made and set up, tracing once begun.
///
/// # Invariants
///
/// `dir` is an instance this process made, named in [`LIVE`]; it is
/// removed on drop. `out` is `Some` until the trace is saved.
pub struct Trace {
    dir: PathBuf,
    path: PathBuf,
    out: Option<Output>,
}

/// Writes `value` to the instance file `name` of `dir`; an error names
/// both.
fn set(dir: &Path, name: &str, value: &str) -> Result<(), String> {
    fs::write(dir.join(name), value).map_err(|e| format!("--trace: {}/{name}: {e}", dir.display()))
}

/// The `--trace` file, created when the run starts (a hidden temporary
/// file beside it until a trace is saved, or the run is refused), and
/// tracefs found.
pub struct TraceFile {
    root: &'static Path,
    path: PathBuf,
    out: Output,
    /// The buffer per CPU, KiB.
    buffer_kb: u32,
}

impl TraceFile {
    /// Creates `path`'s file, empty until a trip's trace is saved; the
    /// instance will have `buffer_kb` KiB per CPU.
    pub fn create(path: &Path, buffer_kb: u32) -> Result<Self, String> {
        let root = tracefs().ok_or(
            "--trace: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)",
        )?;
        Ok(Self {
            root,
            path: path.to_path_buf(),
            out: Output::create(path)?,
            buffer_kb,
        })
    }

    /// Makes the instance for `cpus`, set up but not tracing yet
    /// ([`Trace::begin`]).
    pub fn prepare(self, cpus: &[u32]) -> Result<Trace, String> {
        let dir = self
            .root
            .join("instances")
            .join(format!("rtlat-{}", std::process::id()));
        hook_panics();
        fs::create_dir(&dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "--trace: {}: exists (an rtlat of this pid that was killed left it? rmdir it)",
                dir.display()
            ),
            _ => format!("--trace: {}: {e}", dir.display()),
        })?;
        if let Ok(mut l) = LIVE.lock() {
            *l = Some(dir.clone());
        }
        let t = Trace {
            dir,
            path: self.path,
            out: Some(self.out),
        };
        set(&t.dir, "tracing_on", "0")?;
        set(&t.dir, "trace_clock", "mono")?;
        set(&t.dir, "buffer_size_kb", &self.buffer_kb.to_string())?;
        set(&t.dir, "tracing_cpumask", &cpumask(cpus))?;
        for e in EVENTS {
            set(&t.dir, &format!("events/{e}/enable"), "1")?;
        }
        Ok(t)
    }
}

impl Trace {
    /// Starts tracing.
    pub fn begin(&self) -> Result<(), String> {
        set(&self.dir, "tracing_on", "1")
    }

    /// Stops tracing and copies the trace to the file; says so (`trace:
    /// FILE, N events`). The instance goes with `self`.
    pub fn save(mut self) -> Result<String, String> {
        set(&self.dir, "tracing_on", "0")?;
        let out = self.out.take().ok_or("--trace: saved already")?;
        let src = self.dir.join("trace");
        let fail = |e: std::io::Error| format!("--trace: {}: {e}", self.path.display());
        let mut r = BufReader::new(
            File::open(&src).map_err(|e| format!("--trace: {}: {e}", src.display()))?,
        );
        let mut w = BufWriter::new(File::create(out.tmp()).map_err(fail)?);
        let (mut line, mut events) = (Vec::new(), 0u64);
        while r.read_until(b'\n', &mut line).map_err(fail)? > 0 {
            if line.first().is_some_and(|&c| c != b'#' && c != b'\n') {
                events += 1;
            }
            w.write_all(&line).map_err(fail)?;
            line.clear();
        }
        w.flush().map_err(fail)?;
        drop(w);
        out.commit()?;
        Ok(format!("trace: {}, {events} events", self.path.display()))
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        remove(&self.dir);
        if let Ok(mut l) = LIVE.lock() {
            *l = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumasks_are_hex_words_highest_first() {
        assert_eq!(cpumask(&[0]), "00000001");
        assert_eq!(cpumask(&[1, 3]), "0000000a");
        assert_eq!(cpumask(&[0, 33]), "00000002,00000001");
        assert_eq!(cpumask(&[]), "00000000");
    }
}
