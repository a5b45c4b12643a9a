# SPDX-License-Identifier: GPL-2.0
#
# rtrs: real-time Rust modules for PREEMPT_RT kernels.
#
#   make [KDIR=...] [ARCH=...] [LLVM=...]   build every module against KDIR
#   make setup                              install the toolchain and kernel trees
#   make kernels                            build the cached test kernels
#   make check                              the whole test suite (see README.md)
#   make check-long                         what make check leaves out for its budget
#   make demo                               a first look: a guest measured with rtlat
#   make bench [ARCH=...]                   rtlat against timerlat and cyclictest
#   make deb                                the Debian packages (out/deb/)
#   make rust-analyzer                      write rust-project.json
#   make fmt / fmtcheck / clippy            style checks with the kernel's settings
#   make clean

# scripts/lib.sh, the scripts' definitions: `$(call lib,FUNCTION ARGS)`.
RTRS_ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
lib = $(shell bash -c '. "$(RTRS_ROOT)/scripts/lib.sh" && $(1)')

ARCH ?= x86_64
# The suite's name of the architecture (its cache's: riscv64) and the
# kernel's (riscv), from the table in scripts/lib.sh; an ARCH it does not
# have (x86, as a distribution's kernel build passes it) is kept as it is.
arch_names := $(call lib,arch_info $(ARCH) arch kernel)
rtrs_arch := $(or $(word 1,$(arch_names)),$(ARCH))
override ARCH := $(or $(word 2,$(arch_names)),$(ARCH))
export ARCH

RTRS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rtrs
TREE ?= 7.3
KDIR ?= $(firstword $(wildcard $(RTRS_CACHE)/build/$(TREE)-$(rtrs_arch)-debug) \
	/lib/modules/$(shell uname -r)/build)

# The scripts' toolchain environment (scripts/lib.sh, toolchain_env) for
# this KDIR, keeping what the user set: ~/.cargo/bin first on PATH,
# LIBCLANG_PATH, LLVM= for a kernel built with clang.
toolchain = $(call lib,toolchain_var '$(KDIR)' $(1))
export PATH := $(call toolchain,PATH)
export LIBCLANG_PATH := $(call toolchain,LIBCLANG_PATH)
export LLVM := $(call toolchain,LLVM)

KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR)

all: modules

modules: kdir-check
	$(KMAKE) modules

kdir-check:
	@scripts/check-kdir $(KDIR)

rust-analyzer: kdir-check
	$(KMAKE) rust-analyzer

clean:
	@if [ -f $(KDIR)/Makefile ]; then $(KMAKE) clean; fi
	$(MAKE) -C tests clean
	rm -f rust-project.json

setup:
	scripts/setup

kernels:
	scripts/build-kernels

check:
	scripts/run-tests

# (And rtrs-dkms's first build for the machine's own Debian RT kernel, its
# Rust crates included: scripts/dkms-check --cold.)
DKMS_RELEASE ?= $(firstword $(filter %-rt-$(call lib,arch_info $(call lib,host_arch) deb),$(call lib,distro_releases)))
check-long:
	RTRS_LONG=1 scripts/run-tests
	scripts/package --arch $(call lib,host_arch) --release none --out out/check-long/debs >/dev/null
	scripts/dkms-check --cold --release $(DKMS_RELEASE) --debs out/check-long/debs

demo:
	scripts/demo

bench:
	scripts/bench --arch $(rtrs_arch)

deb:
	scripts/package

# The kernel's rustfmt settings (its `make rustfmt` does not walk M=). The
# compile-fail cases are kept as written.
RUSTFMT_CONFIG = $(firstword $(wildcard $(KDIR)/source/.rustfmt.toml $(KDIR)/.rustfmt.toml))
RS_FILES = $(filter-out tests/compile_fail/%,$(shell git ls-files '*.rs' 2>/dev/null))
fmt:
	rustfmt --config-path $(RUSTFMT_CONFIG) --edition 2021 $(RS_FILES)
fmtcheck:
	rustfmt --check --config-path $(RUSTFMT_CONFIG) --edition 2021 $(RS_FILES)

clippy: kdir-check
	$(KMAKE) CLIPPY=1 KRUSTFLAGS=-Dwarnings modules

.PHONY: all modules kdir-check rust-analyzer clean setup kernels check check-long demo bench deb fmt fmtcheck clippy
