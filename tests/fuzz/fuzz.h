/* SPDX-License-Identifier: GPL-2.0 */
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
 * threads does not. (The deterministic checks of races it once found are
 * rtlat_test's.)
 *
 * Global state it changes (Documentation/testing.rst, "In a test farm"):
 * loads rtlat.ko and rtedu.ko if not loaded, and unloads what it loaded;
 * CPU hotplug (CPU 1 offline and online, again and again); the global
 * tracing_on (sessions with RTLAT_CFG_TRACING_OFF turn it off, the fuzzer
 * turns it back on at the end).
 */
#ifndef RTRS_FUZZ_H
#define RTRS_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <sys/resource.h>
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
#define NBUSY		(2 * MAX_THREADS)	/* threads, their children */

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
extern double slowness;
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

enum devc { DC_RTLAT, DC_RTEDU, DC_NONE, NDEVC };

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
	C_CLEANUP,	/* the clean state after the fuzzing: CPU 1 back online */
	C_SIGNAL,	/* a blocking call did not return after its signal */
	C_DSTATE,	/* uninterruptible sleep in a call that must not */
	C_HANG,		/* a call blocked longer than the watchdog allows */
	NCHECK
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

/* ------------------------------------------------------------------ */
/* Options and environment                                             */

struct opts {
	__u64 seed, calls;
	unsigned int seconds, threads;
	int verbose, inject;
};

/* ------------------------------------------------------------------ */
/* Random numbers: splitmix64, a fresh stream per operation            */

struct rng {
	__u64 s;
};

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

/* ------------------------------------------------------------------ */
/* Threads                                                             */

enum role { R_CTL, R_CHEAP, R_READER, R_USER, R_CHAOS, NROLE };

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

/* ------------------------------------------------------------------ */
/* Bad pointers                                                        */

enum bp { BP_GOOD, BP_ODD, BP_NULL, BP_LOW, BP_UNMAPPED, BP_STRADDLE, BP_RO, BP_KERNEL, NBP };

/* ------------------------------------------------------------------ */
/* Which session: the writers' bookkeeping (see struct dev)            */

struct wtoken {
	__u64 start;
	int overlap;
};

struct epoch {
	__u64 gen;
	int inprog, known, empty;
	__u64 cpus[RTLAT_CPU_WORDS];
};

/* ------------------------------------------------------------------ */
/* Configs: generation and the documented validity                     */

enum { V_INVALID, V_VALID, V_UNSURE };

/* The buffer of a read: mostly whole records, sometimes short, huge or bad. */
struct rbuf {
	unsigned char *p;
	size_t len, room;	/* room: bytes that may be written without faulting */
	int bp;
	char desc[48];
};

enum { RD_READ, RD_READV, RD_PREAD, RD_PREADV2 };

#define POLL_OK (POLLIN | POLLRDNORM | POLLHUP)

struct pick {
	struct dev *d;
	int i, fd;
};

enum op {
	O_STATUS, O_STATUS_PAIR, O_STATS, O_BAD_IOCTL, O_BADPTR, O_RESET, O_STOP, O_START,
	O_CONFIG, O_CONFIG_START, O_READ, O_READV, O_PREAD, O_PREADV2, O_WRITE, O_MMAP,
	O_POLL, O_SELECT, O_EPOLL, O_USER_WAIT, O_REOPEN, O_FORK, O_HOTPLUG, O_FDINFO,
	O_EDU_INFO, O_EDU_FACT, O_EDU_DMA, O_BLAME, NOP
};

#define IRQ_THREAD (1 << RTLAT_STAGE_IRQ | 1 << RTLAT_STAGE_THREAD)

/* ------------------------------------------------------------------ */
/* Setup, report, main                                                 */

enum {
	T_FUZZ_RTLAT, T_FUZZ_RTEDU, T_INVARIANTS, T_NO_HANG, T_CALLS, NTEST
};

#define NROLE_OF 8

/*
 * The program's state and functions that more than one file uses, defined
 * in the files of this folder (what one file alone uses is static there).
 * kselftest.h's counters are static, one copy per file: only main.c
 * reports results (ksft_test_result_*, ksft_exit_*).
 */
extern const char *const kind_name[NKIND];
extern const char *const devc_name[NDEVC];
extern const char *const check_name[NCHECK];
extern struct shared *S;
extern struct opts opt;
extern int nr_cpu_ids_;
extern __u64 online0[RTLAT_CPU_WORDS];
extern int ncpu_online0;
extern int privileged;
extern const char *hp_path;
extern int can_hotplug;
extern int cpu1_online;
extern __u64 hp_gen;
extern pthread_mutex_t hp_lock;
extern pthread_mutex_t out_lock;
extern int loaded_rtlat, loaded_rtedu;
extern struct dev devs[MAX_DEVS];
extern int ndev, nedu;
extern const int role_of[NROLE_OF];
extern struct thr thr[MAX_THREADS];
extern const char *const bp_name[NBP];
extern int wd_stop;

/* Its functions. */
int inject(int check);
__u64 now_ns(void);
void sleep_ms(unsigned int ms);
__u64 ld(const __u64 *p);
void inc(__u64 *p);
void __printf(1, 2) out(const char *fmt, ...);
const char *ename(int e);
__u64 mix64(__u64 z);
__u64 rnd(struct rng *r);
uint32_t below(struct rng *r, uint32_t n);
int chance(struct rng *r, unsigned int pct);
int rare(struct rng *r, unsigned int pm);
__u64 pick_of(struct rng *r, const __u64 *v, size_t n);
int pick_header(struct rng *r, __u32 *size, __u32 *version, const __u64 *bad, size_t n);
void on_signal(int sig);
void timer_arm(struct thr *t, unsigned int ms);
void timer_disarm(struct thr *t);
void __printf(3, 4) fail(struct thr *t, int check, const char *fmt, ...);
void checked(int check);
void __printf(7, 8) cbegin(struct thr *t, int kind, struct dev *d, int slot,
				   unsigned int limit_s, int dcheck, const char *fmt, ...);
long cend(struct thr *t, long ret);
int undisturbed(struct thr *t);
void disturb_begin(void);
void disturb_end(void);
void expect_err(struct thr *t, long ret, int want, const char *why);
int pick_bp(struct rng *r, unsigned int bad_pct);
int bp_faults(int bp, int writes);
void *bp_ptr(struct thr *t, struct rng *r, int bp, const void *content, size_t size);
int slot_get(struct thr *t, struct dev *d, int i);
void slot_put(struct thr *t, struct dev *d, int i);
struct dev *pick_dev(struct rng *r);
struct dev *pick_edu(struct rng *r);
int pick_slot(struct rng *r, struct dev *d, unsigned int owner_pct);
void w_begin(struct thr *t, struct dev *d, struct wtoken *w);
void w_end(struct thr *t, struct dev *d, struct wtoken *w, int changed,
		  const struct rtlat_config *c);
void epoch_get(struct thr *t, struct dev *d, struct epoch *e);
int has_bit(const __u64 *w, int b);
int online_mask(__u64 *m, __u64 *gen);
int config_validity(const struct rtlat_config *c, int edu, const __u64 *online,
			   const __u64 *wide, const char **why);
void gen_config(struct rng *r, struct dev *d, struct rtlat_config *c, __u64 *wide,
		       char *desc, size_t dlen);
uint32_t fact32(uint32_t n);
void check_record(struct thr *t, struct dev *d, const struct rtlat_record *r_,
			 const __u64 *cpus, const char *where);
void check_records(struct thr *t, struct dev *d, const unsigned char *buf, size_t n,
			  const struct epoch *e0, int valid, int checked_reader);
void check_status(struct thr *t, struct dev *d, const struct rtlat_status *s_);
void check_status_pair(struct thr *t, const struct rtlat_status *a,
			      const struct rtlat_status *b);
void check_stats(struct thr *t, const struct rtlat_stats *in, const struct rtlat_stats *st_,
			int with_buckets);
void raise_max_ring(struct dev *d, __u64 ring);
void status_request(struct rtlat_status *s);
int pin_to(struct thr *t, int cpu);
void *worker(void *arg);
void *watchdog(void *arg);
void final_report(int hang);
int main(int argc, char **argv);

#endif /* RTRS_FUZZ_H */
