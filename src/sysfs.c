// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sysfs.h"
#include "util.h"

/*
 * dir/attr, in the caller's short buffer when it fits (every real sysfs path does), else
 * in a string of its own; NULL when out of memory. Not a PATH_MAX buffer: the start reads
 * sysfs on the main thread, and 4 KiB there was a page of its stack. Free with
 * attr_path_free().
 */
#define ATTR_PATH_BUF 192

static char *attr_path(char *buf, size_t size, const char *dir, const char *attr)
{
	int n = snprintf(buf, size, "%s/%s", dir, attr);
	char *p;

	if (n < 0)
		return NULL;
	if ((size_t)n < size)
		return buf;
	return asprintf(&p, "%s/%s", dir, attr) < 0 ? NULL : p;
}

static void attr_path_free(char *path, const char *buf)
{
	if (path != buf)
		free(path);
}

int sysfs_read(const char *dir, const char *attr, char *buf, size_t size)
{
	char pbuf[ATTR_PATH_BUF], *path = attr_path(pbuf, sizeof(pbuf), dir, attr);
	int r;

	if (!path)
		return -ENOMEM;
	r = (int)read_text_file(path, buf, size);
	attr_path_free(path, pbuf);
	return r;
}

int sysfs_write(const char *dir, const char *attr, const char *value)
{
	char pbuf[ATTR_PATH_BUF], *path = attr_path(pbuf, sizeof(pbuf), dir, attr);
	int r;

	if (!path)
		return -ENOMEM;
	r = write_text_file(path, value);
	attr_path_free(path, pbuf);
	return r;
}

bool sysfs_is_misc_hwrng(const struct stat *st)
{
	char path[64], link[PATH_MAX];
	const char *base;
	ssize_t n;

	if (!S_ISCHR(st->st_mode))
		return false;
	if (major(st->st_rdev) == SYSFS_HWRNG_MAJOR && minor(st->st_rdev) == SYSFS_HWRNG_MINOR)
		return true;
	/* Another node of the same device: sysfs names its class entry hw_random. */
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u", major(st->st_rdev),
		 minor(st->st_rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	base = strrchr(link, '/');
	return strcmp(base ? base + 1 : link, "hw_random") == 0;
}

bool sysfs_is_none(const char *name)
{
	return name[0] == '\0' || strcmp(name, "none") == 0;
}

bool sysfs_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	if (sysfs_is_none(name))
		return false;
	/* One pass over the words: an empty name (which used to match forever) cannot loop. */
	for (const char *s = list; *s;) {
		size_t w;

		s += strspn(s, " \t\n");
		w = strcspn(s, " \t\n");
		if (w == n && memcmp(s, name, n) == 0)
			return true;
		s += w;
	}
	return false;
}

int sysfs_parse_quality(const char *s, unsigned int *q)
{
	uint64_t v;

	if (parse_uint(s, 0, 1024, &v) < 0)
		return -EINVAL;
	*q = (unsigned int)v;
	return 0;
}

/*
 * A test-only build (RNGD_ROOT_TEST_HOOKS: tests/rngd-root-test) points root's steps at a
 * fake sysfs directory in a temporary directory, which is not on sysfs: only there is the
 * file system not checked. The installed rngd has no such switch.
 */
static bool on_sysfs(int fd)
{
	struct statfs sf;

#ifdef RNGD_ROOT_TEST_HOOKS
	if (getenv("RNGD_TEST_SYSFS"))
		return true;
#endif
	return fstatfs(fd, &sf) == 0 && sf.f_type == (typeof(sf.f_type))SYSFS_MAGIC;
}

int sysfs_open_checked(const char *dir, const char *attr, int flags)
{
	char pbuf[ATTR_PATH_BUF], *path = attr_path(pbuf, sizeof(pbuf), dir, attr);
	struct stat st;
	int fd;

	if (!path)
		return -ENOMEM;
	/* No O_TRUNC: nothing may change before the file is known to be sysfs's. */
	fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		fd = -errno;
	attr_path_free(path, pbuf);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (!on_sysfs(fd)) {
		close(fd);
		return -EXDEV;
	}
#ifdef RNGD_ROOT_TEST_HOOKS
	/* A fake attribute is a plain file: make a write replace it, as sysfs does. */
	if ((flags & O_ACCMODE) != O_RDONLY && getenv("RNGD_TEST_SYSFS") && ftruncate(fd, 0) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
#endif
	return fd;
}

int sysfs_fd_read(int fd, char *buf, size_t size)
{
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	n = pread(fd, buf, size, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n == size)
		return -EFBIG;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return (int)n;
}

int sysfs_fd_write(int fd, const char *value)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "%s\n", value);
	ssize_t w;

	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	w = pwrite(fd, line, (size_t)n, 0);
	return w == n ? 0 : w < 0 ? -errno : -EIO;
}
