// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * caam: /dev/hwrng with the NXP CAAM backend rng-caam (kernel-interfaces.md §4), a profile
 * of the hwrng reader. Each job yields 16 bytes with prediction resistance (about
 * 1.5 kB/s), so reads are multiples of 16. A failed TRNG self-test ("RNG: Hardware error")
 * reaches read() as EINVAL, sometimes EIO: both become -EINVAL so that the framework backs
 * off and re-opens.
 */
#include "config.h"

#include "sources/hwrng.h"

const struct hwrng_profile hwrng_profile_caam = {
	.driver = "caam",
	.backend = "rng-caam",
	.unit = 16,
	.hw_errors = true,
};

static int caam_check(struct source *src, char *why, size_t len)
{
	return hwrng_check(src, &hwrng_profile_caam, why, len);
}

/*
 * Configured with --disable-source-caam, the source is listed and configurable but never
 * starts. The profile above stays: the plain hwrng source applies its quirks to this backend.
 */
static int caam_probe(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_CAAM
	return hwrng_probe(src, &hwrng_profile_caam, why, len);
#else
	return hwrng_not_compiled_in("caam", why, len);
#endif
}

static int caam_init(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_CAAM
	return hwrng_init(src, &hwrng_profile_caam, why, len);
#else
	return hwrng_not_compiled_in("caam", why, len);
#endif
}

static const struct option_spec caam_options[] = {
	HWRNG_OPTIONS("2496", "rng-caam", "the CAAM backend to select (only rng-caam)"),
};

const struct source_ops source_caam = {
	.name = "caam",
	.help = "/dev/hwrng with the NXP CAAM backend rng-caam (i.MX, Layerscape)",
	.hwrng_family = true,
	.quality = 1024,
	.options = caam_options,
	.check = caam_check,
	.probe = caam_probe,
	.init = caam_init,
	.read = hwrng_read,
	.fini = hwrng_fini,
};
