# SPDX-License-Identifier: GPL-2.0
"""Step 7, the negative checks: the detectors must fail a run that
splats. After the suite, each guest of the first tree loaded broken
modules (scripts/vmtest --then-inject); the splat scan that judges the
suite must have found each report they provoke, by its message. And make
check-long's own check: each program tests/expected runs where the fact
"long" holds ran in a cell of RTRS_LONG_MATRIX (one without it would
pass, having run nothing of the kind)."""

import os
import re

from runner.config import has_word
from runner.console import say

MESSAGES = {"splat": "Invalid wait context", "kasan": "KASAN: slab-use-after-free"}


def negative_checks(run):
    arches = sorted(set(run.config.splat_arches.split() + run.config.kasan_arches.split()))
    taint = ""  # (as the shell's variable: kept from the arch before when unread)
    for arch in arches:
        want = run.config.injection(arch)
        say(f"=== negative check ({want}), {arch}")
        if arch not in run.injected:
            say(f"# {arch}: no suite guest of Linux {run.lib.deftree} to inject into (RTRS_MATRIX)")
            run.tally.judged(False, f"{arch}: injected {want} fail the run", f"negative {want} {arch}")
            continue
        inj, work = run.injected[arch]
        missed = False
        # inject-summary: injection, splat lines, taint, the scan's verdict.
        try:
            with open(os.path.join(work, "inject-summary")) as f:
                line = f.readline()
        except OSError:
            line = None
        if line:
            _, nsplat, taint, verdict = (line.split(None, 3) + ["", "", "", ""])[:4]
            verdict = verdict.strip()
        if line is None or not line.endswith("\n"):
            # (No line read whole: read's failure.)
            nsplat, verdict = "0", "missing"
        say(f"{arch}: after the injection: {nsplat} splat line(s), taint {taint or '?'}, "
            f"the splat scan {verdict or '?'} the run")
        if verdict != "fails":
            missed = True
        msgs = [MESSAGES[k] for k in ("splat", "kasan") if has_word(k, inj)]
        try:
            with open(os.path.join(work, "splats-inject.txt"), errors="surrogateescape") as f:
                splats = f.read().split("\n")
        except OSError:
            splats = []
        for msg in msgs:
            for line in [s for s in splats if re.search(msg, s)][:3]:
                say(line)
            if not any(re.search(r"^[a-z-]+\.log:[0-9]+: .*" + msg, s) for s in splats):
                missed = True
                say(f"not found in the splats: '{msg}'")
        say(f"# {arch}: looked for: {' '.join(msgs)}")
        run.tally.judged(not missed, f"{arch}: injected {inj} fail the run", f"negative {inj} {arch}")


def long_programs(expected):
    """The programs tests/expected runs where the fact "long" holds: a
    [NAME] [only: COND...] line with a condition that has "long" among
    its +-joined facts."""
    progs = []
    for line in expected.split("\n"):
        m = re.match(r"^\[([^]]*)\] \[only: ([^]]*)\]", line)
        if not m:
            continue
        fields = (m.group(1) + " " + m.group(2)).split()
        if fields and any("+long+" in f"+{c}+" for c in fields[1:]):
            progs.append(fields[0])
    return progs


def long_checks(run):
    with open(os.path.join(run.root, "tests", "expected"), errors="surrogateescape") as f:
        progs = long_programs(f.read())
    for prog in progs:
        ran = False
        for cell in run.cells:
            g = run.cell_guest.get(cell.text)
            if g is None:
                continue
            try:
                with open(os.path.join(g.work, "expected.txt"), errors="surrogateescape") as f:
                    if prog in f.read().split("\n"):
                        ran = True
            except OSError:
                pass
        if not ran:
            say(f'# {prog}: tests/expected runs it where "long" holds, and no cell of RTRS_LONG_MATRIX ran it')
        run.tally.judged(ran, f"make check-long ran {prog}", f"long: {prog}")
