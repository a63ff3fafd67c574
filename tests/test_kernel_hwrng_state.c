// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the take-over's state record (src/kernel_hwrng_state.c), the shared sysfs
 * checks (src/sysfs.c) and root's steps (src/kernel_hwrng_root.c) against a fake hw_random
 * directory. Built with RNGD_ROOT_TEST_HOOKS (Makefile.am): RNGD_TEST_SYSFS,
 * RNGD_TEST_RUNTIME_DIR and RNGD_TEST_ROOT_DIR point root's fixed paths into a temp
 * directory. The fake sysfs files are plain files: no kernel behind them.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel_hwrng_root.h"
#include "kernel_hwrng_state.h"
#include "sysfs.h"
#include "util.h"

static char tmp[64], sys[PATH_MAX], run[PATH_MAX], root[PATH_MAX];

static int parse(const char *text, struct kernel_hwrng_state *st, char *why, size_t len)
{
	return kernel_hwrng_state_parse(text, strlen(text), st, why, len);
}

static void test_parse_good(void **state)
{
	struct kernel_hwrng_state st;
	char why[128], buf[256];

	(void)state;
	assert_int_equal(parse("backend=virtio_rng.0\nquality=1024\nbackend=tpm-rng-0\n"
			       "quality=0\n", &st, why, sizeof(why)), 0);
	assert_int_equal(st.n, 2);
	assert_string_equal(st.saved[0].backend, "virtio_rng.0");
	assert_int_equal(st.saved[0].quality, 1024);
	assert_string_equal(st.saved[1].backend, "tpm-rng-0");
	assert_int_equal(st.saved[1].quality, 0);
	assert_non_null(kernel_hwrng_state_find(&st, "tpm-rng-0"));
	assert_null(kernel_hwrng_state_find(&st, "tpm-rng"));
	/* The older format: sysfs= is accepted and never used; no newline at the end. */
	assert_int_equal(parse("sysfs=/tmp/poc/x\nbackend=a\nquality=7", &st, why, sizeof(why)), 0);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.saved[0].quality, 7);
	/* Round trip. */
	assert_int_equal(kernel_hwrng_state_add(&st, "b", 1000), 0);
	assert_int_equal(kernel_hwrng_state_add(&st, "b", 5), 0); /* the first stays */
	assert_int_equal(kernel_hwrng_state_format(&st, buf, sizeof(buf)), 43);
	assert_string_equal(buf, "backend=a\nquality=7\nbackend=b\nquality=1000\n");
	assert_int_equal(kernel_hwrng_state_format(&st, buf, 10), -ENOSPC);
	assert_true(kernel_hwrng_state_remove(&st, "a"));
	assert_false(kernel_hwrng_state_remove(&st, "a"));
	assert_int_equal(st.n, 1);
	assert_string_equal(st.saved[0].backend, "b");
	assert_int_equal(parse("", &st, why, sizeof(why)), 0);
	assert_int_equal(st.n, 0);
}

/* Each malformed record is refused, says which line and why, and leaves *st alone. */
static void test_parse_bad(void **state)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ "backend=\nquality=7\n", "line 1: backend '' is not a backend's name" },
		{ "backend=a b\nquality=7\n", "line 1: backend 'a b' is not" },
		{ "backend=../x\nquality=7\n", "line 1: backend '../x' is not" },
		{ "backend=none\nquality=7\n", "line 1: backend 'none' is not" },
		{ "backend=a\nquality=1025\n", "line 2: quality '1025' is not 0..1024" },
		{ "backend=a\nquality=-1\n", "line 2: quality '-1'" },
		{ "backend=a\nquality=12abc\n", "line 2: quality '12abc'" },
		{ "backend=a\nquality=\n", "line 2: quality ''" },
		{ "backend=a\n", "line 1: backend 'a' has no quality= line" },
		{ "backend=a\nbackend=b\n", "line 2: backend 'a' has no quality= line" },
		{ "quality=7\n", "line 1: quality= without a backend=" },
		{ "backend=a\nquality=1\nbackend=a\nquality=2\n", "line 4: backend 'a' twice" },
		{ "uid=0\n", "line 1: unknown key 'uid'" },
		{ "mode=4777\n", "line 1: unknown key 'mode'" },
		{ "just text\n", "line 1: not a 'key=value' line" },
		{ "backend=a\r\nquality=1\n", "line 1: not a 'key=value' line" },
	};
	struct kernel_hwrng_state st = { .n = 99 };
	char why[128], text[2048];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(parse(cases[i].text, &st, why, sizeof(why)), -EBADMSG);
		if (strncmp(why, cases[i].why, strlen(cases[i].why)) != 0)
			fail_msg("case %zu: '%s', not '%s'", i, why, cases[i].why);
		assert_int_equal(st.n, 99);
	}
	/* A NUL byte inside. */
	assert_int_equal(kernel_hwrng_state_parse("backend=a\0b\nquality=1\n", 22, &st, why,
						  sizeof(why)), -EBADMSG);
	/* A name too long for the kernel, a line too long for anything. */
	memset(text, 'a', sizeof(text));
	memcpy(text, "backend=", 8);
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(parse(text, &st, why, sizeof(why)), -EBADMSG);
	/* More backends than a record holds. */
	text[0] = '\0';
	for (int i = 0; i <= KERNEL_HWRNG_STATE_MAX; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "backend=b%d\nquality=1\n", i);
	assert_int_equal(parse(text, &st, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "too many backends"));
}

