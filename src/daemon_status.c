// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the main loop reports (daemon_status.h): a snapshot of the daemon and its sources
 * for the status file, STATUS= and the statistics lines, and test mode's rate lines. Main
 * thread only.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_status.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "stats.h"
#include "util.h"

/*
 * A snapshot of everything for the status file, STATUS= and the statistics lines. The
 * arrays are allocated per call (at most about once a second); NULL when out of memory.
 */
struct snapshot {
	struct status_doc doc;
	struct status_source *src;
	struct source_stats *st;
};

static void snapshot_free(struct snapshot *s)
{
	free(s->src);
	free(s->st);
}

static int snapshot_take(struct daemon *d, struct snapshot *s)
{
	size_t n = source_set_size(d->set);
	uint64_t mono = now_ns(), real = realtime_ns();
	const char *backend = NULL, *takeover = kernel_hwrng_takeover_state(&d->kh, &backend);

	memset(s, 0, sizeof(*s));
	s->src = calloc(n ? n : 1, sizeof(*s->src));
	s->st = calloc(n ? n : 1, sizeof(*s->st));
	if (!s->src || !s->st) {
		snapshot_free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct source *src = source_set_get(d->set, i);
		struct source_stats *st = &s->st[i];
		struct status_source *ss = &s->src[i];

		source_get_stats(src, st);
		ss->name = source_name(src);
		ss->state = source_state_name(st->state);
		ss->state_since = st->state_since;
		ss->bytes_read = st->bytes_read;
		ss->blocks_tested = st->blocks_tested;
		ss->blocks_passed = st->blocks_passed;
		memcpy(ss->fips_failures, st->fips_failures, sizeof(ss->fips_failures));
		ss->blocks_replayed = st->blocks_replayed;
		ss->health_failures = st->health_failures;
		ss->bytes_fed = st->bytes_fed;
		ss->bits_credited = st->bits_credited;
		/* The reader stamps blocks with the monotonic clock; the document wants a date. */
		if (st->last_passed_ns && st->last_passed_ns <= mono &&
		    mono - st->last_passed_ns < real)
			ss->last_passed = real - (mono - st->last_passed_ns);
		ss->last_error = st->last_error_text[0] ? st->last_error_text : NULL;
		ss->n_counters = MIN(st->n_counters, (size_t)STATUS_MAX_COUNTERS);
		for (size_t k = 0; k < ss->n_counters; k++) {
			ss->counters[k].name = st->counter_names[k];
			ss->counters[k].value = st->counters[k];
		}
	}
	s->doc = (struct status_doc){
		.rngd_version = PACKAGE_VERSION,
		.pid = getpid(),
		.started = d->c.started,
		.kernel_generation = d->sink && sink_generation(d->sink) == KERNEL_LEGACY ? "legacy"
											  : "modern",
		.crng_ready = d->crng_ready,
		.feeds = d->c.feeds,
		.bytes_fed = d->c.bytes_fed,
		.bits_credited = d->c.bits_credited,
		.reseeds = d->c.reseeds,
		.last_feed = d->c.last_feed,
		.feed_interval = d->conf.feed_interval,
		.kernel_hwrng_mode = d->conf.kernel_hwrng,
		.kernel_hwrng_takeover = takeover,
		.kernel_hwrng_backend = backend,
		.updated = real,
		.n_sources = n,
		.sources = s->src,
	};
	return 0;
}

/* SIGUSR1 and stats-interval: one line for the feed, one per source. */
void daemon_stats_line(struct daemon *d)
{
	struct snapshot s;
	char line[512];

	if (snapshot_take(d, &s) < 0)
		return;
	if (d->mode != DAEMON_TEST) {
		stats_format_feed(&s.doc, line, sizeof(line));
		log_full(LOG_INFO, NULL, "statistics", NULL, "%s", line);
	}
	for (size_t i = 0; i < s.doc.n_sources; i++) {
		stats_format_source(&s.src[i], line, sizeof(line));
		log_full(LOG_INFO, s.src[i].name, "statistics", NULL, "%s", line);
	}
	snapshot_free(&s);
}

/* The metrics file from snapshot s; a failure is logged once until a write succeeds. */
static void write_metrics(struct daemon *d, const struct snapshot *s)
{
	int r = metrics_write(d->conf.metrics_file, &s->doc);

	if (r < 0 && !d->metrics_error_logged)
		log_warning("cannot write the metrics file '%s': %s, ignoring",
			    d->conf.metrics_file, strerror(-r));
	d->metrics_error_logged = r < 0;
}

bool daemon_writes_metrics(const struct daemon *d)
{
	return d->conf.metrics_file && d->mode == DAEMON_FEED;
}

void daemon_write_metrics(struct daemon *d)
{
	struct snapshot s;

	if (!daemon_writes_metrics(d) || snapshot_take(d, &s) < 0)
		return;
	write_metrics(d, &s);
	snapshot_free(&s);
}

