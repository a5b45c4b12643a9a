# SPDX-License-Identifier: GPL-2.0
"""The guests: RTRS_GUEST_JOBS at a time, each scripts/vmtest in the
background leading its own process group, its output in
out/run-tests/guest-N.log, reported in the order they were queued; and
that order.

(Under TCG a guest keeps about one of two host cores busy on average: its
CPUs sleep through the tests' periods and durations. Two at once take
about the time of one and a half; no latency number is judged.)"""

import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Optional

from runner import console
from runner.cells import CHOSEN, SUITE, Cell
from runner.procs import popen, status
from runner.steps import readlink_f
from runner.timings import now

QEMU_CPU = re.compile(r".* QEMU used ([0-9]*) s of CPU$")


@dataclass(frozen=True)
class Queued:
    """A guest of the queue: a matrix cell's, or a distribution kernel's
    installed system (release)."""
    cell: Optional[Cell] = None
    release: Optional[str] = None


def queue_order(cells, releases, runs_bench):
    """The order the guests start in, longest first so that the slots end
    together: the whole-suite cells (matrix order), then the distribution
    kernels' (the one whose guest runs the benchmark smoke run,
    runs_bench(release), first: the longer, with the peers' comparisons
    on x86_64), then the cells of chosen programs (a few minutes each)."""
    suite = [Queued(cell=c) for c in cells if c.kind == SUITE]
    distro = [Queued(release=r) for r in sorted(releases, key=lambda r: 0 if runs_bench(r) else 1)]
    chosen = [Queued(cell=c) for c in cells if c.kind == CHOSEN]
    return suite + distro + chosen


def report_order(cells, releases):
    """The order the results are reported in: the whole-suite cells', then
    step 8 (each distribution kernel's guest, in RTRS_DISTRO's order, its
    host checks right after it), then the chosen programs' cells."""
    return ([Queued(cell=c) for c in cells if c.kind == SUITE] + [Queued(release=r) for r in releases]
            + [Queued(cell=c) for c in cells if c.kind == CHOSEN])


@dataclass
class Guest:
    n: int
    label: str
    work: str                    # scripts/vmtest's work directory
    log: str
    proc: Optional[subprocess.Popen] = None
    rc: Optional[int] = None     # None: ended without a status
    secs: int = 0
    done: threading.Event = field(default_factory=threading.Event)


class GuestPool:
    def __init__(self, root, logs, jobs, timings):
        self.root = root
        self.logs = logs
        self.jobs = jobs
        self.timings = timings
        self.slots = threading.Semaphore(jobs)
        self.guests = []

    def work_dir(self, kdir, suffix=""):
        """scripts/vmtest's work directory of the build directory kdir."""
        return os.path.join(self.root, "out", "vmtest", os.path.basename(readlink_f(kdir)) + suffix)

    def start(self, label, arch, kdir, suffix, args):
        """Start a guest of scripts/vmtest --arch ARCH --kdir KDIR ARGS once
        fewer than RTRS_GUEST_JOBS run; its work directory has suffix
        (vm_cpus_suffix)."""
        kd = readlink_f(kdir)
        self.slots.acquire()
        n = len(self.guests)
        g = Guest(n, label, self.work_dir(kd, suffix), os.path.join(self.logs, f"guest-{n}.log"))
        self.guests.append(g)
        try:
            os.remove(os.path.join(g.work, "summary"))
        except OSError:
            pass
        console.say(f"=== {label}: started (log: {g.log})")
        t0 = now()
        with open(g.log, "wb") as log:
            g.proc = popen([os.path.join(self.root, "scripts", "vmtest"), "--arch", arch, "--kdir", kd, *args],
                           stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           start_new_session=True)
        threading.Thread(target=self._watch, args=(g, t0), daemon=True).start()
        return g

    def _watch(self, g, t0):
        try:
            if g.proc is not None:
                g.rc = status(g.proc.wait())
                g.secs = now() - t0
        finally:
            g.done.set()
            self.slots.release()

    def result(self, g):
        """Wait for guest g, print its output and time; its counts (p, f,
        s) from its summary and exit status (a failing exit with a clean
        summary fails)."""
        g.done.wait()
        if g.rc is None:
            console.say(f"{g.label}: FAIL: the guest's run ended without a status")
        log = b""
        try:
            with open(g.log, "rb") as f:
                log = f.read()
        except OSError:
            pass
        console.raw(log)
        # (Its wall time, and the CPU time its QEMU took of the machine's.)
        cpu = None
        for line in console.text_of(log).split("\n"):
            m = QEMU_CPU.match(line)
            if m:
                cpu = int(m.group(1)) if m.group(1) else None
        self.timings.record(g.label, g.secs, cpu_seconds=cpu)
        try:
            with open(os.path.join(g.work, "summary")) as f:
                vals = (f.readline().split() + ["0", "0", "0"])[:3]
            p, f_, s = (int(v) if v.isdigit() else 0 for v in vals)
        except OSError:
            p, f_, s = 0, 1, 0
        if g.rc != 0 and f_ == 0:
            f_ = 1
        return p, f_, s

    def stop(self):
        """An interrupted run stops its guests (QEMU's timeout passes the
        signal on)."""
        for g in self.guests:
            if g.proc is not None:
                try:
                    os.killpg(g.proc.pid, signal.SIGTERM)
                except OSError:
                    pass
