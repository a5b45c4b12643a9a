# SPDX-License-Identifier: GPL-2.0
"""scripts/run-tests [--rst-table FILE.json]: the whole test suite
(scripts/runner/__init__.py); with --rst-table, no run: the RST table of
the step timings a run wrote (out/run-tests/timings.json), for
Documentation/testing.rst."""

import os
import sys

if __package__ in (None, ""):
    # Run as a directory (python3 scripts/runner): import it as a package.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from runner.run import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
