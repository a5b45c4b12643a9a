# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the runner's pure logic: the matrix, the queue order,
the tables, scripts/vmtest's options and command lines.
cd scripts && python3 -m unittest runner.test_runner"""

import os
import re
import unittest

from runner.cells import BUILD, CHOSEN, SUITE, MatrixError, parse_cell, parse_matrix
from runner.config import has_word
from runner.negative import long_programs
from runner.pool import queue_order, report_order
from runner.steps import TOTALS
from runner.tally import Tally
from runner.timings import Timing, rst_table, table_line
from runner.vmtest import (GUEST_PORT, Die, Unbound, check_options, clock_append, guest_memory, guest_timeout,
                           kernel_append, last_look_append, last_look_argv, need_tool, network_argv, nmi_at,
                           parse_args, qemu_argv, report_argv, sparse_dts, timeout_error, want_peers, wants_scrape,
                           work_suffix)

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


def vm_opts(*args):
    o = parse_args(list(args), "7.3")
    check_options(o)
    return o


class Vmtest(unittest.TestCase):
    def test_parse(self):
        o = parse_args([], "7.3")
        self.assertEqual((o.arch, o.tree, o.flavour, o.cpus, o.shell, o.system, o.build_only),
                         ("x86_64", "7.3", "debug", "2", 0, 0, 0))
        o = parse_args(["--arch", "arm64", "--tree", "7.2", "--inject-splat", "--system", "--build-only", "--shell",
                        "--cpus", "2/260", "--programs", "rt_env rtlat_test", "--timeout", "900"], "7.3")
        self.assertEqual((o.arch, o.tree, o.inject, o.system, o.build_only, o.shell, o.online, o.possible, o.programs,
                          o.timeout), ("arm64", "7.2", "splat", 1, 1, 1, "2", "260", "rt_env rtlat_test", "900"))
        # --help stops the reading: what follows is not looked at.
        self.assertTrue(parse_args(["--help", "--bogus"], "7.3").help)
        with self.assertRaises(Die) as e:
            parse_args(["--bogus", "--help"], "7.3")
        self.assertEqual(str(e.exception), "unknown argument '--bogus' (see --help)")
        with self.assertRaises(Unbound):
            parse_args(["--cpus"], "7.3")

    def test_refused(self):
        for args, msg in [
                (["--inject", "foo"], "unknown injection 'foo' (splat, kasan or splat+kasan)"),
                (["--then-inject", "bar"], "unknown injection 'bar' (splat, kasan or splat+kasan)"),
                (["--inject", "splat", "--then-inject", "kasan"], "--inject and --then-inject exclude each other"),
                (["--then-bench", "1,1,1", "--bench", "1,1,1"],
                 "--then-bench runs after the suite: not with --inject or --bench"),
                (["--demo", "0"], "--demo '0': whole seconds, 1 or more"),
                (["--demo", "5\n"], "--demo '5\n': whole seconds, 1 or more"),
                (["--demo", "5", "--then-inject", "splat"],
                 "--demo runs alone: not with --inject, --bench or --then-*"),
                (["--bench", "1,2"], "'1,2': the benchmark takes SECONDS,ROUNDS,PERIOD_US (positive integers)"),
                (["--then-bench", "1,2,0"],
                 "'1,2,0': the benchmark takes SECONDS,ROUNDS,PERIOD_US (positive integers)"),
                (["--cpus", "0"], "--cpus '0': ONLINE or ONLINE/POSSIBLE (positive integers)"),
                (["--cpus", "2/"], "--cpus '2/': ONLINE or ONLINE/POSSIBLE (positive integers)"),
                (["--cpus", "3/2"], "--cpus '3/2': more online than possible")]:
            with self.assertRaises(Die, msg=args) as e:
                vm_opts(*args)
            self.assertEqual(str(e.exception), msg)
        for args in (["--inject", "splat+kasan"], ["--cpus", "8"], ["--cpus", "2/2"], ["--demo", "30"],
                     ["--then-bench", "1,1,1000", "--then-inject", "splat"]):
            vm_opts(*args)

    def test_suffix(self):
        self.assertEqual(work_suffix(vm_opts(), suffix("2")), "")
        self.assertEqual(work_suffix(vm_opts("--inject", "kasan"), ""), "-kasan")
        self.assertEqual(work_suffix(vm_opts("--bench", "1,2,3", "--cpus", "2/4"), suffix("2/4")), "-bench-cpus2of4")
        self.assertEqual(work_suffix(vm_opts("--demo", "3", "--cpus", "8"), suffix("8")), "-demo-cpus8")
        # --then-* share the suite's directory.
        self.assertEqual(work_suffix(vm_opts("--then-bench", "1,1,1", "--then-inject", "splat"), ""), "")

    def test_timeout(self):
        env = {"RTRS_VM_TIMEOUT": "1200", "RTRS_INJECT_TIMEOUT": ""}
        self.assertEqual(guest_timeout(vm_opts(), {}), "1800")
        self.assertEqual(guest_timeout(vm_opts(), env), "1200")
        self.assertEqual(guest_timeout(vm_opts("--inject", "splat"), env), "300")
        self.assertEqual(guest_timeout(vm_opts("--inject", "splat"), {"RTRS_INJECT_TIMEOUT": "60"}), "60")
        self.assertEqual(guest_timeout(vm_opts("--timeout", "900", "--inject", "splat"), env), "900")
        self.assertIsNone(timeout_error(vm_opts(), "451", "450"))
        self.assertEqual(timeout_error(vm_opts(), "450", "450"), "the guest's timeout (450 s) must exceed "
                         "kselftest's per-test timeout (tests/settings: 450 s)")
        # An injection, the benchmark and the demo have no per-test timeout to let fire.
        self.assertIsNone(timeout_error(vm_opts("--bench", "1,1,1"), "60", "450"))
        self.assertIsNone(timeout_error(vm_opts(), "60", ""))

    def test_programs(self):
        self.assertTrue(need_tool(vm_opts()))
        self.assertFalse(need_tool(vm_opts("--programs", "rt_env rtlat_test")))
        self.assertTrue(need_tool(vm_opts("--programs", "rt_env rtrs_hello.sh")))
        self.assertTrue(need_tool(vm_opts("--programs", "rt_env", "--then-bench", "1,1,1")))
        o = vm_opts()
        self.assertTrue(want_peers("arm64", "rt_env rtlat_peers.sh", o))
        self.assertTrue(want_peers("x86_64", "rtlat_noise.sh", o))
        self.assertFalse(want_peers("arm64", "rtlat_noise.sh rt_env", o))
        self.assertTrue(want_peers("arm64", "", vm_opts("--bench", "1,1,1")))
        self.assertTrue(wants_scrape(o, "rt_env rtlat_scrape.sh"))
        self.assertFalse(wants_scrape(vm_opts("--shell"), "rt_env rtlat_scrape.sh"))
        # (As the shell's pattern "0 "*" rtlat_scrape.sh "* reads it: the
        # first program is not seen.)
        self.assertFalse(wants_scrape(o, "rtlat_scrape.sh"))

    def test_command_lines(self):
        o = vm_opts("--cpus", "2/260", "--bench", "5,3,1000", "--then-inject", "splat")
        self.assertEqual(kernel_append(o, "ttyAMA0", None),
                         "console=ttyAMA0 printk.time=1 panic=-1 maxcpus=2 kasan_multi_shot rtedu.dma_bits=32 "
                         "rtrs.bench=5 rtrs.bench_rounds=3 rtrs.bench_period=1000 kunit.filter_glob=rtrs* "
                         "rtrs.inject=none rtrs.then_inject=splat rtrs.then_bench=none  rtrs.shell=0 rtrs.system=0")
        self.assertEqual(kernel_append(vm_opts("--demo", "3", "--shell"), "ttyS0", "*"),
                         "console=ttyS0 printk.time=1 panic=-1  kasan_multi_shot rtedu.dma_bits=32  "
                         "kunit.filter_glob=* rtrs.inject=none rtrs.then_inject=none rtrs.then_bench=none "
                         "rtrs.demo=3 rtrs.shell=1 rtrs.system=0")
        # The last look's NMI: x86_64 only, never in a shell.
        self.assertEqual(last_look_append("x86_64", o),
                         "unknown_nmi_panic panic_sys_info=locks,all_bt,blocked_tasks")
        self.assertEqual(last_look_argv("x86_64", o, "S"), ["-monitor", "unix:S,server=on,wait=off"])
        self.assertEqual((last_look_append("arm64", o), last_look_argv("riscv64", o, "S")), ("", []))
        self.assertEqual(last_look_append("x86_64", vm_opts("--shell")), "")
        # No TSC watchdog in an x86_64 guest (its skew check hung a boot).
        self.assertEqual((clock_append("x86_64"), clock_append("arm64")), ("tsc=nowatchdog", ""))
        # The NMI's time: 60 s before the bound, never in the first half of
        # a bound, nor before kselftest's per-test timeout in a suite run.
        self.assertEqual(nmi_at("x86_64", vm_opts(), "1800", "450"), 1740)
        self.assertIsNone(nmi_at("x86_64", vm_opts(), "480", "450"))
        self.assertIsNone(nmi_at("arm64", vm_opts(), "1800", "450"))
        self.assertEqual(nmi_at("x86_64", vm_opts("--demo", "3"), "150", "450"), 90)
        self.assertIsNone(nmi_at("x86_64", vm_opts("--inject", "kasan"), "119", "450"))
        self.assertEqual(nmi_at("x86_64", vm_opts("--inject", "kasan"), "300", "450"), 240)
        self.assertEqual(guest_memory(o), "2G")
        self.assertEqual(guest_memory(vm_opts("--cpus", "64")), "1G")
        argv = qemu_argv("qemu-system-x86_64 -M pc -cpu max,la57=off", "x86_64", vm_opts("--then-bench", "1,1,1"),
                         "K", "W", "A", "1G")
        self.assertEqual(argv, ["qemu-system-x86_64", "-M", "pc", "-cpu", "max,la57=off", "-accel",
                                "tcg,thread=single", "-smp", "2", "-m", "1G", "-nographic", "-no-reboot", "-kernel",
                                "K", "-initrd", "W/initramfs.cpio", "-device", "virtio-serial-pci", "-chardev",
                                "file,id=res,path=W/results.log",
                                "-device", "virtserialport,chardev=res,name=rtrs.results",
                                "-device", "edu,dma_mask=0xffffffff", "-device", "edu,dma_mask=0xffffffff",
                                "-append", "A"])
        self.assertEqual(qemu_argv("q", "arm64", vm_opts("--then-bench", "1,1,1"), "K", "W", "A", "1G")[1:3],
                         ["-accel", "tcg"])
        # A machine past 256 on arm64: 2 online of 260 on 3 vCPUs; elsewhere
        # a vCPU a possible CPU.
        self.assertEqual(qemu_argv("q", "arm64", vm_opts("--cpus", "2/260"), "K", "W", "A", "2G")[3:5], ["-smp", "3"])
        self.assertEqual(qemu_argv("q", "x86_64", vm_opts("--cpus", "2/8"), "K", "W", "A", "1G")[3:5], ["-smp", "8"])
        self.assertEqual(qemu_argv("q", "arm64", vm_opts("--cpus", "4"), "K", "W", "A", "1G")[3:5], ["-smp", "4"])
        self.assertEqual(report_argv("R", "arm64", "W", "K", 0, "300", vm_opts("--inject", "kasan"))[1:],
                         ["--arch", "arm64", "--work", "W", "--kdir", "K", "--qemu-rc", "0", "--timeout", "300",
                          "--inject", "kasan"])

    def test_network(self):
        self.assertEqual(network_argv(4242),
                         ["-netdev", "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:4242-:19101",
                          "-device", "virtio-net-pci,netdev=net0"])
        # The forwarded port is the one the guest's test serves the metrics on.
        scrape = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "rtlat_scrape.sh")
        with open(scrape) as f:
            port = re.search(r"^PORT=([0-9]+)$", f.read(), re.M)
        self.assertEqual(port and int(port.group(1)), GUEST_PORT)


def cpu_node(name, reg, phandle=None):
    ph = f"\t\t\tphandle = <{phandle:#x}>;\n" if phandle else ""
    return (f"\t\tcpu@{name} {{\n{ph}\t\t\treg = <{reg:#x}>;\n\t\t\tenable-method = \"psci\";\n"
            "\t\t\tdevice_type = \"cpu\";\n\t\t};\n")


class SparseCpus(unittest.TestCase):
    # QEMU's tree for 3 vCPUs, as dtc prints it (the nodes out of order).
    DTS = ("/ {\n\tcpus {\n\t\t#size-cells = <0x00>;\n\t\t#address-cells = <0x01>;\n\n"
           "\t\tcpu-map {\n\n\t\t\tsocket0 {\n\t\t\t\tcore0 {\n\t\t\t\t\tcpu = <0x8003>;\n\t\t\t\t};\n"
           "\t\t\t};\n\t\t};\n\n" + cpu_node("2", 2, 0x8001) + "\n" + cpu_node("0", 0, 0x8003) + "\n"
           + cpu_node("1", 1, 0x8002) + "\t};\n\n\tpsci {\n\t\tmethod = \"hvc\";\n\t};\n};\n")

    def test_nodes(self):
        out = sparse_dts(self.DTS, 2, 6)
        regs = [int(r, 16) for r in re.findall(r"reg = <(0x[0-9a-f]+)>", out)]
        # The online vCPUs first, the spare one last: CPU 5 is vCPU 2.
        self.assertEqual(regs, [0, 1, 0x10002, 0x10003, 0x10004, 2])
        self.assertEqual(len(re.findall(r"device_type = \"cpu\"", out)), 6)
        self.assertEqual(re.findall(r"cpu@([0-9a-f]+) \{", out), ["0", "1", "10002", "10003", "10004", "2"])
        # No phandle twice, no cpu-map; the rest of the tree kept.
        self.assertEqual(out.count("phandle = <0x8001>"), 1)
        self.assertNotIn("cpu-map", out)
        self.assertTrue(out.endswith("\t};\n\n\tpsci {\n\t\tmethod = \"hvc\";\n\t};\n};\n"))
        # Online and possible differ by one: the vCPUs alone.
        self.assertEqual(re.findall(r"reg = <(0x[0-9a-f]+)>", sparse_dts(self.DTS, 2, 3)), ["0x0", "0x1", "0x2"])

    def test_other_trees_refused(self):
        # Too few vCPU nodes, no /cpus node, two address cells: Die, not a
        # traceback.
        for dts, online in ((self.DTS, 3), ("/ {\n\tpsci {\n\t};\n};\n", 2),
                            (self.DTS.replace("#address-cells = <0x01>", "#address-cells = <0x02>"), 2)):
            with self.assertRaises(Die):
                sparse_dts(dts, online, 260)


if __name__ == "__main__":
    unittest.main()
