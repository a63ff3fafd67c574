/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rng-tools' vocabulary (rngd(8) MIGRATING FROM RNG-TOOLS): the source names and numbers of
 * rng-tools 6.17's table, what each one is here, and why the ones this rngd does not have
 * are not here. The command line (-x, -n, -O) and --import-rng-tools ask this; nothing here
 * logs or exits.
 */
#ifndef RNGD_COMPAT_H
#define RNGD_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

/* Entries in rng-tools 6.17's source table; an index is a position in it. */
#define COMPAT_N_SOURCES 11

struct compat_source {
	const char *name;    /* rng-tools' short name ("jitter") */
	const char *ours[3]; /* the sources here it stands for, NULL-terminated */
	const char *why;     /* why it is not here, and what to use instead (no source here) */
};

/*
 * rng-tools' source for REF: its short name or its number in 6.17's table ("6"), which is
 * *index set to (-1 for a name). NULL when REF is neither. Only the whole string counts
 * (rng-tools matched prefixes: "jitterfoo" was jitter; here it is not).
 */
const struct compat_source *compat_find_source(const char *ref, int *index);

/* The entry's position in the table (0..COMPAT_N_SOURCES-1), for one-notice-per-name sets. */
size_t compat_source_index(const struct compat_source *cs);

/*
 * Whether the entry names at least one source of this build (source_find_driver()): false
 * for jitter, pkcs11, ..., and for rndr/darn where no such source is compiled in.
 */
bool compat_source_here(const struct compat_source *cs);

/*
 * rng-tools' -O keys that mean nothing here for a source that is here (rdrand's use_aes,
 * namedpipe's timeout): why it is a no-op, or NULL when KEY is not one of them.
 */
const char *compat_noop_key(const struct compat_source *cs, const char *key);

#endif
