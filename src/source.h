/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Entropy sources, the drivers' side: the driver contract (struct source_ops, one per file
 * in src/sources/), the table of all drivers (src/sources/table.c), the check of a
 * configuration section against its driver's option schema (source_registry.c), and what
 * a driver may ask of the framework. The runtime is in source_set.h (the set and its
 * reader threads) and pool.h (the consumer side).
 */
#ifndef RNGD_SOURCE_H
#define RNGD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "conf_section.h"
#include "fips.h"
#include "option.h"

struct source;
struct source_set;

/*
 * The private signal that interrupts a reader thread's blocked read() at stop (its handler
 * does nothing and is installed without SA_RESTART). Every other signal is blocked in the
 * reader threads; the main thread must not use this one.
 */
#define SOURCE_INTERRUPT_SIGNAL (SIGRTMIN + 4)

/* MESSAGE_ID= of the journal entries operators alert on (log_full()). */
#define SOURCE_MESSAGE_FAILED "d56ed95d1b65a94addade9d024719078"	 /* "source-failed" */
#define SOURCE_MESSAGE_RECOVERED "359b715497e496b6d2f14bff5311d7a3" /* "source-recovered" */
#define SOURCE_MESSAGE_NO_SOURCE "96b9221b5991b939df2695be7322440e" /* "no-source-left" */
#define SOURCE_MESSAGE_WAITING "896a8d437c4f43fab2e55c632d972837"	 /* "source-waiting" */

enum source_state {
	SOURCE_ABSENT,		/* cannot work on this machine (probe/init said why) */
	SOURCE_STARTING,	/* opened, first block not tested yet */
	SOURCE_RUNNING,
	SOURCE_BACKOFF,		/* device gone or too many FIPS failures; retrying later */
	SOURCE_FAILED,		/* given up until reload */
	SOURCE_WAITING,		/* its device may still appear (no hwrng backend yet, node not
				 * accessible yet): re-opened every SOURCE_WAIT_RETRY_NS */
};

/* Name of a state as printed in -l, logs and the status file ("running"). */
const char *source_state_name(enum source_state s);

/*
 * A driver. Every source also accepts the common keys "enabled" (yes/no) and "quality"
 * (0..1024 bits of entropy per 1024 bits, overriding the driver's and sysfs' value); the
 * framework handles those.
 */
struct source_ops {
	const char *name;		/* section name, e.g. "hwrng"; "file" is used as "file:NAME" */
	const char *help;		/* one line for -l and -O NAME */
	bool instances;			/* needs and allows [source NAME:INSTANCE] */
	bool default_on;		/* enabled without configuration where it probes available */
	/*
	 * Optional, with default_on: the name of a driver this one yields to. Where that
	 * driver probes available this one stays off unless configured (rdrand defers to
	 * rdseed: the seed-grade instruction is preferred); -l says so.
	 */
	const char *defer_to;
	bool hwrng_family;		/* reads /dev/hwrng: only one such source may be enabled */
	bool path_may_appear;		/* init's -ENOENT: not created yet, wait for it */
	/*
	 * The CPU's own random instruction (RDSEED, RDRAND, RNDR): random.trust_cpu=off on
	 * the kernel command line makes its default credit 0 (cpu_trust.h); a configured
	 * quality still wins.
	 */
	bool cpu_rng;
	unsigned int quality;		/* default credit, bits per 1024 bits */
	const struct option_spec *options; /* schema of the keys (option.h), NULL for none */

