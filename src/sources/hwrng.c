// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hwrng: the kernel's hw_random device, /dev/hwrng (misc 10:183), and its sysfs directory
 * (kernel-interfaces.md §2). The reader is shared with the virtio and caam profiles.
 *
 * The sysfs logic (backend, quality) runs only when the device is the hwrng class's own node
 * (misc 10:183, or a node sysfs calls hw_random); a regular file, a FIFO or another character
 * device (an external TRNG driver, a pty) is just read, and credited nothing unless a quality
 * is configured: nothing says what it holds.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sources/hwrng.h"
#include "sysfs.h"
#include "util.h"

#define NAME_SIZE 128
#define LIST_SIZE 1024

/* What the hw_random sysfs directory says, and what the source should use. */
struct hwrng_sysfs {
	char current[NAME_SIZE];
	char available[LIST_SIZE];
	char target[NAME_SIZE]; /* backend to use; "" when unknown (no sysfs) */
};

struct hwrng_state {
	const struct hwrng_profile *quirks;
	int fd;
	size_t read_size;
	int hw_error_counter;
	bool misc; /* the misc hwrng: rng_quality applies */
	bool bulk; /* a FIFO or regular file: read many blocks at once */
	/* init selected fs.target (rng_current was fs.current, automatic when prev_auto). */
	bool changed, prev_auto;
	struct hwrng_sysfs fs;
};

static const struct hwrng_profile hwrng_profile_plain = {
	.driver = "hwrng",
	.unit = 1,
};

/*
 * Anything but the hwrng class's node is credited nothing unless "quality" says otherwise:
 * a pty or a FIFO fed a predictable stream must not pass for the hardware. The daemon (tell)
 * says so once, with how to set a quality.
 */
static void other_device_quality(struct source *src, const char *dev, const struct stat *st,
				 bool tell)
{
	const char *name = source_name(src);

	source_set_quality(src, 0);
	if (tell && !source_opt_is_set(src, "quality"))
		source_notice_once(src, "not-hwrng",
				   "%s is %s, not the kernel's hwrng device (misc 10:183): its data "
				   "is fed with no credit; to credit it, set quality = N (0..1024) "
				   "in [source %s] or give -O %s:quality:N",
				   dev,
				   S_ISCHR(st->st_mode)	   ? "a character device"
				   : S_ISFIFO(st->st_mode) ? "a FIFO"
							   : "a regular file",
				   name, name);
}

/* Whether the device can be read as a source; *misc tells whether it is /dev/hwrng. */
static int classify(const char *path, const struct stat *st, bool *misc, char *why, size_t len)
{
	*misc = sysfs_is_misc_hwrng(st);
	if (*misc || S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))
		return 0;
	if (S_ISCHR(st->st_mode))
		return refuse_kernel_random(path, st, why, len);
	/* A path of the wrong kind is a configuration error, whatever the kind (exit 78). */
	snprintf(why, len, "%s is %s, not a character device, regular file or FIFO", path,
		 file_kind(st));
	return -EINVAL;
}

static bool backend_matches(const struct hwrng_profile *p, const char *name)
{
	if (!p->backend)
		return true;
	if (p->prefix)
		return strncmp(name, p->backend, strlen(p->backend)) == 0 &&
		       name[strlen(p->backend)] != '\0';
	return strcmp(name, p->backend) == 0;
}

/*
 * Find the first word of the space-separated list that matches profile p (or equals name
 * when name is not NULL); copy it to out. true when found.
 */
static bool find_in_list(const char *list, const struct hwrng_profile *p, const char *name,
			 char *out, size_t size)
{
	const char *s = list;

	while (*s) {
		size_t n;

		s += strspn(s, " \t\n");
		n = strcspn(s, " \t\n");
		if (n > 0 && n < size) {
			char word[NAME_SIZE];

			memcpy(word, s, n);
			word[n] = '\0';
			if (name ? strcmp(word, name) == 0
				 : !sysfs_is_none(word) && backend_matches(p, word)) {
				snprintf(out, size, "%s", word);
				return true;
			}
		}
		s += n;
	}
	return false;
}

