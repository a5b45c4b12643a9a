// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/kthread.rs: kernel threads bound to a CPU at an RT
 * priority, and the task state of a wait (rust/direct_wait.rs waits the
 * same way). Compiled as part of rust/shim.c.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <uapi/linux/sched/types.h>

#include "../shim.h"

/*
 * Create a kernel thread bound to @cpu running @fn(@data), named @name
 * (printf-style, "%u" is the CPU), with a reference held for the caller,
 * SCHED_FIFO at @prio (1..99) or SCHED_OTHER for @prio == 0. Not started:
 * wake it with wake_up_process(). Returns an ERR_PTR on failure.
 */
struct task_struct *rtrs_kthread_create_on_cpu(int (*fn)(void *), void *data,
					       unsigned int cpu,
					       const char *name, int prio)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = prio ? SCHED_FIFO : SCHED_NORMAL,
		.sched_priority = prio,
	};
	struct task_struct *t;
	int err;

	t = kthread_create_on_cpu(fn, data, cpu, name);
	if (IS_ERR(t))
		return t;
	get_task_struct(t);
	err = sched_setattr_nocheck(t, &attr);
	if (err) {
		kthread_stop_put(t);
		return ERR_PTR(err);
	}
	return t;
}

/* kthread_stop_put(): stop a thread made above and drop the reference. */
int rtrs_kthread_stop_put(struct task_struct *t)
{
	return kthread_stop_put(t);
}

/* set_current_state(TASK_INTERRUPTIBLE), before testing the wait condition. */
void rtrs_set_current_interruptible(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
}

/* __set_current_state(TASK_RUNNING). */
void rtrs_set_current_running(void)
{
	__set_current_state(TASK_RUNNING);
}
