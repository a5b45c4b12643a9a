#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The rtlat command-line tool in the guest: each mode runs, the JSON report
# is valid and consistent with the module's statistics, the SVG is produced
# and well-formed, a forced threshold exits 3, a failed gate 4, a refused
# command line 2, a missing module exits 1 with a message saying how to load
# it; --warm-up reports only the measured part. rtlat timerlat prints rtla
# timerlat's lines and exits as rtla does; rtlat cyclictest speaks
# cyclictest's options and formats.
#
# Global state it changes (Documentation/testing.rst, "In a test farm"):
# loads and unloads rtlat.ko and rtedu.ko; CPU hotplug (a CPU past 256
# brought online where the machine has one); the global tracing_on and
# trace buffer (--tracemark), trace instances (--trace); /dev/cpu_dma_latency
# while a run holds it; /dev/rtlat's group and mode, for a run without root
# (put back after it).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

# True if the JSON report $2 has stage $1 for some CPU, with samples.
has_stage()
{
	grep -A1 "^ *\"$1\": {\$" "$2" | grep -qE '"count": [1-9]'
}

# Seconds from uptime $2 to the earliest activation JSON report $1 names
# (each stage's maximum: its expected time on CLOCK_MONOTONIC, which is
# /proc/uptime's clock without suspend), or nothing.
earliest()
{
	sed -n 's/^ *"max_time_ns": \([0-9]*\),$/\1/p' "$1" 2>/dev/null | awk -v t0="$2" '
		$1 > 0 && (m == "" || $1 + 0 < m + 0) { m = $1 }
		END { if (m != "") printf "%.2f\n", m / 1e9 - t0 }'
}

# The kernel's CPU DMA latency limit, µs (reading it asks for no limit).
dma_latency()
{
	od -An -td4 -N4 /dev/cpu_dma_latency | tr -d ' '
}

rtrs_start
if ! command -v rtlat >/dev/null || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "rtlat tool or rtlat.ko not installed"
fi
ktap_set_plan 63
tmp=$(mktemp -d)
rmmod rtlat 2>/dev/null

rtlat run --duration 1s -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "not loaded" "$tmp/out"; then
	ktap_test_pass "missing module: exit 1 with advice"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "missing module: exit 1 with advice"
fi

# Pass test $1 if the command that follows exits $2 and prints (stdout and
# stderr) a line matching the extended regular expression $3.
exits()
{
	desc=$1 want=$2 re=$3
	shift 3
	"$@" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc = "$want" ] && grep -qE -- "$re" "$tmp/out"; then
		ktap_test_pass "$desc"
	else
		ktap_print_msg "exit $rc: $(head -5 "$tmp/out")"
		ktap_test_fail "$desc"
	fi
}

# A refused command line is a usage error, 2; a threshold trip is 3.
exits "bad argument: exit 2 with the reason" 2 "not a whole number of" rtlat run --period 10us
# Typed by reflex from cyclictest: -p 95 (a priority), -h 100 (a histogram).
exits "-p below 100: exit 2, the hint names -P" 2 "-P/--priority 95" rtlat run -p 95 -d 1s
exits "-h VALUE: exit 2, naming --help and hist" 2 "'-h 100'.*--help.*rtlat hist" rtlat run -h 100 -d 1s
exits "bad --fail-if: exit 2 naming the bad part" 2 "unknown stage 'thred'" \
	rtlat run --fail-if 'thred.max>1us' -d 1s

# rtla timerlat's command line, refused before the device is opened: what
# rtla's option parser refuses exits 129 as rtla's; an rtla option rtlat
# cannot honour is refused by name, exit 1.
rtlat timerlat top -p 10 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 129 ] && grep -q -- "--period" "$tmp/out"; then
	ktap_test_pass "timerlat: bad command line: exit 129 as rtla"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "timerlat: bad command line: exit 129 as rtla"
fi
rtlat timerlat top -a 50 -d 1 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q -- "-a/--auto is not supported" "$tmp/out"; then
	ktap_test_pass "timerlat -a: refused by name, exit 1"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "timerlat -a: refused by name, exit 1"
fi

insmod "$mod"
rtlat run --duration 2s -q --json "$tmp/run.json" --svg "$tmp/run.svg" >"$tmp/out" 2>&1
rc=$?
rtrs_keep "$tmp/run.json" run.json
rtrs_keep "$tmp/run.svg" run.svg
ktap_print_msg "$(head -3 "$tmp/out")"
rtrs_check "run: exit 0" [ $rc = 0 ]
# cyclictest's T: line, with the measuring thread's tid (rtlat/0).
rtrs_check "run: cyclictest-shaped summary with the thread's tid" grep -qE '^T: 0 \( *[1-9][0-9]*\)' "$tmp/out"
if rtlat check-json "$tmp/run.json" >"$tmp/chk" 2>&1; then
	ktap_test_pass "run: JSON valid and consistent"
else
	ktap_print_msg "$(cat "$tmp/chk")"
	ktap_test_fail "run: JSON valid and consistent"
fi
if head -c 4 "$tmp/run.svg" | grep -q '<svg' && tail -c 16 "$tmp/run.svg" | grep -q '</svg>'; then
	ktap_test_pass "run: SVG written and well-formed"
else
	ktap_test_fail "run: SVG written and well-formed"
fi
# The time line: per CPU the worst latency and the p99 of each time bucket.
rtrs_check "run: SVG time line of max and p99 per CPU" grep -q 'cpu0 thread p99' "$tmp/run.svg"

# 5 ms periods: a waiter later than a period (riscv64 under TCG) finds its
# record completed without its user stage.
rtlat run --user --period 5000 --duration 2s -q --json "$tmp/user.json" >"$tmp/out" 2>&1
rc=$?
rtrs_keep "$tmp/user.json" user.json
rtrs_check "run --user: exit 0" [ $rc = 0 ]
if rtlat check-json "$tmp/user.json" >"$tmp/chk" 2>&1 && has_stage user "$tmp/user.json" &&
	has_stage response "$tmp/user.json"; then
	ktap_test_pass "run --user: user and response stages reported"
else
	ktap_print_msg "$(cat "$tmp/chk")"
	ktap_test_fail "run --user: user and response stages reported"
fi

rtlat run --stages irq --period 200 --duration 2s -q --json "$tmp/irq.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^T: 0 (' "$tmp/out" && rtlat check-json "$tmp/irq.json" >"$tmp/chk" 2>&1 &&
	has_stage irq "$tmp/irq.json" && ! grep -q '"thread"' "$tmp/irq.json"; then
	ktap_test_pass "run --stages irq: irq stage only, valid JSON"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out" "$tmp/chk")"
	ktap_test_fail "run --stages irq: irq stage only, valid JSON"
fi
# Options that do not fit together are a usage error: exit 2.
rtlat run --stages irq --user --duration 1s -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "needs the thread stage" "$tmp/out"; then
	ktap_test_pass "run --stages irq --user: refused with a reason"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "run --stages irq --user: refused with a reason"
fi

