// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rng-tools' source names and numbers (compat.h). The table follows rng-tools 6.17's
 * entropy_sources[] order, which its numeric -x/-n/-O arguments index.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "compat.h"
#include "source.h"
#include "util.h"

static const struct compat_source sources[COMPAT_N_SOURCES] = {
	{ "hwrng", { "hwrng" }, NULL },
	{ "tpm",
	  { NULL },
	  "it read TPM 1.2 chips through /dev/tpm0; the kernel's TPM driver offers a TPM's "
	  "generator as an hwrng backend (tpm-rng-0), which the hwrng source reads" },
	/* rng-tools' rdrand source used RDSEED where the CPU has it, else RDRAND. */
	{ "rdrand", { "rdseed", "rdrand" }, NULL },
	{ "darn",
	  { "darn" },
	  "this build has no darn source; on POWER9 and later the kernel seeds itself from "
	  "DARN already" },
	/* The rndr source is in every build's table; off arm64 it says it is not compiled in. */
	{ "rndr",
	  { "rndr" },
	  "this build has no rndr source; where the CPU has RNDR the kernel seeds itself from "
	  "it already" },
	{ "nist",
	  { NULL },
	  "the NIST beacon publishes its values to everyone: they are not secret, so not "
	  "entropy" },
	{ "jitter",
	  { NULL },
	  "the kernel has run its own CPU jitter entropy source since Linux 5.4; nothing to "
	  "replace it with" },
	{ "pkcs11",
	  { NULL },
	  "no PKCS#11 tokens here; a program that reads one can feed rngd through a file "
	  "source (rngd.conf(5))" },
	{ "rtlsdr",
	  { NULL },
	  "no radio receivers here; a program that reads one can feed rngd through a file "
	  "source (rngd.conf(5))" },
	{ "qrypt",
	  { NULL },
	  "data fetched over the network is not local entropy; not a source here" },
	/* Named pipes are what the file source reads; its instance has the old name. */
	{ "namedpipe", { "file:namedpipe" }, NULL },
};

_Static_assert(ARRAY_SIZE(sources) == COMPAT_N_SOURCES, "rng-tools 6.17 has 11 sources");

const struct compat_source *compat_find_source(const char *ref, int *index)
{
	uint64_t n;

	*index = -1;
	if (!ref || !*ref)
		return NULL;
	if (ref[0] >= '0' && ref[0] <= '9') {
		/* rng-tools 6 took "05" and "5" alike; a sign or junk is not an index. */
		if (parse_uint(ref, 0, COMPAT_N_SOURCES - 1, &n) < 0)
			return NULL;
		*index = (int)n;
		return &sources[n];
	}
	for (size_t i = 0; i < COMPAT_N_SOURCES; i++)
		if (strcmp(sources[i].name, ref) == 0)
			return &sources[i];
	return NULL;
}

size_t compat_source_index(const struct compat_source *cs)
{
	return (size_t)(cs - sources);
}

bool compat_source_here(const struct compat_source *cs)
{
	for (size_t i = 0; i < ARRAY_SIZE(cs->ours) && cs->ours[i]; i++)
		if (source_find_driver(cs->ours[i]))
			return true;
	return false;
}

const char *compat_noop_key(const struct compat_source *cs, const char *key)
{
	if (strcmp(key, "use_aes") == 0 &&
	    (strcmp(cs->name, "rdrand") == 0 || strcmp(cs->name, "darn") == 0 ||
	     strcmp(cs->name, "rndr") == 0))
		return "rngd never stretches an instruction's output with AES: each source is "
		       "credited for what it is (rngd.conf(5))";
	if (strcmp(cs->name, "namedpipe") == 0 && strcmp(key, "timeout") == 0)
		return "the file source waits for its writer without a time limit, and re-opens "
		       "a pipe whose writer went away";
	return NULL;
}
