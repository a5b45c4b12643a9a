// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: the operations and their mix.
 */
#include "fuzz.h"

static void run_op(struct thr *t, struct rng *r, int op);

/* ------------------------------------------------------------------ */
/* Operations                                                          */

/* The largest ring a session of `d` may have, raised before a CONFIG that may create it. */
void raise_max_ring(struct dev *d, __u64 ring)
{
	__u64 m = ld(&S->max_ring[d->idx]);

	while (ring > m && !__atomic_compare_exchange_n(&S->max_ring[d->idx], &m, ring, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A STATUS request: its header, no buffers for the sets in full. */
void status_request(struct rtlat_status *s)
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
	/* (EPERM on the file that owns the session; another's, EBUSY or
	 * EINVAL: the ownership comes first.) */
	if (!t->priv && kind == K_START)
		expect_err(t, ret, 0, "the caller may not measure (no capability, RLIMIT_RTPRIO 0)");
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
	/* (The configuration is read and checked before the caller's
	 * privilege, which its priority and flags decide.) */
	if (bp_faults(bp, 0)) {
		expect_err(t, ret, EFAULT, "its pointer is bad");
	} else if (!t->priv) {
		expect_err(t, ret, v == V_INVALID ? 0 : EPERM,
			   "the caller may not measure (no capability, RLIMIT_RTPRIO 0)");
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

/*
 * Pins the calling thread to cpu (-1: every CPU); the one CPU it then runs
 * on, or -1. A move onto CPU 1 never overlaps its hotplug: a kernel race
 * (sched_setaffinity() onto a CPU going offline leaves the task on another
 * CPU with no migration pending) warns in affine_move_task() at the next
 * migrate_enable(), which PREEMPT_RT runs at every spinlock_t unlock. It is
 * not the module's, so the fuzzer keeps out of it: a thread waits for the
 * hotplug step (hp_lock), a forked child pins to CPU 0 instead (its copy
 * of hp_lock excludes nobody, and may have been copied locked).
 */
int pin_to(struct thr *t, int cpu)
{
	int hp = cpu == 1 && can_hotplug;
	cpu_set_t set;
	int n;

	if (hp && t->child) {
		cpu = 0;
		hp = 0;
	}
	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		for (int c = 0; c < nr_cpu_ids_ && c < CPU_SETSIZE; c++)
			CPU_SET(c, &set);
	}
	if (hp)
		pthread_mutex_lock(&hp_lock);
	sched_setaffinity(0, sizeof(set), &set);
	if (hp)
		pthread_mutex_unlock(&hp_lock);
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

	t->pinned = pin_to(t, cpu);
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
		/* Unprivileged, with the privileged parent's files: no
		 * capability, and no RLIMIT_RTPRIO either, which would let it
		 * measure on a file opened for writing. */
		const struct rlimit none = { 0, 0 };

		if (setrlimit(RLIMIT_RTPRIO, &none) == 0 && syscall(SYS_setgroups, 0, NULL) == 0 &&
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

void *worker(void *arg)
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
		t->pinned = pin_to(t, t->home_cpu);
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
