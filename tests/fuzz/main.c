// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: setup, the report and main().
 */
#include "fuzz.h"

static const char *const test_name[NTEST] = {
	"fuzz rtlat: errnos as documented",
	"fuzz rtedu: errnos as documented",
	"invariants: records, status, statistics, poll masks, rtedu results",
	"no hang, no uninterruptible sleep, signals answered",
	"call target reached",
};

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

void final_report(int hang)
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

	S->start_ns = now_ns();
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
	if (can_hotplug) {
		checked(C_CLEANUP);
		if (!cpu1_online) {
			int f = open(hp_path, O_WRONLY);

			if (f < 0 || write(f, "1", 1) != 1)
				fail(NULL, C_CLEANUP, "cpu1 back online: %s", strerror(errno));
			else
				cpu1_online = 1;
			if (f >= 0)
				close(f);
		}
		if (inject(C_CLEANUP))
			fail(NULL, C_CLEANUP, "cpu1 back online: faked (-F cleanup)");
	}

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
	/* (A failed cleanup fails the run, though no subtest names it.) */
	exit(ksft_get_fail_cnt() || sum_fails(C_CLEANUP, C_CLEANUP, -1) ? KSFT_FAIL : KSFT_PASS);
}
