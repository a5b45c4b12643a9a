#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Load and unload the rtrs_hello sample and check the preemption model it
# reports against the running kernel's own (uname -v).
#
# Global state it changes: loads and unloads the sample rtrs_hello.ko.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

rtrs_start
if ! mod=$(rtrs_module rtrs_hello); then
	rtrs_skip_all "rtrs_hello.ko is not installed (build the suite with make)"
fi

ktap_set_plan 5

mark=$(rtrs_dmesg_mark)
insmod "$mod"
ktap_test_result "insmod rtrs_hello" rtrs_loaded rtrs_hello

line=$(rtrs_dmesg_since "$mark" | grep 'rtrs_hello: preemption model' | tail -1)
ktap_print_msg "module says: ${line#*] }"
case "$(uname -v)" in
*PREEMPT_RT*) want=PREEMPT_RT rt=1 ;;
*) want=unknown rt=0 ;;
esac
ktap_print_msg "uname -v says: $want (realtime: $rt)"
case "$line" in
*"preemption model $want (realtime: $rt)"*) ktap_test_pass "reported model matches uname -v" ;;
*) ktap_test_fail "reported model matches uname -v" ;;
esac

# Mainline PREEMPT_RT has no /sys/kernel/realtime (the old RT patch had one);
# where a kernel does have it, it must agree.
if [ -r /sys/kernel/realtime ]; then
	if [ "$(cat /sys/kernel/realtime)" = "$rt" ]; then
		ktap_test_pass "/sys/kernel/realtime agrees"
	else
		ktap_test_fail "/sys/kernel/realtime agrees"
	fi
else
	rtrs_skip "/sys/kernel/realtime agrees" "absent (mainline PREEMPT_RT has none)"
fi

rmmod rtrs_hello
if rtrs_loaded rtrs_hello; then
	ktap_test_fail "rmmod rtrs_hello"
else
	ktap_test_pass "rmmod rtrs_hello"
fi

if rtrs_dmesg_since "$mark" | grep -q 'rtrs_hello: unloaded'; then
	ktap_test_pass "module exit ran"
else
	ktap_test_fail "module exit ran"
fi

ktap_finished
