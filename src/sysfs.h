/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One attribute of a sysfs directory (dir/attr), read or written as a short text line:
 * the hwrng source's rng_current/rng_available and kernel_hwrng.c's rng_quality. Alone in
 * its object so that the tests' --wrap of read_text_file()/write_text_file() sees its calls.
 */
#ifndef RNGD_SYSFS_H
#define RNGD_SYSFS_H

#include <stddef.h>

/* dir/attr into buf, trailing newline removed (read_text_file()). Length or -errno. */
int sysfs_read(const char *dir, const char *attr, char *buf, size_t size);

/* value and a newline to dir/attr in one write (write_text_file()). 0 or -errno. */
int sysfs_write(const char *dir, const char *attr, const char *value);

#endif
