#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The client library's samples (samples/rtlat_loop.c with
# include/rtlat/client.h, samples/rust/rtlat_loop with tools/rtlat-client):
# an application's own periodic loop as the user stage, one iteration made
# slow on purpose. That iteration must come back as a deadline miss with its
# response time, and the misses STATUS counts must be the records flagged.

DIR=$(dirname "$(readlink -f "$0")")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/rtrs_lib.sh"

# 20 ms periods, a 5 ms deadline, 200 us of work; iteration 40 works
# 10 ms: its response (wake-up latency + 10 ms) misses the deadline and
# still comes 10 ms before the next period, even in a slow TCG guest.
PERIOD_US=20000
DEADLINE_US=5000
SLOW_US=10000

rtrs_start
if ! command -v rtlat_loop_rs >/dev/null || [ ! -x "$DIR/rtlat_loop" ] || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "the samples (rtlat_loop, rtlat_loop_rs) or rtlat.ko not installed"
fi
[ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ] || rtrs_skip_all "needs two CPUs"
ktap_set_plan 4
tmp=$(mktemp -d)
rmmod rtlat 2>/dev/null
insmod "$mod" || rtrs_skip_all "cannot load $mod"

# slow_missed NAME OUT: the slow iteration (its seq from OUT's "slow
# iteration" line) is among OUT's "miss seq S response_us R" lines with R
# at least SLOW_US. counted NAME OUT: the miss lines, one per flagged
# record, number STATUS's deadline_misses, and each is a miss (a response
# over the deadline, or none). What was found goes to stderr.
slow_missed()
{
	seq=$(sed -n 's/^rtlat_loop: slow iteration 40 seq \([0-9]*\)$/\1/p' "$2")
	resp=$(sed -n "s/^miss seq $seq response_us \([0-9]*\)\$/\1/p" "$2")
	if [ -n "$seq" ] && [ -n "$resp" ] && [ "$resp" -ge $SLOW_US ]; then
		return 0
	fi
	echo "# $1: slow iteration seq '$seq', its response '$resp' us:" >&2
	sed 's/^/#   /' "$2" >&2
	return 1
}
counted()
{
	misses=$(sed -n 's/^rtlat_loop: iterations .* deadline_misses \([0-9]*\)$/\1/p' "$2")
	lines=$(grep -c '^miss seq ' "$2")
	early=$(awk -v d=$DEADLINE_US '$1 == "miss" && $5 ~ /^[0-9]+$/ && $5 < d' "$2" | wc -l)
	echo "# $1: STATUS deadline_misses '$misses', flagged records $lines, $early of them within the deadline" >&2
	[ -n "$misses" ] && [ "$misses" = "$lines" ] && [ "$lines" -ge 1 ] && [ "$early" = 0 ]
}

for prog in "$DIR/rtlat_loop:C" "rtlat_loop_rs:Rust"; do
	name=${prog##*:}
	"${prog%:*}" --cpu 1 --period-us $PERIOD_US --deadline-us $DEADLINE_US --iterations 60 \
		--work-us 200 --slow-at 40 --slow-us $SLOW_US >"$tmp/$name.out" 2>&1
	rc=$?
	[ $rc = 0 ] || echo "# $name sample: exit $rc" >&2
	rtrs_check "$name sample: the slow iteration is a deadline miss, with its response time" \
		slow_missed "$name" "$tmp/$name.out"
	rtrs_check "$name sample: STATUS counts the misses the records flag" \
		counted "$name" "$tmp/$name.out"
done

rmmod rtlat
rm -rf "$tmp"
ktap_finished
