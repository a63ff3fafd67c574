// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the hwrng-family drivers (src/sources/hwrng.c, virtio.c, caam.c), called
 * directly through the fake source double, against a fake sysfs tree in a temp directory
 * and a regular file or FIFO as the device.
 *
 * Link-time wraps (Makefile.am):
 *  - stat/fstat: the file named by fake_misc_path looks like the misc hwrng, char 10:183,
 *    so the sysfs code path runs without the real device;
 *  - read: records the size asked of the device and injects errors (read_errno);
 *  - write_text_file: writes to the fake rng_current behave like the kernel's: a known name
 *    or "none" is selected, "" picks the first available, an unknown name is accepted and
 *    changes nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_source.h"
#include "sources/hwrng.h"
#include "util.h"

#define DEV_SIZE 65536

static char tmpdir[64];
static char sysfs_dir[PATH_MAX];
static char dev_path[PATH_MAX];
static char opt_dev[PATH_MAX + 16];
static char opt_sysfs[PATH_MAX + 16];

/* Wrap state. */
static bool fake_misc; /* dev_path is the misc hwrng */
static ino_t dev_ino;
static dev_t dev_dev;
static int read_errno; /* next device read fails with this */
static size_t last_read_size;
static unsigned int current_writes;
static int write_errno;	       /* writes to rng_current fail with this */
static const char *write_sets; /* the next write to rng_current sets this instead */
static const char *switch_to;  /* the next device read: the kernel switches to this meanwhile */

int __real_stat(const char *path, struct stat *st);
int __real_fstat(int fd, struct stat *st);
ssize_t __real_read(int fd, void *buf, size_t n);
int __real_write_text_file(const char *path, const char *value);
int __wrap_stat(const char *path, struct stat *st);
int __wrap_fstat(int fd, struct stat *st);
ssize_t __wrap_read(int fd, void *buf, size_t n);
int __wrap_write_text_file(const char *path, const char *value);

static void make_misc(struct stat *st)
{
	st->st_mode = S_IFCHR | 0600;
	st->st_rdev = makedev(10, 183);
}

int __wrap_stat(const char *path, struct stat *st)
{
	int r = __real_stat(path, st);

	if (r == 0 && fake_misc && strcmp(path, dev_path) == 0)
		make_misc(st);
	return r;
}

static bool is_dev(const struct stat *st)
{
	return dev_ino && st->st_ino == dev_ino && st->st_dev == dev_dev;
}

int __wrap_fstat(int fd, struct stat *st)
{
	int r = __real_fstat(fd, st);

	if (r == 0 && fake_misc && is_dev(st))
		make_misc(st);
	return r;
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	struct stat st;

	if (__real_fstat(fd, &st) == 0 && is_dev(&st)) {
		last_read_size = n;
		if (switch_to) {
			char path[PATH_MAX + 32];
			FILE *f;

			snprintf(path, sizeof(path), "%s/rng_current", sysfs_dir);
			f = fopen(path, "we");
			if (f) {
				fprintf(f, "%s\n", switch_to);
				fclose(f);
			}
			switch_to = NULL;
		}
		if (read_errno) {
			errno = read_errno;
			return -1;
		}
	}
	return __real_read(fd, buf, n);
}

static void put(const char *attr, const char *value)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysfs_dir, attr);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f, "%s\n", value);
	assert_int_equal(fclose(f), 0);
}

static const char *get(const char *attr)
{
	static char buf[256];
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", sysfs_dir, attr);
	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return NULL;
	return buf;
}

static bool in_available(const char *name)
{
	char list[260]; /* " " + up to 255 + " " */
	const char *avail = get("rng_available");

	assert_non_null(avail);
	snprintf(list, sizeof(list), " %s ", avail);
	for (char *w = strtok(list, " "); w; w = strtok(NULL, " "))
		if (strcmp(w, name) == 0)
			return true;
	return false;
}

