# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared shell definitions for the rtrs scripts: cache location, tree lookup,
# the architectures, toolchain environment. Sourced, never executed.

RTRS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# (No HOME where dkms runs from a service: root's.)
RTRS_CACHE=${RTRS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/rtrs}
# Kernel trees known to the scripts, newest first; the first one is the default.
RTRS_TREES="7.3 7.2"

die() { echo "rtrs: error: $*" >&2; exit 1; }
info() { echo "rtrs: $*" >&2; }

# A script's --help: its leading comment block, from the line after the
# SPDX tag to the first line that is no comment.
usage() {
	awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"
	exit 0
}

# The architectures the suite builds for and boots, one a line, every name
# and setting that depends on one:
#   arch     our name (the matrix's, the cache's, --arch)
#   kernel   the kernel's ARCH=
#   deb      Debian's name (packages, distribution kernel releases)
#   gnu      the GNU triplet (cross compiler CROSS_COMPILE=<gnu>-, multiarch)
#   rust     rustc's target of the static rtlat tool
#   suite    the Debian suite of the guest's busybox (its cyclictest,
#            hackbench and rtla: scripts/setup, setup_peers)
#   qemupkg  the Debian package of the QEMU system emulator
#   image    the boot image in the kernel build directory
#   console  the guest's serial console
#   qemu     the rest of the line: the QEMU command, machine and CPU
#            (x86_64 without LA57: with 5-level paging the debug kernel
#            took an interrupt in identify_cpu whose irq_desc KASAN called
#            a wild access, flooding the console, in 2 of 4 boots of 8
#            CPUs and now and then of 2; none in the boots since)
RTRS_ARCH_FIELDS="arch kernel deb gnu rust suite qemupkg image console qemu"
RTRS_ARCH_TABLE="
x86_64  x86_64 amd64   x86_64-linux-gnu  x86_64-unknown-linux-gnu    bookworm qemu-system-x86  arch/x86/boot/bzImage ttyS0   qemu-system-x86_64 -M pc -cpu max,la57=off
arm64   arm64  arm64   aarch64-linux-gnu aarch64-unknown-linux-gnu   bookworm qemu-system-arm  arch/arm64/boot/Image ttyAMA0 qemu-system-aarch64 -M virt,gic-version=3 -cpu max,pauth-impdef=on
riscv64 riscv  riscv64 riscv64-linux-gnu riscv64gc-unknown-linux-gnu trixie   qemu-system-misc arch/riscv/boot/Image ttyS0   qemu-system-riscv64 -M virt -bios default
"
RTRS_ARCHES=$(awk 'NF { printf "%s%s", s, $1; s = " " }' <<<"$RTRS_ARCH_TABLE")

# The test matrix unless RTRS_MATRIX says otherwise (scripts/run-tests): a
# guest of the default tree on every architecture, rtlat's tests in an
# x86_64 guest of 8 CPUs, and a build check of the older tree on x86_64.
# (scripts/run-tests starts the whole-suite cells in this order, then
# Debian's installed systems, then the cells of chosen programs.)
# (The machine with CPUs past the UAPI's inline 256 is arm64's installed
# system: scripts/runner/distro.py's WIDE.)
# shellcheck disable=SC2034 # scripts/run-tests's
RTRS_DEFAULT_MATRIX="${RTRS_TREES%% *}:x86_64 ${RTRS_TREES%% *}:arm64 ${RTRS_TREES%% *}:riscv64 ${RTRS_TREES%% *}:x86_64:cpus=8:rt_env,rtlat_test ${RTRS_TREES##* }:x86_64:build"
# make check-long's cells (scripts/run-tests under RTRS_LONG=1), unless
# the environment names others: what make check leaves out, riscv64's
# tool and monitor tests (tests/expected's "long").
# shellcheck disable=SC2034 # scripts/run-tests's
RTRS_LONG_MATRIX=${RTRS_LONG_MATRIX:-"${RTRS_TREES%% *}:riscv64:cpus=2:rtlat_tool.sh,rtlat_monitor.sh"}