/*
 * Read rng_current and rng_available and decide which backend to use: the configured one,
 * else for a profile with a backend the current one when it fits or the first available
 * one that does, else the current one. No side effects.
 */
static int sysfs_pick(struct source *src, const struct hwrng_profile *p, struct hwrng_sysfs *fs,
		      char *why, size_t len)
{
	const char *dir = source_opt_str(src, "sysfs");
	/* caam's default "rng-caam" is documentation: the profile requires it anyway. */
	const char *want =
		source_opt_is_set(src, "backend") ? source_opt_str(src, "backend") : NULL;
	bool need = want || p->backend;
	int r;

	memset(fs, 0, sizeof(*fs));
	r = sysfs_read(dir, "rng_current", fs->current, sizeof(fs->current));
	if (r == -ENOENT && !need)
		return 0; /* no sysfs (container, old kernel): just read the device */
	if (r < 0) {
		snprintf(why, len, "cannot read %s/rng_current: %s", dir, strerror(-r));
		return r;
	}
	if (!need) {
		if (sysfs_is_none(fs->current)) {
			snprintf(why, len, "no current hwrng backend (rng_current is none)");
			return -ENODEV;
		}
		snprintf(fs->target, sizeof(fs->target), "%s", fs->current);
		return 0;
	}

	r = sysfs_read(dir, "rng_available", fs->available, sizeof(fs->available));
	if (r < 0) {
		snprintf(why, len, "cannot read %s/rng_available: %s", dir, strerror(-r));
		return r;
	}
	if (want) {
		if (sysfs_is_none(want) || !backend_matches(p, want)) {
			snprintf(why, len, "backend '%s' is not a %s%s backend", want,
				 p->backend ? p->backend : "usable", p->prefix ? "N" : "");
			return -EINVAL;
		}
		if (!find_in_list(fs->available, p, want, fs->target, sizeof(fs->target))) {
			char any[NAME_SIZE];

			snprintf(why, len, "backend '%s' not available (available: %s)", want,
				 fs->available);
			/*
			 * With other backends registered it is a wrong name (a configuration
			 * error); with none yet, its module may still bind (waiting).
			 */
			return find_in_list(fs->available, p, NULL, any, sizeof(any)) ? -EINVAL
										: -ENODEV;
		}
		return 0;
	}
	if (!sysfs_is_none(fs->current) && backend_matches(p, fs->current)) {
		snprintf(fs->target, sizeof(fs->target), "%s", fs->current);
		return 0;
	}
	if (!find_in_list(fs->available, p, NULL, fs->target, sizeof(fs->target))) {
		snprintf(why, len, "no %s%s backend (available: %s)", p->backend,
			 p->prefix ? "N" : "", fs->available);
		return -ENODEV;
	}
	return 0;
}

int hwrng_not_compiled_in(const char *driver, char *why, size_t len)
{
	snprintf(why, len, "not compiled in (configured with --disable-source-%s)", driver);
	return -EOPNOTSUPP;
}

int hwrng_probe(struct source *src, const struct hwrng_profile *p, char *why, size_t len)
{
	const char *dev = source_opt_str(src, "device");
	struct hwrng_sysfs fs;
	struct stat st;
	bool misc;
	int r;

	if (stat(dev, &st) < 0) {
		r = -errno;
		snprintf(why, len, "cannot open %s: %s", dev, strerror(-r));
		return r;
	}
	r = classify(dev, &st, &misc, why, len);
	if (r < 0)
		return r;
	if (access(dev, R_OK) < 0) {
		r = -errno;
		snprintf(why, len, "cannot open %s: %s", dev, strerror(-r));
		return r;
	}
	if (!misc) {
		other_device_quality(src, dev, &st, false);
		snprintf(why, len, "%s", dev);
		return 0;
	}
	r = sysfs_pick(src, p, &fs, why, len);
	if (r < 0)
		return r;
	snprintf(why, len, "%s", fs.target[0] ? fs.target : dev);
	return 0;
}

