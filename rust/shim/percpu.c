// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/percpu.rs: per-CPU memory and local locks. Compiled as
 * part of rust/shim.c.
 */
#include <linux/gfp.h>
#include <linux/local_lock.h>
#include <linux/lockdep.h>
#include <linux/percpu.h>

#include "../shim.h"

/* per_cpu_ptr() on a pointer from __alloc_percpu(). */
void *rtrs_per_cpu_ptr(void __percpu *ptr, unsigned int cpu)
{
	return per_cpu_ptr(ptr, cpu);
}

/* this_cpu_ptr() (caller has preemption or migration disabled). */
void *rtrs_this_cpu_ptr(void __percpu *ptr)
{
	return this_cpu_ptr(ptr);
}

/* __alloc_percpu_gfp(GFP_KERNEL): zeroed per-CPU memory, or NULL. */
void __percpu *rtrs_alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu_gfp(size, align, GFP_KERNEL);
}

/*
 * local_lock_init() on one CPU's lock, with the caller's lockdep name and
 * class (local_lock_init() would give every user one class, that of this
 * line). `key` is a struct lock_class_key *, passed as void * because the
 * struct is empty, and not FFI-safe, without lockdep.
 */
void rtrs_local_lock_init(local_lock_t *lock, const char *name, void *key)
{
	local_lock_init(lock);
	lockdep_set_class_and_name(lock, (struct lock_class_key *)key, name);
}

/*
 * local_lock() / local_unlock() on a per-CPU local_lock_t: preempt_disable()
 * on !PREEMPT_RT; a per-CPU sleeping lock plus migrate_disable() on RT.
 */
void rtrs_local_lock(local_lock_t __percpu *lock)
{
	local_lock(lock);
}

void rtrs_local_unlock(local_lock_t __percpu *lock)
{
	local_unlock(lock);
}