int __wrap_write_text_file(const char *path, const char *value)
{
	char cur[PATH_MAX + 32];

	snprintf(cur, sizeof(cur), "%s/rng_current", sysfs_dir);
	if (strcmp(path, cur) != 0)
		return __real_write_text_file(path, value);
	current_writes++;
	if (write_errno)
		return -write_errno;
	if (write_sets) {
		put("rng_current", write_sets);
		write_sets = NULL;
		put("rng_selected", "1");
	} else if (value[0] == '\0') {
		char first[64] = "none";

		sscanf(get("rng_available"), "%63s", first);
		put("rng_current", first);
		put("rng_selected", "0");
	} else if (in_available(value)) {
		put("rng_current", value);
		put("rng_selected", "1");
	}
	/* An unknown name: success, no change (kernel-interfaces.md §2.2). */
	return 0;
}

static void sysfs_tree(const char *current, const char *available, const char *quality)
{
	put("rng_current", current);
	put("rng_available", available);
	put("rng_selected", "0");
	if (quality) {
		put("rng_quality", quality);
	} else {
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/rng_quality", sysfs_dir);
		unlink(path);
	}
}

static int setup(void **state)
{
	uint8_t buf[DEV_SIZE];
	struct stat st;
	int fd;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rngd-test-hwrng-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(sysfs_dir, sizeof(sysfs_dir), "%s/sys", tmpdir);
	snprintf(dev_path, sizeof(dev_path), "%s/dev", tmpdir);
	snprintf(opt_dev, sizeof(opt_dev), "device=%s", dev_path);
	snprintf(opt_sysfs, sizeof(opt_sysfs), "sysfs=%s", sysfs_dir);
	if (mkdir(sysfs_dir, 0700) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	fd = open(dev_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || write_full(fd, buf, sizeof(buf)) < 0 || __real_fstat(fd, &st) < 0)
		return -1;
	close(fd);
	dev_ino = st.st_ino;
	dev_dev = st.st_dev;
	fake_misc = true;
	read_errno = 0;
	last_read_size = 0;
	current_writes = 0;
	write_errno = 0;
	write_sets = NULL;
	sysfs_tree("virtio_rng.0", "virtio_rng.0 none", "1024");
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	fake_misc = false;
	dev_ino = 0;
	return nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* The virtio and caam profiles can be left out by configure; their tests then skip. */
#ifdef ENABLE_SOURCE_VIRTIO
#define BUILT_virtio true
#else
#define BUILT_virtio false
#endif
#ifdef ENABLE_SOURCE_CAAM
#define BUILT_caam true
#else
#define BUILT_caam false
#endif
#define SKIP_IF_COMPILED_OUT(name)                                                          \
	do {                                                                                \
		if (!BUILT_##name) {                                                        \
			print_message(#name " source compiled out (--disable-source-" #name \
				      "); skipped\n");                                       \
			skip();                                                             \
		}                                                                           \
	} while (0)

static struct source *new_src(const struct source_ops *ops, const char *o1, const char *o2)
{
	const char *opts[] = { opt_dev, opt_sysfs, o1, o2, NULL };

	return fake_source_new(ops, NULL, opts);
}

/* The plain profile on the fake misc device: backend and quality from sysfs. */
static void test_misc_current_backend(void **state)
{
	struct source *src;
	char why[256];
	uint8_t buf[2500];

	sysfs_tree("tpm-rng-0", "tpm-rng-0 virtio_rng.0 none", "700");
	src = new_src(&source_hwrng, NULL, NULL);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), 0);
	assert_string_equal(why, "tpm-rng-0");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, "tpm-rng-0");
	assert_int_equal(fake_source_found_quality(src), 700);
	assert_int_equal(current_writes, 0);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 2500);
	assert_int_equal(last_read_size, 2500);
	assert_int_equal(source_hwrng.read(src, buf, 100), 100);

	/*
	 * Issue 12: an administrator lowers rng_quality; the reader obeys from the next read
	 * on, without a re-open.
	 */
	put("rng_quality", "100");
	assert_int_equal(source_hwrng.read(src, buf, 100), 100);
	assert_int_equal(fake_source_found_quality(src), 100);
	source_hwrng.fini(src);
	fake_source_free(src);
}

/*
 * Each read is worth the quality of the backend it came from (issue 18: stamped at read
 * time): the take-over's kept quality only for the backend it holds, the other backend's
 * rng_quality after a switch, 0 for a read during which the kernel switched.
 */
