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
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
static unsigned int quality_writes, current_writes;
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

/* rng_current: a registered name is selected, "none" drops the current one, "" picks the best. */
static int store_current(const char *value)
{
	if (value[0] == '\0') {
		enable_best();
	} else if (strcmp(value, "none") == 0) {
		k.cur = -1;
		k.selected = 1;
	} else {
		for (int i = 0; i < k.n; i++) {
			if (strcmp(k.name[i], value) == 0) {
				k.cur = i;
				k.selected = 1;
			}
		}
	}
	current_writes++;
	publish();
	return 0;
}

int __wrap_write_text_file(const char *path, const char *value)
{
	char line[64];

	if (is_attr(path, "rng_quality")) {
		snprintf(line, sizeof(line), "%s\n", value);
		return store_quality(line, strlen(line));
	}
	if (is_attr(path, "rng_current"))
		return store_current(value);
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
		if (is_attr(path, "rng_current")) {
			char v[64];

			snprintf(v, sizeof(v), "%.*s", (int)strcspn(buf, "\n"), (const char *)buf);
			store_current(v);
			return (ssize_t)n;
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
	quality_writes = current_writes = 0;
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
	kh->dir = strdup(dir);
	kh->state = strdup(state);
	assert_true(kh->dir && kh->state);
	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	kh->fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(kh->fd >= 0);
	snprintf(path, sizeof(path), "%s/rng_current", dir);
	kh->cur_fd = open(path, O_WRONLY | O_CLOEXEC);
	kh->cur_rfd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(kh->cur_fd >= 0 && kh->cur_rfd >= 0);
}

/* The quality the take-over keeps for backend, -1 when none. */
static int kept(struct source *src, const char *backend)
{
	unsigned int q;

	return source_kept_quality(src, backend, &q) ? (int)q : -1;
}

/* As user rngd under the unit: rng_quality granted, rng_current not writable. */
static void open_kh_unprivileged(struct kernel_hwrng *kh)
{
	open_kh(kh);
	closep(&kh->cur_fd);
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

/* stderr (the log) into a file from here on; log_text() reads it since then. */
static int saved_stderr = -1;
static char log_path[PATH_MAX];

static void log_capture(void)
{
	int fd;

	snprintf(log_path, sizeof(log_path), "%s/log", tmpdir);
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	if (saved_stderr < 0)
		saved_stderr = dup(2);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
}

static const char *log_text(void)
{
	static char text[16384];

	fflush(stderr);
	text[0] = '\0';
	(void)read_text_file(log_path, text, sizeof(text));
	return text;
}

static void log_release(void)
{
	fflush(stderr);
	if (saved_stderr >= 0) {
		dup2(saved_stderr, 2);
		close(saved_stderr);
		saved_stderr = -1;
	}
}

/* A set whose hwrng source reads the (fake) misc hwrng of dir; *src its source. */
static struct source_set *make_set(struct conf *c, struct source **src)
{
	char conf_text[3 * PATH_MAX], err[512];
	struct source_set *set = NULL;
	const char *d = NULL;
	FILE *f;

	snprintf(dev_path, sizeof(dev_path), "%s/hwrng", tmpdir);
	f = fopen(dev_path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(conf_text, sizeof(conf_text),
		 "[source hwrng]\ndevice = %s\nsysfs = %s\n[source via]\nenabled = no\n"
		 "[source rdseed]\nenabled = no\n[source rdrand]\nenabled = no\n"
		 "[source rndr]\nenabled = no\n", dev_path,
		 dir);
	conf_init(c, source_check_section);
	assert_int_equal(
		conf_load_string(c, "t.conf", conf_text, strlen(conf_text), err, sizeof(err)), 0);
	assert_int_equal(source_set_new(&set, c, err, sizeof(err)), 0);
	assert_int_equal(source_set_init(set), 1);
	*src = kernel_hwrng_reader(set, &d);
	assert_non_null(*src);
	assert_string_equal(d, dir);
	return set;
}

static void free_set(struct source_set *set, struct conf *c)
{
	source_set_free(set);
	conf_free(c);
	dev_path[0] = '\0';
}

static void test_mode_and_path(void **st)
{
	enum kernel_hwrng_mode m;
	char *path;

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
	path = kernel_hwrng_state_path();
	assert_string_equal(path, RUNSTATEDIR "/rngd/" KERNEL_HWRNG_STATE_NAME);
	free(path);
}

/*
 * A stop by signal: given back and the state file removed, the descriptors and the lock left
 * to the process's exit (kernel_hwrng_stop() here, as the exit would).
 */
static void test_give_back_at_exit(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	assert_int_equal(sysfs_quality(), 0);
	kernel_hwrng_give_back_at_exit(&kh);
	assert_int_equal(sysfs_quality(), 1024);
	assert_int_equal(access(state, F_OK), -1);
	assert_false(kh.taken);
	assert_true(kh.fd >= 0);
	assert_true(kh.locked);
	kernel_hwrng_stop(&kh);
	assert_int_equal(kh.fd, -1);
	assert_int_equal(sysfs_quality(), 1024);
}

/* Take over and give back: the state file is on disk before 0 is written, gone after. */
static void test_take_and_give_back(void **st)
{
	struct kernel_hwrng kh;
	char text[512];

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_look_seconds(&kh), 1); /* to take it over */
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	assert_true(kh.taken);
	assert_int_equal(kernel_hwrng_look_seconds(&kh), KERNEL_HWRNG_LOOK_HELD);
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
	assert_int_equal(kernel_hwrng_look_seconds(&kh), 0); /* not acting any more */
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
	free(kh.dir); /* ... and its memory gone with it */
	free(kh.state);
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
	free(kh.state);
	assert_true(asprintf(&kh.state, "%s/none/deeper/state", tmpdir) > 0);
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
	assert_int_equal(kept(src, "virtio_rng.0"), 1000);

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
	assert_int_equal(kept(src, "virtio_rng.0"), 1024);
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


/*
 * Two daemons: the second neither takes the first's 0 for an original (its state file is
 * the live daemon's, not a crash's) nor writes anything; it names the first's pid, and
 * takes over once the first has stopped.
 */
static void test_two_daemons(void **st)
{
	struct kernel_hwrng a, b;
	char text[512], want[64];

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	open_kh(&a);
	open_kh(&b);
	assert_int_equal(kernel_hwrng_take(&a), 1);
	quality_writes = 0;
	log_capture();
	assert_int_equal(kernel_hwrng_take(&b), 0);
	assert_int_equal(kernel_hwrng_take(&b), 0); /* each tick: said once */
	log_release();
	assert_false(b.taken);
	assert_true(b.busy);
	assert_int_equal(kernel_hwrng_look_seconds(&b), 1); /* retried each second */
	assert_int_equal(b.holder, getpid()); /* from /proc/locks */
	assert_int_equal(quality_writes, 0);
	snprintf(want, sizeof(want), "another rngd (pid %ld) holds", (long)getpid());
	assert_non_null(strstr(log_text(), want));
	assert_null(strstr(strstr(log_text(), want) + 1, want));
	assert_null(strstr(log_text(), "earlier run"));
	assert_null(strstr(log_text(), "stopped without giving it back"));
	assert_true(read_text_file(state, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "quality=1024"));
	{
		const char *backend = NULL;

		assert_string_equal(kernel_hwrng_takeover_state(&b, &backend), "refused");
		assert_string_equal(backend, "virtio_rng.0");
	}

	kernel_hwrng_stop(&a);
	assert_int_equal(sysfs_quality(), 1024);
	assert_int_equal(kernel_hwrng_take(&b), 1);
	assert_false(b.busy);
	assert_int_equal(b.quality, 1024);
	kernel_hwrng_stop(&b);
	assert_int_equal(sysfs_quality(), 1024);
}

/*
 * As user rngd (no rng_current): a better backend registered while virtio is held makes
 * the kernel switch; virtio cannot be given back now, so it stays owed, in the state file,
 * and is not dropped when the other one is taken later; held again when it is current
 * again; given back at exit. Nothing is taken while another backend could be switched to.
 */
static void test_every_backend_owed(void **st)
{
	struct kernel_hwrng kh;
	struct source_set *set;
	struct source *src;
	struct conf c;
	char text[512];

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	set = make_set(&c, &src);
	kernel_hwrng_init(&kh);
	kernel_hwrng_start(&kh, KERNEL_HWRNG_TAKE_OVER, dir, state, set);
	assert_true(kh.taken);
	closep(&kh.cur_fd); /* the unit's user: rng_current is root's */

	/* A vTPM registers with 512 > the 0 written: the kernel makes it current. */
	k.n = 2;
	k.name[1] = "tpm-rng-0";
	k.quality[1] = 512;
	k.cur = 1;
	publish();
	quality_writes = 0;
	kernel_hwrng_update(&kh, set);
	assert_false(kh.taken);
	assert_int_equal(kh.n_owed, 1);
	assert_string_equal(kh.owed[0].backend, "virtio_rng.0");
	assert_int_equal(k.quality[0], 0);
	assert_int_equal(k.quality[1], 512); /* not taken: virtio could be switched to */
	assert_int_equal(quality_writes, 0);
	assert_true(read_text_file(state, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "backend=virtio_rng.0\nquality=1024"));
	assert_null(strstr(text, "tpm"));
	assert_int_equal(kept(src, "virtio_rng.0"), -1); /* not held: what the source finds */
	assert_int_equal(kept(src, "tpm-rng-0"), -1);

	/* virtio goes (unplugged), the vTPM is alone: taken, virtio's entry kept. */
	k.n = 1;
	k.name[0] = "tpm-rng-0";
	k.quality[0] = 512;
	k.cur = 0;
	publish();
	kernel_hwrng_update(&kh, set);
	assert_true(kh.taken);
	assert_int_equal(kh.n_owed, 2);
	assert_true(read_text_file(state, text, sizeof(text)) > 0);
	assert_non_null(strstr(text, "backend=virtio_rng.0\nquality=1024"));
	assert_non_null(strstr(text, "backend=tpm-rng-0\nquality=512"));

	/* virtio back (at the 0 written), the vTPM gone: held again without a write. */
	kernel(1, "virtio_rng.0", 0, NULL, 0);
	kernel_hwrng_update(&kh, set);
	assert_true(kh.taken);
	assert_string_equal(kh.backend, "virtio_rng.0");
	assert_int_equal(kh.quality, 1024);
	assert_int_equal(quality_writes, 0);
	assert_int_equal(kept(src, "virtio_rng.0"), 1024);

	kernel_hwrng_stop(&kh);
	assert_int_equal(sysfs_quality(), 1024);
	assert_int_equal(kh.n_owed, 0);
	assert_int_equal(access(state, F_OK), -1);
	free_set(set, &c);
}

/* Root's daemon (rng_current kept): a backend that is no longer current is made current
 * for its give-back, and the kernel's own choice is put back after it. */
static void test_every_backend_given_back_as_root(void **st)
{
	struct kernel_hwrng kh;

	(void)st;
	kernel(2, "virtio_rng.0", 1024, "tpm-rng-0", 0);
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1); /* 0 vs 0: virtio stays current */
	k.cur = 1; /* none of rngd's doing: the other one current, automatically */
	k.selected = 0;
	publish();
	kernel_hwrng_give_back(&kh, "test");
	assert_int_equal(k.quality[0], 1024);
	assert_int_equal(kh.n_owed, 0);
	assert_int_equal(k.cur, 0); /* the kernel's choice: the best */
	assert_int_equal(k.selected, 0);
	kernel_hwrng_stop(&kh);
}

/*
 * The administrator's choice (rng_selected 1): without rng_current the take-over would
 * clear it and could not set it again, so the backend is left to the kernel (said once,
 * nothing written); with it, the choice survives take-over and give-back.
 */
static void test_selection_survives(void **st)
{
	struct kernel_hwrng kh;
	const char *backend;

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	k.selected = 1;
	publish();
	open_kh_unprivileged(&kh);
	log_capture();
	assert_int_equal(kernel_hwrng_take(&kh), 0);
	assert_int_equal(kernel_hwrng_take(&kh), 0);
	log_release();
	assert_false(kh.taken);
	assert_int_equal(quality_writes + current_writes, 0);
	assert_int_equal(k.selected, 1);
	assert_non_null(strstr(log_text(), "chosen by the administrator (rng_selected 1)"));
	assert_null(strstr(strstr(log_text(), "rng_selected 1") + 1, "rng_selected 1"));
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "refused");
	kernel_hwrng_stop(&kh);
	assert_int_equal(k.selected, 1);
	assert_int_equal(sysfs_quality(), 1024);
	assert_int_equal(access(state, F_OK), -1);

	/* Root's: taken, selection kept; selected again while held, kept at give-back. */
	open_kh(&kh);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	assert_int_equal(k.selected, 1);
	k.selected = 0;
	publish();
	kernel_hwrng_give_back(&kh, "test");
	assert_int_equal(k.selected, 0);
	assert_int_equal(kernel_hwrng_take(&kh), 1);
	k.selected = 1;
	publish();
	kernel_hwrng_stop(&kh);
	assert_int_equal(k.selected, 1);
	assert_int_equal(sysfs_quality(), 1024);
}

/*
 * A reload from take-over to watch (or leave) gives the backend back and forgets the
 * remembered quality: the credit follows rng_quality again (0 after a watch demotion).
 */
static void test_reload_mode_clears_quality(void **st)
{
	static const char *const modes[] = { "watch", "leave" };

	(void)st;
	for (size_t i = 0; i < 2; i++) {
		struct kernel_hwrng kh;
		struct source_set *set;
		struct source *src;
		struct conf c;

		kernel(1, "virtio_rng.0", 1000, NULL, 0);
		set = make_set(&c, &src);
		kernel_hwrng_init(&kh);
		kernel_hwrng_start(&kh, KERNEL_HWRNG_TAKE_OVER, dir, state, set);
		assert_true(kh.taken);
		assert_int_equal(kept(src, "virtio_rng.0"), 1000);
		kernel_hwrng_reload(&kh, modes[i], set);
		assert_int_equal(kept(src, "virtio_rng.0"), -1);
		assert_false(kh.taken);
		assert_int_equal(sysfs_quality(), 1000);
		assert_int_equal(kh.quality, 0);
		/* watch demotes to 0 (or the administrator does): credited 0, not 1000 */
		source_set_quality(src, 0);
		assert_int_equal(source_quality(src), 0);
		kernel_hwrng_update(&kh, set);
		assert_int_equal(source_quality(src), 0);
		kernel_hwrng_stop(&kh);
		free_set(set, &c);
	}
}

/* Started while rng_quality was 0 (left alone): taken over once the administrator raises it. */
static void test_raised_later(void **st)
{
	struct kernel_hwrng kh;
	struct source_set *set;
	struct source *src;
	struct conf c;

	(void)st;
	kernel(1, "virtio_rng.0", 0, NULL, 0);
	set = make_set(&c, &src);
	kernel_hwrng_init(&kh);
	kernel_hwrng_start(&kh, KERNEL_HWRNG_TAKE_OVER, dir, state, set);
	assert_false(kh.taken);
	assert_true(kh.not_needed);
	kernel_hwrng_update(&kh, set);
	assert_int_equal(quality_writes, 0);
	k.quality[0] = 800;
	publish();
	log_capture();
	kernel_hwrng_update(&kh, set);
	log_release();
	assert_true(kh.taken);
	assert_int_equal(kh.quality, 800);
	assert_int_equal(sysfs_quality(), 0);
	assert_int_equal(kept(src, "virtio_rng.0"), 800);
	assert_non_null(strstr(log_text(), "was raised to 800"));
	kernel_hwrng_stop(&kh);
	assert_int_equal(sysfs_quality(), 800);
	free_set(set, &c);
}

/*
 * No reader of the kernel's hwrng at start (rng-core loads later): the mode is kept, a
 * reload with the same mode says nothing about restarting, and the policy acts, saying so,
 * once a source reads it.
 */
static void test_late_rng_core(void **st)
{
	struct kernel_hwrng kh;
	struct source_set *set;
	struct source *src;
	struct conf c;

	(void)st;
	kernel(1, "virtio_rng.0", 1024, NULL, 0);
	set = make_set(&c, &src);
	dev_path[0] = '\0'; /* no misc device yet */
	kernel_hwrng_init(&kh);
	log_capture();
	kernel_hwrng_start(&kh, KERNEL_HWRNG_TAKE_OVER, NULL, state, set);
	kernel_hwrng_update(&kh, set);
	kernel_hwrng_reload(&kh, "take-over", set); /* the first SIGHUP */
	assert_int_equal(kh.fd, -1);
	assert_null(strstr(log_text(), "restart rngd"));
	snprintf(dev_path, sizeof(dev_path), "%s/hwrng", tmpdir);
	kernel_hwrng_update(&kh, set);
	log_release();
	assert_true(kh.taken);
	assert_int_equal(sysfs_quality(), 0);
	assert_non_null(strstr(log_text(), "after rngd started: kernel-hwrng = take-over is "
					   "active from here on"));
	kernel_hwrng_stop(&kh);
	assert_int_equal(sysfs_quality(), 1024);
	free_set(set, &c);
}

/*
 * A crash (SIGABRT, SIGSEGV) gives the held backend back from the signal handler, and only
 * when it is still the current one.
 */
static void crash_child(int sig, bool switch_first)
{
	struct kernel_hwrng kh;
	struct rlimit no_core = { 0, 0 };
	pid_t pid;
	int status;

	kernel(2, "virtio_rng.0", 1024, "tpm-rng-0", 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGSEGV, SIG_DFL); /* cmocka's handlers stay the parent's */
		signal(SIGABRT, SIG_DFL);
		open_kh(&kh);
		if (kernel_hwrng_take(&kh) != 1)
			_exit(3);
		if (switch_first) {
			k.cur = 1;
			publish();
		}
		raise(sig);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), sig);
	unlink(state);
}