static void test_names_and_lists(void **state)
{
	unsigned int q = 5;
	char big[200];

	(void)state;
	assert_true(kernel_hwrng_name_valid("virtio_rng.0"));
	assert_true(kernel_hwrng_name_valid("rng-caam"));
	assert_false(kernel_hwrng_name_valid(""));
	assert_false(kernel_hwrng_name_valid("none"));
	assert_false(kernel_hwrng_name_valid("a/b"));
	assert_false(kernel_hwrng_name_valid("a=b"));
	assert_false(kernel_hwrng_name_valid("a\tb"));
	assert_false(kernel_hwrng_name_valid("\x7f"));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_false(kernel_hwrng_name_valid(big));

	/* An empty name used to match forever (strstr() at the same place). */
	assert_false(sysfs_list_has("virtio_rng.0 tpm-rng-0", ""));
	assert_false(sysfs_list_has("virtio_rng.0 none", "none"));
	assert_true(sysfs_list_has("virtio_rng.0 tpm-rng-0", "tpm-rng-0"));
	assert_true(sysfs_list_has(" \tvirtio_rng.0\n", "virtio_rng.0"));
	assert_false(sysfs_list_has("virtio_rng.01 xvirtio_rng.0", "virtio_rng.0"));
	assert_false(sysfs_list_has("", "a"));
	assert_true(sysfs_is_none("none"));
	assert_true(sysfs_is_none(""));
	assert_false(sysfs_is_none("nonex"));

	assert_int_equal(sysfs_parse_quality("1024", &q), 0);
	assert_int_equal(q, 1024);
	assert_int_equal(sysfs_parse_quality("1025", &q), -EINVAL);
	assert_int_equal(sysfs_parse_quality(" 1", &q), -EINVAL);
	assert_int_equal(q, 1024);
}

static void put_at(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *get_at(const char *dir, const char *name)
{
	static char buf[256];
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_text_file(path, buf, sizeof(buf)) < 0)
		return "(missing)";
	return buf;
}