static void test_quality_of_each_read(void **state)
{
	struct source *src;
	char why[256];
	uint8_t buf[100];

	(void)state;
	sysfs_tree("virtio_rng.0", "virtio_rng.0 tpm-rng-0 none", "0"); /* taken over: 0 */
	src = new_src(&source_hwrng, NULL, NULL);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	fake_source_keep_quality(src, "virtio_rng.0", 1024);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 100);
	assert_int_equal(fake_source_found_quality(src), 1024);

	/* The kernel switches during a read: what came from which is unknown: 0. */
	put("rng_quality", "512");
	switch_to = "tpm-rng-0";
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 100);
	assert_int_equal(fake_source_found_quality(src), 0);
	/* The next read is the other backend's: its own quality, not virtio's kept 1024. */
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 100);
	assert_int_equal(fake_source_found_quality(src), 512);
	/* Back to the held one: its kept quality again. */
	put("rng_current", "virtio_rng.0");
	put("rng_quality", "0");
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 100);
	assert_int_equal(fake_source_found_quality(src), 1024);
	/* Nothing kept (given back, or another mode): rng_quality. */
	fake_source_keep_quality(src, NULL, -1);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 100);
	assert_int_equal(fake_source_found_quality(src), 0);
	source_hwrng.fini(src);
	fake_source_free(src);
}

static void test_quality_absent(void **state)
{
	struct source *src = new_src(&source_hwrng, NULL, NULL);
	char why[256];

	sysfs_tree("virtio_rng.0", "virtio_rng.0 none", NULL);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_int_equal(fake_source_found_quality(src), -1);
	source_hwrng.fini(src);

	put("rng_quality", "junk");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_int_equal(fake_source_found_quality(src), -1);
	source_hwrng.fini(src);
	fake_source_free(src);
}

static void test_no_current_backend(void **state)
{
	struct source *src = new_src(&source_hwrng, NULL, NULL);
	char why[256];

	sysfs_tree("none", "virtio_rng.0 none", NULL);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no current hwrng backend (rng_current is none)");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no current hwrng backend (rng_current is none)");
	assert_null(source_priv(src));
	source_hwrng.fini(src);
	assert_int_equal(current_writes, 0);
	fake_source_free(src);
}

static void test_select_backend(void **state)
{
	struct source *src = new_src(&source_hwrng, "backend=tpm-rng-0", NULL);
	char why[256];

	sysfs_tree("virtio_rng.0", "virtio_rng.0 tpm-rng-0 none", "512");
	assert_int_equal(source_hwrng.check(src, why, sizeof(why)), 0);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), 0);
	assert_string_equal(why, "tpm-rng-0");
	assert_int_equal(current_writes, 0); /* probe has no side effects */
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, "tpm-rng-0");
	assert_int_equal(current_writes, 1);
	assert_string_equal(get("rng_current"), "tpm-rng-0");
	assert_int_equal(fake_source_found_quality(src), 512);
	/* The selection stays after fini; a re-init does not write again. */
	source_hwrng.fini(src);
	assert_string_equal(get("rng_current"), "tpm-rng-0");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_int_equal(current_writes, 1);
	source_hwrng.fini(src);
	fake_source_free(src);

	/* The daemon's start failed after init: fini puts the previous selection back. */
	src = new_src(&source_hwrng, "backend=tpm-rng-0", NULL);
	sysfs_tree("virtio_rng.0", "virtio_rng.0 tpm-rng-0 none", "512");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(get("rng_current"), "tpm-rng-0");
	fake_source_abort(src);
	source_hwrng.fini(src);
	assert_string_equal(get("rng_current"), "virtio_rng.0");
	fake_source_free(src);
}

static void test_unknown_backend(void **state)
{
	struct source *src = new_src(&source_hwrng, "backend=bogus", NULL);
	char why[256];

	/* Other backends are registered: a wrong name, a configuration error. */
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "backend 'bogus' not available (available: virtio_rng.0 none)");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "backend 'bogus' not available (available: virtio_rng.0 none)");
	assert_int_equal(current_writes, 0);
	assert_string_equal(get("rng_current"), "virtio_rng.0");
	/* None registered yet: its module may still bind (the framework waits). */
	sysfs_tree("none", "none", NULL);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "backend 'bogus' not available (available: none)");
	fake_source_free(src);

	src = new_src(&source_hwrng, "backend=none", NULL);
	assert_int_equal(source_hwrng.check(src, why, sizeof(why)), -EINVAL);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -EINVAL);
	assert_int_equal(current_writes, 0);
	fake_source_free(src);
}

