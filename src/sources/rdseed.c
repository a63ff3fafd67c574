// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RDSEED (x86-64): the CPU's entropy source read directly, 64 bits per instruction. The
 * shared detection and read loop (bounded CF=0 retries with PAUSE and short sleeps, stuck
 * output rejected before the FIPS gate) are in x86_rand.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "sources/x86_rand.h"

#if defined(ENABLE_SOURCE_RDSEED) && defined(__x86_64__)

static int rdseed_probe(struct source *src, char *why, size_t len)
{
	return x86_rand_detect(X86_RDSEED, why, len);
}

static int rdseed_init(struct source *src, char *why, size_t len)
{
	return x86_rand_init(src, X86_RDSEED, why, len);
}

#define rdseed_read x86_rand_read
#define rdseed_readv x86_rand_readv
#define rdseed_fini x86_rand_fini

#else /* compiled out (--disable-source-rdseed), or not x86-64: a stub that says so */

static int rdseed_probe(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_RDSEED
	snprintf(why, len, "not compiled in for this architecture (x86-64 only)");
#else
	snprintf(why, len, "not compiled in (configured with --disable-source-rdseed)");
#endif
	return -EOPNOTSUPP;
}

static int rdseed_init(struct source *src, char *why, size_t len)
{
	return rdseed_probe(src, why, len);
}

static ssize_t rdseed_read(struct source *src, void *buf, size_t max)
{
	return -ENODEV;
}

#define rdseed_readv NULL
#define rdseed_fini NULL

#endif

/*
 * Quality 512 of 1024. RDSEED is specified to deliver full-entropy seeds: its output comes
 * from the conditioned entropy source (an SP 800-90B source with an SP 800-90C style
 * construction) without the DRBG (Intel DRNG Software Implementation Guide rev 2.1, 3.2 and
 * 4.2; AMD's "AMD Random Number Generator" whitepaper, 2017). rngd cannot verify that claim
 * from its output (the FIPS and health tests catch gross failures only), so half of it is
 * credited by default; rdrand never defaults to more.
 */
const struct source_ops source_rdseed = {
	.name = "rdseed",
	.help = "x86 RDSEED instruction (the CPU's entropy source)",
	.default_on = true,
	.cpu_rng = true,
	.quality = 512,
	.probe = rdseed_probe,
	.init = rdseed_init,
	.read = rdseed_read,
	.readv = rdseed_readv,
	.fini = rdseed_fini,
};
