# SPDX-License-Identifier: GPL-2.0
# Shared shell definitions for the rtrs scripts: cache location, tree lookup,
# toolchain environment. Sourced, never executed.

RTRS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RTRS_CACHE=${RTRS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rtrs}
RTRS_ARCHES="x86_64 arm64 riscv64"
# Kernel trees known to the scripts, newest first; the first one is the default.
RTRS_TREES="7.3 7.2"

die() { echo "rtrs: error: $*" >&2; exit 1; }
info() { echo "rtrs: $*" >&2; }

# Directory of the unpacked kernel source tree for version $1 (e.g. 7.3).
tree_dir() { echo "$RTRS_CACHE/src/linux-source-$1"; }

# Rust standard library source matching the rustc on PATH.
rust_src_dir() {
	local v
	v=$(${RUSTC:-rustc} --version | awk '{print $2}')
	echo "$RTRS_CACHE/rust-src-$v/usr/src/rustc-$v/library"
}

# Export the toolchain environment used for every kernel and module build,
# leaving anything the user set untouched.
toolchain_env() {
	export LLVM=${LLVM:--19}
	export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-19/lib}
	export PATH="$HOME/.cargo/bin:$PATH"
	[ -n "${RUST_LIB_SRC:-}" ] || export RUST_LIB_SRC=$(rust_src_dir)
}

# Debian architecture name for a kernel ARCH.
deb_arch() {
	case $1 in
	x86_64) echo amd64 ;;
	arm64) echo arm64 ;;
	riscv64 | riscv) echo riscv64 ;;
	*) die "unknown architecture '$1' (supported: $RTRS_ARCHES)" ;;
	esac
}

# Kernel ARCH= value for one of our arch names.
kernel_arch() {
	case $1 in
	riscv64) echo riscv ;;
	*) echo "$1" ;;
	esac
}
