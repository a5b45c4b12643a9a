#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Load and unload each sample of the RT-safe layer and check what it reports.
#
# Global state it changes: loads and unloads the sample modules.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

rtrs_start

# module:expected kernel log line
SAMPLES="rtrs_raw_spinlock:counted 3 events under a raw spinlock
rtrs_percpu:counted 1 hit(s), on CPU
rtrs_rt_thread:handled request 1
rtrs_hard_timer:10 hard-IRQ ticks, 10 records drained"

ktap_set_plan 4
while IFS=: read -r mod want; do
	# One name a sample, whatever happens: what went wrong is a diagnostic.
	name="$mod: its result logged, unloaded after"
	if ! ko=$(rtrs_module "$mod"); then
		rtrs_skip "$name" "not installed"
		continue
	fi
	mark=$(rtrs_dmesg_mark)
	insmod "$ko"
	line=$(rtrs_dmesg_since "$mark" | grep "$mod: " | tail -1)
	rmmod "$mod"
	ktap_print_msg "${line#*] }"
	case "$line" in
	*"$want"*)
		if rtrs_loaded "$mod"; then
			ktap_print_msg "$mod: still loaded after rmmod"
			ktap_test_fail "$name"
		else
			ktap_test_pass "$name"
		fi
		;;
	*)
		ktap_print_msg "$mod: expected '$want'"
		ktap_test_fail "$name"
		;;
	esac
done <<EOT
$SAMPLES
EOT
ktap_finished
