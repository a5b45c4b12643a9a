# SPDX-License-Identifier: GPL-2.0
"""The real peers in a guest's root (scripts/vmtest; tests/rtlat_peers.sh,
the benchmark, rtlat_noise.sh's comparison with rtla): cyclictest,
hackbench and rtla in /usr/bin, the libraries they load in
/usr/lib/<triplet> (where the loader looks by default) and the loader
where they name it; from the set scripts/setup keeps (one glibc for all).
An installed system keeps its own files (the libraries and the loader's
link dpkg owns, of the same Debian release): only what it lacks is added."""

import os
import re
import shutil
import subprocess
import sys

PROGRAMS = ("cyclictest", "hackbench", "rtla")
NEEDED = re.compile(r".*\(NEEDED\).*\[(.*)\]")
INTERP = re.compile(r".*interpreter: (.*)\]$")


class PeersError(Exception):
    """What scripts/vmtest dies of; str() is the message."""


def cp(src, dst, no_clobber=False):
    """cp [-n] SRC DST, SRC's symbolic link followed (as cp without -R
    does, and -L): DST a directory takes SRC's name; a new file gets SRC's
    mode, an existing one keeps its own. False, cp's complaint on stderr,
    if it failed."""
    if os.path.isdir(dst):
        dst = os.path.join(dst, os.path.basename(src))
    if no_clobber and os.path.lexists(dst):
        return True
    try:
        existed = os.path.exists(dst)
        shutil.copyfile(src, dst)
        if not existed:
            shutil.copymode(src, dst)
    except OSError as e:
        if not os.path.exists(src):
            print(f"cp: cannot stat '{src}': {e.strerror}", file=sys.stderr, flush=True)
        else:
            print(f"cp: cannot create regular file '{dst}': {e.strerror}", file=sys.stderr, flush=True)
        return False
    return True


def needed(path):
    """The libraries the ELF file path names as NEEDED (readelf -d)."""
    out = subprocess.run(["readelf", "-d", path], stdout=subprocess.PIPE).stdout.decode(errors="surrogateescape")
    libs = []
    for line in out.split("\n"):
        m = NEEDED.match(line)
        if m:
            libs += (m.group(1) + line[m.end():]).split()
    return libs


def interpreter(path):
    """The loader the ELF file path names (readelf -l), "" if none."""
    out = subprocess.run(["readelf", "-l", path], stdout=subprocess.PIPE).stdout.decode(errors="surrogateescape")
    return "\n".join(m.group(1) for m in map(INTERP.match, out.split("\n")) if m)


def versions(path):
    """The versions of rt-tests, rtla and libc6 in scripts/setup's
    versions.txt, as "rt-tests V, rtla V, libc6 V"."""
    try:
        with open(path, errors="surrogateescape") as f:
            rows = [line.split() for line in f]
    except OSError as e:
        print(f"awk: cannot open {path} ({e.strerror})", file=sys.stderr, flush=True)
        return ""
    return ", ".join(f"{r[0]} {r[1] if len(r) > 1 else ''}" for r in rows
                     if r and r[0] in ("rt-tests", "rtla", "libc6"))


def kib(paths):
    """du -skc PATHS: their disk usage in KiB, in all."""
    out = subprocess.run(["du", "-skc", *paths], stdout=subprocess.PIPE).stdout.decode().split("\n")
    last = [line for line in out if line][-1:] or [""]
    return (last[0].split() or [""])[0]


def install(cache, da, triplet, root, system, log):
    """Install the peers of Debian architecture da (GNU triplet triplet)
    from cache/peers-<da> into the guest's root; system: an installed
    system's root, whose own files are kept. log: the run's log function.
    (A failing copy or directory ends the run, as set -e ended the shell
    function this was; what the set lacks is a PeersError.)"""
    src = f"{cache}/peers-{da}"
    lib = f"{src}/root/usr/lib/{triplet}"
    dlib = f"{root}/usr/lib/{triplet}"
    if not (os.access(f"{src}/root/usr/bin/cyclictest", os.X_OK) and os.access(f"{src}/root/usr/bin/rtla", os.X_OK)
            and os.path.isfile(f"{lib}/libc.so.6")):
        raise PeersError(f"no cyclictest, rtla and C library for {da} in {src}: run scripts/setup")
    def must_cp(src, dst, no_clobber=False):
        if not cp(src, dst, no_clobber=no_clobber):
            raise PeersError(f"cannot copy {src} into the guest's root")
    try:
        os.makedirs(dlib, exist_ok=True)
    except OSError as e:
        raise PeersError(f"cannot create {dlib}: {e.strerror}") from e
    for p in PROGRAMS:
        must_cp(f"{src}/root/usr/bin/{p}", f"{root}/usr/bin/")
    # What they load, and what that loads in turn; and libgcc_s, which
    # glibc opens when a thread calls pthread_exit() (rtla -u does).
    if not cp(f"{lib}/libgcc_s.so.1", f"{dlib}/", no_clobber=system):
        raise PeersError(f"no libgcc_s.so.1 in {src}: run scripts/setup")
    todo = [f"{root}/usr/bin/{p}" for p in PROGRAMS] + [f"{dlib}/libgcc_s.so.1"]
    seen = {"libgcc_s.so.1"}
    while todo:
        f = todo.pop(0)
        # (Each one an ELF file: a wrapper script would leave the list
        # of what it loads silently empty.)
        if subprocess.run(["readelf", "-h", f], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            raise PeersError(f"{f} is not an ELF file: the peers' set in {src} is not what scripts/setup fetches")
        for name in needed(f):
            if name in seen:
                continue
            seen.add(name)
            if not os.path.exists(f"{lib}/{name}"):
                raise PeersError(f"{name} (needed by {os.path.basename(f)}) is not in {src}")
            must_cp(f"{lib}/{name}", f"{dlib}/", no_clobber=system)
            todo.append(f"{dlib}/{name}")
    # The loader where the programs name it (/lib64 or /lib).
    interp = interpreter(f"{root}/usr/bin/cyclictest")
    name = os.path.basename(interp)
    if not os.path.exists(f"{dlib}/{name}"):
        must_cp(f"{lib}/{name}", f"{dlib}/")
    os.makedirs(f"{root}{os.path.dirname(interp)}", exist_ok=True)
    link = f"{root}{interp}"
    if not system or not os.path.exists(link):
        if os.path.islink(link) or os.path.lexists(link) and not os.path.isdir(link):
            os.remove(link)
        os.symlink(f"/usr/lib/{triplet}/{name}", link)
    log(f"peers: {versions(f'{src}/versions.txt')} "
        f"({kib([f'{root}/usr/bin/{p}' for p in PROGRAMS] + [dlib])} KiB)")
