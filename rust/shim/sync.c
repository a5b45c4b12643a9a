// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/sync.rs: what the kernel crate's locks lack. Compiled
 * as part of rust/shim.c.
 */
#include <linux/mutex.h>

#include "../shim.h"

/*
 * mutex_lock_interruptible(): 0 with the mutex held, or -EINTR (not held)
 * when a signal came first. A macro with lockdep.
 */
int rtrs_mutex_lock_interruptible(struct mutex *lock)
{
	return mutex_lock_interruptible(lock);
}
