// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: a multi-threaded, structure-aware fuzzer of the suite's UAPI,
 * /dev/rtlat and every /dev/rtedu<N> (Documentation/testing.rst).
 *
 * Threads with different call mixes work on several open files of every
 * device at once: every ioctl (RTLAT_IOC_USER_WAIT from pinned and unpinned
 * threads, the rtedu device ioctls, unknown numbers), blocking and
 * non-blocking read()/readv()/pread(), poll/select/epoll, close and reopen,
 * fork (the child uses the inherited files, sometimes without privileges,
 * and exits) and CPU 1 going offline and online. The arguments are mostly
 * valid, so that sessions really run, then mutated to boundary values and
 * bad pointers.
 *
 * It checks every call's errno against the documented set of that call
 * (and, where the input decides it, the errno itself), what user space can
 * see of the invariants (records, status and statistics), and, with a
 * watchdog thread, that no call blocks longer than it may, sleeps
 * uninterruptibly or ignores a signal. Kernel splats are the runner's job
 * (dmesg). Each thread's sequence of operations follows from the seed
 * (printed; RTRS_FUZZ_SEED or -s replays it); the interleaving of the
 * threads does not. Ends with targeted checks of races the fuzzing found.
 *
 * Global state it changes (Documentation/testing.rst, "In a test farm"):
 * loads rtlat.ko and rtedu.ko if not loaded, and unloads what it loaded;
 * CPU hotplug (CPU 1 offline and online, again and again); the global
 * tracing_on (sessions with RTLAT_CFG_TRACING_OFF turn it off, the fuzzer
 * turns it back on at the end).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/rtedu.h>
#include <linux/rtlat.h>
#include "kselftest.h"

#define MAX_THREADS	16
#define MAX_DEVS	9
#define MAX_SLOTS	4
#define NERR		136		/* errno counters; the last one: any larger */
#define PAGE		4096UL
/* Each region of a thread's guard area (RW, none, RO, none): room for the
 * largest argument (struct rtlat_blame, 12.5 KiB). */
#define GSPAN		(4 * PAGE)
#define BIG_SIZE	(2UL << 20)	/* per-thread read buffer */
#define REC		((size_t)sizeof(struct rtlat_record))
#define NBUSY		(2 * MAX_THREADS + 1)	/* threads, their children, main */
#define MAIN_BUSY	(2 * MAX_THREADS)

/* How long a call may take before the watchdog calls it a hang (times SLOW, below). */
#define HANG_S		20
#define HOTPLUG_HANG_S	60
/*
 * A blocking call must return this soon after its signal; asleep
 * uninterruptibly this long in a read, a poll or a cheap ioctl is a bug.
 * Both grow with `slowness`, how much slower than the x86_64 guest on an
 * idle host this one runs (the calibration at the start; a shared host or
 * another architecture's TCG), up to 4 times.
 */
static double slowness = 1.0;
#define SLOW		(slowness < 4.0 ? slowness : 4.0)
#define SIGNAL_SLACK_NS	((__u64)(5e9 * SLOW))
#define DSTATE_NS	((__u64)(2e9 * SLOW))

/* ------------------------------------------------------------------ */
/* Call kinds, device classes, checks                                  */

enum kind {
	K_OPEN, K_CLOSE, K_FCNTL, K_CONFIG, K_START, K_STOP, K_RESET, K_STATUS,
	K_STATS, K_USER_WAIT, K_INFO, K_FACTORIAL, K_DMA, K_BAD_IOCTL, K_READ,
	K_READ_NB, K_READV, K_PREAD, K_PREADV2, K_WRITE, K_MMAP, K_POLL,
	K_SELECT, K_EPOLL_CTL, K_EPOLL_WAIT, K_FDINFO, K_FORK, K_HOTPLUG, K_BLAME, NKIND
};

static const char *const kind_name[NKIND] = {
	"open", "close", "fcntl", "CONFIG", "START", "STOP", "RESET", "STATUS",
	"STATS", "USER_WAIT", "INFO", "FACTORIAL", "DMA", "bad ioctl", "read",
	"read nonblock", "readv", "pread", "preadv2 NOWAIT", "write", "mmap", "poll",
	"select", "epoll_ctl", "epoll_wait", "fdinfo", "fork", "cpu1 hotplug", "BLAME",
};

enum devc { DC_RTLAT, DC_RTEDU, DC_NONE, NDEVC };
static const char *const devc_name[NDEVC] = { "rtlat", "rtedu", "-" };

enum check {
	C_ERRNO,	/* errno outside the call's documented set */
	C_EXPECT,	/* the input decides the result, and it was another */
	C_RECORD,	/* a record's fields */
	C_SEQ,		/* seq strictly increasing per CPU within a session */
	C_CPU,		/* a record's CPU in the session's set */
	C_READLEN,	/* read() returns whole records within the buffer */
	C_STATUS,	/* RTLAT_IOC_STATUS fields and counters */
	C_STATS,	/* RTLAT_IOC_STATS fields */
	C_POLL,		/* poll/select/epoll masks */
	C_EDU,		/* rtedu results: INFO, factorial, DMA data */
	C_TARGETED,	/* the targeted checks after the fuzzing */
	C_SIGNAL,	/* a blocking call did not return after its signal */
	C_DSTATE,	/* uninterruptible sleep in a call that must not */
	C_HANG,		/* a call blocked longer than the watchdog allows */
	NCHECK
};

static const char *const check_name[NCHECK] = {
	"errno", "expected result", "record", "seq order", "record cpu",
	"read length", "status", "stats", "poll mask", "rtedu result",
	"targeted", "signal", "D state", "hang",
};

/* ------------------------------------------------------------------ */
/* Shared (with fork children) state                                   */

struct busy {
	__u64 serial, start_ns, limit_ns;
	int active, pid, tid, dcheck;
	char desc[260];
};

/* A kind of failure: its first message and how often it happened. */
struct sig {
	__u64 key, count;
	int check;
	char first[300];
};

#define NFAILKIND 256

struct shared {
	__u64 calls, stop, start_ns;
	__u64 cnt[NKIND][NDEVC][NERR];
	__u64 maxdur[NKIND][NDEVC], sumdur[NKIND][NDEVC];
	__u64 checks[NCHECK];
	__u64 fails[NCHECK][NDEVC];
	__u64 printed[NCHECK];
	__u64 max_ring[MAX_DEVS];
	__u64 sessions_started, records, hotplugs, forks, children_killed;
	/* Odd while a fork or a hotplug step runs: calls may then wait for the mm or CPU locks. */
	__u64 disturb, disturbing;
	struct sig sig[NFAILKIND];
	__u64 cfg_valid, cfg_invalid;
	int reported;
	struct busy busy[NBUSY];
};

static struct shared *S;

/* ------------------------------------------------------------------ */
/* Options and environment                                             */

static struct {
	__u64 seed, calls;
	unsigned int seconds, threads;
	int verbose, inject;
} opt;

/*
 * -F CHECK: corrupt, once, what that check sees (or fake the condition), to
 * show that it fails the run. The names are check_name[]'s.
 */
static int inject_done;

static int inject(int check)
{
	return opt.inject == check + 1 && !__atomic_exchange_n(&inject_done, 1, __ATOMIC_ACQ_REL);
}

