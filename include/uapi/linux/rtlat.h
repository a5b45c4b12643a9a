/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rtlat: wake-up latency measurement device (/dev/rtlat).
 *
 * Every structure starts with its size and RTLAT_VERSION; fields have
 * explicit widths and native byte order, and there is no implicit padding.
 * The Rust twin is lib/rtcore/src/uapi/, a file per structure. See
 * Documentation/rtlat.rst.
 */
#ifndef _UAPI_LINUX_RTLAT_H
#define _UAPI_LINUX_RTLAT_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define RTLAT_VERSION		1
/* CPUs the inline bitmaps (cpus[], offline[], unattended[]) name; the
 * bitmaps at cpus_ptr (config) and in STATUS's buffers name any. */
#define RTLAT_MAX_CPUS		256
#define RTLAT_CPU_WORDS		(RTLAT_MAX_CPUS / 64)
/* Largest bitmap at a *_ptr, bytes (32768 CPUs). */
#define RTLAT_CPUS_SIZE_MAX	4096

enum rtlat_stage {
	RTLAT_STAGE_IRQ = 0,		/* timer hard-IRQ entry */
	RTLAT_STAGE_THREAD = 1,		/* SCHED_FIFO kernel thread running */
	RTLAT_STAGE_USER = 2,		/* user thread returning from USER_WAIT */
	RTLAT_STAGE_RESPONSE = 3,	/* user thread back for the next one */
	RTLAT_NR_STAGES = 4,
};

#define RTLAT_PERIOD_MIN_NS	50000ULL
#define RTLAT_PERIOD_MAX_NS	1000000000ULL
#define RTLAT_PERIOD_DEFAULT_NS	1000000ULL
#define RTLAT_PRIORITY_DEFAULT	95
#define RTLAT_RING_DEFAULT	4096
#define RTLAT_RING_MAX		(1U << 20)
/* Largest total ring memory of one session (CPUs x ring_records x 64 bytes);
 * more is refused with ENOMEM. The default (ring_records 0) is
 * RTLAT_RING_DEFAULT per CPU, halved until the rings fit. */
#define RTLAT_RING_TOTAL_MAX_BYTES	(64ULL << 20)

#define RTLAT_CFG_TRACING_OFF	(1U << 0)	/* tracing_off() on threshold */
/* Explain late activations (needs the thread stage): RTLAT_IOC_BLAME. */
#define RTLAT_CFG_BLAME		(1U << 1)

struct rtlat_config {
	__u32 size;			/* sizeof(struct rtlat_config) */
	__u32 version;			/* RTLAT_VERSION */
	__u64 period_ns;		/* RTLAT_PERIOD_MIN_NS..MAX_NS */
	__u64 cpus[RTLAT_CPU_WORDS];	/* CPU bitmap; all zero: every online CPU */
	__u32 stages;			/* 1 << RTLAT_STAGE_*: IRQ required; THREAD
					 * unless irq-only; USER needs THREAD */
	__u32 priority;			/* SCHED_FIFO 1..99 of the kernel threads */
	__u64 threshold_ns[RTLAT_NR_STAGES];	/* stop when exceeded; 0: none */
	__u32 flags;			/* RTLAT_CFG_* */
	__u32 ring_records;		/* per-CPU ring, power of two; 0: default */
	/* Since size 104: a response (user stage needed) later than this, or
	 * none while the waiter has been away longer, is a deadline miss;
	 * at most period_ns; 0: none. */
	__u64 deadline_ns;
	/* Since size 120: the CPU set as a bitmap in the caller's memory,
	 * cpus_size bytes (a multiple of 8, at most RTLAT_CPUS_SIZE_MAX) at
	 * cpus_ptr, for CPUs past RTLAT_MAX_CPUS (cpus[] then all zero; a
	 * bit past the kernel's CPUs is EINVAL; all zero, like cpus[], is
	 * every online CPU); 0 and 0: cpus[]. With this
	 * layout, "every online CPU" includes those past RTLAT_MAX_CPUS;
	 * with the older ones such a machine's is E2BIG. */
	__u64 cpus_ptr;
	__u32 cpus_size;
	union {
		/* With RTLAT_CFG_BLAME: explain the activations whose thread
		 * latency is at least this many us (0: every one); else 0.
		 * (With an older layout the flag explains every one.) */
		__u32 blame_us;
		__u32 reserved;		/* its name before: 0 */
	};
};
/* The earlier layouts (without deadline_ns; without cpus_ptr):
 * RTLAT_IOC_CONFIG of programs built against them still works: it is
 * RTLAT_IOC_CONFIG_V1 and _V2. */
#define RTLAT_CONFIG_SIZE_V1	96
#define RTLAT_CONFIG_SIZE_V2	104

