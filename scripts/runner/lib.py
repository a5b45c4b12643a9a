# SPDX-License-Identifier: GPL-2.0
"""The values and functions of scripts/lib.sh, read by running bash: they
stay defined there, once (RTRS_ROOT, RTRS_CACHE, RTRS_TREES, RTRS_ARCHES,
the matrices, distro_releases, arch_info, vm_cpus_suffix, host_arch,
host_rtlat, toolchain_env)."""

import functools
import os
import subprocess
from dataclasses import dataclass

LIB_SH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib.sh")


def bash(script, *args, capture=True):
    """Run script in bash with lib.sh sourced, args as "$@"; its status
    and (capture) its stdout, trailing newlines stripped as a command
    substitution strips them. Its stderr is the runner's."""
    r = subprocess.run(["bash", "-c", '. "$0" && ' + script, LIB_SH, *args],
                       stdout=subprocess.PIPE if capture else None)
    out = r.stdout.decode(errors="surrogateescape").rstrip("\n") if capture else ""
    return r.returncode, out


@dataclass(frozen=True)
class Lib:
    root: str
    cache: str
    trees: str           # RTRS_TREES, the default tree first
    arches: str          # RTRS_ARCHES
    default_matrix: str  # RTRS_DEFAULT_MATRIX
    long_matrix: str     # RTRS_LONG_MATRIX (the environment's, or lib.sh's default)
    distros: str         # distro_releases (RTRS_DISTRO, or lib.sh's default)

    @classmethod
    def load(cls):
        rc, out = bash('rels=$(distro_releases) || exit 1; '
                       'printf "%s\\0" "$RTRS_ROOT" "$RTRS_CACHE" "$RTRS_TREES" "$RTRS_ARCHES" '
                       '"$RTRS_DEFAULT_MATRIX" "$RTRS_LONG_MATRIX" "$rels"')
        vals = out.split("\0")
        if rc != 0 and not out:
            # (distro_releases said why on stderr.)
            raise SystemExit(1)
        if rc != 0 or len(vals) < 7:
            raise SystemExit(f"rtrs: error: could not read {LIB_SH}")
        return cls(*vals[:7])

    @property
    def deftree(self):
        """${RTRS_TREES%% *}: the default tree."""
        return self.trees.partition(" ")[0]

    @functools.lru_cache(maxsize=None)
    def arch_info(self, name, field="arch"):
        """arch_info NAME FIELD: the field, None for a name the table lacks."""
        rc, out = bash('arch_info "$@"', name, field)
        return out if rc == 0 else None

    @functools.lru_cache(maxsize=None)
    def arch_of(self, name):
        """arch_of NAME: our name of the architecture; None (lib.sh has
        said why, on stderr) for an unknown one."""
        rc, out = bash('arch_of "$1"', name)
        return out if rc == 0 else None

    @functools.lru_cache(maxsize=None)
    def cpus_suffix(self, cpus):
        """vm_cpus_suffix ONLINE[/POSSIBLE]: scripts/vmtest's work directory suffix."""
        return bash('vm_cpus_suffix "$1"', cpus)[1]

    @functools.lru_cache(maxsize=None)
    def host_arch(self):
        """host_arch: the machine's own architecture ("" if the table lacks it)."""
        rc, out = bash("host_arch")
        return out if rc == 0 else ""

    def host_rtlat(self):
        """host_rtlat: the host's rtlat tool, built if needed; (status, path)."""
        return bash("host_rtlat")


TOOLCHAIN_VARS = ("PATH", "LIBCLANG_PATH", "LLVM", "RUST_LIB_SRC", "CARGO_TARGET_DIR")


def toolchain_env():
    """toolchain_env (no KDIR): the variables it exports, as a dict."""
    rc, out = bash('toolchain_env && printf "%s\\0" ' + " ".join(f'"${v}"' for v in TOOLCHAIN_VARS))
    vals = out.split("\0")
    if rc != 0 or len(vals) < len(TOOLCHAIN_VARS):
        raise SystemExit(f"rtrs: error: could not read toolchain_env from {LIB_SH}")
    return dict(zip(TOOLCHAIN_VARS, vals))


def arch_fields(name, *fields):
    """arch_info NAME FIELD...: the fields, the last one the rest of the
    line (read -r's split); None for a name the table lacks."""
    rc, out = bash('arch_info "$@"', name, *fields)
    if rc != 0:
        return None
    words = out.split(None, len(fields) - 1)
    return words + [""] * (len(fields) - len(words))
