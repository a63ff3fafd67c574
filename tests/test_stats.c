// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for src/stats.c: the status document, its atomic replacement, --status output. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "stats.h"
#include "util.h"

/* 2026-11-30T04:46:55Z */
#define T0 (UINT64_C(1796014015) * NSEC_PER_SEC)

struct tmp {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	snprintf(t->dir, sizeof(t->dir), "/tmp/rngd-test-stats-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/run/rngd/status.json", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static const struct status_source two_sources[] = {
	{
		.name = "hwrng",
		.state = "running",
		.state_since = T0 + 1 * NSEC_PER_SEC,
		.bytes_read = 12500,
		.blocks_tested = 5,
		.blocks_passed = 4,
		.fips_failures = { 1, 0, 1, 0, 0 },
		.bytes_fed = 192,
		.bits_credited = 1536,
		.last_error = NULL,
		.n_counters = 2,
		.counters = { { "reopens", 1 }, { "short_reads", 7 } },
	},
	{
		.name = "file:noise",
		.state = "backoff",
		.state_since = T0 + 2 * NSEC_PER_SEC,
		.bytes_read = 2500,
		.blocks_tested = 1,
		.blocks_passed = 0,
		.fips_failures = { 0, 0, 0, 0, 1 },
		.last_error = "read: Input/output error",
	},
};

static void fill_doc(struct status_doc *doc, const struct status_source *src, size_t n)
{
	*doc = (struct status_doc){
		.rngd_version = "9.8.7",
		.pid = 4321,
		.started = T0,
		.updated = T0 + 60 * NSEC_PER_SEC,
		.kernel_generation = "modern",
		.crng_ready = true,
		.feeds = 3,
		.bytes_fed = 192,
		.bits_credited = 1536,
		.reseeds = 3,
		.last_feed = T0 + 59 * NSEC_PER_SEC,
		.n_sources = n,
		.sources = src,
	};
}

static uint64_t ju(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return (uint64_t)json_integer_value(v);
}

static const char *js(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void test_round_trip(void **state)
{
	struct tmp *t = *state;
	struct status_doc doc;
	json_error_t err;
	json_t *root, *s, *f;
	struct stat st;
	mode_t old = umask(077);

	fill_doc(&doc, two_sources, ARRAY_SIZE(two_sources));
	/* The parent directories do not exist yet. */
	assert_int_equal(stats_write_status(t->path, &doc), 0);
	umask(old);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	root = json_load_file(t->path, JSON_STRICT, &err);
	assert_non_null(root);
	assert_int_equal(ju(root, "version"), STATUS_FORMAT_VERSION);
	assert_int_equal(STATUS_FORMAT_VERSION, 1);
	assert_string_equal(js(root, "rngd_version"), "9.8.7");
	assert_int_equal(ju(root, "pid"), 4321);
	assert_string_equal(js(root, "started"), "2026-11-30T04:46:55Z");
	assert_string_equal(js(root, "updated"), "2026-11-30T04:47:55Z");
	f = json_object_get(root, "kernel");
	assert_string_equal(js(f, "generation"), "modern");
	assert_true(json_is_true(json_object_get(f, "crng_ready")));
	f = json_object_get(root, "feed");
	assert_int_equal(ju(f, "feeds"), 3);
	assert_int_equal(ju(f, "bytes_fed"), 192);
	assert_int_equal(ju(f, "bits_credited"), 1536);
	assert_int_equal(ju(f, "reseeds"), 3);
	assert_string_equal(js(f, "last_feed"), "2026-11-30T04:47:54Z");

	assert_int_equal(json_array_size(json_object_get(root, "sources")), 2);
	s = json_array_get(json_object_get(root, "sources"), 0);
	assert_string_equal(js(s, "name"), "hwrng");
	assert_string_equal(js(s, "state"), "running");
	assert_string_equal(js(s, "state_since"), "2026-11-30T04:46:56Z");
	assert_int_equal(ju(s, "bytes_read"), 12500);
	assert_int_equal(ju(s, "blocks_tested"), 5);
	assert_int_equal(ju(s, "blocks_passed"), 4);
	f = json_object_get(s, "fips_failures");
	assert_int_equal(ju(f, "monobit"), 1);
	assert_int_equal(ju(f, "poker"), 0);
	assert_int_equal(ju(f, "runs"), 1);
	assert_int_equal(ju(f, "long-run"), 0);
	assert_int_equal(ju(f, "continuous"), 0);
	assert_int_equal(ju(s, "bytes_fed"), 192);
	assert_int_equal(ju(s, "bits_credited"), 1536);
	assert_true(json_is_null(json_object_get(s, "last_error")));
	f = json_object_get(s, "counters");
	assert_int_equal(json_object_size(f), 2);
	assert_int_equal(ju(f, "reopens"), 1);
	assert_int_equal(ju(f, "short_reads"), 7);

	s = json_array_get(json_object_get(root, "sources"), 1);
	assert_string_equal(js(s, "name"), "file:noise");
	assert_string_equal(js(s, "last_error"), "read: Input/output error");
	assert_int_equal(json_object_size(json_object_get(s, "counters")), 0);
	json_decref(root);

	/* Never fed yet: null, not a 1970 date. */
	doc.last_feed = 0;
	doc.n_sources = 0;
	assert_int_equal(stats_write_status(t->path, &doc), 0);
	root = json_load_file(t->path, 0, &err);
	assert_non_null(root);
	assert_true(json_is_null(json_object_get(json_object_get(root, "feed"), "last_feed")));
	assert_int_equal(json_array_size(json_object_get(root, "sources")), 0);
	json_decref(root);
}

/* Only status.json is left in the directory: no temporary files. */
static void assert_only_status(const char *path)
{
	char dir[128];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		assert_string_equal(e->d_name, "status.json");
		n++;
	}
	closedir(d);
	assert_int_equal(n, 1);
}

/*
 * The file is written a value at a time (stats.c): its bytes must be what json_dumps() of
 * the whole document gives, the layout rngd always wrote. Read back and dumped again, with
 * strings to escape, nulls, empty objects, and 12 sources (past the writer's 4 KiB buffer).
 */
static void assert_layout(const char *path, const struct status_doc *doc)
{
	_cleanup_(freep) char *text = NULL;
	char *again;
	json_error_t err;
	json_t *root;
	FILE *f;
	long n;

	assert_int_equal(stats_write_status(path, doc), 0);
	f = fopen(path, "re");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	root = json_loads(text, JSON_STRICT, &err);
	assert_non_null(root);
	again = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	assert_non_null(again);
	assert_int_equal(text[n - 1], '\n');
	text[n - 1] = '\0';
	assert_string_equal(text, again);
	free(again);
	json_decref(root);
}

static void test_layout(void **state)
{
	struct tmp *t = *state;
	struct status_source many[12];
	struct status_doc doc;

	fill_doc(&doc, two_sources, 0);
	assert_layout(t->path, &doc);
	doc.n_sources = ARRAY_SIZE(two_sources);
	doc.kernel_hwrng_mode = "take-over";
	doc.kernel_hwrng_takeover = "held";
	doc.kernel_hwrng_backend = "virtio_rng.0";
	assert_layout(t->path, &doc);
	for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
		many[i] = two_sources[i % 2];
		many[i].bytes_read = UINT64_MAX - i; /* past json_int_t: clamped */
	}
	many[3].last_error = "\"quoted\" back\\slash/ tab\t nl\n \x01 \x7f \xc3\xa9 \xc2\x9b";
	many[4].name = NULL;
	many[4].state = NULL;
	many[5].n_counters = STATUS_MAX_COUNTERS;
	for (size_t i = 0; i < STATUS_MAX_COUNTERS; i++)
		many[5].counters[i] =
			(struct status_counter){ i == 3 ? NULL : stats_fips_keys[i % 5], i };
	fill_doc(&doc, many, ARRAY_SIZE(many));
	doc.last_feed = 0;
	doc.rngd_version = NULL;
	assert_layout(t->path, &doc);
	/* A string JSON cannot carry (not UTF-8): an error, the last document stays whole. */
	many[1].last_error = "bad \xff byte";
	assert_int_equal(stats_write_status(t->path, &doc), -EINVAL);
	many[1].last_error = NULL;
	assert_only_status(t->path);
	assert_layout(t->path, &doc);
}

static void test_atomic_replace(void **state)
{
	struct tmp *t = *state;
	struct status_source many[6];
	char names[6][64];
	struct status_doc small, big;
	unsigned int reads = 0;
	pid_t pid;
	int status;

	for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
		many[i] = two_sources[1];
		snprintf(names[i], sizeof(names[i]), "file:source-with-a-long-name-%zu", i);
		many[i].name = names[i];
	}
	fill_doc(&small, two_sources, 1);
	fill_doc(&big, many, ARRAY_SIZE(many));
	assert_int_equal(stats_write_status(t->path, &small), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 2000; i++) {
			struct status_doc *d = i % 2 ? &big : &small;

			d->feeds = (uint64_t)i;
			if (stats_write_status(t->path, d) < 0)
				_exit(1);
		}
		_exit(0);
	}
	/* Read while the writer rewrites; every read must be a whole document. */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		json_error_t err;
		json_t *root = json_load_file(t->path, 0, &err);
		size_t n;

		if (!root)
			fail_msg("partial status document after %u reads: %s", reads, err.text);
		assert_int_equal(ju(root, "version"), STATUS_FORMAT_VERSION);
		n = json_array_size(json_object_get(root, "sources"));
		assert_true(n == 1 || n == ARRAY_SIZE(many));
		json_decref(root);
		reads++;
		if (w == pid)
			break;
		assert_int_equal(w, 0);
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	print_message("%u whole documents read during 2000 rewrites\n", reads);
	assert_only_status(t->path);
}