/*
 * Make fs->target the current backend. *changed tells whether rng_current was written.
 *
 * Policy: a successful selection stays in effect after fini, like an admin's echo. fini
 * may run after privileges are dropped, when sysfs is no longer writable, and restoring on
 * every back-off re-open would flip the backend to and fro. Only a failed init puts the
 * previous selection back (restore_backend).
 */
static int select_backend(const char *dir, const struct hwrng_sysfs *fs, bool *changed, char *why,
			  size_t len)
{
	char now[NAME_SIZE];
	int r;

	*changed = false;
	if (!fs->target[0] || strcmp(fs->target, fs->current) == 0)
		return 0;
	r = sysfs_write(dir, "rng_current", fs->target);
	if (r < 0) {
		snprintf(why, len, "cannot select backend '%s' in %s/rng_current: %s", fs->target,
			 dir, strerror(-r));
		return r;
	}
	*changed = true;
	/* An unknown name is accepted without effect (kernel-interfaces.md §2.2): re-read. */
	r = sysfs_read(dir, "rng_current", now, sizeof(now));
	if (r < 0) {
		snprintf(why, len, "cannot read %s/rng_current: %s", dir, strerror(-r));
		return r;
	}
	if (strcmp(now, fs->target) != 0) {
		snprintf(why, len,
			 "backend '%s' did not take effect (rng_current is '%s'; available: %s)",
			 fs->target, now, fs->available);
		return -ENODEV;
	}
	return 0;
}

/*
 * Put back the selection found at init. A selection the kernel made by itself
 * (rng_selected 0) is restored by writing "", which lets it choose again.
 */
static void restore_backend(const char *dir, const struct hwrng_sysfs *fs, bool prev_auto)
{
	char now[NAME_SIZE];

	if (sysfs_read(dir, "rng_current", now, sizeof(now)) >= 0 && !prev_auto &&
	    strcmp(now, fs->current) == 0)
		return;
	(void)sysfs_write(dir, "rng_current", prev_auto ? "" : fs->current);
}

/* Quirks by backend name, so that plain hwrng on a CAAM handles its errors as caam does. */
static const struct hwrng_profile *quirks_for(const struct hwrng_profile *p, const char *backend)
{
	if (p->backend || !backend[0])
		return p;
	if (backend_matches(&hwrng_profile_virtio, backend))
		return &hwrng_profile_virtio;
	if (backend_matches(&hwrng_profile_caam, backend))
		return &hwrng_profile_caam;
	return p;
}

/* The backend's rng_quality, when there is one, as the found quality. */
static void read_quality(struct source *src)
{
	char buf[16];
	unsigned int q;

	/* Absent before 5.18; ENODEV without a current rng: keep what was found before. */
	if (sysfs_read(source_opt_str(src, "sysfs"), "rng_quality", buf, sizeof(buf)) >= 0 &&
	    sysfs_parse_quality(buf, &q) == 0)
		source_set_quality(src, q);
}

