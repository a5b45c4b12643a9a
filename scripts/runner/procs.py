# SPDX-License-Identifier: GPL-2.0
"""The processes the runner starts: one in the foreground at a time,
background jobs (the distribution kernels' preparation, the build checks:
a thread each, running one process after another), and what an interrupt
does: SIGINT or SIGTERM stops every guest's process group (each guest
leads its own), the background jobs' process trees and the foreground
process's, then the runner exits 130 or 143."""

import os
import signal
import subprocess
import threading

from runner import console


def children(pid):
    """The processes whose parent is pid (pgrep -P)."""
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # (The command's name, in parentheses, may hold blanks.)
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(pid):
            kids.append(int(entry))
    return kids


def kill_tree(pid):
    """Stop pid and its descendants: the parent stopped first, so that it
    starts nothing more while its children are named; then it goes, then
    they do."""
    def send(sig):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    send(signal.SIGSTOP)
    kids = children(pid)
    send(signal.SIGTERM)
    send(signal.SIGCONT)
    for kid in kids:
        kill_tree(kid)


def popen(cmd, **kw):
    """subprocess.Popen, with a command that cannot start reported as
    the shell reports it (None)."""
    console.flush()
    try:
        return subprocess.Popen(cmd, **kw)
    except OSError as e:
        console.err(f"{cmd[0]}: {e.strerror}")
        return None


class Foreground:
    """The one process the main thread waits for, stopped on an interrupt."""

    def __init__(self):
        self.proc = None

    def run(self, cmd, **kw):
        """Run cmd to its end; its exit status (127 if it did not start;
        128+N if signal N ended it, as the shell gives it)."""
        proc = popen(cmd, **kw)
        if proc is None:
            return 127
        self.proc = proc
        try:
            return status(proc.wait())
        finally:
            self.proc = None

    def output(self, cmd, stderr=None, **kw):
        """Run cmd; (status, its stdout as bytes)."""
        proc = popen(cmd, stdout=subprocess.PIPE, stderr=stderr, **kw)
        if proc is None:
            return 127, b""
        self.proc = proc
        try:
            out = proc.stdout.read()
            return status(proc.wait()), out
        finally:
            proc.stdout.close()
            self.proc = None

    def stop(self):
        proc = self.proc
        if proc is not None:
            kill_tree(proc.pid)


def status(rc):
    """A Popen return code as the shell's $?."""
    return 128 - rc if rc < 0 else rc


class JobStopped(Exception):
    pass


class BackgroundJob:
    """A function run in a thread beside the main one; its processes
    started through run(), so that stop() can end the one running and
    start no other."""

    def __init__(self, name, fn):
        self.name = name
        self.lock = threading.Lock()
        self.proc = None
        self.stopped = False
        self.thread = threading.Thread(target=self._main, args=(fn,), name=name, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _main(self, fn):
        try:
            fn(self)
        except JobStopped:
            pass

    def run(self, cmd, **kw):
        """Run cmd in the job: its exit status."""
        with self.lock:
            if self.stopped:
                raise JobStopped()
            proc = popen(cmd, **kw)
            if proc is None:
                return 127
            self.proc = proc
        rc = proc.wait()
        with self.lock:
            self.proc = None
        return status(rc)

    def wait(self):
        self.thread.join()

    def stop(self):
        with self.lock:
            self.stopped = True
            if self.proc is not None:
                kill_tree(self.proc.pid)


class Interrupts:
    """SIGINT and SIGTERM: stop the guests, the background jobs and the
    foreground process, then exit 130 or 143."""

    def __init__(self, foreground):
        self.foreground = foreground
        self.pool = None
        self.jobs = []

    def install(self):
        # (A signal ignored when the runner started stays ignored, as a
        # shell's trap leaves it: `make check &` in a script.)
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            if signal.getsignal(sig) != signal.SIG_IGN:
                signal.signal(sig, lambda *_, code=code: self.stop_all(code))

    def stop_all(self, code):
        if self.pool is not None:
            self.pool.stop()
        for job in self.jobs:
            job.stop()
        self.foreground.stop()
        console.flush()
        os._exit(code)