/* Listed, but the kernel does not take it (it vanished meanwhile): error, nothing left. */
static void test_backend_not_taking_effect(void **state)
{
	struct source *src = new_src(&source_hwrng, "backend=tpm-rng-0", NULL);
	char why[256], expect[PATH_MAX + 128];

	sysfs_tree("virtio_rng.0", "virtio_rng.0 tpm-rng-0 none", "1024");
	write_sets = "virtio_rng.0"; /* the write is accepted and changes nothing */
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(
		why, "backend 'tpm-rng-0' did not take effect "
		     "(rng_current is 'virtio_rng.0'; available: virtio_rng.0 tpm-rng-0 none)");
	assert_null(source_priv(src));
	assert_string_equal(get("rng_current"), "virtio_rng.0");

	/* Something else became current: the previous automatic choice is restored. */
	write_sets = "other";
	current_writes = 0;
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENODEV);
	assert_int_equal(current_writes, 2);
	assert_string_equal(get("rng_current"), "virtio_rng.0");
	assert_string_equal(get("rng_selected"), "0");
	write_sets = NULL;

	write_errno = EACCES;
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -EACCES);
	snprintf(expect, sizeof(expect),
		 "cannot select backend 'tpm-rng-0' in %s/rng_current: Permission denied",
		 sysfs_dir);
	assert_string_equal(why, expect);
	assert_string_equal(get("rng_current"), "virtio_rng.0");
	fake_source_free(src);
}

static void test_virtio_requires_backend(void **state)
{
	struct source *src;
	char why[256];

	SKIP_IF_COMPILED_OUT(virtio);
	src = new_src(&source_virtio, NULL, NULL);

	sysfs_tree("rng-caam", "rng-caam none", NULL);
	assert_int_equal(source_virtio.probe(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no virtio_rng.N backend (available: rng-caam none)");
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no virtio_rng.N backend (available: rng-caam none)");
	assert_int_equal(current_writes, 0);

	/* Not current but available: selected. */
	sysfs_tree("tpm-rng-0", "tpm-rng-0 virtio_rng.3 virtio_rng.1 none", "1000");
	assert_int_equal(source_virtio.probe(src, why, sizeof(why)), 0);
	assert_string_equal(why, "virtio_rng.3");
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, "virtio_rng.3");
	assert_string_equal(get("rng_current"), "virtio_rng.3");
	assert_int_equal(fake_source_found_quality(src), 1000);
	source_virtio.fini(src);

	/* A current virtio backend is kept even when it is not the first. */
	sysfs_tree("virtio_rng.1", "virtio_rng.0 virtio_rng.1 none", NULL);
	current_writes = 0;
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, "virtio_rng.1");
	assert_int_equal(current_writes, 0);
	source_virtio.fini(src);
	fake_source_free(src);

	/* A configured backend must be a virtio one. */
	src = new_src(&source_virtio, "backend=tpm-rng-0", NULL);
	assert_int_equal(source_virtio.check(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "backend 'tpm-rng-0' is not a virtio_rng.N backend");
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "backend 'tpm-rng-0' is not a virtio_rng.N backend");
	fake_source_free(src);
	src = new_src(&source_virtio, "backend=virtio_rng.1", NULL);
	assert_int_equal(source_virtio.check(src, why, sizeof(why)), 0);
	sysfs_tree("virtio_rng.0", "virtio_rng.0 virtio_rng.1 none", NULL);
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), 0);
	assert_string_equal(get("rng_current"), "virtio_rng.1");
	source_virtio.fini(src);
	fake_source_free(src);
}

