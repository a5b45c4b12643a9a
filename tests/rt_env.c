// SPDX-License-Identifier: GPL-2.0
/*
 * The environment every rtrs test relies on: a PREEMPT_RT kernel, at least
 * two online CPUs, SCHED_FIFO, and the timerlat tracer rtlat is compared with.
 *
 * Global state: changes none (reads the tracers' list, runs a SCHED_FIFO
 * thread for a moment).
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"

TEST(preempt_rt_kernel)
{
	struct utsname u;

	ASSERT_EQ(0, uname(&u));
	TH_LOG("%s %s", u.release, u.version);
	ASSERT_NE(NULL, strstr(u.version, "PREEMPT_RT"));
}

TEST(two_cpus_online)
{
	ASSERT_LE(2, sysconf(_SC_NPROCESSORS_ONLN));
}

TEST(sched_fifo)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct sched_param normal = { .sched_priority = 0 };

	if (geteuid() != 0)
		SKIP(return, "needs root");
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO, &sp));
	ASSERT_EQ(SCHED_FIFO, sched_getscheduler(0));
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &normal));
}

TEST(timerlat_tracer_available)
{
	char buf[4096] = "";
	FILE *f = fopen("/sys/kernel/tracing/available_tracers", "r");

	if (!f)
		SKIP(return, "tracefs not mounted at /sys/kernel/tracing");
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	TH_LOG("tracers: %s", buf);
	ASSERT_NE(NULL, strstr(buf, "timerlat"));
	ASSERT_NE(NULL, strstr(buf, "osnoise"));
}

TEST_HARNESS_MAIN
