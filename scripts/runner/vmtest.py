# SPDX-License-Identifier: GPL-2.0
"""scripts/vmtest: one QEMU (TCG) guest of the kselftest suite of tests/ on
a PREEMPT_RT kernel, judged by scripts/vmtest-report. scripts/vmtest's
comment (its --help) says what a run does and what it takes; this is its
implementation, run as python3 scripts/runner/vmtest.py SCRIPT ARGS...
(SCRIPT: scripts/vmtest as it was called, whose comment --help prints).

The options, their checks, the work directory's suffix, the guest's bound,
the kernel's command line and QEMU's are pure functions (unit-tested in
test_runner); main() is the run in its order: the kernel, the modules (a
lock on the kernel's shared build), the test programs, the tool, the
guest's root (the peers: runner.peers) and its cpio, the boot under
timeout with the console watched, QEMU's CPU time, the Prometheus scrape
of an installed system, and scripts/vmtest-report exec'd last."""

import fcntl
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

if __package__ in (None, ""):
    # Run as a file (scripts/vmtest): import the runner as a package.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from runner import lib, peers  # noqa: E402
from runner.procs import children, status  # noqa: E402

INJECTIONS = ("", "splat", "kasan", "splat+kasan")
DEFAULT_CONSOLE_MAX = str(64 << 20)


class Die(Exception):
    """lib.sh's die: "rtrs: error: MESSAGE" on stderr, exit 1."""


@dataclass
class Options:
    arch: str = "x86_64"
    tree: str = ""
    flavour: str = "debug"
    kdir: str = ""
    distro: str = ""
    inject: str = ""
    then_inject: str = ""
    timeout: str = ""
    shell: int = 0
    bench: str = ""
    then_bench: str = ""
    build_only: int = 0
    system: int = 0
    cpus: str = "2"
    programs: str = ""
    demo: str = ""
    debs: str = ""
    help: bool = False

    @property
    def online(self):
        """${cpus%/*}: the CPUs online, as written."""
        return self.cpus.rsplit("/", 1)[0]

    @property
    def possible(self):
        """${cpus#*/}: the CPUs possible, as written."""
        return self.cpus.split("/", 1)[-1]


# The options that take a value, the attribute each sets; those that take
# none, the attribute and its value.
VALUED = {"--arch": "arch", "--tree": "tree", "--flavour": "flavour", "--kdir": "kdir", "--distro": "distro",
          "--inject": "inject", "--then-inject": "then_inject", "--timeout": "timeout", "--bench": "bench",
          "--then-bench": "then_bench", "--demo": "demo", "--cpus": "cpus", "--programs": "programs",
          "--debs": "debs"}
FLAGS = {"--system": ("system", 1), "--inject-splat": ("inject", "splat"), "--build-only": ("build_only", 1),
         "--shell": ("shell", 1), "-h": ("help", True), "--help": ("help", True)}


class Unbound(Exception):
    """An option's value missing (bash's set -u on $2: status 1)."""


def parse_args(args, deftree):
    """The options args give (deftree: the default tree); help set at
    -h or --help, the rest unread (usage() exits there). Die on an
    unknown argument, Unbound on a missing value."""
    o = Options(tree=deftree)
    i = 0
    while i < len(args):
        a = args[i]
        if a in VALUED:
            if i + 1 >= len(args):
                raise Unbound()
            setattr(o, VALUED[a], args[i + 1])
            i += 2
        elif a in FLAGS:
            setattr(o, *FLAGS[a])
            if o.help:
                return o
            i += 1
        else:
            raise Die(f"unknown argument '{a}' (see --help)")
    return o


def check_options(o):
    """Die on options that do not go together or are malformed, in the
    order scripts/vmtest has always checked them."""
    for i in (o.inject, o.then_inject):
        if i not in INJECTIONS:
            raise Die(f"unknown injection '{i}' (splat, kasan or splat+kasan)")
    if o.inject and o.then_inject:
        raise Die("--inject and --then-inject exclude each other")
    if o.then_bench and (o.inject or o.bench):
        raise Die("--then-bench runs after the suite: not with --inject or --bench")
    if o.demo and not re.fullmatch(r"[1-9][0-9]*", o.demo):
        raise Die(f"--demo '{o.demo}': whole seconds, 1 or more")
    if o.demo and (o.inject or o.bench or o.then_bench or o.then_inject):
        raise Die("--demo runs alone: not with --inject, --bench or --then-*")
    for b in (o.bench, o.then_bench):
        if b and not re.fullmatch(r"[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*", b):
            raise Die(f"'{b}': the benchmark takes SECONDS,ROUNDS,PERIOD_US (positive integers)")
    if not re.fullmatch(r"[1-9][0-9]*(/[1-9][0-9]*)?", o.cpus):
        raise Die(f"--cpus '{o.cpus}': ONLINE or ONLINE/POSSIBLE (positive integers)")
    if int(o.possible) < int(o.online):
        raise Die(f"--cpus '{o.cpus}': more online than possible")


def test_int(text):
    """The integer test(1) reads in text (blanks around it and a sign
    allowed), None if it is none."""
    m = re.fullmatch(r"[ \t\n]*([-+]?[0-9]+)[ \t\n]*", text)
    return int(m.group(1)) if m else None


def guest_timeout(o, env):
    """The guest's bound in seconds, as a string: --timeout; else an
    injection's, which is a boot and one module (RTRS_INJECT_TIMEOUT, 300);
    else a suite run's (RTRS_VM_TIMEOUT, 1800)."""
    if o.timeout:
        return o.timeout
    if o.inject:
        return env.get("RTRS_INJECT_TIMEOUT") or "300"
    return env.get("RTRS_VM_TIMEOUT") or "1800"


def timeout_error(o, vm_timeout, ksft_timeout, script="scripts/vmtest"):
    """A suite run's bound must let kselftest's own per-test timeout
    (tests/settings) fire first: the die message if it does not, else
    None. ([ -gt ]'s complaint about a non-number is printed.)"""
    if o.inject or o.bench or o.demo:
        return None
    a, b = test_int(vm_timeout), test_int(ksft_timeout or "0")
    if a is None or b is None:
        print(f"{script}: [: {vm_timeout if a is None else ksft_timeout}: integer expression expected", file=sys.stderr)
    elif a > b:
        return None
    return (f"the guest's timeout ({vm_timeout} s) must exceed kselftest's per-test timeout "
            f"(tests/settings: {ksft_timeout} s)")