#define RTLAT_REC_NO_USER	(1U << 0)	/* user stage not measured */
#define RTLAT_REC_NO_RESPONSE	(1U << 1)	/* no response time */
#define RTLAT_REC_IDLE		(1U << 2)	/* CPU was idle at the IRQ */
#define RTLAT_REC_THRESHOLD	(1U << 3)	/* this activation tripped */
#define RTLAT_REC_NO_THREAD	(1U << 4)	/* thread stage not measured */
#define RTLAT_REC_NO_WAITER	(1U << 5)	/* user stage on, no waiter was
						 * blocked, or it did not run
						 * with the activation */
#define RTLAT_REC_DIRECT	(1U << 6)	/* the timer's IRQ woke the user
						 * waiter itself: thread stage
						 * taken by the waiter */
#define RTLAT_REC_DEADLINE_MISS	(1U << 7)	/* response over deadline_ns, or
						 * none and away longer */

/* One timer activation; read() returns whole records. */
struct rtlat_record {
	__u16 version;			/* RTLAT_VERSION */
	__u16 size;			/* sizeof(struct rtlat_record) == 64 */
	__u32 cpu;
	__u64 seq;			/* strictly increasing per CPU */
	__u64 expected_ns;		/* expected expiry, CLOCK_MONOTONIC */
	__s64 lat_ns[RTLAT_NR_STAGES];	/* against expected_ns; -1: not measured */
	__u32 missed;			/* periods skipped before this one */
	__u32 flags;			/* RTLAT_REC_* */
};

enum rtlat_state {
	RTLAT_STATE_IDLE = 0,
	RTLAT_STATE_CONFIGURED = 1,
	RTLAT_STATE_RUNNING = 2,
	RTLAT_STATE_STOPPED = 3,
};

enum rtlat_stop_reason {
	RTLAT_STOP_NONE = 0,
	RTLAT_STOP_USER = 1,
	RTLAT_STOP_THRESHOLD = 2,
};

struct rtlat_status {
	__u32 size;
	__u32 version;
	__u32 state;			/* enum rtlat_state */
	__u32 stop_reason;		/* enum rtlat_stop_reason */
	__u32 trip_cpu;			/* threshold stop: where and what */
	__u32 trip_stage;
	__u64 trip_value_ns;
	__u64 trip_seq;
	__u64 started_ns;		/* CLOCK_MONOTONIC */
	__u64 cpus[RTLAT_CPU_WORDS];	/* CPUs of the session */
	__u64 offline[RTLAT_CPU_WORDS];	/* of those, gone offline */
	__u64 produced;			/* produced == delivered + dropped + queued */
	__u64 delivered;
	__u64 dropped;
	__u64 missed;
	/* Since size 176: CPUs whose latest activation found no user waiter. */
	__u64 unattended[RTLAT_CPU_WORDS];
	/* Since size 184: records flagged RTLAT_REC_DEADLINE_MISS. */
	__u64 deadline_misses;
	/* Since size 216 (and RTLAT_IOC_STATUS is _IOWR): the three sets in
	 * full, whatever the CPUs' numbers. In: size and version, and a
	 * buffer of cpu_words __u64 at each pointer that is not 0 (a request
	 * all zero, as older programs pass, asks for no buffer). The kernel
	 * fills the first cpu_words (out) words of each buffer like the inline
	 * bitmap of the same name and leaves the rest. Out: cpu_words is the
	 * words a set needs (nr_cpu_ids / 64, rounded up), nr_cpu_ids the
	 * kernel's number of possible CPUs; a buffer given that is smaller
	 * fails with EOVERFLOW, the whole structure written back (no buffer
	 * filled). EFAULT on a buffer may leave the ones before it filled. */
	__u64 cpus_ptr;
	__u64 offline_ptr;
	__u64 unattended_ptr;
	__u32 cpu_words;
	__u32 nr_cpu_ids;
};
/* The earlier layouts (without unattended; without deadline_misses;
 * without the sets in full): RTLAT_IOC_STATUS of programs built against
 * them still works and gets that many bytes, unless the session has a CPU
 * past RTLAT_MAX_CPUS, which those cannot name: EOVERFLOW. */
#define RTLAT_STATUS_SIZE_V1	144
#define RTLAT_STATUS_SIZE_V2	176
#define RTLAT_STATUS_SIZE_V3	184

/* Histogram layout: see lib/rtcore/src/hist/ (log-linear, 64 per octave). */
#define RTLAT_HIST_SUB_BITS	6
#define RTLAT_HIST_OCTAVES	28
#define RTLAT_HIST_BUCKETS	(64 + RTLAT_HIST_OCTAVES * 64 + 1)
#define RTLAT_HIST_LAYOUT	((RTLAT_HIST_SUB_BITS << 8) | RTLAT_HIST_OCTAVES)

