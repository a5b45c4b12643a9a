/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An RT user without root, as the tests need one (rtlat_test, rtedu_test,
 * rtrs_as_user): run as root, becomes user and group id with no other
 * group and so no capability, and an RLIMIT_RTPRIO of rtprio.
 */
#ifndef RTRS_USER_H
#define RTRS_USER_H

#include <grp.h>
#include <sys/resource.h>
#include <unistd.h>

/* 0, or -1 with errno set by the step that failed. */
static inline int rtrs_become_user(unsigned long id, unsigned long rtprio)
{
	const struct rlimit lim = { rtprio, rtprio };

	if (setrlimit(RLIMIT_RTPRIO, &lim) || setgroups(0, NULL) || setgid(id) || setuid(id))
		return -1;
	return 0;
}

#endif