def work_suffix(o, cpus_suffix):
    """The work directory's suffix: no result of an earlier run of other
    options may be mistaken for this one's (cpus_suffix: lib.sh's
    vm_cpus_suffix of --cpus)."""
    return (("-" + o.inject if o.inject else "") + ("-bench" if o.bench else "")
            + ("-demo" if o.demo else "") + cpus_suffix)


def need_tool(o):
    """Whether the guest needs the rtlat tool: for the shell tests and the
    benchmark (the C programs use the device only; a cell of those alone,
    as the 8-CPU one, neither builds it nor waits for another's build)."""
    return not (o.programs and not (o.bench or o.then_bench) and ".sh " not in f" {o.programs} ")


def want_peers(arch, progs, o):
    """The peers for rtlat_peers.sh, the benchmark, and rtlat_noise.sh's
    comparison with rtla on x86_64 (tests/expected lets it skip elsewhere)."""
    p = f" {progs} "
    return (" rtlat_peers.sh " in p or (" rtlat_noise.sh " in p and arch == "x86_64")
            or bool(o.bench or o.then_bench))


def wants_scrape(o, progs):
    """Whether a real Prometheus scrapes an installed system's guest: where
    tests/rtlat_scrape.sh runs (and not in a --shell boot)."""
    s = f"{o.shell} {progs} "
    return s.startswith("0 ") and " rtlat_scrape.sh " in s[2:]


def kernel_append(o, console, kunit_glob):
    """The guest kernel's command line (kunit_glob: RTRS_KUNIT_GLOB, the
    KUnit suites run at boot)."""
    maxcpus = "" if o.possible == o.online else f"maxcpus={o.online}"
    bench = ""
    if o.bench:
        secs, rounds, period = o.bench.split(",")[:3]
        bench = f"rtrs.bench={secs} rtrs.bench_rounds={rounds} rtrs.bench_period={period}"
    demo = f"rtrs.demo={o.demo}" if o.demo else ""
    return (f"console={console} printk.time=1 panic=-1 {maxcpus} kasan_multi_shot rtedu.dma_bits=32 {bench} "
            f"kunit.filter_glob={kunit_glob or 'rtrs*'} rtrs.inject={o.inject or 'none'} "
            f"rtrs.then_inject={o.then_inject or 'none'} rtrs.then_bench={o.then_bench or 'none'} "
            f"{demo} rtrs.shell={o.shell} rtrs.system={o.system}")


# The last look at a guest that is still running near its bound (x86_64,
# whose NMI QEMU injects from its monitor): the kernel panics on the NMI
# and first prints every CPU's backtrace, the locks held and the stacks
# of the tasks in D state (panic_sys_info); vmtest-report shows it. A
# guest killed at its bound says nothing else. (Not every task's stack:
# the scheduler's debug dump that comes with it, in NMI context, turns
# lockdep off before the locks are shown.)
NMI_BEFORE = 60


def nmi_at(arch, o, vm_timeout, ksft_timeout):
    """Seconds after the boot's start at which the last look's NMI goes,
    or None: none for a bound of less than twice NMI_BEFORE (a short run
    keeps all of its bound), nor where a suite run's NMI would come
    before kselftest's own per-test timeout could fire."""
    bound = test_int(vm_timeout)
    if not last_look_append(arch, o) or bound is None or bound < 2 * NMI_BEFORE:
        return None
    at = bound - NMI_BEFORE
    ksft = test_int(ksft_timeout or "0") or 0
    if not (o.inject or o.bench or o.demo) and at <= ksft:
        return None
    return at


def last_look_append(arch, o):
    """The kernel's command line for the last look: an unknown NMI
    panics, and the panic prints the guest's state first."""
    if arch != "x86_64" or o.shell:
        return ""
    return "unknown_nmi_panic panic_sys_info=locks,all_bt,blocked_tasks"


def last_look_argv(arch, o, sock):
    """QEMU's monitor on the unix socket sock, for the last look's NMI."""
    if arch != "x86_64" or o.shell:
        return []
    return ["-monitor", f"unix:{sock},server=on,wait=off"]


def send_nmi(sock):
    """Asks QEMU's monitor at sock to inject an NMI; True when it took
    the command: its prompt came back after it, with no complaint."""
    def until_prompt(s, text=b""):
        while text.count(b"(qemu)") < 1:
            got = s.recv(4096)
            if not got:
                break
            text += got
        return text
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(sock)
            until_prompt(s)  # its greeting and prompt
            s.sendall(b"nmi\n")
            reply = until_prompt(s)
    except OSError:
        return False
    return b"(qemu)" in reply and not re.search(rb"rror|not supported|unknown command", reply)


# x86_64's TSC under TCG is the host's clock, and QEMU's "max" CPU lacks
# the flags (nonstop TSC, TSC_ADJUST) for which Linux trusts a TSC without
# its clocksource watchdog, as it does on the machines RT users run. The
# watchdog's check of the CPUs' skew (new in 7.3) then spun forever in an
# 8-CPU guest's boot: its 50 us timeout is read from the jiffies
# clocksource of early boot, which the spinning CPU, the timekeeper, with
# interrupts off, no longer advanced, the other CPUs idle (an NMI's
# backtraces: ktimers/0 in watchdog_check_skew, 1-7 in default_idle).
def clock_append(arch):
    """The kernel's command line for the guest's clocks."""
    return "tsc=nowatchdog" if arch == "x86_64" else ""


def guest_memory(o):
    """The guest's memory: per-CPU memory for every possible CPU, under
    KASAN; an installed system's whole root unpacked in memory."""
    if o.system or int(o.possible) > 64:
        return "2G"
    return "1G"


# x86_64 code patched at run time (a static key flipped, as each start and
# stop of a tracer does to __schedule's tracepoint) can run stale under
# multi-threaded TCG. QEMU drops a page's translations before the store to
# it lands; another vCPU may translate the old bytes in between, the int3
# of a patch under way, and keep running them. A CPU then executes an int3
# the kernel has already removed: "Oops: int3" (the Code: line shows the
# restored instruction), seen once in five boots of Debian's amd64 kernel
# that ran the benchmark smoke run, whose tools start and stop tracers one
# after another. With one host thread running every vCPU in turn, no vCPU
# translates between another's invalidation and its store. That boot (its
# suite included) takes that mode; the debug guests keep their vCPUs
# running at once, which the lock-free paths' tests need, and flip keys
# far less often (blame's probes, one rtla run); so does the full
# benchmark, whose numbers need it.
def accel(arch, o):
    return "tcg,thread=single" if arch == "x86_64" and o.then_bench else "tcg"


