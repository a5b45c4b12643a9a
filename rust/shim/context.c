// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/context.rs: the interrupted code's stack, from a hard
 * IRQ. Compiled as part of rust/shim.c.
 */
#include <asm/irq_regs.h>
#include <linux/minmax.h>
#include <linux/ptrace.h>
#include <linux/stacktrace.h>
#include <linux/string.h>

#include "../shim.h"

/*
 * In a hard IRQ: the stack of the code it interrupted, its instruction
 * pointer first, then its callers as the unwinder finds them from here (the
 * frames of the interrupt itself left out); just the instruction pointer
 * where the unwinder does not reach it; nothing if the interrupt came from
 * user space or outside an interrupt. At most size entries; returns how
 * many.
 */
unsigned int rtrs_irq_stack(unsigned long *store, unsigned int size)
{
	struct pt_regs *regs = get_irq_regs();
	unsigned long frames[32], ip;
	unsigned int n, i;

	if (!regs || !size || user_mode(regs))
		return 0;
	ip = instruction_pointer(regs);
	n = stack_trace_save(frames, ARRAY_SIZE(frames), 0);
	for (i = 0; i < n && frames[i] != ip; i++)
		;
	if (i == n) {
		store[0] = ip;
		return 1;
	}
	n = min(n - i, size);
	memcpy(store, frames + i, n * sizeof(*store));
	return n;
}
