# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the runner's pure logic: the matrix, the queue order,
the tables. cd scripts && python3 -m unittest runner.test_runner"""

import unittest

from runner.cells import BUILD, CHOSEN, SUITE, MatrixError, parse_cell, parse_matrix
from runner.config import has_word
from runner.negative import long_programs
from runner.pool import queue_order, report_order
from runner.steps import TOTALS
from runner.tally import Tally
from runner.timings import Timing, rst_table, table_line

ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "arm64": "arm64", "riscv64": "riscv64", "riscv": "riscv64"}


def suffix(cpus):
    """vm_cpus_suffix, as scripts/lib.sh has it (the runner asks bash)."""
    return "" if cpus in ("", "2", "2/2") else "-cpus" + cpus.replace("/", "of")


def matrix(text):
    return parse_matrix(text, "RTRS_MATRIX", ARCHES.get, suffix)


class Cells(unittest.TestCase):
    def test_forms(self):
        c = parse_cell("7.3:x86_64")
        self.assertEqual((c.tree, c.arch, c.kind, c.cpus, c.programs), ("7.3", "x86_64", SUITE, "", ()))
        self.assertEqual(parse_cell("7.2:x86_64:build").kind, BUILD)
        c = parse_cell("7.3:x86_64:cpus=8:rt_env,rtlat_test")
        self.assertEqual((c.kind, c.online, c.possible, c.programs), (CHOSEN, 8, None, ("rt_env", "rtlat_test")))
        c = parse_cell("7.3:arm64:cpus=2/260")
        self.assertEqual((c.kind, c.cpus, c.possible), (SUITE, "2/260", 260))
        self.assertEqual(parse_cell("7.3:riscv64:cpus=2:rtlat_tool.sh").programs, ("rtlat_tool.sh",))

    def test_refused(self):
        for bad in ["7.3", "7.3:", ":x86_64", "7.3:x86_64:", "7.3:x86_64:build:rt_env", "7.3:x86_64:cpus=0",
                    "7.3:x86_64:cpus=08", "7.3:x86_64:cpus=2/0", "7.3:x86_64:cpus=2:", "7.3:x86_64:cpus=2:Rt",
                    "7.3:x86_64:cpus=2:a,,b", "7.3:x86_64:cpus=2:a,b,a", "7.3:x86_64:cpus=2:a:b",
                    "7.3:x86_64:bogus", "7.3:x86_64::rt_env"]:
            with self.assertRaises(MatrixError, msg=bad) as e:
                parse_cell(bad, "RTRS_LONG_MATRIX")
            self.assertEqual(str(e.exception), f"RTRS_LONG_MATRIX: '{bad}' is neither tree:arch, tree:arch:build "
                             "nor tree:arch:cpus=N[/POSSIBLE][:PROGRAM,...] (each program once)")

    def test_one_guest(self):
        with self.assertRaises(MatrixError) as e:
            matrix("7.3:x86_64 7.3:amd64:cpus=2 7.3:x86_64:cpus=8 7.3:x86_64:cpus=8:rt_env")
        self.assertEqual(str(e.exception), "RTRS_MATRIX: cells that are one guest (tree, arch and CPUs): "
                         "7.3:x86_64 7.3:x86_64-cpus8 ")
        with self.assertRaises(MatrixError):
            matrix("7.2:x86_64:build 7.2:x86_64:build")
        self.assertEqual(len(matrix("7.2:x86_64:build 7.2:x86_64 7.3:x86_64:cpus=2/4")), 3)

    def test_unknown_arch(self):
        with self.assertRaises(MatrixError) as e:
            matrix("7.3:x86_64 7.3:sparc")
        self.assertIn("unknown architecture 'sparc'", str(e.exception))

    def test_labels(self):
        c = parse_cell("7.3:x86_64:cpus=8:rt_env,rtlat_test")
        self.assertEqual(c.guest_label(), "guest 7.3 x86_64 (CPUs 8: rt_env rtlat_test)")
        self.assertEqual(c.result_label(), "7.3 x86_64 CPUs 8")
        self.assertEqual(c.vmtest_args(), ["--cpus", "8", "--programs", "rt_env rtlat_test"])
        c = parse_cell("7.3:arm64")
        self.assertEqual((c.guest_label(), c.result_label(), c.vmtest_args()), ("guest 7.3 arm64", "7.3 arm64", []))
        self.assertEqual(parse_cell("7.3:arm64:cpus=2/260").guest_label(), "guest 7.3 arm64 (CPUs 2/260)")


class Queue(unittest.TestCase):
    def test_default(self):
        cells = matrix("7.3:x86_64 7.3:arm64 7.3:riscv64 7.3:x86_64:cpus=8:rt_env,rtlat_test 7.2:x86_64:build")
        rels = ["7.3.4+deb13-rt-amd64", "7.3.4+deb13-rt-arm64"]
        order = queue_order(cells, rels, lambda r: r.endswith("amd64"))
        names = [q.cell.text if q.cell else q.release for q in order]
        self.assertEqual(names, ["7.3:x86_64", "7.3:arm64", "7.3:riscv64", "7.3.4+deb13-rt-amd64",
                                 "7.3.4+deb13-rt-arm64", "7.3:x86_64:cpus=8:rt_env,rtlat_test"])
        # The benchmark's guest first, whatever RTRS_DISTRO's order; the
        # results in RTRS_DISTRO's.
        order = queue_order(cells, rels[::-1], lambda r: r.endswith("amd64"))
        self.assertEqual([q.release for q in order if q.release], rels)
        self.assertEqual([q.release for q in report_order(cells, rels[::-1]) if q.release], rels[::-1])
        # Chosen cells last, suite cells (cpus=N without programs too) in matrix order.
        cells = matrix("7.3:x86_64:cpus=2:rt_env 7.3:arm64:cpus=2/260 7.3:riscv64")
        self.assertEqual([q.cell.text for q in queue_order(cells, [], lambda r: False)],
                         ["7.3:arm64:cpus=2/260", "7.3:riscv64", "7.3:x86_64:cpus=2:rt_env"])


class Tables(unittest.TestCase):
    def test_timing_lines(self):
        self.assertEqual(table_line("host checks", 37), "host checks" + " " * 47 + "    37 s")
        self.assertEqual(Timing("guest 7.3 x86_64", 655, 512).line(),
                         "%-58s %5d s" % ("guest 7.3 x86_64 (CPU 512 s)", 655))
        long = "x" * 70
        self.assertEqual(table_line(long, 123456), long + " 123456 s")

    def test_summary(self):
        t = Tally()
        t.add(78, 0, 2, "host checks")
        t.add(0, 1, 0, "7.2 x86_64 build check")
        self.assertEqual(t.summary(), ["host checks                               78 passed, 0 failed, 2 skipped",
                                       "7.2 x86_64 build check                     0 passed, 1 failed, 0 skipped"])
        self.assertEqual(t.total_line(), "78 passed, 1 failed, 2 skipped")
        self.assertEqual(Tally().summary(), [""])

    def test_rst(self):
        data = {"run": "make check", "total": 1101,
                "steps": [{"label": "host checks", "seconds": 37},
                          {"label": "guest 7.3 x86_64 (+ benchmark smoke run)", "seconds": 655, "cpu_seconds": 512},
                          {"label": "a*b rt_", "seconds": 1}]}
        self.assertEqual(rst_table(data).split("\n"), [
            "======================================== =================",
            "step                                     wall time",
            "======================================== =================",
            "host checks                              37 s",
            "guest 7.3 x86_64 (+ benchmark smoke run) 655 s (CPU 512 s)",
            "a\\*b rt\\_                                1 s",
            "``make check`` in all                    1101 s",
            "======================================== =================",
            ""])
        try:
            import docutils.core
        except ImportError:
            return
        html = docutils.core.publish_string(rst_table(data), writer_name="html",
                                            settings_overrides={"report_level": 2, "halt_level": 2})
        self.assertIn(b"a*b rt_", html)


class Parsing(unittest.TestCase):
    def test_totals(self):
        m = TOTALS.search("ok 1 x\n# Totals: pass:5 fail:1 xfail:0 xpass:0 skip:2 error:0\n")
        self.assertEqual(m.groups(), ("5", "1", "2"))
        self.assertIsNone(TOTALS.search("# Totals: pass:5\n"))

    def test_long_programs(self):
        expected = ("[rt_env]\n[rtlat_tool.sh] [only: mainline+x86_64 long+riscv64 wide]\n"
                    "[rtlat_peers.sh] [only: distro+x86_64]\n[x] [only: longer]\n[y] [only: long]\n")
        self.assertEqual(long_programs(expected), ["rtlat_tool.sh", "y"])

    def test_has_word(self):
        self.assertTrue(has_word("kasan", "splat+kasan"))
        self.assertTrue(has_word("x86_64", "x86_64 arm64"))
        self.assertFalse(has_word("arm", "arm64 riscv64"))
        self.assertFalse(has_word("x86_64", ""))


if __name__ == "__main__":
    unittest.main()
