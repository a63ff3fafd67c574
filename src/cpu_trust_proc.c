// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's command line for cpu_trust.c, alone in its object file so that a test
 * program can define cpu_trust_read_cmdline() itself (tests/cmdline_file.c) and this one
 * is then never pulled from the library.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_trust.h"
#include "util.h"

/* More than any architecture's COMMAND_LINE_SIZE (x86 2048, arm64 2048, s390 4096). */
#define CMDLINE_MAX 65536

/*
 * Read once per process: it does not change after boot, and every CPU source of every
 * source set (start, each reload) asks for it.
 */
static pthread_once_t cmdline_once = PTHREAD_ONCE_INIT;
static char *cmdline;
static int cmdline_r;

static void cmdline_read(void)
{
	ssize_t n = read_text_alloc(CPU_TRUST_CMDLINE, CMDLINE_MAX, &cmdline);

	cmdline_r = n < 0 ? (int)n : 0;
	/* Kept at its length, not in the 4 KiB (or larger) buffer it was read into. */
	if (n >= 0) {
		char *fit = realloc(cmdline, (size_t)n + 1);

		if (fit)
			cmdline = fit;
	}
}

int cpu_trust_read_cmdline(char **text)
{
	(void)pthread_once(&cmdline_once, cmdline_read);
	*text = NULL;
	if (cmdline_r < 0)
		return cmdline_r;
	*text = strdup(cmdline);
	return *text ? 0 : -ENOMEM;
}
