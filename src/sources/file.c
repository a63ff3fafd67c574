// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "file" source: a regular file, a FIFO or a character device named by `path`, as
 * [source file:NAME]. External TRNG drivers feed the daemon through a FIFO; tests and
 * benchmarks use files.
 *
 * End of data: a regular file that ends is exhausted for good (read returns -ENODATA, the
 * framework marks the source failed with "end of file").
 *
 * Each byte once: a regular file is read once, front to back. How far it has been read is
 * kept per file (device and inode) while the file exists, not per open, so that a re-open
 * after a back-off, a reload, or two sources naming the same file go on where the last
 * read stopped; each read claims its range of the file under a lock (pread at the shared
 * offset), so that an old set still reading during a reload cannot overlap a new one.
 * A file that was deleted (replaced by a new file at its path: a new inode) can never be
 * opened again: once no source has it open, its entry and the fd that pinned it go, at the
 * next open or close of a file source (a reload closes the old set's), so that neither
 * the fd nor the file's disk space is held (issue 24: 300 reloads held 300).
 *
 * A FIFO without a writer reads as end of file at once; that is "no data now" (read
 * returns 0): the framework waits 10 ms doubling to 1 s and reads again, so a writer may
 * come and go. Character devices are treated the same way.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "source.h"
#include "util.h"

/*
 * How far a regular file has been read, per file. Each entry holds the file open (pin), so
 * that its inode number cannot be given to a new file while the entry exists: a new file
 * at the same path is a new entry, read from its start. An entry lives while the file has a
 * name (st_nlink > 0) or a source has it open (refs): see prune().
 */
struct file_pos {
	dev_t dev;
	ino_t ino;
	off_t off;
	int pin;
	unsigned int refs; /* sources that have it open (file_priv.pos) */
	struct file_pos *next;
};

static pthread_mutex_t pos_lock = PTHREAD_MUTEX_INITIALIZER;
static struct file_pos *positions;

struct file_priv {
	int fd;
	bool regular;
	struct file_pos *pos; /* regular files */
};

/*
 * Drop the entries of deleted files that no source has open (under pos_lock): nobody can
 * open them again, and their pin holds an fd and the file's blocks.
 */
static void prune(void)
{
	for (struct file_pos **pp = &positions; *pp;) {
		struct file_pos *p = *pp;
		struct stat st;

		if (p->refs == 0 && fstat(p->pin, &st) == 0 && st.st_nlink == 0) {
			*pp = p->next;
			close(p->pin);
			free(p);
		} else {
			pp = &p->next;
		}
	}
}

/*
 * The position of fd's file, st (created at 0), with a reference taken, or NULL when out
 * of memory or fds.
 */
static struct file_pos *file_pos_get(int fd, const struct stat *st)
{
	struct file_pos *p;

	pthread_mutex_lock(&pos_lock);
	prune();
	for (p = positions; p; p = p->next)
		if (p->dev == st->st_dev && p->ino == st->st_ino)
			goto out;
	p = calloc(1, sizeof(*p));
	if (p) {
		p->pin = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (p->pin < 0) {
			free(p);
			p = NULL;
			goto out;
		}
		p->dev = st->st_dev;
		p->ino = st->st_ino;
		p->next = positions;
		positions = p;
	}
out:
	if (p)
		p->refs++;
	pthread_mutex_unlock(&pos_lock);
	return p;
}

/* A source closes its file: the reference goes, and the entries of deleted files. */
static void file_pos_put(struct file_pos *p)
{
	pthread_mutex_lock(&pos_lock);
	p->refs--;
	prune();
	pthread_mutex_unlock(&pos_lock);
}

static int file_check(struct source *src, char *why, size_t len)
{
	const char *path = source_opt_str(src, "path");

	if (!path) {
		snprintf(why, len, "key 'path' is required");
		return -EINVAL;
	}
	return refuse_kernel_random(path, NULL, why, len);
}

static int kind_ok(const char *path, const struct stat *st, char *why, size_t len)
{
	int r = refuse_kernel_random(path, st, why, len);

	if (r < 0)
		return r;
	if (S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode))
		return 0;
	/* A path of the wrong kind is a configuration error, whatever the kind (exit 78). */
	snprintf(why, len, "'%s' is %s, not a regular file, FIFO or character device", path,
		 file_kind(st));
	return -EINVAL;
}

