# SPDX-License-Identifier: GPL-2.0
"""Each step's wall time, as data: printed "--- LABEL: N s" (stderr) when
the step ends, kept in order of the steps' ends, written as the table
"=== timings" prints (out/run-tests/timings) and as JSON
(out/run-tests/timings.json), from which rst_table() makes the table
Documentation/testing.rst's "Timings" shows.

timings.json:
  {"run": "make check", "commit": "94c33cc", "started": "2026-12-07T06:40:00Z",
   "total": 1101 (null while the run goes on),
   "steps": [{"label": "host checks", "seconds": 37},
             {"label": "guest 7.3 x86_64", "seconds": 655, "cpu_seconds": 512}, ...]}
"""

import json
import os
import re
import threading
import time
from dataclasses import asdict, dataclass
from typing import Optional

from runner.console import err

LINE = "%-58s %5d s"


def now():
    """The clock the timings use: whole seconds (date +%s)."""
    return int(time.time())


def table_line(label, seconds):
    return LINE % (label, seconds)


@dataclass(frozen=True)
class Timing:
    label: str
    seconds: int
    cpu_seconds: Optional[int] = None  # a guest's: the CPU time its QEMU took

    @property
    def text_label(self):
        return self.label + (f" (CPU {self.cpu_seconds} s)" if self.cpu_seconds is not None else "")

    def line(self):
        return table_line(self.text_label, self.seconds)


class Timings:
    """The steps' timings of one run, recorded from any thread."""

    def __init__(self, logs, run, commit=""):
        self.text_path = os.path.join(logs, "timings")
        self.json_path = os.path.join(logs, "timings.json")
        self.run = run
        self.commit = commit
        self.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.steps = []
        self.total = None
        self.lock = threading.Lock()

    def record(self, label, seconds, cpu_seconds=None, stream=None, quiet=False):
        """A step's time: kept, and "--- LABEL: N s" on stderr (or stream,
        or nowhere: quiet)."""
        t = Timing(label, seconds, cpu_seconds)
        with self.lock:
            self.steps.append(t)
            with open(self.text_path, "a") as f:
                f.write(t.line() + "\n")
            self._write_json()
        if not quiet:
            err(f"--- {t.text_label}: {seconds} s", stream)

    def timed(self, label, t0, **kw):
        """Record the time from t0 (now()) to now."""
        self.record(label, now() - t0, **kw)

    def finish(self, total):
        """The run's total: the table's last line."""
        with self.lock:
            self.total = total
            self._write_json()
        return table_line(f"{self.run}, total", total)

    def table(self):
        with self.lock:
            return [t.line() for t in self.steps]

    def as_dict(self):
        steps = []
        for t in self.steps:
            d = asdict(t)
            if d["cpu_seconds"] is None:
                del d["cpu_seconds"]
            steps.append(d)
        return {"run": self.run, "commit": self.commit, "started": self.started,
                "total": self.total, "steps": steps}

    def _write_json(self):
        tmp = self.json_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.as_dict(), f, indent=1)
            f.write("\n")
        os.replace(tmp, self.json_path)


def rst_escape(text):
    """Text as RST prints it literally in a table cell."""
    text = re.sub(r"([\\*`|])", r"\\\1", text)
    return re.sub(r"_(?=[^A-Za-z0-9]|$)", r"\\_", text)


def rst_table(data):
    """The RST table of a run's timings.json (as loaded): a row a step,
    its wall time (and a guest's QEMU CPU time), then the total."""
    rows = []
    for s in data["steps"]:
        cpu = f" (CPU {s['cpu_seconds']} s)" if s.get("cpu_seconds") is not None else ""
        rows.append((rst_escape(s["label"]), f"{s['seconds']} s{cpu}"))
    if data.get("total") is not None:
        rows.append((f"``{data['run']}`` in all", f"{data['total']} s"))
    head = ("step", "wall time")
    w0 = max(len(r[0]) for r in rows + [head])
    w1 = max(len(r[1]) for r in rows + [head])
    rule = "=" * w0 + " " + "=" * w1
    lines = [rule, f"{head[0]:<{w0}} {head[1]}", rule]
    lines += [f"{a:<{w0}} {b}" for a, b in rows]
    return "\n".join(lines + [rule]) + "\n"
