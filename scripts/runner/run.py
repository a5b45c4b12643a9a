# SPDX-License-Identifier: GPL-2.0
"""The steps of scripts/run-tests in their order (its comment numbers
them; Documentation/testing.rst): the kernels, with the distribution
kernels prepared in the background; the host checks, with the build
checks beside them; compile-fail and style; the guests, RTRS_GUEST_JOBS
at a time, and their results with step 8's host checks; the negative
checks; make check-long's check; the benchmark smoke run; the table of
timings, the summary, and "N passed, N failed, N skipped"."""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys

from runner import bench, negative
from runner.cells import BUILD, MatrixError, parse_matrix
from runner.config import Config, has_word
from runner.console import err, raw, say
from runner.distro import Distro
from runner.lib import Lib
from runner.pool import GuestPool, queue_order, report_order
from runner.procs import BackgroundJob, Foreground, Interrupts
from runner.steps import Kernels, Steps, tail
from runner.tally import Tally
from runner.timings import Timings, now, rst_table


class Run:
    def __init__(self, lib, config, cells, logs):
        self.lib = lib
        self.config = config
        self.cells = cells
        self.root = lib.root
        self.logs = logs
        self.long = config.long
        self.tally = Tally()
        commit = subprocess.run(["git", "-C", self.root, "rev-parse", "--short", "HEAD"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        self.timings = Timings(logs, "make check-long" if self.long else "make check", commit)
        self.fg = Foreground()
        self.interrupts = Interrupts(self.fg)
        self.steps = Steps(self.root, self.timings, self.tally, self.fg)
        self.kernels = Kernels(self.steps)
        self.distro = Distro(self.root, logs, lib.cache, config, lib, self.steps, self.tally)
        self.pool = None
        # What the guests were started with, by arch: the negative checks'
        # boot (injection, work directory), the benchmark smoke run's
        # results.log and kernel; each cell's and release's guest.
        self.injected = {}
        self.benched = {}
        self.bench_kdir = {}
        self.bench_rel = {}
        self.cell_guest = {}
        self.distro_guest = {}

    def main(self):
        start = now()
        if not re.fullmatch(r"[1-9][0-9]*", self.config.guest_jobs):
            err(f"rtrs: error: RTRS_GUEST_JOBS: '{self.config.guest_jobs}' is not a number of guests (1 or more)")
            return 1
        self.pool = GuestPool(self.root, self.logs, int(self.config.guest_jobs), self.timings)
        self.interrupts.pool = self.pool
        self.interrupts.install()
        self.bench_rel = bench.bench_releases(self.distro.releases, self.config.bench_arches, self.distro.arch)

        self.kernels_and_preparation()
        if not self.long:
            self.host_and_build_checks()
            self.compile_fail_and_style()
        self.guests()
        negative.negative_checks(self)
        if self.long:
            negative.long_checks(self)
        bench.smoke_runs(self)

        say()
        say("=== timings")
        for line in self.timings.table():
            say(line)
        say(self.timings.finish(now() - start))
        say()
        say("=== summary")
        for line in self.tally.summary():
            say(line)
        say(self.tally.total_line())
        return 0 if self.tally.failed == 0 else 1

    # ---- 1. Kernels, and the distribution build directories in the background.
    def kernels_and_preparation(self):
        if self.distro.releases:
            job = BackgroundJob("distro preparation", self.distro.prepare)
            self.interrupts.jobs.append(job)
            self.distro_job = job.start()
            say(f"=== preparing the distribution kernels in the background: {self.config.distros} "
                f"(log in {self.logs}/)")
            # The source package's binaries, after the preparation, beside
            # the host checks (the guests wait for them).
            pkg = BackgroundJob("distro packages", lambda j: self.distro.packages(j, self.distro_job))
            self.interrupts.jobs.append(pkg)
            self.package_job = pkg.start()
        for cell in self.cells:
            self.kernels.get(cell.tree, cell.arch, prepare=cell.kind == BUILD)
        # (And x86_64's for steps 2 to 4, which make check-long leaves out.)
        karches = (self.config.bench_arches + " " + self.config.splat_arches + " "
                   + self.config.kasan_arches).split()
        for arch in (karches if self.long else ["x86_64"] + karches):
            self.kernels.get(self.lib.deftree, arch)

    # ---- 3. Build checks, beside step 2: a build check is one make job,
    # and the host checks keep the second core busy only part of the time
    # (alone, 39 and 29 s with 63 % and 50 % of the two cores busy). Their
    # output is kept and printed after the host checks'.
    def host_and_build_checks(self):
        build_cells = [(c.tree, c.arch, self.kernels.get(c.tree, c.arch, prepare=True))
                       for c in self.cells if c.kind == BUILD]
        passed = {}
        log = os.path.join(self.logs, "build-checks.log")

        def build_checks(job):
            open(log, "wb").close()
            with open(log, "ab") as out:
                for tree, arch, kdir in build_cells:
                    out.write(f"=== build check: Linux {tree}, {arch} (modules_prepare tree)\n".encode())
                    out.flush()
                    rc = 1
                    if kdir:
                        label = f"build check {tree} {arch}: modules and tests"
                        t0 = now()
                        rc = job.run([self.steps.script("vmtest"), "--arch", arch, "--kdir", kdir, "--build-only"],
                                     stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
                        self.timings.timed(label, t0, stream=out)
                    passed[(tree, arch)] = rc == 0

        job = BackgroundJob("build checks", build_checks)
        self.interrupts.jobs.append(job)
        job.start()

        # ---- 2. Host checks.
        self.steps.ktap_counted("host checks", [self.steps.script("test-host")])

        # (Step 3's output and results.)
        t0 = now()
        job.wait()
        self.interrupts.jobs.remove(job)
        self.timings.timed("build checks: waited for them", t0)
        with open(log, "rb") as f:
            raw(f.read())
        for tree, arch, _ in build_cells:
            ok = passed.get((tree, arch), False)
            self.tally.add(1 if ok else 0, 0 if ok else 1, 0, f"{tree} {arch} build check")

    # ---- 4. Misuse of the context tokens must not compile; style.
    def compile_fail_and_style(self):
        kdir = self.kernels.get(self.lib.deftree, "x86_64")
        if kdir:
            for check in ("compile-fail", "style-check"):
                self.steps.ktap_counted(check, [self.steps.script(check), kdir])
        else:
            self.tally.add(0, 1, 0, "compile-fail and style (no kernel)")

    # ---- 5. The kselftest suite in each guest, and (step 8) in the
    # installed system of each distribution kernel: RTRS_GUEST_JOBS at a
    # time, nothing else competing for the CPUs, so the distribution
    # kernels' preparation (step 1, in the background) and the source
    # package's build (beside the host checks, at the idle priority) must
    # be done first. (Beside the first guests, even at nice 19,
    # the build slowed them by a quarter, and rtlat_noise.sh's blame
    # failed on arm64.)
    def guests(self):
        if self.distro.releases:
            say("=== waiting for the distribution kernels' preparation")
            t0 = now()
            self.distro_job.wait()
            self.interrupts.jobs.remove(self.distro_job)
            self.timings.timed("distro preparation: waited for it", t0)
            t0 = now()
            self.package_job.wait()
            self.interrupts.jobs.remove(self.package_job)
            self.timings.timed("distro packages: waited for them", t0)
        self.distro.preparation_results()
        tguests = now()
        for q in queue_order(self.cells, self.distro.releases,
                             lambda rel: self.bench_rel.get(self.distro.arch(rel)) == rel):
            if q.cell is not None:
                self.start_cell(q.cell)
            else:
                self.start_distro(q.release)
        for q in report_order(self.cells, self.distro.releases):
            if q.cell is not None:
                self.cell_result(q.cell)
            else:
                self.distro_result(q.release)
        self.timings.timed(f"guests, {self.pool.jobs} at a time: wall", tguests)

    def start_cell(self, cell):
        kdir = self.kernels.get(cell.tree, cell.arch)
        suffix = self.lib.cpus_suffix(cell.cpus)
        label = cell.guest_label()
        arch, first_tree = cell.arch, cell.tree == self.lib.deftree
        inj = self.config.injection(arch) if first_tree and arch not in self.injected else ""
        # The benchmark smoke run (step 6) in the same boot, after the suite.
        smoke = ""
        if (first_tree and arch not in self.benched and arch not in self.bench_rel
                and has_word(arch, self.config.bench_arches)):
            smoke = bench.BENCH_SMOKE
            label += " (+ benchmark smoke run)"
        if not kdir:
            return
        args = cell.vmtest_args() + (["--then-inject", inj] if inj else []) + (["--then-bench", smoke] if smoke else [])
        self.cell_guest[cell.text] = self.pool.start(label, arch, kdir, suffix, args)
        work = self.pool.work_dir(kdir, suffix)
        if inj:
            self.injected[arch] = (inj, work)
        if smoke:
            self.benched[arch] = os.path.join(work, "results.log")
            self.bench_kdir[arch] = kdir

    def start_distro(self, rel):
        """A distribution kernel's guest: its installed system (reported in step 8)."""
        darch = self.distro.arch(rel) or "x86_64"
        kdir = self.distro.kdir(rel)
        if self.distro.ready[rel] != 0 or not kdir or not os.path.isfile(os.path.join(kdir, ".rtrs-ok")):
            return
        if not self.distro.packages_ok(rel):
            return
        # (No system of an earlier run left for step 8's apt remove to judge.)
        shutil.rmtree(self.distro.system_dir(rel), ignore_errors=True)
        smoke = bench.BENCH_SMOKE if self.bench_rel.get(darch) == rel else ""
        cpus = self.distro.cpus(rel)
        label = (f"distro {rel}: guest (installed system{f', CPUs {cpus}' if cpus else ''}"
                 f"{', + benchmark smoke run' if smoke else ''})")
        self.distro_guest[rel] = self.pool.start(label, darch, kdir, self.distro.suffix(rel),
                                                 ["--system", "--debs", self.distro.debs_dir]
                                                 + (["--cpus", cpus] if cpus else [])
                                                 + (["--then-bench", smoke] if smoke else []))
        if smoke:
            self.benched[darch] = os.path.join(self.distro.work_dir(rel), "results.log")
            self.bench_kdir[darch] = kdir

    def cell_result(self, cell):
        arch = cell.arch + (f" CPUs {cell.cpus}" if cell.cpus else "")
        say(f"=== Linux {cell.tree}, {arch}")
        g = self.cell_guest.get(cell.text)
        if g is not None:
            p, f, s = self.pool.result(g)
        else:
            say(f"{arch}: FAIL: kernel {cell.tree} did not build")
            p, f, s = 0, 1, 0
        self.tally.add(p, f, s, cell.result_label())

    # ---- 8. The distribution's RT kernels, unmodified: each guest's
    # result, then what runs on the host for it, beside the other
    # release's guest if that still runs (one guest and this, no more than
    # two guests).
    def distro_result(self, rel):
        say(f"=== distribution kernel {rel}")
        g = self.distro_guest.get(rel)
        if g is not None:
            p, f, s = self.pool.result(g)
        elif self.distro.ready.get(rel) == 0 and self.distro.packaged != 0:
            say(f"FAIL: the packages of {rel}'s architecture were not built (above)")
            p, f, s = 0, 1, 0
        else:
            log = self.distro.log(rel, "log")
            say(f"FAIL: the preparation of {rel} failed (log: {log})")
            tail([log])
            p, f, s = 0, 1, 0
        self.tally.add(p, f, s, rel)
        self.distro.host_checks(rel, g is not None, f)


def main(argv):
    parser = argparse.ArgumentParser(
        prog="scripts/run-tests",
        description="The whole rtrs test suite, as make check runs it (Documentation/testing.rst).")
    parser.add_argument("--rst-table", metavar="FILE.json",
                        help="print the RST table of the timings a run wrote (out/run-tests/timings.json)")
    args = parser.parse_args(argv)
    if args.rst_table:
        with open(args.rst_table) as f:
            sys.stdout.write(rst_table(json.load(f)))
        return 0

    # (Until the run's own handlers: an interrupt ends it as it would a
    # shell; an ignored one stays ignored.)
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    lib = Lib.load()
    config = Config.from_env(os.environ, lib)
    try:
        cells = parse_matrix(config.matrix, config.matrix_var, lib.arch_of, lib.cpus_suffix)
    except MatrixError as e:
        err(f"rtrs: error: {e}")
        return 1
    logs = os.path.join(lib.root, "out", "run-tests")
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    return Run(lib, config, cells, logs).main()
