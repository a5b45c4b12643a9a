/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prototypes of the rtrs C shim (rust/shim.c, made of rust/shim/, one file
 * per file of rust/); the Rust declarations are in rust/ffi.rs. Most
 * functions call one kernel macro or inline, under a name that says what
 * it is for. These do more:
 *  - raw_spinlock.c, percpu.c: the lock initialisers set the caller's
 *    lockdep name and class;
 *  - cpu.c: a CPU number is checked against nr_cpu_ids first;
 *  - kthread.c: rtrs_kthread_create_on_cpu() also sets the thread's policy;
 *  - irq.c: rtrs_set_current_fifo() builds the scheduling attributes;
 *  - task.c: rtrs_current_pinned_cpu(), rtrs_capable_rt() (two
 *    capabilities), rtrs_rtprio_allows() (the limit or a capability),
 *    rtrs_capable_admin();
 *  - file.c: rtrs_file_setup(), the module's own file operations;
 *  - context.c: rtrs_irq_stack(), the interrupted code's stack;
 *  - tracepoint.c: the probes (what each passes on, on which CPUs), their
 *    registration by name with its rollback, rtrs_symbol_name().
 */
#ifndef RTRS_SHIM_H
#define RTRS_SHIM_H

#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/local_lock.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

struct rtrs_irqsave_try {
	unsigned long flags;
	bool taken;
};

void rtrs_raw_spin_lock_init(raw_spinlock_t *lock, const char *name, struct lock_class_key *key);
void rtrs_raw_spin_lock(raw_spinlock_t *lock);
void rtrs_raw_spin_unlock(raw_spinlock_t *lock);
int rtrs_raw_spin_trylock(raw_spinlock_t *lock);
unsigned long rtrs_raw_spin_lock_irqsave(raw_spinlock_t *lock);
void rtrs_raw_spin_unlock_irqrestore(raw_spinlock_t *lock, unsigned long flags);
void rtrs_raw_spin_assert_held(raw_spinlock_t *lock);
void rtrs_preempt_disable(void);
void rtrs_preempt_enable(void);
void rtrs_migrate_disable(void);
void rtrs_migrate_enable(void);
bool rtrs_in_hardirq(void);
bool rtrs_in_task(void);
bool rtrs_preemptible(void);
bool rtrs_irqs_disabled(void);
unsigned int rtrs_smp_processor_id(void);
bool rtrs_cpu_online(unsigned int cpu);
bool rtrs_cpu_active(unsigned int cpu);
void *rtrs_per_cpu_ptr(void __percpu *ptr, unsigned int cpu);
void *rtrs_this_cpu_ptr(void __percpu *ptr);
struct task_struct *rtrs_kthread_create_on_cpu(int (*fn)(void *), void *data,
					       unsigned int cpu, const char *name, int prio);
int rtrs_kthread_stop_put(struct task_struct *t);
void rtrs_module_get(void);
void rtrs_module_put(void);
void rtrs_set_current_interruptible(void);
void rtrs_set_current_running(void);
int rtrs_mutex_lock_interruptible(struct mutex *lock);
void __percpu *rtrs_alloc_percpu(size_t size, size_t align);
bool rtrs_cpu_possible(unsigned int cpu);
struct rtrs_irqsave_try rtrs_raw_spin_lock_irqsave_try(raw_spinlock_t *lock);
bool rtrs_current_is_idle(void);
void rtrs_trace_puts(const char *s);
int rtrs_current_pinned_cpu(void);
bool rtrs_capable_rt(void);
bool rtrs_capable_perfmon(void);
bool rtrs_rtprio_allows(unsigned int prio);
bool rtrs_capable_admin(void);
void rtrs_smp_mb(void);
int rtrs_file_setup(struct file *f,
		    __poll_t (*poll)(struct file *, struct poll_table_struct *));
int rtrs_cpuhp_add(const char *name, int (*online)(unsigned int),
		   int (*offline)(unsigned int));
void rtrs_cpuhp_remove(int state);
void rtrs_local_lock_init(local_lock_t *lock, const char *name, void *key);
void rtrs_local_lock(local_lock_t __percpu *lock);
void rtrs_local_unlock(local_lock_t __percpu *lock);

int rtrs_set_current_fifo(int prio);
int rtrs_current_tid(void);
unsigned int rtrs_current_flags(void);
int rtrs_pci_domain_nr(struct pci_dev *pdev);

/* Event kinds, as rtcore::blame::Kind numbers them. */
enum rtrs_tp_kind {
	RTRS_TP_TASK = 1,
	RTRS_TP_HARDIRQ = 2,
	RTRS_TP_SOFTIRQ = 3,
	RTRS_TP_TIMER = 4,
};

enum rtrs_tp_type {
	RTRS_TP_SWITCH = 0,	/* a task switched in */
	RTRS_TP_ENTER = 1,	/* a handler began */
	RTRS_TP_EXIT = 2,	/* a handler ended */
};

/* What a tracepoint probe saw (rust/tracepoint.rs: RawEvent). */
struct rtrs_tp_event {
	s64 at;			/* ktime_get_ns() */
	u32 type;		/* enum rtrs_tp_type */
	u32 kind;		/* enum rtrs_tp_kind */
	u64 id;			/* pid, IRQ, softirq vector, hrtimer address */
	u64 aux;		/* an hrtimer's callback at its entry, else 0 */
	const char *name;	/* comm, the IRQ action's name, or NULL */
	u16 policy;		/* a task's scheduling policy */
	s16 prio;		/* its effective priority (see rtrs_tp_prio) */
};

/* Number of tracepoints probed. */
#define RTRS_TP_NR 7

struct tracepoint;

/* A set of probes (rust/tracepoint.rs: RawProbes). */
struct rtrs_probes {
	/* @ev is a const struct rtrs_tp_event * (void: the same type for C and Rust under kCFI). */
	void (*handler)(void *data, const void *ev);
	void *data;
	/* The CPUs whose events the handler gets: a bitmap of nr_cpu_ids bits. */
	const unsigned long *cpus;
	struct tracepoint *tp[RTRS_TP_NR];
};

unsigned long rtrs_local_irq_save(void);
void rtrs_local_irq_restore(unsigned long flags);
unsigned int rtrs_irq_stack(unsigned long *store, unsigned int size);
void rtrs_symbol_name(unsigned long addr, bool with_offset, char *buf, size_t len);
int rtrs_probes_register(struct rtrs_probes *p);
void rtrs_probes_unregister(struct rtrs_probes *p);

#endif /* RTRS_SHIM_H */
