# SPDX-License-Identifier: GPL-2.0
"""The rtrs test runner: the whole test suite as `make check` and `make
check-long` run it (scripts/run-tests, whose comment says what runs, in
which order; Documentation/testing.rst).

One concept a module:

  lib        the values scripts/lib.sh defines, read by running bash
  config     the environment the runner reads (RTRS_MATRIX, RTRS_LONG, ...)
  cells      a matrix cell, the matrix parsed and checked
  console    what the runner prints
  tally      the counts of every check, the summary
  timings    each step's wall time: the table, timings.json, an RST table
  procs      processes: the foreground one, background jobs, interrupts
  steps      a timed step, a KTAP-counted step, the kernels
  pool       the guests, RTRS_GUEST_JOBS at a time, and their queue order
  distro     the distribution kernels: preparation and step 8's host checks
  negative   step 7, the negative checks; make check-long's own check
  bench      step 6, the benchmark smoke run
  run        the steps in their order
  vmtest     scripts/vmtest: one guest, from its kernel and builds to its
             boot and scripts/vmtest-report (scripts/vmtest is a wrapper)
  peers      the real peers (cyclictest, hackbench, rtla) in a guest's root

The pure logic (matrix, queue order, tables, vmtest's options and
command lines) has unit tests:
cd scripts && python3 -m unittest runner.test_runner
"""
