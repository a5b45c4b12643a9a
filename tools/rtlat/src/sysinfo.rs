// SPDX-License-Identifier: GPL-2.0

//! What the system looked like during a measurement: reported, never changed
//! (except `--dma-latency`, which the user asks for).

use std::{collections::BTreeMap, fs, io::Write};

use serde::Serialize;

/// System metadata written into the JSON report.
#[derive(Serialize, Debug, Clone)]
pub struct SysInfo {
    /// `uname -s`.
    pub sysname: String,
    /// `uname -n`.
    pub nodename: String,
    /// `uname -r`.
    pub release: String,
    /// `uname -v`.
    pub version: String,
    /// `uname -m`.
    pub machine: String,
    /// Preemption model read from `uname -v` (PREEMPT_RT, PREEMPT_DYNAMIC, ...).
    pub preemption: String,
    /// True for a PREEMPT_RT kernel.
    pub realtime: bool,
    /// Content of `/sys/kernel/realtime`, where it exists (the old RT patch).
    pub sys_kernel_realtime: Option<String>,
    /// Kernel command line.
    pub cmdline: String,
    /// `isolcpus=` of the command line, if any.
    pub isolcpus: Option<String>,
    /// `nohz_full=` of the command line, if any.
    pub nohz_full: Option<String>,
    /// Current clocksource.
    pub clocksource: Option<String>,
    /// Online CPUs (`/sys/devices/system/cpu/online`).
    pub online_cpus: String,
    /// cpufreq governor per CPU, where cpufreq exists.
    pub governors: BTreeMap<u32, String>,
    /// Disabled idle states per CPU (`cpuidle/stateN/disable`), where cpuidle exists.
    pub idle_states_disabled: BTreeMap<u32, Vec<String>>,
    /// Current PM QoS CPU DMA latency limit in µs (`/dev/cpu_dma_latency`), if readable.
    pub cpu_dma_latency_us: Option<i32>,
    /// `srcversion` of the loaded rtlat module.
    pub module_srcversion: Option<String>,
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn cmdline_arg(cmdline: &str, key: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .find_map(|a| a.strip_prefix(key).map(str::to_string))
}

/// Reads the current CPU DMA latency limit (`/dev/cpu_dma_latency`).
pub fn cpu_dma_latency() -> Option<i32> {
    let b = fs::read("/dev/cpu_dma_latency").ok()?;
    b.get(..4)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

/// Holds the CPU DMA latency limit at `us` µs while the returned file is
/// open (`--dma-latency`: the one setting rtlat changes, and only when asked).
pub fn hold_cpu_dma_latency(us: i32) -> Result<fs::File, String> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .map_err(|e| format!("/dev/cpu_dma_latency: {e}"))?;
    f.write_all(&us.to_ne_bytes())
        .map_err(|e| format!("/dev/cpu_dma_latency: {e}"))?;
    Ok(f)
}

fn cstr(b: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = b
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Parses a CPU list such as `0-3,5,7-8`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: u32 = a.parse().map_err(|_| format!("bad CPU '{a}' in '{s}'"))?;
        let b: u32 = b.parse().map_err(|_| format!("bad CPU '{b}' in '{s}'"))?;
        if a > b {
            return Err(format!("bad CPU range '{part}'"));
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPUs as the kernel writes a list: `0-3,5,7-8`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Online CPUs.
pub fn online_cpus() -> Vec<u32> {
    read_trim("/sys/devices/system/cpu/online")
        .and_then(|s| parse_cpu_list(&s).ok())
        .unwrap_or_default()
}

/// Collects the metadata.
pub fn collect() -> SysInfo {
    // SAFETY: `uname` fills the zeroed struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    unsafe { libc::uname(&mut u) };
    let version = cstr(&u.version);
    let preemption = ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT_LAZY", "PREEMPT"]
        .iter()
        .find(|m| version.contains(*m))
        .map_or("none or voluntary", |m| m)
        .to_string();
    let cmdline = read_trim("/proc/cmdline").unwrap_or_default();
    let mut governors = BTreeMap::new();
    let mut idle = BTreeMap::new();
    for cpu in online_cpus() {
        if let Some(g) = read_trim(&format!(
            "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
        )) {
            governors.insert(cpu, g);
        }
        let mut disabled = Vec::new();
        for k in 0.. {
            let base = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
            let Some(name) = read_trim(&format!("{base}/name")) else {
                break;
            };
            if read_trim(&format!("{base}/disable")).as_deref() == Some("1") {
                disabled.push(name);
            }
        }
        if !disabled.is_empty() {
            idle.insert(cpu, disabled);
        }
    }
    SysInfo {
        sysname: cstr(&u.sysname),
        nodename: cstr(&u.nodename),
        release: cstr(&u.release),
        realtime: version.contains("PREEMPT_RT"),
        version,
        machine: cstr(&u.machine),
        preemption,
        sys_kernel_realtime: read_trim("/sys/kernel/realtime"),
        isolcpus: cmdline_arg(&cmdline, "isolcpus="),
        nohz_full: cmdline_arg(&cmdline, "nohz_full="),
        cmdline,
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        online_cpus: read_trim("/sys/devices/system/cpu/online").unwrap_or_default(),
        governors,
        idle_states_disabled: idle,
        cpu_dma_latency_us: cpu_dma_latency(),
        module_srcversion: read_trim("/sys/module/rtlat/srcversion"),
    }
}

/// Every task's name (`comm`) and pid, from one walk of /proc (the first
/// pid of a name that occurs twice).
pub fn task_pids() -> BTreeMap<String, i32> {
    let mut m = BTreeMap::new();
    for e in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(comm) = read_trim(&format!("/proc/{pid}/comm")) {
            m.entry(comm).or_insert(pid);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,5,7-8").unwrap(), [0, 1, 2, 3, 5, 7, 8]);
        assert_eq!(parse_cpu_list("2,1,2").unwrap(), [1, 2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        for s in ["0-3,5,7-8", "1", "0,2,4", ""] {
            assert_eq!(format_cpu_list(&parse_cpu_list(s).unwrap()), s);
        }
        assert_eq!(
            cmdline_arg("a isolcpus=1-3 b", "isolcpus="),
            Some("1-3".into())
        );
    }
}
