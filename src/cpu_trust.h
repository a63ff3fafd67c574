/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The administrator's trust in the CPU's random instructions, as the kernel command line
 * says it: random.trust_cpu=off (0, n, ...) tells the kernel not to credit RDSEED, RDRAND
 * or RNDR, and rngd then credits them 0 by default too (they are still mixed in). Sources
 * mark themselves with source_ops.cpu_rng; the framework asks cpu_trust_get() once per
 * source it builds. The kernel's command line is read in cpu_trust_proc.c, alone in its
 * object file: a test program links its own cpu_trust_read_cmdline() instead (a link-time
 * seam, nothing in the shipped binary reads anything but /proc/cmdline).
 */
#ifndef RNGD_CPU_TRUST_H
#define RNGD_CPU_TRUST_H

#include <stdbool.h>
#include <stddef.h>

#define CPU_TRUST_CMDLINE "/proc/cmdline"
/* The kernel parameter (drivers/char/random.c, early_param()). */
#define CPU_TRUST_PARAM "random.trust_cpu"

struct cpu_trust {
	/* The last valid random.trust_cpu= on the command line reads as false. */
	bool distrusted;
	/*
	 * That setting as written ("random.trust_cpu=off", the value cut at 16 characters);
	 * empty when there was no valid one.
	 */
	char setting[48];
};

/*
 * Read a random.trust_cpu= value the way current kernels do (lib/kstrtox.c, kstrtobool():
 * only the first character counts, two for "on"/"off"): true for y Y t T 1 e E and o[nN],
 * false for n N f F 0 d D and o[fF]. 0 with *res set, or -EINVAL (NULL, empty, anything
 * else: the kernel then ignores the setting and keeps its default, trusting the CPU).
 */
int cpu_trust_parse_bool(const char *s, bool *res);

/*
 * Find random.trust_cpu= in a kernel command line the way the kernel's early parameter
 * parsing does (kernel/params.c next_arg(), init/main.c do_early_param()): blank-separated
 * words, double quotes group blanks and are removed, '-' and '_' in the name are the same,
 * nothing after a lone "--" (that is init's), and each valid setting overrides the one
 * before while an invalid one is ignored. cmdline may be NULL (nothing found).
 */
void cpu_trust_parse(const char *cmdline, struct cpu_trust *out);

/*
 * The seam: the running kernel's command line (CPU_TRUST_CMDLINE) as a NUL-terminated
 * string in *text (the caller frees it). 0, or -errno with *text NULL.
 */
int cpu_trust_read_cmdline(char **text);

/*
 * cpu_trust_parse() of the running kernel's command line. An unreadable one (no /proc in a
 * container) counts as no setting: out says trusted, and -errno is returned for a debug line.
 */
int cpu_trust_get(struct cpu_trust *out);

#endif