int hwrng_init(struct source *src, const struct hwrng_profile *p, char *why, size_t len)
{
	const char *dev = source_opt_str(src, "device");
	const char *dir = source_opt_str(src, "sysfs");
	struct hwrng_state *st = NULL;
	struct hwrng_sysfs fs = { 0 };
	bool misc, changed = false, prev_auto = false;
	struct stat sb;
	int fd, r;

	/* Before the open: a socket cannot be opened at all (ENXIO), and is no less wrong. */
	if (stat(dev, &sb) == 0) {
		r = classify(dev, &sb, &misc, why, len);
		if (r < 0)
			return r;
	}
	/* Reads block; a FIFO without a writer does not block the open. O_RDONLY (§2.1). */
	fd = open_read_blocking(dev);
	if (fd < 0) {
		snprintf(why, len, "cannot open %s: %s", dev, strerror(-fd));
		return fd;
	}
	if (fstat(fd, &sb) < 0) {
		r = -errno;
		snprintf(why, len, "cannot stat %s: %s", dev, strerror(-r));
		goto fail;
	}
	r = classify(dev, &sb, &misc, why, len);
	if (r < 0)
		goto fail;

	if (misc) {
		char buf[16];

		r = sysfs_pick(src, p, &fs, why, len);
		if (r < 0)
			goto fail;
		if (sysfs_read(dir, "rng_selected", buf, sizeof(buf)) >= 0)
			prev_auto = strcmp(buf, "0") == 0;
		r = select_backend(dir, &fs, &changed, why, len);
		if (r < 0)
			goto fail;
		read_quality(src);
	} else {
		other_device_quality(src, dev, &sb, true);
	}

	st = calloc(1, sizeof(*st));
	if (!st) {
		r = -ENOMEM;
		snprintf(why, len, "out of memory");
		goto fail;
	}
	st->fd = fd;
	st->quirks = quirks_for(p, fs.target);
	st->read_size = (size_t)source_opt_uint(src, "read-size");
	st->hw_error_counter = st->quirks->hw_errors ? source_counter(src, "hardware-errors") : -1;
	st->misc = misc;
	st->bulk = !misc && (S_ISREG(sb.st_mode) || S_ISFIFO(sb.st_mode));
	/*
	 * A FIFO holds 64 KiB by default: its writer and this reader would take turns every
	 * 64 KiB, a context switch each. Ask for 1 MiB (the default pipe-max-size); best effort.
	 */
	if (S_ISFIFO(sb.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
	st->changed = changed;
	st->prev_auto = prev_auto;
	st->fs = fs;
	source_set_priv(src, st);
	snprintf(why, len, "%s", fs.target[0] ? fs.target : dev);
	return 0;

fail:
	if (changed)
		restore_backend(dir, &fs, prev_auto);
	close(fd);
	return r;
}

int hwrng_check(struct source *src, const struct hwrng_profile *p, char *why, size_t len)
{
	const char *want = source_opt_str(src, "backend");
	const char *device = source_opt_str(src, "device");

	if (device) {
		int r = refuse_kernel_random(device, NULL, why, len);

		if (r < 0)
			return r;
	}

	if (want && (sysfs_is_none(want) || !backend_matches(p, want))) {
		if (p->backend)
			snprintf(why, len, "backend '%s' is not a %s%s backend", want, p->backend,
				 p->prefix ? "N" : "");
		else
			snprintf(why, len, "backend '%s' would leave no hwrng backend", want);
		return -EINVAL;
	}
	if (p->unit > 1 && source_opt_uint(src, "read-size") % p->unit != 0) {
		snprintf(why, len, "read-size must be a multiple of %zu for %s", p->unit,
			 p->driver);
		return -EINVAL;
	}
	return 0;
}

/*
 * The quality of what a read just returned, from the backend it came from (so that each
 * block is credited at its own backend's, stamped at read time): backend was current before
 * the read; when it still is after it, the take-over's kept quality for it, else its
 * rng_quality (so an administrator who lowers it is obeyed from the next read on); when
 * the kernel switched backends meanwhile, 0 (what came from which is unknown).
 */
static void read_quality_of(struct source *src, const char *backend)
{
	const char *dir = source_opt_str(src, "sysfs");
	char after[NAME_SIZE], buf[16];
	unsigned int q;
	uint64_t v;

	if (sysfs_read(dir, "rng_quality", buf, sizeof(buf)) < 0 ||
	    parse_uint(buf, 0, 1024, &v) < 0)
		v = UINT64_MAX; /* before 5.18, or no current backend now */
	if (sysfs_read(dir, "rng_current", after, sizeof(after)) < 0)
		return;
	if (strcmp(after, backend) != 0)
		source_set_quality(src, 0);
	else if (source_kept_quality(src, backend, &q))
		source_set_quality(src, q);
	else if (v != UINT64_MAX)
		source_set_quality(src, (unsigned int)v);
}

ssize_t hwrng_read(struct source *src, void *buf, size_t max)
{
	struct hwrng_state *st = source_priv(src);
	char before[NAME_SIZE];
	size_t n;
	ssize_t r;

	if (!st)
		return -EBADF;
	n = MIN(max, st->read_size);
	if (n >= st->quirks->unit)
		n -= n % st->quirks->unit;
	/*
	 * A blocking read returns the full size unless a signal arrives (then the partial
	 * count, or EINTR when nothing was read). Leftovers of the kernel's 64-byte chunk go
	 * to the next reader, so short reads waste nothing (§2.1).
	 */
	if (st->misc &&
	    sysfs_read(source_opt_str(src, "sysfs"), "rng_current", before, sizeof(before)) < 0)
		before[0] = '\0';
	r = read(st->fd, buf, n);
	if (r > 0 && st->misc && before[0])
		read_quality_of(src, before);
	if (r >= 0)
		return r; /* 0: end of a regular file or a FIFO without writer */
	switch (errno) {
	case EAGAIN:
		return 0;
	case EINVAL:
	case EIO:
		if (st->quirks->hw_errors) {
			/* CAAM: "RNG: Hardware error" reaches userspace as EINVAL (§4). */
			source_counter_add(src, st->hw_error_counter, 1);
			return -EINVAL;
		}
		return -errno;
	default:
		return -errno;
	}
}

/*
 * A FIFO or a regular file (-r FILE, a pipeline's input) is read as fast as it gives:
 * straight into several free slots of the ring at once (one readv(2) for up to
 * SOURCE_READ_AHEAD bytes, not one read per 2500-byte block). A device reads read-size
 * bytes into the first buffer, as hwrng_read().
 */
static ssize_t hwrng_readv(struct source *src, const struct iovec *iov, int cnt)
{
	struct hwrng_state *st = source_priv(src);
	ssize_t r;

	if (!st)
		return -EBADF;
	if (!st->bulk)
		return hwrng_read(src, iov[0].iov_base, iov[0].iov_len);
	r = readv(st->fd, iov, cnt);
	if (r >= 0)
		return r;
	return errno == EAGAIN ? 0 : -errno;
}

void hwrng_fini(struct source *src)
{
	struct hwrng_state *st = source_priv(src);

	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	/* The daemon did not start: like a failed init, put the previous selection back. */
	if (st->changed && source_start_failed(src))
		restore_backend(source_opt_str(src, "sysfs"), &st->fs, st->prev_auto);
	free(st);
	source_set_priv(src, NULL);
}

static int hwrng_plain_check(struct source *src, char *why, size_t len)
{
	return hwrng_check(src, &hwrng_profile_plain, why, len);
}

static int hwrng_plain_probe(struct source *src, char *why, size_t len)
{
	return hwrng_probe(src, &hwrng_profile_plain, why, len);
}

static int hwrng_plain_init(struct source *src, char *why, size_t len)
{
	return hwrng_init(src, &hwrng_profile_plain, why, len);
}

static const struct option_spec hwrng_options[] = {
	HWRNG_OPTIONS("2500", NULL,
		      "backend to select in rng_current before opening (default: the current one)"),
};

const struct source_ops source_hwrng = {
	.name = "hwrng",
	.help = "the kernel's hardware RNG device /dev/hwrng (current backend)",
	.default_on = true,
	.hwrng_family = true,
	.quality = 1024,
	.options = hwrng_options,
	.check = hwrng_plain_check,
	.probe = hwrng_plain_probe,
	.init = hwrng_plain_init,
	.read = hwrng_read,
	.readv = hwrng_readv,
	.fini = hwrng_fini,
};
