// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: configs (generation and validity) and the checks of what
 * calls return.
 */
#include "fuzz.h"

static int popcount64(__u64 x)
{
	return __builtin_popcountll(x);
}

int has_bit(const __u64 *w, int b)
{
	return (w[b / 64] >> (b % 64)) & 1;
}

/* The online CPUs, or -1 if CPU 1 is changing state. */
int online_mask(__u64 *m, __u64 *gen)
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
int config_validity(const struct rtlat_config *c, int edu, const __u64 *online,
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
void gen_config(struct rng *r, struct dev *d, struct rtlat_config *c, __u64 *wide,
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

uint32_t fact32(uint32_t n)
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
void check_record(struct thr *t, struct dev *d, const struct rtlat_record *r_,
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
void check_records(struct thr *t, struct dev *d, const unsigned char *buf, size_t n,
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

void check_status(struct thr *t, struct dev *d, const struct rtlat_status *s_)
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
void check_status_pair(struct thr *t, const struct rtlat_status *a,
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

void check_stats(struct thr *t, const struct rtlat_stats *in, const struct rtlat_stats *st_,
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
