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
    /// The CPU model (`/proc/cpuinfo`: model name, or implementer and part).
    pub cpu_model: Option<String>,
    /// Number of online CPUs.
    pub cpu_count: usize,
    /// Possible CPUs (`/sys/devices/system/cpu/possible`).
    pub possible_cpus: Option<String>,
    /// SMT: `smt/control` (on, off, forceoff, notsupported, notimplemented)
    /// and `smt/active` (1 if siblings are online).
    pub smt_control: Option<String>,
    pub smt_active: Option<bool>,
    /// The hypervisor, when one is detectable: its CPUID signature on x86
    /// (`KVMKVMKVM`, `TCGTCGTCGTCG`, ...), `/sys/hypervisor/type`, the
    /// device tree's `hypervisor` node, or `unknown` with the CPU's
    /// hypervisor flag; `null` if none was seen.
    pub hypervisor: Option<String>,
    /// `kvm` or `tcg` when the hypervisor says so (or QEMU's firmware
    /// without KVM's signature on x86); `null` otherwise.
    pub virtualization: Option<String>,
    /// DMI system vendor and product (`/sys/class/dmi/id`), where present.
    pub dmi_product: Option<String>,
    /// `rcu_nocbs=` of the command line, if any.
    pub rcu_nocbs: Option<String>,
    /// The kernel's view: `/sys/devices/system/cpu/isolated` and `nohz_full`.
    pub isolated_cpus: Option<String>,
    pub nohz_full_cpus: Option<String>,
    /// Where interrupts may run.
    pub irq_affinity: IrqAffinity,
    /// CPU 0's idle states with their exit latencies (`cpuidle/stateN`).
    pub idle_states: Vec<IdleState>,
    /// `/proc/sys/kernel/sched_rt_runtime_us` and `sched_rt_period_us` (RT
    /// throttling: -1 is off).
    pub sched_rt_runtime_us: Option<i64>,
    pub sched_rt_period_us: Option<i64>,
    /// The kernel configuration options that shape latency, from
    /// `/proc/config.gz` or `/boot/config-RELEASE`.
    pub kernel_config: KernelConfig,
}

/// Interrupt affinity: the default, and how many IRQs may run where.
#[derive(Serialize, Debug, Clone, Default)]
pub struct IrqAffinity {
    /// `/proc/irq/default_smp_affinity` (a mask).
    pub default_smp_affinity: Option<String>,
    /// IRQs under `/proc/irq`.
    pub irqs: usize,
    /// Per CPU list, the IRQs whose effective affinity it is
    /// (`effective_affinity_list`, else `smp_affinity_list`).
    pub effective: BTreeMap<String, usize>,
}

/// One idle state.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct IdleState {
    pub name: String,
    /// Exit latency, µs (`latency`).
    pub exit_latency_us: Option<u64>,
    /// Target residency, µs (`residency`).
    pub target_residency_us: Option<u64>,
}

/// The kernel configuration options that shape latency.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct KernelConfig {
    /// The file read, `null` if none was found.
    pub source: Option<String>,
    /// Each option of [`CONFIG_KEYS`] the file sets (`y`, `m`, a value);
    /// one it leaves unset is absent.
    pub options: BTreeMap<String, String>,
}

/// The options [`KernelConfig`] keeps.
pub const CONFIG_KEYS: &[&str] = &[
    "CONFIG_PREEMPT_RT",
    "CONFIG_PREEMPT",
    "CONFIG_PREEMPT_DYNAMIC",
    "CONFIG_PREEMPT_LAZY",
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT_NONE",
    "CONFIG_HZ",
    "CONFIG_NO_HZ_FULL",
    "CONFIG_NO_HZ_IDLE",
    "CONFIG_HIGH_RES_TIMERS",
    "CONFIG_RCU_NOCB_CPU",
    "CONFIG_CPU_ISOLATION",
    "CONFIG_CPU_IDLE",
    "CONFIG_CPU_FREQ",
    "CONFIG_IRQ_FORCED_THREADING",
    "CONFIG_PROVE_LOCKING",
    "CONFIG_DEBUG_PREEMPT",
    "CONFIG_KASAN",
    "CONFIG_LOCKDEP",
    "CONFIG_TRACE_IRQFLAGS",
];

