// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/preempt.rs: preemption, migration and interrupt state
 * of this CPU. Compiled as part of rust/shim.c.
 */
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/smp.h>

#include "../shim.h"

/* preempt_disable() / preempt_enable(). */
void rtrs_preempt_disable(void)
{
	preempt_disable();
}

void rtrs_preempt_enable(void)
{
	preempt_enable();
}

/* migrate_disable() / migrate_enable(): pin to this CPU, stay preemptible. */
void rtrs_migrate_disable(void)
{
	migrate_disable();
}

void rtrs_migrate_enable(void)
{
	migrate_enable();
}

/* in_hardirq(), in_task(), preemptible(), irqs_disabled() as booleans. */
bool rtrs_in_hardirq(void)
{
	return in_hardirq();
}

bool rtrs_in_task(void)
{
	return in_task();
}

bool rtrs_preemptible(void)
{
	return preemptible();
}

bool rtrs_irqs_disabled(void)
{
	return irqs_disabled();
}

/* smp_processor_id() (caller has preemption or migration disabled). */
unsigned int rtrs_smp_processor_id(void)
{
	return smp_processor_id();
}

/* local_irq_save(): interrupts off on this CPU; returns the state to restore. */
unsigned long rtrs_local_irq_save(void)
{
	unsigned long flags;

	local_irq_save(flags);
	return flags;
}

/* local_irq_restore(). */
void rtrs_local_irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}
