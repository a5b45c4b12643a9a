// SPDX-License-Identifier: GPL-2.0
/*
 * C shim of the rtrs shared layer: what the layer needs of the kernel that
 * is a macro or an inline function, so has no Rust binding, one file of
 * rust/shim/ for each file of rust/ it serves (rust/shim.h says which hold
 * logic of their own). The Rust side (rust/ffi.rs) declares them and
 * documents the contracts. A module that uses the layer links this file in
 * as a composite object through a one-line wrapper that includes it (Kbuild
 * does not let two modules share an object file).
 */
#include "shim/raw_spinlock.c"
#include "shim/preempt.c"
#include "shim/cpu.c"
#include "shim/percpu.c"
#include "shim/kthread.c"
#include "shim/irq.c"
#include "shim/module.c"
#include "shim/task.c"
#include "shim/sync.c"
#include "shim/trace.c"
#include "shim/barrier.c"
#include "shim/file.c"
#include "shim/cpuhp.c"
#include "shim/pci.c"
#include "shim/context.c"
#include "shim/tracepoint.c"
