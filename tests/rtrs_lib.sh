#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the shell tests of the rtrs kselftest target.

# Path of the module $1 (without .ko), or nothing if it is not installed.
rtrs_module()
{
	for d in ${RTRS_MODDIR:-} /lib/modules/$(uname -r)/extra; do
		if [ -f "$d/$1.ko" ]; then
			echo "$d/$1.ko"
			return 0
		fi
	done
	return 1
}

# True if module $1 is loaded.
rtrs_loaded()
{
	grep -q "^$1 " /proc/modules
}

# A mark in the kernel log, to read only what follows later: a line of
# its own, unique (a count of lines stops growing once the log's ring is
# full).
rtrs_dmesg_mark()
{
	m="rtrs-mark-$$-$(cat /proc/sys/kernel/random/uuid 2>/dev/null || date +%s%N)"
	echo "$m" >/dev/kmsg
	echo "$m"
}

# Kernel log lines after mark $1 (all of them if the mark left the ring).
rtrs_dmesg_since()
{
	dmesg | awk -v m="$1" 'seen { print; next } index($0, m) { seen = 1; next } { all[n++] = $0 }
		END { if (!seen) for (i = 0; i < n; i++) print all[i] }'
}

# rtrs_wait_session PID SECONDS: wait, SECONDS at most, until process PID
# has a session of /dev/rtlat running (its fdinfo says "rtlat: state 2");
# print that fdinfo line (the first: a process may have the device open
# more than once, a reader's file a dup). False if none ran in time.
rtrs_wait_session()
{
	rtrs_ws_n=$(($2 * 10))
	while [ "$rtrs_ws_n" -gt 0 ]; do
		rtrs_ws_l=$(grep -h '^rtlat: state 2 ' /proc/"$1"/fdinfo/* 2>/dev/null) && {
			echo "${rtrs_ws_l%%
*}"
			return 0
		}
		sleep 0.1
		rtrs_ws_n=$((rtrs_ws_n - 1))
	done
	return 1
}

# Skip the whole test (KTAP "1..0 # SKIP reason", exit 4).
rtrs_skip_all()
{
	ktap_skip_all "$@"
	exit "$KSFT_SKIP"
}

# Start a test: the KTAP header, and a skip unless running as root.
rtrs_start()
{
	ktap_print_header
	[ "$(id -u)" = 0 ] || rtrs_skip_all "must be run as root"
}

# rtrs_skip NAME REASON: skip test NAME, the reason in the directive
# ("ok N NAME # SKIP REASON"). The name stays the same whatever the reason:
# a result is tracked by its name from run to run.
rtrs_skip()
{
	echo "ok $KTAP_TESTNO $1 # SKIP $2"
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}

# rtrs_kill_at_exit: what runs in the background (the pids in $bg) is
# killed however the script ends, a signal included: a monitor left running
# would hold the device and the runner's output.
rtrs_kill_at_exit()
{
	bg=
	trap rtrs_kill_bg EXIT
	trap 'exit 143' TERM INT
}

rtrs_kill_bg()
{
	for p in $bg; do kill -KILL "$p" 2>/dev/null; done
}

# rtrs_keep FILE NAME: keep a copy of the tool's output FILE as NAME for
# checks made outside the guest (scripts/vmtest-report: each JSON report
# against the shipped schema by python3-jsonschema, each SVG parsed as
# XML). A missing FILE is not kept; the host notices what is missing.
rtrs_keep()
{
	[ -f "$1" ] || return 0
	mkdir -p /tmp/rtrs-kept && cp "$1" "/tmp/rtrs-kept/$2"
}

# rtrs_check DESCRIPTION CMD...: pass or fail test DESCRIPTION by CMD, run
# with its arguments as given. (ktap_test_result runs an unquoted $@: a
# quoted argument with a space, a grep pattern, splits into words, and the
# check tests something else.)
rtrs_check()
{
	desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}
