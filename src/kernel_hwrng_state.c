// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The take-over's state record and the fixed paths (kernel_hwrng_state.h). Whatever is read
 * here may come from a file the daemon's user wrote: every read is bounded (size, lines,
 * entries) and every value checked before it is returned.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_hwrng_state.h"
#include "sysfs.h"
#include "util.h"

#ifdef RNGD_ROOT_TEST_HOOKS
static const char *test_path(const char *var, const char *path)
{
	const char *v = getenv(var);

	return v && v[0] ? v : path;
}
#define FIXED(var, path) test_path(var, path)
#else
#define FIXED(var, path) (path)
#endif

const char *kernel_hwrng_sysfs_dir(void)
{
	return FIXED("RNGD_TEST_SYSFS", "/sys/class/misc/hw_random");
}

const char *kernel_hwrng_runtime_dir(void)
{
	return FIXED("RNGD_TEST_RUNTIME_DIR", RUNSTATEDIR "/rngd");
}

const char *kernel_hwrng_root_dir(void)
{
	return FIXED("RNGD_TEST_ROOT_DIR", RUNSTATEDIR "/rngd-root");
}

char *kernel_hwrng_state_path(void)
{
	char *path;

	if (asprintf(&path, "%s/%s", kernel_hwrng_runtime_dir(), KERNEL_HWRNG_STATE_NAME) < 0)
		return NULL;
	return path;
}

bool kernel_hwrng_name_valid(const char *name)
{
	size_t n = strnlen(name, KERNEL_HWRNG_NAME_SIZE);

	if (n == 0 || n >= KERNEL_HWRNG_NAME_SIZE || sysfs_is_none(name))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= ' ' || c >= 0x7f || c == '/' || c == '=')
			return false;
	}
	return true;
}

int kernel_hwrng_kv_next(const char *text, size_t len, size_t *pos, char *key, size_t key_size,
			 char *value, size_t value_size)
{
	const char *s = text + *pos, *end = text + len, *nl, *eq;
	size_t kn, vn;

	if (*pos >= len)
		return 0;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		nl = end;
	*pos = (size_t)(nl - text) + (nl < end); /* past the newline: always moves on */
	for (const char *c = s; c < nl; c++)
		if ((unsigned char)*c < ' ' && *c != '\t')
			return -EBADMSG; /* NUL, CR or another control byte */
	eq = memchr(s, '=', (size_t)(nl - s));
	if (!eq)
		return -EBADMSG;
	kn = (size_t)(eq - s);
	vn = (size_t)(nl - eq - 1);
	if (kn >= key_size || vn >= value_size)
		return -EBADMSG;
	memcpy(key, s, kn);
	key[kn] = '\0';
	memcpy(value, eq + 1, vn);
	value[vn] = '\0';
	return 1;
}

const struct kernel_hwrng_saved *kernel_hwrng_state_find(const struct kernel_hwrng_state *st,
							 const char *backend)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->saved[i].backend, backend) == 0)
			return &st->saved[i];
	return NULL;
}

int kernel_hwrng_state_add(struct kernel_hwrng_state *st, const char *backend,
			   unsigned int quality)
{
	if (!kernel_hwrng_name_valid(backend) || quality > 1024)
		return -EINVAL;
	if (kernel_hwrng_state_find(st, backend))
		return 0;
	if (st->n >= KERNEL_HWRNG_STATE_MAX)
		return -ENOSPC;
	snprintf(st->saved[st->n].backend, sizeof(st->saved[st->n].backend), "%s", backend);
	st->saved[st->n].quality = quality;
	st->n++;
	return 0;
}

bool kernel_hwrng_state_remove(struct kernel_hwrng_state *st, const char *backend)
{
	for (size_t i = 0; i < st->n; i++) {
		if (strcmp(st->saved[i].backend, backend) == 0) {
			memmove(&st->saved[i], &st->saved[i + 1],
				(st->n - i - 1) * sizeof(st->saved[0]));
			st->n--;
			return true;
		}
	}
	return false;
}

