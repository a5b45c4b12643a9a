// SPDX-License-Identifier: GPL-2.0

//! `rtlat cyclictest`, cyclictest's counterpart: its live screen and `-q`
//! summary (`T:` lines), its `-h`/`-H` histogram and its `--json` report,
//! in rt-tests' formats (the histogram and the JSON as rt-tests 2.0 to 2.6
//! write them, Debian 12's cyclictest among them).
//!
//! The numbers are cyclictest's: each measuring thread (one user-stage
//! thread per CPU) keeps its own, from the record `USER_WAIT` hands it
//! after each wake-up ([`Tally`], a [`UserSink`]), as cyclictest's
//! `timerthread` does after `clock_nanosleep`: the latency truncated to µs
//! (ns with `-N`), min, max, the running sum for the average, the last one
//! (`Act:`), a histogram of 1-unit buckets and the cycle numbers of its
//! overflows.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    fs::File,
    io::Write as _,
    os::unix::fs::FileExt as _,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed},
        Arc, Mutex,
    },
};

use rtcore::uapi::{self, Record, Stage};

use crate::{
    collect::Outcome,
    cyclictest::opts::Settings,
    files::Output,
    live::Interval,
    mode::{Mode, UserSink},
    report::StopCause,
};

/// One measuring thread's numbers (cyclictest's `struct thread_stat`),
/// written by that thread only, read live by the main thread.
struct Thread {
    cycles: AtomicU64,
    min: AtomicI64,
    max: AtomicI64,
    act: AtomicI64,
    sum: AtomicI64,
    /// 1-unit buckets, 0 to the histogram size - 1 (empty without `-h`).
    hist: Vec<AtomicU64>,
    /// Samples at or above the histogram size.
    overflows: AtomicU64,
    /// The cycle numbers of the first (histogram size) of them.
    overflow_cycles: Mutex<Vec<u64>>,
}

impl Thread {
    fn new(hist_size: usize) -> Self {
        Self {
            cycles: AtomicU64::new(0),
            // cyclictest's starting values.
            min: AtomicI64::new(1_000_000),
            max: AtomicI64::new(0),
            act: AtomicI64::new(0),
            sum: AtomicI64::new(0),
            hist: (0..hist_size).map(|_| AtomicU64::new(0)).collect(),
            overflows: AtomicU64::new(0),
            overflow_cycles: Mutex::new(Vec::new()),
        }
    }

    fn snap(&self) -> Snap {
        Snap {
            cycles: self.cycles.load(Relaxed),
            min: self.min.load(Relaxed),
            act: self.act.load(Relaxed),
            sum: self.sum.load(Relaxed),
            max: self.max.load(Relaxed),
        }
    }
}

/// One thread's numbers at one moment, in the output unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snap {
    pub cycles: u64,
    pub min: i64,
    pub act: i64,
    /// Sum of every sample (cyclictest's `avg` before the division).
    pub sum: i64,
    pub max: i64,
}

impl Snap {
    /// cyclictest's `Avg:`: the sum over the cycles, truncated; 0 before the first.
    pub fn avg(&self) -> i64 {
        if self.cycles == 0 {
            0
        } else {
            self.sum / self.cycles as i64
        }
    }
}

/// `--tracemark` with `-b`: where the thread that broke writes cyclictest's
/// marker, and stops the trace.
pub struct TraceMark {
    /// tracefs' `trace_marker`.
    pub marker: File,
    /// tracefs' `tracing_on`, if it could be opened.
    pub tracing_on: Option<File>,
}

/// Every measuring thread's numbers: the [`UserSink`] of the user-stage
/// threads.
pub struct Tally {
    /// Thread N's CPU.
    cpus: Vec<u32>,
    threads: Vec<Thread>,
    nsecs: bool,
    loops: Option<u64>,
    breaktrace: i32,
    tracemark: Option<TraceMark>,
    /// The marker was written (only the first break writes it).
    marked: AtomicBool,
}

impl Tally {
    pub fn new(s: &Settings, tracemark: Option<TraceMark>) -> Self {
        let size = s.histogram.as_ref().map_or(0, |h| h.size as usize);
        Self {
            cpus: s.cpus.clone(),
            threads: s.cpus.iter().map(|_| Thread::new(size)).collect(),
            nsecs: s.nsecs,
            loops: s.loops,
            breaktrace: s.breaktrace,
            tracemark,
            marked: AtomicBool::new(false),
        }
    }

    fn snaps(&self) -> Vec<Snap> {
        self.threads.iter().map(Thread::snap).collect()
    }

