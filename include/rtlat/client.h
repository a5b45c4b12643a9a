/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rtlat client: an application's own periodic loop as the user stage of a
 * /dev/rtlat session (the C twin of tools/rtlat-client).
 *
 *	struct rtlat_client c;
 *	struct rtlat_client_opts o = RTLAT_CLIENT_OPTS_INIT;
 *	struct rtlat_record r;
 *
 *	o.cpu = 1;
 *	o.period_ns = 1000000;
 *	o.deadline_ns = 300000;
 *	if (rtlat_client_start(&c, &o))
 *		... errno says why ...
 *	while (running) {
 *		if (rtlat_client_wait(&c, &r))
 *			break;
 *		... this period's work ...
 *	}
 *	rtlat_client_stop(&c);
 *
 * rtlat_client_wait() blocks until the next period starts on the caller's
 * CPU and returns that activation's record (irq, thread and user stages);
 * the time until the next call is the iteration's response time, which the
 * kernel checks against deadline_ns: misses are counted (struct
 * rtlat_status, deadline_misses) and flagged in the records
 * (RTLAT_REC_DEADLINE_MISS) that the device's reader gets: the application
 * itself with rtlat_client_read() after rtlat_client_halt(), or another
 * process reading the device meanwhile, such as `rtlat run --attach`.
 *
 * Header only, for programs built with _GNU_SOURCE; every function returns
 * 0 (or a count) or -1 with errno set. See Documentation/rtlat-client.rst.
 */
#ifndef _RTLAT_CLIENT_H
#define _RTLAT_CLIENT_H

#ifndef _GNU_SOURCE
#error "rtlat/client.h needs _GNU_SOURCE (sched_setaffinity, CPU_SET) before any #include"
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/rtlat.h>

struct rtlat_client_opts {
	const char *device;	/* "/dev/rtlat" */
	unsigned int cpu;	/* the loop's CPU; the caller is pinned there */
	__u64 period_ns;	/* RTLAT_PERIOD_MIN_NS..RTLAT_PERIOD_MAX_NS */
	__u64 deadline_ns;	/* each iteration's deadline, at most the period;
				 * 0: none */
	int priority;		/* SCHED_FIFO priority of the caller, 1..99 */
	int kernel_priority;	/* of the kernel thread recording the periods
				 * the loop was not back for */
	int lock_memory;	/* mlockall() first */
	__u32 ring_records;	/* per-CPU ring; 0: default */
};

#define RTLAT_CLIENT_OPTS_INIT {					\
	.device = "/dev/rtlat", .cpu = 0,				\
	.period_ns = RTLAT_PERIOD_DEFAULT_NS, .deadline_ns = 0,		\
	.priority = 90, .kernel_priority = RTLAT_PRIORITY_DEFAULT,	\
	.lock_memory = 1, .ring_records = 0,				\
}

struct rtlat_client {
	int fd;
};

/*
 * Locks memory (if asked), makes the calling thread SCHED_FIFO at
 * o->priority on o->cpu, and configures and starts a session measuring
 * every stage on that CPU. The loop calls rtlat_client_wait() from this
 * thread. On failure the memory lock and the scheduling already set stay
 * (errno says what failed).
 */
