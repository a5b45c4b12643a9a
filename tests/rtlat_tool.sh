#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The rtlat command-line tool in the guest: each mode runs, the JSON report
# is valid and consistent with the module's statistics, the SVG is produced
# and well-formed, a forced threshold exits 2, a missing module exits 1 with
# a message saying how to load it.

DIR=$(dirname "$(readlink -f "$0")")
. "$DIR/../kselftest/ktap_helpers.sh"
. "$DIR/rtrs_lib.sh"

rtrs_start
if ! command -v rtlat >/dev/null || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "rtlat tool or rtlat.ko not installed"
fi
ktap_set_plan 15
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

insmod "$mod"
rtlat run --duration 2s -q --json "$tmp/run.json" --svg "$tmp/run.svg" >"$tmp/out" 2>&1
rc=$?
ktap_print_msg "$(head -3 "$tmp/out")"
ktap_test_result "run: exit 0" [ $rc = 0 ]
# cyclictest's T: line, with the measuring thread's tid (rtlat/0).
ktap_test_result "run: cyclictest-shaped summary with the thread's tid" grep -qE '^T: 0 \( *[1-9][0-9]*\)' "$tmp/out"
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

rtlat run --user --duration 2s -q --json "$tmp/user.json" >"$tmp/out" 2>&1
rc=$?
ktap_test_result "run --user: exit 0" [ $rc = 0 ]
if rtlat check-json "$tmp/user.json" >"$tmp/chk" 2>&1 && grep -q '"user"' "$tmp/user.json" &&
	grep -q '"response"' "$tmp/user.json"; then
	ktap_test_pass "run --user: user and response stages reported"
else
	ktap_print_msg "$(cat "$tmp/chk")"
	ktap_test_fail "run --user: user and response stages reported"
fi

rtlat run --stages irq --period 200 --duration 2s -q --json "$tmp/irq.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^T: 0 (' "$tmp/out" && rtlat check-json "$tmp/irq.json" >"$tmp/chk" 2>&1 && grep -q '"irq"' "$tmp/irq.json" &&
	! grep -q '"thread"' "$tmp/irq.json"; then
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
ktap_test_result "threshold exceeded: exit 2" [ $rc = 2 ]
ktap_test_result "threshold: the JSON says why it stopped" grep -q '"reason": "threshold"' "$tmp/trip.json"

rtlat run --user --duration 20s --threshold user=1 -q >"$tmp/out" 2>&1
rc=$?
ktap_test_result "user threshold exceeded: exit 2" [ $rc = 2 ]

rtlat run --duration 1s --cpus 999 -q >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "not online" "$tmp/out"; then
	ktap_test_pass "offline CPU refused: exit 1"
else
	ktap_test_fail "offline CPU refused: exit 1"
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
			grep -q '"thread"' "$tmp/edu.json"; then
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
