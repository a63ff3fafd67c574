// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table of drivers, in the order -l lists them: the only place that names them all.
 * A driver compiled out for this architecture stays in the table as a stub that says so.
 * Alone in its file so that a test can link its own table instead.
 */
#include "config.h"

#include "source.h"
#include "util.h"

extern const struct source_ops source_hwrng, source_virtio, source_caam, source_via, source_file;
extern const struct source_ops source_rdseed, source_rdrand, source_rndr;

const struct source_ops *const source_drivers[] = {
	&source_hwrng, &source_virtio, &source_caam, &source_via,
	&source_rdseed, &source_rdrand, &source_rndr, &source_file,
};
const size_t source_n_drivers = ARRAY_SIZE(source_drivers);