static void test_virtio_read_size(void **state)
{
	struct source *src;
	uint8_t buf[2500];
	char why[256];

	SKIP_IF_COMPILED_OUT(virtio);
	src = new_src(&source_virtio, NULL, NULL);

	assert_int_equal(source_virtio.init(src, why, sizeof(why)), 0);
	assert_int_equal(source_virtio.read(src, buf, sizeof(buf)), 2500);
	assert_int_equal(last_read_size, 2500);
	assert_int_equal(source_virtio.read(src, buf, 100), 100);
	source_virtio.fini(src);
	fake_source_free(src);

	src = new_src(&source_virtio, "read-size=64", NULL);
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), 0);
	assert_int_equal(source_virtio.read(src, buf, sizeof(buf)), 64);
	assert_int_equal(last_read_size, 64);
	source_virtio.fini(src);
	fake_source_free(src);
}

static void test_caam(void **state)
{
	struct source *src;
	uint8_t buf[2500];
	char why[256];

	SKIP_IF_COMPILED_OUT(caam);
	src = new_src(&source_caam, NULL, NULL);

	assert_int_equal(source_caam.check(src, why, sizeof(why)), 0);
	assert_int_equal(source_caam.probe(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no rng-caam backend (available: virtio_rng.0 none)");
	assert_int_equal(source_caam.init(src, why, sizeof(why)), -ENODEV);
	assert_int_equal(current_writes, 0);

	sysfs_tree("virtio_rng.0", "virtio_rng.0 rng-caam none", "1024");
	assert_int_equal(source_caam.probe(src, why, sizeof(why)), 0);
	assert_string_equal(why, "rng-caam");
	assert_int_equal(source_caam.init(src, why, sizeof(why)), 0);
	assert_string_equal(get("rng_current"), "rng-caam");
	assert_int_equal(fake_source_found_quality(src), 1024);

	assert_int_equal(source_caam.read(src, buf, sizeof(buf)), 2496);
	assert_int_equal(source_caam.read(src, buf, 100), 96);
	assert_int_equal(last_read_size, 96);
	read_errno = EINVAL;
	assert_int_equal(source_caam.read(src, buf, sizeof(buf)), -EINVAL);
	read_errno = EIO;
	assert_int_equal(source_caam.read(src, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fake_source_counter(src, "hardware-errors"), 2);
	read_errno = ENODEV;
	assert_int_equal(source_caam.read(src, buf, sizeof(buf)), -ENODEV);
	read_errno = 0;
	source_caam.fini(src);
	fake_source_free(src);

	src = new_src(&source_caam, "read-size=100", NULL);
	assert_int_equal(source_caam.check(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "read-size must be a multiple of 16 for caam");
	fake_source_free(src);
	src = new_src(&source_caam, "backend=rng-caam2", NULL);
	assert_int_equal(source_caam.check(src, why, sizeof(why)), -EINVAL);
	fake_source_free(src);
}

/* Plain hwrng takes CAAM's quirks when rng-caam is current. */
static void test_hwrng_adopts_caam(void **state)
{
	struct source *src = new_src(&source_hwrng, NULL, NULL);
	uint8_t buf[2500];
	char why[256];

	sysfs_tree("rng-caam", "rng-caam none", NULL);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, "rng-caam");
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 2496);
	read_errno = EIO;
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fake_source_counter(src, "hardware-errors"), 1);
	read_errno = 0;
	source_hwrng.fini(src);
	fake_source_free(src);
}

static void test_read_errors(void **state)
{
	struct source *src = new_src(&source_hwrng, "read-size=16", NULL);
	uint8_t buf[2500];
	char why[256];

	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 16);
	read_errno = EINTR;
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), -EINTR);
	read_errno = EAGAIN;
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 0);
	read_errno = EIO;
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), -EIO);
	read_errno = EINVAL;
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fake_source_counter(src, "hardware-errors"), 0);

	/* The backend is switched to none: ENODEV, and the re-open says why. */
	put("rng_current", "none");
	read_errno = ENODEV;
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), -ENODEV);
	read_errno = 0;
	source_hwrng.fini(src);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no current hwrng backend (rng_current is none)");
	put("rng_current", "virtio_rng.0");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 16);
	source_hwrng.fini(src);
	source_hwrng.fini(src);
	fake_source_free(src);
}