# arch_info NAME FIELD...: the FIELDs (names above) of the architecture NAME
# (our name, the kernel's or Debian's: riscv64, riscv and riscv64 are one),
# on one line; status 1, and nothing, for a name the table does not have.
arch_info() {
	local name=$1 row cols fields i f vals=() IFS=$' \t\n'
	shift
	read -ra fields <<<"$RTRS_ARCH_FIELDS"
	while read -r row; do
		read -ra cols <<<"$row"
		[ "${#cols[@]}" -gt 0 ] || continue
		[ "$name" = "${cols[0]}" ] || [ "$name" = "${cols[1]}" ] || [ "$name" = "${cols[2]}" ] || continue
		for f in "$@"; do
			for i in "${!fields[@]}"; do [ "${fields[$i]}" = "$f" ] && break; done
			[ "${fields[$i]}" = "$f" ] || die "arch_info: no field '$f' (fields: $RTRS_ARCH_FIELDS)"
			# The last field is the rest of the line.
			if [ "$i" = $((${#fields[@]} - 1)) ]; then vals+=("${cols[*]:$i}"); else vals+=("${cols[$i]}"); fi
		done
		echo "${vals[*]}"
		return 0
	done <<<"$RTRS_ARCH_TABLE"
	return 1
}

# vm_cpus_suffix ONLINE[/POSSIBLE]: the suffix of scripts/vmtest's work
# directory for a guest of those CPUs ("" for the default 2).
vm_cpus_suffix() {
	case $1 in
	'' | 2 | 2/2) ;;
	*) echo "-cpus${1/\//of}" ;;
	esac
}

# arch_of NAME: our name of the architecture NAME, or die naming the known ones.
arch_of() {
	arch_info "$1" arch || die "unknown architecture '$1' (supported: $RTRS_ARCHES)"
}

# Our name of the machine's own architecture (status 1 if the table lacks it).
host_arch() { arch_info "$(dpkg --print-architecture 2>/dev/null || uname -m)" arch; }

# The flavours of Debian's RT kernels make check tests on their installed
# systems, and the suite whose newest kernel of each it tests: whatever
# Debian uploaded there last, found in apt's lists (scripts/setup adds the
# suite), so that an upload, which replaces the old kernel's packages,
# never breaks a fresh machine. The caches are keyed by the kernels'
# Debian versions.
RTRS_DISTRO_FLAVOURS=${RTRS_DISTRO_FLAVOURS:-rt-amd64 rt-arm64}
RTRS_DISTRO_SUITE=${RTRS_DISTRO_SUITE:-trixie-backports}

# distro_releases: the releases make check tests (RTRS_DISTRO, "" for none;
# by default the newest of each flavour, distro_newest), one line; status 1,
# with the reason on stderr, when apt's lists have a flavour's kernel not.
distro_releases() {
	if [ -n "${RTRS_DISTRO+set}" ]; then
		echo "$RTRS_DISTRO"
		return 0
	fi
	local f r rels=()
	for f in $RTRS_DISTRO_FLAVOURS; do
		r=$(distro_newest "$f")
		if [ -z "$r" ]; then
			echo "rtrs: error: apt's lists have no linux-image-$f in $RTRS_DISTRO_SUITE: run scripts/setup (or set RTRS_DISTRO)" >&2
			return 1
		fi
		rels+=("$r")
	done
	echo "${rels[*]}"
}

# distro_newest FLAVOUR: the release of the newest kernel of Debian's
# linux-image-FLAVOUR in $RTRS_DISTRO_SUITE (its metapackage's dependency),
# e.g. 7.3.4+deb13-rt-amd64; empty if apt's lists have none. Kept as
# apt_version's answers are.
distro_newest() { apt_memo "newest-$1-$RTRS_DISTRO_SUITE" _distro_newest "$1"; }
_distro_newest() {
	local da=${1##*-} v
	# (madison: "name | version | URL suite/component arch Packages", newest first.)
	v=$(apt-cache madison "linux-image-$1:$da" 2>/dev/null |
		awk -F' [|] ' -v s=" $RTRS_DISTRO_SUITE/" 'index($3, s) { gsub(/ /, "", $2); print $2; exit }')
	[ -n "$v" ] || return 0
	apt-cache show "linux-image-$1:$da=$v" 2>/dev/null | sed -n 's/^Depends: //p' | sed -n 1p |
		tr ',' '\n' | sed -n 's/^ *linux-image-\([^ ]*\) (= .*/\1/p' | sed -n 1p
}

# apt_version PKG: the version of PKG that apt's lists offer (the first
# "Version:" of apt-cache show), empty if none. Where apt keeps no binary
# cache (Dir::Cache::pkgcache "", as Debian's container images set it),
# each apt-cache call parses every list: about 6 s here, and make check
# asked 16 times (10 while the guests ran). An answer is kept in
# $RTRS_CACHE/apt/PKG.version under a fingerprint of its inputs (the name,
# size and mtime of every list, source, preference and dpkg's status file,
# taken before apt was asked) and used while the fingerprint is the same;
# an empty answer is not kept. (The file name is not the first version's,
# version-PKG, which a checkout of it sharing the cache reads whole.)
apt_version() { apt_memo "$1.version" _apt_version "$1"; }
_apt_version() { apt-cache show "$1" 2>/dev/null | sed -n 's/^Version: //p' | sed -n 1p; }

# apt_memo NAME CMD...: CMD's one-line answer from apt's lists, kept in
# $RTRS_CACHE/apt/NAME under the fingerprint apt_version describes.
apt_memo() {
	local memo=$RTRS_CACHE/apt/$1 fp v
	shift
	fp=$(stat -c '%n %s %Y' /var/lib/apt/lists/* /etc/apt/sources.list /etc/apt/sources.list.d/* \
		/etc/apt/preferences /etc/apt/preferences.d/* /var/lib/dpkg/status 2>/dev/null | md5sum | cut -d' ' -f1)
	if [ "$(sed -n 1p "$memo" 2>/dev/null)" = "$fp" ]; then
		sed -n 2p "$memo"
		return 0
	fi
	v=$("$@")
	if [ -n "$v" ] && mkdir -p "$RTRS_CACHE/apt"; then
		printf '%s\n%s\n' "$fp" "$v" >"$memo.$$" && mv "$memo.$$" "$memo"
	fi
	echo "$v"
}

# Whether the kernel runs the programs of the architecture whose GNU triplet
# is $1 with qemu-user-static, as scripts/setup registers it: binfmt_misc
# and the entry enabled, and the interpreter opened at registration (flag
# F, so that it works inside a chroot of that architecture). (An entry for
# the same magic registered later under another name would take
# precedence; debootstrap then fails, naming the program, in its log.)
binfmt_ready() {
	local b=/proc/sys/fs/binfmt_misc f=/proc/sys/fs/binfmt_misc/qemu-${1%%-*}
	[ "$(cat "$b/status" 2>/dev/null)" = enabled ] &&
		[ "$(sed -n 1p "$f" 2>/dev/null)" = enabled ] && grep -q '^flags: .*F' "$f"
}

# Directory of the unpacked kernel source tree for version $1 (e.g. 7.3).
tree_dir() { echo "$RTRS_CACHE/src/linux-source-$1"; }

# Rust standard library source matching the rustc on PATH.
rust_src_dir() {
	local v
	v=$(${RUSTC:-rustc} --version 2>/dev/null | awk '{print $2}')
	echo "$RTRS_CACHE/rust-src-$v/usr/src/rustc-$v/library"
}

# Export the toolchain environment used for every kernel, module and tool
# build, leaving anything the user set untouched: rustup's tools and bindgen
# (~/.cargo/bin) first on PATH, the libclang bindgen loads, LLVM=-19 for a
# kernel built with clang (every kernel scripts/build-kernel builds; with a
# KDIR $1, as its .config says), the Rust standard library's source
# scripts/setup fetched, and one cargo target directory for every checkout
# (claimed by the scripts that run cargo: cargo_env).
toolchain_env() {
	export PATH="${HOME:-/root}/.cargo/bin:$PATH"
	export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-19/lib}
	if [ -z "${LLVM:-}" ] && { [ -z "${1:-}" ] || grep -sqx CONFIG_CC_IS_CLANG=y "$1/.config"; }; then
		if command -v clang-19 >/dev/null; then export LLVM=-19; else export LLVM=1; fi
	fi
	[ -n "${RUST_LIB_SRC:-}" ] || RUST_LIB_SRC=$(rust_src_dir)
	export RUST_LIB_SRC
	export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$RTRS_CACHE/cargo-target}
}

# toolchain_env, for a script that builds this checkout's crates with cargo
# (not for a module build: a DKMS tree building modules would otherwise
# claim the target directory, and the next cargo build of the checkout
# rebuild them all).
cargo_env() {
	toolchain_env "$@"
	own_cargo_target
}

# The cargo target directory is shared by every checkout (the dependencies
# are built once), but cargo judges the workspace's own crates up to date by
# their files' times against what the last build left, whichever checkout
# that was: another checkout's older sources would get this one's binary.
# After a build from another checkout, this one's sources are touched, so
# that its crates are rebuilt (a fresh clone's are newer anyway). Builds
# from two checkouts at the same time still race.
own_cargo_target() {
	local stamp=$CARGO_TARGET_DIR/.rtrs-checkout
	[ "$(cat "$stamp" 2>/dev/null)" != "$RTRS_ROOT" ] || return 0
	find "$RTRS_ROOT/lib/rtcore" "$RTRS_ROOT/tools/rtlat" "$RTRS_ROOT/tools/rtlat-client" "$RTRS_ROOT/samples/rust" "$RTRS_ROOT/Cargo.toml" "$RTRS_ROOT/Cargo.lock" \
		-name target -prune -o -type f -print0 2>/dev/null | xargs -0 -r touch
	mkdir -p "$CARGO_TARGET_DIR" && echo "$RTRS_ROOT" >"$stamp"
}

# The kernel's kselftest KTAP helpers (ktap_print_header, ktap_set_plan,
# ktap_test_pass/fail/skip, ktap_finished and its "# Totals:" line, which
# scripts/run-tests reads), for the host checks as the guest's shell tests
# use them: sourced from the source of KDIR $1 if given, else from the
# default tree scripts/setup unpacked. They print a test's description
# unquoted: a caller whose descriptions may hold glob characters sets -f.
ktap_helpers() {
	local d f
	for d in ${1:+"$1/source" "$1"} "$(tree_dir "${RTRS_TREES%% *}")"; do
		f=$d/tools/testing/selftests/kselftest/ktap_helpers.sh
		if [ -f "$f" ]; then
			# shellcheck source=kselftest/ktap_helpers.sh
			. "$f"
			return
		fi
	done
	die "no tools/testing/selftests/kselftest/ktap_helpers.sh in ${1:+$1/source, $1 or }$(tree_dir "${RTRS_TREES%% *}"): run scripts/setup"
}

# toolchain_var KDIR NAME: the value toolchain_env gives NAME for the
# modules of KDIR (for the Makefile, which cannot source this file).
toolchain_var() {
	toolchain_env "$1"
	printf '%s\n' "${!2:-}"
}

# The host's rtlat tool, built if needed; prints its path. It is the static
# binary the host architecture's guests run (scripts/build-tool): one build
# serves both.
host_rtlat() {
	"$RTRS_ROOT/scripts/build-tool" --arch "$(host_arch)"
}
