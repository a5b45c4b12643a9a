#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rtlat monitor in the guest: a short soak under load (a snapshot every
# second, none missing, the deltas adding up to the kernel's counts, every
# record accounted for, the memory flat, the tool's threads on the
# housekeeping CPU), its signals (SIGUSR1's summary, SIGHUP reopening the
# history, SIGTERM's last snapshot and exit 0), the textfile for
# node_exporter, threshold trips that run their actions and go on (or stop
# with --stop-at-trip), and the one-line errors of a device another run
# holds and of --listen on a kernel without networking.
#
# Global state it changes (Documentation/testing.rst, "In a test farm"):
# loads and unloads rtlat.ko; trace instances (its trips' traces).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

rtrs_start
if ! command -v rtlat >/dev/null || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "rtlat tool or rtlat.ko not installed"
fi
ncpu=$(grep -c ^processor /proc/cpuinfo)
[ "$ncpu" -ge 2 ] || rtrs_skip_all "needs two CPUs (one measured, one for housekeeping)"
ktap_set_plan 13
tmp=$(mktemp -d)
rtrs_kill_at_exit
rmmod rtlat 2>/dev/null
insmod "$mod" || rtrs_skip_all "cannot load $mod"

# Send SIGTERM to background job $1 and wait for it; one that has not
# ended 30 s later is killed (exit status 137): a hang fails a test, not
# the whole program.
term()
{
	# shellcheck disable=SC3043 # busybox ash and dash have local
	local trc watchdog
	kill -TERM "$1"
	( sleep 30; kill -KILL "$1" 2>/dev/null ) &
	watchdog=$!
	wait "$1"
	trc=$?
	kill $watchdog 2>/dev/null
	wait $watchdog 2>/dev/null
	return $trc
}

# Wait until monitor $2, writing its stderr to $1, has configured the
# device (its first line), 20 s at most; true if it has.
started()
{
	# shellcheck disable=SC3043 # the same
	local i=0
	while ! grep -q '^rtlat monitor: CPUs' "$1" && kill -0 "$2" 2>/dev/null && [ $i -lt 20 ]; do
		sleep 1
		i=$((i + 1))
	done
	grep -q '^rtlat monitor: CPUs' "$1"
}

# The value of the numeric JSON field $1 in each line of stdin.
field()
{
	sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p"
}

# ---- The soak: CPU 1 measured under load, CPU 0 for the tool; 13 s here.
# RTLAT_SOAK_SECONDS and RTLAT_SOAK_LOAD (a command run again and again,
# e.g. 'hackbench -l 10000 -g 4') make it the long soak of
# Documentation/rtlat-monitor.rst; without a load command, busy loops.
soak=${RTLAT_SOAK_SECONDS:-8}
[ "$soak" -ge 8 ] || soak=8
load()
{
	if [ -n "${RTLAT_SOAK_LOAD:-}" ]; then
		while :; do $RTLAT_SOAK_LOAD >/dev/null 2>&1 || sleep 1; done
	else
		while :; do :; done
	fi
}
load & l1=$!
load & l2=$!
bg="$l1 $l2"
h=$tmp/h.jsonl
mkdir "$tmp/tf"
rtlat monitor --cpus 1 --interval 1 --history "$h" --history-size 1G --textfile "$tmp/tf" >"$tmp/out" 2>"$tmp/err" &
pid=$!
bg="$bg $pid"
started "$tmp/err" $pid
sleep 4
kill -USR1 $pid
sleep 2
# A rotation by someone else: the history is moved away, SIGHUP reopens it.
mv "$h" "$tmp/h.old"
kill -HUP $pid
sleep $((soak - 6))
term $pid
rc=$?
kill $l1 $l2
wait $l1 $l2 2>/dev/null
cat "$tmp/h.old" "$h" >"$tmp/all" 2>/dev/null
n=$(wc -l <"$tmp/all")
last=$(tail -n 1 "$tmp/all")
ktap_print_msg "$n snapshots; $(head -n 1 "$tmp/err")"

rtrs_check "SIGTERM: the last snapshot written, exit 0" \
	test $rc = 0 -a -n "$(echo "$last" | grep '"final":true')"

