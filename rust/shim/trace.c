// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/trace.rs: markers in the ftrace buffer. Compiled as
 * part of rust/shim.c.
 */
#include <linux/kernel.h>

#include "../shim.h"

/* trace_puts(): a marker in the ftrace buffer. */
void rtrs_trace_puts(const char *s)
{
	__trace_puts(_THIS_IP_, s);
}