/*
 * A regular file: no sysfs logic at all (the tree says none), EOF → 0, and quality 0: it
 * is not the backend, so it is credited nothing unless configured (issue 12).
 */
static void test_plain_file(void **state)
{
	struct source *src;
	uint8_t buf[DEV_SIZE];
	char why[256];

	SKIP_IF_COMPILED_OUT(caam);
	src = new_src(&source_caam, "read-size=65536", NULL);

	fake_misc = false;
	sysfs_tree("none", "none", "10");
	assert_int_equal(source_caam.probe(src, why, sizeof(why)), 0);
	assert_string_equal(why, dev_path);
	assert_int_equal(source_caam.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, dev_path);
	assert_int_equal(fake_source_found_quality(src), 0);
	assert_int_equal(source_caam.read(src, buf, 10), 10);
	assert_int_equal(source_caam.read(src, buf, 100), 96);
	assert_int_equal(source_caam.read(src, buf, sizeof(buf)), DEV_SIZE - 10 - 96);
	assert_int_equal(source_caam.read(src, buf, sizeof(buf)), 0);
	source_caam.fini(src);
	assert_int_equal(current_writes, 0);
	fake_source_free(src);
}

/*
 * Issue 24 item 3: a character device that is not the hwrng class's node (here /dev/null,
 * 1:3; a pty fed a predictable stream was credited 1024) gets quality 0 by default, with
 * a notice that says how to set one; a configured quality wins and needs no notice.
 */
static void test_other_char_device(void **state)
{
	const char *opts[] = { "device=/dev/null", "sysfs=/nonexistent", NULL };
	const char *quality[] = { "device=/dev/null", "sysfs=/nonexistent", "quality=512", NULL };
	struct source *src;
	char why[256];

	fake_misc = false;
	src = fake_source_new(&source_hwrng, NULL, opts);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), 0);
	assert_int_equal(fake_source_found_quality(src), 0);
	assert_string_equal(fake_source_notice(src), ""); /* -l says quality 0 already */
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_int_equal(fake_source_found_quality(src), 0);
	assert_non_null(strstr(fake_source_notice(src), "/dev/null is a character device, not "
							"the kernel's hwrng device"));
	assert_non_null(strstr(fake_source_notice(src), "set quality = N"));
	assert_non_null(strstr(fake_source_notice(src), "-O hwrng:quality:N"));
	source_hwrng.fini(src);
	fake_source_free(src);

	src = fake_source_new(&source_hwrng, NULL, quality);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(fake_source_notice(src), "");
	source_hwrng.fini(src);
	fake_source_free(src);
}

static void test_fifo(void **state)
{
	char fifo[PATH_MAX + 16], opt[PATH_MAX + 32], why[256];
	const char *opts[] = { opt, "sysfs=/nonexistent", NULL };
	struct source *src;
	uint8_t buf[2500];
	int w;

	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	snprintf(opt, sizeof(opt), "device=%s", fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	src = fake_source_new(&source_hwrng, NULL, opts);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), 0);
	/* No writer yet: the open must not block. */
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(w >= 0);
	assert_int_equal(write_full(w, "0123456789", 10), 0);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "0123456789", 10);
	close(w);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), 0);
	source_hwrng.fini(src);
	fake_source_free(src);
}

static void test_bad_devices(void **state)
{
	const char *o1[] = { "device=/dev/urandom", NULL };
	const char *o2[] = { "device=/nonexistent/hwrng", NULL };
	const char *o3[] = { "device=/tmp", NULL };
	struct source *src;
	char why[256];

	src = fake_source_new(&source_hwrng, NULL, o1);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "refusing /dev/urandom as a source: it is the kernel's own output");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -EINVAL);
	fake_source_free(src);

	src = fake_source_new(&source_hwrng, NULL, o2);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot open /nonexistent/hwrng: No such file or directory");
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot open /nonexistent/hwrng: No such file or directory");
	source_hwrng.fini(src);
	fake_source_free(src);

	src = fake_source_new(&source_hwrng, NULL, o3);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "/tmp is a directory, not a character device, regular file or FIFO");
	fake_source_free(src);
}

