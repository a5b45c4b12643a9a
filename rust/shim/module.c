// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/module.rs: references to this module. Compiled as part
 * of rust/shim.c.
 */
#include <linux/module.h>

#include "../shim.h"

/* __module_get(THIS_MODULE): the caller holds the module already. */
void rtrs_module_get(void)
{
	__module_get(THIS_MODULE);
}

/* module_put(THIS_MODULE): gives back a reference rtrs_module_get took. */
void rtrs_module_put(void)
{
	module_put(THIS_MODULE);
}
