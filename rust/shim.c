// SPDX-License-Identifier: GPL-2.0
/*
 * C shim of the rtrs shared layer: one small wrapper for each kernel API the
 * layer needs that is a macro or an inline function, so has no Rust binding.
 *
 * Every wrapper does exactly what the wrapped API does, nothing more; the
 * Rust side (rust/ffi.rs) declares them and documents the contracts. A module
 * that uses the layer links this file in as a composite object through a
 * one-line wrapper that includes it (Kbuild does not let two modules share an
 * object file).
 */
#include <linux/capability.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/interrupt.h>
#include <linux/kallsyms.h>
#include <linux/stacktrace.h>
#include <asm/irq_regs.h>
#include <linux/kthread.h>
#include <linux/local_lock.h>
#include <linux/pci.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/events/irq.h>
#include <trace/events/sched.h>
#include <trace/events/timer.h>
#include <uapi/linux/sched/types.h>

#include "shim.h"

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

/* cpu_online(). */
bool rtrs_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

/* cpu_active(): online and schedulable (false from the start of its teardown). */
bool rtrs_cpu_active(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_active(cpu);
}

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

/*
 * mutex_lock_interruptible(): 0 with the mutex held, or -EINTR (not held)
 * when a signal came first. A macro with lockdep.
 */
int rtrs_mutex_lock_interruptible(struct mutex *lock)
{
	return mutex_lock_interruptible(lock);
}

/* __alloc_percpu_gfp(GFP_KERNEL): zeroed per-CPU memory, or NULL. */
void __percpu *rtrs_alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu_gfp(size, align, GFP_KERNEL);
}

/* cpu_possible(). */
bool rtrs_cpu_possible(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_possible(cpu);
}

/* raw_spin_trylock_irqsave(): @taken tells whether the lock was taken. */
struct rtrs_irqsave_try rtrs_raw_spin_lock_irqsave_try(raw_spinlock_t *lock)
{
	struct rtrs_irqsave_try r;

	r.taken = raw_spin_trylock_irqsave(lock, r.flags);
	return r;
}

/* is_idle_task(current): the CPU was idle when the interrupt came. */
bool rtrs_current_is_idle(void)
{
	return is_idle_task(current);
}

/* trace_puts(): a marker in the ftrace buffer. */
void rtrs_trace_puts(const char *s)
{
	__trace_puts(_THIS_IP_, s);
}

/* The CPU the current task is pinned to (affinity of exactly one CPU), or -1. */
int rtrs_current_pinned_cpu(void)
{
	if (current->nr_cpus_allowed != 1)
		return -1;
	return cpumask_first(current->cpus_ptr);
}

/* capable(CAP_SYS_NICE): may run measurement threads at RT priority. */
bool rtrs_capable_rt(void)
{
	return capable(CAP_SYS_NICE) && capable(CAP_SYS_ADMIN);
}

/* perfmon_capable(): may see what other tasks ran, as perf asks for it
 * (CAP_PERFMON or CAP_SYS_ADMIN). */
bool rtrs_capable_perfmon(void)
{
	return perfmon_capable();
}

/* smp_mb(): the same in every kernel version (the Rust binding changed in 7.3). */
void rtrs_smp_mb(void)
{
	smp_mb();
}

/*
 * Give @f this module's own copy of its file_operations, from ->open():
 *  - with .owner = THIS_MODULE, so the VFS holds the module while @f is open
 *    (Linux 7.2's Rust MiscDevice leaves fops->owner NULL; 7.3 sets it, and
 *    then the reference the VFS took at open is the one it drops at close);
 *  - with .poll = @poll when non-NULL (7.3's MiscDevice has no poll hook).
 * The copy is made once per module, of the first file's operations: one
 * device type per module. A file of another type (other operations or
 * another @poll) would get the first type's: it is refused, -EINVAL, with a
 * warning. Returns 0, or -ENODEV if the module is going away.
 */
int rtrs_file_setup(struct file *f,
		    __poll_t (*poll)(struct file *, struct poll_table_struct *))
{
	static struct file_operations fops;
	static const struct file_operations *from;
	static DEFINE_MUTEX(lock);
	bool held = !f->f_op->owner;
	int ret = 0;

	if (held && !try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&lock);
	if (!fops.owner) {
		from = f->f_op;
		fops = *f->f_op;
		fops.owner = THIS_MODULE;
		fops.poll = poll;
	} else if (WARN_ONCE(from != f->f_op || fops.poll != poll,
			     "rtrs: a second device type in one module\n")) {
		ret = -EINVAL;
	}
	mutex_unlock(&lock);
	if (ret) {
		if (held)
			module_put(THIS_MODULE);
		return ret;
	}
	f->f_op = &fops;
	return 0;
}

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

/* The current task (an IRQ thread) to SCHED_FIFO `prio`, as chrt -f would. */
int rtrs_set_current_fifo(int prio)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};

	return sched_setattr_nocheck(current, &attr);
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

/* pci_domain_nr(pdev->bus): the PCI domain (segment) of a device. */
int rtrs_pci_domain_nr(struct pci_dev *pdev)
{
	return pci_domain_nr(pdev->bus);
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

/*
 * In a hard IRQ: the stack of the code it interrupted, its instruction
 * pointer first, then its callers as the unwinder finds them from here (the
 * frames of the interrupt itself left out); just the instruction pointer
 * where the unwinder does not reach it; nothing if the interrupt came from
 * user space or outside an interrupt. At most size entries; returns how
 * many.
 */
unsigned int rtrs_irq_stack(unsigned long *store, unsigned int size)
{
	struct pt_regs *regs = get_irq_regs();
	unsigned long frames[32], ip;
	unsigned int n, i;

	if (!regs || !size || user_mode(regs))
		return 0;
	ip = instruction_pointer(regs);
	n = stack_trace_save(frames, ARRAY_SIZE(frames), 0);
	for (i = 0; i < n && frames[i] != ip; i++)
		;
	if (i == n) {
		store[0] = ip;
		return 1;
	}
	n = min(n - i, size);
	memcpy(store, frames + i, n * sizeof(*store));
	return n;
}

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
