# SPDX-License-Identifier: GPL-2.0
"""The distribution's own RT kernels (step 8): their build directories
and systems prepared in the background (step 1: scripts/distro-kdir, then
scripts/distro-system, one release after another: they share a build
root); the source package's binaries for each release's architecture
(scripts/package, in the background beside the host checks, at the idle
priority; the guests wait for them); and what runs on the host for a release once its guest is done:
apt remove leaves nothing behind, a mismatched toolchain is refused,
rtrs-dkms builds, refuses and purges as an administrator meets it
(scripts/dkms-check)."""

import glob
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from runner.console import say
from runner.steps import first_line, readlink_f, tail
from runner.timings import now

# arm64's installed system is the machine of CPUs past 256: 2 online of 260
# possible (scripts/vmtest's sparse_cpus), so that the paths past the UAPI's
# inline 256 (rtlat_test's cpus_past_256, the tool's --cpus 0,259) run in
# make check, on a kernel users run.
WIDE = {"arm64": "2/260"}

BAD_RUSTC = 'CONFIG_RUSTC_VERSION_TEXT="rustc 1.84.0 (9fc6b4312 2025-01-07)"'


def nonempty(path):
    """[ -s PATH ]"""
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


@dataclass(frozen=True)
class Prepared:
    rc: int     # 0: its build directory and system are there
    secs: int