# A machine of more possible CPUs than online, on arm64, is a device tree
# of that many CPU nodes over one vCPU more than are online: the first
# nodes the online vCPUs', the last node the spare vCPU's, those between
# with affinities (MPIDR_EL1 values) that no vCPU has, so that PSCI refuses
# to start them. The kernel numbers CPUs in the tree's order: the spare vCPU
# is the last possible CPU (259 of 260), the one the tests past 256 bring
# online. QEMU runs one thread a vCPU: with a vCPU for every possible CPU,
# each broadcast TLB invalidation woke the threads of all 260, and a debug
# kernel took 193 s to reach /init (664 s on a loaded machine); with three,
# the kernel's per-CPU set-up for 260 is what is left.
def sparse_cpus(arch, o):
    """A machine whose possible CPUs are device-tree nodes (arm64), not
    vCPUs. (One more possible than online is a vCPU more, no rewrite.)"""
    return arch == "arm64" and int(o.possible) > int(o.online) + 1


def vcpus(arch, o):
    """-smp: a vCPU for every possible CPU, or the online ones and a spare."""
    return str(int(o.online) + 1) if sparse_cpus(arch, o) else o.possible


CPU_NODE = re.compile(r"^\t\tcpu@[0-9a-f]+ \{\n.*?^\t\t\};\n", re.S | re.M)
CPU_MAP = re.compile(r"^\t\tcpu-map \{\n.*?^\t\t\};\n", re.S | re.M)
REG = re.compile(r"^\t\t\treg = <(0x[0-9a-f]+)>;$", re.M)


def sparse_dts(dts, online, possible):
    """QEMU's device tree (dtc's source of it) for online + 1 vCPUs, with
    possible CPU nodes: the online vCPUs', ones no vCPU answers, then the
    spare vCPU's. (cpu-map, which names only the vCPUs, is left out: the
    kernel then sees a flat topology.) Die on a tree of another shape."""
    start = dts.find("\n\tcpus {\n") + 1
    end = dts.find("\n\t};\n", start) + 1
    if start == 0 or end == 0 or "#address-cells = <0x01>;" not in dts[start:end]:
        raise Die("QEMU's device tree has no /cpus node of one address cell: cannot add CPUs to it")
    block = CPU_MAP.sub("", dts[start:end])
    nodes = CPU_NODE.findall(block)
    if len(nodes) != online + 1 or not all(REG.search(n) for n in nodes):
        raise Die(f"QEMU's device tree has {len(nodes)} CPU nodes with one reg each, not {online + 1}")
    nodes.sort(key=lambda n: int(REG.search(n).group(1), 16))
    head = CPU_NODE.sub("", block)
    spare = re.sub(r"^\t\t\tphandle = .*\n", "", nodes[online], flags=re.M)
    absent = []
    for cpu in range(online, possible - 1):
        # Affinity level 2 set: no vCPU of QEMU's virt machine has it.
        mpidr = 0x10000 + cpu
        node = REG.sub(f"\t\t\treg = <{mpidr:#x}>;", spare)
        absent.append(re.sub(r"^\t\tcpu@[0-9a-f]+ ", f"\t\tcpu@{mpidr:x} ", node))
    return dts[:start] + head + "".join(nodes[:online] + absent + nodes[online:]) + dts[end:]


def words(text):
    """read -ra's split of text: its first line, at blanks."""
    return text.split("\n", 1)[0].split()


def qemu_argv(qemu_cmd, arch, o, image, work, append, mem):
    """QEMU's command line (qemu_cmd: the architecture's command, machine
    and CPU), before the network and RTRS_QEMU_ARGS. A virtio serial port
    named rtrs.results brings the TAP output and dmesg back."""
    return [*words(qemu_cmd), "-accel", accel(arch, o), "-smp", vcpus(arch, o), "-m", mem, "-nographic",
            "-no-reboot", "-kernel", image, "-initrd", f"{work}/initramfs.cpio",
            "-device", "virtio-serial-pci", "-chardev", f"file,id=res,path={work}/results.log",
            "-device", "virtserialport,chardev=res,name=rtrs.results",
            "-device", "edu,dma_mask=0xffffffff", "-device", "edu,dma_mask=0xffffffff",
            "-append", append]


# The guest's port the host reaches: rtlat monitor's metrics, as
# tests/rtlat_scrape.sh serves them (its PORT). Outside Prometheus'
# allocated exporter ports, 9100-9999 (9101 is the HAProxy exporter's).
GUEST_PORT = 19101


def network_argv(hport):
    """An installed system's network card: QEMU's user network, isolated
    (restrict=on) but for the guest's GUEST_PORT, forwarded from the host's
    127.0.0.1:hport only."""
    return ["-netdev", f"user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:{hport}-:{GUEST_PORT}",
            "-device", "virtio-net-pci,netdev=net0"]


def report_argv(root, arch, work, kdir, qrc, vm_timeout, o):
    """scripts/vmtest-report's command line, which judges the run."""
    return ([f"{root}/scripts/vmtest-report", "--arch", arch, "--work", work, "--kdir", kdir, "--qemu-rc", str(qrc),
             "--timeout", vm_timeout] + (["--bench"] if o.bench else []) + (["--demo"] if o.demo else [])
            + (["--inject", o.inject] if o.inject else [])
            + (["--then-inject", o.then_inject] if o.then_inject else []))


# ---- The run.

class Exit(Exception):
    """A command failed where scripts/vmtest stops (set -e): its status."""

    def __init__(self, rc):
        super().__init__(rc)
        self.rc = rc


def flush():
    sys.stdout.flush()
    sys.stderr.flush()


def run(cmd, **kw):
    """Run cmd; its status (127 if it did not start, as the shell's)."""
    flush()
    try:
        return status(subprocess.run(cmd, **kw).returncode)
    except OSError as e:
        print(f"{cmd[0]}: {e.strerror}", file=sys.stderr, flush=True)
        return 127


def must(cmd, **kw):
    """Run cmd; stop with its status if it fails."""
    rc = run(cmd, **kw)
    if rc:
        raise Exit(rc)


def output(cmd, stderr=None):
    """$(cmd): (status, stdout less its trailing newlines)."""
    flush()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=stderr)
    except OSError as e:
        print(f"{cmd[0]}: {e.strerror}", file=sys.stderr, flush=True)
        return 127, ""
    return status(r.returncode), r.stdout.decode(errors="surrogateescape").rstrip("\n")


