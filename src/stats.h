/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The status document (JSON, jansson): written atomically by the daemon every
 * status-interval and on SIGUSR1, read back by `rngd --status`. The structs below are plain
 * data the main loop fills from source_get_stats() and the sink's counters; this module
 * knows nothing of sources or threads. Times are CLOCK_REALTIME in ns (0 = never/unknown)
 * and appear in the document as UTC ISO 8601 strings ("2026-11-30T04:46:55Z") or null.
 *
 * Document, format version 1:
 *   { "version": 1, "rngd_version": "0.1.0", "pid": 123, "started": "...", "updated": "...",
 *     "kernel": { "generation": "modern", "crng_ready": true },
 *     "kernel_hwrng": { "mode": "take-over", "takeover": "held", "backend": "..." | null },
 *     "feed": { "feeds": 3, "bytes_fed": 192, "bits_credited": 1536, "reseeds": 3,
 *               "last_feed": "..." | null, "interval": 60 },
 *     "sources": [ { "name": "hwrng", "state": "running", "state_since": "...",
 *                    "bytes_read": 7500, "blocks_tested": 3, "blocks_passed": 3,
 *                    "fips_failures": { "monobit": 0, "poker": 0, "runs": 0,
 *                                       "long-run": 0, "continuous": 0 },
 *                    "blocks_replayed": 0, "health_failures": 0,
 *                    "bytes_fed": 192, "bits_credited": 1536, "last_error": null | "...",
 *                    "last_passed": "..." | null, "counters": { "name": 0, ... } } ] }
 * ("takeover" is kernel_hwrng_takeover_state()'s word, "last_passed" the read time of the
 * last block that passed the tests.)
 * A reader must ignore keys it does not know; "version" changes only when a key changes
 * meaning or goes away.
 */
#ifndef RNGD_STATS_H
#define RNGD_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "fips.h"

#define STATUS_FORMAT_VERSION 1
#define STATUS_MAX_COUNTERS 8

/* Keys of fips_failures[], indexed like enum fips_test bits. */
extern const char *const stats_fips_keys[FIPS_N_TESTS];

struct status_counter {
	const char *name;
	uint64_t value;
};

/* One source. Strings are borrowed, not copied; last_error NULL when there was none. */
struct status_source {
	const char *name;
	const char *state;		/* source_state_name() */
	uint64_t state_since;
	uint64_t bytes_read;
	uint64_t blocks_tested;
	uint64_t blocks_passed;
	uint64_t fips_failures[FIPS_N_TESTS];
	uint64_t blocks_replayed;
	uint64_t health_failures;
	uint64_t bytes_fed;
	uint64_t bits_credited;
	uint64_t last_passed;		/* the last block that passed was read then; 0: none */
	const char *last_error;
	size_t n_counters;
	struct status_counter counters[STATUS_MAX_COUNTERS];
};

/* The whole daemon. sources points to n_sources entries, borrowed. */
struct status_doc {
	const char *rngd_version;	/* PACKAGE_VERSION */
	pid_t pid;
	uint64_t started;
	uint64_t updated;		/* 0: the time of writing */
	const char *kernel_generation;	/* "modern" or "legacy" */
	bool crng_ready;
	uint64_t feeds;			/* successful injections */
	uint64_t bytes_fed;
	uint64_t bits_credited;
	uint64_t reseeds;		/* RNDRESEEDCRNG calls that succeeded */
	uint64_t last_feed;
	uint64_t feed_interval;		/* feed-interval, seconds */
	const char *kernel_hwrng_mode;	/* the kernel-hwrng key: take-over, leave, watch */
	const char *kernel_hwrng_takeover; /* kernel_hwrng_takeover_state(): held, refused, ... */
	const char *kernel_hwrng_backend;  /* the backend it concerns; NULL or "": none */
	size_t n_sources;
	const struct status_source *sources;
};

