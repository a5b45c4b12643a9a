# SPDX-License-Identifier: GPL-2.0
"""A cell of the test matrix (RTRS_MATRIX, RTRS_LONG_MATRIX), and the
matrix parsed and checked.

  tree:arch                              a guest of the whole suite
  tree:arch:build                        a build check (modules_prepare tree)
  tree:arch:cpus=N[/POSSIBLE][:PROG,...] a guest of N CPUs online, POSSIBLE
                                         possible; with programs, only those
"""

import re
from dataclasses import dataclass, field
from typing import Optional

BUILD, CHOSEN, SUITE = "build", "chosen", "suite"

CPUS = re.compile(r"^cpus=([1-9][0-9]*)(?:/([1-9][0-9]*))?$")
PROGRAMS = re.compile(r"^[a-z_.]+(,[a-z_.]+)*$")
FORMS = "tree:arch, tree:arch:build nor tree:arch:cpus=N[/POSSIBLE][:PROGRAM,...] (each program once)"


class MatrixError(Exception):
    """A matrix the runner refuses; str() is the message (after "rtrs: error: ")."""


@dataclass(frozen=True)
class Cell:
    text: str                       # as written: the cell's name in the run
    tree: str
    arch: str                       # as written (the kernel's, Debian's or ours)
    kind: str                       # BUILD, CHOSEN or SUITE
    online: Optional[int] = None    # CPUs online (cpus=N), None: vmtest's default
    possible: Optional[int] = None  # CPUs possible (cpus=N/POSSIBLE)
    programs: tuple = field(default_factory=tuple)

    @property
    def cpus(self):
        """ONLINE[/POSSIBLE] as written, "" without cpus=."""
        if self.online is None:
            return ""
        return f"{self.online}/{self.possible}" if self.possible is not None else str(self.online)

    def guest_label(self):
        """The guest's label: its header, its timing."""
        label = f"guest {self.tree} {self.arch}"
        if self.cpus:
            progs = ": " + " ".join(self.programs) if self.programs else ""
            label += f" (CPUs {self.cpus}{progs})"
        return label

    def result_label(self):
        """The cell's name in the results: "tree arch[ CPUs N]"."""
        return f"{self.tree} {self.arch}" + (f" CPUs {self.cpus}" if self.cpus else "")

    def vmtest_args(self):
        """scripts/vmtest's --cpus and --programs for the cell."""
        args = ["--cpus", self.cpus] if self.cpus else []
        return args + (["--programs", " ".join(self.programs)] if self.programs else [])


def parse_cell(text, var="RTRS_MATRIX"):
    """One cell; MatrixError if it is in none of the forms."""
    parts = text.split(":", 4) + [""] * 4
    tree, arch, mode, progs, extra = parts[:5]
    bad = MatrixError(f"{var}: '{text}' is neither {FORMS}")
    if not tree or not arch or extra or text.endswith(":"):
        raise bad
    if not mode and not progs:
        return Cell(text, tree, arch, SUITE)
    if mode == "build" and not progs:
        return Cell(text, tree, arch, BUILD)
    m = CPUS.match(mode)
    if not m or (progs and not PROGRAMS.match(progs)):
        raise bad
    programs = tuple(progs.split(",")) if progs else ()
    if len(set(programs)) != len(programs):
        raise bad
    return Cell(text, tree, arch, CHOSEN if programs else SUITE, int(m.group(1)),
                int(m.group(2)) if m.group(2) else None, programs)


def guest_key(cell, arch_of, cpus_suffix):
    """What makes two cells one: a build check is its text; a guest is
    its work directory (tree, our name of the arch, CPUs)."""
    if cell.kind == BUILD:
        return cell.text
    return f"{cell.tree}:{arch_of(cell.arch)}{cpus_suffix(cell.cpus)}"


def parse_matrix(text, var, arch_of, cpus_suffix):
    """The cells of a matrix, in its order; MatrixError for a cell in no
    form, an unknown architecture (arch_of returns None), or two cells
    that are one guest (two guests in one work directory)."""
    cells = [parse_cell(word, var) for word in text.split()]
    keys = []
    for cell in cells:
        if arch_of(cell.arch) is None:
            raise MatrixError(f"{var}: '{cell.text}': unknown architecture '{cell.arch}'")
        keys.append(guest_key(cell, arch_of, cpus_suffix))
    dups = sorted({k for k in keys if keys.count(k) > 1})
    if dups:
        raise MatrixError(f"{var}: cells that are one guest (tree, arch and CPUs): "
                          + "".join(d + " " for d in dups))
    return cells
