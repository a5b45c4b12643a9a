// SPDX-License-Identifier: GPL-2.0
/* The shared layer's C shim, linked into this module (see rust/shim.c). */
#include "../../rust/shim.c"

#include <linux/interrupt.h>

/*
 * The softirq injection's tasklet (HI_SOFTIRQ), which has no Rust binding:
 * the module has one injector, so one tasklet and the function it calls.
 */
void rtrs_noise_softirq(void (*fn)(const void *), const void *data);
void rtrs_noise_softirq_kill(void);

static void (*rtrs_noise_fn)(const void *data);
static const void *rtrs_noise_data;

static void rtrs_noise_tasklet_fn(struct tasklet_struct *t)
{
	rtrs_noise_fn(rtrs_noise_data);
}

static DECLARE_TASKLET(rtrs_noise_tasklet, rtrs_noise_tasklet_fn);

/*
 * rtrs_noise_softirq - call fn(data) once as a HI_SOFTIRQ tasklet on this
 * CPU: raised with bottom halves disabled, it runs as they are enabled
 * again, in the caller's context, between softirq_entry and softirq_exit.
 * On PREEMPT_RT without PREEMPT_RT_NEEDS_BH_LOCK the caller may be
 * preempted before that, and another task's bottom-half enable (ktimers,
 * ksoftirqd) run it instead: it may still run after this returns. The
 * caller is a task pinned to its CPU, the only one that schedules the
 * tasklet; rtrs_noise_softirq_kill() waits for it.
 */
void rtrs_noise_softirq(void (*fn)(const void *), const void *data)
{
	rtrs_noise_fn = fn;
	rtrs_noise_data = data;
	local_bh_disable();
	tasklet_hi_schedule(&rtrs_noise_tasklet);
	local_bh_enable();
}

/* rtrs_noise_softirq_kill - wait until the tasklet is neither scheduled nor running. */
void rtrs_noise_softirq_kill(void)
{
	tasklet_kill(&rtrs_noise_tasklet);
}
