// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_fuzz: the watchdog: no call blocks longer than it may, sleeps
 * uninterruptibly or ignores a signal.
 */
#include "fuzz.h"

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

int wd_stop;

void *watchdog(void *arg)
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
