// SPDX-License-Identifier: GPL-2.0
/*
 * A periodic control loop measured by /dev/rtlat (the C twin of
 * samples/rust/rtlat_loop): each iteration waits for its period with
 * rtlat_client_wait(), does its work (here: spinning for --work-us, and once
 * for --slow-us at iteration --slow-at), and comes back. At the end it prints
 * the session's deadline misses with their response times, from the records.
 *
 *   rtlat_loop --cpu 1 --period-us 1000 --deadline-us 300 --iterations 10000
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rtlat/client.h>

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void spin_us(__u64 us)
{
	__u64 end = now_ns() + us * 1000;

	while (now_ns() < end)
		;
}

static void usage(void)
{
	fprintf(stderr, "usage: rtlat_loop [--cpu N] [--period-us P] [--deadline-us D] [--iterations N]\n"
			"                  [--work-us W] [--slow-at I --slow-us S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "deadline-us", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "work-us", required_argument, NULL, 'w' },
		{ "slow-at", required_argument, NULL, 'a' },
		{ "slow-us", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct rtlat_client_opts o = RTLAT_CLIENT_OPTS_INIT;
	unsigned long iterations = 1000, work_us = 50, slow_at = 0, slow_us = 0, i;
	static struct rtlat_record recs[256];
	struct rtlat_record r;
	struct rtlat_status st;
	struct rtlat_client c;
	__s64 worst = 0;
	ssize_t n;
	int opt;

	o.period_ns = 1000000;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		unsigned long v = strtoul(optarg ? optarg : "", &end, 10);

		if (opt == '?' || !optarg || *end || !*optarg)
			usage();
		switch (opt) {
		case 'c': o.cpu = v; break;
		case 'p': o.period_ns = v * 1000ULL; break;
		case 'd': o.deadline_ns = v * 1000ULL; break;
		case 'n': iterations = v; break;
		case 'w': work_us = v; break;
		case 'a': slow_at = v; break;
		case 's': slow_us = v; break;
		}
	}
	if (optind != argc)
		usage();
	if (rtlat_client_start(&c, &o)) {
		perror("rtlat_loop: start");
		return 1;
	}
	for (i = 1; i <= iterations; i++) {
		if (rtlat_client_wait(&c, &r)) {
			perror("rtlat_loop: wait");
			return 1;
		}
		if (r.lat_ns[RTLAT_STAGE_USER] > worst)
			worst = r.lat_ns[RTLAT_STAGE_USER];
		if (i == slow_at) {
			printf("rtlat_loop: slow iteration %lu seq %llu\n", i,
			       (unsigned long long)r.seq);
			spin_us(slow_us);
		} else {
			spin_us(work_us);
		}
	}
	if (rtlat_client_halt(&c) || rtlat_client_status(&c, &st)) {
		perror("rtlat_loop: stop");
		return 1;
	}
	printf("rtlat_loop: iterations %lu cpu %u period_us %llu deadline_us %llu worst_wakeup_us %lld deadline_misses %llu\n",
	       iterations, o.cpu, (unsigned long long)o.period_ns / 1000,
	       (unsigned long long)o.deadline_ns / 1000, (long long)worst / 1000,
	       (unsigned long long)st.deadline_misses);
	/* (EBUSY if another process reads the device.) */
	while ((n = rtlat_client_read(&c, recs, sizeof(recs) / sizeof(recs[0]))) > 0) {
		for (i = 0; i < (unsigned long)n; i++) {
			if (!(recs[i].flags & RTLAT_REC_DEADLINE_MISS))
				continue;
			if (recs[i].lat_ns[RTLAT_STAGE_RESPONSE] >= 0)
				printf("miss seq %llu response_us %lld\n",
				       (unsigned long long)recs[i].seq,
				       (long long)recs[i].lat_ns[RTLAT_STAGE_RESPONSE] / 1000);
			else
				printf("miss seq %llu response_us none (not back by the next period)\n",
				       (unsigned long long)recs[i].seq);
		}
	}
	rtlat_client_stop(&c);
	return 0;
}
