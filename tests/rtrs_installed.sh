#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The suite as a user installs it: on a Debian system where the packages
# rtrs-modules-$(uname -r), rtrs-modules-common and rtlat were installed
# with apt (scripts/vmtest --system), the modules load by name, the tool
# measures and its report checks, its man page is there, and the device
# node stays root-only. Skipped on a system without the packages.
#
# Global state: changes none (reads what the packages installed).

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=rtrs_lib.sh
. "$DIR/rtrs_lib.sh"

rtrs_start
rel=$(uname -r)
if ! command -v dpkg-query >/dev/null ||
	[ "$(dpkg-query -W -f '${Status}' "rtrs-modules-$rel" 2>/dev/null)" != "install ok installed" ]; then
	rtrs_skip_all "rtrs-modules-$rel is not installed (a system without the packages)"
fi

ktap_set_plan 10

for p in "rtrs-modules-$rel" rtrs-modules-common rtlat; do
	ktap_print_msg "$(dpkg-query -W -f '${Package} ${Version} ${Architecture}' "$p")"
done

# modprobe finds it by name through the modules.dep the package's depmod made.
modprobe -r rtlat 2>/dev/null
path=$(modinfo -n rtlat 2>/dev/null)
ktap_print_msg "modinfo -n rtlat: $path"
case $path in
"/lib/modules/$rel/updates/rtrs/rtlat.ko" | "/usr/lib/modules/$rel/updates/rtrs/rtlat.ko")
	ktap_test_pass "modinfo finds the packaged rtlat.ko"
	;;
*) ktap_test_fail "modinfo finds the packaged rtlat.ko" ;;
esac
modprobe rtlat
rtrs_check "modprobe rtlat by name" rtrs_loaded rtlat

# No udev runs here: the node has the kernel's mode, root-only, and the
# package's group exists, empty, for an administrator to fill.
mode=$(stat -c '%a %U' /dev/rtlat 2>/dev/null)
ktap_print_msg "/dev/rtlat: $mode"
rtrs_check "/dev/rtlat is root-only (0600 root)" [ "$mode" = "600 root" ]
members=$(getent group rtrs | cut -d: -f4)
# shellcheck disable=SC2016 # the inner sh's $1
rtrs_check "group rtrs exists, without members" sh -c 'getent group rtrs >/dev/null && [ -z "$1" ]' sh "$members"

# The package's rule is one udev accepts (where the system has udev).
rules=/usr/lib/udev/rules.d/60-rtrs.rules
if command -v udevadm >/dev/null; then
	out=$(udevadm verify --no-style "$rules" 2>&1)
	rc=$?
	echo "$out" | grep . | sed 's/^/# /'
	rtrs_check "udevadm verify accepts 60-rtrs.rules" [ $rc = 0 ]
else
	rtrs_skip "udevadm verify accepts 60-rtrs.rules" "no udev"
fi

json=/tmp/rtrs-installed.json
rm -f "$json"
out=$(rtlat run --duration 5s --quiet --json "$json" 2>&1)
rc=$?
echo "$out" | tail -3 | sed 's/^/# /'
rtrs_check "rtlat run --duration 5s --json: exit 0" [ $rc = 0 ]
rtrs_check "rtlat check-json accepts the report" rtlat check-json "$json"

page=$(man -w rtlat 2>/dev/null)
ktap_print_msg "man -w rtlat: $page"
rtrs_check "man rtlat is installed" [ "$page" = /usr/share/man/man1/rtlat.1.gz ]
rtrs_check "bash completion installed" [ -s /usr/share/bash-completion/completions/rtlat ]

modprobe -r rtlat
if rtrs_loaded rtlat; then
	ktap_test_fail "modprobe -r rtlat"
else
	ktap_test_pass "modprobe -r rtlat"
fi

ktap_finished
