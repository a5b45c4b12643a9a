#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the KUnit suites of the shared RT-safe layer (rust/): loading
# rtrs_layer_test runs them; each KUnit case is reported as one test here,
# from /sys/kernel/debug/kunit/rtrs_layer/results.
#
# Global state it changes (Documentation/testing.rst, "In a test farm"):
# loads and unloads the test module rtrs_layer_test.ko, whose KUnit suites
# taint the kernel (N) for good and stress hard-IRQ timers on every CPU.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

SUITE=rtrs_layer
rtrs_start
if ! mod=$(rtrs_module rtrs_layer_test); then
	rtrs_skip_all "rtrs_layer_test.ko is not installed"
fi
if [ ! -d /sys/kernel/debug/kunit ]; then
	rtrs_skip_all "no /sys/kernel/debug/kunit (CONFIG_KUNIT and debugfs needed)"
fi

rmmod rtrs_layer_test 2>/dev/null
if ! insmod "$mod"; then
	ktap_set_plan 1
	ktap_test_fail "insmod rtrs_layer_test"
	ktap_finished
fi
results=/sys/kernel/debug/kunit/$SUITE/results
if [ ! -r "$results" ]; then
	ktap_set_plan 1
	ktap_print_msg "no $results (kunit.filter_glob?)"
	ktap_test_fail "KUnit suite $SUITE ran"
	rmmod rtrs_layer_test
	ktap_finished
fi

# The test cases are the indented "ok N name" lines of the suite; the
# diagnostics before each (KUnit's "# ..." lines) are passed on.
cases=$(grep -cE '^    (not )?ok [0-9]+ ' "$results")
ktap_set_plan $((cases + 1))
while read -r line; do
	name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ //; s/ *# SKIP.*//')
	case "$line" in
	"# "*) ktap_print_msg "${line#\# }" ;;
	"ok "*"# SKIP"*) rtrs_skip "$name" "$(echo "$line" | sed 's/.*# SKIP *//')" ;;
	"ok "*) ktap_test_pass "$name" ;;
	"not ok "*) ktap_test_fail "$name" ;;
	esac
done <<EOT
$(grep -E '^    (# |(not )?ok [0-9]+ )' "$results")
EOT

rmmod rtrs_layer_test
if rtrs_loaded rtrs_layer_test; then
	ktap_test_fail "rmmod rtrs_layer_test"
else
	ktap_test_pass "rmmod rtrs_layer_test"
fi
ktap_finished
