# SPDX-License-Identifier: GPL-2.0
"""What the runner prints: its own lines, and output it passes on as it
came (a guest's log, a step's captured output), in order with what the
processes it starts print to the same stdout and stderr."""

import sys


def say(text=""):
    """A line on stdout."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def raw(data):
    """Bytes on stdout, as they came."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def err(text, stream=None):
    """A line on stderr (or stream, a binary file)."""
    if stream is None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    else:
        stream.write((text + "\n").encode())
        stream.flush()


def text_of(data):
    """Bytes a process printed, as text (undecodable bytes kept)."""
    return data.decode(errors="surrogateescape")


def bytes_of(text):
    return text.encode(errors="surrogateescape")


def flush():
    sys.stdout.flush()
    sys.stderr.flush()