	/* Optional: check a combination of options. 0 or -EINVAL with why (one line). */
	int (*check)(struct source *src, char *why, size_t len);
	/*
	 * Optional: can this source work here? Fast (under 100 ms), no side effects, no
	 * privileges needed beyond read access. 0, or -errno with why ("no PadLock RNG on
	 * this CPU"). Without probe, init decides. On success why may hold a short detail
	 * for -l ("virtio_rng.0"), or stay empty.
	 */
	int (*probe)(struct source *src, char *why, size_t len);
	/* Open devices; runs before privileges are dropped. 0 or -errno with why. */
	int (*init)(struct source *src, char *why, size_t len);
	/*
	 * Read up to max bytes, blocking if need be. Returns bytes (> 0), 0 when nothing is
	 * available now (the framework waits and retries), or -errno. Runs on the source's
	 * thread; a blocked read is interrupted by a signal without SA_RESTART when the
	 * source stops, so -EINTR must be returned as is. -ENODEV, -EIO, -EINVAL (CAAM) and
	 * -ENXIO make the framework close (fini) and re-open (init) with back-off; for an
	 * hwrng-family source, -ENODEV (no backend) from read makes it wait for a backend
	 * on the same open device (read again every SOURCE_WAIT_RETRY_NS, no re-open), and
	 * -ENODEV or -EACCES from init makes it wait for its device, re-opened every
	 * SOURCE_WAIT_RETRY_NS; so does -ENOENT from init with path_may_appear.
	 * -ENODATA means the source is exhausted for good (the end of a regular file): the
	 * source becomes failed ("end of file") and its thread ends.
	 */
	ssize_t (*read)(struct source *src, void *buf, size_t max);
	/*
	 * Optional, for fast sources: the same as read, into cnt buffers in turn (readv(2)).
	 * One call then fills several blocks of the ring, up to SOURCE_READ_AHEAD bytes;
	 * without it each read fills at most the rest of one block.
	 */
	ssize_t (*readv)(struct source *src, const struct iovec *iov, int cnt);
	/* Close what init opened; must cope with a failed or partial init. */
	void (*fini)(struct source *src);
};

/* All compiled-in drivers, in a fixed order, and their number. */
extern const struct source_ops *const source_drivers[];
extern const size_t source_n_drivers;

/* Driver by source or section name ("file:x" finds "file"), or NULL. */
const struct source_ops *source_find_driver(const char *name);

/*
 * Check a table of drivers: unique names, read present, option tables well formed.
 * 0 or -EINVAL with why. Called once at start on source_drivers.
 */
int source_check_drivers(const struct source_ops *const *drivers, size_t n, char *why, size_t len);

/*
 * Validate one configuration section against its driver: known name, instance syntax,
 * known keys, values of the right type and range, and the driver's check(). On error
 * returns -EINVAL, sets *bad to the offending line (NULL when the section itself is wrong)
 * and why to the reason without file, line or key.
 */
int source_check_section(const struct conf_section *s, const struct conf_kv **bad, char *why,
			 size_t len);

/* Print a driver's keys with defaults and help (-O NAME). -ENOENT for an unknown name. */
int source_print_options(const char *name, FILE *f);

/* ---- For drivers (src/sources/NAME.c) ---- */

const char *source_name(const struct source *src);
/* Option value as configured, else the driver's default (NULL when neither). */
const char *source_opt_str(const struct source *src, const char *key);
uint64_t source_opt_uint(const struct source *src, const char *key);
bool source_opt_bool(const struct source *src, const char *key);
/* Whether the configuration set key explicitly. */
bool source_opt_is_set(const struct source *src, const char *key);
void *source_priv(const struct source *src);
void source_set_priv(struct source *src, void *priv);
/* Quality found at run time (e.g. sysfs rng_quality); a configured "quality" still wins. */
void source_set_quality(struct source *src, unsigned int quality);
/*
 * For an hwrng-family driver: the quality kernel-hwrng's take-over keeps for backend (the
 * rng_quality it had before the 0), into *quality; false when none is kept for it.
 */
bool source_kept_quality(struct source *src, const char *backend, unsigned int *quality);
/*
 * A notice about the source, logged once for its life (not at each re-open), with the journal
 * field RNGD_EVENT=event.
 */
void source_notice_once(struct source *src, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Sleep ns, cut short by a stop: 0 when slept, -ECANCELED when stopping. */
int source_sleep(struct source *src, uint64_t ns);
bool source_stopping(const struct source *src);
/*
 * For fini: whether the daemon's start failed (source_set_abort()), so that what init
 * changed for the daemon's life (rng_current) is put back.
 */
bool source_start_failed(const struct source *src);
/*
 * Named event counters shown in statistics and the status file ("config-changed").
 * source_counter() registers a name (at most 8 per source) and returns its index, or -ENOSPC.
 */
int source_counter(struct source *src, const char *name);
void source_counter_add(struct source *src, int index, uint64_t n);
/*
 * Why the read about to return -errno failed, in a few words ("RDRAND output stuck ..."),
 * for the log line and the status file, which otherwise say strerror(errno). Reader only.
 */
void source_read_why(struct source *src, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
