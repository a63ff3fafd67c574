// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/kernel_hwrng.c against a fake hw_random sysfs directory in a temp
 * directory. Link-time wraps (Makefile.am) play the kernel's part (drivers/char/hw_random/
 * core.c): pwrite (the kept rng_quality fd) and write_text_file (rng_current, rng_quality
 * by path) change the fake kernel's state, which is then written out as the four files:
 *  - rng_quality sets the current backend's quality, then picks the best backend
 *    (enable_best_rng(): highest quality, first in the list on a tie) and clears selected;
 *  - rng_current: a registered name is selected (selected 1), "" picks the best.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

#include "conf.h"
#include "kernel_hwrng.h"
#include "kernel_hwrng_state.h"
#include "source.h"
#include "source_set.h"
#include "util.h"

#define MAX_RNG 3

static char tmpdir[64], dir[PATH_MAX], state[PATH_MAX];

/* The fake kernel. */
static struct {
	const char *name[MAX_RNG];
	unsigned int quality[MAX_RNG];
	int n;
	int cur; /* -1: none */
	int selected;
} k;
static unsigned int quality_writes;
static bool state_seen_at_write; /* the state file existed when 0 was written */

static char dev_path[PATH_MAX]; /* stat() says it is the misc hwrng, char 10:183 */

int __real_stat(const char *path, struct stat *st);
int __wrap_stat(const char *path, struct stat *st);
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
int __real_write_text_file(const char *path, const char *value);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
int __wrap_write_text_file(const char *path, const char *value);

static void put(const char *attr, const char *text)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void publish(void)
{
	char buf[256] = "";
	char q[16];

	for (int i = 0; i < k.n; i++) {
		strcat(buf, k.name[i]);
		strcat(buf, " ");
	}
	strcat(buf, "none\n");
	put("rng_available", buf);
	snprintf(buf, sizeof(buf), "%s\n", k.cur < 0 ? "none" : k.name[k.cur]);
	put("rng_current", buf);
	snprintf(q, sizeof(q), "%u\n", k.cur < 0 ? 0 : k.quality[k.cur]);
	put("rng_quality", q);
	snprintf(q, sizeof(q), "%d\n", k.selected);
	put("rng_selected", q);
}

static void enable_best(void)
{
	int best = -1;

	for (int i = 0; i < k.n; i++)
		if (best < 0 || k.quality[i] > k.quality[best])
			best = i;
	k.cur = best;
	k.selected = 0;
}

/* "N\n" to rng_quality: at least 2 bytes, like the kernel. */
static int store_quality(const char *text, size_t n)
{
	char buf[16];

	if (n < 2 || n >= sizeof(buf) || k.cur < 0)
		return -EINVAL;
	memcpy(buf, text, n);
	buf[n] = '\0';
	k.quality[k.cur] = (unsigned int)strtoul(buf, NULL, 10);
	quality_writes++;
	if (k.quality[k.cur] == 0)
		state_seen_at_write = access(state, F_OK) == 0;
	enable_best();
	publish();
	return 0;
}

static bool is_attr(const char *path, const char *attr)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/' && strcmp(path + n + 1, attr) == 0;
}

int __wrap_write_text_file(const char *path, const char *value)
{
	char line[64];

	if (is_attr(path, "rng_quality")) {
		snprintf(line, sizeof(line), "%s\n", value);
		return store_quality(line, strlen(line));
	}
	if (is_attr(path, "rng_current")) {
		if (value[0] == '\0') {
			enable_best();
		} else {
			for (int i = 0; i < k.n; i++) {
				if (strcmp(k.name[i], value) == 0) {
					k.cur = i;
					k.selected = 1;
				}
			}
		}
		publish();
		return 0;
	}
	return __real_write_text_file(path, value);
}

int __wrap_stat(const char *path, struct stat *st)
{
	int r = __real_stat(path, st);

	if (r == 0 && dev_path[0] && strcmp(path, dev_path) == 0) {
		st->st_mode = S_IFCHR | 0600;
		st->st_rdev = makedev(10, 183);
	}
	return r;
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	char link[64], path[PATH_MAX];
	ssize_t l;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	l = readlink(link, path, sizeof(path) - 1);
	if (l > 0) {
		path[l] = '\0';
		if (is_attr(path, "rng_quality")) {
			int r = store_quality(buf, n);

			return r < 0 ? (errno = -r, -1) : (ssize_t)n;
		}
	}
	return __real_pwrite(fd, buf, n, off);
}

static void kernel(int n, const char *a, unsigned int qa, const char *b, unsigned int qb)
{
	k.n = n;
	k.name[0] = a;
	k.quality[0] = qa;
	k.name[1] = b;
	k.quality[1] = qb;
	k.cur = n > 0 ? 0 : -1;
	k.selected = 0;
	quality_writes = 0;
	state_seen_at_write = false;
	publish();
}

