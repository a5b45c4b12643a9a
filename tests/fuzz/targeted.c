// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: the targeted checks, after the fuzzing.
 */
#include "fuzz.h"

/* ------------------------------------------------------------------ */
/* Targeted checks, after the fuzzing, single-threaded but for helpers */

struct thr *M;	/* the main thread's */

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

static __u64 fails_now(void)
{
	__u64 n = 0;

	for (int c = 0; c < NCHECK; c++)
		for (int d = 0; d < NDEVC; d++)
			n += ld(&S->fails[c][d]);
	return n;
}

/* A drained session: produced == delivered + dropped, exactly. */
int t_drained(void)
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
int t_started_ns(void)
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
int t_second_reader(struct dev *d)
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
int t_poll_owner_close(struct dev *d)
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
int t_user_left(void)
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
int t_ring_max(void)
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