/*
 * Why the status file cannot be written, once. The usual cause of EACCES: an earlier run
 * with -D (or user=) handed the directory to its user, and this run, as root, keeps no
 * DAC override: say whose it is and what to do.
 */
static void status_write_failed(const char *path, int r)
{
	const char *slash = strrchr(path, '/');
	/*
	 * On the heap, this once: a PATH_MAX array here was inlined into
	 * daemon_update_status()'s frame, and every status write ran 4 KiB deeper in the stack.
	 */
	_cleanup_(freep) char *dir =
		strndup(slash ? path : ".", slash && slash != path ? (size_t)(slash - path) : 1);
	struct stat st;

	if ((r == -EACCES || r == -EPERM) && dir && stat(dir, &st) == 0 && st.st_uid != geteuid()) {
		const struct passwd *pw = getpwuid(st.st_uid);

		log_warning("cannot write the status file '%s': %s: its directory %s belongs to "
			    "%s (uid %u), not to this rngd (uid %u), as an earlier run with -D or "
			    "user= left it; give it back with 'chown %u %s', or run with the same "
			    "user; status not written",
			    path, strerror(-r), dir, pw ? pw->pw_name : "another user",
			    (unsigned int)st.st_uid, (unsigned int)geteuid(),
			    (unsigned int)geteuid(), dir);
		return;
	}
	log_warning("cannot write the status file '%s': %s, ignoring", path, strerror(-r));
}

/* STATUS= from snapshot s (notify_status(): sent on change, at most once a second). */
static void notify_from(const struct snapshot *s, uint64_t now)
{
	char text[512];

	stats_format_notify_status(&s->doc, text, sizeof(text));
	notify_status(now, "%s", text);
}

/*
 * STATUS= for systemd (sent only on change, at most once a second), the status file
 * (every status-interval) and the metrics file (every metrics-interval), or both files now
 * when forced: from one snapshot.
 */
void daemon_update_status(struct daemon *d, bool force_file)
{
	/* Half a tick early is on time: ticks are not exactly one period apart. */
	uint64_t now = now_ns(), soon = now + d->tick_ns / 2;
	bool file_due = d->conf.status_file &&
			(force_file || (d->conf.status_interval && soon >= d->next_status_ns));
	bool metrics_due = daemon_writes_metrics(d) &&
			   (force_file || (d->conf.metrics_interval && soon >= d->next_metrics_ns));
	struct snapshot s;
	int r;

	if (!d->notify && !file_due && !metrics_due)
		return;
	if (snapshot_take(d, &s) < 0)
		return;
	if (d->notify)
		notify_from(&s, now);
	if (file_due) {
		r = stats_write_status(d->conf.status_file, &s.doc);
		if (r < 0 && !d->status_error_logged)
			status_write_failed(d->conf.status_file, r);
		d->status_error_logged = r < 0;
		d->next_status_ns = now + d->conf.status_interval * NSEC_PER_SEC;
	}
	if (metrics_due) {
		write_metrics(d, &s);
		d->next_metrics_ns = now + d->conf.metrics_interval * NSEC_PER_SEC;
	}
	snapshot_free(&s);
}

void daemon_notify_status(struct daemon *d)
{
	struct snapshot s;

	if (!d->notify)
		return;
	if (snapshot_take(d, &s) < 0) {
		/* Out of memory: the text kept back goes as it is, not retried at once. */
		notify_status_flush(now_ns());
		return;
	}
	notify_from(&s, now_ns());
	snapshot_free(&s);
}

void daemon_test_rate_line(struct daemon *d, bool final)
{
	uint64_t now = now_ns(), dt = now - d->test_last_ns, passed = 0, failed = 0;
	double rate;

	for (size_t i = 0; i < source_set_size(d->set); i++) {
		struct source_stats s;

		source_get_stats(source_set_get(d->set, i), &s);
		passed += s.blocks_passed;
		failed += s.blocks_tested - s.blocks_passed;
	}
	if (final) {
		dt = now - d->test_start_ns;
		rate = dt ? (double)d->test_bytes * 1e9 / (double)dt : 0;
		log_notice("test summary: %" PRIu64 " bytes passed FIPS 140-2 in %.1f s (%.1f kB/s); "
			   "blocks %" PRIu64 " passed, %" PRIu64 " failed",
			   d->test_bytes, (double)dt / 1e9, rate / 1000, passed, failed);
		return;
	}
	rate = dt ? (double)(d->test_bytes - d->test_last_bytes) * 1e9 / (double)dt : 0;
	log_notice("test: %.1f kB/s; blocks %" PRIu64 " passed, %" PRIu64 " failed", rate / 1000,
		   passed, failed);
	d->test_last_ns = now;
	d->test_last_bytes = d->test_bytes;
}
