#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The rtlat command-line tool in the guest: each mode runs, the JSON report
# is valid and consistent with the module's statistics, the SVG is produced
# and well-formed, a forced threshold exits 2, a missing module exits 1 with
# a message saying how to load it; --warm-up reports only the measured part;
# rtlat cyclictest speaks cyclictest's options and formats.

DIR=$(dirname "$(readlink -f "$0")")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/rtrs_lib.sh"

# Pass or fail test $1 by the command that follows, run with its arguments as
# given. (ktap_test_result runs an unquoted $@: a quoted argument with a space,
# a grep pattern, splits into words, and the check tests something else.)
check()
{
	desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

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

rtrs_start
if ! command -v rtlat >/dev/null || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "rtlat tool or rtlat.ko not installed"
fi
ktap_set_plan 26
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

# Exit status 2 is a threshold trip: a refused command line is an error (1).
rtlat run --period 10 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "not in 50" "$tmp/out"; then
	ktap_test_pass "bad argument: exit 1 with the reason"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "bad argument: exit 1 with the reason"
fi

insmod "$mod"
rtlat run --duration 2s -q --json "$tmp/run.json" --svg "$tmp/run.svg" >"$tmp/out" 2>&1
rc=$?
ktap_print_msg "$(head -3 "$tmp/out")"
check "run: exit 0" [ $rc = 0 ]
# cyclictest's T: line, with the measuring thread's tid (rtlat/0).
check "run: cyclictest-shaped summary with the thread's tid" grep -qE '^T: 0 \( *[1-9][0-9]*\)' "$tmp/out"
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

# 5 ms periods: a waiter later than a period (riscv64 under TCG) finds its
# record completed without its user stage.
rtlat run --user --period 5000 --duration 2s -q --json "$tmp/user.json" >"$tmp/out" 2>&1
rc=$?
check "run --user: exit 0" [ $rc = 0 ]
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
rtlat run --stages irq --user --duration 1s -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "needs the thread stage" "$tmp/out"; then
	ktap_test_pass "run --stages irq --user: refused with a reason"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "run --stages irq --user: refused with a reason"
fi

rtlat hist --duration 1s -q >"$tmp/hist" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^# RTLA timerlat histogram' "$tmp/hist" && grep -q '^count:' "$tmp/hist" &&
	grep -q '^p99.9999:' "$tmp/hist"; then
	ktap_test_pass "hist: rtla-shaped histogram with percentiles"
else
	ktap_print_msg "exit $rc: $(head -5 "$tmp/hist")"
	ktap_test_fail "hist: rtla-shaped histogram with percentiles"
fi

rtlat run --duration 20s --threshold thread=1 -q --json "$tmp/trip.json" >"$tmp/out" 2>&1
rc=$?
ktap_print_msg "$(grep threshold "$tmp/out")"
check "threshold exceeded: exit 2" [ $rc = 2 ]
check "threshold: the JSON says why it stopped" grep -q '"reason": "threshold"' "$tmp/trip.json"

rtlat run --user --period 5000 --duration 20s --threshold user=1 -q >"$tmp/out" 2>&1
rc=$?
check "user threshold exceeded: exit 2" [ $rc = 2 ]

rtlat run --duration 1s --cpus 999 -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "not online" "$tmp/out"; then
	ktap_test_pass "offline CPU refused: exit 1"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out")"
	ktap_test_fail "offline CPU refused: exit 1"
fi

# --warm-up: a session of its own before the measured one, so the report's
# counters (produced, delivered, dropped, samples) agree, and what it reports
# (the time of each stage's maximum, on the clock of /proc/uptime) comes
# after the warm-up.
t0=$(cut -d' ' -f1 /proc/uptime)
rtlat run --warm-up 1 --duration 3s -q --json "$tmp/warm.json" --svg "$tmp/warm.svg" >"$tmp/out" 2>&1
rc=$?
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
if [ $rc = 2 ] && grep -q '"reason": "threshold"' "$tmp/warmtrip.json" &&
	rtlat check-json "$tmp/warmtrip.json" >"$tmp/chk" 2>&1 &&
	awk -v e="$e" 'BEGIN { exit !(e != "" && e >= 5) }'; then
	ktap_test_pass "run --warm-up: thresholds armed only after it"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/out" "$tmp/chk" 2>/dev/null)"
	ktap_test_fail "run --warm-up: thresholds armed only after it"
fi

# rtlat cyclictest: cyclictest's command line and formats on the user stage.
# As cyclictest, -q with -h prints the histogram and no T: line.
rtlat cyclictest -q -D 2 -i 1000 -p 80 -m -a 0 -t 1 -h 100 --json "$tmp/c.json" >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^# Histogram$' "$tmp/ct")" = 1 ] &&
	[ "$(grep -cE '^[0-9]{6} [0-9]{6}$' "$tmp/ct")" = 100 ] &&
	grep -qE '^# Total: [0-9]{9}$' "$tmp/ct" && grep -qE '^# Min Latencies: [0-9]{5,}$' "$tmp/ct" &&
	grep -qE '^# Avg Latencies: [0-9]{5,}$' "$tmp/ct" && grep -qE '^# Max Latencies: [0-9]{5,}$' "$tmp/ct" &&
	grep -qE '^# Histogram Overflows: [0-9]{5,}$' "$tmp/ct" &&
	grep -q '^# Histogram Overflow at cycle number:$' "$tmp/ct" && grep -qE '^# Thread 0:( [0-9]{5,})*( # [0-9]{5,} others)?$' "$tmp/ct" &&
	! grep -q '^T:' "$tmp/ct"; then
	ktap_test_pass "cyclictest -q -h: histogram block, no T: line"
else
	ktap_print_msg "exit $rc: $(head -3 "$tmp/ct") $(tail -9 "$tmp/ct") $(cat "$tmp/cterr")"
	ktap_test_fail "cyclictest -q -h: histogram block, no T: line"
fi
# The keys of rt-tests' JSON in its order (bucket and thread numbers aside),
# their types, and its histogram against the printed one: Total + Overflows
# = cycles.
keys=$(sed -n 's/^ *"\([^"]*\)":.*/\1/p' "$tmp/c.json" 2>/dev/null | grep -vE '^[0-9]+$' | tr '\n' ' ')
jsum=$(awk -F': ' '/^        "[0-9]+": [0-9]+,?$/ { sub(",", "", $2); s += $2 } END { print s + 0 }' "$tmp/c.json" 2>/dev/null)
cycles=$(sed -n 's/^      "cycles": \([0-9]*\),$/\1/p' "$tmp/c.json" 2>/dev/null)
total=$(awk '/^# Total:/ { print $3 + 0 }' "$tmp/ct")
over=$(awk '/^# Histogram Overflows:/ { print $4 + 0 }' "$tmp/ct")
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
	ktap_test_fail "cyclictest --json: rt-tests' keys, types and totals"
fi
# print_stat's widths: C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld; one line
# per thread, thread N on the N-th CPU.
rtlat cyclictest -q -D 1 -p 80 -t 2 -d 0 >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
re='^T: [01] \( *[1-9][0-9]*\) P:80 I:1000 C:[ 0-9]{7} Min:[ 0-9]{7} Act:[ 0-9]{5} Avg:[ 0-9]{5} Max:[ 0-9]{8}$'
if [ $rc = 0 ] && [ "$(grep -cE "$re" "$tmp/ct")" = 2 ] && [ "$(wc -l <"$tmp/ct")" = 2 ] &&
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
# Unlike cyclictest (which holds it at 0), the PM QoS CPU DMA latency is left
# alone unless --latency asks, and standard error says so.
rtlat cyclictest -p 80 -l 10 >"$tmp/ct" 2>"$tmp/cterr"
rc=$?
if [ $rc = 0 ] && grep -q 'cpu_dma_latency left as it is' "$tmp/cterr" &&
	! grep -q 'cpu_dma_latency set to' "$tmp/ct" && grep -q '^policy: fifo: loadavg: ' "$tmp/ct"; then
	ktap_test_pass "cyclictest: cpu_dma_latency left alone, and said"
else
	ktap_print_msg "exit $rc: $(cat "$tmp/ct" "$tmp/cterr")"
	ktap_test_fail "cyclictest: cpu_dma_latency left alone, and said"
fi
rmmod rtlat

# The same tool drives /dev/rtedu0 (device-interrupt latency, rtedu).
if ko=$(rtrs_module rtedu); then
	loaded=0
	if ! rtrs_loaded rtedu; then
		# The rtedu.* parameters of the kernel command line, as modprobe would.
		insmod "$ko" $(tr ' ' '\n' </proc/cmdline | sed -n 's/^rtedu\.//p') && loaded=1
		for i in $(seq 50); do [ -e /dev/rtedu0 ] && break; sleep 0.1; done
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
		ktap_test_skip "run --device /dev/rtedu0: no edu device"
	fi
	[ $loaded = 1 ] && rmmod rtedu
else
	ktap_test_skip "run --device /dev/rtedu0: rtedu not built (needs Linux >= 7.3)"
fi
rm -rf "$tmp"
ktap_finished
