// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's command line for cpu_trust.c, alone in its object file so that a test
 * program can define cpu_trust_read_cmdline() itself (tests/cmdline_file.c) and this one
 * is then never pulled from the library.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu_trust.h"
#include "util.h"

/* More than any architecture's COMMAND_LINE_SIZE (x86 2048, arm64 2048, s390 4096). */
#define CMDLINE_MAX 65536

int cpu_trust_read_cmdline(char **text)
{
	int fd = open(CPU_TRUST_CMDLINE, O_RDONLY | O_CLOEXEC);
	char *buf;
	ssize_t n;

	*text = NULL;
	if (fd < 0)
		return -errno;
	buf = malloc(CMDLINE_MAX + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = read_full(fd, buf, CMDLINE_MAX);
	close(fd);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	buf[n] = '\0';
	*text = buf;
	return 0;
}
