// SPDX-License-Identifier: GPL-2.0
/*
 * The C shim of rust/tracepoint.rs: probes on the scheduler's and
 * interrupts' tracepoints, and symbol names. Compiled as part of
 * rust/shim.c.
 */
#include <linux/interrupt.h>
#include <linux/kallsyms.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/events/irq.h>
#include <trace/events/sched.h>
#include <trace/events/timer.h>

#include "../shim.h"

/*
 * The name of the code at addr, for a report: "module:symbol" for a module's
 * code, "symbol" for the kernel's (with "+offset/size" if with_offset),
 * "?" where kallsyms has none (never the address: the report goes to user
 * space); NUL-terminated in len bytes (len > 0). Task context (the symbol
 * buffer is large).
 */
void rtrs_symbol_name(unsigned long addr, bool with_offset, char *buf, size_t len)
{
	char sym[KSYM_SYMBOL_LEN];
	char *mod;
	size_t n;

	if (with_offset)
		sprint_symbol(sym, addr);
	else
		sprint_symbol_no_offset(sym, addr);
	/* Not found, it is the address in hex. */
	if (!strncmp(sym, "0x", 2)) {
		strscpy(buf, "?", len);
		return;
	}
	/* "symbol [module]" */
	mod = strstr(sym, " [");
	n = strlen(sym);
	if (mod && n > 0 && sym[n - 1] == ']') {
		sym[n - 1] = '\0';
		*mod = '\0';
		snprintf(buf, len, "%s:%s", mod + 2, sym);
	} else {
		strscpy(buf, sym, len);
	}
}

/*
 * Probes on the kernel's scheduler and interrupt tracepoints
 * (rust/tracepoint.rs): each turns what its tracepoint passes into a struct
 * rtrs_tp_event and hands it to the module's handler.
 *
 * Tracepoint probes run under SRCU-fast: on PREEMPT_RT they may be preempted
 * and migrated (softirq_entry runs in a preemptible thread there). The
 * handler keeps per-CPU state, so interrupts are off around it: it stays on
 * the CPU of the event and no interrupt's probe runs in the middle of it.
 * The time is ktime_get_ns(), the clock of every time stamp of the layer
 * (rust/time.rs): no probe runs inside the timekeeper's update, which holds
 * interrupts off. Each probe's type is checked against its
 * tracepoint's prototype at compile time (check_trace_callback_type_*);
 * they are found by name, since the core kernel exports no tracepoint of
 * these to modules. Without CONFIG_TRACEPOINTS there is nothing to probe:
 * registration fails with -EOPNOTSUPP.
 */
#ifdef CONFIG_TRACEPOINTS
static_assert(sizeof(struct rtrs_tp_event) == 48);
static_assert(sizeof(struct rtrs_probes) == (3 + RTRS_TP_NR) * sizeof(void *));

/*
 * Whether the probe runs on one of the handler's CPUs (@p->cpus). A probe
 * on another CPU returns at once: an isolated CPU outside the session pays
 * one bit test per event, with interrupts on. Where a probe may migrate
 * (PREEMPT_RT), the CPU may change after this test: rtrs_tp_deliver()
 * tests again with interrupts off, where it cannot.
 */
static __always_inline bool rtrs_tp_mine(void *data)
{
	const struct rtrs_probes *p = data;

	return test_bit(raw_smp_processor_id(), p->cpus);
}

static __always_inline void rtrs_tp_deliver(void *data, struct rtrs_tp_event *ev)
{
	struct rtrs_probes *p = data;
	unsigned long flags;

	local_irq_save(flags);
	if (likely(test_bit(smp_processor_id(), p->cpus))) {
		ev->at = ktime_get_ns();
		p->handler(p->data, ev);
	}
	local_irq_restore(flags);
}

/*
 * The task's effective priority, boosting included: its RT priority (1..99)
 * when it runs as an RT task (its own policy, or priority inheritance from
 * an RT waiter), 100 for SCHED_DEADLINE, else its nice value.
 */
static int rtrs_tp_prio(struct task_struct *t)
{
	if (t->prio < 0)
		return MAX_RT_PRIO;
	if (t->prio < MAX_RT_PRIO)
		return MAX_RT_PRIO - 1 - t->prio;
	return task_nice(t);
}

static void rtrs_tp_sched_switch(void *data, bool preempt, struct task_struct *prev,
				 struct task_struct *next, unsigned int prev_state)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_SWITCH, .kind = RTRS_TP_TASK, .id = next->pid,
		.name = next->comm, .policy = next->policy, .prio = rtrs_tp_prio(next),
	});
}

static void rtrs_tp_irq_entry(void *data, int irq, struct irqaction *action)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_ENTER, .kind = RTRS_TP_HARDIRQ, .id = irq,
		.name = action->name,
	});
}

static void rtrs_tp_irq_exit(void *data, int irq, struct irqaction *action, int ret)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_EXIT, .kind = RTRS_TP_HARDIRQ, .id = irq,
	});
}