def must_output(cmd):
    rc, out = output(cmd)
    if rc:
        raise Exit(rc)
    return out


def read(path):
    """$(cat path), stopping as cat would where there is no such file."""
    try:
        with open(path, errors="surrogateescape") as f:
            return f.read().rstrip("\n")
    except OSError as e:
        print(f"cat: {path}: {e.strerror}", file=sys.stderr, flush=True)
        raise Exit(1) from None


def setting(path, name):
    """sed -n 's/^NAME=//p' path: NAME's values, a line each."""
    try:
        with open(path, errors="surrogateescape") as f:
            return "\n".join(line[len(name) + 1:].rstrip("\n") for line in f if line.startswith(name + "="))
    except OSError as e:
        print(f"sed: can't read {path}: {e.strerror}", file=sys.stderr, flush=True)
        raise Exit(2) from None


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


def mkdirs(*paths):
    for p in paths:
        os.makedirs(p, exist_ok=True)


def copy(src, dst):
    """cp SRC DST, stopping if it fails."""
    if not peers.cp(src, dst):
        raise Exit(1)


def rm_rf(path):
    if os.path.islink(path) or os.path.isfile(path):
        os.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def basename(path):
    """basename(1): trailing slashes do not count."""
    return os.path.basename(path.rstrip("/")) or ("/" if path else "")


def children_cpu(work):
    """The CPU time (user and system, whole seconds) of this process's
    children that have ended; written to work/times as bash's times
    prints its own and its children's."""
    def tv(t):
        us = int(round(t * 1e6))
        return us // 1000000, us % 1000000 // 1000

    def fmt(t):
        s, ms = tv(t)
        return f"{s // 60}m{s % 60}.{ms:03d}s"
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    write(f"{work}/times", f"{fmt(me.ru_utime)} {fmt(me.ru_stime)}\n{fmt(kids.ru_utime)} {fmt(kids.ru_stime)}\n")
    return int(sum(s + ms / 1000 for s, ms in (tv(kids.ru_utime), tv(kids.ru_stime))))


