// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: the shared state, options, random numbers, devices,
 * threads, failures and call accounting, bad pointers, slots and the
 * writers' bookkeeping.
 */
#include "fuzz.h"

/* How much slower than the x86_64 guest on an idle host this one runs. */
double slowness = 1.0;

const char *const kind_name[NKIND] = {
	"open", "close", "fcntl", "CONFIG", "START", "STOP", "RESET", "STATUS",
	"STATS", "USER_WAIT", "INFO", "FACTORIAL", "DMA", "bad ioctl", "read",
	"read nonblock", "readv", "pread", "preadv2 NOWAIT", "write", "mmap", "poll",
	"select", "epoll_ctl", "epoll_wait", "fdinfo", "fork", "cpu1 hotplug", "BLAME",
};
const char *const devc_name[NDEVC] = { "rtlat", "rtedu", "-" };

const char *const check_name[NCHECK] = {
	"errno", "expected result", "record", "seq order", "record cpu",
	"read length", "status", "stats", "poll mask", "rtedu result",
	"cleanup", "signal", "D state", "hang",
};

struct shared *S;
struct opts opt;

/*
 * -F CHECK: corrupt, once, what that check sees (or fake the condition), to
 * show that it fails the run. The names are check_name[]'s.
 */
static int inject_done;

int inject(int check)
{
	return opt.inject == check + 1 && !__atomic_exchange_n(&inject_done, 1, __ATOMIC_ACQ_REL);
}

int nr_cpu_ids_;		/* possible CPUs: 0..nr_cpu_ids_-1 */
/* CPUs online at the start (below RTLAT_MAX_CPUS): all but CPU 1 stay so. */
__u64 online0[RTLAT_CPU_WORDS];
int ncpu_online0;	/* online at start */
int privileged;
const char *hp_path = "/sys/devices/system/cpu/cpu1/online";
int can_hotplug;
int cpu1_online = 1;	/* as far as we know; changed under hp_lock */
__u64 hp_gen;		/* odd while CPU 1 changes state */
pthread_mutex_t hp_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
int loaded_rtlat, loaded_rtedu;

__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

__u64 ld(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void inc(__u64 *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

/* One line to stdout in one write(): safe in threads and fork children. */
void __printf(1, 2) out(const char *fmt, ...)
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

const char *ename(int e)
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

__u64 mix64(__u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

__u64 rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

uint32_t below(struct rng *r, uint32_t n)
{
	return n ? rnd(r) % n : 0;
}

int chance(struct rng *r, unsigned int pct)
{
	return below(r, 1000) < pct * 10;
}

/* Per mille, for the rare things. */
int rare(struct rng *r, unsigned int pm)
{
	return below(r, 1000) < pm;
}

__u64 pick_of(struct rng *r, const __u64 *v, size_t n)
{
	return v[below(r, n)];
}

int pick_header(struct rng *r, __u32 *size, __u32 *version, const __u64 *bad, size_t n)
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

struct dev devs[MAX_DEVS];
int ndev, nedu;
static const char *const role_name[NROLE] = { "control", "cheap", "reader", "user", "chaos" };
const int role_of[NROLE_OF] = { R_CTL, R_CHEAP, R_READER, R_USER, R_CTL, R_CHEAP, R_USER, R_CHAOS };

struct thr thr[MAX_THREADS];

void on_signal(int sig)
{
	(void)sig;
}

/* A signal to this thread every `ms` from now, then every 20 ms, until disarmed. */
void timer_arm(struct thr *t, unsigned int ms)
{
	struct itimerspec its = {
		.it_value = { ms / 1000, (ms % 1000) * 1000000L + 1 },
		.it_interval = { 0, 20 * 1000000L },
	};

	if (t->have_timer)
		timer_settime(t->timer, 0, &its, NULL);
}

void timer_disarm(struct thr *t)
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
void __printf(3, 4) fail(struct thr *t, int check, const char *fmt, ...)
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

void checked(int check)
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

void __printf(7, 8) cbegin(struct thr *t, int kind, struct dev *d, int slot,
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
long cend(struct thr *t, long ret)
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
int undisturbed(struct thr *t)
{
	return !ld(&S->disturbing) && ld(&S->disturb) + ld(&S->disturbing) == t->disturb0;
}

void disturb_begin(void)
{
	inc(&S->disturbing);
}

void disturb_end(void)
{
	inc(&S->disturb);
	__atomic_fetch_sub(&S->disturbing, 1, __ATOMIC_RELAXED);
}

/* The input decides: the call must fail with `want` (0: must fail, any errno). */
void expect_err(struct thr *t, long ret, int want, const char *why)
{
	checked(C_EXPECT);
	if (inject(C_EXPECT))
		ret = 0;
	if (ret >= 0)
		fail(t, C_EXPECT, "%s: succeeded, but %s", t->what, why);
	else if (want && t->err != want)
		fail(t, C_EXPECT, "%s: %s, but %s: %s", t->what, ename(t->err), why, ename(want));
}
const char *const bp_name[NBP] = {
	"", " ptr=odd", " ptr=NULL", " ptr=low", " ptr=unmapped", " ptr=straddle",
	" ptr=read-only", " ptr=kernel",
};

int pick_bp(struct rng *r, unsigned int bad_pct)
{
	if (!chance(r, bad_pct))
		return chance(r, 3) ? BP_ODD : BP_GOOD;
	return BP_NULL + below(r, NBP - BP_NULL);
}

/* True if a call of `size` bytes through pointer kind `bp` faults. */
int bp_faults(int bp, int writes)
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
void *bp_ptr(struct thr *t, struct rng *r, int bp, const void *content, size_t size)
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

int slot_get(struct thr *t, struct dev *d, int i)
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

void slot_put(struct thr *t, struct dev *d, int i)
{
	if (!t->child)
		pthread_rwlock_unlock(&d->s[i].lk);
}

/*
 * rtlat half the time: its calls (but unknown ones) take one device-wide
 * session lock, which a session's CONFIG holds while it allocates.
 */
struct dev *pick_dev(struct rng *r)
{
	if (ndev == 1 || chance(r, 50))
		return &devs[0];
	return &devs[1 + below(r, ndev - 1)];
}

struct dev *pick_edu(struct rng *r)
{
	if (ndev == 1 || chance(r, 8))
		return &devs[0];
	return &devs[1 + below(r, ndev - 1)];
}

/* A slot; the owner's with `owner_pct` percent. */
int pick_slot(struct rng *r, struct dev *d, unsigned int owner_pct)
{
	int o = __atomic_load_n(&d->owner, __ATOMIC_RELAXED);

	if (o >= 0 && chance(r, owner_pct))
		return o;
	return below(r, d->nslot);
}

void w_begin(struct thr *t, struct dev *d, struct wtoken *w)
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
void w_end(struct thr *t, struct dev *d, struct wtoken *w, int changed,
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

void epoch_get(struct thr *t, struct dev *d, struct epoch *e)
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
