// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "sysfs.h"
#include "util.h"

int sysfs_read(const char *dir, const char *attr, char *buf, size_t size)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, attr) >= sizeof(path))
		return -ENAMETOOLONG;
	return (int)read_text_file(path, buf, size);
}

int sysfs_write(const char *dir, const char *attr, const char *value)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, attr) >= sizeof(path))
		return -ENAMETOOLONG;
	return write_text_file(path, value);
}
