// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * virtio: /dev/hwrng with a virtio_rng.N backend (kernel-interfaces.md §3), a profile of
 * the hwrng reader. The host rate-limits the device (about 9.6 kB/s on the test VM); the
 * driver fills one 64-byte buffer at a time and the core hands leftovers to the next read,
 * so any read size wastes nothing. The default read-size, 40 such chunks, covers one
 * 2500-byte block in one read.
 */
#include "config.h"

#include "sources/hwrng.h"

const struct hwrng_profile hwrng_profile_virtio = {
	.driver = "virtio",
	.backend = "virtio_rng.",
	.prefix = true,
	.unit = 1,
};

static int virtio_check(struct source *src, char *why, size_t len)
{
	return hwrng_check(src, &hwrng_profile_virtio, why, len);
}

/*
 * Configured with --disable-source-virtio, the source is listed and configurable but never
 * starts. The profile above stays: the plain hwrng source applies its quirks to this backend.
 */
static int virtio_probe(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_VIRTIO
	return hwrng_probe(src, &hwrng_profile_virtio, why, len);
#else
	return hwrng_not_compiled_in("virtio", why, len);
#endif
}

static int virtio_init(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_VIRTIO
	return hwrng_init(src, &hwrng_profile_virtio, why, len);
#else
	return hwrng_not_compiled_in("virtio", why, len);
#endif
}

static const struct option_spec virtio_options[] = {
	HWRNG_OPTIONS(
		"2560", NULL,
		"virtio_rng.N to select (default: the current one if virtio, else the first listed)"),
};

const struct source_ops source_virtio = {
	.name = "virtio",
	.help = "/dev/hwrng with a virtio-rng backend (virtual machines)",
	.hwrng_family = true,
	/* Default quality 1024 since 6.2; 1000 before (§3). */
	.quality = 1024,
	.options = virtio_options,
	.check = virtio_check,
	.probe = virtio_probe,
	.init = virtio_init,
	.read = hwrng_read,
	.fini = hwrng_fini,
};