/* Hostile files are refused quickly, each with its reason. */
static void test_read_small(void **state)
{
	char buf[KERNEL_HWRNG_STATE_SIZE_MAX + 1], path[PATH_MAX + 64], why[128];
	struct kernel_hwrng_state st;
	struct stat sb;
	struct timespec t0, t1;
	int fd;

	(void)state;
	put_at(run, "ok", "backend=a\nquality=3\n");
	assert_int_equal(kernel_hwrng_read_small(AT_FDCWD, strcat(strcpy(path, run), "/ok"), buf,
						 sizeof(buf), &sb), 20);
	assert_int_equal(sb.st_size, 20);
	fd = open(run, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(kernel_hwrng_state_read(fd, "ok", &st, NULL, why, sizeof(why)), 0);
	assert_int_equal(st.saved[0].quality, 3);

	assert_int_equal(symlink("/etc/passwd", strcat(strcpy(path, run), "/link")), 0);
	assert_int_equal(kernel_hwrng_read_small(fd, "link", buf, sizeof(buf), NULL), -ELOOP);
	assert_int_equal(mkfifo(strcat(strcpy(path, run), "/fifo"), 0600), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(kernel_hwrng_read_small(fd, "fifo", buf, sizeof(buf), NULL), -EINVAL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	assert_int_equal(mkdir(strcat(strcpy(path, run), "/dir"), 0700), 0);
	assert_int_equal(kernel_hwrng_read_small(fd, "dir", buf, sizeof(buf), NULL), -EINVAL);
	assert_int_equal(truncate(strcat(strcpy(path, run), "/ok"), 1 << 20), 0);
	assert_int_equal(kernel_hwrng_read_small(fd, "ok", buf, sizeof(buf), NULL), -EFBIG);
	assert_int_equal(kernel_hwrng_read_small(fd, "nothing", buf, sizeof(buf), NULL), -ENOENT);
	put_at(run, "empty", "");
	assert_int_equal(kernel_hwrng_state_read(fd, "empty", &st, NULL, why, sizeof(why)),
			 -EBADMSG);
	assert_string_equal(why, "empty");
	assert_string_equal(kernel_hwrng_read_error(-ELOOP), "a symlink (not followed)");
	close(fd);
}

static void test_state_write(void **state)
{
	struct kernel_hwrng_state st = { 0 };
	char path[PATH_MAX + 64], why[128];
	struct stat sb;

	(void)state;
	snprintf(path, sizeof(path), "%s/new/%s", run, KERNEL_HWRNG_STATE_NAME);
	assert_int_equal(kernel_hwrng_state_add(&st, "virtio_rng.0", 1000), 0);
	assert_int_equal(kernel_hwrng_state_add(&st, "", 1000), -EINVAL);
	assert_int_equal(kernel_hwrng_state_add(&st, "x", 1025), -EINVAL);
	assert_int_equal(kernel_hwrng_state_write(path, &st), 0); /* makes the directory */
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	memset(&st, 0, sizeof(st));
	assert_int_equal(kernel_hwrng_state_read(AT_FDCWD, path, &st, NULL, why, sizeof(why)), 0);
	assert_string_equal(st.saved[0].backend, "virtio_rng.0");
	st.n = 0; /* nothing left: no file */
	assert_int_equal(kernel_hwrng_state_write(path, &st), 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(kernel_hwrng_state_write(path, &st), 0);
}

/* A fake hw_random class: one current backend. */
static void fake_sysfs(const char *available, const char *current, const char *quality)
{
	put_at(sys, "rng_available", available);
	put_at(sys, "rng_current", current);
	put_at(sys, "rng_quality", quality);
	put_at(sys, "rng_selected", "0\n");
}

static void test_root_grant_and_restore(void **state)
{
	char path[PATH_MAX + 64], why[256];
	struct stat sb;

	(void)state;
	fake_sysfs("virtio_rng.0 tpm-rng-0\n", "virtio_rng.0\n", "1000\n");
	snprintf(path, sizeof(path), "%s/rng_quality", sys);
	assert_int_equal(chmod(path, 0644), 0);
	/* Nothing granted, nothing saved: nothing to do. */
	assert_int_equal(kernel_hwrng_root_restore(), 0);
	assert_string_equal(get_at(sys, "rng_quality"), "1000");

	assert_int_equal(kernel_hwrng_root_grant(getgid(), why, sizeof(why)), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0664);
	snprintf(why, sizeof(why), "backend=virtio_rng.0\nquality=1000\nselected=0\nuid=%u\ngid=%u\n"
		 "mode=644", (unsigned int)getuid(), (unsigned int)getgid());
	assert_string_equal(get_at(root, KERNEL_HWRNG_ROOT_RECORD), why);
	/* The daemon takes it over and is killed: its state file has 1000 and 0 is in sysfs. */
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=virtio_rng.0\nquality=1000\n");
	put_at(sys, "rng_quality", "0\n");
	assert_int_equal(kernel_hwrng_root_restore(), 0);
	assert_string_equal(get_at(sys, "rng_quality"), "1000");
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644);
	assert_string_equal(get_at(run, KERNEL_HWRNG_STATE_NAME), "(missing)");
	assert_string_equal(get_at(root, KERNEL_HWRNG_ROOT_RECORD), "(missing)");

	/* A planted quality above what root recorded is capped at the record. */
	assert_int_equal(kernel_hwrng_root_grant(getgid(), why, sizeof(why)), 0);
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=virtio_rng.0\nquality=1024\n");
	put_at(sys, "rng_quality", "0\n");
	assert_int_equal(kernel_hwrng_root_restore(), 0);
	assert_string_equal(get_at(sys, "rng_quality"), "1000");

	/* The administrator had 0: a planted 1024 puts nothing back. */
	put_at(sys, "rng_quality", "0\n");
	assert_int_equal(kernel_hwrng_root_grant(getgid(), why, sizeof(why)), 0);
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=virtio_rng.0\nquality=1024\n");
	assert_int_equal(kernel_hwrng_root_restore(), 0);
	assert_string_equal(get_at(sys, "rng_quality"), "0");

	/* A name not in rng_available is not written anywhere. */
	put_at(sys, "rng_quality", "1000\n");
	assert_int_equal(kernel_hwrng_root_grant(getgid(), why, sizeof(why)), 0);
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=AAAAAAAA\nquality=7\n");
	put_at(sys, "rng_quality", "0\n");
	assert_int_equal(kernel_hwrng_root_restore(), 0);
	assert_string_equal(get_at(sys, "rng_current"), "virtio_rng.0");
	assert_string_equal(get_at(sys, "rng_quality"), "0");

	/* A refused state file (empty name): root's record is put back, the refusal reported. */
	put_at(sys, "rng_quality", "1000\n");
	assert_int_equal(kernel_hwrng_root_grant(getgid(), why, sizeof(why)), 0);
	put_at(sys, "rng_quality", "0\n");
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=\n");
	assert_int_equal(kernel_hwrng_root_restore(), -EBADMSG);
	assert_string_equal(get_at(sys, "rng_quality"), "1000");
	assert_string_equal(get_at(run, KERNEL_HWRNG_STATE_NAME), "(missing)");
}

/* Without root's record, a state file that root did not write is not trusted. */
static void test_root_restore_without_record(void **state)
{
	char path[PATH_MAX + 64];

	(void)state;
	if (geteuid() != 0)
		skip();
	fake_sysfs("virtio_rng.0\n", "virtio_rng.0\n", "0\n");
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=virtio_rng.0\nquality=1024\n");
	snprintf(path, sizeof(path), "%s/%s", run, KERNEL_HWRNG_STATE_NAME);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(kernel_hwrng_root_restore(), -EBADMSG);
	assert_string_equal(get_at(sys, "rng_quality"), "0");
	/* Root's own (a daemon that ran as root): trusted. */
	put_at(run, KERNEL_HWRNG_STATE_NAME, "backend=virtio_rng.0\nquality=1024\n");
	assert_int_equal(chmod(run, 0755), 0);
	assert_int_equal(kernel_hwrng_root_restore(), 0);
	assert_string_equal(get_at(sys, "rng_quality"), "1024");
}

/* Outside the test hooks' fake directory, only sysfs is sysfs: a temp file is refused. */
static void test_sysfs_checked(void **state)
{
	char buf[64], path[PATH_MAX + 8];
	int fd;

	(void)state;
	put_at(run, "rng_quality", "1000\n");
	unsetenv("RNGD_TEST_SYSFS");
	assert_int_equal(sysfs_open_checked(run, "rng_quality", O_RDONLY), -EXDEV);
	assert_int_equal(sysfs_open_checked(run, "missing", O_RDONLY), -ENOENT);
	snprintf(path, sizeof(path), "%s/l", run);
	assert_int_equal(symlink("rng_quality", path), 0);
	fd = sysfs_open_checked("/sys/kernel", "uevent_seqnum", O_RDONLY);
	if (fd >= 0) { /* a real sysfs file passes */
		assert_true(sysfs_fd_read(fd, buf, sizeof(buf)) > 0);
		close(fd);
	}
	setenv("RNGD_TEST_SYSFS", sys, 1);
	assert_int_equal(sysfs_open_checked(run, "l", O_RDONLY), -ELOOP);
	fd = sysfs_open_checked(run, "rng_quality", O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(sysfs_fd_write(fd, "7"), 0);
	close(fd);
	assert_string_equal(get_at(run, "rng_quality"), "7");
}

/* A directory longer than sysfs.c's path buffer: the path is allocated, not cut. */
static void test_sysfs_long_dir(void **state)
{
	char dir[PATH_MAX + 256], buf[64];
	size_t n = strlen(run);
	int fd;

	(void)state;
	memcpy(dir, run, n);
	dir[n] = '/';
	memset(dir + n + 1, 'd', 230);
	dir[n + 1 + 230] = '\0';
	assert_true(strlen(dir) > 200);
	assert_int_equal(mkdir(dir, 0755), 0);
	put_at(dir, "rng_current", "virtio_rng.0\n");
	assert_int_equal(sysfs_read(dir, "rng_current", buf, sizeof(buf)), 12);
	assert_string_equal(buf, "virtio_rng.0");
	put_at(dir, "rng_quality", "0\n");
	assert_int_equal(sysfs_write(dir, "rng_quality", "7"), 0);
	assert_string_equal(get_at(dir, "rng_quality"), "7");
	fd = sysfs_open_checked(dir, "rng_current", O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sysfs_read(dir, "missing", buf, sizeof(buf)), -ENOENT);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/test_khs.XXXXXX");
	assert_non_null(mkdtemp(tmp));
	snprintf(sys, sizeof(sys), "%s/sys", tmp);
	snprintf(run, sizeof(run), "%s/run", tmp);
	snprintf(root, sizeof(root), "%s/root", tmp);
	assert_int_equal(mkdir(sys, 0755), 0);
	assert_int_equal(mkdir(run, 0755), 0);
	setenv("RNGD_TEST_SYSFS", sys, 1);
	setenv("RNGD_TEST_RUNTIME_DIR", run, 1);
	setenv("RNGD_TEST_ROOT_DIR", root, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_names_and_lists),
		cmocka_unit_test_setup_teardown(test_read_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sysfs_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sysfs_long_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_grant_and_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_restore_without_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