    /// Each thread's histogram, at the end.
    fn hists(&self) -> Vec<HistThread> {
        self.threads
            .iter()
            .map(|t| HistThread {
                snap: t.snap(),
                buckets: t.hist.iter().map(|b| b.load(Relaxed)).collect(),
                overflows: t.overflows.load(Relaxed),
                overflow_cycles: t
                    .overflow_cycles
                    .lock()
                    .map(|v| v.clone())
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// cyclictest's break: the trace marker, then tracing off.
    fn mark(&self, diff: i64) {
        let Some(t) = &self.tracemark else { return };
        if self.marked.swap(true, Relaxed) {
            return;
        }
        let msg = format!("hit latency threshold ({diff} > {})", self.breaktrace);
        if (&t.marker).write_all(msg.as_bytes()).is_err() {
            eprintln!("WARN: trace mark write failed");
        }
        if let Some(on) = &t.tracing_on {
            if (&*on).write_all(b"0\n").is_err() {
                eprintln!("WARN: trace stop write failed");
            }
        }
    }
}

impl UserSink for Tally {
    fn on_user(&self, cpu: u32, rec: &Record) -> bool {
        let Some(t) = self
            .cpus
            .iter()
            .position(|&c| c == cpu)
            .map(|i| &self.threads[i])
        else {
            return true;
        };
        let ns = rec.lat_ns[Stage::User];
        if ns < 0 {
            return true;
        }
        // calcdiff / calcdiff_ns.
        let diff = if self.nsecs { ns } else { ns / 1000 };
        let cycle = t.cycles.load(Relaxed);
        if diff < t.min.load(Relaxed) {
            t.min.store(diff, Relaxed);
        }
        if diff > t.max.load(Relaxed) {
            t.max.store(diff, Relaxed);
        }
        t.sum.fetch_add(diff, Relaxed);
        if rec.flags & uapi::REC_THRESHOLD != 0 {
            self.mark(diff);
        }
        t.act.store(diff, Relaxed);
        if !t.hist.is_empty() {
            match usize::try_from(diff).ok().and_then(|d| t.hist.get(d)) {
                Some(b) => {
                    b.fetch_add(1, Relaxed);
                }
                None => {
                    t.overflows.fetch_add(1, Relaxed);
                    if let Ok(mut v) = t.overflow_cycles.lock() {
                        if v.len() < t.hist.len() {
                            v.push(cycle);
                        }
                    }
                }
            }
        }
        t.cycles.store(cycle + 1, Relaxed);
        self.loops.is_none_or(|l| cycle + 1 < l)
    }
}

/// cyclictest's `print_stat` line (without the newline):
/// `T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`,
/// with `-N` `Act:%8ld Avg:%8ld`.
pub fn stat_line(
    index: usize,
    tid: i32,
    prio: u32,
    interval: u64,
    s: &Snap,
    nsecs: bool,
) -> String {
    let (c, min, act, avg, max) = (s.cycles, s.min, s.act, s.avg(), s.max);
    if nsecs {
        format!("T:{index:2} ({tid:5}) P:{prio:2} I:{interval} C:{c:7} Min:{min:7} Act:{act:8} Avg:{avg:8} Max:{max:8}")
    } else {
        format!("T:{index:2} ({tid:5}) P:{prio:2} I:{interval} C:{c:7} Min:{min:7} Act:{act:5} Avg:{avg:5} Max:{max:8}")
    }
}

/// The line above the `T:` lines on cyclictest's live screen, and the
/// empty line after it: `policy: %s%s%s: loadavg: %s          \n\n`.
pub fn policy_line(policy: &str, loadavg: &str) -> String {
    format!("policy: {policy}: loadavg: {loadavg}          \n\n")
}

/// One thread's histogram and numbers at the end.
#[derive(Clone, Debug, Default)]
pub struct HistThread {
    pub snap: Snap,
    pub buckets: Vec<u64>,
    pub overflows: u64,
    pub overflow_cycles: Vec<u64>,
}

/// cyclictest's `print_hist` (rt-tests 2.0 to 2.6): `# Histogram`, a row
/// `%06d ` per bucket with a tab-separated `%06lu` column per thread (with
/// `-H` and several threads, their sum), `# Total:`, the min, avg and max
/// latencies, the overflows and the cycle numbers of the overflows per
/// thread, and an empty line.
pub fn histogram(threads: &[HistThread], summary: bool) -> String {
    let n = threads.len();
    let sum_col = summary && n > 1;
    let size = threads.first().map_or(0, |t| t.buckets.len());
    let mut s = String::from("# Histogram\n");
    let mut totals = vec![0u64; n + 1];
    for i in 0..size {
        let _ = write!(s, "{i:06} ");
        let mut all = 0;
        for (j, t) in threads.iter().enumerate() {
            let v = t.buckets[i];
            let _ = write!(s, "{v:06}");
            if j + 1 < n {
                s.push('\t');
            }
            totals[j] += v;
            all += v;
        }
        if sum_col {
            let _ = write!(s, "\t{all:06}");
            totals[n] += all;
        }
        s.push('\n');
    }
    let row = |s: &mut String, name: &str, vals: &mut dyn Iterator<Item = String>| {
        s.push_str(name);
        for v in vals {
            s.push(' ');
            s.push_str(&v);
        }
        s.push('\n');
    };
    let total_cols = if sum_col { n + 1 } else { n };
    row(
        &mut s,
        "# Total:",
        &mut totals[..total_cols].iter().map(|v| format!("{v:09}")),
    );
    row(
        &mut s,
        "# Min Latencies:",
        &mut threads.iter().map(|t| format!("{:05}", t.snap.min)),
    );
    row(
        &mut s,
        "# Avg Latencies:",
        &mut threads.iter().map(|t| format!("{:05}", t.snap.avg())),
    );
    let maxmax = threads.iter().map(|t| t.snap.max).max().unwrap_or(0).max(0);
    row(
        &mut s,
        "# Max Latencies:",
        &mut threads
            .iter()
            .map(|t| t.snap.max)
            .chain(sum_col.then_some(maxmax))
            .map(|v| format!("{v:05}")),
    );
    let all: u64 = threads.iter().map(|t| t.overflows).sum();
    row(
        &mut s,
        "# Histogram Overflows:",
        &mut threads
            .iter()
            .map(|t| t.overflows)
            .chain(sum_col.then_some(all))
            .map(|v| format!("{v:05}")),
    );
    s.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in threads.iter().enumerate() {
        let _ = write!(s, "# Thread {i}:");
        for c in &t.overflow_cycles {
            let _ = write!(s, " {c:05}");
        }
        let logged = t.overflow_cycles.len() as u64;
        if logged < t.overflows {
            let _ = write!(s, " # {:05} others", t.overflows - logged);
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

/// The system part of cyclictest's JSON (`uname` and `/sys/kernel/realtime`).
#[derive(Clone, Debug, Default)]
pub struct JsonSys {
    pub sysname: String,
    pub nodename: String,
    pub release: String,
    pub version: String,
    pub machine: String,
    /// 1 if `/sys/kernel/realtime` starts with `1` (mainline PREEMPT_RT has no such file).
    pub realtime: i32,
}

/// One thread of cyclictest's JSON.
#[derive(Clone, Debug, Default)]
pub struct JsonThread {
    pub snap: Snap,
    pub buckets: Vec<u64>,
    pub cpu: i64,
    pub node: i64,
}

/// Everything in cyclictest's JSON.
#[derive(Clone, Debug, Default)]
pub struct Json {
    pub cmdline: String,
    pub version: String,
    /// RFC 2822 local times.
    pub start_time: String,
    pub end_time: String,
    pub return_code: i32,
    pub sys: JsonSys,
    pub nsecs: bool,
    pub threads: Vec<JsonThread>,
}

/// A JSON string (quoted, escaped: cyclictest writes its strings raw).
fn jstr(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// cyclictest's JSON, as rt-tests' `rt_write_json` and cyclictest's
/// `write_stats` (2.0 to 2.6) write it, byte for byte in layout: the keys
/// `"cmdline:"` and `"rt_test_version:"` with their colon,
/// `resolution_in_ns` the 0/1 of `-N`, every thread's `histogram` (empty
/// without `-h`), `avg` with two decimals.
pub fn json(j: &Json) -> String {
    let mut f = String::new();
    let _ = writeln!(f, "{{");
    let _ = writeln!(f, "  \"file_version\": 1,");
    let _ = writeln!(f, "  \"cmdline:\": {},", jstr(&j.cmdline));
    let _ = writeln!(f, "  \"rt_test_version:\": {},", jstr(&j.version));
    let _ = writeln!(f, "  \"start_time\": {},", jstr(&j.start_time));
    let _ = writeln!(f, "  \"end_time\": {},", jstr(&j.end_time));
    let _ = writeln!(f, "  \"return_code\": {},", j.return_code);
    let _ = writeln!(f, "  \"sysinfo\": {{");
    let _ = writeln!(f, "    \"sysname\": {},", jstr(&j.sys.sysname));
    let _ = writeln!(f, "    \"nodename\": {},", jstr(&j.sys.nodename));
    let _ = writeln!(f, "    \"release\": {},", jstr(&j.sys.release));
    let _ = writeln!(f, "    \"version\": {},", jstr(&j.sys.version));
    let _ = writeln!(f, "    \"machine\": {},", jstr(&j.sys.machine));
    let _ = writeln!(f, "    \"realtime\": {}", j.sys.realtime);
    let _ = writeln!(f, "  }},");
    let _ = writeln!(f, "  \"num_threads\": {},", j.threads.len());
    let _ = writeln!(f, "  \"resolution_in_ns\": {},", u32::from(j.nsecs));
    let _ = writeln!(f, "  \"thread\": {{");
    for (i, t) in j.threads.iter().enumerate() {
        let _ = writeln!(f, "    \"{i}\": {{");
        f.push_str("      \"histogram\": {");
        let mut comma = false;
        for (b, &n) in t.buckets.iter().enumerate().filter(|(_, &n)| n != 0) {
            f.push_str(if comma { ",\n" } else { "\n" });
            let _ = write!(f, "        \"{b}\": {n}");
            comma = true;
        }
        if comma {
            f.push('\n');
        }
        let _ = writeln!(f, "      }},");
        let s = &t.snap;
        // 0/0 is nan in cyclictest, which is no JSON: 0 here.
        let avg = if s.cycles == 0 {
            0.0
        } else {
            s.sum as f64 / s.cycles as f64
        };
        let _ = writeln!(f, "      \"cycles\": {},", s.cycles);
        let _ = writeln!(f, "      \"min\": {},", s.min);
        let _ = writeln!(f, "      \"max\": {},", s.max);
        let _ = writeln!(f, "      \"avg\": {avg:.2},");
        let _ = writeln!(f, "      \"cpu\": {},", t.cpu);
        let _ = writeln!(f, "      \"node\": {}", t.node);
        let _ = writeln!(
            f,
            "    }}{}",
            if i + 1 == j.threads.len() { "" } else { "," }
        );
    }
    let _ = writeln!(f, "  }}");
    let _ = writeln!(f, "}}");
    f
}

/// RFC 2822 local time of `epoch` seconds, as rt-tests' `get_timestamp`
/// (`%a, %d %b %Y %T %z`).
pub fn rfc2822(epoch: f64) -> String {
    let t = epoch as libc::time_t;
    // SAFETY: `tm` is plain data, filled by localtime_r from `t`.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: Both pointers are valid for the call.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return String::new();
    }
    let mut buf = [0u8; 64];
    // SAFETY: `buf` has room for 64 bytes, the format is NUL-terminated and
    // `tm` is initialised.
    let n = unsafe {
        libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%a, %d %b %Y %T %z".as_ptr(),
            &tm,
        )
    };
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// cyclictest's running status file: its POSIX shared memory object
/// `/cyclictest<PID>`, `/dev/shm/cyclictest<PID>`, which SIGUSR2 fills
/// with the status block (rt-tests' `get_cyclictest_snapshot` reads it).
/// Removed when dropped, at the run's end.
pub struct Rstat {
    pub path: PathBuf,
    pub file: File,
}

impl Rstat {
    /// Replaces the file's content with `text`.
    fn write(&self, text: &str) {
        // From its start each time (cyclictest truncates, then writes at
        // the offset its previous status left).
        if let Err(e) = self.file.set_len(0) {
            eprintln!("ftruncate error {e}");
        }
        let _ = self.file.write_all_at(text.as_bytes(), 0);
    }
}

impl Drop for Rstat {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The mode of `rtlat cyclictest`.
pub struct Cyclictest {
    s: Settings,
    tally: Arc<Tally>,
    /// Each thread's NUMA node for the JSON (-1 without NUMA, and with `-S`).
    nodes: Vec<i64>,
    /// The `--json` file, created before the run.
    json_out: Mutex<Option<Output>>,
    /// The running status file, if it could be made.
    rstat: Option<Rstat>,
}

impl Cyclictest {
    pub fn new(s: Settings, tracemark: Option<TraceMark>, nodes: Vec<i64>) -> Self {
        let tally = Arc::new(Tally::new(&s, tracemark));
        Self {
            s,
            tally,
            nodes,
            json_out: Mutex::new(None),
            rstat: None,
        }
    }

    /// The mode that writes its running status to `rstat` on SIGUSR2.
    pub fn with_rstat(mut self, rstat: Option<Rstat>) -> Self {
        self.rstat = rstat;
        self
    }

    /// cyclictest's status block (sighand's): its `T:` lines between two
    /// rules.
    fn status_block(&self, tids: &BTreeMap<u32, i32>) -> String {
        let rule = "#---------------------------\n";
        format!(
            "{rule}# cyclictest current status:\n{}{rule}",
            self.stat_lines(tids)
        )
    }

    /// The `T:` lines, with the measuring threads' ids `tids` (per CPU).
    fn stat_lines(&self, tids: &BTreeMap<u32, i32>) -> String {
        let s = &self.s;
        let mut out = String::new();
        for (i, (snap, cpu)) in self.tally.snaps().iter().zip(&s.cpus).enumerate() {
            let tid = tids.get(cpu).copied().unwrap_or(0);
            out += &stat_line(i, tid, s.priority, s.interval_us, snap, s.nsecs);
            out.push('\n');
        }
        out
    }

    /// cyclictest's screen: the policy line and the `T:` lines.
    fn screen(&self, tids: &BTreeMap<u32, i32>) -> String {
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        // cyclictest drops the last character read (the newline).
        let mut load = load.as_str();
        if let Some((i, _)) = load.char_indices().last() {
            load = &load[..i];
        }
        policy_line(self.s.policy.name(), load) + &self.stat_lines(tids)
    }

    fn histogram(&self) -> String {
        let summary = self.s.histogram.as_ref().is_some_and(|h| h.summary);
        histogram(&self.tally.hists(), summary)
    }

    fn json(&self, o: &Outcome<'_>) -> String {
        let sys = &o.report.system;
        let field = |k: &str| {
            sys.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        let realtime = sys
            .get("sys_kernel_realtime")
            .and_then(|v| v.as_str())
            .is_some_and(|v| v.starts_with('1'));
        json(&Json {
            cmdline: o.report.command_line.join(" "),
            version: format!("rtlat {}", env!("CARGO_PKG_VERSION")),
            start_time: rfc2822(o.report.start_time),
            end_time: rfc2822(o.report.end_time),
            // The status the tool exits with, as rt-tests writes its own.
            return_code: o.report.exit_code.map_or(0, i32::from),
            sys: JsonSys {
                sysname: field("sysname"),
                nodename: field("nodename"),
                release: field("release"),
                version: field("version"),
                machine: field("machine"),
                realtime: i32::from(realtime),
            },
            nsecs: self.s.nsecs,
            threads: self
                .tally
                .hists()
                .into_iter()
                .zip(&self.s.cpus)
                .enumerate()
                .map(|(i, (h, &cpu))| JsonThread {
                    snap: h.snap,
                    buckets: h.buckets,
                    cpu: i64::from(cpu),
                    node: self.nodes.get(i).copied().unwrap_or(-1),
                })
                .collect(),
        })
    }
}

impl Mode for Cyclictest {
    fn on_interval(&self, now: &Interval<'_>) -> String {
        self.screen(&now.tids)
    }

    fn on_status(&self, now: &Interval<'_>, _: &uapi::Status) -> String {
        // cyclictest's sighand on SIGUSR1, on stderr.
        self.status_block(&now.tids)
    }

    fn on_snapshot(&self, now: &Interval<'_>) {
        // cyclictest's sighand on SIGUSR2, into its status file.
        match &self.rstat {
            Some(r) => r.write(&self.status_block(&now.tids)),
            None => eprintln!("ERROR: rstat_fd not valid"),
        }
    }

    fn on_end(&self, o: &Outcome<'_>) -> String {
        let s = &self.s;
        let tids = &o.stream.tids;
        let mut out = String::new();
        if !s.quiet {
            // The last screen stays on the terminal.
            out += &self.screen(tids);
        } else if s.histogram.is_none() {
            out += &self.stat_lines(tids);
        }
        if s.histogram.as_ref().is_some_and(|h| h.file.is_none()) {
            out += &self.histogram();
        }
        if s.breaktrace != 0 {
            out += "# Thread Ids:";
            for cpu in &s.cpus {
                let _ = write!(out, " {:05}", tids.get(cpu).copied().unwrap_or(0));
            }
            out.push('\n');
            if let Some(t) = &o.report.stop.trip {
                let v = if s.nsecs {
                    t.value_ns
                } else {
                    t.value_ns / 1000
                };
                let tid = tids.get(&t.cpu).copied().unwrap_or(0);
                let _ = writeln!(out, "# Break thread: {tid}");
                let _ = writeln!(out, "# Break value: {v}");
            }
        }
        out
    }

    fn user_sink(&self) -> Option<Arc<dyn UserSink>> {
        Some(self.tally.clone())
    }

    fn replaces_live(&self) -> bool {
        true
    }

    fn open_files(&self) -> Result<(), String> {
        if let Some(path) = self.s.json.as_ref().filter(|p| *p != "-") {
            *self.json_out.lock().unwrap() = Some(Output::create(Path::new(path))?);
        }
        Ok(())
    }

    fn write_files(&self, o: &Outcome<'_>) -> Result<(), String> {
        if let Some(path) = &self.s.json {
            let text = self.json(o);
            if path == "-" {
                print!("{text}");
            } else {
                let out = self.json_out.lock().unwrap().take();
                let out = out.map_or_else(|| Output::create(Path::new(path)), Ok)?;
                out.write(text.as_bytes())?;
            }
        }
        if let Some(file) = self.s.histogram.as_ref().and_then(|h| h.file.as_ref()) {
            if let Err(e) = std::fs::write(file, self.histogram()) {
                // cyclictest's perror, and on it goes.
                eprintln!("opening histogram file:: {e}");
            }
        }
        Ok(())
    }

    fn peer_exit(&self, reason: StopCause) -> Option<u8> {
        // cyclictest exits 0 after a -b break too; 1 when it failed (a
        // session the device stopped, a measuring thread that failed).
        Some(u8::from(matches!(reason, StopCause::Error)))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::{
        cli::{Cli, Cmd},
        collect,
        cyclictest::opts::{self, Env, Parsed},
        plan::Plan,
        report::{self, Trip},
    };

    fn settings(args: &str) -> Settings {
        let env = Env {
            possible: (0..4).collect(),
            configured: 4,
            allowed: (0..4).collect(),
        };
        let args: Vec<String> = args.split_whitespace().map(String::from).collect();
        match opts::parse(&args, &env) {
            Ok(Parsed::Run(s)) => *s,
            other => panic!("{other:?}"),
        }
    }

    fn snap(cycles: u64, min: i64, act: i64, sum: i64, max: i64) -> Snap {
        Snap {
            cycles,
            min,
            act,
            sum,
            max,
        }
    }

    /// A record of the user stage on `cpu` with latency `ns`.
    fn rec(cpu: u32, ns: i64, flags: u32) -> Record {
        Record {
            cpu,
            lat_ns: [1_000, 2_000, ns, -1],
            flags,
            ..Default::default()
        }
    }

    #[test]
    fn stat_lines_as_print_stat() {
        // T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld
        assert_eq!(
            stat_line(0, 1234, 99, 1000, &snap(10000, 3, 5, 40000, 12), false),
            "T: 0 ( 1234) P:99 I:1000 C:  10000 Min:      3 Act:    5 Avg:    4 Max:      12"
        );
        assert_eq!(
            stat_line(
                11,
                123456,
                5,
                200,
                &snap(12345678, 17, 123456, 0, 1234567890),
                false
            ),
            "T:11 (123456) P: 5 I:200 C:12345678 Min:     17 Act:123456 Avg:    0 Max:1234567890"
        );
        // -N: Act:%8ld Avg:%8ld
        assert_eq!(
            stat_line(1, 567, 80, 200, &snap(5, 3000, 5007, 20500, 9000), true),
            "T: 1 (  567) P:80 I:200 C:      5 Min:   3000 Act:    5007 Avg:    4100 Max:    9000"
        );
        // Before the first cycle: cyclictest's starting values.
        assert_eq!(
            stat_line(0, 0, 80, 1000, &Thread::new(0).snap(), false),
            "T: 0 (    0) P:80 I:1000 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0"
        );
        assert_eq!(
            policy_line("fifo", "0.00 0.01 0.05 1/123 4567"),
            "policy: fifo: loadavg: 0.00 0.01 0.05 1/123 4567          \n\n"
        );
    }

    fn hist_thread(
        buckets: &[u64],
        snap: Snap,
        overflow_cycles: &[u64],
        overflows: u64,
    ) -> HistThread {
        HistThread {
            snap,
            buckets: buckets.to_vec(),
            overflows,
            overflow_cycles: overflow_cycles.to_vec(),
        }
    }

    #[test]
    fn histogram_as_print_hist() {
        let one = [hist_thread(&[0, 2, 5], snap(8, 1, 2, 16, 40), &[6], 1)];
        assert_eq!(
            histogram(&one, false),
            "# Histogram\n\
             000000 000000\n\
             000001 000002\n\
             000002 000005\n\
             # Total: 000000007\n\
             # Min Latencies: 00001\n\
             # Avg Latencies: 00002\n\
             # Max Latencies: 00040\n\
             # Histogram Overflows: 00001\n\
             # Histogram Overflow at cycle number:\n\
             # Thread 0: 00006\n\
             \n"
        );
        // -H with one thread: no summary column (rt-tests 2.0 to 2.6).
        assert_eq!(histogram(&one, true), histogram(&one, false));
        // Two threads, -H: tab-separated columns, the sum column, the
        // overflows beyond the logged cycle numbers.
        let two = [
            hist_thread(&[1, 0], snap(1, 0, 0, 0, 0), &[], 0),
            hist_thread(&[3, 4], snap(9, 0, 9, 40, 99), &[2, 5], 3),
        ];
        assert_eq!(
            histogram(&two, true),
            "# Histogram\n\
             000000 000001\t000003\t000004\n\
             000001 000000\t000004\t000004\n\
             # Total: 000000001 000000007 000000008\n\
             # Min Latencies: 00000 00000\n\
             # Avg Latencies: 00000 00004\n\
             # Max Latencies: 00000 00099 00099\n\
             # Histogram Overflows: 00000 00003 00003\n\
             # Histogram Overflow at cycle number:\n\
             # Thread 0:\n\
             # Thread 1: 00002 00005 # 00001 others\n\
             \n"
        );
        let plain = histogram(&two, false);
        assert!(plain.contains("000001 000000\t000004\n# Total: 000000001 000000007\n"));
        assert!(
            plain.contains("# Max Latencies: 00000 00099\n# Histogram Overflows: 00000 00003\n")
        );
    }

    fn sample_json(hist: bool) -> Json {
        Json {
            cmdline: "rtlat cyclictest -q \"x\"".into(),
            version: "rtlat 0.1.0".into(),
            start_time: "Tue, 14 Jan 2025 10:00:00 +0100".into(),
            end_time: "Tue, 14 Jan 2025 10:00:02 +0100".into(),
            return_code: 0,
            sys: JsonSys {
                sysname: "Linux".into(),
                nodename: "box".into(),
                release: "7.3.0-rt".into(),
                version: "#1 SMP PREEMPT_RT".into(),
                machine: "x86_64".into(),
                realtime: 0,
            },
            nsecs: false,
            threads: vec![
                JsonThread {
                    snap: snap(3, 2, 4, 10, 5),
                    buckets: if hist { vec![0, 0, 1, 1, 0, 1] } else { vec![] },
                    cpu: 0,
                    node: 0,
                },
                JsonThread {
                    snap: snap(0, 1_000_000, 0, 0, 0),
                    buckets: if hist { vec![0; 6] } else { vec![] },
                    cpu: 2,
                    node: -1,
                },
            ],
        }
    }

    #[test]
    fn json_layout_as_rt_write_json() {
        assert_eq!(
            json(&sample_json(true)),
            r##"{
  "file_version": 1,
  "cmdline:": "rtlat cyclictest -q \"x\"",
  "rt_test_version:": "rtlat 0.1.0",
  "start_time": "Tue, 14 Jan 2025 10:00:00 +0100",
  "end_time": "Tue, 14 Jan 2025 10:00:02 +0100",
  "return_code": 0,
  "sysinfo": {
    "sysname": "Linux",
    "nodename": "box",
    "release": "7.3.0-rt",
    "version": "#1 SMP PREEMPT_RT",
    "machine": "x86_64",
    "realtime": 0
  },
  "num_threads": 2,
  "resolution_in_ns": 0,
  "thread": {
    "0": {
      "histogram": {
        "2": 1,
        "3": 1,
        "5": 1
      },
      "cycles": 3,
      "min": 2,
      "max": 5,
      "avg": 3.33,
      "cpu": 0,
      "node": 0
    },
    "1": {
      "histogram": {      },
      "cycles": 0,
      "min": 1000000,
      "max": 0,
      "avg": 0.00,
      "cpu": 2,
      "node": -1
    }
  }
}
"##
        );
    }

    #[test]
    fn json_keys_and_types_as_rt_tests() {
        use serde_json::Value;
        for hist in [true, false] {
            let text = json(&sample_json(hist));
            let v: Value = serde_json::from_str(&text).expect("valid JSON");
            let obj = v.as_object().unwrap();
            let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(
                keys,
                [
                    "cmdline:",
                    "end_time",
                    "file_version",
                    "num_threads",
                    "resolution_in_ns",
                    "return_code",
                    "rt_test_version:",
                    "start_time",
                    "sysinfo",
                    "thread"
                ]
            );
            assert!(v["file_version"].is_u64() && v["return_code"].is_i64());
            for k in ["cmdline:", "rt_test_version:", "start_time", "end_time"] {
                assert!(v[k].is_string(), "{k}");
            }
            for k in ["sysname", "nodename", "release", "version", "machine"] {
                assert!(v["sysinfo"][k].is_string(), "{k}");
            }
            assert!(v["sysinfo"]["realtime"].is_i64());
            assert_eq!(v["sysinfo"].as_object().unwrap().len(), 6);
            assert_eq!(v["num_threads"], 2);
            assert_eq!(v["resolution_in_ns"], 0);
            let threads = v["thread"].as_object().unwrap();
            assert_eq!(threads.keys().collect::<Vec<_>>(), ["0", "1"]);
            for t in threads.values() {
                let t = t.as_object().unwrap();
                let mut keys: Vec<&str> = t.keys().map(String::as_str).collect();
                keys.sort_unstable();
                assert_eq!(
                    keys,
                    ["avg", "cpu", "cycles", "histogram", "max", "min", "node"]
                );
                assert!(t["histogram"].is_object());
                assert!(t["histogram"]
                    .as_object()
                    .unwrap()
                    .values()
                    .all(Value::is_u64));
                assert!(t["cycles"].is_u64() && t["min"].is_i64() && t["max"].is_i64());
                assert!(t["avg"].is_f64() && t["cpu"].is_i64() && t["node"].is_i64());
            }
            assert_eq!(v["thread"]["0"]["avg"], 3.33);
            assert_eq!(
                threads["0"]["histogram"].as_object().unwrap().len(),
                if hist { 3 } else { 0 }
            );
        }
        let mut ns = sample_json(false);
        ns.nsecs = true;
        assert!(json(&ns).contains("\n  \"resolution_in_ns\": 1,\n"));
    }

    #[test]
    fn tally_as_timerthread() {
        let s = settings("-p 80 -t 2 -h 5 -l 4");
        let t = Tally::new(&s, None);
        // 3.9 µs is 3 (truncated); 5 µs and more overflow the 0..4 buckets.
        for (cpu, ns) in [(0, 3_900), (0, 7_000), (0, 1_200), (1, 4_999)] {
            assert!(t.on_user(cpu, &rec(cpu, ns, 0)));
        }
        // Not measured in the user stage, or not one of the threads' CPUs: skipped.
        assert!(t.on_user(0, &rec(0, -1, 0)));
        assert!(t.on_user(3, &rec(3, 1_000, 0)));
        // The fourth activation of thread 0 (-l 4): it is done.
        assert!(!t.on_user(0, &rec(0, 9_000, 0)));
        let h = t.hists();
        assert_eq!(h[0].snap, snap(4, 1, 9, 3 + 7 + 1 + 9, 9));
        assert_eq!(h[0].buckets, [0, 1, 0, 1, 0]);
        assert_eq!(
            (h[0].overflows, h[0].overflow_cycles.clone()),
            (2, vec![1, 3])
        );
        assert_eq!(h[1].snap, snap(1, 4, 4, 4, 4));
        assert_eq!(h[1].buckets, [0, 0, 0, 0, 1]);
        // -N: ns, and the overflow log holds at most the histogram size.
        let s = settings("-p 80 -N -h 2");
        let t = Tally::new(&s, None);
        for ns in [0, 1, 5, 6, 7] {
            assert!(t.on_user(0, &rec(0, ns, 0)));
        }
        let h = t.hists();
        assert_eq!((h[0].snap.min, h[0].snap.max, h[0].snap.act), (0, 7, 7));
        assert_eq!(h[0].buckets, [1, 1]);
        assert_eq!(
            (h[0].overflows, h[0].overflow_cycles.clone()),
            (3, vec![2, 3])
        );
        assert!(histogram(&h, false).contains("# Thread 0: 00002 00003 # 00001 others\n"));
    }

    #[test]
    fn a_break_writes_the_trace_marker_once() {
        let dir = std::env::temp_dir().join(format!("rtlat-ct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (m, on) = (dir.join("trace_marker"), dir.join("tracing_on"));
        let mark = TraceMark {
            marker: File::create(&m).unwrap(),
            tracing_on: Some(File::create(&on).unwrap()),
        };
        let t = Tally::new(&settings("-p 80 -b 100 --tracemark"), Some(mark));
        assert!(t.on_user(0, &rec(0, 100_999, 0)));
        assert_eq!(std::fs::read_to_string(&m).unwrap(), "");
        assert!(t.on_user(0, &rec(0, 150_400, uapi::REC_THRESHOLD)));
        assert!(t.on_user(0, &rec(0, 170_000, uapi::REC_THRESHOLD)));
        assert_eq!(
            std::fs::read_to_string(&m).unwrap(),
            "hit latency threshold (150 > 100)"
        );
        assert_eq!(std::fs::read_to_string(&on).unwrap(), "0\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The end of a run of `rtlat cyclictest ARGS` whose threads measured
    /// `samples` (cpu, ns), with a trip if any.
    fn end(args: &str, samples: &[(u32, i64)], trip: Option<Trip>) -> (Cyclictest, String) {
        let s = settings(args);
        let cpus = s.cpus.clone();
        let mode = Cyclictest::new(s, None, vec![0; cpus.len()]);
        for &(cpu, ns) in samples {
            mode.tally.on_user(cpu, &rec(cpu, ns, 0));
        }
        let plan = collect::tests::plan(&["--user"], &[0, 1, 2, 3]);
        let mut o = collect::tests::outcome(&plan);
        o.report.stop.trip = trip;
        for (i, &cpu) in cpus.iter().enumerate() {
            o.stream.tids.insert(cpu, 101 + i as i32);
        }
        let text = mode.on_end(&o);
        let json = mode.json(&o);
        (mode, text + "---\n" + &json)
    }

    #[test]
    fn the_end_as_cyclictest_prints_it() {
        // -q: the T: lines ...
        let (_, out) = end("-q -p 80 -t 2 -d 0", &[(0, 3_000), (1, 5_000)], None);
        assert!(out.starts_with(
            "T: 0 (  101) P:80 I:1000 C:      1 Min:      3 Act:    3 Avg:    3 Max:       3\n\
             T: 1 (  102) P:80 I:1000 C:      1 Min:      5 Act:    5 Avg:    5 Max:       5\n---\n"
        ));
        // ... but not with -h: only the histogram.
        let (_, out) = end("-q -p 80 -h 4", &[(0, 3_000)], None);
        assert!(out.starts_with("# Histogram\n000000 000000\n"), "{out}");
        assert!(!out.contains("T:"));
        // Without -q: the last screen, then the histogram.
        let (_, out) = end("-p 80 -h 4", &[(0, 3_000)], None);
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("policy: fifo: loadavg: ") && lines[0].ends_with("          ")
        );
        assert_eq!(lines[1], "");
        assert!(lines[2].starts_with("T: 0 (  101) P:80 I:1000 C:      1 Min:      3"));
        assert_eq!(lines[3], "# Histogram");
        // -b: the thread ids, and where it broke.
        let trip = Trip {
            cpu: 1,
            stage: "user".into(),
            value_ns: 150_400,
            seq: 9,
        };
        let (_, out) = end("-q -p 80 -t 2 -d 0 -b 100", &[], Some(trip.clone()));
        assert!(out.contains(
            "\n# Thread Ids: 00101 00102\n# Break thread: 102\n# Break value: 150\n---\n"
        ));
        let (_, out) = end("-q -p 80 -t 2 -d 0 -b 100 -N", &[], Some(trip));
        assert!(out.contains("# Break value: 150400\n"));
        let (_, out) = end("-q -p 80 -b 100", &[], None);
        assert!(out.contains("# Thread Ids: 00101\n---\n"));
        // The JSON of the run: the threads' numbers and CPUs.
        let (_, out) = end(
            "-q -p 80 -a 2-3 -t -d 0 -h 8",
            &[(2, 3_000), (3, 7_900)],
            None,
        );
        let v: serde_json::Value =
            serde_json::from_str(out.split("---\n").nth(1).unwrap()).unwrap();
        assert_eq!(v["num_threads"], 2);
        assert_eq!(v["thread"]["1"]["cpu"], 3);
        assert_eq!(v["thread"]["1"]["histogram"]["7"], 1);
        assert_eq!(v["thread"]["0"]["cycles"], 1);
        assert_eq!(
            v["cmdline:"],
            report::tests::sample().command_line.join(" ")
        );
    }

    #[test]
    fn sigusr1_prints_cyclictests_status_block() {
        let s = settings("-p 80 -t 2 -d 0 -i 1000");
        let cpus = s.cpus.clone();
        let mode = Cyclictest::new(s, None, vec![0; cpus.len()]);
        mode.tally.on_user(cpus[0], &rec(cpus[0], 7_000, 0));
        let Cmd::Run(c) = Cli::try_parse_from(["rtlat", "run"]).unwrap().cmd else {
            unreachable!()
        };
        let plan = Plan::new(&c, &[0, 1, 2, 3], "0-3").unwrap();
        let now = Interval {
            plan: &plan,
            phase: &plan.phases.measured,
            cpus: Vec::new(),
            tids: cpus.iter().map(|&c| (c, 200 + c as i32)).collect(),
            elapsed: std::time::Duration::from_secs(1),
            tally: None,
        };
        let text = mode.on_status(&now, &uapi::Status::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 + cpus.len() + 1, "{text}");
        assert_eq!(lines[0], "#---------------------------");
        assert_eq!(lines[1], "# cyclictest current status:");
        assert!(
            lines[2].starts_with("T: 0 (  200) P:80 I:1000 C:      1 Min:      7"),
            "{text}"
        );
        assert!(lines[3].starts_with("T: 1 ("), "{text}");
        assert_eq!(lines[4], "#---------------------------");
    }

    #[test]
    fn sigusr2_writes_the_status_block_into_cyclictests_file() {
        let s = settings("-p 80 -t 2 -d 0 -i 1000");
        let cpus = s.cpus.clone();
        let path = std::env::temp_dir().join(format!("rtlat-rstat-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let rstat = Rstat {
            path: path.clone(),
            file,
        };
        let mode = Cyclictest::new(s, None, vec![0; cpus.len()]).with_rstat(Some(rstat));
        let Cmd::Run(c) = Cli::try_parse_from(["rtlat", "run"]).unwrap().cmd else {
            unreachable!()
        };
        let plan = Plan::new(&c, &[0, 1, 2, 3], "0-3").unwrap();
        let now = Interval {
            plan: &plan,
            phase: &plan.phases.measured,
            cpus: Vec::new(),
            tids: cpus.iter().map(|&c| (c, 300 + c as i32)).collect(),
            elapsed: std::time::Duration::from_secs(1),
            tally: None,
        };
        // Each status replaces the one before, from the file's start.
        mode.on_snapshot(&now);
        mode.tally.on_user(cpus[0], &rec(cpus[0], 9_000, 0));
        mode.on_snapshot(&now);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, mode.on_status(&now, &uapi::Status::default()));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 + cpus.len() + 1, "{text:?}");
        assert_eq!(lines[1], "# cyclictest current status:");
        assert!(
            lines[2].starts_with("T: 0 (  300) P:80 I:1000 C:      1 Min:      9"),
            "{text}"
        );
        // The file goes with the run.
        drop(mode);
        assert!(!path.exists());
    }

    #[test]
    fn the_jsons_return_code_is_the_exit_status() {
        let (mode, _) = end("-q -p 80", &[(0, 3_000)], None);
        let plan = collect::tests::plan(&["--user"], &[0, 1, 2, 3]);
        let mut o = collect::tests::outcome(&plan);
        let code = |o: &Outcome<'_>| {
            let v: serde_json::Value = serde_json::from_str(&mode.json(o)).unwrap();
            v["return_code"].clone()
        };
        // A run cut short (a measuring thread failed) exits 1.
        o.report.stop.trip = None;
        o.report.stop.reason = StopCause::Error;
        o.report.exit_code = Some(1);
        assert_eq!(code(&o), 1);
        // A -b break exits 0, as cyclictest.
        o.report.stop.reason = StopCause::Threshold;
        o.report.exit_code = Some(0);
        assert_eq!(code(&o), 0);
    }

    #[test]
    fn histfile_and_json_files() {
        let dir = std::env::temp_dir().join(format!("rtlat-ctf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (h, j) = (dir.join("hist"), dir.join("c.json"));
        let args = format!(
            "-q -p 80 -h 3 --histfile {} --json {}",
            h.display(),
            j.display()
        );
        let (mode, out) = end(&args, &[(0, 1_000)], None);
        // The histogram goes to its file, not to the output.
        assert!(!out.contains("# Histogram"), "{out}");
        let plan = collect::tests::plan(&[], &[0]);
        mode.write_files(&collect::tests::outcome(&plan)).unwrap();
        assert!(std::fs::read_to_string(&h).unwrap().starts_with(
            "# Histogram\n000000 000000\n000001 000001\n000002 000000\n# Total: 000000001\n"
        ));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
        assert_eq!(v["thread"]["0"]["histogram"]["1"], 1);
        for reason in [
            StopCause::Duration,
            StopCause::Count,
            StopCause::Threshold,
            StopCause::Interrupted,
        ] {
            assert_eq!(mode.peer_exit(reason), Some(0), "{reason:?}");
        }
        assert_eq!(mode.peer_exit(StopCause::Error), Some(1));
        assert!(mode.replaces_live() && mode.user_sink().is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rfc2822_times() {
        let t = rfc2822(1_736_845_200.0);
        // e.g. "Tue, 14 Jan 2025 09:00:00 +0000" in the local zone.
        let re = t.split_whitespace().collect::<Vec<_>>();
        assert_eq!(re.len(), 6, "{t}");
        assert!(
            re[0].ends_with(',') && re[3] == "2025" && re[4].len() == 8,
            "{t}"
        );
    }
}