static void rtrs_tp_softirq_entry(void *data, unsigned int vec)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_ENTER, .kind = RTRS_TP_SOFTIRQ, .id = vec,
	});
}

static void rtrs_tp_softirq_exit(void *data, unsigned int vec)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_EXIT, .kind = RTRS_TP_SOFTIRQ, .id = vec,
	});
}

/*
 * An hrtimer callback is known by its timer (the address, which the exit
 * only compares: the callback may have freed the timer, or changed its
 * function, by then), and shown by its function, read at the entry.
 */
static void rtrs_tp_hrtimer_entry(void *data, struct hrtimer *t, ktime_t now)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_ENTER, .kind = RTRS_TP_TIMER, .id = (unsigned long)t,
		.aux = (unsigned long)ACCESS_PRIVATE(t, function),
	});
}

static void rtrs_tp_hrtimer_exit(void *data, struct hrtimer *t)
{
	if (!rtrs_tp_mine(data))
		return;
	rtrs_tp_deliver(data, &(struct rtrs_tp_event){
		.type = RTRS_TP_EXIT, .kind = RTRS_TP_TIMER, .id = (unsigned long)t,
	});
}

/*
 * The tracepoints probed, by name, and their probes, in the order they are
 * registered: the exits before the entries, so that no entry is seen
 * without its exit (an exit without its entry is ignored).
 */
static const struct {
	const char *name;
	void *probe;
} rtrs_tps[RTRS_TP_NR] = {
	{ "irq_handler_exit", rtrs_tp_irq_exit },
	{ "softirq_exit", rtrs_tp_softirq_exit },
	{ "hrtimer_expire_exit", rtrs_tp_hrtimer_exit },
	{ "sched_switch", rtrs_tp_sched_switch },
	{ "irq_handler_entry", rtrs_tp_irq_entry },
	{ "softirq_entry", rtrs_tp_softirq_entry },
	{ "hrtimer_expire_entry", rtrs_tp_hrtimer_entry },
};

/* Each probe's type is its tracepoint's (compile time only). */
static void __maybe_unused rtrs_tp_check_types(void)
{
	check_trace_callback_type_sched_switch(rtrs_tp_sched_switch);
	check_trace_callback_type_irq_handler_entry(rtrs_tp_irq_entry);
	check_trace_callback_type_irq_handler_exit(rtrs_tp_irq_exit);
	check_trace_callback_type_softirq_entry(rtrs_tp_softirq_entry);
	check_trace_callback_type_softirq_exit(rtrs_tp_softirq_exit);
	check_trace_callback_type_hrtimer_expire_entry(rtrs_tp_hrtimer_entry);
	check_trace_callback_type_hrtimer_expire_exit(rtrs_tp_hrtimer_exit);
}

static void rtrs_tp_find(struct tracepoint *tp, void *priv)
{
	struct rtrs_probes *p = priv;
	unsigned int i;

	for (i = 0; i < RTRS_TP_NR; i++)
		if (!strcmp(tp->name, rtrs_tps[i].name))
			p->tp[i] = tp;
}

/*
 * Finds the tracepoints by name and registers a probe on each, with @p as
 * their data; @p->handler and @p->data must be set, and @p must stay where
 * it is until rtrs_probes_unregister() returned. All or nothing: -ENOENT if
 * one is missing, or the error of the registration that failed. Sleeps.
 */
int rtrs_probes_register(struct rtrs_probes *p)
{
	unsigned int i, j;
	int err;

	might_sleep();
	memset(p->tp, 0, sizeof(p->tp));
	for_each_kernel_tracepoint(rtrs_tp_find, p);
	for (i = 0; i < RTRS_TP_NR; i++)
		if (!p->tp[i])
			return -ENOENT;
	for (i = 0; i < RTRS_TP_NR; i++) {
		err = tracepoint_probe_register(p->tp[i], rtrs_tps[i].probe, p);
		if (err) {
			for (j = 0; j < i; j++)
				tracepoint_probe_unregister(p->tp[j], rtrs_tps[j].probe, p);
			tracepoint_synchronize_unregister();
			return err;
		}
	}
	return 0;
}

/*
 * Unregisters the probes of a successful rtrs_probes_register() and waits
 * until none runs any more: afterwards @p and what @p->data points to may
 * be freed. Sleeps.
 */
void rtrs_probes_unregister(struct rtrs_probes *p)
{
	unsigned int i;

	might_sleep();
	/* (The entries first, as they came last.) */
	for (i = RTRS_TP_NR; i-- > 0;)
		WARN_ON_ONCE(tracepoint_probe_unregister(p->tp[i], rtrs_tps[i].probe, p));
	tracepoint_synchronize_unregister();
}
#else
int rtrs_probes_register(struct rtrs_probes *p)
{
	return -EOPNOTSUPP;
}

void rtrs_probes_unregister(struct rtrs_probes *p)
{
}
#endif
