# SPDX-License-Identifier: GPL-2.0
"""The counts of every check: the summary's lines, and the final line
"N passed, N failed, N skipped" over everything."""

from dataclasses import dataclass

from runner.console import say

LINE = "%-40s %3d passed, %d failed, %d skipped"


@dataclass(frozen=True)
class Count:
    label: str
    passed: int
    failed: int
    skipped: int

    def line(self):
        return LINE % (self.label, self.passed, self.failed, self.skipped)


class Tally:
    def __init__(self):
        self.counts = []

    def add(self, passed, failed, skipped, label):
        self.counts.append(Count(label, passed, failed, skipped))

    def judged(self, ok, description, label):
        """A check of the runner's own, counted under label: "ok -
        DESCRIPTION" or "not ok - DESCRIPTION"."""
        say(f"{'ok' if ok else 'not ok'} - {description}")
        self.add(1 if ok else 0, 0 if ok else 1, 0, label)

    @property
    def passed(self):
        return sum(c.passed for c in self.counts)

    @property
    def failed(self):
        return sum(c.failed for c in self.counts)

    @property
    def skipped(self):
        return sum(c.skipped for c in self.counts)

    def summary(self):
        """The "=== summary" section's lines (one empty line for none, as
        printf '%s\\n' of nothing prints)."""
        return [c.line() for c in self.counts] or [""]

    def total_line(self):
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"
