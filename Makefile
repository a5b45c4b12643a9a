# SPDX-License-Identifier: GPL-2.0
#
# rtrs: real-time Rust modules for PREEMPT_RT kernels.
#
#   make [KDIR=...] [ARCH=...] [LLVM=...]   build every module against KDIR
#   make setup                              install the toolchain and kernel trees
#   make kernels                            build the cached test kernels
#   make check                              the whole test suite (see README.md)
#   make bench [ARCH=...]                   rtlat against timerlat and cyclictest
#   make rust-analyzer                      write rust-project.json
#   make fmt / fmtcheck / clippy            style checks with the kernel's settings
#   make clean

ARCH ?= x86_64
# Our cache names the architecture riscv64; the kernel calls it riscv.
rtrs_arch := $(if $(filter riscv riscv64,$(ARCH)),riscv64,$(ARCH))
override ARCH := $(if $(filter riscv64,$(ARCH)),riscv,$(ARCH))
export ARCH

RTRS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rtrs
TREE ?= 7.3
KDIR ?= $(firstword $(wildcard $(RTRS_CACHE)/build/$(TREE)-$(rtrs_arch)-debug) \
	/lib/modules/$(shell uname -r)/build)

# A kernel built with clang needs LLVM= for its modules too.
ifeq ($(origin LLVM),undefined)
ifneq ($(shell grep -sx CONFIG_CC_IS_CLANG=y $(KDIR)/.config),)
LLVM := $(if $(shell command -v clang-19),-19,1)
endif
endif
export LLVM

# bindgen and libclang as installed by scripts/setup, unless the user set them.
export PATH := $(HOME)/.cargo/bin:$(PATH)
export LIBCLANG_PATH ?= /usr/lib/llvm-19/lib

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

bench:
	scripts/bench --arch $(rtrs_arch)

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

.PHONY: all modules kdir-check rust-analyzer clean setup kernels check bench fmt fmtcheck clippy
