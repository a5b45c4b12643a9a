// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/task.rs: the current task: its id, flags, pinning,
 * capabilities. Compiled as part of rust/shim.c.
 */
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "../shim.h"

/* is_idle_task(current): the CPU was idle when the interrupt came. */
bool rtrs_current_is_idle(void)
{
	return is_idle_task(current);
}

/* The CPU the current task is pinned to (affinity of exactly one CPU), or -1. */
int rtrs_current_pinned_cpu(void)
{
	if (current->nr_cpus_allowed != 1)
		return -1;
	return cpumask_first(current->cpus_ptr);
}

/* capable(CAP_SYS_NICE) and capable(CAP_SYS_ADMIN): may measure on any
 * file of the device, whatever its priority (rust/measure/privilege.rs). */
bool rtrs_capable_rt(void)
{
	return capable(CAP_SYS_NICE) && capable(CAP_SYS_ADMIN);
}

/* May the caller run a thread at SCHED_FIFO priority prio, by the rule
 * sched_setscheduler() applies to the priority: within its RLIMIT_RTPRIO,
 * or with CAP_SYS_NICE (asked, and audited, only past the limit). */
bool rtrs_rtprio_allows(unsigned int prio)
{
	return prio <= rlimit(RLIMIT_RTPRIO) || capable(CAP_SYS_NICE);
}

/* capable(CAP_SYS_ADMIN): may change what is global to the machine. */
bool rtrs_capable_admin(void)
{
	return capable(CAP_SYS_ADMIN);
}

/* perfmon_capable(): may see what other tasks ran, as perf asks for it
 * (CAP_PERFMON or CAP_SYS_ADMIN). */
bool rtrs_capable_perfmon(void)
{
	return perfmon_capable();
}

/* task_pid_nr(current): the current thread's id. */
int rtrs_current_tid(void)
{
	return task_pid_nr(current);
}

/* current->flags: PF_EXITING, PF_KTHREAD ... */
unsigned int rtrs_current_flags(void)
{
	return current->flags;
}
