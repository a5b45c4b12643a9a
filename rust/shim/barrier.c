// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/barrier.rs: memory barriers. Compiled as part of
 * rust/shim.c.
 */
#include <asm/barrier.h>

#include "../shim.h"

/* smp_mb(): the same in every kernel version (the Rust binding changed in 7.3). */
void rtrs_smp_mb(void)
{
	smp_mb();
}
