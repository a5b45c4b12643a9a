// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/cpuhp.rs: CPU hotplug states. Compiled as part of
 * rust/shim.c.
 */
#include <linux/cpuhotplug.h>

#include "../shim.h"

/*
 * cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, @name, @online, @offline):
 * a dynamic hotplug state; @offline runs on a CPU going down, in task
 * context. Returns the state (> 0) or a negative errno.
 */
int rtrs_cpuhp_add(const char *name, int (*online)(unsigned int),
		   int (*offline)(unsigned int))
{
	return cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, name, online, offline);
}

/* cpuhp_remove_state_nocalls(). */
void rtrs_cpuhp_remove(int state)
{
	cpuhp_remove_state_nocalls(state);
}
