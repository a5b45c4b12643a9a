// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/raw_spinlock.rs: raw spinlocks: they never sleep, also
 * on PREEMPT_RT. Compiled as part of rust/shim.c.
 */
#include <linux/lockdep.h>
#include <linux/spinlock.h>

#include "../shim.h"

/* raw_spin_lock_init() with the caller's lockdep name and class. */
void rtrs_raw_spin_lock_init(raw_spinlock_t *lock, const char *name,
			     struct lock_class_key *key)
{
#ifdef CONFIG_DEBUG_SPINLOCK
	__raw_spin_lock_init(lock, name, key, LD_WAIT_SPIN);
#else
	raw_spin_lock_init(lock);
#endif
}

/* raw_spin_lock(): disables preemption, never sleeps, also on PREEMPT_RT. */
void rtrs_raw_spin_lock(raw_spinlock_t *lock)
{
	raw_spin_lock(lock);
}

/* raw_spin_unlock(). */
void rtrs_raw_spin_unlock(raw_spinlock_t *lock)
{
	raw_spin_unlock(lock);
}

/* raw_spin_trylock(): 1 when taken. */
int rtrs_raw_spin_trylock(raw_spinlock_t *lock)
{
	return raw_spin_trylock(lock);
}

/* raw_spin_lock_irqsave(): returns the saved interrupt state. */
unsigned long rtrs_raw_spin_lock_irqsave(raw_spinlock_t *lock)
{
	unsigned long flags;

	raw_spin_lock_irqsave(lock, flags);
	return flags;
}

/* raw_spin_unlock_irqrestore(). */
void rtrs_raw_spin_unlock_irqrestore(raw_spinlock_t *lock, unsigned long flags)
{
	raw_spin_unlock_irqrestore(lock, flags);
}

/* lockdep_assert_held() on a raw spinlock. */
void rtrs_raw_spin_assert_held(raw_spinlock_t *lock)
{
	lockdep_assert_held(lock);
}

/* raw_spin_trylock_irqsave(): @taken tells whether the lock was taken. */
struct rtrs_irqsave_try rtrs_raw_spin_lock_irqsave_try(raw_spinlock_t *lock)
{
	struct rtrs_irqsave_try r;

	r.taken = raw_spin_trylock_irqsave(lock, r.flags);
	return r;
}