struct rtlat_stats {
	__u32 size;
	__u32 version;
	__u32 cpu;			/* in */
	__u32 stage;			/* in: enum rtlat_stage */
	__u64 buckets_ptr;		/* in: __u64[nr_buckets] or 0 */
	__u32 nr_buckets;		/* in: capacity; out: written */
	__u32 hist_layout;		/* out: RTLAT_HIST_LAYOUT */
	__u64 count, min, max, sum;	/* out, ns */
	__u64 max_seq, max_time;	/* out: activation of the max */
	__u64 missed, produced, delivered, dropped;	/* out, this CPU */
	__u64 percentiles[7];		/* out: p50 p90 p99 p99.9 p99.99 p99.999 p99.9999 */
};

/* The kinds of source (lib/rtcore/src/blame/source.rs). */
enum rtlat_blame_kind {
	RTLAT_BLAME_UNKNOWN = 0,	/* before what the CPU's timeline holds */
	RTLAT_BLAME_TASK = 1,		/* id: pid (0: idle) */
	RTLAT_BLAME_IRQ = 2,		/* id: IRQ number; name: its handler's */
	RTLAT_BLAME_SOFTIRQ = 3,	/* id: vector (HI = 0 ... RCU = 9) */
	RTLAT_BLAME_TIMER = 4,		/* id: hrtimer; aux, name: its callback */
	RTLAT_BLAME_MEASURE = 5,	/* id: pid of the task that measured
					 * (kernel thread or user waiter): its
					 * own time, from its switch-in to its
					 * clock read, or work of its that kept
					 * the interrupt out; only to a request
					 * with RTLAT_BLAME_WANT_MEASURE (else a
					 * RTLAT_BLAME_TASK, as before it) */
};

/* struct rtlat_blame's want (in): the measuring task's time as
 * RTLAT_BLAME_MEASURE. Bit 0 is ignored (an answer has has_worst 1 there,
 * which a program may send back as its next request); others: EINVAL. */
#define RTLAT_BLAME_WANT_MEASURE	(1U << 1)

#define RTLAT_BLAME_NAME_LEN	48
#define RTLAT_BLAME_CULPRITS	16
#define RTLAT_BLAME_IRQ_PARTS	4
#define RTLAT_BLAME_THREAD_PARTS	8
#define RTLAT_BLAME_STACK_DEPTH	8
#define RTLAT_BLAME_FRAME_LEN	64
#define RTLAT_BLAME_WORST	5	/* worst activations kept per CPU */
#define RTLAT_BLAME_LONG_NAMES	16
/* module:symbol with kallsyms' longest symbol (KSYM_NAME_LEN 512) */
#define RTLAT_BLAME_LONG_NAME_LEN	576

struct rtlat_blame_entry {
	__u32 kind;			/* enum rtlat_blame_kind */
	__u32 policy;			/* a task's SCHED_* */
	__s32 prio;			/* a task's RT priority as it ran, 100 for
					 * SCHED_DEADLINE, else its nice value */
	__u32 count;			/* culprits: late activations it was part
					 * of; parts: times it began or ran */
	__u64 id;
	__u64 aux;			/* an hrtimer's, since RTLAT_BLAME_SIZE_V1:
					 * k > 0 if long_names[k - 1] is its
					 * callback's whole name; else 0 */
	__u64 ns;			/* its time */
	__u64 worst_ns;			/* culprits: its largest part in one */
	char name[RTLAT_BLAME_NAME_LEN];	/* comm, handler, module:symbol */
};

/* One CPU's activations whose thread latency reached the session's
 * blame_us, explained by what ran on that CPU (the sched_switch, irq,
 * softirq and hrtimer tracepoints) from the expected expiry to the
 * interrupt (irq) and from the interrupt to the thread (thread): each
 * part's time is exclusive, and the parts add up to the latency. */
