// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The status document read back, for rngd --status: jansson parses it. Only the status
 * helper (src/status_main.c) and the tests link this file; the daemon writes the document
 * (stats.c) and never maps a JSON parser.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "stats.h"
#include "util.h"

static void json_decref_p(json_t **j)
{
	json_decref(*j);
}

static void format_size(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

static uint64_t get_uint(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v)
								 : 0;
}

static const char *get_str(const json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

/*
 * s with what a terminal would act on escaped, as systemctl does: control bytes (C0, DEL)
 * and C1 controls (U+0080..U+009F: CSI is U+009B) become \xNN, a backslash \\. The
 * document is anybody's who can write the status directory; its text goes to a terminal.
 */
static char *escape_text(const char *s)
{
	size_t n = 0;
	char *out, *o;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) ? 8
		     : *p == '\\'						    ? 2
										    : 1;
	out = o = malloc(n + 1);
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			o += sprintf(o, "\\xc2\\x%02x", p[1]);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			o += sprintf(o, "\\x%02x", *p);
		} else if (*p == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else {
			*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}

/* Every string of j (object values, array items, at any depth) escaped in place. */
static void escape_strings(json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_object(j)) {
		json_object_foreach(j, key, v) {
			if (json_is_string(v)) {
				char *e = escape_text(json_string_value(v));

				if (e && strcmp(e, json_string_value(v)) != 0)
					json_object_set_new(j, key, json_string(e));
				free(e);
			} else {
				escape_strings(v);
			}
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			if (json_is_string(v)) {
				char *e = escape_text(json_string_value(v));

				if (e && strcmp(e, json_string_value(v)) != 0)
					json_array_set_new(j, i, json_string(e));
				free(e);
			} else {
				escape_strings(v);
			}
		}
	}
}

static void print_table(const json_t *root, FILE *out)
{
	const json_t *kernel = json_object_get(root, "kernel");
	const json_t *feed = json_object_get(root, "feed");
	const json_t *sources = json_object_get(root, "sources");
	const json_t *s;
	char read[32], fed[32], blocks[48];
	int wname = 6, wstate = 5, wblocks = 13;
	size_t i;

	fprintf(out, "rngd %s, pid %" PRIu64 ", started %s, updated %s\n",
		get_str(root, "rngd_version", "?"), get_uint(root, "pid"),
		get_str(root, "started", "?"), get_str(root, "updated", "?"));
	fprintf(out, "kernel: %s random driver, CRNG %s\n", get_str(kernel, "generation", "?"),
		json_is_true(json_object_get(kernel, "crng_ready")) ? "ready" : "not ready");
	format_size(get_uint(feed, "bytes_fed"), fed, sizeof(fed));
	fprintf(out, "fed: %" PRIu64 " times, %s, %" PRIu64 " bits credited, %" PRIu64
		     " reseeds, last %s\n",
		get_uint(feed, "feeds"), fed, get_uint(feed, "bits_credited"),
		get_uint(feed, "reseeds"), get_str(feed, "last_feed", "never"));

	json_array_foreach(sources, i, s) {
		wname = MAX(wname, (int)strlen(get_str(s, "name", "?")));
		wstate = MAX(wstate, (int)strlen(get_str(s, "state", "?")));
		snprintf(blocks, sizeof(blocks), "%" PRIu64 "/%" PRIu64,
			 get_uint(s, "blocks_passed"), get_uint(s, "blocks_tested"));
		wblocks = MAX(wblocks, (int)strlen(blocks));
	}
	fprintf(out, "\n%-*s  %-*s  %10s  %-*s  %10s  %12s  %s\n", wname, "SOURCE", wstate,
		"STATE", "READ", wblocks, "PASSED/TESTED", "FED", "CREDITED", "LAST ERROR");
	json_array_foreach(sources, i, s) {
		format_size(get_uint(s, "bytes_read"), read, sizeof(read));
		format_size(get_uint(s, "bytes_fed"), fed, sizeof(fed));
		snprintf(blocks, sizeof(blocks), "%" PRIu64 "/%" PRIu64,
			 get_uint(s, "blocks_passed"), get_uint(s, "blocks_tested"));
		fprintf(out, "%-*s  %-*s  %10s  %-*s  %10s  %7" PRIu64 " bits  %s\n", wname,
			get_str(s, "name", "?"), wstate, get_str(s, "state", "?"), read, wblocks,
			blocks, fed, get_uint(s, "bits_credited"), get_str(s, "last_error", "-"));
	}
	if (json_array_size(sources) == 0)
		fprintf(out, "(no sources)\n");
}

