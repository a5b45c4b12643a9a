# SPDX-License-Identifier: GPL-2.0
"""A step: a command run and timed ("--- LABEL: N s", the timings); a
step counted from the KTAP it prints; the kernels every later step needs,
each built (or reused: scripts/build-kernel caches them) once."""

import os
import re
import subprocess

from runner.console import bytes_of, raw, say, text_of
from runner.timings import now

TOTALS = re.compile(r"^# Totals: pass:([0-9]*) fail:([0-9]*) .* skip:([0-9]*) .*$", re.M)


def readlink_f(path):
    """readlink -f PATH: the path resolved, "" where it cannot be."""
    if not path:
        return ""
    real = os.path.realpath(path)
    return real if os.path.isdir(os.path.dirname(real)) else ""


def first_line(path):
    """sed -n 1p FILE: its first line, "" if it has none or is missing."""
    try:
        with open(path, errors="surrogateescape") as f:
            return f.readline().rstrip("\n")
    except OSError:
        return ""


def tail(paths, n=20):
    """tail -n N FILE...: the end of the files there are (headed, for more
    than one, as tail heads them). (Not `tail -N`: GNU tail refuses that
    form with two files, "option used in invalid context".)"""
    subprocess.run(["tail", "-n", str(n), *paths], stderr=subprocess.DEVNULL)


class Steps:
    def __init__(self, root, timings, tally, foreground):
        self.root = root
        self.timings = timings
        self.tally = tally
        self.fg = foreground

    def script(self, name):
        return os.path.join(self.root, "scripts", name)

    def step(self, label, cmd, **kw):
        """Run cmd, its output the runner's; print and record its wall
        time; its status."""
        t0 = now()
        rc = self.fg.run(cmd, **kw)
        self.timings.timed(label, t0)
        return rc

    def step_output(self, label, cmd):
        """step, cmd's stdout kept (as a command substitution keeps it):
        (status, stdout); its stderr and the time line on stderr."""
        t0 = now()
        rc, out = self.fg.output(cmd)
        self.timings.timed(label, t0)
        return rc, text_of(out).rstrip("\n")

    def step_captured(self, label, cmd):
        """step with stdout and stderr kept, the time line with them (as
        `out=$(step LABEL CMD 2>&1)`): (status, output)."""
        t0 = now()
        rc, out = self.fg.output(cmd, stderr=subprocess.STDOUT)
        secs = now() - t0
        self.timings.record(label, secs, quiet=True)
        out += bytes_of(f"--- {label}: {secs} s\n")
        return rc, text_of(out).rstrip("\n")

    def ktap_counted(self, label, cmd):
        """A step whose cmd prints KTAP with the kernel's kselftest
        helpers, counted from their "# Totals:" line; no such line, or a
        failing exit with nothing failed, is one failure."""
        say(f"=== {label}")
        rc, out = self.step_captured(label, cmd)
        raw(bytes_of(out + "\n"))
        m = TOTALS.search(out)
        if m and m.group(1):
            p, f, s = (int(x or 0) for x in m.groups())
        else:
            p, f, s = 0, 1, 0
        if rc != 0 and f == 0:
            f = 1
        self.tally.add(p, f, s, label)


class Kernels:
    """The debug kernels (and modules_prepare trees) by tree and arch,
    each built or reused once; "" for one that did not build (counted
    as a failure once)."""

    def __init__(self, steps):
        self.steps = steps
        self.kdirs = {}

    def get(self, tree, arch, prepare=False):
        key = (tree, arch, prepare)
        if key not in self.kdirs:
            say(f"=== kernel: Linux {tree}, {arch}, debug" + (", modules_prepare only" if prepare else ""))
            cmd = [self.steps.script("build-kernel"), "--arch", arch, "--tree", tree]
            rc, out = self.steps.step_output(
                f"kernel {tree} {arch} debug" + (" (modules_prepare)" if prepare else "") + ": build",
                cmd + (["--prepare-only"] if prepare else []))
            if rc != 0:
                kdir = ""
                self.steps.tally.add(0, 1, 0, f"kernel {tree} {arch}" + (" (prepare)" if prepare else "")
                                     + " did not build")
            else:
                kdir = readlink_f(out)
            self.kdirs[key] = kdir
        return self.kdirs[key]
