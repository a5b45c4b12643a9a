#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rtlat's front ends beside the real tools, in one boot: the real cyclictest
# and rtla (every guest that runs this test has them, scripts/vmtest) and `rtlat cyclictest`,
# `rtlat timerlat top|hist` run with the same options, and what they write
# compared by its shape (tests/rtrs_shape.sh): the same lines, headers, rows
# and columns, numbers aside, and for JSON the same key paths and value
# types; and the same exit status. Whatever parses the real tool's output
# must accept rtlat's. A front end that is missing fails its cases; a
# machine without the real tools skips the test.
#
# Global state it changes (Documentation/testing.rst, "In a test farm"):
# loads and unloads rtlat.ko; the timerlat tracer (rtla sets the global
# current_tracer); /dev/cpu_dma_latency while cyclictest runs.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"
# shellcheck source=rtrs_shape.sh
. "$DIR/rtrs_shape.sh"

# Each run is bounded (riscv64 under TCG is the slowest).
BOUND=120

rtrs_start
# Without the real tools (a machine without rt-tests or rtla) or rtlat
# there is nothing to compare: a skip, with what is missing.
for t in cyclictest rtla rtlat; do
	command -v $t >/dev/null || rtrs_skip_all "no $t on PATH (the real cyclictest and rtla are compared with rtlat)"
done
ktap_set_plan 9
tmp=$(mktemp -d)
# (A process can cost much on a debug kernel under TCG: what needs none is
# done by the shell.)
read -r t_all _ </proc/uptime
nl='
'

# Run $1 (standard output $tmp/$1.out, error .err, exit status .rc) with
# the command that follows. The real tool's run and rtlat's go one after
# the other, never at the same time: where an activation costs more than
# its period (riscv64 under TCG), one tool's SCHED_FIFO thread that keeps
# missing its period starves the other's of the same priority on that CPU,
# which then has no sample, and a shape that depends on the data (a
# thread's min still cyclictest's 1000000, an avg "-nan" in its JSON).
run()
{
	name=$1
	shift
	read -r t0 _ </proc/uptime
	# (SIGINT, as a user stops them: rtla then restores the tracer.)
	timeout -s INT -k 10 "$BOUND" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	read -r t1 _ </proc/uptime
	echo "$rc" >"$tmp/$name.rc"
	since "$t0" "$t1"
	echo "$name: $* (exit $rc, $took s)" >>"$tmp/times"
}