/*
 * The document at path, parsed, with the checks every reader wants (logged): it exists, is
 * JSON, has a "version", and its writer still runs. 0 or -errno.
 */
static int load_json(const char *path, json_t **ret)
{
	_cleanup_(json_decref_p) json_t *root = NULL;
	json_error_t err;
	json_t *pid;
	FILE *f;
	int r;

	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		log_error("cannot read status file '%s': %s%s", path, strerror(-r),
			  r == -ENOENT ? " (is rngd running?)" : "");
		return r;
	}
	root = json_loadf(f, 0, &err);
	fclose(f);
	if (!root) {
		log_error("status file '%s' is not valid JSON: line %d column %d: %s", path,
			  err.line, err.column, err.text);
		return -EBADMSG;
	}
	if (!json_is_object(root) || !json_is_integer(json_object_get(root, "version"))) {
		log_error("'%s' is not an rngd status document (no \"version\")", path);
		return -EBADMSG;
	}
	pid = json_object_get(root, "pid");
	/* Left by a daemon that was killed (SIGKILL, crash): say so rather than show it. */
	if (json_is_integer(pid) && json_integer_value(pid) > 0 &&
	    json_integer_value(pid) <= INT32_MAX &&
	    kill((pid_t)json_integer_value(pid), 0) < 0 && errno == ESRCH) {
		log_error("status file '%s' is stale: the rngd that wrote it (pid %lld) is "
			  "not running",
			  path, (long long)json_integer_value(pid));
		return -ESRCH;
	}
	*ret = root;
	root = NULL;
	return 0;
}

/* Whether root has the format version this rngd reads (logged when not). */
static bool known_version(const char *path, const json_t *root, const char *alternative)
{
	json_int_t v = json_integer_value(json_object_get(root, "version"));

	if (v == STATUS_FORMAT_VERSION)
		return true;
	log_error("status file '%s' has format version %lld; this rngd reads version %d%s", path,
		  (long long)v, STATUS_FORMAT_VERSION, alternative);
	return false;
}

int stats_print_status(const char *path, bool json, FILE *out)
{
	_cleanup_(json_decref_p) json_t *root = NULL;
	int r = load_json(path, &root);

	if (r < 0)
		return r;
	if (json) {
		/* JSON escapes control characters; ASCII only escapes C1 controls as well. */
		if (json_dumpf(root, out,
			       JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII) < 0 ||
		    fputc('\n', out) == EOF)
			return -EIO;
		return 0;
	}
	if (!known_version(path, root, " (use --json)"))
		return -EPROTONOSUPPORT;
	escape_strings(root);
	print_table(root, out);
	return ferror(out) ? -EIO : 0;
}

/* "2026-11-30T04:46:55Z" (format_time()'s) to CLOCK_REALTIME ns; 0 for null or junk. */
static uint64_t get_time(const json_t *o, const char *key)
{
	static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ";
	const char *s = get_str(o, key, NULL);
	unsigned int f[6] = { 0 }, k = 0;
	struct utc_time u;
	int64_t t;

	if (!s || strlen(s) != sizeof(pattern) - 1)
		return 0;
	for (size_t i = 0; pattern[i]; i++) {
		if (pattern[i] != 'd') {
			if (s[i] != pattern[i])
				return 0;
			k++;
		} else if (s[i] >= '0' && s[i] <= '9') {
			f[k] = f[k] * 10 + (unsigned int)(s[i] - '0');
		} else {
			return 0;
		}
	}
	u = (struct utc_time){ f[0], f[1], f[2], f[3], f[4], f[5] };
	return utc_to_seconds(&u, &t) == 0 && t > 0 ? (uint64_t)t * NSEC_PER_SEC : 0;
}