/// The [`CONFIG_KEYS`] a kernel configuration `text` sets.
pub fn config_options(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| CONFIG_KEYS.contains(k))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}

fn kernel_config(release: &str) -> KernelConfig {
    use std::io::Read;
    let gz = "/proc/config.gz";
    if let Ok(f) = fs::File::open(gz) {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .is_ok()
        {
            return KernelConfig {
                source: Some(gz.into()),
                options: config_options(&text),
            };
        }
    }
    let boot = format!("/boot/config-{release}");
    match fs::read_to_string(&boot) {
        Ok(text) => KernelConfig {
            source: Some(boot),
            options: config_options(&text),
        },
        Err(_) => KernelConfig::default(),
    }
}

/// The CPU model of a `/proc/cpuinfo` text.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    let field = |k: &str| {
        cpuinfo.lines().find_map(|l| {
            let (a, b) = l.split_once(':')?;
            (a.trim() == k).then(|| b.trim().to_string())
        })
    };
    field("model name")
        .or_else(|| field("uarch"))
        .or_else(|| field("Model"))
        .or_else(|| {
            let (i, p) = (field("CPU implementer")?, field("CPU part")?);
            Some(format!("implementer {i} part {p}"))
        })
        .or_else(|| field("isa"))
}

/// The hypervisor's CPUID signature (leaf 0x40000000), where the CPU says
/// it runs under one (leaf 1, ECX bit 31).
#[cfg(target_arch = "x86_64")]
// `__cpuid` is safe from Rust 1.87 on, `unsafe` before.
#[allow(unused_unsafe)]
fn cpuid_hypervisor() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every x86_64 CPU.
    let l1 = unsafe { __cpuid(1) };
    if l1.ecx & (1 << 31) == 0 {
        return None;
    }
    // SAFETY: as above; a hypervisor answers leaf 0x40000000.
    let h = unsafe { __cpuid(0x4000_0000) };
    let bytes: Vec<u8> = [h.ebx, h.ecx, h.edx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .filter(|&b| b != 0)
        .collect();
    Some(String::from_utf8_lossy(&bytes).trim().to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

/// The hypervisor and, where it tells, KVM or TCG: from the CPUID
/// signature `sig`, `/sys/hypervisor/type`, a device-tree hypervisor node
/// `dt`, the cpuinfo `flags`, the DMI `product`.
pub fn virtualization(
    sig: Option<&str>,
    sys_type: Option<&str>,
    dt: Option<&str>,
    flag: bool,
    product: Option<&str>,
) -> (Option<String>, Option<String>) {
    let hv = sig
        .filter(|s| !s.is_empty())
        .or(sys_type)
        .or(dt)
        .map(str::to_string)
        .or_else(|| flag.then(|| "unknown".to_string()));
    let qemu = product.is_some_and(|p| p.contains("QEMU"));
    let kind = match hv.as_deref() {
        Some(h) if h.contains("KVM") || h.contains("kvm") => Some("kvm"),
        Some(h) if h.contains("TCG") => Some("tcg"),
        // QEMU's firmware without KVM's signature: emulated (x86, where
        // KVM always shows its signature).
        None if qemu && sig.is_none() && cfg!(target_arch = "x86_64") => Some("tcg"),
        _ => None,
    };
    (hv, kind.map(str::to_string))
}

fn irq_affinity() -> IrqAffinity {
    let mut a = IrqAffinity {
        default_smp_affinity: read_trim("/proc/irq/default_smp_affinity"),
        ..Default::default()
    };
    for e in fs::read_dir("/proc/irq").into_iter().flatten().flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        a.irqs += 1;
        let p = e.path();
        let list = read_trim(&p.join("effective_affinity_list").to_string_lossy())
            .filter(|s| !s.is_empty())
            .or_else(|| read_trim(&p.join("smp_affinity_list").to_string_lossy()));
        if let Some(l) = list {
            *a.effective.entry(l).or_default() += 1;
        }
    }
    a
}

fn idle_states(cpu: u32) -> Vec<IdleState> {
    let mut v = Vec::new();
    for k in 0.. {
        let base = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
        let Some(name) = read_trim(&format!("{base}/name")) else {
            break;
        };
        let num = |f: &str| read_trim(&format!("{base}/{f}")).and_then(|s| s.parse().ok());
        v.push(IdleState {
            name,
            exit_latency_us: num("latency"),
            target_residency_us: num("residency"),
        });
    }
    v
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
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let release = cstr(&u.release);
    let dmi = |f: &str| read_trim(&format!("/sys/class/dmi/id/{f}")).filter(|s| !s.is_empty());
    let dmi_product = match (dmi("sys_vendor"), dmi("product_name")) {
        (Some(v), Some(p)) => Some(format!("{v} {p}")),
        (v, p) => v.or(p),
    };
    let flag = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    let dt = read_trim("/sys/firmware/devicetree/base/hypervisor/compatible")
        .map(|s| s.trim_matches('\0').replace('\0', ","));
    let (hypervisor, virt) = virtualization(
        cpuid_hypervisor().as_deref(),
        read_trim("/sys/hypervisor/type").as_deref(),
        dt.as_deref(),
        flag,
        dmi_product.as_deref(),
    );
    let num = |p: &str| read_trim(p).and_then(|s| s.parse().ok());
    SysInfo {
        cpu_model: cpu_model(&cpuinfo),
        cpu_count: online_cpus().len(),
        possible_cpus: read_trim("/sys/devices/system/cpu/possible"),
        smt_control: read_trim("/sys/devices/system/cpu/smt/control"),
        smt_active: read_trim("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
        hypervisor,
        virtualization: virt,
        dmi_product,
        rcu_nocbs: cmdline_arg(&cmdline, "rcu_nocbs="),
        isolated_cpus: read_trim("/sys/devices/system/cpu/isolated"),
        nohz_full_cpus: read_trim("/sys/devices/system/cpu/nohz_full"),
        irq_affinity: irq_affinity(),
        idle_states: idle_states(online_cpus().first().copied().unwrap_or(0)),
        sched_rt_runtime_us: num("/proc/sys/kernel/sched_rt_runtime_us"),
        sched_rt_period_us: num("/proc/sys/kernel/sched_rt_period_us"),
        kernel_config: kernel_config(&release),
        sysname: cstr(&u.sysname),
        nodename: cstr(&u.nodename),
        release,
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

    #[test]
    fn reproduction_metadata() {
        let x86 = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu hypervisor\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("AMD EPYC 7B13"));
        let arm = "CPU implementer\t: 0x41\nCPU part\t: 0xd08\n";
        assert_eq!(
            cpu_model(arm).as_deref(),
            Some("implementer 0x41 part 0xd08")
        );
        assert_eq!(
            cpu_model("isa\t: rv64imafdc\n").as_deref(),
            Some("rv64imafdc")
        );

        let v = |sig, sys, dt, flag, product| {
            let (h, k) = virtualization(sig, sys, dt, flag, product);
            (h.unwrap_or_default(), k.unwrap_or_default())
        };
        assert_eq!(
            v(Some("KVMKVMKVM"), None, None, true, None),
            ("KVMKVMKVM".into(), "kvm".into())
        );
        assert_eq!(
            v(Some("TCGTCGTCGTCG"), None, None, true, None),
            ("TCGTCGTCGTCG".into(), "tcg".into())
        );
        assert_eq!(
            v(None, Some("xen"), None, false, None),
            ("xen".into(), String::new())
        );
        assert_eq!(
            v(None, None, Some("linux,kvm"), false, None),
            ("linux,kvm".into(), "kvm".into())
        );
        assert_eq!(
            v(None, None, None, true, None),
            ("unknown".into(), String::new())
        );
        assert_eq!(
            v(None, None, None, false, None),
            (String::new(), String::new())
        );

        let cfg = "# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_RT=y\nCONFIG_HZ=250\n\
                   CONFIG_HZ_250=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_LOCALVERSION=\"-rt\"\n";
        let o = config_options(cfg);
        assert_eq!(
            o,
            BTreeMap::from([
                ("CONFIG_HZ".to_string(), "250".to_string()),
                ("CONFIG_NO_HZ_FULL".to_string(), "y".to_string()),
                ("CONFIG_PREEMPT_RT".to_string(), "y".to_string()),
            ])
        );
    }
}
