# SPDX-License-Identifier: GPL-2.0
"""What the runner reads from the environment, as scripts/run-tests's
comment gives it: RTRS_MATRIX, RTRS_DISTRO, RTRS_SPLAT, RTRS_KASAN,
RTRS_BENCH_SMOKE, RTRS_GUEST_JOBS, RTRS_LONG and RTRS_LONG_MATRIX (the
last, RTRS_CACHE and RTRS_TREES through scripts/lib.sh)."""

import re
from dataclasses import dataclass


def has_word(word, text):
    """grep -qw WORD <<<TEXT: WORD in TEXT between non-word characters."""
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])", text) is not None


@dataclass(frozen=True)
class Config:
    long: bool           # RTRS_LONG=1: make check-long
    matrix_var: str      # the variable the matrix comes from, for its errors
    matrix: str          # the cells, as written
    distros: str         # distribution kernel releases
    splat_arches: str    # arches of the sleeping-lock negative check
    kasan_arches: str    # arches of the use-after-free negative check
    bench_arches: str    # arches of the benchmark smoke run
    guest_jobs: str      # RTRS_GUEST_JOBS as given (checked by the runner)

    @classmethod
    def from_env(cls, env, lib):
        if env.get("RTRS_LONG", "0") == "1":
            return cls(True, "RTRS_LONG_MATRIX", lib.long_matrix, env.get("RTRS_DISTRO", ""),
                       env.get("RTRS_SPLAT", ""), env.get("RTRS_KASAN", ""),
                       env.get("RTRS_BENCH_SMOKE", ""), env.get("RTRS_GUEST_JOBS") or "2")
        return cls(False, "RTRS_MATRIX", env.get("RTRS_MATRIX") or lib.default_matrix, lib.distros,
                   env.get("RTRS_SPLAT", lib.arches), env.get("RTRS_KASAN", lib.arches),
                   env.get("RTRS_BENCH_SMOKE", "x86_64"), env.get("RTRS_GUEST_JOBS") or "2")

    @property
    def first_distro(self):
        """${distros%% *}: the release the toolchain refusal is checked for."""
        return self.distros.partition(" ")[0]

    def injection(self, arch):
        """The negative checks of ARCH's suite boot (--then-inject): splat,
        kasan, splat+kasan or ""."""
        inj = ["splat"] if has_word(arch, self.splat_arches) else []
        inj += ["kasan"] if has_word(arch, self.kasan_arches) else []
        return "+".join(inj)