static void test_crash_gives_back(void **st)
{
	(void)st;
	crash_child(SIGABRT, false);
	assert_int_equal(k.cur, 0);
	assert_int_equal(sysfs_quality(), 1024);
	crash_child(SIGSEGV, false);
	assert_int_equal(sysfs_quality(), 1024);
	/* Switched before the crash: the other backend's quality is left alone. */
	crash_child(SIGSEGV, true);
	k.cur = 1;
	assert_int_equal(sysfs_quality(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_and_path),
		cmocka_unit_test(test_take_and_give_back),
		cmocka_unit_test(test_give_back_at_exit),
		cmocka_unit_test(test_take_keeps_selection),
		cmocka_unit_test(test_take_refused_on_switch),
		cmocka_unit_test(test_take_after_crash),
		cmocka_unit_test(test_already_zero),
		cmocka_unit_test(test_no_backend),
		cmocka_unit_test(test_give_back_gone),
		cmocka_unit_test(test_give_back_switched),
		cmocka_unit_test(test_no_state_dir),
		cmocka_unit_test(test_update_with_set),
		cmocka_unit_test(test_two_daemons),
		cmocka_unit_test(test_every_backend_owed),
		cmocka_unit_test(test_every_backend_given_back_as_root),
		cmocka_unit_test(test_selection_survives),
		cmocka_unit_test(test_reload_mode_clears_quality),
		cmocka_unit_test(test_raised_later),
		cmocka_unit_test(test_late_rng_core),
		cmocka_unit_test(test_crash_gives_back),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
