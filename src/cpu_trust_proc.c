// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's command line for cpu_trust.c, alone in its object file so that a test
 * program can define cpu_trust_read_cmdline() itself (tests/cmdline_file.c) and this one
 * is then never pulled from the library.
 */
#include "config.h"

#include "cpu_trust.h"
#include "util.h"

/* More than any architecture's COMMAND_LINE_SIZE (x86 2048, arm64 2048, s390 4096). */
#define CMDLINE_MAX 65536

int cpu_trust_read_cmdline(char **text)
{
	ssize_t n = read_text_alloc(CPU_TRUST_CMDLINE, CMDLINE_MAX, text);

	return n < 0 ? (int)n : 0;
}