# Every snapshot present: seq 1..n over both files, one a second or so.
seqs=$(sed -n 's/.*"seq":\([0-9]*\),"time".*/\1/p' "$tmp/all" | tr '\n' ' ')
want=$(seq 1 "$n" | tr '\n' ' ')
if [ "$n" -ge $((soak * 6 / 10)) ] && [ "$seqs" = "$want" ]; then
	ktap_test_pass "a snapshot every interval, none missing"
else
	ktap_print_msg "seqs: $seqs"
	ktap_test_fail "a snapshot every interval, none missing"
fi

if grep -q '^# rtlat monitor: elapsed 00:00:0[3-9], 1 session(s), 0 trip(s)' "$tmp/err" &&
	grep -qE '^# cpu +1 irq +: count [1-9][0-9]* max [0-9]+ p99 [0-9]+' "$tmp/err" &&
	[ -s "$tmp/h.old" ] && [ -s "$h" ] && [ "$(tail -n 1 "$tmp/h.old" | field seq)" ]; then
	ktap_test_pass "SIGUSR1: the summary on stderr; SIGHUP: the history reopened"
else
	ktap_print_msg "stderr: $(cat "$tmp/err")"
	ktap_test_fail "SIGUSR1: the summary on stderr; SIGHUP: the history reopened"
fi

# The deltas add up to the kernel's count at the end (its STATS, read after
# the session stopped), and the textfile says the same.
sum=$(sed -n 's/.*"stages":{"irq":{"count":\([0-9]*\),.*/\1/p' "$tmp/all" | awk '{ s += $1 } END { print s + 0 }')
total=$(echo "$last" | field total_count)
prom=$(sed -n 's/^rtlat_activations_total{cpu="1",stage="irq"} \([0-9]*\)$/\1/p' "$tmp/tf/rtlat.prom")
ktap_print_msg "deltas $sum, total $total, textfile $prom"
rtrs_check "the deltas add up to the kernel's count, the textfile's too" \
	test "$sum" -gt 0 -a "$sum" = "$total" -a "$sum" = "$prom"

# Every record accounted for: produced == delivered + dropped + queued, and
# the tool read all it was delivered (nothing queued after SIGTERM).
tot=$(echo "$last" | sed -n 's/.*"totals":{"produced":\([0-9]*\),"delivered":\([0-9]*\),"dropped":\([0-9]*\),"queued":\([0-9]*\),"read":\([0-9]*\).*/\1 \2 \3 \4 \5/p')
# shellcheck disable=SC2086 # its numbers, a word each
set -- $tot
ktap_print_msg "produced ${1:-?} delivered ${2:-?} dropped ${3:-?} queued ${4:-?} read ${5:-?}"
rtrs_check "produced == delivered + dropped + queued, every delivered record read" \
	test -n "$tot" -a "${1:-0}" -gt 0 -a "${1:-0}" = $((${2:-0} + ${3:-0} + ${4:-0})) -a "${4:-1}" = 0 -a "${5:-0}" = "${2:-1}"

# The memory does not grow: the RSS at the end within 10 % of the third
# second's.
r3=$(sed -n 3p "$tmp/all" | field rss_kb)
rn=$(echo "$last" | field rss_kb)
ktap_print_msg "rss: ${r3:-?} KiB after 3 s, ${rn:-?} KiB at the end"
rtrs_check "the memory stays flat (RSS within 10 %)" \
	test -n "$r3" -a -n "$rn" -a "$((${rn:-0} * 10))" -le "$((${r3:-0} * 11))"

rtrs_check "the tool's threads stay on the housekeeping CPU" \
	test "$(grep -c '"ran_on":\[0\]' "$tmp/all")" = "$n"