static const char *kind_name(const struct stat *st)
{
	return S_ISREG(st->st_mode) ? "regular file" : S_ISFIFO(st->st_mode) ? "FIFO" : "device";
}

static int file_probe(struct source *src, char *why, size_t len)
{
	const char *path = source_opt_str(src, "path");
	struct stat st;
	int r;

	r = file_check(src, why, len);
	if (r < 0)
		return r;
	if (stat(path, &st) < 0) {
		r = -errno;
		snprintf(why, len, "'%s': %s", path, strerror(errno));
		return r;
	}
	r = kind_ok(path, &st, why, len);
	if (r < 0)
		return r;
	if (access(path, R_OK) < 0) {
		r = -errno;
		snprintf(why, len, "'%s': %s", path, strerror(errno));
		return r;
	}
	snprintf(why, len, "%s %s", kind_name(&st), path);
	return 0;
}

static int file_init(struct source *src, char *why, size_t len)
{
	const char *path = source_opt_str(src, "path");
	struct file_priv *p;
	struct stat st;
	int fd, r;

	r = file_check(src, why, len);
	if (r < 0)
		return r;
	/* Before the open: a socket cannot be opened at all (ENXIO), and is no less wrong. */
	if (stat(path, &st) == 0) {
		r = kind_ok(path, &st, why, len);
		if (r < 0)
			return r;
	}
	fd = open_read_blocking(path);
	if (fd < 0) {
		snprintf(why, len, "cannot open '%s': %s", path, strerror(-fd));
		return fd;
	}
	/* Check what was opened, not what the name pointed to a moment ago. */
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, len, "'%s': %s", path, strerror(errno));
		goto fail;
	}
	r = kind_ok(path, &st, why, len);
	if (r < 0)
		goto fail;
	p = calloc(1, sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		snprintf(why, len, "out of memory");
		goto fail;
	}
	p->fd = fd;
	p->regular = S_ISREG(st.st_mode);
	if (p->regular) {
		p->pos = file_pos_get(fd, &st);
		if (!p->pos) {
			free(p);
			r = -ENOMEM;
			snprintf(why, len, "cannot remember the position in '%s'", path);
			goto fail;
		}
	}
	source_set_priv(src, p);
	return 0;
fail:
	close(fd);
	return r;
}

static ssize_t file_readv(struct source *src, const struct iovec *iov, int cnt)
{
	struct file_priv *p = source_priv(src);
	ssize_t r;

	if (!p)
		return -EBADF;
	if (p->pos) {
		/* Claim the range: no other reader of this file gets these bytes. */
		pthread_mutex_lock(&pos_lock);
		r = preadv(p->fd, iov, cnt, p->pos->off);
		if (r > 0)
			p->pos->off += r;
		pthread_mutex_unlock(&pos_lock);
	} else {
		r = readv(p->fd, iov, cnt);
	}
	if (r < 0)
		return -errno;
	if (r == 0 && p->regular)
		return -ENODATA;
	return r;
}

static ssize_t file_read(struct source *src, void *buf, size_t max)
{
	struct iovec iov = { .iov_base = buf, .iov_len = max };

	return file_readv(src, &iov, 1);
}

static void file_fini(struct source *src)
{
	struct file_priv *p = source_priv(src);

	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	if (p->pos)
		file_pos_put(p->pos);
	free(p);
	source_set_priv(src, NULL);
}

static const struct option_spec file_options[] = {
	{ .key = "path",
	  .type = OPTION_PATH,
	  .help = "regular file, FIFO or character device to read (required)" },
	{ 0 },
};

const struct source_ops source_file = {
	.name = "file",
	.help = "a regular file, FIFO or character device, e.g. fed by an external TRNG",
	.instances = true,
	.default_on = false,
	.hwrng_family = false,
	.path_may_appear = true,
	.quality = 0,
	.options = file_options,
	.check = file_check,
	.probe = file_probe,
	.init = file_init,
	.read = file_read,
	.readv = file_readv,
	.fini = file_fini,
};