static void load_source(const json_t *o, struct status_source *s)
{
	const json_t *fips = json_object_get(o, "fips_failures");
	const json_t *ctr = json_object_get(o, "counters");
	const char *key;
	json_t *v;

	s->name = get_str(o, "name", "?");
	s->state = get_str(o, "state", "?");
	s->state_since = get_time(o, "state_since");
	s->bytes_read = get_uint(o, "bytes_read");
	s->blocks_tested = get_uint(o, "blocks_tested");
	s->blocks_passed = get_uint(o, "blocks_passed");
	for (size_t i = 0; i < FIPS_N_TESTS; i++)
		s->fips_failures[i] = get_uint(fips, stats_fips_keys[i]);
	s->blocks_replayed = get_uint(o, "blocks_replayed");
	s->health_failures = get_uint(o, "health_failures");
	s->bytes_fed = get_uint(o, "bytes_fed");
	s->bits_credited = get_uint(o, "bits_credited");
	s->last_passed = get_time(o, "last_passed");
	s->last_error = get_str(o, "last_error", NULL);
	json_object_foreach((json_t *)ctr, key, v) {
		if (s->n_counters == STATUS_MAX_COUNTERS)
			break;
		s->counters[s->n_counters].name = key;
		s->counters[s->n_counters++].value = get_uint(ctr, key);
	}
}

int stats_load_status(const char *path, struct status_loaded *out)
{
	json_t *root = NULL, *kernel, *kh, *feed, *sources, *s;
	struct status_doc *doc = &out->doc;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	r = load_json(path, &root);
	if (r < 0)
		return r;
	out->root = root;
	if (!known_version(path, root, "")) {
		stats_status_free(out);
		return -EPROTONOSUPPORT;
	}
	kernel = json_object_get(root, "kernel");
	kh = json_object_get(root, "kernel_hwrng");
	feed = json_object_get(root, "feed");
	sources = json_object_get(root, "sources");
	out->sources = calloc(MAX(json_array_size(sources), (size_t)1), sizeof(*out->sources));
	if (!out->sources) {
		stats_status_free(out);
		log_error("out of memory");
		return -ENOMEM;
	}
	json_array_foreach(sources, i, s)
		load_source(s, &out->sources[i]);
	*doc = (struct status_doc){
		.rngd_version = get_str(root, "rngd_version", "?"),
		.pid = (pid_t)get_uint(root, "pid"),
		.started = get_time(root, "started"),
		.updated = get_time(root, "updated"),
		.kernel_generation = get_str(kernel, "generation", "?"),
		.crng_ready = json_is_true(json_object_get(kernel, "crng_ready")),
		.feeds = get_uint(feed, "feeds"),
		.bytes_fed = get_uint(feed, "bytes_fed"),
		.bits_credited = get_uint(feed, "bits_credited"),
		.reseeds = get_uint(feed, "reseeds"),
		.last_feed = get_time(feed, "last_feed"),
		.feed_interval = get_uint(feed, "interval"),
		.kernel_hwrng_mode = get_str(kh, "mode", "leave"),
		.kernel_hwrng_takeover = get_str(kh, "takeover", "none"),
		.kernel_hwrng_backend = get_str(kh, "backend", NULL),
		.n_sources = json_array_size(sources),
		.sources = out->sources,
	};
	return 0;
}

void stats_status_free(struct status_loaded *s)
{
	free(s->sources);
	json_decref(s->root);
	memset(s, 0, sizeof(*s));
}