static char *print_to_string(const char *path, bool json, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*ret = stats_print_status(path, json, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_print_table(void **state)
{
	struct tmp *t = *state;
	struct status_doc doc;
	json_error_t err;
	json_t *root;
	char *out;
	int r;

	char want[96];
	pid_t dead;

	/* A document whose pid is not running (a daemon killed with SIGKILL) is stale. */
	fill_doc(&doc, two_sources, ARRAY_SIZE(two_sources));
	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	doc.pid = dead;
	assert_int_equal(stats_write_status(t->path, &doc), 0);
	out = print_to_string(t->path, false, &r);
	assert_int_equal(r, -ESRCH);
	free(out);

	/* The pid must be running: this process's. */
	doc.pid = getpid();
	assert_int_equal(stats_write_status(t->path, &doc), 0);
	out = print_to_string(t->path, false, &r);
	assert_int_equal(r, 0);
	print_message("%s", out);
	snprintf(want, sizeof(want), "rngd 9.8.7, pid %ld, started 2026-11-30T04:46:55Z",
		 (long)getpid());
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "kernel: modern random driver, CRNG ready\n"));
	assert_non_null(strstr(out, "fed: 3 times, 192 B, 1536 bits credited, 3 reseeds, "
				    "last 2026-11-30T04:47:54Z\n"));
	assert_non_null(strstr(out, "SOURCE      STATE    "));
	assert_non_null(strstr(out, "\nhwrng       running    12.2 KiB  4/5"));
	assert_non_null(strstr(out, "1536 bits  -\n"));
	assert_non_null(strstr(out, "\nfile:noise  backoff     2.4 KiB  0/1"));
	assert_non_null(strstr(out, "0 bits  read: Input/output error\n"));
	free(out);

	out = print_to_string(t->path, true, &r);
	assert_int_equal(r, 0);
	root = json_loads(out, 0, &err);
	assert_non_null(root);
	assert_int_equal(ju(root, "version"), 1);
	json_decref(root);
	free(out);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_print_errors(void **state)
{
	struct tmp *t = *state;
	char path[160];
	char *out;
	int r;

	snprintf(path, sizeof(path), "%s/missing.json", t->dir);
	out = print_to_string(path, false, &r);
	assert_int_equal(r, -ENOENT);
	assert_string_equal(out, "");
	free(out);

	snprintf(path, sizeof(path), "%s/bad.json", t->dir);
	write_file(path, "{\"version\": 1, \"sources\": [");
	out = print_to_string(path, false, &r);
	assert_int_equal(r, -EBADMSG);
	free(out);
	out = print_to_string(path, true, &r);
	assert_int_equal(r, -EBADMSG);
	free(out);

	write_file(path, "[1, 2]");
	out = print_to_string(path, false, &r);
	assert_int_equal(r, -EBADMSG);
	free(out);
	write_file(path, "{\"sources\": []}");
	out = print_to_string(path, false, &r);
	assert_int_equal(r, -EBADMSG);
	free(out);

	/* A future format: the table refuses, the raw document is still shown. */
	write_file(path, "{\"version\": 2, \"sources\": {}}");
	out = print_to_string(path, false, &r);
	assert_int_equal(r, -EPROTONOSUPPORT);
	free(out);
	out = print_to_string(path, true, &r);
	assert_int_equal(r, 0);
	assert_non_null(strstr(out, "\"version\": 2"));
	free(out);

	/* A directory in the way of the parent: the writer reports it. */
	snprintf(path, sizeof(path), "%s/bad.json/status.json", t->dir);
	struct status_doc doc;

	fill_doc(&doc, two_sources, 1);
	assert_int_equal(stats_write_status(path, &doc), -ENOTDIR);
}

static void test_prepare_dir(void **state)
{
	struct tmp *t = *state;
	char path[160], dir[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/a/b/status.json", t->dir);
	snprintf(dir, sizeof(dir), "%s/a/b", t->dir);
	if (geteuid() != 0) {
		assert_int_equal(stats_prepare_dir(path, (uid_t)-1, (gid_t)-1), 0);
		assert_int_equal(stat(dir, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		return;
	}
	mode_t old = umask(077);

	assert_int_equal(stats_prepare_dir(path, 65534, 65533), 0);
	umask(old);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65533);
	/* Only the directory of the file is handed over, not the parents made on the way. */
	snprintf(dir, sizeof(dir), "%s/a", t->dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_uid, 0);
	/* An existing directory rngd did not make (0700, other files) is refused, unchanged. */
	snprintf(path, sizeof(path), "%s/x.json", t->dir);
	assert_int_equal(stats_prepare_dir(path, 65534, 65534), -EPERM);
	assert_int_equal(stat(t->dir, &st), 0);
	assert_int_equal(st.st_uid, 0);
	/* One rngd made on a root run (root's, 0755, only its files) is taken over. */
	snprintf(dir, sizeof(dir), "%s/own", t->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/own/status.json", t->dir);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	assert_int_equal(stats_prepare_dir(path, 65534, 65533), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	/* A symlink in the directory's place is never followed. */
	snprintf(dir, sizeof(dir), "%s/link", t->dir);
	assert_int_equal(symlink("own", dir), 0);
	snprintf(path, sizeof(path), "%s/link/status.json", t->dir);
	assert_int_equal(stats_prepare_dir(path, 0, 0), -ELOOP);
	snprintf(dir, sizeof(dir), "%s/own", t->dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_uid, 65534);
}

static void test_summary(void **state)
{
	struct status_doc doc;
	char buf[1024], small[16];
	int n;

	fill_doc(&doc, two_sources, ARRAY_SIZE(two_sources));
	n = stats_format_feed(&doc, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "kernel modern, CRNG ready; fed 3 times, 192 bytes, 1536 bits "
				 "credited, 3 reseeds, last feed 2026-11-30T04:47:54Z");
	n = stats_format_source(&two_sources[1], buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "backoff, 2500 bytes read, 0/1 blocks passed (failures: monobit "
				 "0, poker 0, runs 0, long-run 0, continuous 1), 0 bytes fed, 0 "
				 "bits credited, last error 'read: Input/output error'");
	/* Cut output still reports the whole length, like snprintf. */
	assert_int_equal(stats_format_source(&two_sources[1], small, sizeof(small)), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void test_notify_status(void **state)
{
	struct status_source src[2] = { two_sources[0], two_sources[1] };
	struct status_doc doc;
	char buf[256];

	fill_doc(&doc, src, ARRAY_SIZE(src));
	assert_true(stats_format_notify_status(&doc, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "1/2 sources up; fed 192 bytes in 3 feeds, last 04:47:54 UTC; "
				 "not running: file:noise (backoff)");
	src[1].state = "starting";
	doc.feeds = 0;
	stats_format_notify_status(&doc, buf, sizeof(buf));
	assert_string_equal(buf, "2/2 sources up; nothing fed yet");
	/* A source that cannot work on this machine is left out of the count. */
	src[0].state = "failed";
	src[1].state = "absent";
	stats_format_notify_status(&doc, buf, sizeof(buf));
	assert_string_equal(buf, "0/1 sources up; nothing fed yet; not running: hwrng (failed)");
	doc.n_sources = 0;
	stats_format_notify_status(&doc, buf, sizeof(buf));
	assert_string_equal(buf, "0/0 sources up; nothing fed yet");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_dir, setup, teardown),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_notify_status),
	};

	log_setup(LOG_CRIT, LOG_TARGET_STDERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
