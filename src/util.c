// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		unsigned int d;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		d = (unsigned int)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_uint_why(const char *s, uint64_t min, uint64_t max, uint64_t *ret, char *why,
		   size_t len)
{
	int r = parse_uint(s, min, max, ret);

	if (r == -ERANGE)
		snprintf(why, len, "'%s' is out of range %llu..%llu", s, (unsigned long long)min,
			 (unsigned long long)max);
	else if (r < 0)
		snprintf(why, len, "'%s' is not a decimal number", s);
	return r < 0 ? -EINVAL : 0;
}

int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Days and civil dates: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (eras of
 * 400 years, 146097 days, with years starting on 1 March). */
void utc_from_seconds(int64_t t, struct utc_time *ret)
{
	int64_t days = t / 86400, rem = t % 86400, era;
	unsigned int doe, yoe, doy, mp;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	ret->hour = (unsigned int)(rem / 3600);
	ret->min = (unsigned int)(rem / 60 % 60);
	ret->sec = (unsigned int)(rem % 60);
	days += 719468; /* 0000-03-01 to 1970-01-01 */
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = (unsigned int)(days - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	ret->mday = doy - (153 * mp + 2) / 5 + 1;
	ret->mon = mp < 10 ? mp + 3 : mp - 9;
	ret->year = (int64_t)yoe + era * 400 + (ret->mon <= 2);
}

int utc_to_seconds(const struct utc_time *u, int64_t *ret)
{
	int64_t y = u->year - (u->mon <= 2), era;
	unsigned int yoe, doy, doe;

	if (u->mon < 1 || u->mon > 12 || u->mday < 1 || u->mday > 31 || u->hour > 23 ||
	    u->min > 59 || u->sec > 60 || u->year < -1000000 || u->year > 1000000)
		return -EINVAL;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (u->mon > 2 ? u->mon - 3 : u->mon + 9) + 2) / 5 + u->mday - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	*ret = ((era * 146097 + (int64_t)doe - 719468) * 24 + u->hour) * 3600 + u->min * 60 +
	       u->sec;
	return 0;
}

ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = read(fd, (uint8_t *)buf + done, n - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (done > 0)
				break;
			return -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(fd, (const uint8_t *)buf + done, n - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

int writev_full(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		ssize_t r = writev(fd, iov, MIN(cnt, IOV_MAX));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		for (; cnt > 0 && (size_t)r >= iov->iov_len; iov++, cnt--)
			r -= (ssize_t)iov->iov_len;
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

ssize_t read_text_file(const char *path, char *buf, size_t size)
{
	int fd;
	ssize_t r;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	r = read_full(fd, buf, size);
	close(fd);
	if (r < 0)
		return r;
	if ((size_t)r == size)
		return -EFBIG;
	while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == '\r'))
		r--;
	buf[r] = '\0';
	return r;
}

ssize_t read_text_alloc(const char *path, size_t max, char **text)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t cap = max < 4096 ? max : 4096, len = 0;
	char *buf = NULL;

	*text = NULL;
	if (fd < 0)
		return -errno;
	for (;;) {
		char *more = realloc(buf, cap + 1);
		ssize_t n;

		if (!more) {
			n = -ENOMEM;
		} else {
			buf = more;
			n = read_full(fd, buf + len, cap - len);
		}
		if (n < 0) {
			free(buf);
			close(fd);
			return n;
		}
		len += (size_t)n;
		if (len < cap || cap == max)
			break;
		cap = cap > max / 4 ? max : cap * 4;
	}
	close(fd);
	buf[len] = '\0';
	*text = buf;
	return (ssize_t)len;
}

int write_text_file(const char *path, const char *value)
{
	size_t len = strlen(value);
	char *line = malloc(len + 2);
	int fd, r;

	if (!line)
		return -ENOMEM;
	memcpy(line, value, len);
	line[len] = '\n';
	line[len + 1] = '\0';
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
	} else {
		ssize_t w = write(fd, line, len + 1);

		r = w < 0 ? -errno : (size_t)w == len + 1 ? 0 : -EIO;
		if (close(fd) < 0 && r == 0)
			r = -errno;
	}
	free(line);
	return r;
}

const char *kernel_random_device(const struct stat *st)
{
	if (!S_ISCHR(st->st_mode) || major(st->st_rdev) != 1)
		return NULL;
	if (minor(st->st_rdev) == 8)
		return "/dev/random";
	if (minor(st->st_rdev) == 9)
		return "/dev/urandom";
	return NULL;
}

const char *kernel_random_path(const char *path)
{
	static const char *const names[] = { "/dev/random", "/dev/urandom" };
	char *real = realpath(path, NULL);
	const char *name = NULL;
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(names) && !name; i++)
		if (strcmp(path, names[i]) == 0 || (real && strcmp(real, names[i]) == 0))
			name = names[i];
	free(real);
	if (!name && stat(path, &st) == 0)
		name = kernel_random_device(&st);
	return name;
}

int refuse_kernel_random(const char *path, const struct stat *st, char *why, size_t len)
{
	const char *name = st ? kernel_random_device(st) : kernel_random_path(path);

	if (!name)
		return 0;
	/* Feeding the kernel its own output back as entropy is the defect of peers.md §1.4.9. */
	snprintf(why, len, "refusing %s as a source: it is the kernel's own output", name);
	return -EINVAL;
}

const char *file_kind(const struct stat *st)
{
	return S_ISREG(st->st_mode)    ? "a regular file"
	       : S_ISDIR(st->st_mode)  ? "a directory"
	       : S_ISCHR(st->st_mode)  ? "a character device"
	       : S_ISBLK(st->st_mode)  ? "a block device"
	       : S_ISFIFO(st->st_mode) ? "a FIFO"
	       : S_ISSOCK(st->st_mode) ? "a socket"
	       : S_ISLNK(st->st_mode)  ? "a symbolic link"
				       : "of an unknown kind";
}

int open_read_blocking(const char *path)
{
	int fd, flags;

	/* O_NONBLOCK only for the open itself: a FIFO without a writer would block it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

void wipe(void *p, size_t n)
{
#ifdef HAVE_EXPLICIT_BZERO
	explicit_bzero(p, n);
#else
	memset(p, 0, n);
	__asm__ __volatile__("" : : "r"(p) : "memory");
#endif
}

void unblock_sync_signals(void)
{
	sigset_t sync;

	sigemptyset(&sync);
	sigaddset(&sync, SIGSEGV);
	sigaddset(&sync, SIGBUS);
	sigaddset(&sync, SIGILL);
	sigaddset(&sync, SIGFPE);
	pthread_sigmask(SIG_UNBLOCK, &sync, NULL);
}

void closep(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

void freep(void *p)
{
	free(*(void **)p);
}
