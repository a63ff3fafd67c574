// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * For tests/rngd-cmdline: the kernel command line from the environment (RNGD_TEST_CMDLINE,
 * the text itself), linked instead of src/cpu_trust_proc.c; unset, the real /proc/cmdline.
 * tests/cpu-trust.sh uses it to run the real CPU sources under random.trust_cpu=off.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_trust.h"

int cpu_trust_read_cmdline(char **text)
{
	const char *env = getenv("RNGD_TEST_CMDLINE");
	FILE *f;

	*text = NULL;
	if (env) {
		*text = strdup(env);
		return *text ? 0 : -ENOMEM;
	}
	f = fopen(CPU_TRUST_CMDLINE, "re");
	if (!f)
		return -errno;
	*text = calloc(1, 65537);
	if (*text && fread(*text, 1, 65536, f) == 0 && ferror(f)) {
		free(*text);
		*text = NULL;
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return *text ? 0 : -ENOMEM;
}