class Distro:
    def __init__(self, root, logs, cache, config, lib, steps, tally):
        self.root = root
        self.logs = logs
        self.cache = cache
        self.config = config
        self.lib = lib
        self.steps = steps
        self.tally = tally
        self.releases = config.distros.split()
        self.prepared = {}   # release -> Prepared, as the job wrote it
        self.ready = {}      # release -> 0 if its guest can boot
        self.packaged = None  # status of scripts/package, once it ran

    def log(self, rel, ext):
        return os.path.join(self.logs, f"distro-{rel}.{ext}")

    def arch(self, rel):
        """The release's architecture (it names Debian's last), None if unknown."""
        return self.lib.arch_info(rel.rsplit("-", 1)[-1], "arch")

    def kdir(self, rel):
        """The build directory scripts/distro-kdir printed for rel."""
        return first_line(self.log(rel, "kdir"))

    def cpus(self, rel):
        """scripts/vmtest --cpus of rel's guest, "" for its default."""
        return WIDE.get(self.arch(rel) or "", "")

    def suffix(self, rel):
        """Its guest's work directory suffix (lib.sh's vm_cpus_suffix)."""
        return self.lib.cpus_suffix(self.cpus(rel))

    def work_dir(self, rel):
        """The work directory of scripts/vmtest --system for rel."""
        return os.path.join(self.root, "out", "vmtest",
                            os.path.basename(readlink_f(self.kdir(rel))) + self.suffix(rel))

    def system_dir(self, rel):
        """The installed system scripts/vmtest --system boots for rel (its
        copy of the root, the packages installed)."""
        return os.path.join(self.work_dir(rel), "initramfs")

    def prepare(self, job):
        """The background job of step 1: each release's build directory,
        then the system its packages are installed into."""
        for rel in self.releases:
            t0 = now()
            with open(self.log(rel, "kdir"), "wb") as out, open(self.log(rel, "log"), "wb") as err:
                rc = job.run([self.steps.script("distro-kdir"), "--release", rel],
                             stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            with open(self.log(rel, "system"), "wb") as out, open(self.log(rel, "log"), "ab") as err:
                if job.run([self.steps.script("distro-system"), "--release", rel],
                           stdout=out, stderr=err, stdin=subprocess.DEVNULL) != 0:
                    rc = 1
            self.prepared[rel] = Prepared(rc, now() - t0)

    def deb_arch(self, rel):
        """The Debian architecture of rel (its last word)."""
        return rel.rsplit("-", 1)[-1]

    @property
    def debs_dir(self):
        """Where the package job writes the source package's binaries (every
        release's architecture's)."""
        return os.path.join(self.logs, "debs")

    def packages(self, job, after):
        """The background job beside the host checks: after the job after
        (the preparation: the build root), the source package's binaries
        for each release's architecture (scripts/package --release none;
        an architecture's are built again only when what they are made of
        changed), at the lowest priority, of the CPU and of the disk
        (SCHED_IDLE, ionice's idle class): it takes what the host checks
        leave idle. Without the debugging symbols' package and the
        source's lintian run (make deb has both), and without rtcore's
        tests (the host checks run them)."""
        after.wait()
        t0 = now()
        out = self.debs_dir
        shutil.rmtree(out, ignore_errors=True)
        arches = [a for da in dict.fromkeys(self.deb_arch(r) for r in self.releases) for a in ("--arch", da)]
        env = dict(os.environ, DEB_BUILD_OPTIONS="noautodbgsym nocheck")
        with open(os.path.join(self.logs, "package.log"), "wb") as log:
            rc = job.run(["chrt", "--idle", "0", "ionice", "-c", "3", self.steps.script("package"), *arches,
                          "--release", "none", "--no-source-lint", "--out", out],
                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        self.packaged = rc
        self.steps.timings.record("distro packages (background, idle priority)", now() - t0, quiet=True)

    def packages_ok(self, rel):
        """Whether rel's architecture's packages were built; says why not."""
        if self.packaged == 0:
            return True
        log = os.path.join(self.logs, "package.log")
        say(f"the source package's build for {self.deb_arch(rel)} failed (log: {log}):")
        tail([log])
        return False

    def preparation_results(self):
        """After the job: each release's time, and whether its guest can
        boot (a release whose preparation failed boots none: step 8
        reports it failed)."""
        for rel in self.releases:
            prep = self.prepared.get(rel, Prepared(1, 0))
            self.steps.timings.record(f"distro {rel}: prepare (background)", prep.secs)
            # (Its system's path printed, or it is not there.)
            rc = prep.rc if nonempty(self.log(rel, "system")) else 1
            self.ready[rel] = rc
            if rc != 0:
                say(f"the preparation of {rel} failed:")
                tail([self.log(rel, "log")])

    def host_checks(self, rel, in_guest, guest_failed):
        """What runs on the host for rel once its guest is done (in_guest:
        its guest ran; guest_failed: its count of failures)."""
        say(f"=== distribution kernel {rel}: on the host")
        darch = self.arch(rel) or "x86_64"
        system = self.system_dir(rel)
        # The packages leave nothing behind when apt removes them (in the
        # system the guest booted, chrooted on the host). (Only where this
        # run's guest installed them: a failed install is that guest's
        # failure, not one more; a guest that passed without them is one.)
        what = "apt remove of the packages leaves no module behind"
        if in_guest and os.path.isfile(os.path.join(system, "var/lib/dpkg/info/rtlat.list")):
            rc = self.steps.step(f"distro {rel}: apt remove",
                                 [self.steps.script("distro-system"), "--remove", system, rel])
            self.tally.judged(rc == 0, what, f"{rel}: apt remove")
        elif in_guest and guest_failed == 0:
            say(f"{system}: the guest passed, but rtlat is not installed there")
            self.tally.judged(False, what, f"{rel}: apt remove")
        hdr = self.headers(rel)
        if rel == self.config.first_distro:
            self.toolchain_refused(rel, hdr)
        self.dkms_build(rel, darch)

    def headers(self, rel):
        """The headers scripts/distro-kdir made of rel, "" if none."""
        found = sorted(glob.glob(os.path.join(glob.escape(self.cache), "distro", f"headers-{glob.escape(rel)}-*")))
        return found[0] if found else ""

    def toolchain_refused(self, rel, hdr):
        """A kernel built with a toolchain that cannot be had is refused,
        naming it (for the first release: the same check of the same file
        whatever the architecture). Without the headers the check fails:
        it does not vanish."""
        what, label = "mismatched toolchain refused with a message", f"{rel}: mismatch refused"
        if not hdr:
            say(f"toolchain refusal: no headers of {rel} (scripts/distro-kdir makes them)")
            self.tally.judged(False, what, label)
            return
        fd, bad = tempfile.mkstemp()
        with os.fdopen(fd, "w", errors="surrogateescape") as f:
            try:
                with open(os.path.join(hdr, ".config"), errors="surrogateescape") as conf:
                    for line in conf:
                        f.write(BAD_RUSTC + "\n" if line.startswith("CONFIG_RUSTC_VERSION_TEXT=") else line)
            except OSError as e:
                say(f"{hdr}/.config: {e.strerror}")
        rc, out = self.steps.step_captured(f"distro {rel}: toolchain mismatch refused",
                                           [self.steps.script("distro-kdir"), "--release", rel,
                                            "--check-config", bad])
        os.remove(bad)
        say("\n".join("# " + line for line in out.split("\n")))
        refused = rc != 0 and re.search(r"rustc: the kernel was built with 'rustc 1.84.0", out) is not None
        self.tally.judged(refused, what, label)

    def dkms_build(self, rel, darch):
        """rtrs-dkms as an administrator meets it (scripts/dkms-check), on
        the machine's own architecture, as dkms is used; each of its
        checks counted. Without the packages the check fails: it does not
        vanish."""
        label = f"{rel}: dkms"
        if darch != self.lib.host_arch():
            # (The one expected skip of the host's checks, counted with its reason.)
            say(f"ok - dkms build for {rel} # SKIP dkms builds on the machine it installs for, "
                f"{darch} is not this one's")
            self.tally.add(0, 0, 1, label)
            return
        if self.packaged != 0:
            self.tally.judged(False, f"dkms: the packages of {rel} were built", label)
            return
        rc, out = self.steps.step_captured(f"distro {rel}: dkms check",
                                           [self.steps.script("dkms-check"), "--release", rel,
                                            "--debs", self.debs_dir])
        say(out)
        judged = [line for line in out.split("\n") if re.match(r"(not )?ok - ", line)]
        for line in judged:
            ok = line.startswith("ok - ")
            self.tally.add(1 if ok else 0, 0 if ok else 1, 0, label)
        if rc != 0 and all(line.startswith("ok - ") for line in judged):
            self.tally.judged(False, f"dkms check of {rel} ended with status {rc}", label)