# Buckets of 10 µs, 8 of them, empty ones kept: the rows are 0 to 70, each
# once, and the rest is "over".
rtlat hist --duration 1s -q -b 10 -E 8 --with-zeros >"$tmp/hist" 2>&1
rc=$?
rows=$(awk '/^[0-9]+ / { printf "%s ", $1 }' "$tmp/hist")
if [ $rc = 0 ] && grep -q '^# RTLA timerlat histogram' "$tmp/hist" && grep -q '^count:' "$tmp/hist" &&
	grep -q '^over:' "$tmp/hist" && grep -q '^p99.9999:' "$tmp/hist" && [ "$rows" = "0 10 20 30 40 50 60 70 " ]; then
	ktap_test_pass "hist -b 10 -E 8 --with-zeros: rtla-shaped, rows 0 to 70 µs, percentiles"
else
	ktap_print_msg "exit $rc, rows '$rows': $(head -5 "$tmp/hist")"
	ktap_test_fail "hist -b 10 -E 8 --with-zeros: rtla-shaped, rows 0 to 70 µs, percentiles"
fi

rtlat run --duration 20s --threshold thread=1 -q --json "$tmp/trip.json" --trace "$tmp/trip.trace" >"$tmp/out" 2>&1
rc=$?
rtrs_keep "$tmp/trip.json" trip.json
ktap_print_msg "$(grep 'threshold\|trace' "$tmp/out")"
rtrs_check "threshold exceeded: exit 3" [ $rc = 3 ]
rtrs_check "threshold: the JSON says why it stopped" grep -q '"reason": "threshold"' "$tmp/trip.json"
# --trace: the trip's trace, from an instance of the run's own on the
# measured CPUs (the global buffer untouched), which is gone after.
T=/sys/kernel/tracing
# True if a trace instance of a run (rtlat-*) is left.
instance_left()
{
	for d in "$T"/instances/rtlat-*; do
		[ -e "$d" ] && return 0
	done
	return 1
}
if grep -q "^rtlat: trace: $tmp/trip.trace, [1-9][0-9]* events$" "$tmp/out" &&
	grep -q ' sched_switch: .*next_comm=rtlat/' "$tmp/trip.trace" &&
	grep -q ' hrtimer_expire_entry: ' "$tmp/trip.trace" &&
	! instance_left && ! grep -q ' sched_switch: ' "$T/trace"; then
	ktap_test_pass "threshold: --trace keeps the trip's trace, from an instance of its own"
else
	ktap_print_msg "$(head -c 600 "$tmp/trip.trace" 2>&1); instances: $(echo "$T"/instances/*)"
	ktap_test_fail "threshold: --trace keeps the trip's trace, from an instance of its own"
fi
# No trip, no trace (said; a hangup ends the run as Ctrl-C does, the
# instance removed); a file that cannot be written: refused before anything
# is measured. (The run also has rings of --ring's size: its fdinfo says.)
rtlat run --duration 20s --threshold thread=10000000 -q --trace "$tmp/none.trace" --ring 64 >"$tmp/out" 2>&1 &
p=$!
# Once its session runs (fdinfo: state 2; a loaded guest may take seconds).
info=$(rtrs_wait_session $p 20)
sleep 1
ring=$(echo "$info" | sed -n 's/.* ring_records \([0-9]*\)$/\1/p')
kill -HUP $p
wait $p
rc=$?
start=$(cut -d' ' -f1 /proc/uptime)
rtlat run --duration 20s --threshold thread=1 -q --trace /nonexistent/t.txt >"$tmp/out2" 2>&1
rc2=$?
took=$(awk -v s="$start" '{ printf "%d", $1 - s }' /proc/uptime)
if [ $rc = 0 ] && grep -q '^rtlat: trace: no threshold trip, none saved$' "$tmp/out" &&
	[ ! -e "$tmp/none.trace" ] && [ $rc2 = 1 ] && [ "$took" -lt 5 ] &&
	grep -q '^rtlat: error: /nonexistent/t.txt: ' "$tmp/out2" && ! instance_left; then
	ktap_test_pass "--trace: none without a trip, a hangup ending the run; an unwritable file refused at once"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out"); exit $rc2 after $took s: $(cat "$tmp/out2")"
	ktap_test_fail "--trace: none without a trip, a hangup ending the run; an unwritable file refused at once"
fi

if [ "$ring" = 64 ]; then
	ktap_test_pass "--ring 64: the session's rings hold 64 records (its fdinfo)"
else
	ktap_print_msg "fdinfo says ring_records '$ring'"
	ktap_test_fail "--ring 64: the session's rings hold 64 records (its fdinfo)"
fi
exits "--ring 1000: exit 2, a power of two asked for" 2 "'1000' records: a power of two from 1 to" rtlat run --ring 1000 -d 1s

rtlat run --user --period 5000 --duration 20s --threshold user=1 -q >"$tmp/out" 2>&1
rc=$?
rtrs_check "user threshold exceeded: exit 3" [ $rc = 3 ]

# Run-to-end gates: evaluated once on the final statistics, after the whole
# --duration. Every activation is later than 1 ns: the gate fails, exit 4;
# none is 1 s late: it passes, exit 0. The JSON records each gate.
start=$(cut -d' ' -f1 /proc/uptime)
rtlat run --duration 3s -q --fail-if 'thread.max>1ns' --fail-if 'irq.p99.99>1000ms' \
	--max-missed 1000000000 --json "$tmp/gate.json" >"$tmp/out" 2>&1
rc=$?
rtrs_keep "$tmp/gate.json" gate.json
took=$(awk -v s="$start" '{ printf "%d", $1 - s }' /proc/uptime)
ktap_print_msg "$(grep 'rtlat: gate' "$tmp/out" | tr '\n' ';')"
if [ $rc = 4 ] && [ "$took" -ge 3 ] && grep -q '"reason": "duration"' "$tmp/gate.json" &&
	grep -q 'gate thread.max>1ns: FAILED' "$tmp/out" && grep -q 'gate irq.p99.99>1000ms: passed' "$tmp/out" &&
	grep -q '"exit_code": 4' "$tmp/gate.json" && grep -q '"expr": "missed>1000000000"' "$tmp/gate.json" &&
	rtlat check-json "$tmp/gate.json" >"$tmp/chk" 2>&1; then
	ktap_test_pass "gate failed: exit 4 after the whole run, recorded in the JSON"
else
	ktap_print_msg "exit $rc after $took s: $(cat "$tmp/out" "$tmp/chk" 2>/dev/null | tail -5)"
	ktap_test_fail "gate failed: exit 4 after the whole run, recorded in the JSON"
fi
exits "gates passed: exit 0" 0 "gate thread.p99>1000ms: passed" \
	rtlat run --duration 1s -q --fail-if 'thread.p99>1000ms' --max-dropped 1000000000
# A failing --max-dropped gate: the tool stopped for a second while its
# one-record rings fill at 1 kHz. The drops are counted, and fail the run.
rtlat run --ring 1 --duration 3s -q --max-dropped 0 --json "$tmp/drop.json" >"$tmp/out" 2>&1 &
p=$!
rtrs_wait_session $p 20 >/dev/null
kill -STOP $p
sleep 1
kill -CONT $p
wait $p
rc=$?
if [ $rc = 4 ] && grep -qE '^rtlat: gate dropped>0: FAILED \([1-9][0-9]* dropped\)' "$tmp/out" &&
	grep -q '"expr": "dropped>0"' "$tmp/drop.json" && grep -q '"exit_code": 4' "$tmp/drop.json"; then
	ktap_test_pass "--max-dropped 0 with records dropped: exit 4, the gate failed"