/* The misc device without a sysfs directory (container): read it, backend unknown. */
static void test_misc_without_sysfs(void **state)
{
	const char *opts[] = { opt_dev, "sysfs=/nonexistent", NULL };
	struct source *src = fake_source_new(&source_hwrng, NULL, opts);
	char why[256];

	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, dev_path);
	source_hwrng.fini(src);
	fake_source_free(src);

	SKIP_IF_COMPILED_OUT(virtio); /* the rest is about virtio */
	src = fake_source_new(&source_virtio, NULL, opts);
	assert_int_equal(source_virtio.init(src, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot read /nonexistent/rng_current: No such file or directory");
	fake_source_free(src);
}

/* The machine's /dev/hwrng through the driver: blocking reads return the full size. */
static void test_real_hwrng(void **state)
{
	const char *sys = "/sys/class/misc/hw_random";
	char cur[128], qual[16], path[256], why[256];
	uint8_t buf[2500];
	struct source *src;

	fake_misc = false;
	snprintf(path, sizeof(path), "%s/rng_current", sys);
	if (access("/dev/hwrng", R_OK) < 0 || read_text_file(path, cur, sizeof(cur)) < 0 ||
	    strcmp(cur, "none") == 0) {
		print_message("skipped: no readable /dev/hwrng with a current backend here\n");
		skip();
	}
	src = fake_source_new(&source_hwrng, NULL, NULL);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), 0);
	assert_string_equal(why, cur);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, cur);
	snprintf(path, sizeof(path), "%s/rng_quality", sys);
	if (read_text_file(path, qual, sizeof(qual)) >= 0)
		assert_int_equal(fake_source_found_quality(src), strtol(qual, NULL, 10));
	for (int i = 0; i < 3; i++) {
		ssize_t n = source_hwrng.read(src, buf, sizeof(buf));

		assert_int_equal(n, strcmp(cur, "rng-caam") == 0 ? 2496 : 2500);
	}
	wipe(buf, sizeof(buf));
	source_hwrng.fini(src);
	fake_source_free(src);
}

/*
 * Switch the machine's backend to none under the driver and back (kernel-interfaces.md
 * §2.4). Run only by tests/hwrng-real.sh, which restores rng_current even on failure.
 */
static void test_real_switch(void **state)
{
	const char *cur_path = "/sys/class/misc/hw_random/rng_current";
	const char *sel_path = "/sys/class/misc/hw_random/rng_selected";
	char before[128], sel[16], why[256];
	struct source *src;
	uint8_t buf[2500];

	fake_misc = false;
	assert_true(read_text_file(cur_path, before, sizeof(before)) > 0);
	if (read_text_file(sel_path, sel, sizeof(sel)) < 0)
		snprintf(sel, sizeof(sel), "1");
	src = fake_source_new(&source_hwrng, NULL, NULL);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, before);
	assert_int_equal(source_hwrng.read(src, buf, 64), 64);

	assert_int_equal(write_text_file(cur_path, "none"), 0);
	assert_int_equal(source_hwrng.read(src, buf, sizeof(buf)), -ENODEV);
	source_hwrng.fini(src);
	assert_int_equal(source_hwrng.probe(src, why, sizeof(why)), -ENODEV);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "no current hwrng backend (rng_current is none)");

	/* An automatic choice comes back with "", a user's with its name. */
	assert_int_equal(write_text_file(cur_path, strcmp(sel, "0") == 0 ? "" : before), 0);
	assert_int_equal(source_hwrng.init(src, why, sizeof(why)), 0);
	assert_string_equal(why, before);
	assert_int_equal(source_hwrng.read(src, buf, 64), 64);
	wipe(buf, sizeof(buf));
	source_hwrng.fini(src);
	fake_source_free(src);
}

int main(void)
{
	const struct CMUnitTest real_switch[] = {
		cmocka_unit_test(test_real_switch),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_misc_current_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quality_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quality_of_each_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_current_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_select_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backend_not_taking_effect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_requires_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtio_read_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caam, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hwrng_adopts_caam, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_char_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misc_without_sysfs, setup, teardown),
		cmocka_unit_test(test_real_hwrng),
	};

	if (getenv("RNGD_TEST_HWRNG_SWITCH_NOW"))
		return cmocka_run_group_tests(real_switch, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
