// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RDRAND (x86-64): the output of the CPU's CTR_DRBG, 64 bits per instruction. The shared
 * detection and read loop (CF=0 retried 10 times, then an error; stuck output rejected
 * before the FIPS gate) are in x86_rand.c. Off by default where RDSEED is usable
 * (defer_to): the seed-grade instruction is preferred.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "sources/x86_rand.h"

#if defined(ENABLE_SOURCE_RDRAND) && defined(__x86_64__)

static int rdrand_probe(struct source *src, char *why, size_t len)
{
	return x86_rand_detect(X86_RDRAND, why, len);
}

static int rdrand_init(struct source *src, char *why, size_t len)
{
	return x86_rand_init(src, X86_RDRAND, why, len);
}

#define rdrand_read x86_rand_read
#define rdrand_readv x86_rand_readv
#define rdrand_fini x86_rand_fini

#else /* compiled out (--disable-source-rdrand), or not x86-64: a stub that says so */

static int rdrand_probe(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_RDRAND
	snprintf(why, len, "not compiled in for this architecture (x86-64 only)");
#else
	snprintf(why, len, "not compiled in (configured with --disable-source-rdrand)");
#endif
	return -EOPNOTSUPP;
}

static int rdrand_init(struct source *src, char *why, size_t len)
{
	return rdrand_probe(src, why, len);
}

static ssize_t rdrand_read(struct source *src, void *buf, size_t max)
{
	return -ENODEV;
}

#define rdrand_readv NULL
#define rdrand_fini NULL

#endif

/*
 * Quality 2 of 1024. RDRAND returns the output of an SP 800-90A CTR_DRBG that its entropy
 * source reseeds at intervals: at most 511 128-bit outputs per reseed, so Intel's own recipe
 * for seed-grade data from RDRAND reduces 512:1 (Intel DRNG Software Implementation Guide
 * rev 2.1, 4.2.5; AMD's whitepaper describes the same construction). Credited the same
 * way: 2 bits per 1024 read, never more than rdseed's default. The data is mixed into the
 * pool all the same; quality = N raises the credit for those who trust the DRBG more.
 */
const struct source_ops source_rdrand = {
	.name = "rdrand",
	.help = "x86 RDRAND instruction (the CPU's DRBG; off where RDSEED is usable)",
	.default_on = true,
	.cpu_rng = true,
	.defer_to = "rdseed",
	.quality = 2,
	.probe = rdrand_probe,
	.init = rdrand_init,
	.read = rdrand_read,
	.readv = rdrand_readv,
	.fini = rdrand_fini,
};
