// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/cpu.rs: which CPUs exist, are online, are active.
 * Compiled as part of rust/shim.c.
 */
#include <linux/cpumask.h>

#include "../shim.h"

/* cpu_online(). */
bool rtrs_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

/* cpu_active(): online and schedulable (false from the start of its teardown). */
bool rtrs_cpu_active(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_active(cpu);
}

/* cpu_possible(). */
bool rtrs_cpu_possible(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_possible(cpu);
}