# $took: the seconds from uptime $1 to uptime $2 (hundredths in both).
since()
{
	set -- $((${2%.*}${2#*.} - ${1%.*}${1#*.}))
	took=$(($1 / 100)).$(($1 / 10 % 10))
}

# The first lines of file $1 as ktap messages.
show()
{
	sed -n "1,${2:-6}s/^/# /p" "$1"
}

# Whether rtlat has the front end of the real tool's command $*
# (cyclictest, rtla timerlat top, ...): its --help exits as the real
# tool's does (0 for cyclictest, 129 for rtla). If not, why is in $missing.
front_end()
{
	"$@" --help >/dev/null 2>&1
	want=$?
	[ "$1" = rtla ] && shift
	rtlat "$@" --help >"$tmp/fe.out" 2>&1
	rc=$?
	[ $rc = $want ] && return 0
	read -r first <"$tmp/fe.out"
	missing="rtlat $*: no such front end (--help exits $rc, the real tool's $want: $first)"
	return 1
}

# Case $1: the real tool's run $2 against rtlat's run $3 ("" if the front
# end is missing: $missing says why), by the shape (shape_compare) of kind
# $4 (text: standard output; json: files $tmp/$2.json and $tmp/$3.json);
# the real tool's output must match the extended regex $5 (it wrote what
# the case compares); $6 the awk regex of list lines, $7 that of rows that
# may repeat any number of times (shape_compare).
compare()
{
	desc=$1 peer=$2 mine=$3 kind=$4 anchor=$5 list=${6:-} rows=${7:-}
	read -r prc <"$tmp/$peer.rc"
	ext=out
	[ "$kind" = json ] && ext=json
	if [ "$prc" != 0 ]; then
		echo "# the real tool failed (exit $prc):"
		show "$tmp/$peer.err"
		show "$tmp/$peer.out"
		ktap_test_fail "$desc"
		return
	fi
	if ! grep -qE "$anchor" "$tmp/$peer.$ext"; then
		echo "# the real tool's output has no /$anchor/:"
		show "$tmp/$peer.$ext"
		ktap_test_fail "$desc"
		return
	fi
	if [ -z "$mine" ]; then
		echo "# $missing"
		ktap_test_fail "$desc"
		return
	fi
	read -r mrc <"$tmp/$mine.rc"
	if [ "$mrc" != "$prc" ]; then
		echo "# rtlat exited $mrc, the real tool $prc:"
		show "$tmp/$mine.err"
		ktap_test_fail "$desc"
		return
	fi
	if shape_compare "$kind" "$tmp/$peer.$ext" "$tmp/$mine.$ext" "$list" "$rows" >"$tmp/diff"; then
		ktap_test_pass "$desc"
	else
		echo "# the shapes differ (-: the real tool's, +: rtlat's):"
		cat "$tmp/diff"
		ktap_test_fail "$desc"
	fi
}

# The comparator itself: padding and numbers are no difference, nor an
# empty histogram, nor a top's earlier refreshes, nor a value that fills
# or overflows its zero-padded field; a column, a line (a thread's
# repeated), a number's padding or decimals, a key or a type more are, and
# so are an empty object other than a histogram and a difference in a
# top's last refresh.
T="T: 0 ( 1708) P:80 I:1000 C:   1998 Min:     16 Act:   55 Avg:   39 Max:    1613"
printf '%s\n' "$T" "# Histogram" "000015 000002" "000016 000004" "# Total: 000001998" >"$tmp/a"
printf '%s\n' "T: 0 (12345) P:80 I:1000 C:1999999 Min:      3 Act:    5 Avg:    4 Max:       7" \
	"# Histogram" "000003 000200" "000004 000001" "# Total: 000000201" >"$tmp/b"
printf '%s\n' "$T" "# Histogram" "000015 000002" "000016 000004	000001" "# Total: 000001998" >"$tmp/c"
printf '%s\n' "$T" "000015 000002" "000016 000004" "# Total: 000001998" >"$tmp/d"
printf '%s\n' "$T" "$T" "# Histogram" "000015 000002" "000016 000004" "# Total: 000001998" >"$tmp/e"
printf '%s\n' "$T" "# Histogram" "    15      2" "    16      4" "# Total:      1998" >"$tmp/f"
printf '%s\n' "${T%Max:*}Max:    16.00" "# Histogram" "000015 000002" "000016 000004" "# Total: 000001998" >"$tmp/g"
printf '%s\n' "  0 #1998   |      1      2" "ALL #1998 e0 |      1" >"$tmp/h"
printf '%s\n' "  0 #12     |   1234      2" "ALL #12 e0   |      1" >"$tmp/i"
printf '%s\n' "  0 #1998  |      1      2" "ALL #1998 e0 |      1" >"$tmp/k"
printf '%s\n' "0 1 2 " "1 3 4 " "over: 0 0 " >"$tmp/l"
printf '%s\n' "0 1 2 " "over: 0 0 " >"$tmp/m"
printf '%s\n' "over: 0 0 " >"$tmp/n"
printf '%s\n' "min:      12         -" >"$tmp/o"
printf '%s\n' "min:       -        10" >"$tmp/p"
E=$(printf '\033c')
printf '%s\n' "${E}  0 #12  |" "ALL #12 |" "${E}  0 #99  |      3" "ALL #99 |      3" >"$tmp/q"
printf '%s\n' "${E}  0 #7   |      1" "ALL #7  |      2" >"$tmp/r"
printf '%s\n' "${E}  0 #7   |" "ALL #7  |" >"$tmp/s"
printf '%s\n' "# Max Latencies: 00012 00034" >"$tmp/t"
printf '%s\n' "# Max Latencies: 123456 00034" >"$tmp/u"
printf '%s\n' "# Max Latencies: 12 00034" >"$tmp/v"
printf '%s\n' "x@.y 00012" >"$tmp/w"
printf '%s\n' "x@.y 12345" >"$tmp/x"
printf '{ "a": { "0": { "min": 3, "avg": 4.50, "histogram": { "3": 1 } } }, "s": "x" }\n' >"$tmp/j1"
printf '{"a":{"7":{"min":12,"avg":0.25,"histogram":{"12":5,"13":1}}},"s":"yz"}\n' >"$tmp/j2"
printf '{ "a": { "0": { "min": 3, "avg": 4, "histogram": { "3": 1 } } }, "s": "x" }\n' >"$tmp/j3"
printf '{ "a": { "0": { "min": 3, "avg": 4.50, "histogram": { "3": 1 }, "max": 9 } }, "s": "x" }\n' >"$tmp/j4"
printf '{ "a": { "0": { "min": 3, "avg": 4.50, "histogram": {} } }, "s": "x" }\n' >"$tmp/j5"
printf '{ "a": {}, "s": "x" }\n' >"$tmp/j6"
# expect STATUS KIND A B [LIST_RE [ROWS_RE]]: shape_compare's status must
# be STATUS (0 the same, 1 different, 2 not comparable).
self=pass
expect()
{
	want=$1
	shift
	shape_compare "$1" "$tmp/$2" "$tmp/$3" "${4:-}" "${5:-}" >"$tmp/self"
	got=$?
	[ $got = "$want" ] && return
	echo "# shape_compare $*: status $got, not $want"
	cat "$tmp/self"
	self=fail
}
expect 0 text a b
expect 1 text a c
expect 1 text a d
expect 1 text a e
expect 1 text a f
expect 1 text a g
expect 0 text h i
expect 1 text h k
expect 1 text l m
expect 0 text l m "" '^@( @)* ?$'
expect 0 text m n "" '^@( @)* ?$'
expect 0 text o p
expect 0 text q r
expect 1 text q s
expect 0 text t u
expect 0 text u t
expect 1 text t v
expect 0 text w x
expect 0 json j1 j2
expect 1 json j1 j3
expect 1 json j1 j4
expect 2 json j1 d
expect 0 json j5 j1
expect 0 json j1 j5
expect 1 json j6 j1
ktap_test_$self "shape comparator: numbers and padding are no difference, a column, line, key or type more is"

v=$(cyclictest --help 2>&1)
r=$(rtla 2>&1)
r=${r#"$nl"}
echo "# peers: ${v%%"$nl"*}, ${r%%"$nl"*}"
loaded=0
if mod=$(rtrs_module rtlat) && ! rtrs_loaded rtlat; then
	insmod "$mod" && loaded=1
fi

# cyclictest: its summary line, and (quiet with a histogram: no summary
# line) the histogram, two threads' columns, and the JSON report of one run.
CT="-q -D 2 -i 1000 -p 80 -m -a 0 -t 1"
CTH="-q -D 2 -i 1000 -p 80 -m -a 0-1 -t 2"
rt='' rth=''
# (The options, a word each.)
# shellcheck disable=SC2086
run ct cyclictest $CT
if front_end cyclictest; then
	# shellcheck disable=SC2086
	run rt rtlat cyclictest $CT
	rt=rt rth=rth
fi
# shellcheck disable=SC2086
run cth cyclictest $CTH -h 1000 --json "$tmp/cth.json"
# shellcheck disable=SC2086
[ -n "$rth" ] && run rth rtlat cyclictest $CTH -h 1000 --json "$tmp/rth.json"
compare "cyclictest -q: the T: line as cyclictest's" ct "$rt" text '^T: 0 \('
compare "cyclictest -t 2 -h 1000: the histogram as cyclictest's" cth "$rth" text '^# Histogram$' '^# Thread @:'
compare "cyclictest --json: key paths and types as cyclictest's" cth "$rth" json '"histogram"'

# rtla timerlat top, standard output a file, not a terminal: rtla starts
# each refresh (once a second) with a terminal reset; with -q it prints
# only the last one, without. Linux 7.3's rtla measures with user threads
# (its Ret user columns) where the kernel has timerlat_fd, -u or not, and
# so does rtlat; -k is kernel threads. (An rtla run costs 10 s or more
# beyond its duration on a debug kernel under TCG: four runs in all.)
mt='' mtkq=''
run tt rtla timerlat top -d 2s -c 0
if front_end rtla timerlat top; then
	run mt rtlat timerlat top -d 2s -c 0
	mt=mt mtkq=mtkq
fi
run ttkq rtla timerlat top -d 1s -c 0 -k -q
[ -n "$mtkq" ] && run mtkq rtlat timerlat top -d 1s -c 0 -k -q
compare "timerlat top: headers, rows and the ALL block as rtla's" tt "$mt" text '^ALL #'
compare "timerlat top -k -q: headers, rows and the ALL block as rtla's" ttkq "$mtkq" text '^ALL #'

# rtla timerlat hist: the header, the non-empty rows, over:, the per-CPU
# summary and the ALL block.
mh='' mhkns=''
run th rtla timerlat hist -d 1s -c 0-1 -E 50
if front_end rtla timerlat hist; then
	run mh rtlat timerlat hist -d 1s -c 0-1 -E 50
	mh=mh mhkns=mhkns
fi
run thkns rtla timerlat hist -d 1s -c 0 -E 50 -k --no-summary
[ -n "$mhkns" ] && run mhkns rtlat timerlat hist -d 1s -c 0 -E 50 -k --no-summary
# (Which buckets have samples is data: the bucket rows count once.)
HR='^@( @)* ?$'
compare "timerlat hist -c 0-1 -E 50: header, rows, summary and ALL as rtla's" th "$mh" text '^ALL: ' '' "$HR"
compare "timerlat hist -E 50 -k --no-summary: as rtla's" thkns "$mhkns" text '^over: ' '' "$HR"

# Command lines rtla refuses: the same exit status (129, its option
# parser's; it stops before tracing; -d 1s bounds a run that one of them
# would not refuse). (rtlat cyclictest refuses with 2 where cyclictest
# exits 1, or prints its help and exits 0 for an unknown option:
# Documentation/rtlat-tool.rst.)
bad=0
for args in "-c 999 -d 1s" "-d 0" "-P f:200 -d 1s" "-p 1000001 -d 1s" "--bogus"; do
	for mode in top hist; do
		# shellcheck disable=SC2086 # the options, a word each
		set -- timerlat $mode $args
		timeout -s INT -k 10 "$BOUND" rtla "$@" >/dev/null 2>&1
		prc=$?
		timeout -s INT -k 10 "$BOUND" rtlat "$@" >"$tmp/bad.out" 2>&1
		mrc=$?
		if [ $prc = 0 ] || [ $mrc != $prc ]; then
			echo "# timerlat $mode $args: rtla exited $prc, rtlat $mrc: $(head -n 1 "$tmp/bad.out")"
			bad=1
		fi
	done
done
if [ $bad = 0 ]; then
	ktap_test_pass "refused command lines: rtla's exit statuses"
else
	ktap_test_fail "refused command lines: rtla's exit statuses"
fi


[ $loaded = 1 ] && rmmod rtlat
read -r t1 _ </proc/uptime
sed 's/^/# /' "$tmp/times"
since "$t_all" "$t1"
echo "# all: $took s"
rm -rf "$tmp"
ktap_finished