class Run:
    """One scripts/vmtest run: its options and what it has found out."""

    def __init__(self, script):
        self.script = script
        self.lib = lib.Lib.load()
        self.root = self.lib.root
        self.env = os.environ
        self.scrape = ""
        self.proc = None    # QEMU's timeout, once started
        self.monitor = ""   # QEMU's monitor socket (x86_64)
        self.mondir = ""    # its directory, removed at the end
        self.ksft_timeout = ""
        self.arch = "x86_64"

    def log(self, *text):
        print(f"[{self.arch}]", *text, file=sys.stderr, flush=True)

    def stop_scrape(self):
        """The scrape stopped (scripts/prom-scrape --stop), if it runs."""
        if self.scrape:
            run([f"{self.root}/scripts/prom-scrape", "--stop", self.scrape])

    def forget(self, kdir):
        """No result of an earlier run may be mistaken for this one's."""
        work = f"{self.root}/out/vmtest/{basename(kdir)}{self.suffix}"
        for f in ("summary", "results.log", "splats.txt", "splats-inject.txt", "inject-summary", "reboot.txt",
                  "console-boot1.log"):
            try:
                os.remove(f"{work}/{f}")
            except FileNotFoundError:
                pass

    def main(self, args):
        """The run, in its order: the options, the kernel, the modules, the
        test programs, the guest's root, QEMU's command line, the boot and
        the report (exec'd: its status is the run's)."""
        try:
            o = self.o = parse_args(args, self.lib.deftree)
        except Unbound:
            print(f"{self.script}: $2: unbound variable", file=sys.stderr)
            return 1
        if o.help:
            # lib.sh's usage: the script's leading comment.
            flush()
            return subprocess.run(["bash", "-c", '. "$1" && usage', self.script, lib.LIB_SH]).returncode
        check_options(o)
        arch = self.lib.arch_of(o.arch)
        if arch is None:
            return 1
        self.arch = arch
        self.karch, self.da, self.gnu, self.image_path, self.console, self.qemu_cmd = lib.arch_fields(
            arch, "kernel", "deb", "gnu", "image", "console", "qemu")
        os.environ.update(lib.toolchain_env())
        self.vm_timeout = guest_timeout(o, self.env)
        ksft_timeout = self.ksft_timeout = setting(f"{self.root}/tests/settings", "timeout")
        err = timeout_error(o, self.vm_timeout, ksft_timeout, self.script)
        if err:
            raise Die(err)
        self.suffix = work_suffix(o, self.lib.cpus_suffix(o.cpus))

        self.kernel()
        self.work_dir()
        lock = self.modules()
        self.groot = f"{self.work}/initramfs"
        self.ksft = f"{self.groot}/kselftest"
        if o.system:
            self.packages()
        mkdirs(*(f"{self.groot}/{d}" for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp",
                                               "root", "etc")), self.ksft)
        if not (o.inject or o.demo):
            self.tests()
        if o.build_only:
            # (The modules counted as `echo "$mods" | wc -l` counted them: none is one line.)
            print(f"{arch}: build check against {self.krel} passed: {len(self.mods) or 1} modules, "
                  f"{count_files(f'{self.ksft}/rtrs')} test files", flush=True)
            return 0
        if not o.inject and not o.system and need_tool(o):
            self.tool()
        self.guest_modules()
        # (What this guest takes of the kernel's shared build is copied.)
        fcntl.flock(lock, fcntl.LOCK_UN)
        self.guest_root()
        qemu = self.qemu_line()
        if o.shell:
            return self.exec(qemu)
        qrc = self.guest(qemu)
        self.drop_monitor()
        if self.scrape:
            self.check_scrape()
        return self.exec(report_argv(self.root, arch, self.work, self.kdir, qrc, self.vm_timeout, o))

    def since(self):
        """The seconds since the phase's start (self.t0), as the log gives them."""
        return f"{int(time.time()) - self.t0} s"

    def kernel(self):
        """The kernel's build directory (built, or reconstructed for a
        distribution's kernel, if need be), checked; how modules build
        against it; its release, its source."""
        o, root = self.o, self.root
        kdir = o.kdir
        if o.distro:
            kdir = must_output([f"{root}/scripts/distro-kdir", "--release", o.distro])
        if not kdir:
            bk = [f"{root}/scripts/build-kernel", "--arch", self.arch, "--tree", o.tree, "--flavour", o.flavour]
            self.forget(output(bk + ["--print"])[1])
            kdir = must_output(bk)
        if not os.path.isdir(kdir):
            why = "Not a directory" if os.path.exists(kdir) else "No such file or directory"
            print(f"{self.script}: cd: {kdir}: {why}", file=sys.stderr)
            raise Exit(1)
        self.kdir = kdir = os.path.realpath(kdir)
        self.forget(kdir)
        # A reconstructed distribution build directory builds in its own root.
        self.inroot, self.kargs = [], [f"ARCH={self.karch}", f"LLVM={os.environ['LLVM']}"]
        if os.path.isfile(f"{kdir}/.rtrs-buildroot"):
            self.inroot = [f"{root}/scripts/distro-kdir", "--run", kdir, "--"]
            self.kargs = words(read(f"{kdir}/.rtrs-make-args"))
        must(self.inroot + [f"{root}/scripts/check-kdir", kdir])
        # A tree made by build-kernel --prepare-only has no vmlinux and no
        # Module.symvers: it can only be built against, and modpost cannot resolve
        # the kernel's symbols (it warns instead; compiling is what is checked).
        if not os.path.isfile(f"{kdir}/Module.symvers"):
            if not o.build_only:
                raise Die(f"{kdir} has no Module.symvers (a modules_prepare tree?): only --build-only can use it")
            self.kargs.append("KBUILD_MODPOST_WARN=1")
        self.krel = read(f"{kdir}/include/config/kernel.release")
        # (More possible CPUs than the kernel takes would be ignored by it, the
        # cell's facts wrong.)
        nr_cpus = setting(f"{kdir}/.config", "CONFIG_NR_CPUS")
        if nr_cpus and not int(o.possible) <= (test_int(nr_cpus) or 0):
            raise Die(f"--cpus '{o.cpus}': {kdir} takes {nr_cpus} CPUs at most (CONFIG_NR_CPUS)")
        self.ksrc = os.path.realpath(f"{kdir}/source")

    def work_dir(self):
        """The run's work directory, new, with the cell's facts in it."""
        o = self.o
        self.work = f"{self.root}/out/vmtest/{basename(self.kdir)}{self.suffix}"
        self.build = f"{self.root}/out/vmtest/build/{basename(self.kdir)}"
        rm_rf(self.work)
        mkdirs(self.work, self.build)
        # The machine's CPUs, online and possible (the cell's fact "narrow").
        write(f"{self.work}/cpus", f"{o.online} {o.possible}\n")
        # A cell of `make check-long` (RTRS_LONG=1) also runs what tests/expected
        # leaves to the long run (the cell's fact "long").
        if (self.env.get("RTRS_LONG") or "0") == "1":
            write(f"{self.work}/long", "make check-long\n")

    def modules(self):
        """Modules, built in a copy of the sources so that arches (and the
        developer's own in-tree build) do not collide; kept per kernel, so that
        the next run against the same kernel rebuilds only what changed.
        Returns the lock on the kernel's build, held."""
        root, build, work = self.root, self.build, self.work
        self.t0 = int(time.time())
        self.log(f"building modules against {self.kdir}")
        # Guests of one kernel at once (cells of another --cpus) build in turn: the
        # second finds everything built.
        lock = open(f"{build}/.lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        must(["rsync", "-a", "--delete", f"--exclude-from={root}/.gitignore", "--exclude=.git", "--exclude=out",
              f"{root}/", f"{build}/src/"])
        with open(f"{work}/modules.log", "wb") as out:
            rc = run(self.inroot + ["make", "-s", "-C", self.kdir, f"M={build}/src", *self.kargs, "KCFLAGS=-Werror",
                                    "KRUSTFLAGS=-Dwarnings", "modules"], stdout=out, stderr=subprocess.STDOUT)
        if rc:
            self.cat_err(f"{work}/modules.log")
            raise Die(f"module build failed for {self.arch}")
        # What this build made, not what an earlier one left.
        self.mods = [re.sub(r"\.o$", ".ko", m) for m in read_lines(f"{build}/src/modules.order")]
        names = " ".join(re.sub(r"\.ko$", "", basename(m)) for m in self.mods)
        self.log(f"modules built ({self.since()}): {names} ")
        return lock

    def packages(self):
        """--system: the suite packaged (scripts/package: the source
        package's binaries, or those in --debs DIR, and the prebuilt
        modules of this kernel) and apt-installed into a copy of the Debian
        system of the kernel's release."""
        o, root, work, krel = self.o, self.root, self.work, self.krel
        if not os.path.isfile(f"{self.kdir}/.rtrs-distro"):
            raise Die("--system needs a distribution's kernel (--distro, or a --kdir scripts/distro-kdir made)")
        if o.inject or o.bench or o.build_only:
            raise Die("--system runs the suite only")
        self.t0 = int(time.time())
        self.log(f"packaging the suite for {krel}")
        with open(f"{work}/package.log", "wb") as plog:
            rc, debs = output([f"{root}/scripts/package", "--out", f"{work}/debs", "--release", krel,
                               "--arch", "none" if o.debs else self.arch,
                               "--modules", f"{krel}={self.build}/src"], stderr=plog)
        if rc:
            self.cat_err(f"{work}/package.log")
            raise Die("packaging failed")
        # What a user of the prebuilt modules installs: the tool, the
        # shared files and the modules (not the DKMS source, the C header
        # or the debugging symbols).
        debs = debs.split()
        if o.debs:
            debs += [os.path.join(o.debs, f) for f in sorted(os.listdir(o.debs)) if f.endswith(".deb")]
        da = self.lib.arch_info(self.arch, "deb")
        wanted = (f"rtlat_", f"rtrs-modules-common_", f"rtrs-modules-{krel}_")
        debs = [d for d in debs if basename(d).startswith(wanted) and basename(d).endswith((f"_{da}.deb", "_all.deb"))]
        names = [basename(d).split("_")[0] for d in debs]
        if sorted(names) != sorted(["rtlat", "rtrs-modules-common", f"rtrs-modules-{krel}"]):
            raise Die(f"packaging: expected rtlat, rtrs-modules-common and rtrs-modules-{krel} for {da}, "
                      f"found: {' '.join(names) or 'none'}")
        self.log(f"packages built and lintian-clean ({self.since()}): {''.join(basename(d) + ' ' for d in debs)}")
        self.t0 = int(time.time())
        rc, sysroot = output([f"{root}/scripts/distro-system", "--release", krel])
        if rc:
            raise Die(f"no Debian system for {krel}")
        # Its network card (qemu_line): the cell's fact "network".
        write(f"{work}/network", f"QEMU user network, restrict=on, guest port {GUEST_PORT} from the host's 127.0.0.1\n")
        if run([f"{root}/scripts/distro-system", "--install", sysroot, self.groot, *debs]):
            raise Die("apt install of the packages failed")
        self.log(f"apt install ./….deb into a copy of {basename(sysroot)} ({self.since()})")

    def tests(self):
        """Test programs, with the cross compiler (none for the host's own
        architecture) and the kselftest headers of this tree; the kernel's
        own kselftest runner beside them."""
        root, ksft, work = self.root, self.ksft, self.work
        cross = "" if self.arch == self.lib.host_arch() else f"{self.gnu}-"
        self.t0 = int(time.time())
        self.log("building tests")
        mkdirs(f"{self.build}/tests")
        with open(f"{work}/tests.log", "wb") as out:
            rc = run(["make", "-s", "-C", f"{root}/tests", f"KDIR={self.kdir}", f"ARCH={self.karch}", "LLVM=",
                      f"CROSS_COMPILE={cross}", f"OUTPUT={self.build}/tests", f"INSTALL_PATH={ksft}/rtrs", "install"],
                     stdout=out, stderr=subprocess.STDOUT)
        if rc:
            self.cat_err(f"{work}/tests.log")
            raise Die(f"test build failed for {self.arch}")
        self.log(f"tests built ({self.since()})")

        # The kernel's own kselftest runner, as `make install` of the selftests lays it out.
        mkdirs(f"{ksft}/kselftest")
        sel = f"{self.ksrc}/tools/testing/selftests"
        copy(f"{sel}/run_kselftest.sh", f"{ksft}/")
        ok = [peers.cp(f"{sel}/kselftest/{f}", f"{ksft}/kselftest/")
              for f in ("runner.sh", "ktap_helpers.sh", "prefix.pl", "module.sh", "ksft.py")]
        if not all(ok):
            raise Exit(1)
        with open(f"{ksft}/kselftest-list.txt", "wb") as out:
            must(["make", "-s", "--no-print-directory", "-C", f"{root}/tests", f"KDIR={self.kdir}",
                  "COLLECTION=rtrs", "emit_tests"], stdout=out)

    def tool(self):
        """The rtlat tool, static for the guest (need_tool)."""
        self.t0 = int(time.time())
        self.log("building the rtlat tool")
        rc, tool = output([f"{self.root}/scripts/build-tool", "--arch", self.arch])
        if rc:
            raise Die(f"rtlat tool build failed for {self.arch}")
        copy(tool, f"{self.groot}/usr/bin/rtlat")
        copy(f"{os.path.dirname(tool)}/rtlat_loop_rs", f"{self.groot}/usr/bin/")
        self.log(f"rtlat tool ready ({self.since()})")

    def guest_modules(self):
        """Modules where the tests look for them (an installed system has the
        suite's own from its package: only the test-only ones are added)."""
        extra = f"{self.groot}/lib/modules/{self.krel}/extra"
        mkdirs(extra)
        for m in self.mods:
            if self.o.system and not m.startswith("tests/"):
                continue
            copy(f"{self.build}/src/{m}", f"{extra}/")

    def guest_root(self):
        """The rest of the guest's root: busybox, the init, the cell's
        programs, the peers, the benchmark; packed into initramfs.cpio."""
        o, root, groot, work = self.o, self.root, self.groot, self.work
        bb = ""
        for f in (f"{self.lib.cache}/busybox-{self.da}/bin/busybox",
                  f"{self.lib.cache}/busybox-{self.da}/usr/bin/busybox"):
            if os.access(f, os.X_OK):
                bb = f
        if not bb:
            raise Die(f"no busybox for {self.da} in {self.lib.cache}: run scripts/setup")
        copy(bb, f"{groot}/bin/busybox")
        copy(f"{root}/scripts/guest-init", f"{groot}/init")
        # The programs that run in this cell (tests/expected's [only: ...]), for
        # the guest's kselftest runner; the peers where they are used.
        self.progs = ""
        if not (o.inject or o.bench or o.demo):
            progs = must_output([f"{root}/scripts/vmtest-report", "--programs", "--arch", self.arch, "--work", work,
                                 "--kdir", self.kdir])
            if o.programs:
                for p in o.programs.split():
                    if p not in progs.split(" "):
                        raise Die(f"--programs: '{p}' is not a program of this cell ({progs})")
                progs = o.programs
            write(f"{self.ksft}/rtrs-run", "".join(f"rtrs:{p}\n" for p in progs.split() or [""]))
            self.progs = progs
        if want_peers(self.arch, self.progs, o):
            try:
                peers.install(self.lib.cache, self.da, self.gnu, groot, o.system, self.log)
            except peers.PeersError as e:
                raise Die(str(e)) from None
        if o.bench or o.then_bench:
            copy(f"{root}/scripts/bench-guest", f"{groot}/bench")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(f"{groot}/init", os.stat(f"{groot}/init").st_mode | (0o111 & ~umask))
        self.pack(groot, f"{work}/initramfs.cpio")
        if o.system:
            self.log(f"the system's initramfs: {disk_mib(f'{work}/initramfs.cpio')} MiB")

    def qemu_line(self):
        """QEMU's command line; an installed system's network, and the
        Prometheus that scrapes it, started."""
        o, work = self.o, self.work
        self.image = f"{self.kdir}/{self.image_path}"
        if os.path.isfile(f"{self.kdir}/.rtrs-image"):
            self.image = read(f"{self.kdir}/.rtrs-image")
        if o.system:
            # The system's own kernel, as its boot loader would load it; the whole
            # root unpacked in memory.
            self.image = f"{self.groot}/boot/vmlinuz-{self.krel}"
        append = " ".join(a for a in (kernel_append(o, self.console, self.env.get("RTRS_KUNIT_GLOB")),
                                      clock_append(self.arch), last_look_append(self.arch, o)) if a)
        qemu = qemu_argv(self.qemu_cmd, self.arch, o, self.image, work, append, guest_memory(o))
        if sparse_cpus(self.arch, o):
            qemu += ["-dtb", self.cpus_dtb(qemu)]
        # (A short path, a unix socket's is at most 107 bytes, in a
        # directory of this run's own.)
        if last_look_append(self.arch, o):
            self.mondir = tempfile.mkdtemp(prefix="rtrs-vmtest-")
            self.monitor = f"{self.mondir}/monitor"
        qemu += last_look_argv(self.arch, o, self.monitor)

        # An installed system has a network card (the cell's fact "network", from
        # the file network in its work directory), as a user's machine: QEMU's user
        # network, isolated (restrict=on) but for the guest's port 19101 forwarded
        # from the host's 127.0.0.1 only. Where tests/rtlat_scrape.sh runs, a real
        # Prometheus on the host scrapes that port from before the boot on, and
        # checks what it got against the guest's final snapshot afterwards
        # (scripts/prom-scrape --start, --check; the results in scrape.tap).
        if o.system:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                hport = s.getsockname()[1]
            qemu += network_argv(hport)
            if wants_scrape(o, self.progs):
                self.start_scrape(hport)

        # RTRS_QEMU_ARGS: more QEMU arguments, split at blanks (a monitor socket, say).
        return qemu + words(self.env.get("RTRS_QEMU_ARGS", ""))

    def cpus_dtb(self, qemu):
        """The device tree of a machine of more possible CPUs than vCPUs
        (sparse_cpus): QEMU's own for this command line, its CPU nodes
        rewritten (with the kernel tree's dtc)."""
        o, work = self.o, self.work
        if not os.access(f"{self.kdir}/scripts/dtc/dtc", os.X_OK):
            raise Die(f"--cpus {o.cpus} on arm64 needs the kernel tree's dtc: {self.kdir}/scripts/dtc/dtc")
        dtc = self.inroot + [f"{self.kdir}/scripts/dtc/dtc", "-q"]
        # The machine of the boot (RTRS_QEMU_ARGS too), without what it
        # loads: QEMU writes /chosen (command line, initrd) at the boot.
        dump, skip = [], False
        for a in qemu + words(self.env.get("RTRS_QEMU_ARGS", "")):
            if skip or a in ("-kernel", "-initrd", "-append"):
                skip = not skip
                continue
            dump.append(a)
        try:
            rc = subprocess.run(dump + ["-machine", f"dumpdtb={work}/qemu.dtb"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, timeout=60).returncode
        except (OSError, subprocess.TimeoutExpired) as e:
            rc = str(e)
        if rc != 0:
            raise Die(f"QEMU could not dump its device tree for --cpus {o.cpus} ({rc})")
        dts = must_output(dtc + ["-I", "dtb", "-O", "dts", f"{work}/qemu.dtb"])
        write(f"{work}/cpus.dts", sparse_dts(dts, int(o.online), int(o.possible)))
        must(dtc + ["-I", "dts", "-O", "dtb", "-o", f"{work}/cpus.dtb", f"{work}/cpus.dts"])
        return f"{work}/cpus.dtb"

    def start_scrape(self, hport):
        scrape = f"{self.work}/prometheus"
        rm_rf(scrape)
        rm_rf(f"{self.work}/scrape.tap")
        rm_rf(f"{self.work}/scrape-snapshot.json")
        # (Stopped on any way out but the report's exec: main's finally.)
        self.scrape = scrape
        # (It stops by itself after the guest's bound, should this script
        # be killed outright.)
        if run([f"{self.root}/scripts/prom-scrape", "--start", scrape, f"127.0.0.1:{hport}",
                str(2 * (test_int(self.vm_timeout) or 0) + 300)]):
            raise Die("Prometheus did not start")
        try:
            ver = subprocess.run(["prometheus", "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT).stdout.decode(errors="surrogateescape")
        except OSError:
            ver = ""
        m = re.match(r"prometheus, version ([^ \n]*)", ver)
        self.log(f"Prometheus {m.group(1) if m else ''} scrapes the guest's 127.0.0.1:{hport}")

    def guest(self, qemu):
        """The boot (two if the first flooded its console before init);
        QEMU's status."""
        o, work = self.o, self.work
        cmax = self.env.get("RTRS_CONSOLE_MAX") or DEFAULT_CONSOLE_MAX
        maxcpus = "" if o.possible == o.online else f" of {o.possible} possible"
        if sparse_cpus(self.arch, o):
            maxcpus += f" on {vcpus(self.arch, o)} vCPUs"
        self.log(f"booting {self.krel} ({basename(self.image)}, TCG{accel(self.arch, o)[3:]}, {o.online} "
                 f"CPUs{maxcpus}, timeout {self.vm_timeout}s)")
        start = int(time.time())
        cpu0 = children_cpu(work)
        console_log = f"{work}/console.log"
        qrc, flooded = self.boot(qemu, console_log, test_int(cmax))
        # A kernel that flooded its console before the guest's init ran failed
        # before anything of the suite did (seen: a KASAN report in x86_64's
        # interrupt entry 3 ms into boot, under heavy host load): its console is
        # kept as console-boot1.log, the run says so, and the guest boots once more.
        if flooded and run(["grep", "-q", r"^\[ *[0-9.]*\] rtrs: ", console_log]):
            first = output(["grep", "-m1", "-E", "BUG:|WARNING:|Oops", console_log])[1]
            os.rename(console_log, f"{work}/console-boot1.log")
            self.log(f"the kernel flooded its console before init ({first}): booting again "
                     "(first console in console-boot1.log)")
            write(f"{work}/reboot.txt", f"RTRS-REBOOTED {first}\n")
            qrc, flooded = self.boot(qemu, console_log, test_int(cmax))
        if flooded:
            self.log(f"the console passed {cmax} bytes: the guest was stopped")
        cpu = children_cpu(work)
        # (QEMU's CPU time is what two guests at once share the machine's cores by.)
        self.log(f"guest ran {int(time.time()) - start} s, QEMU used {cpu - cpu0} s of CPU")
        return qrc

    def exec(self, argv):
        """exec argv (on PATH); the shell's status and complaint if it cannot."""
        flush()
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            print(f"{self.script}: {argv[0]}: {e.strerror}", file=sys.stderr, flush=True)
            return 127 if isinstance(e, FileNotFoundError) else 126

    def cat_err(self, path):
        """cat path >&2."""
        flush()
        with open(path, "rb") as f:
            sys.stderr.buffer.write(f.read())
        sys.stderr.flush()

    def pack(self, groot, cpio):
        """The guest's root as an uncompressed newc cpio, without what booting
        an installed system does not read: apt's lists, any initramfs made
        for a disk boot, and the kernel, which QEMU loads, in /boot and where
        Debian's package puts it, beside its modules."""
        flush()
        prune = ["./var/lib/apt/lists", "./var/cache/apt", "./boot/initrd.img*", "./boot/vmlinuz*",
                 "./usr/lib/modules/*/vmlinuz"]
        expr = ["("] + [a for i, p in enumerate(prune) for a in ([] if i == 0 else ["-o"]) + ["-path", p]] + [")"]
        with open(cpio, "wb") as out:
            find = subprocess.Popen(["find", ".", *expr, "-prune", "-o", "-print"], cwd=groot, stdout=subprocess.PIPE)
            pack = subprocess.Popen(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=groot, stdin=find.stdout,
                                    stdout=out)
            find.stdout.close()
            rcs = [status(find.wait()), status(pack.wait())]
        # (pipefail: the last command that failed.)
        failed = [rc for rc in rcs if rc]
        if failed:
            raise Exit(failed[-1])

    def boot(self, qemu, console_log, cmax):
        """Run the guest to its end or its bound: (QEMU's status, whether
        its console flooded). A console that grows past RTRS_CONSOLE_MAX
        (64 MiB) is a kernel stuck reporting (an interrupt storm of KASAN
        reports, say): the guest is stopped then rather than at the bound."""
        def quiet():
            # (An asynchronous command of a script ignores SIGINT and SIGQUIT.)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGQUIT, signal.SIG_IGN)
        flush()
        with open(console_log, "wb") as out:
            proc = subprocess.Popen(["timeout", "-k", "10", self.vm_timeout, *qemu], stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, preexec_fn=quiet)
        self.proc = proc
        # (timeout leads a process group of its own: a stopped vmtest stops it,
        # and it QEMU.)
        for sig in (signal.SIGTERM, signal.SIGINT):
            if signal.getsignal(sig) != signal.SIG_IGN:
                signal.signal(sig, self.stopped)
        flooded = False
        t0 = time.monotonic()
        at = nmi_at(self.arch, self.o, self.vm_timeout, self.ksft_timeout)
        looked = at is None or not self.monitor
        while proc.poll() is None:
            time.sleep(2)
            if not looked and time.monotonic() - t0 >= at:
                looked = True
                sent = send_nmi(self.monitor)
                write(f"{self.work}/nmi.txt", f"an NMI {NMI_BEFORE} s before that bound stopped it\n"
                      if sent else "the NMI meant to stop it was not taken by QEMU's monitor\n")
                self.log(f"the guest still runs {NMI_BEFORE} s before its bound: "
                         + ("an NMI asks it for its state" if sent else "QEMU's monitor did not take the NMI"))
            try:
                size = os.stat(console_log).st_size
            except OSError:
                size = 0
            if cmax is not None and size > cmax:
                flooded = True
                kids = children(proc.pid)
                for pid in [proc.pid] + kids:
                    try:
                        os.kill(pid, signal.SIGTERM)
                    except OSError:
                        pass
                break
        return status(proc.wait()), flooded

    def stopped(self, *_):
        """SIGTERM or SIGINT: QEMU's timeout stopped (and it QEMU), the
        scrape too, exit 143."""
        if self.proc is not None:
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
            except OSError:
                pass
        self.stop_scrape()
        self.drop_monitor()
        raise Exit(143)

    def drop_monitor(self):
        """The monitor socket's directory removed."""
        if self.mondir:
            shutil.rmtree(self.mondir, ignore_errors=True)
            self.mondir = ""

    def check_scrape(self):
        """Prometheus' scrape of the guest against its final snapshot
        (scripts/prom-scrape --check, into scrape.tap)."""
        work = self.work
        snap = f"{work}/scrape-snapshot.json"
        # (sed -n 's/.*rtrs-scrape-snapshot: //p' results.log >snapshot: the
        # snapshot file is there, empty, if results.log is not.)
        mark = b"rtrs-scrape-snapshot: "
        with open(snap, "wb") as out:
            try:
                with open(f"{work}/results.log", "rb") as f:
                    data = f.read()
            except OSError:
                data = b""
            lines = data.split(b"\n")
            for n, line in enumerate(lines):
                i = line.rfind(mark)
                if i >= 0:
                    out.write(line[i + len(mark):] + (b"\n" if n < len(lines) - 1 else b""))
        tap = f"{work}/scrape.tap"
        with open(tap, "wb") as out:
            src = run([f"{self.root}/scripts/prom-scrape", "--check", self.scrape, snap], stdout=out,
                      stderr=subprocess.STDOUT)
        with open(tap, "rb") as f:
            lines = f.read().split(b"\n")
        # (A check that died without a verdict fails too.)
        if src and not any(line.startswith(b"not ok") for line in lines):
            write(tap, f"# prom-scrape --check: exit {src}\nnot ok - prometheus: prom-scrape --check ran\n", "a")
            with open(tap, "rb") as f:
                lines = f.read().split(b"\n")
        self.scrape = ""
        ok = sum(line.startswith(b"ok") for line in lines)
        nok = sum(line.startswith(b"not ok") for line in lines)
        self.log(f"Prometheus' view of the guest checked: {ok} ok, {nok} not ok")


def read_lines(path):
    """The lines of path (sed's reading: stop as it would if there is none)."""
    try:
        with open(path, errors="surrogateescape") as f:
            return f.read().splitlines()
    except OSError as e:
        print(f"sed: can't read {path}: {e.strerror}", file=sys.stderr, flush=True)
        raise Exit(2) from None


def count_files(path):
    """find path -type f | wc -l."""
    if not os.path.isdir(path):
        print(f"find: '{path}': No such file or directory", file=sys.stderr, flush=True)
        return 0
    return sum(1 for d, _, files in os.walk(path) for f in files if os.path.isfile(os.path.join(d, f))
               and not os.path.islink(os.path.join(d, f)))


def disk_mib(path):
    """du -m path: its disk usage in MiB."""
    out = subprocess.run(["du", "-m", path], stdout=subprocess.PIPE).stdout.decode()
    return out.split("\t", 1)[0].strip()


def main(argv):
    """scripts/vmtest SCRIPT ARGS...: SCRIPT the wrapper's $0."""
    # (SIGINT ends the run as it ends a shell script, with no traceback.)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    r = Run(argv[0])
    try:
        return r.main(argv[1:])
    except Die as e:
        print(f"rtrs: error: {e}", file=sys.stderr, flush=True)
        return 1
    except Exit as e:
        return e.rc
    except OSError as e:
        print(f"{basename(argv[0])}: {e.filename or ''}: {e.strerror}", file=sys.stderr, flush=True)
        return 1
    finally:
        # (The scrape is stopped on any way out but the report's exec.)
        r.stop_scrape()
        r.drop_monitor()
        flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