else
	ktap_print_msg "exit $rc: $(tail -5 "$tmp/out")"
	ktap_test_fail "--max-dropped 0 with records dropped: exit 4, the gate failed"
fi
# A failing --max-missed gate: a SCHED_FIFO 99 kernel thread (rtrs_noise.ko)
# spins 20 ms of every 100 on the measured CPU, above rtlat's thread (95),
# which arms the next period only after it: the periods it covers are
# missed, counted, and fail the run.
cpu=$(awk '/^processor/ { c = $3 } END { print c }' /proc/cpuinfo)
if noise=$(rtrs_module rtrs_noise) && insmod "$noise" cpu="$cpu" fifo_us=20000 period_ms=100; then
	rtlat run --cpus "$cpu" --duration 2s -q --max-missed 0 --json "$tmp/missed.json" >"$tmp/out" 2>&1
	rc=$?
	rmmod rtrs_noise
else
	rc=none
	echo "rtrs_noise.ko not loaded" >"$tmp/out"
fi
if [ $rc = 4 ] && grep -qE '^rtlat: gate missed>0: FAILED \([1-9][0-9]* missed\)' "$tmp/out" &&
	grep -q '"expr": "missed>0"' "$tmp/missed.json" && grep -q '"exit_code": 4' "$tmp/missed.json"; then
	ktap_test_pass "--max-missed 0 with periods missed: exit 4, the gate failed"
else
	ktap_print_msg "exit $rc: $(tail -5 "$tmp/out")"
	ktap_test_fail "--max-missed 0 with periods missed: exit 4, the gate failed"