static int nr_cpu_ids_;		/* possible CPUs: 0..nr_cpu_ids_-1 */
/* CPUs online at the start (below RTLAT_MAX_CPUS): all but CPU 1 stay so. */
static __u64 online0[RTLAT_CPU_WORDS];
static int ncpu_online0;	/* online at start */
static int privileged;
static const char *hp_path = "/sys/devices/system/cpu/cpu1/online";
static int can_hotplug;
static int cpu1_online = 1;	/* as far as we know; changed under hp_lock */
static __u64 hp_gen;		/* odd while CPU 1 changes state */
static pthread_mutex_t hp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded_rtlat, loaded_rtedu;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static __u64 ld(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void inc(__u64 *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

/* One line to stdout in one write(): safe in threads and fork children. */
static void __printf(1, 2) out(const char *fmt, ...)
{
	char b[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(b) - 2)
		n = sizeof(b) - 2;
	if (n == 0 || b[n - 1] != '\n')
		b[n++] = '\n';
	if (write(1, b, n) < 0)
		return;
}

static const char *ename(int e)
{
	static const struct { int e; const char *n; } t[] = {
		{ 0, "ok" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" },
		{ EIO, "EIO" }, { E2BIG, "E2BIG" }, { EBADF, "EBADF" }, { ECHILD, "ECHILD" },
		{ EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" },
		{ EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" },
		{ ENODEV, "ENODEV" }, { EINVAL, "EINVAL" }, { ENOTTY, "ENOTTY" },
		{ ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" }, { ERANGE, "ERANGE" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { ESHUTDOWN, "ESHUTDOWN" },
		{ ETIMEDOUT, "ETIMEDOUT" }, { ENXIO, "ENXIO" }, { EOVERFLOW, "EOVERFLOW" },
		{ ENOSYS, "ENOSYS" }, { 512, "ERESTARTSYS" },
	};
	static __thread char other[16];

	for (unsigned int i = 0; i < ARRAY_SIZE(t); i++)
		if (t[i].e == e)
			return t[i].n;
	snprintf(other, sizeof(other), "errno %d", e);
	return other;
}

/* ------------------------------------------------------------------ */
/* Random numbers: splitmix64, a fresh stream per operation            */

struct rng {
	__u64 s;
};

static __u64 mix64(__u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u64 rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? rnd(r) % n : 0;
}

static int chance(struct rng *r, unsigned int pct)
{
	return below(r, 1000) < pct * 10;
}

/* Per mille, for the rare things. */
static int rare(struct rng *r, unsigned int pm)
{
	return below(r, 1000) < pm;
}

static __u64 pick_of(struct rng *r, const __u64 *v, size_t n)
{
	return v[below(r, n)];
}

/* One of the values, at random. */
#define PICK(r, ...)							\
	pick_of(r, (const __u64[]){ __VA_ARGS__ },			\
		sizeof((const __u64[]){ __VA_ARGS__ }) / sizeof(__u64))

/*
 * A request's size and version, set right by the caller, now and then made
 * wrong: the size (4 % of the time) one of the wrong ones given, the
 * version (3 %) 0, 2 or ~0. Returns 1 if both are still right.
 */
#define PICK_HEADER(r, size, version, ...)					\
	pick_header(r, size, version, (const __u64[]){ __VA_ARGS__ },		\
		    sizeof((const __u64[]){ __VA_ARGS__ }) / sizeof(__u64))

static int pick_header(struct rng *r, __u32 *size, __u32 *version, const __u64 *bad, size_t n)
{
	int ok = 1;

	if (chance(r, 4)) {
		*size = pick_of(r, bad, n);
		ok = 0;
	}
	if (chance(r, 3)) {
		*version = PICK(r, 0, 2, ~0U);
		ok = 0;
	}
	return ok;
}

/* ------------------------------------------------------------------ */
/* Devices and their open files                                        */

struct slot {
	pthread_rwlock_t lk;	/* read: using fd; write (try only): closing it */
	int fd, flags;
};

struct dev {
	int idx, edu;
	char path[24], name[12];
	int nslot;
	struct slot s[MAX_SLOTS];
	int owner;		/* slot of the last successful CONFIG, or -1 */
	/*
	 * Which session the files see, for the checks that need it: `gen`
	 * changes around every call that may create a session (CONFIG, fork);
	 * `inprog` counts those in flight. When exactly one such call at a
	 * time changed the session, its config is known.
	 */
	pthread_mutex_t m;
	__u64 gen, wstarted;
	int inprog, cfg_known, cfg_empty;
	__u64 cfg_cpus[RTLAT_CPU_WORDS];
	/* The checked reader: seq per CPU across its reads in one session. */
	pthread_mutex_t rm;
	__u64 last_gen;
	__u64 last_seq[RTLAT_MAX_CPUS];
	uint8_t have_seq[RTLAT_MAX_CPUS];
	uint32_t instance, dma_bits;
};

static struct dev devs[MAX_DEVS];
static int ndev, nedu;

/* ------------------------------------------------------------------ */
/* Threads                                                             */

enum role { R_CTL, R_CHEAP, R_READER, R_USER, R_CHAOS, NROLE };
static const char *const role_name[NROLE] = { "control", "cheap", "reader", "user", "chaos" };
static const int role_of[] = { R_CTL, R_CHEAP, R_READER, R_USER, R_CTL, R_CHEAP, R_USER, R_CHAOS };

struct thr {
	int id, role, child, priv;
	pthread_t pt;
	int tid;
	__u64 seed, nops;
	timer_t timer;
	int have_timer;
	int epfd;
	unsigned char *g;	/* 4 regions of GSPAN: RW, none, RO, none */
	unsigned char *big;	/* BIG_SIZE bytes, RW */
	__u64 *buckets;	/* RTLAT_HIST_BUCKETS + 64 */
	struct busy *b;
	__u64 serial;
	int home_cpu, pinned;
	/* The current call. */
	int kind, devc, nonblock, err;
	__u64 t0, dur, disturb0;
	char what[200];
	int child_configured;
	__u64 wide[8];	/* a config's CPU set at cpus_ptr */
};

static struct thr thr[MAX_THREADS + 1];

static void on_signal(int sig)
{
	(void)sig;
}

/* A signal to this thread every `ms` from now, then every 20 ms, until disarmed. */
static void timer_arm(struct thr *t, unsigned int ms)
{
	struct itimerspec its = {
		.it_value = { ms / 1000, (ms % 1000) * 1000000L + 1 },
		.it_interval = { 0, 20 * 1000000L },
	};

	if (t->have_timer)
		timer_settime(t->timer, 0, &its, NULL);
}

static void timer_disarm(struct thr *t)
{
	struct itimerspec its = { 0 };

	if (t->have_timer)
		timer_settime(t->timer, 0, &its, NULL);
}

/* ------------------------------------------------------------------ */
/* Failures and call accounting                                        */

static struct sig *sig_of(__u64 key)
{
	unsigned int i = mix64(key) % NFAILKIND;

	for (unsigned int k = 0; k < NFAILKIND; k++, i = (i + 1) % NFAILKIND) {
		__u64 cur = __atomic_load_n(&S->sig[i].key, __ATOMIC_ACQUIRE);

		if (cur == key)
			return &S->sig[i];
		if (!cur && __atomic_compare_exchange_n(&S->sig[i].key, &cur, key, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return &S->sig[i];
		if (cur == key)
			return &S->sig[i];
	}
	return NULL;
}

/*
 * A failed check. The first three of each kind (the check, the message's
 * format, the call, its device and errno) are printed, all are counted.
 */
static void __printf(3, 4) fail(struct thr *t, int check, const char *fmt, ...)
{
	int devc = t ? t->devc : DC_NONE;
	__u64 key = mix64((uintptr_t)fmt) ^ (__u64)check << 1, n = 3;
	char msg[1024], line[1200];
	struct sig *sg;
	va_list ap;

	if (t)
		key ^= mix64((__u64)t->kind << 8 | (__u64)devc << 16 | (__u64)t->err << 24);
	key |= 1;
	inc(&S->fails[check][devc]);
	sg = sig_of(key);
	if (sg)
		n = __atomic_fetch_add(&sg->count, 1, __ATOMIC_RELAXED);
	if (n >= 3 && (sg || __atomic_fetch_add(&S->printed[check], 1, __ATOMIC_RELAXED) >= 20))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (t)
		snprintf(line, sizeof(line), "[%s] T%d%s (seed %#llx, op %llu): %s",
			 check_name[check], t->id, t->child ? " child" : "",
			 (unsigned long long)t->seed, (unsigned long long)t->nops, msg);
	else
		snprintf(line, sizeof(line), "[%s] %s", check_name[check], msg);
	if (sg && n == 0) {
		sg->check = check;
		size_t l = strlen(line);

		if (l >= sizeof(sg->first))
			l = sizeof(sg->first) - 1;
		memcpy(sg->first, line, l);
		sg->first[l] = 0;
	}
	out("# FAIL %s", line);
}

static void checked(int check)
{
	inc(&S->checks[check]);
}

/* Whether `e` is in the documented set of the current call. */
static int errno_allowed(struct thr *t, int e)
{
	int edu = t->devc == DC_RTEDU;

	switch (t->kind) {
	case K_OPEN:
		return e == ENOMEM;
	case K_CLOSE:
	case K_POLL:
	case K_SELECT:
	case K_EPOLL_WAIT:
	case K_FDINFO:
		return 0;
	case K_FCNTL:
		return 0;
	case K_CONFIG:
		return e == EFAULT || e == EINVAL || e == EBUSY || e == ENOMEM || e == E2BIG ||
		       (e == EPERM && !t->priv);
	case K_START:
		return e == EINVAL || e == EBUSY || e == ENOMEM || (e == EPERM && !t->priv);
	case K_STOP:
	case K_RESET:
		return e == EINVAL || e == EBUSY;
	case K_STATUS:
		/* EINVAL: a request's bad size or version; EOVERFLOW: a buffer for
		 * the sets in full too short; ENOMEM: those sets' memory. */
		return e == EFAULT || e == EINVAL || e == EOVERFLOW || e == ENOMEM;
	case K_STATS:
		return e == EINVAL || e == EFAULT || e == ENOMEM;
	case K_BLAME:
		/* EPERM: the answer names other tasks (CAP_PERFMON). */
		return e == EINVAL || e == EFAULT || e == ENOMEM || (e == EPERM && !t->priv);
	case K_USER_WAIT:
		/* rtedu.h: "RTLAT_IOC_USER_WAIT is ENOTTY". */
		if (edu)
			return e == ENOTTY;
		return e == EINVAL || e == EBUSY || e == ESHUTDOWN || e == EINTR || e == EFAULT;
	case K_INFO:
		return edu ? e == EFAULT : e == ENOTTY;
	case K_FACTORIAL:
		if (!edu)
			return e == ENOTTY;
		return e == EINVAL || e == EFAULT || e == ETIMEDOUT || e == EINTR || e == EIO;
	case K_DMA:
		if (!edu)
			return e == ENOTTY;
		return e == EINVAL || e == EFAULT || e == ENOMEM || e == EOPNOTSUPP ||
		       e == ETIMEDOUT || e == EINTR || e == EIO;
	case K_BAD_IOCTL:
		return e == ENOTTY;
	case K_READ:
	case K_READ_NB:
	case K_READV:
	case K_PREAD:
	case K_PREADV2:
		if (e == EINVAL || e == EBUSY || e == EFAULT)
			return 1;
		if (t->kind == K_PREAD && e == ESPIPE)
			return 1;
		if (t->kind == K_PREADV2 && (e == EOPNOTSUPP || e == EAGAIN))
			return 1;
		return t->nonblock ? e == EAGAIN : e == EINTR;
	case K_WRITE:
		return e == EINVAL || e == EBADF;
	case K_MMAP:
		return e == ENODEV;
	case K_EPOLL_CTL:
		return e == EEXIST || e == ENOENT;
	case K_FORK:
		return e == EAGAIN || e == ENOMEM;
	case K_HOTPLUG:
		return 1;	/* not the suite's UAPI: counted, not judged */
	}
	return 0;
}

static void __printf(7, 8) cbegin(struct thr *t, int kind, struct dev *d, int slot,
				   unsigned int limit_s, int dcheck, const char *fmt, ...)
{
	struct busy *b = t->b;
	char args[150];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	t->kind = kind;
	t->devc = d ? (d->edu ? DC_RTEDU : DC_RTLAT) : DC_NONE;
	if (d)
		snprintf(t->what, sizeof(t->what), "%s file %d: %s %s", d->name, slot,
			 kind_name[kind], args);
	else
		snprintf(t->what, sizeof(t->what), "%s %s", kind_name[kind], args);
	__atomic_store_n(&b->active, 0, __ATOMIC_RELEASE);
	snprintf(b->desc, sizeof(b->desc), "T%d%s (%s): %s", t->id, t->child ? " child" : "",
		 role_name[t->role], t->what);
	b->limit_ns = limit_s * 1e9 * SLOW;
	b->dcheck = dcheck;
	b->serial = ++t->serial;
	t->disturb0 = ld(&S->disturb) + ld(&S->disturbing);
	t->t0 = now_ns();
	b->start_ns = t->t0;
	__atomic_store_n(&b->active, 1, __ATOMIC_RELEASE);
}

/* Ends the current call: counts it, checks its errno. Returns `ret`, errno kept. */
static long cend(struct thr *t, long ret)
{
	int e = ret < 0 ? errno : 0;
	__u64 dur = now_ns() - t->t0, m;

	__atomic_store_n(&t->b->active, 0, __ATOMIC_RELEASE);
	t->dur = dur;
	t->err = e;
	inc(&S->cnt[t->kind][t->devc][e < NERR ? e : NERR - 1]);
	__atomic_fetch_add(&S->sumdur[t->kind][t->devc], dur, __ATOMIC_RELAXED);
	inc(&S->calls);
	m = ld(&S->maxdur[t->kind][t->devc]);
	while (dur > m && !__atomic_compare_exchange_n(&S->maxdur[t->kind][t->devc], &m, dur, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	checked(C_ERRNO);
	if (e && (!errno_allowed(t, e) || inject(C_ERRNO)))
		fail(t, C_ERRNO, "%s: %s, not in the documented set", t->what, ename(e));
	errno = e;
	return ret;
}

/*
 * Whether the current call may be judged on its duration: no fork (the mm
 * lock) or CPU hotplug step ran meanwhile.
 */
static int undisturbed(struct thr *t)
{
	return !ld(&S->disturbing) && ld(&S->disturb) + ld(&S->disturbing) == t->disturb0;
}

static void disturb_begin(void)
{
	inc(&S->disturbing);
}

static void disturb_end(void)
{
	inc(&S->disturb);
	__atomic_fetch_sub(&S->disturbing, 1, __ATOMIC_RELAXED);
}

/* The input decides: the call must fail with `want` (0: must fail, any errno). */
static void expect_err(struct thr *t, long ret, int want, const char *why)
{
	checked(C_EXPECT);
	if (inject(C_EXPECT))
		ret = 0;
	if (ret >= 0)
		fail(t, C_EXPECT, "%s: succeeded, but %s", t->what, why);
	else if (want && t->err != want)
		fail(t, C_EXPECT, "%s: %s, but %s: %s", t->what, ename(t->err), why, ename(want));
}

/* ------------------------------------------------------------------ */
/* Bad pointers                                                        */

enum bp { BP_GOOD, BP_ODD, BP_NULL, BP_LOW, BP_UNMAPPED, BP_STRADDLE, BP_RO, BP_KERNEL, NBP };
static const char *const bp_name[NBP] = {
	"", " ptr=odd", " ptr=NULL", " ptr=low", " ptr=unmapped", " ptr=straddle",
	" ptr=read-only", " ptr=kernel",
};

static int pick_bp(struct rng *r, unsigned int bad_pct)
{
	if (!chance(r, bad_pct))
		return chance(r, 3) ? BP_ODD : BP_GOOD;
	return BP_NULL + below(r, NBP - BP_NULL);
}

/* True if a call of `size` bytes through pointer kind `bp` faults. */
static int bp_faults(int bp, int writes)
{
	switch (bp) {
	case BP_GOOD:
	case BP_ODD:
		return 0;
	case BP_RO:
		return writes;
	default:
		return 1;
	}
}

/*
 * The pointer of kind `bp` for a `size`-byte argument whose content is
 * `content` (the readable part of it, where there is one).
 */
static void *bp_ptr(struct thr *t, struct rng *r, int bp, const void *content, size_t size)
{
	unsigned char *p;
	size_t k;

	switch (bp) {
	case BP_ODD:
		p = t->g + 1 + below(r, 7);
		if (content)
			memcpy(p, content, size);
		return p;
	case BP_NULL:
		return NULL;
	case BP_LOW:
		return (void *)(uintptr_t)(8 + below(r, 4000));
	case BP_UNMAPPED:
		return t->g + GSPAN + below(r, GSPAN - size);
	case BP_STRADDLE:
		k = 1 + below(r, size - 1);
		p = t->g + GSPAN - k;
		if (content)
			memcpy(p, content, k);
		return p;
	case BP_RO:
		return t->g + 2 * GSPAN;
	case BP_KERNEL:
		return (void *)(uintptr_t)(~0UL - PAGE * (1 + below(r, 1000)));
	}
	return (void *)content;
}

/* ------------------------------------------------------------------ */
/* Slots                                                               */

static int slot_get(struct thr *t, struct dev *d, int i)
{
	if (t->child)
		return d->s[i].fd;
	pthread_rwlock_rdlock(&d->s[i].lk);
	if (d->s[i].fd < 0) {
		pthread_rwlock_unlock(&d->s[i].lk);
		return -1;
	}
	return d->s[i].fd;
}

static void slot_put(struct thr *t, struct dev *d, int i)
{
	if (!t->child)
		pthread_rwlock_unlock(&d->s[i].lk);
}

/*
 * rtlat half the time: its calls (but unknown ones) take one device-wide
 * session lock, which a session's CONFIG holds while it allocates.
 */
static struct dev *pick_dev(struct rng *r)
{
	if (ndev == 1 || chance(r, 50))
		return &devs[0];
	return &devs[1 + below(r, ndev - 1)];
}

static struct dev *pick_edu(struct rng *r)
{
	if (ndev == 1 || chance(r, 8))
		return &devs[0];
	return &devs[1 + below(r, ndev - 1)];
}

/* A slot; the owner's with `owner_pct` percent. */
static int pick_slot(struct rng *r, struct dev *d, unsigned int owner_pct)
{
	int o = __atomic_load_n(&d->owner, __ATOMIC_RELAXED);

	if (o >= 0 && chance(r, owner_pct))
		return o;
	return below(r, d->nslot);
}

/* ------------------------------------------------------------------ */
/* Which session: the writers' bookkeeping (see struct dev)            */

struct wtoken {
	__u64 start;
	int overlap;
};

static void w_begin(struct thr *t, struct dev *d, struct wtoken *w)
{
	if (t->child)
		return;
	pthread_mutex_lock(&d->m);
	w->overlap = d->inprog > 0;
	w->start = d->wstarted++;
	d->inprog++;
	d->gen++;
	pthread_mutex_unlock(&d->m);
}

/*
 * `changed`: 1 the session was replaced by `c`, 0 it was not, -1 unknown.
 */
static void w_end(struct thr *t, struct dev *d, struct wtoken *w, int changed,
		  const struct rtlat_config *c)
{
	if (t->child)
		return;
	pthread_mutex_lock(&d->m);
	if (d->wstarted != w->start + 1)
		w->overlap = 1;
	d->inprog--;
	d->gen++;
	if (changed < 0 || (changed && w->overlap)) {
		d->cfg_known = 0;
	} else if (changed) {
		int empty = 1;

		for (int i = 0; i < RTLAT_CPU_WORDS; i++)
			empty &= c->cpus[i] == 0;
		d->cfg_known = 1;
		d->cfg_empty = empty;
		memcpy(d->cfg_cpus, c->cpus, sizeof(d->cfg_cpus));
	}
	pthread_mutex_unlock(&d->m);
}

struct epoch {
	__u64 gen;
	int inprog, known, empty;
	__u64 cpus[RTLAT_CPU_WORDS];
};

static void epoch_get(struct thr *t, struct dev *d, struct epoch *e)
{
	if (t->child) {
		/* The parent's locks may be held in this copy: no session known. */
		memset(e, 0, sizeof(*e));
		e->inprog = 1;
		return;
	}
	pthread_mutex_lock(&d->m);
	e->gen = d->gen;
	e->inprog = d->inprog;
	e->known = d->cfg_known;
	e->empty = d->cfg_empty;
	memcpy(e->cpus, d->cfg_cpus, sizeof(e->cpus));
	pthread_mutex_unlock(&d->m);
}

/* ------------------------------------------------------------------ */
/* Configs: generation and the documented validity                     */

enum { V_INVALID, V_VALID, V_UNSURE };

static int popcount64(__u64 x)
{
	return __builtin_popcountll(x);
}

static int has_bit(const __u64 *w, int b)
{
	return (w[b / 64] >> (b % 64)) & 1;
}

/* The online CPUs, or -1 if CPU 1 is changing state. */
static int online_mask(__u64 *m, __u64 *gen)
{
	*gen = __atomic_load_n(&hp_gen, __ATOMIC_ACQUIRE);
	memcpy(m, online0, RTLAT_CPU_WORDS * 8);
	if (*gen & 1)
		return -1;
	m[0] &= ~2ULL;
	if (nr_cpu_ids_ > 1 && __atomic_load_n(&cpu1_online, __ATOMIC_RELAXED))
		m[0] |= 2;
	return 0;
}

/*
 * What Documentation/rtlat.rst and rtedu.rst say of `c`: valid, invalid
 * (EINVAL), or unsure where they do not say.
 */
static int config_validity(const struct rtlat_config *c, int edu, const __u64 *online,
			   const __u64 *wide, const char **why)
{
	const __u64 *set = c->cpus_ptr ? wide : c->cpus;
	int nbits = c->cpus_ptr ? (int)c->cpus_size * 8 : RTLAT_MAX_CPUS;
	uint32_t known = 1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_THREAD | 1 << RTLAT_STAGE_USER;
	int thread = c->stages & 1 << RTLAT_STAGE_THREAD;
	int user = c->stages & 1 << RTLAT_STAGE_USER;
	int empty = 1, unsure = 0;

	*why = "";
	if (c->size != sizeof(*c))
		return *why = "size", V_INVALID;
	if (c->version != RTLAT_VERSION)
		return *why = "version", V_INVALID;
	if (c->period_ns < RTLAT_PERIOD_MIN_NS || c->period_ns > RTLAT_PERIOD_MAX_NS)
		return *why = "period", V_INVALID;
	if (!(c->stages & 1 << RTLAT_STAGE_IRQ))
		return *why = "no irq stage", V_INVALID;
	if (user && !thread)
		return *why = "user without thread", V_INVALID;
	if (c->stages & ~(known | 1 << RTLAT_STAGE_RESPONSE))
		return *why = "unknown stage", V_INVALID;
	if (c->stages & 1 << RTLAT_STAGE_RESPONSE) {
		/* rtedu.rst: the response stage cannot be measured; rtlat.rst: silent. */
		if (edu)
			return *why = "response stage (rtedu)", V_INVALID;
		unsure = 1;
	}
	for (int s = 0; s < RTLAT_NR_STAGES; s++) {
		int measured = s == RTLAT_STAGE_RESPONSE ? user : (c->stages >> s) & 1;

		if (c->threshold_ns[s] && !measured)
			return *why = "threshold on a stage not measured", V_INVALID;
	}
	if (edu && c->threshold_ns[RTLAT_STAGE_RESPONSE])
		return *why = "response threshold (rtedu)", V_INVALID;
	if (c->deadline_ns && !user)
		return *why = "deadline without the user stage", V_INVALID;
	if (c->deadline_ns > c->period_ns)
		return *why = "deadline longer than the period", V_INVALID;
	if (edu && c->deadline_ns)
		return *why = "deadline (rtedu)", V_INVALID;
	if (c->priority < 1 || c->priority > 99)
		return *why = "priority", V_INVALID;
	if (c->flags & ~(RTLAT_CFG_TRACING_OFF | RTLAT_CFG_BLAME))
		return *why = "flags", V_INVALID;
	/* rtlat.h: blame needs the thread stage; rtedu's activations are
	 * not a timer's (rtedu.rst). */
	if ((c->flags & RTLAT_CFG_BLAME) && (!((c->stages >> RTLAT_STAGE_THREAD) & 1) || edu))
		return *why = "blame without a thread stage, or on rtedu", V_INVALID;
	if (c->ring_records && ((c->ring_records & (c->ring_records - 1)) ||
				c->ring_records > RTLAT_RING_MAX))
		return *why = "ring_records", V_INVALID;
	if (c->blame_us && !(c->flags & RTLAT_CFG_BLAME))
		return *why = "blame_us without RTLAT_CFG_BLAME", V_INVALID;
	if (!c->cpus_ptr != !c->cpus_size)
		return *why = "cpus_ptr without cpus_size, or the reverse", V_INVALID;
	if (c->cpus_size % 8 || c->cpus_size > RTLAT_CPUS_SIZE_MAX)
		return *why = "cpus_size", V_INVALID;
	for (int w = 0; w < RTLAT_CPU_WORDS; w++)
		empty &= c->cpus[w] == 0;
	if (c->cpus_ptr && !empty)
		return *why = "a CPU set inline and at cpus_ptr", V_INVALID;
	if (c->cpus_ptr && c->cpus_ptr != (__u64)(uintptr_t)wide)
		return *why = "cpus_ptr cannot be read", V_INVALID;
	for (int w = 0; w < nbits / 64; w++)
		empty &= set[w] == 0;
	if (edu) {
		if (!empty)
			return *why = "a CPU set (rtedu)", V_INVALID;
		/* Irq-only: rtedu.rst does not say; the code refuses it. */
		if (!thread)
			unsure = 1;
	} else {
		for (int b = 0; b < nbits; b++) {
			if (!has_bit(set, b))
				continue;
			if (b >= nr_cpu_ids_)
				return *why = "a CPU that does not exist", V_INVALID;
			/* (Past the inline bitmap's CPUs, online or not is not known.) */
			if (!online || b >= RTLAT_MAX_CPUS)
				unsure = 1;
			else if (!has_bit(online, b))
				return *why = "an offline CPU", V_INVALID;
		}
		/* Empty: every online CPU, whichever they are. */
		if (empty && !online)
			unsure = 1;
	}
	return unsure ? V_UNSURE : V_VALID;
}

/*
 * Mostly 0.5..1 ms: in a TCG guest with KASAN an activation costs tens of
 * microseconds, and sessions of 50 us on every CPU would leave the rest of
 * the system (the fuzzer included) the 5 % that RT throttling keeps.
 */
static __u64 gen_period(struct rng *r)
{
	/*
	 * A guest slower than that (riscv64's TCG runs a syscall 25 times
	 * slower) gets periods as much longer, up to 16 times: the sessions'
	 * share of the CPUs, not their rate, is what the fuzzer keeps.
	 */
	double scale = slowness < 16.0 ? slowness : 16.0;
	uint32_t p = below(r, 100);
	__u64 ns;

	if (p < 3)
		ns = 50000 + below(r, 50000);
	else if (p < 10)
		ns = 100000 + below(r, 150000);
	else if (p < 30)
		ns = 250000 + below(r, 250000);
	else
		ns = 500000 + below(r, 500001);
	return (__u64)(ns * scale);
}

/* A config: mostly valid (for this device), sometimes with mutated fields. */
static void gen_config(struct rng *r, struct dev *d, struct rtlat_config *c, __u64 *wide,
		       char *desc, size_t dlen)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->version = RTLAT_VERSION;
	c->period_ns = gen_period(r);
	if (d->edu) {
		c->stages = 1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_THREAD;
		if (chance(r, 50))
			c->stages |= 1 << RTLAT_STAGE_USER;
	} else {
		uint32_t s = below(r, 100);

		c->stages = 1 << RTLAT_STAGE_IRQ;
		if (s >= 20)
			c->stages |= 1 << RTLAT_STAGE_THREAD;
		if (s >= 60)
			c->stages |= 1 << RTLAT_STAGE_USER;
		/* (Of those that may be online: CPU 1 comes and goes.) */
		if (chance(r, 50))
			for (int cpu = 0; cpu < RTLAT_MAX_CPUS; cpu++)
				if ((has_bit(online0, cpu) || (cpu == 1 && nr_cpu_ids_ > 1)) &&
				    chance(r, 60))
					c->cpus[cpu / 64] |= 1ULL << (cpu % 64);
	}
	c->priority = chance(r, 40) ? 95 : 1 + below(r, 99);
	if (chance(r, 12)) {
		int st;

		do
			st = below(r, RTLAT_NR_STAGES);
		while (!(st == RTLAT_STAGE_RESPONSE ?
			 (c->stages & 1 << RTLAT_STAGE_USER) && !d->edu :
			 (c->stages >> st) & 1));
		c->threshold_ns[st] = chance(r, 50) ? 1 + below(r, 20000) :
				      100000 + below(r, 1000000000);
	}
	if (chance(r, 3))
		c->flags = RTLAT_CFG_TRACING_OFF;
	/* Blame: the probes on, every activation explained or few. */
	if (((c->stages >> RTLAT_STAGE_THREAD) & 1) && !d->edu && chance(r, 15)) {
		c->flags |= RTLAT_CFG_BLAME;
		c->blame_us = PICK(r, 0, 1, 100, 100000);
	}
	if ((c->stages & 1 << RTLAT_STAGE_USER) && !d->edu && chance(r, 25))
		c->deadline_ns = chance(r, 80) ? 1 + below(r, c->period_ns) :
				 c->period_ns + below(r, 1000000);
	/* Small rings mostly: CONFIG allocates them under the device's session lock. */
	if (chance(r, 88))
		c->ring_records = chance(r, 80) ? 1U << below(r, 9) : 1U << (9 + below(r, 5));
	if (rare(r, 4))
		c->ring_records = 1U << (14 + below(r, 3));
	/* The largest valid ring, a few times per run (see the mutations too). */
	if (rare(r, 3))
		c->ring_records = RTLAT_RING_MAX;

	snprintf(desc, dlen, "period %llu stages %#x cpus %#llx prio %u ring %u%s",
		 (unsigned long long)c->period_ns, c->stages, (unsigned long long)c->cpus[0],
		 c->priority, c->ring_records,
		 c->threshold_ns[0] | c->threshold_ns[1] | c->threshold_ns[2] |
		 c->threshold_ns[3] ? " threshold" : "");
	if (!chance(r, 30))
		return;
	/* Mutations: one to three fields, to boundary values. */
	for (int k = 1 + below(r, 3); k > 0; k--) {
		static const __u64 periods[] = {
			0, RTLAT_PERIOD_MIN_NS - 1, RTLAT_PERIOD_MIN_NS, RTLAT_PERIOD_MAX_NS,
			RTLAT_PERIOD_MAX_NS + 1, ~0ULL, 1ULL << 63,
		};
		static const uint32_t rings[] = {
			0, 1, 2, 3, 1000, 4095, RTLAT_RING_MAX, RTLAT_RING_MAX * 2,
			RTLAT_RING_MAX - 1, 1U << 31, ~0U,
		};
		static const uint32_t stages[] = {
			0, 1 << RTLAT_STAGE_THREAD, 1 << RTLAT_STAGE_USER,
			1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_USER, 1 << RTLAT_STAGE_RESPONSE,
			0xf, 1 << 5 | 1, ~0U, 1 << RTLAT_STAGE_IRQ,
			1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_THREAD | 1 << RTLAT_STAGE_RESPONSE,
		};
		const char *what = "";
		int cpu;

		switch (below(r, 11)) {
		case 10: {
			/* The set at cpus_ptr (the one given moved there, in 1 to 8
			 * words), or a bad size, pointer, blame threshold or CPU. */
			unsigned int words = 1 + below(r, 8);

			memset(wide, 0, 8 * 8);
			memcpy(wide, c->cpus, (words < RTLAT_CPU_WORDS ? words : RTLAT_CPU_WORDS) * 8);
			memset(c->cpus, 0, sizeof(c->cpus));
			c->cpus_ptr = (__u64)(uintptr_t)wide;
			c->cpus_size = words * 8;
			switch (below(r, 8)) {
			case 0:
				c->cpus_size = PICK(r, 0, 4, 12, RTLAT_CPUS_SIZE_MAX + 8, ~0U);
				break;
			case 1:
				c->cpus_ptr = PICK(r, 0, 8, ~0ULL - 4095);
				break;
			case 2:
				c->blame_us = 1 + below(r, 1000);
				break;
			case 3:
				c->cpus[0] = 1;
				break;
			case 4:
				if (nr_cpu_ids_ < (int)words * 64)
					wide[nr_cpu_ids_ / 64] |= 1ULL << (nr_cpu_ids_ % 64);
				break;
			}
			what = "cpus_ptr";
			break;
		}
		case 0:
			c->size = PICK(r, 0, 95, 97, 88, 4096, ~0U);
			what = "size";
			break;
		case 1:
			c->version = PICK(r, 0, 2, ~0U, 0x100);
			what = "version";
			break;
		case 2:
			c->period_ns = periods[below(r, sizeof(periods) / 8)];
			what = "period";
			break;
		case 3:
			switch (below(r, 5)) {
			case 0:
				cpu = nr_cpu_ids_ + below(r, 4);
				break;
			case 1:
				cpu = RTLAT_MAX_CPUS - 1;
				break;
			case 2:
				cpu = 1;	/* offline, now and then */
				break;
			default:
				cpu = below(r, RTLAT_MAX_CPUS);
				break;
			}
			if (cpu < RTLAT_MAX_CPUS)
				c->cpus[cpu / 64] |= 1ULL << (cpu % 64);
			if (rare(r, 100))
				memset(c->cpus, 0xff, sizeof(c->cpus));
			what = "cpus";
			break;
		case 4:
			c->stages = stages[below(r, sizeof(stages) / 4)];
			what = "stages";
			break;
		case 5:
			c->priority = PICK(r, 0, 100, 1, 99, ~0U, 1000);
			what = "priority";
			break;
		case 6:
			c->threshold_ns[below(r, RTLAT_NR_STAGES)] =
				PICK(r, 1, ~0ULL, 1000000);
			what = "threshold";
			break;
		case 7:
			if (chance(r, 50)) {
				c->deadline_ns = PICK(r, 1, ~0ULL, 1000000);
				what = "deadline";
				break;
			}
			c->flags = PICK(r, 1 << 1, ~0U, 1U << 31, 3);
			what = "flags";
			break;
		default:
			/* The allocation boundary is the interesting one: rarely RING_MAX. */
			c->ring_records = rings[below(r, sizeof(rings) / 4)];
			if (c->ring_records == RTLAT_RING_MAX && chance(r, 50))
				c->ring_records = 1U << below(r, 12);
			what = "ring_records";
			break;
		}
		snprintf(desc + strlen(desc), dlen - strlen(desc), " mut:%s", what);
	}
}

/* ------------------------------------------------------------------ */
/* Checks of what the calls return                                     */

static uint32_t fact32(uint32_t n)
{
	uint32_t v = 1;

	if (n >= 34)
		return 0;	/* 2^32 divides n! */
	while (n > 1)
		v *= n--;
	return v;
}

/* The CPUs a record of this device may come from (for a session in epoch `e`). */
static void record_cpus(struct dev *d, const struct epoch *e, int valid, __u64 *cpus)
{
	memset(cpus, 0, RTLAT_CPU_WORDS * 8);
	if (d->edu) {
		cpus[0] = 1;
	} else if (valid && e->known && !e->empty) {
		memcpy(cpus, e->cpus, RTLAT_CPU_WORDS * 8);
	} else {
		memcpy(cpus, online0, RTLAT_CPU_WORDS * 8);
		if (nr_cpu_ids_ > 1)
			cpus[0] |= 2;
	}
}

/*
 * One record. A USER_WAIT record is returned before its response time is
 * known: -1 there without RTLAT_REC_NO_RESPONSE.
 */
static void check_record(struct thr *t, struct dev *d, const struct rtlat_record *r_,
			 const __u64 *cpus, const char *where)
{
	struct rtlat_record rc = *r_, *r = &rc;

	if (inject(C_RECORD))
		rc.lat_ns[RTLAT_STAGE_IRQ] = -5;
	if (inject(C_CPU))
		rc.cpu = RTLAT_MAX_CPUS - 1;
	int user_wait = !strcmp(where, "USER_WAIT");

	const __s64 *l = r->lat_ns;
	uint32_t fl = r->flags;

	checked(C_RECORD);
	if (r->version != RTLAT_VERSION || r->size != REC) {
		fail(t, C_RECORD, "%s %s: record version %u size %u", d->name, where, r->version,
		     r->size);
		return;
	}
	checked(C_CPU);
	if (r->cpu >= RTLAT_MAX_CPUS || !has_bit(cpus, r->cpu)) {
		fail(t, C_CPU, "%s %s: record of cpu %u, not in the session's set %#llx", d->name,
		     where, r->cpu, (unsigned long long)cpus[0]);
		return;
	}
	if (fl & ~(0x1fU | RTLAT_REC_NO_WAITER | RTLAT_REC_DIRECT | RTLAT_REC_DEADLINE_MISS) ||
	    ((fl & RTLAT_REC_DIRECT) && (fl & RTLAT_REC_NO_WAITER)) ||
	    ((fl & RTLAT_REC_DEADLINE_MISS) && l[RTLAT_STAGE_RESPONSE] == -1 &&
	     !(fl & RTLAT_REC_NO_RESPONSE)))
		fail(t, C_RECORD, "%s %s: unknown or contradictory record flags %#x", d->name,
		     where, fl);
	/* The timer's IRQ hands a waiter its activation itself. */
	if (user_wait && !(fl & RTLAT_REC_DIRECT))
		fail(t, C_RECORD, "%s %s: cpu %u seq %llu: not handed directly, flags %#x",
		     d->name, where, r->cpu, (unsigned long long)r->seq, fl);
	if (l[RTLAT_STAGE_IRQ] < 0)
		fail(t, C_RECORD, "%s %s: cpu %u seq %llu: irq latency %lld", d->name, where,
		     r->cpu, (unsigned long long)r->seq, (long long)l[RTLAT_STAGE_IRQ]);
	if (fl & RTLAT_REC_NO_THREAD ? l[RTLAT_STAGE_THREAD] != -1 :
				       l[RTLAT_STAGE_THREAD] < l[RTLAT_STAGE_IRQ])
		fail(t, C_RECORD, "%s %s: cpu %u seq %llu: thread %lld irq %lld flags %#x",
		     d->name, where, r->cpu, (unsigned long long)r->seq,
		     (long long)l[RTLAT_STAGE_THREAD], (long long)l[RTLAT_STAGE_IRQ], fl);
	if (fl & RTLAT_REC_NO_USER ? l[RTLAT_STAGE_USER] != -1 :
				     l[RTLAT_STAGE_USER] < l[RTLAT_STAGE_THREAD] ||
				     (fl & RTLAT_REC_NO_THREAD))
		fail(t, C_RECORD, "%s %s: cpu %u seq %llu: user %lld thread %lld flags %#x",
		     d->name, where, r->cpu, (unsigned long long)r->seq,
		     (long long)l[RTLAT_STAGE_USER], (long long)l[RTLAT_STAGE_THREAD], fl);
	if (fl & RTLAT_REC_NO_RESPONSE ? l[RTLAT_STAGE_RESPONSE] != -1 :
	    user_wait ? l[RTLAT_STAGE_RESPONSE] != -1 :
	    l[RTLAT_STAGE_RESPONSE] < l[RTLAT_STAGE_USER] || (fl & RTLAT_REC_NO_USER))
		fail(t, C_RECORD, "%s %s: cpu %u seq %llu: response %lld user %lld flags %#x",
		     d->name, where, r->cpu, (unsigned long long)r->seq,
		     (long long)l[RTLAT_STAGE_RESPONSE], (long long)l[RTLAT_STAGE_USER], fl);
	if (d->edu && !(fl & RTLAT_REC_NO_RESPONSE))
		fail(t, C_RECORD, "%s %s: rtedu record with a response time", d->name, where);
}

/*
 * Records `buf[0..n)` of one read(): each valid, seq strictly increasing
 * per CPU in the call and, for the checked reader in a known session,
 * after its previous reads.
 */
static void check_records(struct thr *t, struct dev *d, const unsigned char *buf, size_t n,
			  const struct epoch *e0, int valid, int checked_reader)
{
	static __thread __u64 last[RTLAT_MAX_CPUS];
	static __thread uint8_t have[RTLAT_MAX_CPUS];
	__u64 cpus[RTLAT_CPU_WORDS];
	int cross = checked_reader && valid;

	record_cpus(d, e0, valid, cpus);
	memset(have, 0, sizeof(have));
	if (cross && d->last_gen != e0->gen) {
		memset(d->have_seq, 0, sizeof(d->have_seq));
		d->last_gen = e0->gen;
	}
	for (size_t off = 0; off + REC <= n; off += REC) {
		struct rtlat_record r;

		memcpy(&r, buf + off, REC);
		if (r.cpu < RTLAT_MAX_CPUS && have[r.cpu] && inject(C_SEQ))
			r.seq = last[r.cpu];
		inc(&S->records);
		check_record(t, d, &r, cpus, "read");
		if (r.cpu >= RTLAT_MAX_CPUS)
			continue;
		checked(C_SEQ);
		if (have[r.cpu] && r.seq <= last[r.cpu])
			fail(t, C_SEQ, "%s read: cpu %u seq %llu after %llu in the same read",
			     d->name, r.cpu, (unsigned long long)r.seq,
			     (unsigned long long)last[r.cpu]);
		else if (cross && !have[r.cpu] && d->have_seq[r.cpu] &&
			 r.seq <= d->last_seq[r.cpu])
			fail(t, C_SEQ, "%s read: cpu %u seq %llu after %llu of an earlier read in "
			     "the same session", d->name, r.cpu, (unsigned long long)r.seq,
			     (unsigned long long)d->last_seq[r.cpu]);
		have[r.cpu] = 1;
		last[r.cpu] = r.seq;
		if (cross) {
			d->have_seq[r.cpu] = 1;
			d->last_seq[r.cpu] = r.seq;
		}
	}
	if (checked_reader && !valid)
		d->last_gen = ~0ULL;
}

static void check_status(struct thr *t, struct dev *d, const struct rtlat_status *s_)
{
	struct rtlat_status sc = *s_, *s = &sc;
	__u64 all = 0, sum;
	int ncpus = 0;

	if (inject(C_STATUS))
		sc.state = RTLAT_STATE_STOPPED, sc.stop_reason = RTLAT_STOP_NONE;
	sum = s->delivered + s->dropped;

	checked(C_STATUS);
	if (s->size != sizeof(*s) || s->version != RTLAT_VERSION) {
		fail(t, C_STATUS, "%s: size %u version %u", t->what, s->size, s->version);
		return;
	}
	if (s->nr_cpu_ids != (__u32)nr_cpu_ids_ || s->cpu_words != (s->nr_cpu_ids + 63) / 64) {
		fail(t, C_STATUS, "%s: nr_cpu_ids %u cpu_words %u (%d possible CPUs)", t->what,
		     s->nr_cpu_ids, s->cpu_words, nr_cpu_ids_);
		return;
	}
	if (s->state > RTLAT_STATE_STOPPED || s->stop_reason > RTLAT_STOP_THRESHOLD) {
		fail(t, C_STATUS, "%s: state %u stop_reason %u", t->what, s->state,
		     s->stop_reason);
		return;
	}
	for (int w = 0; w < RTLAT_CPU_WORDS; w++) {
		ncpus += popcount64(s->cpus[w]);
		all |= s->cpus[w];
		if (s->offline[w] & ~s->cpus[w])
			fail(t, C_STATUS, "%s: offline %#llx not within cpus %#llx", t->what,
			     (unsigned long long)s->offline[w], (unsigned long long)s->cpus[w]);
	}
	for (int b = nr_cpu_ids_; b < RTLAT_MAX_CPUS; b++)
		if (has_bit(s->cpus, b))
			fail(t, C_STATUS, "%s: cpu %d in the session does not exist", t->what, b);
	switch (s->state) {
	case RTLAT_STATE_IDLE:
		if (all || s->produced || s->delivered || s->dropped || s->missed ||
		    s->stop_reason)
			fail(t, C_STATUS, "%s: idle, yet cpus %#llx produced %llu reason %u",
			     t->what, (unsigned long long)all, (unsigned long long)s->produced,
			     s->stop_reason);
		return;
	case RTLAT_STATE_CONFIGURED:
		/* (The counters are read after the state: they may be a started session's.) */
		if (s->stop_reason)
			fail(t, C_STATUS, "%s: configured, yet stop_reason %u", t->what,
			     s->stop_reason);
		break;
	case RTLAT_STATE_RUNNING:
		if (s->stop_reason != RTLAT_STOP_NONE)
			fail(t, C_STATUS, "%s: running with stop_reason %u", t->what,
			     s->stop_reason);
		break;
	case RTLAT_STATE_STOPPED:
		if (s->stop_reason == RTLAT_STOP_NONE)
			fail(t, C_STATUS, "%s: stopped without a reason", t->what);
		if (s->stop_reason == RTLAT_STOP_THRESHOLD &&
		    (s->trip_stage >= RTLAT_NR_STAGES || s->trip_cpu >= RTLAT_MAX_CPUS ||
		     !has_bit(s->cpus, s->trip_cpu)))
			fail(t, C_STATUS, "%s: tripped on cpu %u stage %u, cpus %#llx", t->what,
			     s->trip_cpu, s->trip_stage, (unsigned long long)s->cpus[0]);
		break;
	}
	if (!ncpus)
		fail(t, C_STATUS, "%s: a session (state %u) without a CPU", t->what, s->state);
	if (d->edu && (s->cpus[0] != 1 || ncpus != 1))
		fail(t, C_STATUS, "%s: rtedu session on cpus %#llx, not channel 0", t->what,
		     (unsigned long long)s->cpus[0]);
	/*
	 * produced == delivered + dropped + queued, each counter read at a
	 * slightly different moment (produced first): what is queued is at most
	 * what the rings hold.
	 */
	checked(C_STATUS);
	if (sum <= s->produced) {
		__u64 ring = ld(&S->max_ring[d->idx]);

		if (ring && s->produced - sum > ring * ncpus)
			fail(t, C_STATUS, "%s: produced %llu delivered %llu dropped %llu: %llu "
			     "queued in %d rings of at most %llu", t->what,
			     (unsigned long long)s->produced,
			     (unsigned long long)s->delivered, (unsigned long long)s->dropped,
			     (unsigned long long)(s->produced - sum), ncpus,
			     (unsigned long long)ring);
	}
}

/* Two STATUS of one thread, s1 before s2: the counters of one session only grow. */
static void check_status_pair(struct thr *t, const struct rtlat_status *a,
			      const struct rtlat_status *b)
{
	if (a->state < RTLAT_STATE_RUNNING || b->state < RTLAT_STATE_RUNNING ||
	    !a->started_ns || a->started_ns != b->started_ns)
		return;
	checked(C_STATUS);
	if (a->delivered + a->dropped > b->produced)
		fail(t, C_STATUS, "%s: delivered %llu + dropped %llu > produced %llu read after "
		     "them", t->what, (unsigned long long)a->delivered,
		     (unsigned long long)a->dropped, (unsigned long long)b->produced);
	if (b->produced < a->produced || b->delivered < a->delivered || b->dropped < a->dropped)
		fail(t, C_STATUS, "%s: counters went back: produced %llu -> %llu, delivered "
		     "%llu -> %llu, dropped %llu -> %llu", t->what, (unsigned long long)a->produced,
		     (unsigned long long)b->produced, (unsigned long long)a->delivered,
		     (unsigned long long)b->delivered, (unsigned long long)a->dropped,
		     (unsigned long long)b->dropped);
	if (a->state == RTLAT_STATE_STOPPED &&
	    (b->state != RTLAT_STATE_STOPPED || b->stop_reason != a->stop_reason))
		fail(t, C_STATUS, "%s: stopped (reason %u), then state %u reason %u", t->what,
		     a->stop_reason, b->state, b->stop_reason);
}

static void check_stats(struct thr *t, const struct rtlat_stats *in, const struct rtlat_stats *st_,
			int with_buckets)
{
	struct rtlat_stats sc = *st_, *st = &sc;

	if (inject(C_STATS))
		sc.hist_layout ^= 1;
	uint32_t want = with_buckets ? (in->nr_buckets < RTLAT_HIST_BUCKETS ?
					in->nr_buckets : RTLAT_HIST_BUCKETS) : 0;

	checked(C_STATS);
	if (st->size != sizeof(*st) || st->version != RTLAT_VERSION ||
	    st->hist_layout != RTLAT_HIST_LAYOUT || st->cpu != in->cpu || st->stage != in->stage) {
		fail(t, C_STATS, "%s: size %u version %u layout %#x cpu %u stage %u", t->what,
		     st->size, st->version, st->hist_layout, st->cpu, st->stage);
		return;
	}
	if (st->nr_buckets != want)
		fail(t, C_STATS, "%s: nr_buckets %u, asked %u with%s a buffer", t->what,
		     st->nr_buckets, in->nr_buckets, with_buckets ? "" : "out");
	if (!st->count)
		return;
	if (st->min > st->max || st->sum < st->max)
		fail(t, C_STATS, "%s: count %llu min %llu max %llu sum %llu", t->what,
		     (unsigned long long)st->count, (unsigned long long)st->min,
		     (unsigned long long)st->max, (unsigned long long)st->sum);
	for (int i = 0; i < 7; i++)
		if ((i && st->percentiles[i] < st->percentiles[i - 1]) ||
		    st->percentiles[i] > st->max)
			fail(t, C_STATS, "%s: percentile %d = %llu (previous %llu, max %llu)",
			     t->what, i, (unsigned long long)st->percentiles[i],
			     (unsigned long long)(i ? st->percentiles[i - 1] : 0),
			     (unsigned long long)st->max);
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */

/* The largest ring a session of `d` may have, raised before a CONFIG that may create it. */
static void raise_max_ring(struct dev *d, __u64 ring)
{
	__u64 m = ld(&S->max_ring[d->idx]);

	while (ring > m && !__atomic_compare_exchange_n(&S->max_ring[d->idx], &m, ring, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A STATUS request: its header, no buffers for the sets in full. */
static void status_request(struct rtlat_status *s)
{
	memset(s, 0x5a, sizeof(*s));
	s->size = sizeof(*s);
	s->version = RTLAT_VERSION;
	s->cpus_ptr = s->offline_ptr = s->unattended_ptr = 0;
}

static void op_status(struct thr *t, struct rng *r, struct dev *d, int pair)
{
	unsigned int need = (nr_cpu_ids_ + 63) / 64, words = need;
	struct rtlat_status s1, s2;
	int i = pick_slot(r, d, 20), fd, bp, bad_hdr = 0;
	void *p;
	long ret;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	bp = pick_bp(r, pair ? 0 : 8);
	status_request(&s1);
	/* Now and then the sets in full (into t->wide, 8 words), or too
	 * short a buffer for them, or a bad header. */
	if (chance(r, 20) && need <= 8) {
		words = need - chance(r, 20);
		s1.cpus_ptr = (__u64)(uintptr_t)t->wide;
		s1.cpu_words = words;
	} else if (chance(r, 4)) {
		bad_hdr = 1;
		if (chance(r, 50))
			s1.size = PICK(r, 0, RTLAT_STATUS_SIZE_V3, ~0U);
		else
			s1.version = PICK(r, 0, 2, ~0U);
	}
	p = bp_ptr(t, r, bp, &s1, sizeof(s1));
	cbegin(t, K_STATUS, d, i, HANG_S, 1, "%s", bp_name[bp]);
	if (!t->child && inject(C_HANG))
		sleep_ms((HANG_S + 5) * 1000);
	if (!t->child && inject(C_DSTATE)) {
		/* The parent of a vfork() waits uninterruptibly (killable: "D"). */
		if (vfork() == 0) {
			struct timespec ts = { (time_t)(DSTATE_NS / 1000000000ULL) + 2, 0 };

			syscall(SYS_nanosleep, &ts, NULL);
			_exit(0);
		}
	}
	ret = cend(t, ioctl(fd, RTLAT_IOC_STATUS, p));
	if (bp_faults(bp, 1)) {
		/* (A read-only page is read first: not a request, EINVAL.) */
		expect_err(t, ret, bp == BP_RO ? 0 : EFAULT, "its pointer is bad");
	} else if (bad_hdr) {
		expect_err(t, ret, EINVAL, "its size or version is wrong");
	} else if (words < need) {
		expect_err(t, ret, EOVERFLOW, "its buffer for the sets in full is too short");
		if (bp == BP_ODD)
			memcpy(&s1, p, sizeof(s1));
		if (ret < 0 && s1.cpu_words != need)
			fail(t, C_STATUS, "%s: EOVERFLOW with cpu_words %u, not the %u needed",
			     t->what, s1.cpu_words, need);
	} else if (ret < 0) {
		/* A good request: its memory, or nothing. */
		if (t->err != ENOMEM)
			fail(t, C_EXPECT, "%s: %s for a good request", t->what, ename(t->err));
	} else {
		if (bp == BP_ODD)
			memcpy(&s1, p, sizeof(s1));
		check_status(t, d, &s1);
		for (unsigned int w = 0; s1.cpus_ptr && w < need && w < RTLAT_CPU_WORDS; w++)
			if (t->wide[w] != s1.cpus[w])
				fail(t, C_STATUS, "%s: the set in full, word %u: %#llx, inline %#llx",
				     t->what, w, (unsigned long long)t->wide[w],
				     (unsigned long long)s1.cpus[w]);
		if (pair) {
			status_request(&s2);
			cbegin(t, K_STATUS, d, i, HANG_S, 1, "(second)");
			if (cend(t, ioctl(fd, RTLAT_IOC_STATUS, &s2)) == 0) {
				check_status(t, d, &s2);
				check_status_pair(t, &s1, &s2);
			}
		}
	}
	slot_put(t, d, i);
}

static void op_stats(struct thr *t, struct rng *r, struct dev *d)
{
	struct rtlat_stats in, st;
	int i = pick_slot(r, d, 20), fd, bp, bbp = BP_GOOD, hdr_ok, range_ok = 1;
	int with_buckets = 0, bfault = 0;
	char desc[96];
	long ret;
	void *p;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	memset(&in, 0, sizeof(in));
	in.size = sizeof(in);
	in.version = RTLAT_VERSION;
	hdr_ok = PICK_HEADER(r, &in.size, &in.version, 0, 167, 169, 96, ~0U);
	if (d->edu)
		in.cpu = chance(r, 85) ? 0 : below(r, 4);
	else
		in.cpu = chance(r, 85) ? below(r, nr_cpu_ids_) : nr_cpu_ids_ + below(r, 3);
	if (rare(r, 40))
		in.cpu = PICK(r, 255, 256, ~0U, 1U << 31);
	in.stage = chance(r, 94) ? below(r, RTLAT_NR_STAGES) :
				   PICK(r, 4, 5, ~0U);
	if (in.cpu >= RTLAT_MAX_CPUS || in.stage >= RTLAT_NR_STAGES)
		range_ok = 0;
	if (chance(r, 55)) {
		uint32_t k;

		in.nr_buckets = chance(r, 40) ? RTLAT_HIST_BUCKETS :
				chance(r, 70) ? below(r, RTLAT_HIST_BUCKETS + 64) :
				PICK(r, 0, 1, RTLAT_HIST_BUCKETS - 1, RTLAT_HIST_BUCKETS + 1,
					      ~0U);
		bbp = chance(r, 85) ? BP_GOOD : BP_LOW + below(r, NBP - BP_LOW);
		switch (bbp) {
		case BP_GOOD:
			in.buckets_ptr = (uintptr_t)t->buckets;
			with_buckets = 1;
			break;
		case BP_STRADDLE:
			k = 1 + below(r, 20);
			in.buckets_ptr = (uintptr_t)(t->g + GSPAN - 8 * k);
			bfault = in.nr_buckets > k;
			with_buckets = 1;
			break;
		default:
			in.buckets_ptr = (uintptr_t)bp_ptr(t, r, bbp, NULL, 8);
			bfault = in.nr_buckets > 0;
			with_buckets = 1;
			break;
		}
	}
	bp = pick_bp(r, 6);
	p = bp_ptr(t, r, bp, &in, sizeof(in));
	snprintf(desc, sizeof(desc), "size %u ver %u cpu %u stage %u buckets %u%s%s", in.size,
		 in.version, in.cpu, in.stage, in.nr_buckets,
		 with_buckets ? (bbp == BP_GOOD ? " buf" : bp_name[bbp]) : "", bp_name[bp]);
	cbegin(t, K_STATS, d, i, HANG_S, 1, "%s", desc);
	ret = cend(t, ioctl(fd, RTLAT_IOC_STATS, p));
	if (bp_faults(bp, 1)) {
		expect_err(t, ret, 0, "its pointer is bad");
	} else if (bp != BP_RO) {
		if (!hdr_ok)
			expect_err(t, ret, EINVAL, "its size or version is wrong");
		else if (!range_ok)
			expect_err(t, ret, EINVAL, "its cpu or stage is out of range");
		else if (bfault)
			expect_err(t, ret, 0, "its bucket buffer is bad");
		if (ret == 0) {
			memcpy(&st, p, sizeof(st));
			check_stats(t, &in, &st, with_buckets);
		}
	}
	slot_put(t, d, i);
}

/* RTLAT_IOC_BLAME, in either layout: a request, good or bad; an answer
 * must add up. The current layout is larger than the pages a bad pointer
 * is placed in: it goes with a good one. */
static void op_blame(struct thr *t, struct rng *r, struct dev *d)
{
	static __thread struct rtlat_blame in, b;
	int i = pick_slot(r, d, 20), fd, bp, hdr_ok;
	unsigned int cmd = RTLAT_IOC_BLAME;
	size_t size = sizeof(in);
	__u64 sum = 0, part;
	char desc[96];
	__u32 want;
	long ret;
	void *p;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	bp = pick_bp(r, 6);
	if (chance(r, 30)) {
		cmd = RTLAT_IOC_BLAME_V1;
		size = RTLAT_BLAME_SIZE_V1;
	}
	memset(&in, 0, sizeof(in));
	in.size = size;
	in.version = RTLAT_VERSION;
	hdr_ok = PICK_HEADER(r, &in.size, &in.version, 0, size - 1, size + 1, ~0U);
	in.cpu = chance(r, 85) ? below(r, nr_cpu_ids_) : PICK(r, nr_cpu_ids_, 256, ~0U);
	in.rank = chance(r, 90) ? below(r, RTLAT_BLAME_WORST) : PICK(r, RTLAT_BLAME_WORST, ~0U);
	/* Nonzero: to be told how many are kept (an older tool sends 0). */
	in.nr_worst = chance(r, 80) ? PICK(r, 1, ~0U) : 0;
	/* The measurement apart, or not (an older tool: 0, or its last
	 * answer's has_worst 1), now and then an unknown bit. */
	in.want = chance(r, 95) ? PICK(r, RTLAT_BLAME_WANT_MEASURE, 0, 1) : PICK(r, 4, 1U << 31);
	/* (The answer may land in `in` itself: has_worst overwrites want.) */
	want = in.want;
	p = bp_ptr(t, r, bp, &in, size);
	snprintf(desc, sizeof(desc), "size %u ver %u cpu %u rank %u%s%s", in.size, in.version,
		 in.cpu, in.rank, bp_name[bp], cmd == RTLAT_IOC_BLAME_V1 ? " v1" : "");
	cbegin(t, K_BLAME, d, i, HANG_S, 1, "%s", desc);
	ret = cend(t, ioctl(fd, cmd, p));
	if (!t->priv) {
		expect_err(t, ret, EPERM, "it is not privileged (CAP_PERFMON)");
	} else if (bp_faults(bp, 1)) {
		expect_err(t, ret, 0, "its pointer is bad");
	} else if (bp != BP_RO) {
		if (!hdr_ok)
			expect_err(t, ret, EINVAL, "its size or version is wrong");
		else if (in.rank >= RTLAT_BLAME_WORST)
			expect_err(t, ret, EINVAL, "its rank is past those a CPU keeps");
		else if (want & ~(RTLAT_BLAME_WANT_MEASURE | 1U))
			expect_err(t, ret, EINVAL, "it wants what the device does not know");
		if (ret == 0) {
			memset(&b, 0, sizeof(b));
			memcpy(&b, p, size);
			checked(C_STATS);
			if (b.nr_culprits > RTLAT_BLAME_CULPRITS || b.nr_irq > RTLAT_BLAME_IRQ_PARTS ||
			    b.nr_thread > RTLAT_BLAME_THREAD_PARTS || b.has_worst > 1 ||
			    b.nr_stack > RTLAT_BLAME_STACK_DEPTH ||
			    b.nr_long_names > RTLAT_BLAME_LONG_NAMES ||
			    (!b.explained && b.has_worst) || b.rank != in.rank ||
			    b.nr_worst > RTLAT_BLAME_WORST || b.nr_worst > b.explained ||
			    (in.nr_worst && b.has_worst != (b.rank < b.nr_worst)) ||
			    (!in.nr_worst && b.nr_worst))
				fail(t, C_STATS, "%s: counts out of range", t->what);
			for (unsigned int k = 0; k < b.nr_culprits && k < RTLAT_BLAME_CULPRITS; k++) {
				__u64 aux = b.culprits[k].aux;

				sum += b.culprits[k].ns;
				/* A whole name only in the current layout, for an
				 * hrtimer, the same cut as the entry's. */
				if (aux && (cmd == RTLAT_IOC_BLAME_V1 ||
					    b.culprits[k].kind != RTLAT_BLAME_TIMER ||
					    aux > b.nr_long_names || aux > RTLAT_BLAME_LONG_NAMES ||
					    b.long_names[aux - 1][RTLAT_BLAME_LONG_NAME_LEN - 1] ||
					    strncmp(b.long_names[aux - 1], b.culprits[k].name,
						    RTLAT_BLAME_NAME_LEN - 1)))
					fail(t, C_STATS, "%s: source %u's whole name (aux %llu of %u) "
					     "is not its own", t->what, k, (unsigned long long)aux,
					     b.nr_long_names);
				if (b.culprits[k].kind == RTLAT_BLAME_MEASURE &&
				    !(want & RTLAT_BLAME_WANT_MEASURE))
					fail(t, C_STATS, "%s: the measurement apart, not asked for",
					     t->what);
			}
			if (sum + b.other_ns != b.late_ns)
				fail(t, C_STATS, "%s: sources %llu + others %llu, late %llu", t->what,
				     (unsigned long long)sum, (unsigned long long)b.other_ns,
				     (unsigned long long)b.late_ns);
			part = b.irq_other_ns + b.thread_other_ns;
			for (unsigned int k = 0; k < b.nr_irq && k < RTLAT_BLAME_IRQ_PARTS; k++)
				part += b.irq[k].ns;
			for (unsigned int k = 0; k < b.nr_thread && k < RTLAT_BLAME_THREAD_PARTS; k++)
				part += b.thread[k].ns;
			if (b.has_worst && (__s64)part != b.thread_ns)
				fail(t, C_STATS, "%s: the worst's parts %llu, its latency %lld",
				     t->what, (unsigned long long)part, (long long)b.thread_ns);
		}
	}
	slot_put(t, d, i);
}

/* An ioctl number no device knows: unknown numbers, wrong sizes or directions, others' magic. */
static unsigned int gen_bad_cmd(struct rng *r, struct dev *d, char *desc, size_t dlen)
{
	static const unsigned int known[] = {
		RTLAT_IOC_CONFIG, RTLAT_IOC_START, RTLAT_IOC_STOP, RTLAT_IOC_STATUS,
		RTLAT_IOC_STATS, RTLAT_IOC_RESET, RTLAT_IOC_USER_WAIT, RTLAT_IOC_ATTACH,
		RTLAT_IOC_BLAME,
		/* The older layouts' CONFIG, STATUS and BLAME (rtlat.h). */
		RTLAT_IOC_STATUS_V1, RTLAT_IOC_STATUS_V2, RTLAT_IOC_STATUS_V3,
		RTLAT_IOC_CONFIG_V1, RTLAT_IOC_CONFIG_V2, RTLAT_IOC_BLAME_V1,
		/* rtedu's own, known on rtedu only: */
		RTEDU_IOC_INFO, RTEDU_IOC_FACTORIAL, RTEDU_IOC_DMA,
	};
	const unsigned int nr_rtlat = 15;	/* the first 15 above */
	/* Handled by the VFS before the driver (fs/ioctl.c), whatever the file. */
	static const unsigned int vfs_types[] = { 0x00, 0x15, 'T', 'X', 'f', 0x94 };
	unsigned int magic = d->edu ? RTEDU_IOC_MAGIC : RTLAT_IOC_MAGIC, cmd;
	int bad;

	do {
		switch (below(r, 6)) {
		case 0:	/* an unknown number of the device's magic */
			cmd = _IOC(below(r, 4), magic, chance(r, 10) ? 0 : 8 + below(r, 248),
				   below(r, 1 << 14));
			break;
		case 1: {	/* a known number with another size or direction */
			static const unsigned int sizes[] = { 0, 4, 8, 63, 64, 95, 97, 144, 168 };
			unsigned int size = chance(r, 80) ? sizes[below(r, 9)] : below(r, 1 << 14);

			cmd = _IOC(below(r, 4), magic, 1 + below(r, 7), size);
			break;
		}
		case 2:	/* the other device's ioctls (on rtlat), other magics */
			if (!d->edu && chance(r, 70))
				cmd = PICK(r, RTEDU_IOC_INFO, RTEDU_IOC_FACTORIAL,
							RTEDU_IOC_DMA);
			else
				cmd = _IOC(below(r, 4), 0xb6 + below(r, 4), below(r, 16),
					   below(r, 256));
			break;
		case 3:
			cmd = PICK(r, 0, ~0U, _IO(RTLAT_IOC_MAGIC, 0),
						_IOW(RTLAT_IOC_MAGIC, 1, int),
						_IOR(RTLAT_IOC_MAGIC, 7, struct rtlat_status),
						_IOWR(RTEDU_IOC_MAGIC, 1, struct rtedu_info));
			break;
		default:
			cmd = (uint32_t)rnd(r);
			break;
		}
		bad = 0;
		for (unsigned int k = 0; k < ARRAY_SIZE(known); k++)
			if (cmd == known[k] && (d->edu || k < nr_rtlat))
				bad = 1;
		for (unsigned int k = 0; k < ARRAY_SIZE(vfs_types); k++)
			if (_IOC_TYPE(cmd) == vfs_types[k])
				bad = 1;
	} while (bad);
	snprintf(desc, dlen, "%#x", cmd);
	return cmd;
}

static void op_bad_ioctl(struct thr *t, struct rng *r, struct dev *d)
{
	int i = pick_slot(r, d, 10), fd;
	unsigned int cmd;
	char desc[32];
	long ret;
	void *arg;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	cmd = gen_bad_cmd(r, d, desc, sizeof(desc));
	for (int k = 0; k < 64; k++)
		t->g[below(r, GSPAN)] = rnd(r);
	arg = chance(r, 50) ? (void *)t->g : chance(r, 50) ? NULL : (void *)(uintptr_t)rnd(r);
	cbegin(t, K_BAD_IOCTL, d, i, HANG_S, 1, "ioctl(%s)", desc);
	ret = cend(t, ioctl(fd, cmd, arg));
	expect_err(t, ret, ENOTTY, "the command is unknown");
	slot_put(t, d, i);
}

/* A known ioctl with a bad pointer. */
static void op_badptr(struct thr *t, struct rng *r, struct dev *d)
{
	static const struct { int kind; unsigned int cmd; size_t size; int writes, edu; } c[] = {
		{ K_CONFIG, RTLAT_IOC_CONFIG, sizeof(struct rtlat_config), 0, 0 },
		{ K_STATUS, RTLAT_IOC_STATUS, sizeof(struct rtlat_status), 1, 0 },
		/* The STATUS of RTLAT_VERSION 1 binaries. */
		{ K_STATUS, _IOC(_IOC_READ, RTLAT_IOC_MAGIC, 4, RTLAT_STATUS_SIZE_V1),
		  RTLAT_STATUS_SIZE_V1, 1, 0 },
		{ K_STATS, RTLAT_IOC_STATS, sizeof(struct rtlat_stats), 1, 0 },
		{ K_USER_WAIT, RTLAT_IOC_USER_WAIT, sizeof(struct rtlat_record), 1, 0 },
		{ K_INFO, RTEDU_IOC_INFO, sizeof(struct rtedu_info), 1, 1 },
		{ K_FACTORIAL, RTEDU_IOC_FACTORIAL, sizeof(struct rtedu_factorial), 1, 1 },
		{ K_DMA, RTEDU_IOC_DMA, sizeof(struct rtedu_dma), 1, 1 },
	};
	int k = below(r, d->edu ? 8 : 5), i = pick_slot(r, d, 30), fd;
	int bp = BP_NULL + below(r, NBP - BP_NULL);
	unsigned char zero[256] = { 0 };
	struct wtoken w;
	long ret;
	void *p;

	if (c[k].kind == K_USER_WAIT && bp == BP_RO)
		bp = BP_NULL;
	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	p = bp_ptr(t, r, bp, zero, c[k].size);
	if (c[k].kind == K_CONFIG) {
		raise_max_ring(d, 64);	/* the read-only page's config */
		w_begin(t, d, &w);
	}
	cbegin(t, c[k].kind, d, i, HANG_S, c[k].kind != K_CONFIG && c[k].kind != K_USER_WAIT,
	       "%s", bp_name[bp]);
	ret = cend(t, ioctl(fd, c[k].cmd, p));
	if (c[k].kind == K_CONFIG) {
		/* The read-only page holds a valid config: it may be taken. */
		w_end(t, d, &w, ret == 0 ? -1 : 0, NULL);
		if (ret == 0)
			__atomic_store_n(&d->owner, i, __ATOMIC_RELAXED);
	}
	if (bp_faults(bp, c[k].writes)) {
		int want = 0;

		if (c[k].kind == K_STATUS || c[k].kind == K_INFO ||
		    (c[k].kind == K_CONFIG && t->priv))
			want = EFAULT;
		/* STATUS reads its request first: the read-only page's is none. */
		if (c[k].cmd == RTLAT_IOC_STATUS && bp == BP_RO)
			want = 0;
		expect_err(t, ret, want, "its pointer is bad");
	}
	slot_put(t, d, i);
}

static void op_simple(struct thr *t, struct rng *r, struct dev *d, int kind)
{
	unsigned int cmd = kind == K_START ? RTLAT_IOC_START :
			   kind == K_STOP ? RTLAT_IOC_STOP : RTLAT_IOC_RESET;
	int i = pick_slot(r, d, kind == K_RESET ? 50 : 70), fd;
	long ret;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	cbegin(t, kind, d, i, HANG_S, kind == K_RESET, "%s", "");
	ret = cend(t, ioctl(fd, cmd, (void *)(uintptr_t)(chance(r, 10) ? rnd(r) : 0)));
	if (kind == K_START && ret == 0)
		inc(&S->sessions_started);
	if (!t->priv && kind == K_START)
		expect_err(t, ret, EPERM, "the caller has no CAP_SYS_NICE/CAP_SYS_ADMIN");
	slot_put(t, d, i);
}

static void op_config(struct thr *t, struct rng *r, struct dev *d, int then_start)
{
	struct rtlat_config c, eff;
	__u64 online[RTLAT_CPU_WORDS], hg0, hg1;
	int i = pick_slot(r, d, 50), fd, bp, v, ok;
	const char *why;
	char desc[160];
	struct wtoken w;
	long ret;
	void *p;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	gen_config(r, d, &c, t->wide, desc, sizeof(desc));
	bp = pick_bp(r, 3);
	p = bp_ptr(t, r, bp, &c, sizeof(c));
	if (bp == BP_RO)
		bp = BP_NULL, p = NULL;
	/* A child's copy of CPU 1's state is stale: the CPUs are unsure there. */
	ok = online_mask(online, &hg0) == 0 && !t->child;
	v = config_validity(&c, d->edu, ok ? online : NULL, t->wide, &why);
	/* The set the session gets, as the epoch keeps it. */
	eff = c;
	if (c.cpus_ptr == (__u64)(uintptr_t)t->wide)
		memcpy(eff.cpus, t->wide, sizeof(eff.cpus));
	if (v != V_INVALID)
		raise_max_ring(d, c.ring_records ? c.ring_records : RTLAT_RING_DEFAULT);
	w_begin(t, d, &w);
	cbegin(t, K_CONFIG, d, i, HANG_S, 0, "%s%s", desc, bp_name[bp]);
	ret = cend(t, ioctl(fd, RTLAT_IOC_CONFIG, p));
	w_end(t, d, &w, bp_faults(bp, 0) ? 0 : ret == 0, &eff);
	hg1 = __atomic_load_n(&hp_gen, __ATOMIC_ACQUIRE);
	if (hg1 != hg0 && v == V_VALID && !d->edu)
		v = V_UNSURE;
	if (bp_faults(bp, 0)) {
		expect_err(t, ret, t->priv ? EFAULT : EPERM, "its pointer is bad");
	} else if (!t->priv) {
		expect_err(t, ret, EPERM, "the caller has no CAP_SYS_NICE/CAP_SYS_ADMIN");
	} else if (v == V_INVALID) {
		inc(&S->cfg_invalid);
		expect_err(t, ret, 0, why);
	} else if (v == V_VALID) {
		inc(&S->cfg_valid);
		checked(C_EXPECT);
		int empty = !(eff.cpus[0] | eff.cpus[1] | eff.cpus[2] | eff.cpus[3]);

		if (ret < 0 && t->err == EINVAL && empty && !has_bit(online, 1))
			fail(t, C_EXPECT, "%s: EINVAL for an empty CPU set while CPUs %#llx are "
			     "online (rtlat.h: \"all zero: every online CPU\")", t->what,
			     (unsigned long long)online[0]);
		else if (ret < 0 && (t->err == EINVAL || t->err == E2BIG))
			fail(t, C_EXPECT, "%s: %s for a valid config of the current layout "
			     "(online CPUs %#llx)", t->what, ename(t->err),
			     (unsigned long long)online[0]);
	}
	if (ret == 0) {
		__atomic_store_n(&d->owner, i, __ATOMIC_RELAXED);
		if (t->child)
			t->child_configured = 1;
		if (then_start && chance(r, 85)) {
			cbegin(t, K_START, d, i, HANG_S, 0, "after CONFIG");
			if (cend(t, ioctl(fd, RTLAT_IOC_START)) == 0)
				inc(&S->sessions_started);
		}
	}
	slot_put(t, d, i);
}

/* The buffer of a read: mostly whole records, sometimes short, huge or bad. */
struct rbuf {
	unsigned char *p;
	size_t len, room;	/* room: bytes that may be written without faulting */
	int bp;
	char desc[48];
};

static void pick_rbuf(struct thr *t, struct rng *r, struct rbuf *b)
{
	uint32_t k = below(r, 100);

	b->p = t->big;
	b->bp = BP_GOOD;
	b->room = BIG_SIZE;
	if (k < 62) {
		b->len = REC * (1 + below(r, 64));
	} else if (k < 70) {
		b->len = REC * (1 + below(r, 64)) + 1 + below(r, REC - 1);
	} else if (k < 76) {
		b->len = REC * 4096;
	} else if (k < 79) {
		b->len = chance(r, 50) ? BIG_SIZE : chance(r, 50) ? (1UL << 30) : ~0UL >> 1;
	} else if (k < 88) {
		b->len = below(r, REC);	/* short: EINVAL */
	} else {
		b->len = REC * (1 + below(r, 16));
		b->bp = BP_NULL + below(r, NBP - BP_NULL);
		if (b->bp == BP_STRADDLE) {
			size_t m = 1 + below(r, 300);

			b->p = t->g + GSPAN - m;
			b->room = m;
		} else {
			b->p = bp_ptr(t, r, b->bp, NULL, REC);
			b->room = b->bp == BP_ODD ? PAGE - 8 : 0;
		}
	}
	snprintf(b->desc, sizeof(b->desc), "len %zu%s", b->len, bp_name[b->bp]);
}

static unsigned int pick_timeout_ms(struct rng *r)
{
	uint32_t k = below(r, 100);

	if (k < 70)
		return 10 + below(r, 190);
	if (k < 92)
		return 200 + below(r, 800);
	/* Longer than DSTATE_NS: a second reader would be seen asleep behind it. */
	return (2500 + below(r, 1500)) * SLOW;
}

enum { RD_READ, RD_READV, RD_PREAD, RD_PREADV2 };

static void op_read(struct thr *t, struct rng *r, struct dev *d, int how)
{
	int i = pick_slot(r, d, 10), fd, cr = 0, valid;
	unsigned int tmo = 0;
	struct epoch e0, e1;
	struct iovec iov[4];
	struct rbuf b;
	int kind;
	long ret;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	t->nonblock = !!(d->s[i].flags & O_NONBLOCK);
	pick_rbuf(t, r, &b);
	kind = how == RD_READV ? K_READV : how == RD_PREAD ? K_PREAD :
	       how == RD_PREADV2 ? K_PREADV2 : t->nonblock ? K_READ_NB : K_READ;
	if (!t->nonblock)
		tmo = pick_timeout_ms(r);
	if (!t->child)
		cr = pthread_mutex_trylock(&d->rm) == 0;
	epoch_get(t, d, &e0);
	cbegin(t, kind, d, i, HANG_S + tmo / 1000, 1, "%s%s%s", b.desc,
	       t->nonblock ? " nonblock" : "", cr ? " checked" : "");
	if (tmo)
		timer_arm(t, tmo);
	switch (how) {
	case RD_READV: {
		/* Contiguous pieces, so that records cross them. */
		size_t left = b.len, off = 0;
		int n = 0;

		while (n < 4 && left) {
			size_t l = n == 3 ? left : below(r, 2) ? REC / 2 + below(r, 2 * REC) : left;

			if (l > left)
				l = left;
			iov[n].iov_base = b.p + off;
			iov[n].iov_len = l;
			off += l;
			left -= l;
			n++;
		}
		ret = readv(fd, iov, n ? n : 1);
		break;
	}
	case RD_PREAD:
		ret = pread(fd, b.p, b.len, chance(r, 50) ? 0 : (off_t)below(r, 1 << 20));
		break;
	case RD_PREADV2:
		iov[0].iov_base = b.p;
		iov[0].iov_len = b.len;
		ret = preadv2(fd, iov, 1, -1, RWF_NOWAIT);
		break;
	default:
		ret = read(fd, b.p, b.len);
		break;
	}
	t->err = errno;
	if (tmo)
		timer_disarm(t);
	errno = t->err;
	ret = cend(t, ret);
	epoch_get(t, d, &e1);
	valid = e0.gen == e1.gen && !e0.inprog;
	if (b.len > 0 && b.len < REC && (how == RD_READ || how == RD_READV))
		expect_err(t, ret, EINVAL, "the buffer is smaller than one record");
	if (ret > 0 && inject(C_READLEN))
		ret += 1;
	if (ret > 0) {
		checked(C_READLEN);
		if (ret % REC || (size_t)ret > b.len || (size_t)ret > b.room)
			fail(t, C_READLEN, "%s: returned %ld (room %zu)", t->what, ret, b.room);
		else
			check_records(t, d, b.p, ret, &e0, valid, cr);
	}
	if (tmo) {
		if (inject(C_SIGNAL))
			t->dur += 2 * SIGNAL_SLACK_NS;
		checked(C_SIGNAL);
		if (t->dur > tmo * 1000000ULL + SIGNAL_SLACK_NS && undisturbed(t))
			fail(t, C_SIGNAL, "%s: took %.1f s, its signal came after %u ms", t->what,
			     t->dur / 1e9, tmo);
	}
	if (cr)
		pthread_mutex_unlock(&d->rm);
	t->nonblock = 0;
	slot_put(t, d, i);
}

static void op_write_mmap(struct thr *t, struct rng *r, struct dev *d, int kind)
{
	int i = pick_slot(r, d, 0), fd;
	long ret;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	if (kind == K_WRITE) {
		size_t len = chance(r, 50) ? REC : below(r, 200);

		cbegin(t, K_WRITE, d, i, HANG_S, 1, "len %zu", len);
		ret = cend(t, write(fd, t->big, len));
		if (len)
			expect_err(t, ret, (d->s[i].flags & O_ACCMODE) == O_RDONLY ? EBADF : EINVAL,
				   "the device has no write()");
	} else {
		void *m;

		cbegin(t, K_MMAP, d, i, HANG_S, 1, "%s", "4096");
		m = mmap(NULL, PAGE, PROT_READ, chance(r, 50) ? MAP_SHARED : MAP_PRIVATE, fd, 0);
		ret = cend(t, m == MAP_FAILED ? -1 : 0);
		if (m != MAP_FAILED)
			munmap(m, PAGE);
		expect_err(t, ret, ENODEV, "the device has no mmap()");
	}
	slot_put(t, d, i);
}

#define POLL_OK (POLLIN | POLLRDNORM | POLLHUP)

struct pick {
	struct dev *d;
	int i, fd;
};

/* Up to `max` distinct open files of random devices, read-locked. */
static int pick_files(struct thr *t, struct rng *r, struct pick *p, int max)
{
	int n = 0, want = 1 + below(r, max);

	for (int k = 0; k < want * 2 && n < want; k++) {
		struct dev *d = pick_dev(r);
		int i = below(r, d->nslot), dup = 0;

		for (int j = 0; j < n; j++)
			dup |= p[j].d == d && p[j].i == i;
		if (dup)
			continue;
		p[n].fd = slot_get(t, d, i);
		if (p[n].fd < 0)
			continue;
		p[n].d = d;
		p[n].i = i;
		n++;
	}
	return n;
}

static void put_files(struct thr *t, struct pick *p, int n)
{
	while (n--)
		slot_put(t, p[n].d, p[n].i);
}

static int pick_poll_timeout(struct rng *r)
{
	uint32_t k = below(r, 100);

	if (k < 50)
		return 0;
	if (k < 95)
		return 1 + below(r, 300);
	return 1000 + below(r, 2000);
}

static void op_poll(struct thr *t, struct rng *r)
{
	struct pollfd pf[4];
	struct pick p[4];
	int n = pick_files(t, r, p, 4), tmo = pick_poll_timeout(r), ready = 0;
	long ret;

	if (n < 1 || n > 4)
		return;
	for (int k = 0; k < n; k++) {
		pf[k].fd = p[k].fd;
		pf[k].events = chance(r, 80) ? POLLIN : 0;
		if (chance(r, 15))
			pf[k].events |= POLLOUT | POLLPRI;
		if (chance(r, 5))
			pf[k].events = rnd(r);
		pf[k].revents = 0;
	}
	cbegin(t, K_POLL, p[0].d, p[0].i, HANG_S + tmo / 1000, 1, "%d files, timeout %d ms", n,
	       tmo);
	ret = cend(t, poll(pf, n, tmo));
	if (ret >= 0 && inject(C_POLL))
		pf[0].revents |= POLLOUT;
	checked(C_POLL);
	for (int k = 0; k < n && ret >= 0; k++) {
		short allowed = (pf[k].events | POLLHUP) & POLL_OK;

		ready += pf[k].revents != 0;
		if (pf[k].revents & ~allowed)
			fail(t, C_POLL, "%s: %s file %d: revents %#x for events %#x", t->what,
			     p[k].d->name, p[k].i, pf[k].revents, pf[k].events);
	}
	if (ret >= 0 && ret != ready)
		fail(t, C_POLL, "%s: returned %ld, %d files ready", t->what, ret, ready);
	checked(C_SIGNAL);
	if (t->dur > tmo * 1000000ULL + SIGNAL_SLACK_NS && undisturbed(t))
		fail(t, C_SIGNAL, "%s: took %.1f s", t->what, t->dur / 1e9);
	put_files(t, p, n);
}

static void op_select(struct thr *t, struct rng *r)
{
	fd_set rs, ws, es;
	struct pick p[4];
	int n = pick_files(t, r, p, 4), tmo = pick_poll_timeout(r) / 2, maxfd = 0, ready = 0;
	int wx = chance(r, 25);
	struct timeval tv = { tmo / 1000, (tmo % 1000) * 1000 };
	long ret;

	if (!n)
		return;
	FD_ZERO(&rs);
	FD_ZERO(&ws);
	FD_ZERO(&es);
	for (int k = 0; k < n; k++) {
		FD_SET(p[k].fd, &rs);
		if (wx) {
			FD_SET(p[k].fd, &ws);
			FD_SET(p[k].fd, &es);
		}
		if (p[k].fd > maxfd)
			maxfd = p[k].fd;
	}
	cbegin(t, K_SELECT, p[0].d, p[0].i, HANG_S + tmo / 1000, 1, "%d files%s, timeout %d ms",
	       n, wx ? " (also write, except)" : "", tmo);
	ret = cend(t, select(maxfd + 1, &rs, wx ? &ws : NULL, wx ? &es : NULL, &tv));
	checked(C_POLL);
	for (int k = 0; k < n && ret >= 0; k++) {
		ready += FD_ISSET(p[k].fd, &rs);
		if (wx && (FD_ISSET(p[k].fd, &ws) || FD_ISSET(p[k].fd, &es)))
			fail(t, C_POLL, "%s: %s file %d ready for %s", t->what, p[k].d->name,
			     p[k].i, FD_ISSET(p[k].fd, &ws) ? "writing" : "an exception");
	}
	if (ret >= 0 && !wx && ret != ready)
		fail(t, C_POLL, "%s: returned %ld, %d files ready", t->what, ret, ready);
	put_files(t, p, n);
}

static void op_epoll(struct thr *t, struct rng *r)
{
	struct epoll_event ev, evs[8];
	struct pick p[1];
	int tmo = pick_poll_timeout(r) / 2;
	long ret;

	if (t->epfd < 0)
		return;
	if (chance(r, 75) && pick_files(t, r, p, 1) == 1) {
		int op = PICK(r, EPOLL_CTL_ADD, EPOLL_CTL_ADD, EPOLL_CTL_MOD,
				  EPOLL_CTL_DEL);

		ev.events = EPOLLIN;
		if (chance(r, 20))
			ev.events |= EPOLLET;
		if (chance(r, 10))
			ev.events |= EPOLLONESHOT;
		if (chance(r, 10))
			ev.events |= EPOLLRDHUP | EPOLLPRI;
		ev.data.u64 = (__u64)p[0].d->idx << 8 | p[0].i;
		cbegin(t, K_EPOLL_CTL, p[0].d, p[0].i, HANG_S, 1, "%s events %#x",
		       op == EPOLL_CTL_ADD ? "ADD" : op == EPOLL_CTL_MOD ? "MOD" : "DEL",
		       ev.events);
		cend(t, epoll_ctl(t->epfd, op, p[0].fd, &ev));
		put_files(t, p, 1);
	}
	cbegin(t, K_EPOLL_WAIT, NULL, 0, HANG_S + tmo / 1000, 1, "timeout %d ms", tmo);
	ret = cend(t, epoll_wait(t->epfd, evs, 8, tmo));
	checked(C_POLL);
	for (int k = 0; k < ret; k++)
		if (evs[k].events & ~(EPOLLIN | EPOLLRDNORM | EPOLLHUP))
			fail(t, C_POLL, "%s: %s file %llu: events %#x", t->what,
			     devs[(evs[k].data.u64 >> 8) % MAX_DEVS].name,
			     (unsigned long long)(evs[k].data.u64 & 0xff), evs[k].events);
}

static int pin_to(int cpu)
{
	cpu_set_t set;
	int n;

	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		for (int c = 0; c < nr_cpu_ids_ && c < CPU_SETSIZE; c++)
			CPU_SET(c, &set);
	}
	sched_setaffinity(0, sizeof(set), &set);
	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	n = CPU_COUNT(&set);
	if (n != 1)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

static void op_user_wait(struct thr *t, struct rng *r, struct dev *d, int loops)
{
	int cpu;

	if (chance(r, 75))
		cpu = chance(r, 70) ? t->home_cpu : below(r, nr_cpu_ids_ + 1);
	else
		cpu = -1;
	__u64 hg = __atomic_load_n(&hp_gen, __ATOMIC_ACQUIRE);

	t->pinned = pin_to(cpu);
	for (int k = 0; k < loops && !ld(&S->stop); k++) {
		struct rtlat_record rec;
		int i = pick_slot(r, d, 50), fd, bp = pick_bp(r, 4);
		unsigned int tmo = t->child ? 0 : 20 + below(r, chance(r, 90) ? 300 : 1500);
		long ret;
		void *p;

		if (bp == BP_RO)
			bp = BP_KERNEL;
		fd = slot_get(t, d, i);
		if (fd < 0)
			return;
		memset(&rec, 0x5a, sizeof(rec));
		p = bp_ptr(t, r, bp, &rec, sizeof(rec));
		cbegin(t, K_USER_WAIT, d, i, HANG_S + tmo / 1000, 1,
		       "pinned to %d%s, signal after %u ms", t->pinned, bp_name[bp], tmo);
		if (tmo)
			timer_arm(t, tmo);
		ret = ioctl(fd, RTLAT_IOC_USER_WAIT, p);
		t->err = errno;
		if (tmo)
			timer_disarm(t);
		errno = t->err;
		ret = cend(t, ret);
		/* (CPU 1 going offline or online changes what the kernel calls pinned.) */
		if (!d->edu && t->pinned < 0 && !(hg & 1) &&
		    __atomic_load_n(&hp_gen, __ATOMIC_ACQUIRE) == hg)
			expect_err(t, ret, EINVAL, "the thread is not pinned to one CPU");
		if (bp_faults(bp, 1))
			expect_err(t, ret, 0, "its pointer is bad");
		if (ret == 0) {
			__u64 cpus[RTLAT_CPU_WORDS] = { 0 };

			if (bp == BP_ODD)
				memcpy(&rec, p, sizeof(rec));
			if (t->pinned >= 0)
				cpus[t->pinned / 64] = 1ULL << (t->pinned % 64);
			check_record(t, d, &rec, cpus, "USER_WAIT");
			checked(C_RECORD);
			if (rec.flags & (RTLAT_REC_NO_USER | RTLAT_REC_NO_THREAD))
				fail(t, C_RECORD, "%s: record flags %#x", t->what, rec.flags);
		}
		if (tmo) {
			checked(C_SIGNAL);
			if (t->dur > tmo * 1000000ULL + SIGNAL_SLACK_NS && undisturbed(t))
				fail(t, C_SIGNAL, "%s: took %.1f s", t->what, t->dur / 1e9);
		}
		slot_put(t, d, i);
		if (ret < 0 && t->err != EINTR && chance(r, 60))
			break;
	}
}

static void op_fdinfo(struct thr *t, struct rng *r, struct dev *d)
{
	int i = pick_slot(r, d, 0), fd, f;
	char path[64], text[4096];
	long n = 0;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	cbegin(t, K_FDINFO, d, i, HANG_S, 0, "%s", "");
	f = open(path, O_RDONLY);
	if (f >= 0) {
		n = read(f, text, sizeof(text) - 1);
		close(f);
	}
	cend(t, f < 0 || n < 0 ? -1 : 0);
	if (f >= 0 && n >= 0) {
		text[n] = 0;
		checked(C_STATUS);
		if (!strstr(text, d->edu ? "\nrtedu: " : "\nrtlat: "))
			fail(t, C_STATUS, "%s: no \"%s:\" line in fdinfo", t->what,
			     d->edu ? "rtedu" : "rtlat");
	}
	slot_put(t, d, i);
}

static void op_edu_info(struct thr *t, struct rng *r, struct dev *d)
{
	struct rtedu_info in;
	int i = pick_slot(r, d, 0), fd, bp = pick_bp(r, 5);
	long ret;
	void *p;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	memset(&in, 0x5a, sizeof(in));
	if (chance(r, 70)) {
		in.size = sizeof(in);
		in.version = RTEDU_VERSION;
	}
	p = bp_ptr(t, r, bp, &in, sizeof(in));
	cbegin(t, K_INFO, d, i, HANG_S, 1, "%s", bp_name[bp]);
	ret = cend(t, ioctl(fd, RTEDU_IOC_INFO, p));
	if (!d->edu)
		expect_err(t, ret, ENOTTY, "/dev/rtlat has no INFO");
	else if (bp_faults(bp, 1))
		expect_err(t, ret, EFAULT, "its pointer is bad");
	if (ret == 0 && !bp_faults(bp, 1)) {
		memcpy(&in, p, sizeof(in));
		checked(C_EDU);
		if (in.size != sizeof(in) || in.version != RTEDU_VERSION ||
		    in.instance != d->instance || (in.ident & 0xffff) != 0xed ||
		    in.irq_type > RTEDU_IRQ_MSIX || in.dma_bits != d->dma_bits)
			fail(t, C_EDU, "%s: size %u version %u instance %u ident %#x irq_type %u "
			     "dma_bits %u", t->what, in.size, in.version, in.instance, in.ident,
			     in.irq_type, in.dma_bits);
	}
	slot_put(t, d, i);
}

static void op_edu_factorial(struct thr *t, struct rng *r, struct dev *d)
{
	struct rtedu_factorial f = { .size = sizeof(f), .version = RTEDU_VERSION };
	int i = pick_slot(r, d, 0), fd, bp = pick_bp(r, 4), hdr_ok;
	unsigned int tmo = chance(r, 15) ? 1 + below(r, 30) : 0;
	uint32_t k = below(r, 1000);
	long ret;
	void *p;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	f.n = k < 600 ? below(r, 21) : k < 850 ? 21 + below(r, 80) : k < 960 ? below(r, 1 << 16) :
	      k < 998 ? 1 << (16 + below(r, 6)) : 0xffffffffU;
	hdr_ok = PICK_HEADER(r, &f.size, &f.version, 0, 12, 20, ~0U);
	p = bp_ptr(t, r, bp, &f, sizeof(f));
	cbegin(t, K_FACTORIAL, d, i, HANG_S, 0, "n %u size %u version %u%s%s", f.n, f.size,
	       f.version, bp_name[bp], tmo ? " signal" : "");
	if (tmo)
		timer_arm(t, tmo);
	ret = ioctl(fd, RTEDU_IOC_FACTORIAL, p);
	t->err = errno;
	if (tmo)
		timer_disarm(t);
	errno = t->err;
	ret = cend(t, ret);
	if (!d->edu)
		expect_err(t, ret, ENOTTY, "/dev/rtlat has no FACTORIAL");
	else if (bp_faults(bp, 1))
		expect_err(t, ret, 0, "its pointer is bad");
	else if (!hdr_ok && bp != BP_RO)
		expect_err(t, ret, EINVAL, "its size or version is wrong");
	checked(C_EDU);
	if (ret < 0 && t->err == EIO)
		fail(t, C_EDU, "%s: EIO: the device did not finish (a previous operation still "
		     "running?)", t->what);
	if (ret == 0 && !bp_faults(bp, 1)) {
		struct rtedu_factorial o;

		memcpy(&o, p, sizeof(o));
		if (inject(C_EDU))
			o.result++;
		checked(C_EDU);
		if (o.result != fact32(o.n) || o.n != f.n)
			fail(t, C_EDU, "%s: %u! = %u, not %u", t->what, o.n, o.result, fact32(f.n));
	}
	slot_put(t, d, i);
}

static void op_edu_dma(struct thr *t, struct rng *r, struct dev *d)
{
	struct rtedu_dma m = { .size = sizeof(m), .version = RTEDU_VERSION };
	int i = pick_slot(r, d, 0), fd, bp = pick_bp(r, 4), bbp = BP_GOOD, hdr_ok = 1, len_ok;
	unsigned int tmo = chance(r, 15) ? 1 + below(r, 30) : 0;
	__u64 pat = rnd(r);
	unsigned char *buf = t->big + PAGE;
	long ret;
	void *p;

	fd = slot_get(t, d, i);
	if (fd < 0)
		return;
	m.len = chance(r, 85) ? 1 + below(r, RTEDU_DMA_MAX) :
		PICK(r, 0, RTEDU_DMA_MAX + 1, ~0U, RTEDU_DMA_MAX, 1);
	len_ok = m.len >= 1 && m.len <= RTEDU_DMA_MAX;
	for (uint32_t k = 0; k < m.len && k < RTEDU_DMA_MAX; k++)
		buf[k] = mix64(pat + k);
	m.buf_ptr = (uintptr_t)buf;
	if (chance(r, 12)) {
		bbp = BP_NULL + below(r, NBP - BP_NULL);
		if (bbp == BP_STRADDLE)
			m.buf_ptr = (uintptr_t)(t->g + GSPAN - 1 - below(r, 64));
		else
			m.buf_ptr = (uintptr_t)bp_ptr(t, r, bbp, buf, 1);
	}
	if (chance(r, 3)) {
		m.size = PICK(r, 0, 32, 48, ~0U);
		hdr_ok = 0;
	}
	if (chance(r, 2)) {
		m.version = 2;
		hdr_ok = 0;
	}
	p = bp_ptr(t, r, bp, &m, sizeof(m));
	cbegin(t, K_DMA, d, i, HANG_S, 0, "len %u%s%s%s", m.len,
	       bbp ? " buf:" : "", bbp ? bp_name[bbp] + 1 : "", bp_name[bp]);
	if (tmo)
		timer_arm(t, tmo);
	ret = ioctl(fd, RTEDU_IOC_DMA, p);
	t->err = errno;
	if (tmo)
		timer_disarm(t);
	errno = t->err;
	ret = cend(t, ret);
	if (!d->edu) {
		expect_err(t, ret, ENOTTY, "/dev/rtlat has no DMA");
	} else if (bp_faults(bp, 1)) {
		expect_err(t, ret, 0, "its pointer is bad");
	} else if (bp != BP_RO) {
		if (!hdr_ok)
			expect_err(t, ret, EINVAL, "its size or version is wrong");
		else if (!len_ok)
			expect_err(t, ret, EINVAL, "its length is out of range");
		else if (bp_faults(bbp, 1) && (bbp != BP_STRADDLE || m.len > 64))
			expect_err(t, ret, 0, "its buffer is bad");
	}
	checked(C_EDU);
	if (ret < 0 && t->err == EIO)
		fail(t, C_EDU, "%s: EIO: the round trip returned other data (a previous transfer "
		     "still running?)", t->what);
	if (ret == 0 && bbp == BP_GOOD && !bp_faults(bp, 1)) {
		struct rtedu_dma o;
		uint32_t bad = 0;

		memcpy(&o, p, sizeof(o));
		for (uint32_t k = 0; k < m.len; k++)
			bad += buf[k] != (unsigned char)mix64(pat + k);
		checked(C_EDU);
		if (bad || !o.to_dev_ns || !o.from_dev_ns)
			fail(t, C_EDU, "%s: %u bytes differ after the round trip, times %llu %llu",
			     t->what, bad, (unsigned long long)o.to_dev_ns,
			     (unsigned long long)o.from_dev_ns);
	}
	slot_put(t, d, i);
}

static int open_flags(struct rng *r)
{
	return (chance(r, 70) ? O_RDWR : O_RDONLY) | (chance(r, 50) ? O_NONBLOCK : 0);
}

static void op_reopen(struct thr *t, struct rng *r, struct dev *d)
{
	int i = below(r, d->nslot), fd, flags;
	struct slot *s = &d->s[i];

	if (pthread_rwlock_trywrlock(&s->lk))
		return;
	if (s->fd >= 0 && chance(r, 12)) {
		flags = s->flags ^ O_NONBLOCK;
		cbegin(t, K_FCNTL, d, i, HANG_S, 0, "F_SETFL %#x", flags);
		if (cend(t, fcntl(s->fd, F_SETFL, flags & O_NONBLOCK)) == 0)
			s->flags = flags;
		pthread_rwlock_unlock(&s->lk);
		return;
	}
	if (s->fd >= 0) {
		if (__atomic_load_n(&d->owner, __ATOMIC_RELAXED) == i)
			__atomic_store_n(&d->owner, -1, __ATOMIC_RELAXED);
		cbegin(t, K_CLOSE, d, i, HANG_S, 0, "%s", "");
		cend(t, close(s->fd));
		s->fd = -1;
		if (chance(r, 20)) {
			pthread_rwlock_unlock(&s->lk);
			return;	/* closed for a while */
		}
	}
	flags = open_flags(r);
	cbegin(t, K_OPEN, d, i, HANG_S, 0, "flags %#x", flags);
	fd = cend(t, open(d->path, flags));
	if (fd >= 0) {
		s->fd = fd;
		s->flags = flags;
	}
	pthread_rwlock_unlock(&s->lk);
}

static void op_hotplug(struct thr *t, struct rng *r)
{
	int steps;

	if (!can_hotplug || pthread_mutex_trylock(&hp_lock))
		return;
	/* Offline and back, mostly; now and then it stays offline until the next time. */
	steps = cpu1_online ? (chance(r, 80) ? 2 : 1) : 1;
	for (int k = 0; k < steps; k++) {
		int on = !cpu1_online, f;
		long ret = -1;

		__atomic_fetch_add(&hp_gen, 1, __ATOMIC_ACQ_REL);
		disturb_begin();
		cbegin(t, K_HOTPLUG, NULL, 0, HOTPLUG_HANG_S, 0, "cpu1 %s",
		       on ? "online" : "offline");
		f = open(hp_path, O_WRONLY);
		if (f >= 0) {
			ret = write(f, on ? "1" : "0", 1);
			t->err = errno;
			close(f);
			errno = t->err;
		}
		ret = cend(t, ret < 0 ? -1 : 0);
		if (ret == 0) {
			__atomic_store_n(&cpu1_online, on, __ATOMIC_RELAXED);
			inc(&S->hotplugs);
		}
		__atomic_fetch_add(&hp_gen, 1, __ATOMIC_ACQ_REL);
		disturb_end();
		if (k + 1 < steps)
			sleep_ms(below(r, 300));
	}
	pthread_mutex_unlock(&hp_lock);
}

enum op {
	O_STATUS, O_STATUS_PAIR, O_STATS, O_BAD_IOCTL, O_BADPTR, O_RESET, O_STOP, O_START,
	O_CONFIG, O_CONFIG_START, O_READ, O_READV, O_PREAD, O_PREADV2, O_WRITE, O_MMAP,
	O_POLL, O_SELECT, O_EPOLL, O_USER_WAIT, O_REOPEN, O_FORK, O_HOTPLUG, O_FDINFO,
	O_EDU_INFO, O_EDU_FACT, O_EDU_DMA, O_BLAME, NOP
};

static void run_op(struct thr *t, struct rng *r, int op);

/* The forked child: a few operations on the inherited files, then exit. */
static void __noreturn child_main(struct thr *t, struct rng *r)
{
	static const int ops[] = {
		O_STATUS, O_STATUS_PAIR, O_STATS, O_BAD_IOCTL, O_BADPTR, O_RESET, O_STOP, O_START,
		O_CONFIG, O_CONFIG_START, O_READ, O_READ, O_READV, O_PREAD, O_MMAP, O_POLL,
		O_USER_WAIT, O_FDINFO, O_EDU_INFO, O_EDU_FACT, O_BLAME,
	};
	int n = 3 + below(r, 30);

	t->child = 1;
	t->b = &S->busy[MAX_THREADS + t->id];
	t->b->pid = getpid();
	t->b->tid = getpid();
	t->have_timer = 0;
	t->epfd = -1;
	t->child_configured = 0;
	alarm(2 + below(r, 3));
	if (chance(r, 25)) {
		/* Unprivileged, with the privileged parent's files. */
		if (syscall(SYS_setgroups, 0, NULL) == 0 &&
		    syscall(SYS_setresgid, 65534, 65534, 65534) == 0 &&
		    syscall(SYS_setresuid, 65534, 65534, 65534) == 0)
			t->priv = 0;
	}
	for (int k = 0; k < n; k++) {
		struct rng cr = { mix64(t->seed ^ (0x5bd1e995ULL * (k + 1)) ^ r->s) };

		t->nops++;
		run_op(t, &cr, ops[below(&cr, ARRAY_SIZE(ops))]);
		if (chance(r, 8)) {
			/* Close one of the inherited files (the parent still has it). */
			struct dev *d = pick_dev(r);
			int i = below(r, d->nslot);

			if (d->s[i].fd >= 0) {
				cbegin(t, K_CLOSE, d, i, HANG_S, 0, "(inherited)");
				cend(t, close(d->s[i].fd));
				d->s[i].fd = -1;
			}
		}
	}
	_exit(t->child_configured ? 3 : 0);
}

static void op_fork(struct thr *t, struct rng *r)
{
	struct wtoken w[MAX_DEVS];
	__u64 t0;
	int st = 0;
	pid_t pid;
	long ret;

	if (t->child)
		return;
	for (int k = 0; k < ndev; k++)
		w_begin(t, &devs[k], &w[k]);
	/* No file changes under the fork, so that the child's view is right. */
	for (int k = 0; k < ndev; k++)
		for (int i = 0; i < devs[k].nslot; i++)
			pthread_rwlock_rdlock(&devs[k].s[i].lk);
	cbegin(t, K_FORK, NULL, 0, HANG_S, 0, "%s", "");
	disturb_begin();
	pid = fork();
	if (pid == 0)
		child_main(t, r);
	t->err = errno;
	for (int k = 0; k < ndev; k++)
		for (int i = 0; i < devs[k].nslot; i++)
			pthread_rwlock_unlock(&devs[k].s[i].lk);
	errno = t->err;
	ret = cend(t, pid < 0 ? -1 : 0);
	if (ret < 0)
		disturb_end();
	if (ret == 0) {
		inc(&S->forks);
		/* Wait for it (not a call); the watchdog sees a child that does not end. */
		snprintf(t->b->desc, sizeof(t->b->desc), "T%d: waiting for its child %d", t->id,
			 pid);
		t0 = now_ns();
		t->b->start_ns = t0;
		t->b->limit_ns = 2 * HANG_S * 1e9 * SLOW;
		t->b->dcheck = 0;
		t->b->serial = ++t->serial;
		__atomic_store_n(&t->b->active, 1, __ATOMIC_RELEASE);
		while (waitpid(pid, &st, WNOHANG) == 0)
			sleep_ms(5);
		__atomic_store_n(&t->b->active, 0, __ATOMIC_RELEASE);
		/* A child killed in a call leaves its slot busy. */
		__atomic_store_n(&S->busy[MAX_THREADS + t->id].active, 0, __ATOMIC_RELEASE);
		disturb_end();
		if (WIFSIGNALED(st)) {
			inc(&S->children_killed);
			if (WTERMSIG(st) != SIGALRM)
				fail(t, C_RECORD, "fork child %d died of signal %d", pid,
				     WTERMSIG(st));
		}
	}
	for (int k = 0; k < ndev; k++)
		w_end(t, &devs[k], &w[k], ret == 0 && (!WIFEXITED(st) || WEXITSTATUS(st)) ? -1 : 0,
		      NULL);
}

/* ------------------------------------------------------------------ */
/* The mix                                                             */

/* Weights per role; cheap calls are most of them, the expensive ones rarer but steady. */
static const unsigned short weights[NROLE][NOP] = {
	[R_CTL] = {
		[O_STATUS] = 200, [O_STATUS_PAIR] = 60, [O_STATS] = 40, [O_BAD_IOCTL] = 120,
		[O_BADPTR] = 40, [O_RESET] = 30, [O_STOP] = 30, [O_START] = 10, [O_CONFIG] = 4,
		[O_CONFIG_START] = 7, [O_READ] = 120, [O_POLL] = 30, [O_WRITE] = 10, [O_MMAP] = 5,
		[O_EDU_INFO] = 30, [O_EDU_FACT] = 6, [O_FDINFO] = 2, [O_USER_WAIT] = 20,
		[O_BLAME] = 20,
	},
	[R_CHEAP] = {
		[O_STATUS] = 250, [O_STATUS_PAIR] = 80, [O_STATS] = 40, [O_BAD_IOCTL] = 200,
		[O_BADPTR] = 120, [O_RESET] = 15, [O_STOP] = 10, [O_READ] = 120, [O_POLL] = 40,
		[O_SELECT] = 10, [O_WRITE] = 15, [O_MMAP] = 8, [O_PREADV2] = 10, [O_EDU_INFO] = 40,
		[O_USER_WAIT] = 30, [O_FDINFO] = 1, [O_BLAME] = 20,
	},
	[R_READER] = {
		[O_READ] = 400, [O_READV] = 50, [O_PREAD] = 20, [O_PREADV2] = 10, [O_POLL] = 130,
		[O_SELECT] = 50, [O_EPOLL] = 110, [O_STATUS] = 80, [O_STATS] = 10, [O_FDINFO] = 2,
		[O_BAD_IOCTL] = 40, [O_CONFIG_START] = 2,
	},
	[R_USER] = {
		[O_USER_WAIT] = 500, [O_STATUS] = 150, [O_STATS] = 15, [O_READ] = 70,
		[O_CONFIG_START] = 3, [O_STOP] = 3, [O_BAD_IOCTL] = 60, [O_POLL] = 20,
	},
	[R_CHAOS] = {
		[O_REOPEN] = 100, [O_FORK] = 4, [O_HOTPLUG] = 2, [O_EDU_FACT] = 40,
		[O_EDU_DMA] = 15, [O_EDU_INFO] = 60, [O_FDINFO] = 6, [O_STATUS] = 300,
		[O_CONFIG_START] = 5, [O_STOP] = 12, [O_READ] = 100, [O_EPOLL] = 20,
		[O_BAD_IOCTL] = 150,
	},
};

static int pick_op(struct rng *r, int role)
{
	unsigned int sum = 0, x;

	for (int o = 0; o < NOP; o++)
		sum += weights[role][o];
	x = below(r, sum);
	for (int o = 0; o < NOP; o++) {
		if (x < weights[role][o])
			return o;
		x -= weights[role][o];
	}
	return O_STATUS;
}

static void run_op(struct thr *t, struct rng *r, int op)
{
	switch (op) {
	case O_STATUS:
		op_status(t, r, pick_dev(r), 0);
		break;
	case O_STATUS_PAIR:
		op_status(t, r, pick_dev(r), 1);
		break;
	case O_STATS:
		op_stats(t, r, pick_dev(r));
		break;
	case O_BLAME:
		op_blame(t, r, pick_dev(r));
		break;
	case O_BAD_IOCTL:
		op_bad_ioctl(t, r, pick_dev(r));
		break;
	case O_BADPTR:
		op_badptr(t, r, pick_dev(r));
		break;
	case O_RESET:
		op_simple(t, r, pick_dev(r), K_RESET);
		break;
	case O_STOP:
		op_simple(t, r, pick_dev(r), K_STOP);
		break;
	case O_START:
		op_simple(t, r, pick_dev(r), K_START);
		break;
	case O_CONFIG:
		op_config(t, r, pick_dev(r), 0);
		break;
	case O_CONFIG_START:
		op_config(t, r, t->role == R_USER ? &devs[0] : pick_dev(r), 1);
		break;
	case O_READ:
		op_read(t, r, pick_dev(r), RD_READ);
		break;
	case O_READV:
		op_read(t, r, pick_dev(r), RD_READV);
		break;
	case O_PREAD:
		op_read(t, r, pick_dev(r), RD_PREAD);
		break;
	case O_PREADV2:
		op_read(t, r, pick_dev(r), RD_PREADV2);
		break;
	case O_WRITE:
		op_write_mmap(t, r, pick_dev(r), K_WRITE);
		break;
	case O_MMAP:
		op_write_mmap(t, r, pick_dev(r), K_MMAP);
		break;
	case O_POLL:
		op_poll(t, r);
		break;
	case O_SELECT:
		op_select(t, r);
		break;
	case O_EPOLL:
		op_epoll(t, r);
		break;
	case O_USER_WAIT:
		op_user_wait(t, r, ndev > 1 && chance(r, 5) ? pick_edu(r) : &devs[0],
			     t->role == R_USER ? 1 + below(r, 30) : 1);
		break;
	case O_REOPEN:
		op_reopen(t, r, pick_dev(r));
		break;
	case O_FORK:
		op_fork(t, r);
		break;
	case O_HOTPLUG:
		op_hotplug(t, r);
		break;
	case O_FDINFO:
		op_fdinfo(t, r, pick_dev(r));
		break;
	case O_EDU_INFO:
		op_edu_info(t, r, pick_edu(r));
		break;
	case O_EDU_FACT:
		op_edu_factorial(t, r, pick_edu(r));
		break;
	case O_EDU_DMA:
		op_edu_dma(t, r, pick_edu(r));
		break;
	}
}

static int should_stop(void)
{
	return __atomic_load_n(&S->stop, __ATOMIC_RELAXED) != 0;
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	struct sigevent sev = { 0 };

	t->tid = syscall(SYS_gettid);
	t->b->pid = getpid();
	t->b->tid = t->tid;
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = t->tid;
	t->have_timer = timer_create(CLOCK_MONOTONIC, &sev, &t->timer) == 0;
	t->epfd = epoll_create1(0);
	if (t->role == R_USER)
		t->pinned = pin_to(t->home_cpu);
	while (!should_stop()) {
		struct rng r = { mix64(t->seed + 0x9e3779b97f4a7c15ULL * ++t->nops) };

		run_op(t, &r, pick_op(&r, t->role));
	}
	if (t->have_timer)
		timer_delete(t->timer);
	if (t->epfd >= 0)
		close(t->epfd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The watchdog                                                        */

static char task_state(int pid, int tid, char *wchan, size_t wlen)
{
	char path[96], buf[512], *p;
	ssize_t n;
	int f;

	wchan[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = open(path, O_RDONLY);
	if (f < 0)
		return '?';
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return '?';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
	f = open(path, O_RDONLY);
	if (f >= 0) {
		n = read(f, wchan, wlen - 1);
		wchan[n > 0 ? n : 0] = 0;
		close(f);
	}
	return p[2];
}

static void print_stack(int pid, int tid)
{
	char path[96], buf[4096], *line, *save;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	f = open(path, O_RDONLY);
	if (f < 0)
		return;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		out("#     %s", line);
}

static int in_page_fault(int pid, int tid)
{
	char path[96], buf[4096];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	f = open(path, O_RDONLY);
	if (f < 0)
		return 0;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, "page_fault") != NULL;
}

static void final_report(int hang);

static int wd_stop;

static void *watchdog(void *arg)
{
	struct { __u64 serial, since; int reported; } tr[NBUSY] = { { 0 } };
	struct sched_param sp = { .sched_priority = 99 };
	char wchan[64];

	(void)arg;
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!__atomic_load_n(&wd_stop, __ATOMIC_RELAXED)) {
		__u64 now;

		sleep_ms(250);
		now = now_ns();
		for (int k = 0; k < NBUSY; k++) {
			struct busy *b = &S->busy[k];
			__u64 serial, dur;
			char st;

			if (!__atomic_load_n(&b->active, __ATOMIC_ACQUIRE)) {
				tr[k].serial = 0;
				continue;
			}
			checked(C_HANG);
			serial = b->serial;
			dur = now - b->start_ns;
			if (b->start_ns > now)
				continue;
			if (dur > b->limit_ns) {
				st = task_state(b->pid, b->tid, wchan, sizeof(wchan));
				fail(NULL, C_HANG, "%s: blocked for %.1f s (limit %llu s), task %d "
				     "state %c wchan %s", b->desc, dur / 1e9,
				     (unsigned long long)(b->limit_ns / 1000000000ULL), b->tid, st,
				     wchan);
				print_stack(b->pid, b->tid);
				for (int j = 0; j < NBUSY; j++) {
					struct busy *o = &S->busy[j];

					if (j == k ||
					    !__atomic_load_n(&o->active, __ATOMIC_ACQUIRE))
						continue;
					st = task_state(o->pid, o->tid, wchan, sizeof(wchan));
					out("#   meanwhile %s: %.1f s, state %c wchan %s", o->desc,
					    (now - o->start_ns) / 1e9, st, wchan);
				}
				final_report(1);
				_exit(KSFT_FAIL);
			}
			if (!b->dcheck || dur < 500000000ULL)
				continue;
			checked(C_DSTATE);
			st = task_state(b->pid, b->tid, wchan, sizeof(wchan));
			if (st != 'D') {
				tr[k].serial = 0;
				continue;
			}
			/*
			 * Waiting for the mm lock in a page fault (a fork copies the
			 * address space under it) is not the driver's sleep.
			 */
			if (in_page_fault(b->pid, b->tid)) {
				tr[k].serial = 0;
				continue;
			}
			if (tr[k].serial != serial) {
				tr[k].serial = serial;
				tr[k].since = now;
				tr[k].reported = 0;
			} else if (now - tr[k].since >= DSTATE_NS && !tr[k].reported) {
				tr[k].reported = 1;
				fail(NULL, C_DSTATE, "%s: asleep uninterruptibly for %.1f s "
				     "(task %d, wchan %s)", b->desc, (now - tr[k].since) / 1e9,
				     b->tid, wchan);
				print_stack(b->pid, b->tid);
			}
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Targeted checks, after the fuzzing, single-threaded but for helpers */

static struct thr *M;	/* the main thread's */

static int t_open(struct dev *d, int flags)
{
	int fd = open(d->path, O_RDWR | flags);

	if (fd < 0)
		fail(NULL, C_TARGETED, "open %s: %s", d->path, strerror(errno));
	return fd;
}

static int t_config(int fd, uint32_t stages, __u64 cpus0, __u64 period, uint32_t ring)
{
	struct rtlat_config c = {
		.size = sizeof(c), .version = RTLAT_VERSION, .period_ns = period,
		.stages = stages, .priority = 90, .ring_records = ring,
	};

	c.cpus[0] = cpus0;
	raise_max_ring(&devs[0], ring);
	return ioctl(fd, RTLAT_IOC_CONFIG, &c);
}

static int t_status(int fd, struct rtlat_status *s)
{
	status_request(s);
	return ioctl(fd, RTLAT_IOC_STATUS, s);
}

#define IRQ_THREAD (1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_THREAD)
#define IRQ_THREAD_USER (IRQ_THREAD | 1 << RTLAT_STAGE_USER)

static __u64 fails_now(void)
{
	__u64 n = 0;

	for (int c = 0; c < NCHECK; c++)
		for (int d = 0; d < NDEVC; d++)
			n += ld(&S->fails[c][d]);
	return n;
}

/* A drained session: produced == delivered + dropped, exactly. */
static int t_drained(void)
{
	static unsigned char buf[256 * REC];
	__u64 before = fails_now(), records = 0, prod = 0;
	struct epoch e = { 0 };
	struct rtlat_status s;
	struct rtlat_stats st;
	ssize_t n;
	int fd = t_open(&devs[0], O_NONBLOCK);

	if (fd < 0)
		return 0;
	devs[0].last_gen = ~0ULL;
	if (t_config(fd, IRQ_THREAD, 0, 500000, 64) || ioctl(fd, RTLAT_IOC_START)) {
		fail(NULL, C_TARGETED, "drained: CONFIG/START: %s", strerror(errno));
		close(fd);
		return 0;
	}
	sleep_ms(300);
	ioctl(fd, RTLAT_IOC_STOP);
	M->devc = DC_RTLAT;
	snprintf(M->what, sizeof(M->what), "drained session: read");
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		check_records(M, &devs[0], buf, n, &e, 0, 0);
		records += n / REC;
	}
	if (n < 0)
		fail(NULL, C_TARGETED, "drained: read after STOP: %s, not 0", strerror(errno));
	snprintf(M->what, sizeof(M->what), "drained session: STATUS");
	if (t_status(fd, &s) == 0) {
		check_status(M, &devs[0], &s);
		if (s.produced != s.delivered + s.dropped || s.delivered != records ||
		    !s.produced)
			fail(NULL, C_TARGETED, "drained: produced %llu, delivered %llu + dropped "
			     "%llu, %llu records read", (unsigned long long)s.produced,
			     (unsigned long long)s.delivered, (unsigned long long)s.dropped,
			     (unsigned long long)records);
		for (int c = 0; c < nr_cpu_ids_ && c < RTLAT_MAX_CPUS; c++) {
			if (!has_bit(s.cpus, c))
				continue;
			memset(&st, 0, sizeof(st));
			st.size = sizeof(st);
			st.version = RTLAT_VERSION;
			st.cpu = c;
			st.stage = RTLAT_STAGE_THREAD;
			if (ioctl(fd, RTLAT_IOC_STATS, &st)) {
				fail(NULL, C_TARGETED, "drained: STATS cpu %d: %s", c,
				     strerror(errno));
				continue;
			}
			prod += st.produced;
			if (st.produced != st.delivered + st.dropped || st.count != st.produced)
				fail(NULL, C_TARGETED, "drained: cpu %d: produced %llu delivered "
				     "%llu dropped %llu count %llu", c,
				     (unsigned long long)st.produced,
				     (unsigned long long)st.delivered,
				     (unsigned long long)st.dropped, (unsigned long long)st.count);
		}
		if (prod != s.produced)
			fail(NULL, C_TARGETED, "drained: the CPUs produced %llu, the status says "
			     "%llu", (unsigned long long)prod, (unsigned long long)s.produced);
	} else {
		fail(NULL, C_TARGETED, "drained: STATUS: %s", strerror(errno));
	}
	close(fd);
	return fails_now() == before;
}

/* A refused START leaves the session's start time alone. */
static int t_started_ns(void)
{
	struct rtlat_status a, b, c;
	int fd = t_open(&devs[0], 0), ok = 1;

	if (fd < 0)
		return 0;
	if (t_config(fd, 1 << RTLAT_STAGE_IRQ, 1, 1000000, 16) || ioctl(fd, RTLAT_IOC_START) ||
	    t_status(fd, &a)) {
		fail(NULL, C_TARGETED, "started_ns: CONFIG/START/STATUS: %s", strerror(errno));
		close(fd);
		return 0;
	}
	sleep_ms(20);
	if (ioctl(fd, RTLAT_IOC_START) == 0 || errno != EBUSY)
		fail(NULL, C_TARGETED, "started_ns: second START: %s, not EBUSY", strerror(errno)),
			ok = 0;
	t_status(fd, &b);
	ioctl(fd, RTLAT_IOC_STOP);
	sleep_ms(20);
	ioctl(fd, RTLAT_IOC_START);
	t_status(fd, &c);
	if (b.started_ns != a.started_ns || c.started_ns != a.started_ns) {
		fail(NULL, C_TARGETED, "started_ns: %llu after START, %llu after a refused START "
		     "while running, %llu after one when stopped", (unsigned long long)a.started_ns,
		     (unsigned long long)b.started_ns, (unsigned long long)c.started_ns);
		ok = 0;
	}
	close(fd);
	return ok;
}

struct blocker {
	int fd, mode;		/* 0: read, 1: poll */
	unsigned int ms;
	long ret;
	int err;
	short revents;
	__u64 dur;
};

static void *blocker_fn(void *arg)
{
	struct blocker *b = arg;
	struct sigevent sev = { 0 };
	timer_t tm;
	int have;
	__u64 t0;

	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = syscall(SYS_gettid);
	have = timer_create(CLOCK_MONOTONIC, &sev, &tm) == 0;
	t0 = now_ns();
	if (b->mode == 0) {
		static unsigned char buf[64 * REC];
		struct itimerspec its = {
			.it_interval = { 0, 20000000 },
			.it_value = { b->ms / 1000, (b->ms % 1000) * 1000000L },
		};

		if (have)
			timer_settime(tm, 0, &its, NULL);
		b->ret = read(b->fd, buf, sizeof(buf));
	} else {
		struct pollfd p = { .fd = b->fd, .events = POLLIN };

		b->ret = poll(&p, 1, b->ms);
		b->revents = p.revents;
	}
	b->err = errno;
	b->dur = now_ns() - t0;
	if (have)
		timer_delete(tm);
	return NULL;
}

/*
 * Two readers on one file, the first blocked (the session is configured,
 * not started): the second's read() must be interruptible and return
 * soon after its signal.
 */
static int t_second_reader(struct dev *d)
{
	struct blocker a = { .mode = 0, .ms = 3000 * SLOW }, b = { .mode = 0, .ms = 200 };
	pthread_t ta, tb;
	int fd = t_open(d, 0), ok = 1;

	if (fd < 0)
		return 0;
	if (t_config(fd, IRQ_THREAD, 0, 1000000, 16)) {
		fail(NULL, C_TARGETED, "second reader: CONFIG: %s", strerror(errno));
		close(fd);
		return 0;
	}
	a.fd = fd;
	b.fd = fd;
	pthread_create(&ta, NULL, blocker_fn, &a);
	sleep_ms(300);
	pthread_create(&tb, NULL, blocker_fn, &b);
	pthread_join(tb, NULL);
	pthread_join(ta, NULL);
	if (b.ret != -1 || b.err != EINTR || b.dur > 1.5e9 * SLOW) {
		fail(NULL, C_TARGETED, "%s: a second reader of a file whose first reader blocks: "
		     "read() = %ld (%s) after %.2f s, its signal came after 0.2 s (the first "
		     "returned %ld after %.2f s)", d->name, b.ret, ename(b.ret < 0 ? b.err : 0),
		     b.dur / 1e9, a.ret, a.dur / 1e9);
		ok = 0;
	}
	close(fd);
	return ok;
}

/* poll() on one file while the owner (another file) closes: woken, HUP. */
static int t_poll_owner_close(struct dev *d)
{
	struct blocker p = { .mode = 1, .ms = 3000 * SLOW };
	int owner = t_open(d, 0), ok = 1;
	pthread_t tp;

	if (owner < 0)
		return 0;
	p.fd = t_open(d, O_NONBLOCK);
	if (p.fd < 0 || t_config(owner, IRQ_THREAD, 0, 1000000, 16)) {
		fail(NULL, C_TARGETED, "poll/close: open/CONFIG: %s", strerror(errno));
		close(owner);
		if (p.fd >= 0)
			close(p.fd);
		return 0;
	}
	pthread_create(&tp, NULL, blocker_fn, &p);
	sleep_ms(300);
	close(owner);
	pthread_join(tp, NULL);
	if (p.ret != 1 || !(p.revents & POLLHUP) || p.dur > 2e9 * SLOW) {
		fail(NULL, C_TARGETED, "%s: poll() while the owner closed: %ld revents %#x after "
		     "%.2f s (closed after 0.3 s)", d->name, p.ret, p.revents, p.dur / 1e9);
		ok = 0;
	}
	close(p.fd);
	return ok;
}

struct uwaiter {
	int fd, n, done;
};

static void *uwaiter_fn(void *arg)
{
	struct uwaiter *w = arg;
	struct rtlat_record r;

	if (pin_to(0) != 0)
		return NULL;
	for (int i = 0; i < w->n; i++)
		if (ioctl(w->fd, RTLAT_IOC_USER_WAIT, &r) == 0)
			w->done++;
	return NULL;
}

/* A user-stage session goes on sampling after its waiter left. */
static int t_user_left(void)
{
	struct uwaiter w = { .n = 5 };
	struct rtlat_status a, b;
	int fd = t_open(&devs[0], O_NONBLOCK), ok = 1;
	pthread_t tw;

	if (fd < 0)
		return 0;
	w.fd = fd;
	if (t_config(fd, IRQ_THREAD_USER, 1, 1000000, 4096) || ioctl(fd, RTLAT_IOC_START)) {
		fail(NULL, C_TARGETED, "user stage: CONFIG/START: %s", strerror(errno));
		close(fd);
		return 0;
	}
	pthread_create(&tw, NULL, uwaiter_fn, &w);
	pthread_join(tw, NULL);
	sleep_ms(200);
	t_status(fd, &a);
	sleep_ms(500 * SLOW);
	t_status(fd, &b);
	if (w.done != w.n || a.state != RTLAT_STATE_RUNNING || b.produced < a.produced + 10) {
		fail(NULL, C_TARGETED, "user stage: %d of %d waits returned; after the waiter left,"
		     "state %u and %llu records in %.1f s at 1 kHz", w.done, w.n, a.state,
		     (unsigned long long)(b.produced - a.produced), 0.5 * SLOW);
		ok = 0;
	}
	close(fd);
	return ok;
}

/* ring_records = RTLAT_RING_MAX is valid: it works or fails with ENOMEM. */
static int t_ring_max(void)
{
	int fd = t_open(&devs[0], 0), ok = 1, r;
	__u64 t0 = now_ns();

	if (fd < 0)
		return 0;
	r = t_config(fd, IRQ_THREAD, 1, 1000000, RTLAT_RING_MAX);
	if (r && errno != ENOMEM) {
		fail(NULL, C_TARGETED, "ring_records RTLAT_RING_MAX: %s", strerror(errno));
		ok = 0;
	} else if (r == 0) {
		ioctl(fd, RTLAT_IOC_START);
		sleep_ms(50);
		ioctl(fd, RTLAT_IOC_STOP);
	}
	out("# ring_records RTLAT_RING_MAX: %s in %.2f s", r ? strerror(errno) : "configured",
	    (now_ns() - t0) / 1e9);
	close(fd);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Setup, report, main                                                 */

enum {
	T_FUZZ_RTLAT, T_FUZZ_RTEDU, T_INVARIANTS, T_NO_HANG, T_CALLS, T_DRAINED, T_STARTED,
	T_SECOND_READER, T_POLL_CLOSE, T_USER_LEFT, T_RING_MAX, NTEST
};

static const char *const test_name[NTEST] = {
	"fuzz rtlat: errnos as documented",
	"fuzz rtedu: errnos as documented",
	"invariants: records, status, statistics, poll masks, rtedu results",
	"no hang, no uninterruptible sleep, signals answered",
	"call target reached",
	"drained session: produced == delivered + dropped",
	"refused START keeps the session's started_ns",
	"second reader of a file is interruptible while the first blocks",
	"poll() woken with POLLHUP when the owner closes",
	"user-stage session samples after its waiter left",
	"ring_records = RTLAT_RING_MAX: configured or ENOMEM",
};

static int targeted[NTEST];	/* 1 pass, 0 fail, -1 not run */

/* Targeted check k's result r, counted in the totals' "targeted" class. */
static int targeted_counted(int k, int r)
{
	if (r >= 0)
		checked(C_TARGETED);
	if (r == 0)
		fail(NULL, C_TARGETED, "targeted check failed: %s", test_name[k]);
	return r;
}
static __u64 t_elapsed_ns;
static int stopped_on_cap;

static __u64 sum_fails(int c0, int c1, int devc)
{
	__u64 n = 0;

	for (int c = c0; c <= c1; c++)
		for (int d = 0; d < NDEVC; d++)
			if (devc < 0 || d == devc)
				n += ld(&S->fails[c][d]);
	return n;
}

static void print_counts(void)
{
	for (int k = 0; k < NKIND; k++) {
		for (int dc = 0; dc < NDEVC; dc++) {
			char line[1024];
			__u64 total = 0;
			int n;

			for (int e = 0; e < NERR; e++)
				total += ld(&S->cnt[k][dc][e]);
			if (!total)
				continue;
			n = snprintf(line, sizeof(line),
				     "# %-14s %-5s %8llu  in %7.2f s, max %6.3f s ", kind_name[k],
				     devc_name[dc], (unsigned long long)total,
				     ld(&S->sumdur[k][dc]) / 1e9, ld(&S->maxdur[k][dc]) / 1e9);
			for (int e = 0; e < NERR && n < (int)sizeof(line) - 40; e++) {
				__u64 c = ld(&S->cnt[k][dc][e]);

				if (c)
					n += snprintf(line + n, sizeof(line) - n, " %s %llu",
						      e == NERR - 1 ? "other" : ename(e),
						      (unsigned long long)c);
			}
			out("%s", line);
		}
	}
	for (int c = 0; c < NCHECK; c++)
		for (int k = 0; k < NFAILKIND; k++)
			if (ld(&S->sig[k].count) && S->sig[k].check == c)
				out("# %6llu x %s", (unsigned long long)ld(&S->sig[k].count),
				    S->sig[k].first);
	out("# %llu records read, %llu sessions started, configs %llu valid %llu invalid, "
	    "%llu forks (%llu children killed by their alarm), %llu cpu1 hotplug steps",
	    (unsigned long long)ld(&S->records), (unsigned long long)ld(&S->sessions_started),
	    (unsigned long long)ld(&S->cfg_valid), (unsigned long long)ld(&S->cfg_invalid),
	    (unsigned long long)ld(&S->forks), (unsigned long long)ld(&S->children_killed),
	    (unsigned long long)ld(&S->hotplugs));
}

/*
 * The totals line, one line for whoever adds runs up: the seed that replays
 * the run, its calls, and per check class what was checked and what failed
 * (the errno check is made once per call, the record checks once per
 * record read, ...).
 */
static void print_totals(__u64 calls, double secs, int hang)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "# totals: seed %#llx, %llu calls in %.1f s "
			 "(%.0f/s)%s; per check class, failed/checked:",
			 (unsigned long long)opt.seed, (unsigned long long)calls, secs,
			 secs > 0 ? calls / secs : 0.0,
			 hang ? ", stopped by a hang" : stopped_on_cap ? ", stopped on the "
			 "time cap short of the call target" : "");

	for (int c = 0; c < NCHECK && n < (int)sizeof(line) - 60; c++)
		n += snprintf(line + n, sizeof(line) - n, "%s %s %llu/%llu", c ? "," : "",
			      check_name[c], (unsigned long long)sum_fails(c, c, -1),
			      (unsigned long long)ld(&S->checks[c]));
	out("%s", line);
}

static void final_report(int hang)
{
	__u64 calls = ld(&S->calls);
	double secs = t_elapsed_ns ? t_elapsed_ns / 1e9 : (now_ns() - S->start_ns) / 1e9;
	int res[NTEST];

	if (__atomic_exchange_n(&S->reported, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_lock(&out_lock);
	print_counts();
	print_totals(calls, secs, hang);
	res[T_FUZZ_RTLAT] = sum_fails(C_ERRNO, C_EXPECT, DC_RTLAT) == 0 ? KSFT_PASS : KSFT_FAIL;
	res[T_FUZZ_RTEDU] = !nedu ? KSFT_SKIP :
			    sum_fails(C_ERRNO, C_EXPECT, DC_RTEDU) == 0 ? KSFT_PASS : KSFT_FAIL;
	res[T_INVARIANTS] = sum_fails(C_RECORD, C_EDU, -1) + sum_fails(C_ERRNO, C_EXPECT, DC_NONE)
			    == 0 ? KSFT_PASS : KSFT_FAIL;
	res[T_NO_HANG] = sum_fails(C_SIGNAL, C_HANG, -1) == 0 ? KSFT_PASS : KSFT_FAIL;
	/* The cap came first: the run made fewer calls than it must. */
	res[T_CALLS] = calls >= opt.calls ? KSFT_PASS : KSFT_FAIL;
	for (int k = T_DRAINED; k < NTEST; k++)
		res[k] = targeted[k] < 0 ? KSFT_SKIP : targeted[k] ? KSFT_PASS : KSFT_FAIL;
	fflush(stdout);
	for (int k = 0; k < NTEST; k++) {
		if (res[k] == KSFT_SKIP)
			/* "ok N NAME # SKIP why": the name where TAP readers look. */
			ksft_test_result_code(KSFT_SKIP, test_name[k], "%s\n",
					      k == T_FUZZ_RTEDU ? "no /dev/rtedu<N>" :
					      hang ? "not run after a hang" : "");
		else if (res[k] == KSFT_PASS)
			ksft_test_result_pass("%s\n", test_name[k]);
		else
			ksft_test_result_fail("%s\n", test_name[k]);
	}
	ksft_print_cnts();
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static int module_loaded(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/* The rtedu.* parameters of the kernel command line, as modprobe would pass them. */
static void cmdline_params(char *out_, size_t len)
{
	char buf[4096], *tok, *save;
	FILE *f = fopen("/proc/cmdline", "r");

	out_[0] = 0;
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f))
		for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			if (!strncmp(tok, "rtedu.", 6) && strlen(out_) + strlen(tok) + 2 < len) {
				strcat(out_, " ");
				strcat(out_, tok + 6);
			}
	fclose(f);
}

static int load_module(const char *name)
{
	char cmd[1024], params[512] = "";
	const char *dir = getenv("RTRS_MODDIR");

	if (module_loaded(name))
		return 0;
	if (!strcmp(name, "rtedu"))
		cmdline_params(params, sizeof(params));
	if (dir)
		snprintf(cmd, sizeof(cmd), "insmod %s/%s.ko%s 2>/dev/null", dir, name, params);
	else
		snprintf(cmd, sizeof(cmd), "insmod /lib/modules/$(uname -r)/extra/%s.ko%s "
			 "2>/dev/null", name, params);
	return system(cmd) == 0 && module_loaded(name);
}

/* The CPUs below RTLAT_MAX_CPUS of a list such as "0-3,5" in `path`. */
static void read_cpu_list(const char *path, __u64 *m)
{
	char buf[4096], *p = buf;
	FILE *f = fopen(path, "r");

	memset(m, 0, RTLAT_CPU_WORDS * 8);
	if (!f)
		return;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	while (*p) {
		char *e;
		long lo = strtol(p, &e, 10), hi;

		if (e == p)
			break;
		hi = lo;
		p = e;
		if (*p == '-') {
			hi = strtol(p + 1, &e, 10);
			p = e;
		}
		for (long c = lo; c <= hi && c < RTLAT_MAX_CPUS; c++)
			m[c / 64] |= 1ULL << (c % 64);
		while (*p == ',' || *p == '\n')
			p++;
	}
}

static int count_cpus(const char *path)
{
	char buf[256], *p = buf;
	int max = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	/* "0-3,5": the highest CPU + 1. */
	while (*p) {
		char *e;
		long v = strtol(p, &e, 10);

		if (e == p)
			break;
		if (v > max)
			max = v;
		p = e;
		while (*p == '-' || *p == ',' || *p == '\n')
			p++;
	}
	return max + 1;
}

static void add_dev(const char *path, const char *name, int edu, int nslot)
{
	struct dev *d = &devs[ndev];

	memset(d, 0, sizeof(*d));
	d->idx = ndev;
	d->edu = edu;
	snprintf(d->path, sizeof(d->path), "%s", path);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->nslot = nslot;
	d->owner = -1;
	d->last_gen = ~0ULL;
	pthread_mutex_init(&d->m, NULL);
	pthread_mutex_init(&d->rm, NULL);
	for (int i = 0; i < nslot; i++) {
		pthread_rwlock_init(&d->s[i].lk, NULL);
		/* Both kinds from the start: files 0 and 2 block, 1 and 3 do not. */
		d->s[i].flags = O_RDWR | (i & 1 ? O_NONBLOCK : 0);
		d->s[i].fd = open(path, d->s[i].flags);
	}
	if (edu && d->s[0].fd >= 0) {
		struct rtedu_info in = { .size = sizeof(in), .version = RTEDU_VERSION };

		if (ioctl(d->s[0].fd, RTEDU_IOC_INFO, &in) == 0) {
			d->instance = in.instance;
			d->dma_bits = in.dma_bits;
		}
	}
	ndev++;
	if (edu)
		nedu++;
}

static void setup_thread_memory(struct thr *t)
{
	struct rtlat_config c = {
		.size = sizeof(c), .version = RTLAT_VERSION, .period_ns = 1000000,
		.stages = IRQ_THREAD, .priority = 95, .ring_records = 64,
	};

	t->g = mmap(NULL, 4 * GSPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t->big = mmap(NULL, BIG_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	t->buckets = calloc(RTLAT_HIST_BUCKETS + 64, 8);
	if (t->g == MAP_FAILED || t->big == MAP_FAILED || !t->buckets)
		ksft_exit_fail_msg("out of memory\n");
	/* The read-only region holds a valid config. */
	memcpy(t->g + 2 * GSPAN, &c, sizeof(c));
	mprotect(t->g + GSPAN, GSPAN, PROT_NONE);
	mprotect(t->g + 2 * GSPAN, GSPAN, PROT_READ);
	mprotect(t->g + 3 * GSPAN, GSPAN, PROT_NONE);
}

/* The threads that used the most CPU since the last call (ticks), for the progress lines. */
static int top_tasks(char *buf, size_t len)
{
	static struct { int tid; unsigned long long t; } last[2048], now_[2048];
	static int nlast;
	struct { int tid; unsigned long long d; char comm[20]; } top[4] = { { 0 } };
	DIR *proc = opendir("/proc"), *task;
	struct dirent *p, *q;
	int nnow = 0, n = 0;

	if (!proc)
		return 0;
	while ((p = readdir(proc)) && nnow < 2048) {
		char path[300];

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		task = opendir(path);
		if (!task)
			continue;
		while ((q = readdir(task)) && nnow < 2048) {
			char st[512], comm[20] = "", *e;
			unsigned long long ut = 0, stt = 0, d;
			int f, tid = atoi(q->d_name), k;
			ssize_t m;

			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%d/stat", p->d_name, tid);
			f = open(path, O_RDONLY);
			if (f < 0)
				continue;
			m = read(f, st, sizeof(st) - 1);
			close(f);
			if (m <= 0)
				continue;
			st[m] = 0;
			e = strrchr(st, ')');
			if (!e)
				continue;
			{
				char *b = strchr(st, '(');
				size_t l = b ? (size_t)(e - b - 1) : 0;

				if (l >= sizeof(comm))
					l = sizeof(comm) - 1;
				if (b)
					memcpy(comm, b + 1, l);
				comm[l] = 0;
			}
			/* Fields after the comm: state is 3, utime 14, stime 15. */
			if (sscanf(e + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				   &ut, &stt) != 2)
				continue;
			now_[nnow].tid = tid;
			now_[nnow].t = ut + stt;
			d = ut + stt;
			for (k = 0; k < nlast; k++)
				if (last[k].tid == tid) {
					d -= last[k].t;
					break;
				}
			nnow++;
			for (k = 0; k < 4; k++)
				if (d > top[k].d) {
					memmove(&top[k + 1], &top[k], (3 - k) * sizeof(top[0]));
					top[k].tid = tid;
					top[k].d = d;
					memcpy(top[k].comm, comm, sizeof(comm));
					break;
				}
		}
		closedir(task);
	}
	closedir(proc);
	memcpy(last, now_, nnow * sizeof(now_[0]));
	nlast = nnow;
	n = snprintf(buf, len, "; top");
	for (int k = 0; k < 4 && top[k].d && n < (int)len - 1; k++)
		n += snprintf(buf + n, len - n, " %s/%d %llu", top[k].comm, top[k].tid, top[k].d);
	return n < (int)len ? n : (int)len - 1;
}

/*
 * What the guest did since the last call: the CPU time split (from
 * /proc/stat) and each device's session state, for the progress lines.
 */
static void diagnostics(char *buf, size_t len)
{
	static unsigned long long last[8];
	unsigned long long v[8] = { 0 }, d[8], sum = 0;
	int n = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
			memset(v, 0, sizeof(v));
		fclose(f);
	}
	for (int i = 0; i < 8; i++) {
		d[i] = v[i] - last[i];
		sum += d[i];
		last[i] = v[i];
	}
	if (!sum)
		sum = 1;
	/* user nice system idle iowait irq softirq steal */
	n = snprintf(buf, len, "cpu user %llu%% sys %llu%% irq %llu%% softirq %llu%% idle %llu%%",
		     (d[0] + d[1]) * 100 / sum, d[2] * 100 / sum, d[5] * 100 / sum,
		     d[6] * 100 / sum, (d[3] + d[4]) * 100 / sum);
	n += top_tasks(buf + n, len - n);
	for (int k = 0; k < ndev && n < (int)len - 16; k++) {
		struct rtlat_status st;
		int fd = open(devs[k].path, O_RDONLY | O_NONBLOCK);

		status_request(&st);
		st.state = 0;
		if (fd >= 0) {
			if (ioctl(fd, RTLAT_IOC_STATUS, &st))
				st.state = 9;
			close(fd);
		}
		n += snprintf(buf + n, len - n, "; %s %c", devs[k].name,
			      "-CRS?????"[st.state % 10]);
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-s SEED] [-n CALLS] [-t SECONDS] [-j THREADS] [-v]\n"
		"  -s  seed (RTRS_FUZZ_SEED); default: from the clock, printed\n"
		"  -n  calls to make (RTRS_FUZZ_CALLS); default 30000 on x86_64, 15000 else\n"
		"  -t  wall-time cap in seconds (RTRS_FUZZ_SECONDS); default 300\n"
		"  -j  threads (1..%d); default 8\n"
		"  -F  CHECK: fake one failure of that check (RTRS_FUZZ_INJECT), to see it fail:\n"
		"      errno, expected result, record, seq order, record cpu, read length,\n"
		"      status, stats, poll mask, rtedu result, signal, D state, hang\n", argv0,
		MAX_THREADS);
	exit(KSFT_FAIL);
}

static void set_tracing_on(void)
{
	int f = open("/sys/kernel/tracing/tracing_on", O_WRONLY);

	if (f >= 0) {
		if (write(f, "1", 1) < 0)
			out("# tracing_on: %s", strerror(errno));
		close(f);
	}
}

int main(int argc, char **argv)
{
	struct utsname u;
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t wd;
	const char *env;
	__u64 t0, target_reached_ns = 0, next_report = 15000000000ULL, last_report = 0;
	__u64 last_calls = 0;
	int c;

	uname(&u);
	opt.calls = strcmp(u.machine, "x86_64") ? 15000 : 30000;
	opt.seconds = 300;
	opt.threads = 8;
	opt.seed = now_ns() ^ ((__u64)getpid() << 32);
	env = getenv("RTRS_FUZZ_SEED");
	if (env)
		opt.seed = strtoull(env, NULL, 0);
	env = getenv("RTRS_FUZZ_CALLS");
	if (env)
		opt.calls = strtoull(env, NULL, 0);
	env = getenv("RTRS_FUZZ_SECONDS");
	if (env)
		opt.seconds = strtoul(env, NULL, 0);
	env = getenv("RTRS_FUZZ_INJECT");
	if (env)
		for (int k = 0; k < NCHECK; k++)
			if (!strcmp(env, check_name[k]))
				opt.inject = k + 1;
	while ((c = getopt(argc, argv, "s:n:t:j:F:vh")) != -1) {
		switch (c) {
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			opt.calls = strtoull(optarg, NULL, 0);
			break;
		case 't':
			opt.seconds = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			opt.threads = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			opt.verbose = 1;
			break;
		case 'F':
			for (int k = 0; k < NCHECK; k++)
				if (!strcmp(optarg, check_name[k]))
					opt.inject = k + 1;
			if (!opt.inject)
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (opt.threads < 1 || opt.threads > MAX_THREADS || !opt.calls || !opt.seconds)
		usage(argv[0]);

	ksft_print_header();
	if (geteuid() == 0) {
		loaded_rtlat = load_module("rtlat");
		loaded_rtedu = load_module("rtedu");
		/* devtmpfs creates the nodes asynchronously. */
		for (int i = 0; i < 100 && module_loaded("rtedu") && access("/dev/rtedu0", F_OK);
		     i++)
			usleep(20000);
	}
	if (access("/dev/rtlat", F_OK))
		ksft_exit_skip("no /dev/rtlat (rtlat.ko not loaded)\n");
	if (geteuid() != 0)
		ksft_exit_skip("must be run as root\n");
	privileged = 1;

	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(S, 0, sizeof(*S));
	nr_cpu_ids_ = count_cpus("/sys/devices/system/cpu/possible");
	if (nr_cpu_ids_ < 1)
		nr_cpu_ids_ = sysconf(_SC_NPROCESSORS_CONF);
	ncpu_online0 = sysconf(_SC_NPROCESSORS_ONLN);
	read_cpu_list("/sys/devices/system/cpu/online", online0);
	can_hotplug = nr_cpu_ids_ >= 2 && access(hp_path, W_OK) == 0;
	if (can_hotplug) {
		char v = '1';
		int f = open(hp_path, O_RDONLY);

		if (f >= 0) {
			if (read(f, &v, 1) != 1)
				v = '1';
			close(f);
		}
		cpu1_online = v == '1';
	}

	add_dev("/dev/rtlat", "rtlat", 0, 4);
	for (int n = 0; n < 8 && ndev < MAX_DEVS; n++) {
		char path[24], name[12];

		snprintf(path, sizeof(path), "/dev/rtedu%d", n);
		snprintf(name, sizeof(name), "rtedu%d", n);
		if (access(path, F_OK) == 0)
			add_dev(path, name, 1, 3);
	}
	for (int i = 0; i < devs[0].nslot; i++)
		if (devs[0].s[i].fd < 0)
			ksft_exit_fail_msg("open /dev/rtlat: %s\n", strerror(errno));

	if (opt.inject)
		ksft_print_msg("injecting one failure of the check \"%s\"\n",
			       check_name[opt.inject - 1]);
	ksft_print_msg("seed %#llx (replay: RTRS_FUZZ_SEED=%#llx or -s %#llx), %u threads, "
		       "target %llu calls, cap %u s, %s\n", (unsigned long long)opt.seed,
		       (unsigned long long)opt.seed, (unsigned long long)opt.seed, opt.threads,
		       (unsigned long long)opt.calls, opt.seconds, u.machine);
	ksft_print_msg("devices: /dev/rtlat%s%s; %d CPUs (%d online); cpu1 hotplug %s\n",
		       nedu ? " and " : "", nedu ? "/dev/rtedu<N>" : " (no rtedu)", nr_cpu_ids_,
		       ncpu_online0, can_hotplug ? "yes" : "no");
	for (int k = 1; k < ndev; k++)
		ksft_print_msg("%s: instance %u, dma_bits %u\n", devs[k].path, devs[k].instance,
			       devs[k].dma_bits);
	{
		/* How fast this guest is now (the host may be shared): compare runs with it. */
		struct rtlat_status st;
		__u64 c0 = now_ns(), c1, c2;

		for (int i = 0; i < 2000; i++)
			syscall(SYS_getppid);
		c1 = now_ns();
		status_request(&st);
		for (int i = 0; i < 2000; i++)
			ioctl(devs[0].s[0].fd, RTLAT_IOC_STATUS, &st);
		c2 = now_ns();
		/* An idle host runs getppid() in the x86_64 debug guest in about 3 us. */
		slowness = (c1 - c0) / 2e3 / 1e3 / 4.0;
		if (slowness < 1.0)
			slowness = 1.0;
		ksft_print_msg("calibration: getppid %.1f us, STATUS %.1f us (slowness %.1f)\n",
			       (c1 - c0) / 2e3 / 1e3, (c2 - c1) / 2e3 / 1e3, slowness);
	}
	ksft_set_plan(NTEST);
	fflush(stdout);

	/* No SA_RESTART: a signal ends a blocking call with EINTR. */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (int k = 0; k < NTEST; k++)
		targeted[k] = -1;
	S->start_ns = now_ns();
	M = &thr[MAX_THREADS];
	M->id = MAX_THREADS;
	M->b = &S->busy[MAIN_BUSY];
	M->b->pid = getpid();
	M->b->tid = syscall(SYS_gettid);
	M->priv = privileged;
	M->seed = opt.seed;
	pthread_create(&wd, NULL, watchdog, NULL);

	for (unsigned int i = 0; i < opt.threads; i++) {
		struct thr *t = &thr[i];

		t->id = i;
		t->role = role_of[i % (ARRAY_SIZE(role_of))];
		t->seed = mix64(opt.seed ^ (0x632be59bd9b4e019ULL * (i + 1)));
		t->priv = privileged;
		t->b = &S->busy[i];
		t->home_cpu = i % (ncpu_online0 > 0 ? ncpu_online0 : 1);
		t->pinned = -1;
		setup_thread_memory(t);
	}
	t0 = now_ns();
	for (unsigned int i = 0; i < opt.threads; i++)
		pthread_create(&thr[i].pt, NULL, worker, &thr[i]);
	for (;;) {
		__u64 calls = ld(&S->calls), el = now_ns() - t0;

		if (calls >= opt.calls) {
			target_reached_ns = el;
			break;
		}
		if (el >= opt.seconds * 1000000000ULL) {
			stopped_on_cap = 1;
			break;
		}
		sleep_ms(100);
		if (el >= next_report) {
			char diag[512];

			diagnostics(diag, sizeof(diag));
			out("# %3llu s: %llu calls, %.0f/s; %s",
			    (unsigned long long)(el / 1000000000ULL), (unsigned long long)calls,
			    (calls - last_calls) * 1e9 / (el - last_report), diag);
			last_calls = calls;
			last_report = el;
			next_report = el + (opt.verbose ? 5 : 15) * 1000000000ULL;
		}
	}
	__atomic_store_n(&S->stop, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < opt.threads; i++)
		pthread_join(thr[i].pt, NULL);
	t_elapsed_ns = target_reached_ns ? target_reached_ns : now_ns() - t0;

	/* Back to a clean state: every file closed, CPU 1 online, tracing on. */
	for (int k = 0; k < ndev; k++)
		for (int i = 0; i < devs[k].nslot; i++)
			if (devs[k].s[i].fd >= 0) {
				close(devs[k].s[i].fd);
				devs[k].s[i].fd = -1;
			}
	if (can_hotplug && !cpu1_online) {
		int f = open(hp_path, O_WRONLY);

		if (f < 0 || write(f, "1", 1) != 1)
			fail(NULL, C_TARGETED, "cpu1 back online: %s", strerror(errno));
		else
			cpu1_online = 1;
		if (f >= 0)
			close(f);
	}
	set_tracing_on();

	snprintf(M->b->desc, sizeof(M->b->desc), "main: targeted checks");
	M->b->start_ns = now_ns();
	M->b->limit_ns = 60e9 * SLOW;
	__atomic_store_n(&M->b->active, 1, __ATOMIC_RELEASE);
	targeted[T_DRAINED] = targeted_counted(T_DRAINED, t_drained());
	targeted[T_STARTED] = targeted_counted(T_STARTED, t_started_ns());
	targeted[T_SECOND_READER] = targeted_counted(T_SECOND_READER, t_second_reader(&devs[0]));
	targeted[T_POLL_CLOSE] = targeted_counted(T_POLL_CLOSE, t_poll_owner_close(&devs[0]));
	targeted[T_USER_LEFT] = targeted_counted(T_USER_LEFT, t_user_left());
	targeted[T_RING_MAX] = targeted_counted(T_RING_MAX, t_ring_max());
	__atomic_store_n(&M->b->active, 0, __ATOMIC_RELEASE);
	set_tracing_on();

	__atomic_store_n(&wd_stop, 1, __ATOMIC_RELAXED);
	pthread_join(wd, NULL);
	final_report(0);
	if (loaded_rtedu)
		if (system("rmmod rtedu 2>/dev/null"))
			ksft_print_msg("rmmod rtedu failed\n");
	if (loaded_rtlat)
		if (system("rmmod rtlat 2>/dev/null"))
			ksft_print_msg("rmmod rtlat failed\n");
	exit(ksft_get_fail_cnt() ? KSFT_FAIL : KSFT_PASS);
}
