/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The /dev/hwrng reader shared by the hwrng-family drivers (hwrng.c, virtio.c, caam.c).
 * virtio and caam are profiles of this reader: they require and select their backend
 * through sysfs and apply its quirks. Internal to src/sources/.
 */
#ifndef RNGD_SOURCES_HWRNG_H
#define RNGD_SOURCES_HWRNG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "source.h"

struct hwrng_profile {
	const char *driver; /* "virtio"; used in reasons */
	/*
	 * The backend this profile is for: an exact name ("rng-caam") or, with prefix, the
	 * start of one ("virtio_rng."). NULL for the plain hwrng profile, which takes no
	 * backend of its own.
	 */
	const char *backend;
	bool prefix;
	/* Reads of at least unit bytes are rounded down to a multiple of it. */
	size_t unit;
	/* EINVAL and EIO from read() are hardware errors: counted, returned as -EINVAL. */
	bool hw_errors;
};

extern const struct source_ops source_hwrng, source_virtio, source_caam;

extern const struct hwrng_profile hwrng_profile_virtio;
extern const struct hwrng_profile hwrng_profile_caam;

/* The option table shared by the family; only defaults and help differ. */
/* clang-format off */
#define HWRNG_OPTIONS(read_size_def, backend_def, backend_help)				\
	{ .key = "device", .type = OPTION_PATH, .def = "/dev/hwrng",			\
	  .help = "device to read: the misc hwrng (10:183), or a regular file or FIFO" },	\
	{ .key = "read-size", .type = OPTION_UINT, .def = read_size_def,			\
	  .min = 16, .max = 65536,								\
	  .help = "largest single read in bytes (larger: fewer system calls)" },		\
	{ .key = "backend", .type = OPTION_STRING, .def = backend_def,			\
	  .help = backend_help },								\
	{ .key = "sysfs", .type = OPTION_PATH, .def = "/sys/class/misc/hw_random",	\
	  .help = "hw_random sysfs directory (rng_current, rng_available, rng_quality)" },	\
	{ .key = NULL }
/* clang-format on */

/*
 * Probe for profile p: the device exists and is readable; when it is the misc hwrng, the
 * backend the profile needs (or the configured one) is available, else a current backend
 * exists. No side effects, never reads the device. 0 with a short description (the
 * backend name, or the device path) in why, or -errno with the reason in why.
 */
int hwrng_probe(struct source *src, const struct hwrng_profile *p, char *why, size_t len);

/*
 * Open the device and, when it is the misc hwrng, select the backend (configured, or the
 * one the profile requires) through rng_current, verify it by re-reading, and report
 * rng_quality with source_set_quality(). A selection stays in effect after fini; a failed
 * init puts the previous one back. 0 with the backend name in why, or -errno with why.
 */
int hwrng_init(struct source *src, const struct hwrng_profile *p, char *why, size_t len);

/*
 * probe and init of a profile left out by configure (--disable-source-DRIVER): says so in
 * why and returns -EOPNOTSUPP, so that the source is absent and 'rngd -l' tells why.
 */
int hwrng_not_compiled_in(const char *driver, char *why, size_t len);

/*
 * Check the backend option against profile p (virtio: "virtio_rng.*", caam: "rng-caam")
 * and, for a profile with a unit above 1, that read-size is a multiple of it.
 */
int hwrng_check(struct source *src, const struct hwrng_profile *p, char *why, size_t len);

/*
 * One blocking read of min(max, read-size) bytes (rounded to the profile's unit). Returns
 * bytes; 0 for EAGAIN and for end of file of a regular file or FIFO; -EINTR as is;
 * -EINVAL for a hardware error of a backend with hw_errors; other errors as -errno.
 */
ssize_t hwrng_read(struct source *src, void *buf, size_t max);

/* Close and free; copes with a failed init. */
void hwrng_fini(struct source *src);

#endif