static int setup(void **st)
{
	(void)st;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-khw.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(dir, sizeof(dir), "%s/sys", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(state, sizeof(state), "%s/run/%s", tmpdir, KERNEL_HWRNG_STATE_NAME);
	return 0;
}

static int teardown(void **st)
{
	char cmd[128];

	(void)st;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* kh over the fake directory, rng_quality opened as the daemon does at start. */
static void open_kh(struct kernel_hwrng *kh)
{
	char path[PATH_MAX + 16];

	kernel_hwrng_init(kh);
	kh->mode = KERNEL_HWRNG_TAKE_OVER;
	snprintf(kh->dir, sizeof(kh->dir), "%s", dir);
	snprintf(kh->state, sizeof(kh->state), "%s", state);
	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	kh->fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(kh->fd >= 0);
}

static unsigned int sysfs_quality(void)
{
	char path[PATH_MAX + 16], buf[16];
	uint64_t v;

	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	assert_true(read_text_file(path, buf, sizeof(buf)) > 0);
	assert_int_equal(parse_uint(buf, 0, 1024, &v), 0);
	return (unsigned int)v;
}

static void test_mode_and_path(void **st)
{
	enum kernel_hwrng_mode m;
	char buf[PATH_MAX];

	(void)st;
	assert_int_equal(kernel_hwrng_mode_parse("take-over", &m), 0);
	assert_int_equal(m, KERNEL_HWRNG_TAKE_OVER);
	assert_int_equal(kernel_hwrng_mode_parse("leave", &m), 0);
	assert_int_equal(m, KERNEL_HWRNG_LEAVE);
	assert_int_equal(kernel_hwrng_mode_parse("watch", &m), 0);
	assert_int_equal(m, KERNEL_HWRNG_WATCH);
	assert_int_equal(kernel_hwrng_mode_parse("takeover", &m), -EINVAL);
	assert_int_equal(kernel_hwrng_mode_parse(NULL, &m), -EINVAL);
	/* Fixed, whatever the status file: root's restore reads no configuration. */
	assert_string_equal(kernel_hwrng_state_path(buf, sizeof(buf)),
			    RUNSTATEDIR "/rngd/" KERNEL_HWRNG_STATE_NAME);
	assert_null(kernel_hwrng_state_path(buf, 8));
}

/* Take over and give back: the state file is on disk before 0 is written, gone after. */
static void test_take_and_give_back(void **st)
{
	struct kernel_hwrng kh;
	char text[512];

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	assert_true(kh.taken);
	assert_true(state_seen_at_write);
	assert_int_equal(sysfs_quality(), 0);
	assert_int_equal(kh.quality, 1024);
	assert_string_equal(kh.backend, "virtio_rng.0");
	assert_true(read_text_file(state, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "backend=virtio_rng.0\n"));
	assert_non_null(strstr(text, "quality=1024"));

	kernel_hwrng_stop(&kh);
	assert_int_equal(sysfs_quality(), 1024);
	assert_int_equal(access(state, F_OK), -1);
	assert_false(kh.taken);
	assert_int_equal(kh.fd, -1);
	kernel_hwrng_stop(&kh); /* twice: nothing more */
	assert_int_equal(quality_writes, 2);
}

/* A user's selection (rng_selected 1) is kept: the quality write clears it, rngd puts it back. */
static void test_take_keeps_selection(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(1, "virtio_rng.0", 1000, NULL, 0);
	k.selected = 1;
	publish();
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	assert_int_equal(k.selected, 1);
	kernel_hwrng_stop(&kh);
	assert_int_equal(sysfs_quality(), 1000);
	assert_int_equal(k.selected, 1);
}

/* Writing 0 makes the kernel switch to a better backend: put back, refused. */
static void test_take_refused_on_switch(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(2, "virtio_rng.0", 1024, "tpm-rng-0", 512);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 0);
	assert_false(kh.taken);
	assert_true(kh.refused);
	assert_int_equal(k.cur, 0);
	assert_int_equal(k.quality[0], 1024);
	assert_int_equal(k.quality[1], 512);
	assert_int_equal(access(state, F_OK), -1);
	kernel_hwrng_stop(&kh);
	assert_int_equal(k.quality[0], 1024);
}

/* After a SIGKILL: rng_quality 0 and a state file for the same backend: its value counts. */
static void test_take_after_crash(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(1, "virtio_rng.0", 1000, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	close(kh.fd); /* killed: nothing given back */
	assert_int_equal(sysfs_quality(), 0);

	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	assert_int_equal(kh.quality, 1000);
	kernel_hwrng_stop(&kh);
	assert_int_equal(sysfs_quality(), 1000);
}

/* 0 without a state file is the administrator's: nothing to take, nothing written. */
static void test_already_zero(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(1, "virtio_rng.0", 0, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 0);
	assert_false(kh.taken);
	kernel_hwrng_stop(&kh);
	assert_int_equal(quality_writes, 0);
	assert_int_equal(access(state, F_OK), -1);
}

/* No backend now: nothing taken, no error (a later tick looks again). */
static void test_no_backend(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(0, NULL, 0, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 0);
	assert_false(kh.taken);
	assert_false(kh.refused);
	kernel_hwrng_stop(&kh);
}

/* The taken backend went away: skipped with a line, state removed, the other untouched. */
static void test_give_back_gone(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	kernel(1, "rng-caam", 1024, NULL, 0); /* virtio unplugged, another registered */
	quality_writes = 0;
	kernel_hwrng_give_back(&kh, "test");
	assert_int_equal(quality_writes, 0);
	assert_int_equal(k.quality[0], 1024);
	assert_int_equal(access(state, F_OK), -1);
	kernel_hwrng_stop(&kh);
}

/* The taken backend is registered but no longer current: made current for the write, the
 * user's choice put back after it. */
static void test_give_back_switched(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(2, "virtio_rng.0", 1024, "tpm-rng-0", 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1); /* 0 vs 0: the first stays current */
	assert_int_equal(k.cur, 0);
	k.cur = 1; /* the administrator selects tpm-rng-0 */
	k.selected = 1;
	publish();
	kernel_hwrng_stop(&kh);
	assert_int_equal(k.quality[0], 1024);
	assert_int_equal(k.cur, 1);
	assert_int_equal(k.selected, 1);
}

/* The state file cannot be written: not taken over (it could not be given back). */
static void test_no_state_dir(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	open_kh(&kh);
	snprintf(kh.state, sizeof(kh.state), "%s/none/deeper/state", tmpdir);
	assert_true(kernel_hwrng_take(&kh) < 0);
	assert_false(kh.taken);
	assert_int_equal(quality_writes, 0);
	kernel_hwrng_stop(&kh);
}

/*
 * The daemon's view: a set whose hwrng source reads the (fake) misc hwrng. Its credit is
 * the remembered quality while taken over; a backend switch gives the old one back and
 * takes the new one; a re-registration (quality back) is taken over again at that value.
 */
static void test_update_with_set(void **st)
{
	struct kernel_hwrng kh;
	struct source_set *set = NULL;
	struct source *src;
	const char *d = NULL;
	char conf_text[3 * PATH_MAX], err[512], text[512];
	struct conf c;
	FILE *f;

	(void)st;
	snprintf(dev_path, sizeof(dev_path), "%s/hwrng", tmpdir);
	f = fopen(dev_path, "w");
	assert_non_null(f);
	fclose(f);
	kernel(2, "virtio_rng.0", 1000, "tpm-rng-0", 0);
	snprintf(conf_text, sizeof(conf_text),
		 "[source hwrng]\ndevice = %s\nsysfs = %s\n[source via]\nenabled = no\n"
		 "[source rdseed]\nenabled = no\n[source rdrand]\nenabled = no\n"
		 "[source rndr]\nenabled = no\n", dev_path,
		 dir);
	conf_init(&c, source_check_section);
	assert_int_equal(
		conf_load_string(&c, "t.conf", conf_text, strlen(conf_text), err, sizeof(err)), 0);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_init(set), 1);
	src = kernel_hwrng_reader(set, &d);
	assert_non_null(src);
	assert_string_equal(d, dir);

	kernel_hwrng_init(&kh);
	kernel_hwrng_start(&kh, KERNEL_HWRNG_TAKE_OVER, dir, state, set);
	assert_true(kh.taken);
	assert_int_equal(sysfs_quality(), 0);
	assert_int_equal(source_quality(src), 1000);

	/* The administrator selects the other backend: the old one gets 1000 back. */
	k.cur = 1;
	k.selected = 1;
	publish();
	kernel_hwrng_update(&kh, set);
	assert_int_equal(k.quality[0], 1000);
	assert_int_equal(k.cur, 1);
	assert_false(kh.taken); /* tpm-rng-0 is at 0 already: nothing to take */
	assert_int_equal(access(state, F_OK), -1);

	/* Back to virtio; then it registers again (its driver's quality): taken at that. */
	k.cur = 0;
	publish();
	kernel_hwrng_update(&kh, set);
	assert_true(kh.taken);
	assert_int_equal(sysfs_quality(), 0);
	k.quality[0] = 1024;
	publish();
	kernel_hwrng_update(&kh, set);
	assert_int_equal(sysfs_quality(), 0);
	assert_int_equal(kh.quality, 1024);
	assert_int_equal(source_quality(src), 1024);
	assert_true(read_text_file(state, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "quality=1024"));

	/* No source reads it any more (the device is a plain file now): given back. */
	dev_path[0] = '\0';
	kernel_hwrng_update(&kh, set);
	assert_false(kh.taken);
	assert_int_equal(sysfs_quality(), 1024);
	kernel_hwrng_stop(&kh);
	source_set_free(set);
	conf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_and_path),
		cmocka_unit_test(test_take_and_give_back),
		cmocka_unit_test(test_take_keeps_selection),
		cmocka_unit_test(test_take_refused_on_switch),
		cmocka_unit_test(test_take_after_crash),
		cmocka_unit_test(test_already_zero),
		cmocka_unit_test(test_no_backend),
		cmocka_unit_test(test_give_back_gone),
		cmocka_unit_test(test_give_back_switched),
		cmocka_unit_test(test_no_state_dir),
		cmocka_unit_test(test_update_with_set),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