static int bad(char *why, size_t len, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(char *why, size_t len, unsigned int line, const char *fmt, ...)
{
	int n = snprintf(why, len, "line %u: ", line);
	va_list ap;

	if (n > 0 && (size_t)n < len) {
		va_start(ap, fmt);
		vsnprintf(why + n, len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

int kernel_hwrng_state_parse(const char *text, size_t len, struct kernel_hwrng_state *st,
			     char *why, size_t why_len)
{
	char key[16], value[KERNEL_HWRNG_NAME_SIZE];
	const char *pending = NULL; /* a backend= line waiting for its quality= */
	struct kernel_hwrng_state out = { 0 };
	char name[KERNEL_HWRNG_NAME_SIZE] = "";
	unsigned int line = 0, q;
	size_t pos = 0;
	int r;

	while ((r = kernel_hwrng_kv_next(text, len, &pos, key, sizeof(key), value,
					 sizeof(value))) != 0) {
		line++;
		if (r < 0)
			return bad(why, why_len, line, "%s", "not a 'key=value' line of printable text "
				   "(or too long)");
		if (strcmp(key, "sysfs") == 0) {
			continue; /* older rngd wrote it: the directory is fixed, never read */
		} else if (strcmp(key, "backend") == 0) {
			if (pending)
				return bad(why, why_len, line, "backend '%s' has no quality= line",
					   name);
			if (!kernel_hwrng_name_valid(value))
				return bad(why, why_len, line,
					   "backend '%.64s' is not a backend's name", value);
			snprintf(name, sizeof(name), "%s", value);
			pending = name;
		} else if (strcmp(key, "quality") == 0) {
			if (!pending)
				return bad(why, why_len, line, "%s", "quality= without a backend=");
			if (sysfs_parse_quality(value, &q) < 0)
				return bad(why, why_len, line, "quality '%.16s' is not 0..1024",
					   value);
			if (kernel_hwrng_state_find(&out, name))
				return bad(why, why_len, line, "backend '%s' twice", name);
			if (kernel_hwrng_state_add(&out, name, q) < 0)
				return bad(why, why_len, line, "%s", "too many backends");
			pending = NULL;
		} else {
			return bad(why, why_len, line, "unknown key '%.16s'", key);
		}
	}
	if (pending)
		return bad(why, why_len, line, "backend '%s' has no quality= line", name);
	*st = out;
	return 0;
}

int kernel_hwrng_state_format(const struct kernel_hwrng_state *st, char *buf, size_t size)
{
	size_t off = 0;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (size_t i = 0; i < st->n; i++) {
		int n = snprintf(buf + off, size - off, "backend=%s\nquality=%u\n",
				 st->saved[i].backend, st->saved[i].quality);

		if (n < 0 || (size_t)n >= size - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return (int)off;
}

int kernel_hwrng_read_small(int dirfd, const char *name, char *buf, size_t size, struct stat *sb)
{
	struct stat st;
	ssize_t n;
	size_t off = 0;
	int fd, r = 0;

	if (size < 2)
		return -EINVAL;
	/*
	 * Not even opened unless it is a regular file now (a device node would act on open);
	 * the fstat() after the open is what counts (it may have been replaced meanwhile).
	 */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (st.st_size < 0 || (uint64_t)st.st_size >= size)
		r = -EFBIG;
	/* Bounded by size whatever st_size said (the file may grow while it is read). */
	while (r == 0 && off < size - 1) {
		n = read(fd, buf + off, size - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else if (n == 0)
			break;
		else
			off += (size_t)n;
	}
	if (r == 0 && off == size - 1) {
		char extra;

		if (read(fd, &extra, 1) > 0)
			r = -EFBIG;
	}
	close(fd);
	if (r < 0)
		return r;
	buf[off] = '\0';
	if (sb)
		*sb = st;
	return (int)off;
}

const char *kernel_hwrng_read_error(int r)
{
	switch (r) {
	case -ELOOP:
		return "a symlink (not followed)";
	case -EINVAL:
		return "not a regular file";
	case -EFBIG:
		return "too long (more than 4 KiB)";
	default:
		return strerror(-r);
	}
}

int kernel_hwrng_state_read(int dirfd, const char *name, struct kernel_hwrng_state *st,
			    struct stat *sb, char *why, size_t why_len)
{
	char text[KERNEL_HWRNG_STATE_SIZE_MAX + 1];
	int n = kernel_hwrng_read_small(dirfd, name, text, sizeof(text), sb);

	if (n < 0)
		return n;
	if (n == 0) {
		snprintf(why, why_len, "empty");
		return -EBADMSG;
	}
	if (memchr(text, '\0', (size_t)n)) {
		snprintf(why, why_len, "has a NUL byte");
		return -EBADMSG;
	}
	return kernel_hwrng_state_parse(text, (size_t)n, st, why, why_len);
}

/*
 * The text, the temporary name and the directory in one allocation of the sizes this call
 * needs (some 100 bytes): not on the stack, at the bottom of the daemon's deepest call chain
 * (run_daemon, the take-over), and not as 12 KiB of PATH_MAX buffers that moved the heap's
 * top for the process's life (bench/README.md, footprint).
 */
struct state_write_buf {
	char *text, *tmp, *dir;
	size_t text_size, tmp_size;
};

static int write_state_file(const char *path, const struct kernel_hwrng_state *st,
			    const struct state_write_buf *b)
{
	char *tmp = b->tmp, *text = b->text;
	int fd, n, r;

	n = kernel_hwrng_state_format(st, text, b->text_size);
	if (n < 0)
		return n;
	snprintf(tmp, b->tmp_size, "%s.%ld.tmp", path, (long)getpid());
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		char *dir = b->dir;
		const char *slash = strrchr(path, '/');

		/* No status file, no runtime directory yet: make it, as the status file would. */
		snprintf(dir, b->tmp_size, "%.*s", (int)(slash ? slash - path : 0), path);
		if (dir[0] && mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return -errno;
	/*
	 * No fsync: the record outlives a killed or crashed process in the page cache, and a
	 * machine that goes down loses /run with it while its kernel registers the backend
	 * anew at its driver's quality. Unsynced, the file has no blocks yet, and its unlink
	 * at stop costs ext4 less (0.07 ms against 0.2-1.2 ms measured here).
	 */
	r = write_full(fd, text, (size_t)n);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

int kernel_hwrng_state_write(const char *path, const struct kernel_hwrng_state *st)
{
	struct state_write_buf b = { .text_size = 1, .tmp_size = strlen(path) + 32 };
	int r;

	/* Nothing left to give back: no file (an empty one would be refused as tampered). */
	if (st->n == 0)
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	if (b.tmp_size > PATH_MAX + 32)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < st->n; i++)
		b.text_size += strlen(st->saved[i].backend) + sizeof("backend=\nquality=4294967295\n");
	if (b.text_size > KERNEL_HWRNG_STATE_SIZE_MAX)
		b.text_size = KERNEL_HWRNG_STATE_SIZE_MAX;
	b.text = malloc(b.text_size + 2 * b.tmp_size);
	if (!b.text)
		return -ENOMEM;
	b.tmp = b.text + b.text_size;
	b.dir = b.tmp + b.tmp_size;
	r = write_state_file(path, st, &b);
	free(b.text);
	return r;
}