static inline int rtlat_client_start(struct rtlat_client *c, const struct rtlat_client_opts *o)
{
	struct sched_param sp = { .sched_priority = o->priority };
	/* A CPU past the inline bitmap's goes in a bitmap of its own. */
	__u64 wide[RTLAT_CPUS_SIZE_MAX / 8] = { 0 };
	size_t words = o->cpu / 64 + 1;
	struct rtlat_config cfg;
	int err;

	c->fd = -1;
	if (words > RTLAT_CPUS_SIZE_MAX / 8) {
		errno = EINVAL;
		return -1;
	}
	if (o->lock_memory && mlockall(MCL_CURRENT | MCL_FUTURE))
		return -1;
	wide[o->cpu / 64] = 1ULL << (o->cpu % 64);
	/* (wide is a CPU mask of any length for the kernel, too.) */
	if (sched_setscheduler(0, SCHED_FIFO, &sp) ||
	    sched_setaffinity(0, words * 8, (cpu_set_t *)wide))
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.version = RTLAT_VERSION;
	cfg.period_ns = o->period_ns;
	if (o->cpu < RTLAT_MAX_CPUS) {
		cfg.cpus[o->cpu / 64] = wide[o->cpu / 64];
	} else {
		cfg.cpus_ptr = (__u64)(unsigned long)wide;
		cfg.cpus_size = (__u32)(words * 8);
	}
	cfg.stages = 1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_THREAD | 1 << RTLAT_STAGE_USER;
	cfg.priority = o->kernel_priority;
	cfg.ring_records = o->ring_records;
	cfg.deadline_ns = o->deadline_ns;
	c->fd = open(o->device ? o->device : "/dev/rtlat", O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		return -1;
	err = ioctl(c->fd, RTLAT_IOC_CONFIG, &cfg);
	if (err && errno == ENOTTY && !cfg.cpus_ptr) {
		/* A module older than cpus_ptr: its layout, without one. */
		cfg.size = RTLAT_CONFIG_SIZE_V2;
		err = ioctl(c->fd, RTLAT_IOC_CONFIG_V2, &cfg);
	}
	if (err && errno == ENOTTY && !cfg.cpus_ptr && !cfg.deadline_ns) {
		/* Older than deadlines too: the first layout, without one. */
		cfg.size = RTLAT_CONFIG_SIZE_V1;
		err = ioctl(c->fd, RTLAT_IOC_CONFIG_V1, &cfg);
	}
	if (err || ioctl(c->fd, RTLAT_IOC_START)) {
		err = errno;
		close(c->fd);
		c->fd = -1;
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * Blocks until the next period starts on the caller's CPU; *r is that
 * activation's record. EINTR on a signal, ESHUTDOWN once the session has
 * stopped (a threshold tripped).
 */
static inline int rtlat_client_wait(struct rtlat_client *c, struct rtlat_record *r)
{
	return ioctl(c->fd, RTLAT_IOC_USER_WAIT, r) ? -1 : 0;
}

/* The session's status: counts, deadline misses, a threshold's trip. */
static inline int rtlat_client_status(struct rtlat_client *c, struct rtlat_status *s)
{
	/* Older modules' layouts, newest first (what they lack stays 0). */
	static const unsigned long older[] = {
		RTLAT_IOC_STATUS_V3, RTLAT_IOC_STATUS_V2, RTLAT_IOC_STATUS_V1,
	};
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->version = RTLAT_VERSION;
	if (!ioctl(c->fd, RTLAT_IOC_STATUS, s))
		return 0;
	for (i = 0; i < sizeof(older) / sizeof(older[0]) && errno == ENOTTY; i++)
		if (!ioctl(c->fd, older[i], s))
			return 0;
	return -1;
}

/* Stops sampling; the records stay readable with rtlat_client_read(). */
static inline int rtlat_client_halt(struct rtlat_client *c)
{
	return ioctl(c->fd, RTLAT_IOC_STOP) ? -1 : 0;
}

/*
 * Up to n records of the session (with their response times and deadline
 * flags); after rtlat_client_halt(), 0 once all were read. EBUSY while
 * another process reads them.
 */
static inline ssize_t rtlat_client_read(struct rtlat_client *c, struct rtlat_record *r, size_t n)
{
	ssize_t got = read(c->fd, r, n * sizeof(*r));

	return got < 0 ? -1 : got / (ssize_t)sizeof(*r);
}

/* Stops the session and closes the device. */
static inline void rtlat_client_stop(struct rtlat_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

#endif /* _RTLAT_CLIENT_H */
