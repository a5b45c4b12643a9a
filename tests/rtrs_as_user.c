// SPDX-License-Identifier: GPL-2.0
/*
 * rtrs_as_user ID RTPRIO PROG [ARG...]: run PROG as an RT user without
 * root, as a test needs one: user and group ID (no other group, no
 * capability left, none to be had from a file's capabilities or a
 * set-user-ID bit: no_new_privs), an RLIMIT_RTPRIO of RTPRIO. Run as
 * root. (What setpriv --reuid does; busybox's has no such option.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "rtrs_user.h"

static unsigned long number(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "rtrs_as_user: %s '%s': not a number\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long id, rtprio;

	if (argc < 4) {
		fprintf(stderr, "usage: rtrs_as_user ID RTPRIO PROG [ARG...]\n");
		return 2;
	}
	id = number(argv[1], "ID");
	rtprio = number(argv[2], "RTPRIO");
	if (rtrs_become_user(id, rtprio)) {
		perror("rtrs_as_user: changing user");
		return 1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror("rtrs_as_user: no_new_privs");
		return 1;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "rtrs_as_user: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