/*
 * Write doc to path atomically: a temporary file in the same directory, renamed over path
 * (no fsync: the document describes the running process, and /run is lost at reboot anyway);
 * mode 0644. The parent directory is created (0755) only when missing (under systemd
 * RuntimeDirectory= has made it); it is opened O_NOFOLLOW and the file is written through
 * it (a temporary created O_EXCL|O_NOFOLLOW, then renamed over path): a symlink at the
 * directory or the file is never followed. A reader sees the old or the new document,
 * never a mix.
 * 0 or -errno; does not log.
 */
int stats_write_status(const char *path, const struct status_doc *doc);

/*
 * Write len bytes of text to path atomically, as stats_write_status() writes the document
 * but durably (a temporary O_EXCL|O_NOFOLLOW in the directory opened O_NOFOLLOW, fsync,
 * rename; mode 0644), and never creating the directory: -ENOENT when it is missing. 0 or
 * -errno; does not log.
 */
int stats_write_file(const char *path, const char *text, size_t len);

/* At exit: remove the status file, never through a symlink in its directory's place. */
int stats_remove_status(const char *path);

/*
 * Before dropping privileges: create the directory of path (0755, with missing parents) if
 * it does not exist, and give the directory itself to uid:gid, so that the daemon can
 * still replace the status file after the switch. After the mkdir the directory is
 * handled only through an fd opened O_DIRECTORY|O_NOFOLLOW (fchmod, fchown). An existing
 * directory is handed over only when rngd made it on an earlier run as root: root's, mode
 * 0755, holding nothing but the status file, its temporaries and rngd.pid. uid
 * (uid_t)-1: no chown. 0, -ELOOP (a symlink in the directory's place), -EPERM (an existing
 * directory that is not the user's and not one rngd made), or another -errno; does not
 * log.
 */
int stats_prepare_dir(const char *path, uid_t uid, gid_t gid);

/*
 * Reading the document back (stats_read.c, jansson): linked by the status helper and the
 * tests, never by the daemon.
 *
 * `rngd --status`: read the document at path and print it to out, as a table for people
 * or (json true) as the JSON document itself. Problems are logged as one error line naming
 * the file: -ENOENT missing (daemon not running?), -EBADMSG not valid JSON or not a status
 * document, -EPROTONOSUPPORT a format version this program does not know (tables only),
 * -ESRCH a stale document whose pid is not running.
 */
int stats_print_status(const char *path, bool json, FILE *out);

/*
 * A status document read back from its file: doc's strings and sources point into what
 * stats_load_status() allocated, freed by stats_status_free().
 */
struct status_loaded {
	struct status_doc doc;
	struct status_source *sources;
	void *root; /* the parsed JSON (json_t) */
};

/*
 * Read the document at path into out, with the checks of stats_print_status() (errors
 * logged the same way, a format version other than STATUS_FORMAT_VERSION refused): what
 * the daemon's snapshot had, at one-second resolution for times. 0 or -errno.
 */
int stats_load_status(const char *path, struct status_loaded *out);
void stats_status_free(struct status_loaded *s);

/*
 * One-line summaries for the SIGUSR1 log. stats_format_feed() describes the kernel and the
 * feed counters; stats_format_source() one source, without its name (the log prefixes it).
 * Both return what snprintf() returns: the length wanted (cut if >= len).
 */
int stats_format_feed(const struct status_doc *doc, char *buf, size_t len);
int stats_format_source(const struct status_source *src, char *buf, size_t len);

/*
 * The STATUS= text for `systemctl status` (give it to notify_status()): sources up, bytes
 * fed, last feed, sources in trouble. Only absolute times, so that the text changes only
 * when something happened, e.g.
 *   "2/2 sources up; fed 192 bytes in 3 feeds, last 04:47:54 UTC"
 *   "1/2 sources up; nothing fed yet; not running: file:noise (backoff)"
 * A source counts as up when running or starting; absent ones (cannot work on this
 * machine) are left out. Returns what snprintf() returns.
 */
int stats_format_notify_status(const struct status_doc *doc, char *buf, size_t len);

#endif