struct rtlat_blame {
	__u32 size;
	__u32 version;
	__u32 cpu;			/* in */
	__u32 nr_culprits;
	__u64 explained;		/* late activations explained */
	__u64 late_ns;			/* their thread latencies, summed */
	__u64 other_ns;			/* time of sources past culprits[] */
	/* The worst one of rank rank (0: the largest thread latency, 1: the
	 * next...), if has_worst: the CPU keeps nr_worst of them. */
	union {
		__u32 has_worst;	/* out */
		__u32 want;		/* in: RTLAT_BLAME_WANT_* (0 before
					 * them), in every request */
	};
	__u32 nr_irq, nr_thread;
	union {
		__u32 reserved;		/* (before rank) */
		__u32 rank;		/* in: below RTLAT_BLAME_WORST, else
					 * EINVAL; out: the same */
	};
	__u64 seq, expected_ns;
	__s64 irq_ns, thread_ns;
	__u64 irq_other_ns, thread_other_ns;	/* sources past irq[], thread[] */
	/* The sources over the run, most time first. */
	struct rtlat_blame_entry culprits[RTLAT_BLAME_CULPRITS];
	struct rtlat_blame_entry irq[RTLAT_BLAME_IRQ_PARTS];
	struct rtlat_blame_entry thread[RTLAT_BLAME_THREAD_PARTS];
	/* The worst one's interrupt interrupted this code, innermost first:
	 * module:symbol+offset/size ("?" unknown); none from user space. */
	__u32 nr_stack;
	union {
		__u32 reserved2;	/* (before nr_worst) */
		__u32 nr_worst;		/* in: nonzero to be told; out: the
					 * worst ones kept, ranks below it (0
					 * if not asked: older tools ask 0) */
	};
	char stack[RTLAT_BLAME_STACK_DEPTH][RTLAT_BLAME_FRAME_LEN];
	/* Since size RTLAT_BLAME_SIZE_V1 (RTLAT_IOC_BLAME; RTLAT_IOC_BLAME_V1
	 * asks in the layout before, which ends here): the hrtimer callbacks'
	 * names whole, which name[] cuts, "module:symbol" as kallsyms has them
	 * (a Rust symbol mangled: the reader demangles), NUL-padded; one per
	 * callback, the first RTLAT_BLAME_LONG_NAMES seen, named by entries'
	 * aux. */
	__u32 nr_long_names;
	__u32 reserved3;
	char long_names[RTLAT_BLAME_LONG_NAMES][RTLAT_BLAME_LONG_NAME_LEN];
};
#define RTLAT_BLAME_SIZE_V1	3312

#define RTLAT_IOC_MAGIC		0xb7
/* CONFIG and START: on a file opened for writing, a priority within the
 * caller's RLIMIT_RTPRIO or CAP_SYS_NICE; else CAP_SYS_NICE and
 * CAP_SYS_ADMIN (else EPERM). RTLAT_CFG_BLAME also needs CAP_PERFMON or
 * CAP_SYS_ADMIN, RTLAT_CFG_TRACING_OFF CAP_SYS_ADMIN. */
#define RTLAT_IOC_CONFIG	_IOW(RTLAT_IOC_MAGIC, 1, struct rtlat_config)
#define RTLAT_IOC_CONFIG_V1	_IOW(RTLAT_IOC_MAGIC, 1, char[RTLAT_CONFIG_SIZE_V1])
#define RTLAT_IOC_CONFIG_V2	_IOW(RTLAT_IOC_MAGIC, 1, char[RTLAT_CONFIG_SIZE_V2])
#define RTLAT_IOC_START		_IO(RTLAT_IOC_MAGIC, 2)
#define RTLAT_IOC_STOP		_IO(RTLAT_IOC_MAGIC, 3)
#define RTLAT_IOC_STATUS	_IOWR(RTLAT_IOC_MAGIC, 4, struct rtlat_status)
#define RTLAT_IOC_STATUS_V1	_IOR(RTLAT_IOC_MAGIC, 4, char[RTLAT_STATUS_SIZE_V1])
#define RTLAT_IOC_STATUS_V2	_IOR(RTLAT_IOC_MAGIC, 4, char[RTLAT_STATUS_SIZE_V2])
#define RTLAT_IOC_STATUS_V3	_IOR(RTLAT_IOC_MAGIC, 4, char[RTLAT_STATUS_SIZE_V3])
#define RTLAT_IOC_STATS		_IOWR(RTLAT_IOC_MAGIC, 5, struct rtlat_stats)
#define RTLAT_IOC_RESET		_IO(RTLAT_IOC_MAGIC, 6)
#define RTLAT_IOC_USER_WAIT	_IOR(RTLAT_IOC_MAGIC, 7, struct rtlat_record)
/* Become the streaming reader of the current session and keep it: this
 * file's read(), STATUS and STATS answer from it until the file closes. */
#define RTLAT_IOC_ATTACH	_IO(RTLAT_IOC_MAGIC, 8)
/* A session configured with RTLAT_CFG_BLAME (else EINVAL; a CPU not in it:
 * EINVAL): its late activations on one CPU, explained. It names other
 * tasks: CAP_PERFMON or CAP_SYS_ADMIN (else EPERM). */
#define RTLAT_IOC_BLAME		_IOWR(RTLAT_IOC_MAGIC, 9, struct rtlat_blame)
#define RTLAT_IOC_BLAME_V1	_IOWR(RTLAT_IOC_MAGIC, 9, char[RTLAT_BLAME_SIZE_V1])

#endif /* _UAPI_LINUX_RTLAT_H */
