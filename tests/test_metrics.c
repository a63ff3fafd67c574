// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/metrics.c: the metrics text from a snapshot (names, labels and their
 * escaping, HELP and TYPE, bits shown as bytes), the same text from the status file read
 * back (stats_load_status()), the atomic write and its directory discipline, and the states
 * the families list against the ones the daemon has.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel_hwrng.h"
#include "log.h"
#include "metrics.h"
#include "source.h"
#include "stats.h"
#include "util.h"

/* 2026-11-30T04:46:55Z */
#define T0 (UINT64_C(1796014015) * NSEC_PER_SEC)

static const struct status_source sources[] = {
	{
		.name = "hwrng",
		.state = "running",
		.state_since = T0 + NSEC_PER_SEC,
		.bytes_read = 12500,
		.blocks_tested = 5,
		.blocks_passed = 3,
		.fips_failures = { 1, 0, 2, 0, 0 },
		.blocks_replayed = 4,
		.health_failures = 6,
		.bytes_fed = 192,
		.bits_credited = 1535, /* 191.875 bytes */
		.last_passed = T0 + 58 * NSEC_PER_SEC,
	},
	{
		/* A name with the characters a label value must escape. */
		.name = "file:a\"b\\c\nd",
		.state = "waiting",
		.last_error = "cannot open",
	},
};

static void fill_doc(struct status_doc *doc)
{
	*doc = (struct status_doc){
		.rngd_version = "9.8.7",
		.pid = getpid(),
		.started = T0,
		.updated = T0 + 60 * NSEC_PER_SEC,
		.kernel_generation = "modern",
		.crng_ready = true,
		.feeds = 3,
		.bytes_fed = 192,
		.bits_credited = 1536,
		.reseeds = 2,
		.last_feed = T0 + 59 * NSEC_PER_SEC,
		.feed_interval = 60,
		.kernel_hwrng_mode = "take-over",
		.kernel_hwrng_takeover = "held",
		.kernel_hwrng_backend = "virtio_rng.0",
		.n_sources = ARRAY_SIZE(sources),
		.sources = sources,
	};
}

/* metrics_format() into a string (free it). */
static char *format(const struct status_doc *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(metrics_format(doc, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void assert_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("no line '%s' in:\n%s", line, text);
}

static void test_format(void **state)
{
	struct status_doc doc;
	char *text;

	(void)state;
	fill_doc(&doc);
	text = format(&doc);
	assert_line(text, "# TYPE rngd_build_info gauge");
	assert_line(text, "rngd_build_info{version=\"9.8.7\"} 1");
	assert_line(text, "rngd_start_time_seconds 1796014015");
	assert_line(text, "rngd_last_update_timestamp_seconds 1796014075");
	assert_line(text, "rngd_crng_ready 1");
	assert_line(text, "# TYPE rngd_feeds_total counter");
	assert_line(text, "rngd_feeds_total 3");
	assert_line(text, "rngd_fed_bytes_total 192");
	assert_line(text, "rngd_credited_entropy_bytes_total 192");
	assert_line(text, "rngd_reseeds_total 2");
	assert_line(text, "rngd_last_feed_timestamp_seconds 1796014074");
	assert_line(text, "rngd_feed_interval_seconds 60");
	assert_line(text, "rngd_kernel_hwrng_mode{mode=\"take-over\"} 1");
	assert_line(text, "rngd_kernel_hwrng_mode{mode=\"watch\"} 0");
	assert_line(text, "rngd_kernel_hwrng_takeover{backend=\"virtio_rng.0\",state=\"held\"} 1");
	assert_line(text, "rngd_kernel_hwrng_takeover{backend=\"virtio_rng.0\",state=\"lost\"} 0");
	assert_line(text, "rngd_source_state{source=\"hwrng\",state=\"running\"} 1");
	assert_line(text, "rngd_source_state{source=\"hwrng\",state=\"waiting\"} 0");
	assert_line(text, "rngd_source_read_bytes_total{source=\"hwrng\"} 12500");
	assert_line(text, "rngd_source_tested_blocks_total{source=\"hwrng\"} 5");
	assert_line(text, "rngd_source_passed_blocks_total{source=\"hwrng\"} 3");
	assert_line(text, "rngd_source_fed_bytes_total{source=\"hwrng\"} 192");
	/* Bits in bytes, exactly: 1535 / 8. */
	assert_line(text, "rngd_source_credited_entropy_bytes_total{source=\"hwrng\"} 191.875");
	assert_line(text, "rngd_source_fips_failures_total{source=\"hwrng\",test=\"monobit\"} 1");
	assert_line(text, "rngd_source_fips_failures_total{source=\"hwrng\",test=\"runs\"} 2");
	assert_line(text, "rngd_source_fips_failures_total{source=\"hwrng\",test=\"long-run\"} 0");
	assert_line(text, "rngd_source_rejected_blocks_total{source=\"hwrng\",check=\"replay\"} 4");
	assert_line(text,
		    "rngd_source_rejected_blocks_total{source=\"hwrng\",check=\"sp800-90b\"} 6");
	assert_line(text, "rngd_source_last_good_block_timestamp_seconds{source=\"hwrng\"} "
			  "1796014073");
	/* Backslash, double quote and newline escaped in a label value. */
	assert_line(text, "rngd_source_state{source=\"file:a\\\"b\\\\c\\nd\",state=\"waiting\"} 1");
	assert_line(text, "rngd_source_last_good_block_timestamp_seconds{source=\"file:a\\\"b\\\\c"
			  "\\nd\"} 0");
	free(text);

	/* A state this rngd does not know (a newer writer) is shown, set; no backend: "". */
	doc.kernel_hwrng_takeover = "borrowed";
	doc.kernel_hwrng_backend = NULL;
	text = format(&doc);
	assert_line(text, "rngd_kernel_hwrng_takeover{backend=\"\",state=\"held\"} 0");
	assert_line(text, "rngd_kernel_hwrng_takeover{backend=\"\",state=\"borrowed\"} 1");
	free(text);
}

/* Every family: HELP then TYPE, once, before its samples, which are together. */
static void test_families(void **state)
{
	struct status_doc doc;
	char *text, *save = NULL, family[128] = "", seen[4096] = " ";
	int families = 0;

	(void)state;
	fill_doc(&doc);
	text = format(&doc);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], key[132];

		if (strncmp(line, "# HELP ", 7) == 0) {
			assert_int_equal(sscanf(line + 7, "%127s", family), 1);
			snprintf(key, sizeof(key), " %s ", family);
			assert_null(strstr(seen, key)); /* once */
			strncat(seen, key + 1, sizeof(seen) - strlen(seen) - 1);
			families++;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			assert_int_equal(sscanf(line + 7, "%127s", name), 1);
			assert_string_equal(name, family);
			/* Counters end in _total, and only they do. */
			bool total = strlen(name) > 6 && strcmp(name + strlen(name) - 6, "_total") == 0;

			assert_int_equal(strstr(line, " counter") != NULL, total);
			continue;
		}
		assert_int_equal(sscanf(line, "%127[^{ ]", name), 1);
		assert_string_equal(name, family);
	}
	assert_int_equal(families, 21);
	free(text);
}