# The textfile: a histogram whose +Inf bucket is its count, cumulative
# buckets, the info metric; no temporary file left.
awk '
	/^rtlat_latency_seconds_bucket\{cpu="1",stage="irq",le=/ {
		if ($2 + 0 < prev) bad = 1; prev = $2 + 0; last = $2 }
	/^rtlat_latency_seconds_count\{cpu="1",stage="irq"\}/ { count = $2 }
	/^rtlat_system_info\{.*metrics_version="1"\} 1$/ { info = 1 }
	END { exit !(info && !bad && count > 0 && last == count) }' "$tmp/tf/rtlat.prom"
ok=$?
rtrs_check "--textfile: the histogram and counters in Prometheus' format" \
	test $ok = 0 -a "$(ls -A "$tmp/tf")" = rtlat.prom

# ---- Threshold trips: every activation exceeds 1 us. The actions run and
# the monitor goes on (a new session each time) and still ends at its
# --duration, though every session trips; --stop-at-trip exits 3.
timeout 60 rtlat monitor --cpus 1 --interval 1 --duration 3s --threshold irq=1 --history "$tmp/t.jsonl" \
	--on-threshold "shell,command=echo \$RTLAT_TRIP_NUMBER \$RTLAT_TRIP_STAGE >>$tmp/trips" \
	--on-threshold "trace,file=$tmp/trace" >"$tmp/out" 2>"$tmp/err"
rc=$?
sleep 1 # the last command started
trips=$(tail -n 1 "$tmp/t.jsonl" | field trips_total)
sessions=$(tail -n 1 "$tmp/t.jsonl" | field sessions)
ktap_print_msg "exit $rc, $trips trips, $sessions sessions, $(wc -l <"$tmp/trips" 2>/dev/null) commands run"
if [ -e /sys/kernel/tracing/tracing_on ]; then
	# shellcheck disable=SC2012 # names of ours, counted
	traced=$(ls "$tmp"/trace.* 2>/dev/null | wc -l)
else
	traced=$(grep -c 'trace: no tracefs mounted' "$tmp/err")
fi
# A trip at the end starts no session: one a trip, and maybe the last one.
if [ $rc = 0 ] && [ "${trips:-0}" -ge 2 ] && [ "$sessions" -ge "$trips" ] && [ "$sessions" -le $((trips + 1)) ] &&
	[ "$(grep -c ' irq$' "$tmp/trips")" = "$trips" ] && [ "$traced" -ge 1 ] &&
	grep -q '^rtlat monitor: trip 2: CPU 1 (irq stage)' "$tmp/err"; then
	ktap_test_pass "threshold: the actions run at each trip and the monitor goes on"
else
	ktap_print_msg "$(head -n 5 "$tmp/err")"
	ktap_test_fail "threshold: the actions run at each trip and the monitor goes on"
fi
timeout 60 rtlat monitor --cpus 1 --interval 1 --threshold irq=1 --stop-at-trip --history "$tmp/s.jsonl" >"$tmp/out" 2>"$tmp/err"
rc=$?
rtrs_check "--stop-at-trip: exit 3 at the first trip, its last snapshot written" \
	test $rc = 3 -a "$(tail -n 1 "$tmp/s.jsonl" | field trips_total)" = 1

# ---- One-line errors.
rtlat monitor --cpus 1 --history "$tmp/a.jsonl" >"$tmp/out" 2>&1 &
pid=$!
bg="$bg $pid"
started "$tmp/out" $pid
timeout 20 rtlat monitor --cpus 1 >"$tmp/out2" 2>&1
rc=$?
term $pid
ktap_print_msg "$(cat "$tmp/out2")"
rtrs_check "a device another monitor holds: exit 1, one line naming it" \
	test $rc = 1 -a "$(grep -c 'device busy.*open by [0-9]* (rtlat)' "$tmp/out2")" = 1 -a "$(grep -vc WARNING "$tmp/out2")" = 1

# --listen: without networking in the kernel (the test kernels have none)
# the socket's error; with it, a second monitor on the same port.
rtlat monitor --cpus 1 --listen 19101 >"$tmp/out2" 2>&1 &
pid=$!
bg="$bg $pid"
if started "$tmp/out2" $pid; then
	timeout 20 rtlat monitor --cpus 1 --listen 19101 >"$tmp/out" 2>&1
	rc=$?
	want='address already in use'
	term $pid
else
	wait $pid
	rc=$?
	cp "$tmp/out2" "$tmp/out"
	want='this kernel has no TCP/IP networking'
fi
ktap_print_msg "$(grep -v WARNING "$tmp/out")"
rtrs_check "--listen: a port in use or no networking: exit 1, one line naming the cause" \
	test $rc = 1 -a "$(grep -c "^rtlat: error: --listen 127.0.0.1:19101: .*$want" "$tmp/out")" = 1 \
	-a "$(grep -vc WARNING "$tmp/out")" = 1

rtlat monitor --on-threshold bogus >"$tmp/out" 2>&1
rc=$?
rtrs_check "a refused command line: exit 2, naming the bad part" \
	test $rc = 2 -a "$(grep -c "unknown action 'bogus'" "$tmp/out")" = 1
rmmod rtlat
rm -rf "$tmp"
ktap_finished
