#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The client library's samples (samples/rtlat_loop.c with
# include/rtlat/client.h, samples/rust/rtlat_loop with tools/rtlat-client):
# an application's own periodic loop as the user stage, one iteration made
# slow on purpose. That iteration must come back as a deadline miss with its
# response time, and the misses STATUS counts must be the records flagged.
# Then `rtlat run --attach` watches a running application's session.
#
# Global state it changes: loads and unloads rtlat.ko.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

# 40 ms periods, a 5 ms deadline, 200 us of work. In the samples' run,
# 100 ms periods and iteration 20 works 10 ms: its response (wake-up
# latency + 10 ms) misses the deadline and still comes 90 ms before the
# next period, even in a slow TCG guest that two guests share (with 20 ms
# periods an arm64 guest's came after once, with 40 ms a riscv64 guest's).
PERIOD_US=40000
SLOW_PERIOD_US=100000
DEADLINE_US=5000
SLOW_US=10000

rtrs_start
if ! command -v rtlat_loop_rs >/dev/null || [ ! -x "$DIR/rtlat_loop" ] || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "the samples (rtlat_loop, rtlat_loop_rs) or rtlat.ko not installed"
fi
[ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ] || rtrs_skip_all "needs two CPUs"
ktap_set_plan 7
tmp=$(mktemp -d)
rmmod rtlat 2>/dev/null
insmod "$mod" || rtrs_skip_all "cannot load $mod"

# slow_missed NAME OUT: the slow iteration (its seq from OUT's "slow
# iteration" line) is among OUT's "miss seq S response_us R" lines with R
# at least SLOW_US. counted NAME OUT: the miss lines, one per flagged
# record, number STATUS's deadline_misses, and each is a miss (a response
# over the deadline, or none). What was found goes to stderr.
# shellcheck disable=SC2317 # called through rtrs_check
slow_missed()
{
	seq=$(sed -n 's/^rtlat_loop: slow iteration 20 seq \([0-9]*\)$/\1/p' "$2")
	resp=$(sed -n "s/^miss seq $seq response_us \([0-9]*\)\$/\1/p" "$2")
	if [ -n "$seq" ] && [ -n "$resp" ] && [ "$resp" -ge "$SLOW_US" ]; then
		return 0
	fi
	echo "# $1: slow iteration seq '$seq', its response '$resp' us:" >&2
	sed 's/^/#   /' "$2" >&2
	return 1
}
# shellcheck disable=SC2317 # called through rtrs_check
counted()
{
	misses=$(sed -n 's/^rtlat_loop: iterations .* deadline_misses \([0-9]*\)$/\1/p' "$2")
	lines=$(grep -c '^miss seq ' "$2")
	early=$(awk -v d="$DEADLINE_US" '$1 == "miss" && $5 ~ /^[0-9]+$/ && $5 < d' "$2" | wc -l)
	echo "# $1: STATUS deadline_misses '$misses', flagged records $lines, $early of them within the deadline" >&2
	[ -n "$misses" ] && [ "$misses" = "$lines" ] && [ "$lines" -ge 1 ] && [ "$early" = 0 ]
}

for prog in "$DIR/rtlat_loop:C" "rtlat_loop_rs:Rust"; do
	name=${prog##*:}
	"${prog%:*}" --cpu 1 --period-us $SLOW_PERIOD_US --deadline-us $DEADLINE_US --iterations 30 \
		--work-us 200 --slow-at 20 --slow-us $SLOW_US >"$tmp/$name.out" 2>&1
	rc=$?
	[ $rc = 0 ] || echo "# $name sample: exit $rc" >&2
	rtrs_check "$name sample: the slow iteration is a deadline miss, with its response time" \
		slow_missed "$name" "$tmp/$name.out"
	rtrs_check "$name sample: STATUS counts the misses the records flag" \
		counted "$name" "$tmp/$name.out"
done

# A stage's count in JSON report $2 is not 0.
# shellcheck disable=SC2317 # called through rtrs_check
has_stage()
{
	grep -A1 "^ *\"$1\": {\$" "$2" | grep -qE '"count": [1-9]'
}

# app ITERATIONS: the C sample on CPU 1 in the background ($app), once its
# session runs (its fdinfo says state 2; 30 s at most).
app()
{
	"$DIR/rtlat_loop" --cpu 1 --period-us $PERIOD_US --deadline-us $DEADLINE_US \
		--iterations "$1" --work-us 200 >"$tmp/app.out" 2>&1 &
	app=$!
	rtrs_wait_session $app 30 >/dev/null
}

# attached NAME REASON WENT_ON: rtlat and the application exited 0 ($arc,
# $apprc), and report $tmp/NAME.json is that session's (its CPU, period,
# deadline, user and response stages), ended by REASON, saying that the
# session went on after the tool left if WENT_ON is 1 (and not saying so
# otherwise).
# shellcheck disable=SC2317 # called through rtrs_check
attached()
{
	if [ "$arc" = 0 ] && [ "$apprc" = 0 ] && rtlat check-json "$tmp/$1.json" >"$tmp/chk" 2>&1 &&
		grep -q "\"reason\": \"$2\"" "$tmp/$1.json" &&
		grep -q "\"period_us\": $PERIOD_US.0" "$tmp/$1.json" &&
		grep -q "\"deadline_us\": $DEADLINE_US.0" "$tmp/$1.json" &&
		grep -q '"cpu": 1,' "$tmp/$1.json" && ! grep -q '"cpu": 0,' "$tmp/$1.json" &&
		has_stage user "$tmp/$1.json" && has_stage response "$tmp/$1.json" &&
		[ "$(grep -c '"went_on": true' "$tmp/$1.json")" = "$3" ]; then
		return 0
	fi
	echo "# $1: exit $arc, the application's $apprc" >&2
	sed 's/^/#   /' "$tmp/$1.out" "$tmp/chk" "$tmp/app.out" >&2
	grep -E '"(reason|period_us|cpu)"' "$tmp/$1.json" 2>/dev/null | sed 's/^/#   /' >&2
	return 1
}

# --attach for 1 s to the C sample's 5 s session: that session's report,
# the application going on unharmed; a gate on its response time taken
# (the session's stages, not the tool's options, say what is measured).
app 125
rtlat run --attach -d 1s -q --fail-if 'response.max>60000ms' --json "$tmp/attach.json" >"$tmp/attach.out" 2>&1
arc=$?
rtrs_keep "$tmp/attach.json" attach.json
wait $app
apprc=$?
rtrs_check "run --attach -d 1s: the application's session, live; the application goes on" \
	attached attach duration 1
# --attach until the application ends its session (it stops, then closes
# it): the report of all the tool read, to the end.
app 75
timeout 60 rtlat run --attach -q --json "$tmp/ended.json" >"$tmp/ended.out" 2>&1
arc=$?
wait $app
apprc=$?
rtrs_check "run --attach: to the end of the application's session (stop.reason ended)" \
	attached ended ended 0
rtlat run --attach -d 1s -q >"$tmp/none.out" 2>&1
arc=$?
rtrs_check "run --attach without a running session: exit 1, one line saying so" \
	test $arc = 1 -a "$(wc -l <"$tmp/none.out")" = 1 -a -n "$(grep 'no running session to attach to' "$tmp/none.out")"

rmmod rtlat
rm -rf "$tmp"
ktap_finished
