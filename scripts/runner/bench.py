# SPDX-License-Identifier: GPL-2.0
"""Step 6, the benchmark smoke run: seconds per measurement, rounds,
period (µs), in the boot of the first distribution kernel of its arch
(bench_rel), or without one in the suite's boot of that arch and the
matrix's first tree (scripts/vmtest --then-bench); then scripts/bench
makes the report from that boot's results.log, which must be complete and
well-formed (no bound on numbers)."""

import os
import re
import shutil

from runner.config import has_word
from runner.console import err, say

BENCH_SMOKE = "1,1,1000"


def bench_releases(releases, bench_arches, arch_of_release):
    """The release whose guest runs an arch's benchmark smoke run: the
    first of that arch in RTRS_DISTRO, for the arches of RTRS_BENCH_SMOKE."""
    bench_rel = {}
    for rel in releases:
        a = arch_of_release(rel)
        if a is not None and has_word(a, bench_arches) and a not in bench_rel:
            bench_rel[a] = rel
    return bench_rel


def bench_complete(d, lib, fg):
    """bench.json complete by the tool's own check-json (every agreement
    row with samples, every overhead tool with its rate and cost, records
    streamed), bench.svg an <svg> element, bench.md its tables."""
    rc, rtlat = lib.host_rtlat()
    if rc != 0:
        return False
    if fg.run([rtlat, "check-json", os.path.join(d, "bench.json")]) != 0:
        return False
    try:
        with open(os.path.join(d, "bench.svg"), "rb") as f:
            svg = re.sub(rb"\s", b"", f.read())
    except OSError as e:
        err(f"{d}/bench.svg: {e.strerror}")
        svg = b""
    if not (svg.startswith(b"<svg") and svg.endswith(b"</svg>") and len(svg) >= len(b"<svg</svg>")):
        say(f"{d}/bench.svg: not an <svg> element")
        return False
    try:
        with open(os.path.join(d, "bench.md"), errors="surrogateescape") as f:
            md = f.read()
    except OSError:
        md = ""
    if "| idle | thread | rtlat |" not in md or "records/s" not in md:
        say(f"{d}/bench.md: the agreement or streaming table is missing")
        return False
    return True


def smoke_runs(run):
    """Step 6, from the results of the boot that ran it (Debian's guest
    was waited for in step 8)."""
    for arch in run.config.bench_arches.split():
        say(f"=== benchmark smoke run, {arch}")
        what, label = f"benchmark smoke run ({arch}): output complete and well-formed", f"bench smoke {arch}"
        bout = os.path.join(run.root, "out", "bench-smoke", arch)
        shutil.rmtree(bout, ignore_errors=True)
        if arch in run.bench_rel and arch not in run.benched:
            say(f"{arch}: {run.bench_rel[arch]}'s guest did not run (its preparation failed): no benchmark")
            run.tally.judged(False, what, label)
            continue
        kdir = run.kernels.get(run.lib.deftree, arch)
        kdir = run.bench_kdir.get(arch) or kdir
        bs, br, bp = (BENCH_SMOKE.split(",") + ["", ""])[:3]
        ok = False
        if kdir:
            # (Where a suite's boot ran it, only the report is left to make.)
            log = run.benched.get(arch)
            ok = run.steps.step(f"bench smoke {arch}" + (": report" if log else ""),
                                [run.steps.script("bench"), "--arch", arch, "--kdir", kdir,
                                 "--seconds", bs, "--rounds", br, "--period", bp, "--out", bout]
                                + (["--log", log] if log else [])) == 0
            ok = ok and bench_complete(bout, run.lib, run.steps.fg)
        run.tally.judged(ok, what, label)
