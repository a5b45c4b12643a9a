#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rtlat monitor scraped from outside the machine, as a fleet's Prometheus
# does: a guest with a network card (scripts/vmtest --system: QEMU's user
# networking, whose only way in is the host's 127.0.0.1 port forwarded to
# port 19101 here) measures for 4 s with --listen 0.0.0.0:19101 and serves its
# final metrics for 6 s more (--linger). Its final snapshot goes to the
# host on a line "# rtrs-scrape-snapshot: {...}"; there a real Prometheus
# server scraped the guest all along, and scripts/prom-scrape --check
# compares what it scraped with that snapshot (scripts/vmtest).
#
# Global state it changes: loads and unloads rtlat.ko.

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

PORT=19101
DURATION=4
LINGER=6

rtrs_start
if ! command -v rtlat >/dev/null || ! mod=$(rtrs_module rtlat); then
	rtrs_skip_all "rtlat tool or rtlat.ko not installed"
fi
ktap_set_plan 6
tmp=$(mktemp -d)
rtrs_kill_at_exit

# The network card: QEMU's user network, the address it expects.
modprobe virtio_net 2>/dev/null
dev=
for d in /sys/class/net/*; do
	[ "$(basename "$d")" = lo ] || { dev=$(basename "$d"); break; }
done
if [ -n "$dev" ] && ip link set lo up && ip link set "$dev" up &&
	ip addr add 10.0.2.15/24 dev "$dev"; then
	ktap_print_msg "network card: $dev"
	ktap_test_pass "a network card, 10.0.2.15 on it"
else
	ktap_print_msg "interfaces: $(cd /sys/class/net && echo *)"
	ktap_test_fail "a network card, 10.0.2.15 on it"
fi

rmmod rtlat 2>/dev/null
insmod "$mod" || rtrs_skip_all "cannot load $mod"
h=$tmp/h.jsonl
t0=$(cut -d. -f1 /proc/uptime)
rtlat monitor --cpus 1 --stages irq,thread --interval 600 --duration "${DURATION}s" \
	--listen "0.0.0.0:$PORT" --linger "${LINGER}s" --history "$h" 2>"$tmp/err" &
pid=$!
bg=$pid
# Wait until monitor $2, writing its stderr to $1, lingers (60 s at most).
lingering()
{
	i=0
	while ! grep -q 'serving the final metrics' "$1" && kill -0 "$2" 2>/dev/null && [ $i -lt 60 ]; do
		sleep 1
		i=$((i + 1))
	done
}
# While it lingers, the final numbers are what it serves, and the device
# is free for another run.
lingering "$tmp/err" $pid
wget -q -O "$tmp/metrics" "http://127.0.0.1:$PORT/metrics"
rtlat run --cpus 1 --duration 1s -q >"$tmp/run" 2>&1
run=$?
wait $pid
rc=$?
t1=$(cut -d. -f1 /proc/uptime)
ktap_print_msg "$(tr '\n' ' ' <"$tmp/err")"
ktap_print_msg "exit $rc after $((t1 - t0)) s"
snap=$(cat "$h" 2>/dev/null)
rtrs_check "--duration ${DURATION}s: exit 0, one final snapshot covering the run" \
	test "$rc" = 0 -a "$(grep -c . "$h" 2>/dev/null)" = 1 \
	-a -n "$(echo "$snap" | grep '"seq":1,.*"final":true')"

# The snapshot's count of each stage is what was served after the end
# (one CPU; its stages in the order irq, thread).
total()
{
	echo "$snap" | grep -o '"total_count":[0-9]*' | sed -n "$1p" | cut -d: -f2
}
served()
{
	sed -n "s/^rtlat_activations_total{cpu=\"1\",stage=\"$1\"} \([0-9]*\)$/\1/p" "$tmp/metrics"
}
ktap_print_msg "irq: snapshot $(total 1), served $(served irq);" \
	"thread: snapshot $(total 2), served $(served thread)"
rtrs_check "--linger: the final counts served after the end" \
	test -n "$(served irq)" -a "$(served irq)" = "$(total 1)" \
	-a "$(served thread)" = "$(total 2)" -a "$(served irq)" -gt 0
rtrs_check "--linger: served ${LINGER}s more, then exit" \
	test $((t1 - t0)) -ge $((DURATION + LINGER - 1)) \
	-a $((t1 - t0)) -le $((DURATION + LINGER + 20))
[ $run = 0 ] ||
	ktap_print_msg "rtlat run while the monitor lingered: exit $run: $(tr '\n' ' ' <"$tmp/run")"
rtrs_check "--linger: the device is free meanwhile (rtlat run: exit 0)" test $run = 0

# SIGTERM ends the linger at once (exit 0). (Another port: the host's
# Prometheus scrapes only the first run.)
rtlat monitor --cpus 1 --duration 1s --listen "127.0.0.1:$((PORT + 1))" --linger 120s \
	2>"$tmp/err2" &
pid=$!
bg="$bg $pid"
lingering "$tmp/err2" $pid
t0=$(cut -d. -f1 /proc/uptime)
kill -TERM $pid
wait $pid
rc=$?
t1=$(cut -d. -f1 /proc/uptime)
ktap_print_msg "SIGTERM while lingering: exit $rc after $((t1 - t0)) s"
rtrs_check "--linger: SIGTERM ends it at once, exit 0" \
	test $rc = 0 -a $((t1 - t0)) -le 3 -a -n "$(grep 'serving the final metrics' "$tmp/err2")"

# For the host's Prometheus check (scripts/vmtest), without the histograms
# (a few kB each; it needs the percentiles and counts).
echo "# rtrs-scrape-snapshot: $(echo "$snap" | sed 's/"histogram":{[^}]*},//g')"
rmmod rtlat 2>/dev/null
ktap_finished