fi
# --raw: every record delivered, as it came. The JSON's totals say how many
# the reader was given (delivered); the file holds each once, after its
# header (a CSV header line, a 32-byte binary header).
delivered()
{
	sed -n 's/^ *"delivered": \([0-9]*\),*$/\1/p' "$1" | head -1
}
rtlat run --duration 2s -q --raw "$tmp/raw.csv" --json "$tmp/raw.json" >"$tmp/out" 2>&1
rc=$?
rtrs_keep "$tmp/raw.json" raw.json
n=$(delivered "$tmp/raw.json")
lines=$(wc -l <"$tmp/raw.csv")
ktap_print_msg "raw csv: $lines lines, $n records delivered"
if [ $rc = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$lines" = $((n + 1)) ] &&
	head -1 "$tmp/raw.csv" | grep -qx 'cpu,seq,expected_ns,irq_ns,thread_ns,user_ns,response_ns,missed,flags' &&
	grep -q "\"records\": $n," "$tmp/raw.json" && grep -q '"format": "csv"' "$tmp/raw.json"; then
	ktap_test_pass "--raw csv: a header and every record delivered"
else
	ktap_print_msg "exit $rc: $(head -3 "$tmp/raw.csv" "$tmp/out")"
	ktap_test_fail "--raw csv: a header and every record delivered"
fi
rtlat run --duration 2s -q --raw "$tmp/raw.bin" --raw-format bin --json "$tmp/rawb.json" >"$tmp/out" 2>&1
rc=$?
n=$(delivered "$tmp/rawb.json")
size=$(wc -c <"$tmp/raw.bin")
if [ $rc = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$size" = $((32 + 64 * n)) ] &&
	[ "$(head -c 8 "$tmp/raw.bin")" = RTLATRAW ] && grep -q '"format": "bin"' "$tmp/rawb.json"; then
	ktap_test_pass "--raw-format bin: the header and every record delivered"
else
	ktap_print_msg "exit $rc: $size bytes for $n records: $(head -3 "$tmp/out")"
	ktap_test_fail "--raw-format bin: the header and every record delivered"
fi

# Without a terminal: --interval prints a status line to stderr every
# interval; SIGUSR1 prints the current summary to stderr and the run goes on
# to its end (cyclictest's SIGUSR1). At 10 ms periods, so that a slow
# guest (TCG) has time for the tool's own loop; 5 s, four or five lines, or
# three where a starved guest's loop woke over a second late once (an
# arm64 guest beside another printed at 1 s and 3 s of 4).
rtlat run --duration 5s --period 10ms --interval 1 -q >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$(grep -cE '^rtlat: 00:00:0[0-9] .*\| thread C:[1-9][0-9]* .*\| missed [0-9]+ dropped [0-9]+$' "$tmp/err")
ktap_print_msg "$(grep -m1 '^rtlat: 00' "$tmp/err")"
if [ $rc = 0 ] && [ "$n" -ge 3 ] && [ "$n" -le 5 ]; then
	ktap_test_pass "--interval: a status line every interval"
else
	ktap_print_msg "exit $rc, $n status lines: $(cat "$tmp/err")"
	ktap_test_fail "--interval: a status line every interval"
fi
rtlat run --duration 4s -q --json "$tmp/usr1.json" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 2
kill -USR1 $pid
wait $pid
rc=$?
if [ $rc = 0 ] && grep -q '^T: 0 (' "$tmp/err" && grep -q '^# missed periods [0-9]*, dropped records' "$tmp/err" &&
	grep -q '"reason": "duration"' "$tmp/usr1.json"; then
	ktap_test_pass "SIGUSR1: the summary on stderr, the run goes on"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/err")"
	ktap_test_fail "SIGUSR1: the summary on stderr, the run goes on"
fi

# The tool's own threads (the reader, the status loop) keep off the
# measured CPUs: by default the online CPUs not measured, or --housekeeping.
# The JSON says where they were allowed and where they were seen.
rtlat run --cpus 0 --duration 2s -q --json "$tmp/hk.json" >"$tmp/out" 2>&1
rc=$?
ktap_print_msg "$(grep -A4 '"housekeeping"' "$tmp/hk.json" | tr -d '\n ')"
if [ $rc = 0 ] && grep -qE '"cpus": "[1-9]' "$tmp/hk.json" &&
	grep -q '"chosen": "the online CPUs not measured"' "$tmp/hk.json" &&
	grep -qE '"reader_ran_on": "[1-9]' "$tmp/hk.json" && grep -qE '"status_ran_on": "[1-9]' "$tmp/hk.json"; then
	ktap_test_pass "housekeeping: the tool's threads off the measured CPUs"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "housekeeping: the tool's threads off the measured CPUs"
fi
rtlat run --cpus 0 --housekeeping 1 --duration 2s -q --json "$tmp/hk1.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '"cpus": "1",' "$tmp/hk1.json" && grep -q '"chosen": "--housekeeping"' "$tmp/hk1.json" &&
	grep -q '"reader_ran_on": "1",' "$tmp/hk1.json" && grep -q '"status_ran_on": "1"' "$tmp/hk1.json"; then
	ktap_test_pass "--housekeeping CPUS: the tool's threads there"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out"; grep -A4 '"housekeeping"' "$tmp/hk1.json")"
	ktap_test_fail "--housekeeping CPUS: the tool's threads there"
fi

# An RT user without root: a member of the node's group (rtrs on a
# packaged system; here uid 65534's own group) with an RLIMIT_RTPRIO of
# the session's priority measures; past its limit, exit 1 with the limit
# named. (The node's group and mode are put back, however the script
# ends: a node left open to uid 65534 would fail rtlat_test's not_root.)
node=$(stat -c '%g %a' /dev/rtlat)
restore_node()
{
	chgrp "${node% *}" /dev/rtlat
	chmod "${node#* }" /dev/rtlat
}
trap restore_node EXIT
trap 'exit 143' TERM INT
udir=$(mktemp -d) && chmod 1777 "$udir"
chgrp 65534 /dev/rtlat && chmod 660 /dev/rtlat
as_user()
{
	"$DIR/rtrs_as_user" 65534 "$@"
}
as_user 50 rtlat run --cpus 0 -P 50 --duration 1s -q --json "$udir/u.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && has_stage thread "$udir/u.json"; then
	ktap_test_pass "without root, within RLIMIT_RTPRIO: measured"
else
	ktap_print_msg "exit $rc: $(head -5 "$tmp/out")"
	ktap_test_fail "without root, within RLIMIT_RTPRIO: measured"
fi
exits "without root, past RLIMIT_RTPRIO: exit 1, the limit named" 1 "RLIMIT_RTPRIO of at least 50" \
	as_user 49 rtlat run --cpus 0 -P 50 --duration 1s -q
restore_node
trap - EXIT TERM INT
rm -rf "$udir"

# The JSON carries what it takes to reproduce the run: the machine, its
# isolation, interrupts, idle states, RT throttling, the kernel's
# configuration where the kernel exposes it, the tool's build, the exit
# status and the start on CLOCK_MONOTONIC.
rtlat run --duration 1s -q --json "$tmp/meta.json" >"$tmp/out" 2>&1
rc=$?
ok=1
for re in '"cpu_model": "' '"cpu_count": [1-9]' '"smt_control": ' '"hypervisor": ' '"rcu_nocbs": ' \
	'"irq_affinity": \{' '"idle_states": \[' '"sched_rt_runtime_us": ' '"kernel_config": (\{|null)' \
	'"build": \{' '"git": "' '"exit_code": 0' '"start_monotonic_ns": [1-9]'; do
	grep -qE "$re" "$tmp/meta.json" || { ktap_print_msg "missing: $re"; ok=0; }
done
if [ -e /proc/config.gz ]; then
	{ grep -q '"source": "/proc/config.gz"' "$tmp/meta.json" && grep -q '"CONFIG_HZ": "[0-9]' "$tmp/meta.json"; } ||
		{ ktap_print_msg "kernel_config: not from /proc/config.gz"; ok=0; }
fi
if [ "$(uname -m)" = x86_64 ] && grep -qw hypervisor /proc/cpuinfo; then
	grep -q '"hypervisor": "' "$tmp/meta.json" || { ktap_print_msg "hypervisor not reported"; ok=0; }
fi
ktap_print_msg "$(grep -E '"(cpu_model|hypervisor|virtualization|source)":' "$tmp/meta.json" | tr -s ' \n' ' ')"
rtrs_check "JSON: the metadata to reproduce the run" [ "$rc$ok" = 01 ]

# rtlat compare: per CPU and stage both runs and their difference, then the
# metadata that differs (here the period); a run against itself differs in
# nothing.
rtlat run --duration 1s -q --json "$tmp/cmp-a.json" >"$tmp/out" 2>&1
rtlat run --duration 1s -p 500 -q --json "$tmp/cmp-b.json" >"$tmp/out" 2>&1
rtlat compare "$tmp/cmp-a.json" "$tmp/cmp-b.json" >"$tmp/cmp" 2>&1
rc=$?
rtlat compare "$tmp/cmp-a.json" "$tmp/cmp-a.json" >"$tmp/cmp-same" 2>&1
ktap_print_msg "$(grep -E '^ +0 thread +(count|p99) ' "$tmp/cmp" | tr -s ' ' | tr '\n' ';')"
if [ $rc = 0 ] && grep -qE '^ +0 thread +count +[1-9][0-9]* +[1-9][0-9]* +[-+][0-9]+ ' "$tmp/cmp" &&
	grep -qE '^ +0 irq +p99.99 ' "$tmp/cmp" && grep -q '^settings.period_us: 1000.0 -> 500.0$' "$tmp/cmp" &&
	grep -q '^# metadata that differs (A -> B): 0$' "$tmp/cmp-same"; then
	ktap_test_pass "compare: per CPU and stage, and the metadata that differs"
else
	ktap_print_msg "exit $rc: $(head -3 "$tmp/cmp"; sed -n '/^# metadata/,$p' "$tmp/cmp" "$tmp/cmp-same")"
	ktap_test_fail "compare: per CPU and stage, and the metadata that differs"
fi

# --dma-latency: while the run lasts the tool holds /dev/cpu_dma_latency
# open at the value asked for (the kernel's limit, read from outside, is
# that value); the limit goes with it. A kernel without the file
# (CONFIG_CPU_IDLE off) skips that, but the tool must still refuse the
# option there in words, before it measures anything: a limit it cannot
# hold is not dropped silently. (A tool that measured would run for a
# minute: the timeout ends it, with another status.)
if [ ! -e /dev/cpu_dma_latency ]; then
	timeout 30 rtlat run --dma-latency 7 --duration 60s -q >"$tmp/out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q '^rtlat: error: /dev/cpu_dma_latency: ' "$tmp/out"; then
		rtrs_skip "--dma-latency: the limit held open while the run lasts, released after" \
			"no /dev/cpu_dma_latency (CONFIG_CPU_IDLE off): refused, exit 1, the file named"
	else
		ktap_print_msg "no /dev/cpu_dma_latency, yet --dma-latency 7 gave exit $rc: $(head -3 "$tmp/out")"
		ktap_test_fail "--dma-latency: the limit held open while the run lasts, released after"
	fi
else
	before=$(dma_latency)
	rtlat run --dma-latency 7 --duration 20s -q >"$tmp/out" 2>&1 &
	p=$!
	rtrs_wait_session $p 20 >/dev/null
	# shellcheck disable=SC2010 # one process: ls -l shows where each fd points
	held=$(ls -l /proc/$p/fd/ 2>/dev/null | grep -c ' -> /dev/cpu_dma_latency$')
	during=$(dma_latency)
	kill -HUP $p
	wait $p
	rc=$?
	after=$(dma_latency)
	ktap_print_msg "cpu_dma_latency: $before us before, $during during (held open $held times), $after after"
	if [ $rc = 0 ] && [ "$held" = 1 ] && [ "$during" = 7 ] && [ "$before" != 7 ] && [ "$after" = "$before" ]; then
		ktap_test_pass "--dma-latency: the limit held open while the run lasts, released after"
	else
		ktap_print_msg "exit $rc: $(tail -3 "$tmp/out")"
		ktap_test_fail "--dma-latency: the limit held open while the run lasts, released after"
	fi
fi
# A limit the kernel would misread (-1: none at all) is refused, in words.
exits "--dma-latency -1: exit 2, the range named" 2 "'-1' µs: a CPU DMA latency limit from 0 to 2000000000 µs" \
	rtlat run --dma-latency -1 -d 1s

# Missed periods never pass silently: with --max-missed they are printed.
exits "--max-missed: the missed periods printed" 0 "^rtlat: [0-9]+ missed periods, [0-9]+ dropped records" \
	rtlat run --duration 1s -q --max-missed 1000000000

rtlat run --duration 1s --cpus 999 -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "not online" "$tmp/out"; then
	ktap_test_pass "offline CPU refused: exit 1"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "offline CPU refused: exit 1"
fi

# A CPU past the UAPI's inline 256 (a machine of more possible CPUs than
# that: scripts/vmtest --cpus 2/260), brought online and measured by
# number: the tool gives the device the set in full, and reads it back.
last=$(sed 's/.*[-,]//' /sys/devices/system/cpu/possible)
if [ "$last" -lt 256 ]; then
	ktap_print_msg "highest possible CPU: $last"
	rtrs_skip "run --cpus 0,N with N past 256: both measured, JSON valid" "no CPU past 256"
elif ! was=$(cat "/sys/devices/system/cpu/cpu$last/online") || ! echo 1 >"/sys/devices/system/cpu/cpu$last/online"; then
	ktap_test_fail "run --cpus 0,N with N past 256: both measured, JSON valid"
else
	rtlat run --cpus "0,$last" --duration 1s -q --json "$tmp/wide.json" >"$tmp/out" 2>&1
	rc=$?
	[ "$was" = 1 ] || echo 0 >"/sys/devices/system/cpu/cpu$last/online"
	if [ $rc = 0 ] && rtlat check-json "$tmp/wide.json" >"$tmp/chk" 2>&1 &&
		grep -q "\"cpu\": $last," "$tmp/wide.json" && grep -q '"cpu": 0,' "$tmp/wide.json"; then
		ktap_test_pass "run --cpus 0,N with N past 256: both measured, JSON valid"
	else
		ktap_print_msg "CPU $last: exit $rc: $(cat "$tmp/out" "$tmp/chk" 2>/dev/null)"
		ktap_test_fail "run --cpus 0,N with N past 256: both measured, JSON valid"
	fi
fi

# --warm-up: a session of its own before the measured one, so the report's
# counters (produced, delivered, dropped, samples) agree, and what it reports
# (the time of each stage's maximum, on the clock of /proc/uptime) comes
# after the warm-up.
t0=$(cut -d' ' -f1 /proc/uptime)
rtlat run --warm-up 1 --duration 3s -q --json "$tmp/warm.json" --svg "$tmp/warm.svg" >"$tmp/out" 2>&1
rc=$?
rtrs_keep "$tmp/warm.svg" warm.svg
e=$(earliest "$tmp/warm.json" "$t0")
ktap_print_msg "warm-up 1 s: first activation reported ${e:-?} s after the start"
if [ $rc = 0 ] && rtlat check-json "$tmp/warm.json" >"$tmp/chk" 2>&1 &&
	grep -q '"warm_up_s": 1\.0,' "$tmp/warm.json" && has_stage thread "$tmp/warm.json" &&
	awk -v e="$e" 'BEGIN { exit !(e != "" && e >= 1) }'; then
	ktap_test_pass "run --warm-up: only the measured part, JSON valid and consistent"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out" "$tmp/chk")"
	ktap_test_fail "run --warm-up: only the measured part, JSON valid and consistent"
fi
# A threshold every activation exceeds is armed only after the warm-up: the
# run trips in the measured session, at its first activation, 5 s or more
# after the start (armed during the warm-up, it trips at once).
t0=$(cut -d' ' -f1 /proc/uptime)
rtlat run --warm-up 5 --duration 20s --threshold thread=1 -q --json "$tmp/warmtrip.json" >"$tmp/out" 2>&1
rc=$?
e=$(earliest "$tmp/warmtrip.json" "$t0")
ktap_print_msg "warm-up 5 s: tripped ${e:-?} s after the start"
if [ $rc = 3 ] && grep -q '"reason": "threshold"' "$tmp/warmtrip.json" &&
	rtlat check-json "$tmp/warmtrip.json" >"$tmp/chk" 2>&1 &&
	awk -v e="$e" 'BEGIN { exit !(e != "" && e >= 5) }'; then
	ktap_test_pass "run --warm-up: thresholds armed only after it"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out" "$tmp/chk" 2>/dev/null)"
	ktap_test_fail "run --warm-up: thresholds armed only after it"
fi
# rtlat timerlat: rtla timerlat's lines, from its format strings (Linux 7.3
# timerlat_top.c, timerlat_hist.c), line by line; -k, rtla's kernel-thread
# layout (user threads are the default, as rtla's with timerlat_fd).
rtlat timerlat top -k -d 2s -c 0 -q >"$tmp/top" 2>"$tmp/err"
rc=$?
# (The value groups are spelled out: some awks do not repeat a group {n}.)
if [ $rc = 0 ] && awk -v n='( +[0-9]+)' '
	NR == 1 { ok = ($0 == "                                     Timer Latency                                              ") }
	NR == 2 { ok = ok && /^  0 00:00:0[0-9]   [|]          IRQ Timer Latency [(]us[)]        [|]         Thread Timer Latency [(]us[)]$/ }
	NR == 3 { ok = ok && ($0 == "CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max") }
	NR == 4 { ok = ok && $0 ~ ("^  0 #[1-9][0-9]* +[|]" n n n n " [|]" n n n n "$") }
	NR == 5 { ok = ok && ($0 == "---------------|----------------------------------------|---------------------------------------") }
	NR == 6 { ok = ok && $0 ~ ("^ALL #[1-9][0-9]* +e[0-9] [|]" n n n " [|]" n n n "$") }
	NR >= 3 { ok = ok && length($0) == 96 }
	END { exit !(ok && NR == 6) }' "$tmp/top"; then
	ktap_test_pass "timerlat top -k -q: rtla's header, CPU and ALL lines"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/top" "$tmp/err")"
	ktap_test_fail "timerlat top -k -q: rtla's header, CPU and ALL lines"
fi
# -u: the thread context is rtlat's user thread, "Ret user" its response
# time (a waiter later than a period leaves its activation without them).
rtlat timerlat top -u -p 5000 -d 2s -c 0 -q >"$tmp/top" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && awk -v n='( +[0-9]+)' -v v='( +([0-9]+|-))' '
	NR == 2 { ok = /[|]         Thread Timer Latency [(]us[)]      [|]    Ret user Timer Latency [(]us[)]$/ }
	NR == 3 { ok = ok && /[|]      cur       min       avg       max [|]      cur       min       avg       max$/ }
	NR == 4 { ok = ok && $0 ~ ("^  0 #[1-9][0-9]* +[|]" n n n n " [|]" v v v v " [|]" v v v v "$") }
	NR == 5 { ok = ok && /^-+[|]-+[|]-+[|]-+$/ && split($0, f, "|") == 4 &&
		length(f[1]) == 15 && length(f[2]) == 40 && length(f[3]) == 40 && length(f[4]) == 39 }
	NR >= 3 { ok = ok && length($0) == 137 }
	END { exit !(ok && NR >= 6) }' "$tmp/top"; then
	ktap_test_pass "timerlat top -u: Ret user columns"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/top" "$tmp/err")"
	ktap_test_fail "timerlat top -u: Ret user columns"
fi
# (A slow guest may have no latency below the 50 buckets: rows are checked
# where there are some, the over: line always.)
rtlat timerlat hist -k -d 2 -c 0 -E 50 --no-summary >"$tmp/hist" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && awk '
	NR == 1 { ok = ($0 == "# RTLA timerlat histogram") }
	NR == 2 { ok = ok && ($0 == "# Time unit is microseconds (us)") }
	NR == 3 { ok = ok && /^# Duration:   0 00:00:0[0-9]$/ }
	NR == 4 { ok = ok && ($0 == "Index   IRQ-000   Thr-000") }
	NR > 4 && !/^over: / { ok = ok && /^[0-9]+ +[0-9]+ +[0-9]+ $/ && $1 < 50 && length($0) == 26; rows++ }
	NR > 4 { n += $2 + $3 }
	/^over: / { ok = ok && /^over: +[0-9]+ +[0-9]+ $/ && length($0) == 26; over = NR }
	END { exit !(ok && over == NR && n > 0) }' "$tmp/hist"; then
	ktap_test_pass "timerlat hist -k --no-summary: rtla's header, bucket and over lines"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/hist" "$tmp/err")"
	ktap_test_fail "timerlat hist -k --no-summary: rtla's header, bucket and over lines"
fi
# Every sample is in a bucket or over: the buckets add up to count:, per CPU
# and in the ALL columns.
rtlat timerlat hist -k -d 2 -c 0 -E 50 >"$tmp/hist" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && awk '
	/^[0-9]/ || /^over: / { irq += $2; thr += $3 }
	/^ALL: +IRQ +Thr$/ { all = 1 }
	/^count:/ && !all { ci = $2; ct = $3 }
	/^count:/ && all { ai = $2; at = $3 }
	END { exit !(all && ci > 0 && irq == ci && thr == ct && ai == ci && at == ct) }' "$tmp/hist"; then
	ktap_test_pass "timerlat hist: buckets and over add up to count"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/hist" "$tmp/err")"
	ktap_test_fail "timerlat hist: buckets and over add up to count"
fi
# -T: rtla stops at a thread latency of that many µs or more, prints the
# numbers, then its line, and exits 2. (As rtla's, the ALL line of the user
# layout has no newline when its Ret user column is empty: the stop line
# may follow on the same line.)
rtlat timerlat top -T 1 -d 20s -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "timerlat hit stop tracing$" "$tmp/out" && grep -q '^ALL #' "$tmp/out"; then
	ktap_test_pass "timerlat -T: rtla's stop line, exit 2"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "timerlat -T: rtla's stop line, exit 2"
fi
# --fail-if: the native gate, its lines on stderr after rtla's. With -u
# (the default) the thread context is the user stage: every activation is
# later than 1 ns, that gate fails, exit 4; none is 1 s late: that one
# passes.
name="timerlat --fail-if: a failed gate exits 4 with its line, one passes"
rtlat timerlat top -d 2s -c 0 -q --fail-if 'user.max>1ns' --fail-if 'user.p99>1000ms' >"$tmp/top" 2>"$tmp/err"
rc=$?
if [ $rc = 4 ] && grep -q '^ALL #' "$tmp/top" && ! grep -q 'rtlat: gate' "$tmp/top" &&
	grep -qE '^rtlat: gate user\.max>1ns: FAILED \([0-9.]+ us on CPU 0\)$' "$tmp/err" &&
	grep -q '^rtlat: gate user\.p99>1000ms: passed (' "$tmp/err"; then
	ktap_test_pass "$name"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/top" "$tmp/err")"
	ktap_test_fail "$name"
fi

# rtlat cyclictest: cyclictest's command line and formats on the user stage.
# As cyclictest, -q with -h prints the histogram and no T: line; and the 2 s
# measured (the JSON's cycles: a thread that started late measured none).
rtlat cyclictest -q -D 2 -i 1000 -p 80 -m -a 0 -t 1 -h 100 --json "$tmp/c.json" >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^# Histogram$' "$tmp/ct")" = 1 ] &&
	[ "$(grep -cE '^[0-9]{6} [0-9]{6}$' "$tmp/ct")" = 100 ] &&
	grep -qE '^# Total: [0-9]{9}$' "$tmp/ct" && grep -qE '^# Min Latencies: [0-9]{5,}$' "$tmp/ct" &&
	grep -qE '^# Avg Latencies: [0-9]{5,}$' "$tmp/ct" && grep -qE '^# Max Latencies: [0-9]{5,}$' "$tmp/ct" &&
	grep -qE '^# Histogram Overflows: [0-9]{5,}$' "$tmp/ct" &&
	grep -q '^# Histogram Overflow at cycle number:$' "$tmp/ct" && grep -qE '^# Thread 0:( [0-9]{5,})*( # [0-9]{5,} others)?$' "$tmp/ct" &&
	! grep -q '^T:' "$tmp/ct" && grep -qE '"cycles": [1-9]' "$tmp/c.json"; then
	ktap_test_pass "cyclictest -q -h: histogram block, no T: line"
else
	ktap_print_msg "exit $rc: $(head -3 "$tmp/ct") $(tail -9 "$tmp/ct") $(cat "$tmp/cterr") $(grep cycles "$tmp/c.json")"
	ktap_test_fail "cyclictest -q -h: histogram block, no T: line"
fi
# The keys of rt-tests' JSON in its order (bucket and thread numbers aside),
# their types, and its histogram against the printed one: Total + Overflows
# = cycles.
keys=$(sed -n 's/^ *"\([^"]*\)":.*/\1/p' "$tmp/c.json" 2>/dev/null | grep -vE '^[0-9]+$' | tr '\n' ' ')
jsum=$(awk -F': ' '/^        "[0-9]+": [0-9]+,?$/ { sub(",", "", $2); s += $2 } END { print s + 0 }' "$tmp/c.json" 2>/dev/null)
cycles=$(sed -n 's/^      "cycles": \([0-9]*\),$/\1/p' "$tmp/c.json" 2>/dev/null)
# (cyclictest's numbers have leading zeros, which busybox awk would read
# as octal: they go first.)
total=$(awk '/^# Total:/ { v = $3; sub(/^0+/, "", v); print v + 0 }' "$tmp/ct")
over=$(awk '/^# Histogram Overflows:/ { v = $4; sub(/^0+/, "", v); print v + 0 }' "$tmp/ct")
want="file_version cmdline: rt_test_version: start_time end_time return_code sysinfo sysname nodename release version machine realtime num_threads resolution_in_ns thread histogram cycles min max avg cpu node "
ktap_print_msg "cyclictest 2 s: $cycles cycles, $total in the histogram, $over above"
if [ "$keys" = "$want" ] && grep -q '^  "file_version": 1,$' "$tmp/c.json" &&
	grep -q '^  "return_code": 0,$' "$tmp/c.json" && grep -qE '^    "realtime": [01]$' "$tmp/c.json" &&
	grep -q '^  "num_threads": 1,$' "$tmp/c.json" && grep -q '^  "resolution_in_ns": 0,$' "$tmp/c.json" &&
	grep -qE '^      "avg": [0-9]+\.[0-9]{2},$' "$tmp/c.json" && grep -q '^      "cpu": 0,$' "$tmp/c.json" &&
	grep -qE '^      "node": -?[0-9]+$' "$tmp/c.json" && [ "${cycles:-0}" -gt 0 ] &&
	[ "$jsum" = "$total" ] && [ $((total + over)) = "$cycles" ]; then
	ktap_test_pass "cyclictest --json: rt-tests' keys, types and totals"
else
	ktap_print_msg "keys: $keys; json sum $jsum, total $total + over $over, cycles $cycles"
	ktap_print_msg "$(grep '^# [A-Z]' "$tmp/ct" | cut -c1-120 | tr '\n' ';') $(grep -E '"(cycles|min|max|avg)"' "$tmp/c.json" | tr -d ' \n')"
	ktap_test_fail "cyclictest --json: rt-tests' keys, types and totals"
fi
# print_stat's widths: C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld; one line
# per thread, thread N on the N-th CPU (and, as cyclictest prints it even
# with -q, the cpu_dma_latency line where the device is).
rtlat cyclictest -q -D 1 -p 80 -t 2 -d 0 >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
re='^T: [01] \( *[1-9][0-9]*\) P:80 I:1000 C:[ 0-9]{7} Min:[ 0-9]{7} Act:[ 0-9]{5} Avg:[ 0-9]{5} Max:[ 0-9]{8}$'
if [ $rc = 0 ] && [ "$(grep -cE "$re" "$tmp/ct")" = 2 ] &&
	[ "$(grep -vc '^# /dev/cpu_dma_latency set to 0us$' "$tmp/ct")" = 2 ] &&
	grep -q '^T: 0 ' "$tmp/ct" && grep -q '^T: 1 ' "$tmp/ct"; then
	ktap_test_pass "cyclictest -q: T: lines in print_stat's widths"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/ct" "$tmp/cterr")"
	ktap_test_fail "cyclictest -q: T: lines in print_stat's widths"
fi
rtlat cyclictest -q -p 80 -t 2 -d 0 -l 50 -i 5000 >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^T: [01] .* C:     50 Min:' "$tmp/ct")" = 2 ]; then
	ktap_test_pass "cyclictest -l: each thread stops at its count"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/ct" "$tmp/cterr")"
	ktap_test_fail "cyclictest -l: each thread stops at its count"
fi
# -b in ns (-N): 1 ns trips at the first activation; cyclictest exits 0
# and names the thread that broke, one of the thread ids.
t0=$(date +%s)
rtlat cyclictest -q -N -p 80 -i 5000 -b 1 -D 20 >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
t1=$(date +%s)
ids=$(sed -n 's/^# Thread Ids: //p' "$tmp/ct")
brk=$(sed -n 's/^# Break thread: //p' "$tmp/ct")
if [ $rc = 0 ] && [ -n "$brk" ] && [ "$(printf '%05d' "$brk")" = "$ids" ] &&
	grep -qE '^# Break value: [1-9][0-9]*$' "$tmp/ct" && [ $((t1 - t0)) -lt 10 ] &&
	! grep -q 'rtlat: threshold exceeded' "$tmp/ct"; then
	ktap_test_pass "cyclictest -b: break thread and value, exit 0"
else
	ktap_print_msg "exit $rc after $((t1 - t0)) s: $(cat "$tmp/ct" "$tmp/cterr")"
	ktap_test_fail "cyclictest -b: break thread and value, exit 0"
fi
# --fail-if: the native gate, its lines on stderr after cyclictest's
# output. Every activation is later than 1 ns: that gate fails, exit 4
# (where cyclictest exits 0); none is 1 s late: that one passes.
name="cyclictest --fail-if: a failed gate exits 4 with its line, one passes"
rtlat cyclictest -q -p 80 -i 5000 -D 1 --fail-if 'user.max>1ns' --fail-if 'user.p99>1000ms' >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
if [ $rc = 4 ] && grep -q '^T: 0 ' "$tmp/ct" && ! grep -q 'rtlat: gate' "$tmp/ct" &&
	grep -qE '^rtlat: gate user\.max>1ns: FAILED \([0-9.]+ us on CPU [0-9]+\)$' "$tmp/cterr" &&
	grep -q '^rtlat: gate user\.p99>1000ms: passed (' "$tmp/cterr"; then
	ktap_test_pass "$name"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/ct" "$tmp/cterr")"
	ktap_test_fail "$name"
fi
trace=/sys/kernel/tracing
if [ -w "$trace/trace_marker" ]; then
	echo 1 >"$trace/tracing_on"
	echo >"$trace/trace"
	rtlat cyclictest -q -N -p 80 -i 5000 -b 1 -D 20 --tracemark >"$tmp/ct" 2>"$tmp/cterr"
	rc=$?
	on=$(cat "$trace/tracing_on")
	if [ $rc = 0 ] && [ "$on" = 0 ] && grep -q 'hit latency threshold ([1-9][0-9]* > 1)' "$trace/trace"; then
		ktap_test_pass "cyclictest --tracemark: marker written, or refused without tracefs"
	else
		ktap_print_msg "exit $rc, tracing_on $on: $(grep -m3 'threshold' "$trace/trace") $(cat "$tmp/cterr")"
		ktap_test_fail "cyclictest --tracemark: marker written, or refused without tracefs"
	fi
	echo 1 >"$trace/tracing_on"
	echo >"$trace/trace"
else
	rtlat cyclictest -q -p 80 -b 10 --tracemark >"$tmp/ct" 2>"$tmp/cterr"
	rc=$?
	if [ $rc = 2 ] && grep -q -- '--tracemark cannot be honoured' "$tmp/cterr"; then
		ktap_test_pass "cyclictest --tracemark: marker written, or refused without tracefs"
	else
		ktap_print_msg "exit $rc: $(cat "$tmp/cterr")"
		ktap_test_fail "cyclictest --tracemark: marker written, or refused without tracefs"
	fi
fi
rtlat cyclictest -q -p 80 --frobnicate >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
rtlat cyclictest -q -p 80 -x >"$tmp/ct2" 2>"$tmp/cterr2"
rc2=$?
if [ $rc = 2 ] && grep -q "unknown option '--frobnicate'" "$tmp/cterr" && [ "$(wc -l <"$tmp/cterr")" = 1 ] &&
	[ $rc2 = 2 ] && grep -q '^rtlat cyclictest: -x cannot be honoured' "$tmp/cterr2" && [ ! -s "$tmp/ct" ]; then
	ktap_test_pass "cyclictest: unknown or unhonoured option refused, exit 2"
else
	ktap_print_msg "exit $rc and $rc2: $(cat "$tmp/cterr" "$tmp/cterr2")"
	ktap_test_fail "cyclictest: unknown or unhonoured option refused, exit 2"
fi
# As cyclictest: the PM QoS CPU DMA latency held at 0 while the run lasts
# (--latency: at that value), a line on standard output saying so, -q or
# not, and let go after; --default-system leaves it alone with
# cyclictest's WARN line. Without the file (CONFIG_CPU_IDLE off),
# cyclictest's warning, and the run goes on.
name="cyclictest: cpu_dma_latency held at 0 as cyclictest, or left with --default-system"
if [ -e /dev/cpu_dma_latency ]; then
	before=$(dma_latency)
	rtlat cyclictest -q -p 80 -D 20 --latency=7 >"$tmp/ct" 2>"$tmp/cterr" &
	p=$!
	rtrs_wait_session $p 20 >/dev/null
	# shellcheck disable=SC2010 # one process: ls -l shows where each fd points
	held=$(ls -l /proc/$p/fd/ 2>/dev/null | grep -c ' -> /dev/cpu_dma_latency$')
	during=$(dma_latency)
	kill $p
	wait $p
	rc=$?
	after=$(dma_latency)
	rtlat cyclictest -p 80 -l 10 >"$tmp/ct2" 2>"$tmp/cterr2"
	rc2=$?
	rtlat cyclictest -p 80 -l 10 --default-system >"$tmp/ct3" 2>"$tmp/cterr3"
	rc3=$?
	ktap_print_msg "cpu_dma_latency: $before us before, $during during (held open $held times), $after after"
	if [ $rc = 0 ] && [ "$held" = 1 ] && [ "$during" = 7 ] && [ "$before" != 7 ] && [ "$after" = "$before" ] &&
		grep -qx '# /dev/cpu_dma_latency set to 7us' "$tmp/ct" &&
		[ $rc2 = 0 ] && grep -qx '# /dev/cpu_dma_latency set to 0us' "$tmp/ct2" &&
		grep -q '^policy: fifo: loadavg: ' "$tmp/ct2" &&
		[ $rc3 = 0 ] && grep -qx 'WARN: not setting cpu_dma_latency from cyclictest' "$tmp/cterr3" &&
		! grep -q 'cpu_dma_latency set to' "$tmp/ct3"; then
		ktap_test_pass "$name"
	else
		ktap_print_msg "exit $rc, $rc2, $rc3: $(cat "$tmp/ct" "$tmp/cterr" "$tmp/ct2" "$tmp/cterr2" "$tmp/cterr3")"
		ktap_test_fail "$name"
	fi
else
	rtlat cyclictest -p 80 -l 10 >"$tmp/ct" 2>"$tmp/cterr"
	rc=$?
	if [ $rc = 0 ] && grep -qx 'WARN: stat /dev/cpu_dma_latency failed: No such file or directory' "$tmp/cterr" &&
		! grep -q 'cpu_dma_latency set to' "$tmp/ct" && grep -q '^policy: fifo: loadavg: ' "$tmp/ct"; then
		ktap_test_pass "$name"
	else
		ktap_print_msg "exit $rc: $(cat "$tmp/ct" "$tmp/cterr")"
		ktap_test_fail "$name"
	fi
fi
# SIGUSR2, as cyclictest: the status block into /dev/shm/cyclictest<PID>,
# the run goes on until it is ended, and the file goes with it.
# (A long run, ended by SIGTERM once the file has its block: a guest whose
# vCPU is starved may take seconds to write it.)
rtlat cyclictest -q -p 80 -D 120 >"$tmp/ct" 2>"$tmp/cterr" &
p=$!
rtrs_wait_session $p 20 >/dev/null
kill -USR2 $p
i=0
while [ $i -lt 40 ] && [ "$(wc -l <"/dev/shm/cyclictest$p" 2>/dev/null)" != 4 ]; do
	sleep 0.5
	i=$((i + 1))
done
cp "/dev/shm/cyclictest$p" "$tmp/rstat" 2>/dev/null
kill -TERM $p
wait $p
rc=$?
rule="#---------------------------"
if [ $rc = 0 ] && [ "$(wc -l <"$tmp/rstat")" = 4 ] && [ "$(sed -n 1p "$tmp/rstat")" = "$rule" ] &&
	[ "$(sed -n 2p "$tmp/rstat")" = "# cyclictest current status:" ] &&
	sed -n 3p "$tmp/rstat" | grep -qE '^T: 0 \( *[1-9][0-9]*\) P:80 I:1000 C: *[1-9][0-9]* Min:' &&
	[ "$(sed -n 4p "$tmp/rstat")" = "$rule" ] && [ ! -e "/dev/shm/cyclictest$p" ] &&
	grep -q '^T: 0 ' "$tmp/ct"; then
	ktap_test_pass "cyclictest SIGUSR2: the status block in /dev/shm, the run goes on"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/rstat" "$tmp/ct" "$tmp/cterr" 2>&1)"
	ktap_test_fail "cyclictest SIGUSR2: the status block in /dev/shm, the run goes on"
fi
# The JSON's return_code is the exit status, as rt-tests writes its own:
# 1 for a run cut short by a measuring thread that failed (its affinity
# changed while it waited: the device refuses the wait).
rtlat cyclictest -q -p 80 -a 0 -t 1 -D 20 --json "$tmp/c1.json" >"$tmp/ct" 2>"$tmp/cterr" &
p=$!
rtrs_wait_session $p 20 >/dev/null
tid=$(grep -lx 'rtlat-user/0' /proc/$p/task/*/comm 2>/dev/null | sed -n 's|^/proc/[0-9]*/task/\([0-9]*\)/comm$|\1|p')
[ -n "$tid" ] && taskset -p 3 "$tid" >/dev/null 2>&1
wait $p
rc=$?
if [ $rc = 1 ] && grep -q 'USER_WAIT' "$tmp/cterr" && grep -q '^  "return_code": 1,$' "$tmp/c1.json"; then
	ktap_test_pass "cyclictest --json: return_code is the exit status"
else
	ktap_print_msg "exit $rc, user thread ${tid:-not found}: $(cat "$tmp/cterr"; grep return_code "$tmp/c1.json" 2>&1)"
	ktap_test_fail "cyclictest --json: return_code is the exit status"
fi
rmmod rtlat

# The same tool drives /dev/rtedu0 (device-interrupt latency, rtedu).
if ko=$(rtrs_module rtedu); then
	loaded=0
	if ! rtrs_loaded rtedu; then
		# The rtedu.* parameters of the kernel command line, as modprobe would.
		# shellcheck disable=SC2046 # a parameter a word
		insmod "$ko" $(tr ' ' '\n' </proc/cmdline | sed -n 's/^rtedu\.//p') && loaded=1
		for _ in $(seq 50); do [ -e /dev/rtedu0 ] && break; sleep 0.1; done
	fi
	if [ -e /dev/rtedu0 ]; then
		rtlat run --device /dev/rtedu0 --duration 2s -q --json "$tmp/edu.json" >"$tmp/out" 2>&1
		rc=$?
		if [ $rc = 0 ] && rtlat check-json "$tmp/edu.json" >"$tmp/chk" 2>&1 &&
			has_stage thread "$tmp/edu.json"; then
			ktap_test_pass "run --device /dev/rtedu0: device-interrupt latency reported"
		else
			cat "$tmp/out" "$tmp/chk" 2>/dev/null | sed 's/^/# /'
			ktap_test_fail "run --device /dev/rtedu0: device-interrupt latency reported"
		fi
	else
		rtrs_skip "run --device /dev/rtedu0: device-interrupt latency reported" "no edu device"
	fi
	[ $loaded = 1 ] && rmmod rtedu
else
	rtrs_skip "run --device /dev/rtedu0: device-interrupt latency reported" "rtedu not built (needs Linux >= 7.3)"
fi
rm -rf "$tmp"
ktap_finished