/* The status file read back gives the same metrics: one snapshot, one formatter. */
static void test_from_status_file(void **state)
{
	char dir[] = "/tmp/rngd-test-metrics-XXXXXX", path[64], cmd[160];
	struct status_loaded loaded;
	struct status_doc doc;
	char *a, *b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/status.json", dir);
	fill_doc(&doc);
	assert_int_equal(stats_write_status(path, &doc), 0);
	assert_int_equal(stats_load_status(path, &loaded), 0);
	assert_string_equal(loaded.doc.kernel_hwrng_takeover, "held");
	assert_string_equal(loaded.doc.kernel_hwrng_backend, "virtio_rng.0");
	assert_int_equal(loaded.doc.feed_interval, 60);
	assert_int_equal(loaded.doc.sources[0].last_passed, T0 + 58 * NSEC_PER_SEC);
	assert_int_equal(loaded.doc.sources[1].last_passed, 0);
	a = format(&doc);
	b = format(&loaded.doc);
	assert_string_equal(a, b);
	free(a);
	free(b);
	stats_status_free(&loaded);

	/* A document of another format version is refused, not guessed at. */
	snprintf(cmd, sizeof(cmd), "sed -i 's/\"version\": 1,/\"version\": 2,/' %s", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(stats_load_status(path, &loaded), -EPROTONOSUPPORT);
	assert_int_equal(stats_load_status("/nonexistent/status.json", &loaded), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_write(void **state)
{
	char dir[] = "/tmp/rngd-test-metrics-XXXXXX", path[96], link[96], cmd[96];
	struct status_doc doc;
	struct stat st;
	mode_t old;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fill_doc(&doc);
	snprintf(path, sizeof(path), "%s/rngd.prom", dir);
	old = umask(077);
	assert_int_equal(metrics_write(path, &doc), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* The directory is not made, and a symlink in its place is not followed. */
	snprintf(path, sizeof(path), "%s/none/rngd.prom", dir);
	assert_int_equal(metrics_write(path, &doc), -ENOENT);
	assert_int_equal(stat(path, &st), -1);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(dir, link), 0);
	snprintf(path, sizeof(path), "%s/link/other.prom", dir);
	assert_int_equal(metrics_write(path, &doc), -ELOOP);
	snprintf(path, sizeof(path), "%s/other.prom", dir);
	assert_int_equal(stat(path, &st), -1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Each state the daemon can be in has its series in rngd_source_state. */
static void test_source_states(void **state)
{
	(void)state;
	for (int s = SOURCE_ABSENT; s <= SOURCE_WAITING; s++) {
		bool found = false;

		for (size_t i = 0; i < metrics_n_source_states; i++)
			found = found || strcmp(metrics_source_states[i],
						source_state_name((enum source_state)s)) == 0;
		assert_true(found);
	}
}

static void test_takeover_state(void **state)
{
	struct kernel_hwrng kh;
	const char *backend;

	(void)state;
	kernel_hwrng_init(&kh);
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "none");
	assert_string_equal(backend, "");
	kh.mode = KERNEL_HWRNG_TAKE_OVER;
	snprintf(kh.backend, sizeof(kh.backend), "virtio_rng.0");
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "none");
	kh.taken = true;
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "held");
	assert_string_equal(backend, "virtio_rng.0");
	kh.taken = false;
	kh.lost = true;
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "lost");
	kh.refused = true;
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "refused");
	kh.not_needed = true;
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "not-needed");
	kh.no_access = true;
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "refused");
	kernel_hwrng_init(&kh);
	kh.mode = KERNEL_HWRNG_WATCH;
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "none");
	kh.demoted = true;
	snprintf(kh.backend, sizeof(kh.backend), "tpm-rng-0");
	assert_string_equal(kernel_hwrng_takeover_state(&kh, &backend), "demoted");
	assert_string_equal(backend, "tpm-rng-0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_from_status_file),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_source_states),
		cmocka_unit_test(test_takeover_state),
	};

	log_setup(LOG_CRIT, LOG_TARGET_STDERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
