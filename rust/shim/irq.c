// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/irq.rs: an interrupt thread's priority. Compiled as
 * part of rust/shim.c.
 */
#include <linux/sched.h>
#include <uapi/linux/sched/types.h>

#include "../shim.h"

/* The current task (an IRQ thread) to SCHED_FIFO `prio`, as chrt -f would. */
int rtrs_set_current_fifo(int prio)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};

	return sched_setattr_nocheck(current, &attr);
}
