/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Entropy sources: the driver contract (struct source_ops, one per file in src/sources/),
 * the table of all drivers, option validation, and the runtime: one reader thread per
 * enabled source that reads 2500-byte blocks, FIPS-tests them with its own continuous-test
 * state and publishes the passed ones, time-stamped, into its ring. Reads are on demand:
 * when the ring is full the thread waits. Every wait is cancellable; a stop ends every
 * thread within 100 ms even when a read blocks.
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

#include "conf.h"
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
	bool hwrng_family;		/* reads /dev/hwrng: only one such source may be enabled */
	unsigned int quality;		/* default credit, bits per 1024 bits */
	const struct option_spec *options;	/* schema of the keys (option.h), NULL for none */

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
	 * hwrng-family source, -ENODEV (no backend) and -EACCES (from read or init) make it
	 * wait for its device instead, re-opened every SOURCE_WAIT_RETRY_NS.
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
int source_check_drivers(const struct source_ops *const *drivers, size_t n, char *why,
			 size_t len);

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
/* Sleep ns, cut short by a stop: 0 when slept, -ECANCELED when stopping. */
int source_sleep(struct source *src, uint64_t ns);
bool source_stopping(const struct source *src);
/*
 * Named event counters shown in statistics and the status file ("config-changed").
 * source_counter() registers a name (at most 8 per source) and returns its index, or -ENOSPC.
 */
int source_counter(struct source *src, const char *name);
void source_counter_add(struct source *src, int index, uint64_t n);

/*
 * FIPS failure window of a source: a perfect source fails about 1 block in 1250, so a
 * source is disabled only when at least SOURCE_FAIL_WINDOW_MAX of its last
 * SOURCE_FAIL_WINDOW blocks failed, or SOURCE_FAIL_CONSECUTIVE blocks in a row did.
 */
#define SOURCE_FAIL_WINDOW 64
#define SOURCE_FAIL_WINDOW_MAX 5
#define SOURCE_FAIL_CONSECUTIVE 3

struct source_fail_window {
	uint64_t history;		/* bit i set: the block i blocks ago failed */
	unsigned int consecutive;
};

/* Record one tested block; true when the source must be disabled. Pure. */
bool source_fail_window_add(struct source_fail_window *w, bool failed);
/* Forget the history (after a re-open). */
void source_fail_window_reset(struct source_fail_window *w);

/* Back-off after a failure: 1 s, doubling per consecutive failure, at most 1 h. */
#define SOURCE_BACKOFF_MIN_NS (1ULL * 1000000000ULL)
#define SOURCE_BACKOFF_MAX_NS (3600ULL * 1000000000ULL)
/* How often a waiting source tries to open again: it starts within this of appearing. */
#define SOURCE_WAIT_RETRY_NS (500ULL * 1000000ULL)
/* Waits after a read that returned 0: 10 ms, doubling, at most 1 s. */
#define SOURCE_DRY_MIN_NS (10ULL * 1000000ULL)
#define SOURCE_DRY_MAX_NS (1000ULL * 1000000ULL)
/* Blocks a source's ring holds by default (see source_set_ring_blocks()). */
#define SOURCE_RING_BLOCKS 4
/* Largest single readv of a reader thread, straight into the ring's free slots. */
#define SOURCE_READ_AHEAD (32 * 1024)

/* ---- Runtime (main thread) ---- */

struct source_stats {
	enum source_state state;
	uint64_t state_since;		/* CLOCK_REALTIME ns of the last state change */
	uint64_t bytes_read;
	uint64_t blocks_tested;
	uint64_t blocks_passed;
	uint64_t fips_failures[FIPS_N_TESTS];
	uint64_t bytes_fed;
	uint64_t bits_credited;
	int last_error;			/* errno of the last failure, 0 if none */
	char last_error_text[160];
	size_t n_counters;
	const char *counter_names[8];
	uint64_t counters[8];
};

/*
 * Build the sources from conf: every section, plus every default-on driver that has no
 * section. Nothing is opened. conf's sections were validated when conf took them
 * (conf_init() with source_check_section); only the rules across sections are checked
 * here. 0, or -EINVAL with err for a configuration that enables two hwrng-family sources.
 * A default-on hwrng-family driver without a section is added disabled when another
 * hwrng-family source is enabled.
 */
int source_set_new(struct source_set **ret, const struct conf *conf, char *err, size_t errlen);
/* Stops (if started), finis and frees everything; accepts NULL. */
void source_set_free(struct source_set *set);

size_t source_set_size(const struct source_set *set);
struct source *source_set_get(struct source_set *set, size_t i);
/* The source called name, or NULL. */
struct source *source_set_find(struct source_set *set, const char *name);

/*
 * Ring capacity of each source, in blocks, for the sources opened after this call (default
 * SOURCE_RING_BLOCKS). Reading on demand wants a small ring; streaming output a larger one.
 */
void source_set_ring_blocks(struct source_set *set, size_t blocks);

/*
 * The consumer is about to sleep in poll(): returns false when a ring already holds
 * wake_at blocks (do not sleep). Otherwise a source thread writes to wake_fd when a block
 * it publishes brings its ring to wake_at blocks, or, with on_first, is the only one in
 * its ring: a consumer waiting for a batch learns that something is pending and can set
 * its own deadline for the rest (without on_first, it must have one anyway). Source
 * threads write to wake_fd for a block only after this call, so that a busy consumer is
 * not woken once per block; state changes always wake it.
 */
bool source_set_prepare_wait(struct source_set *set, size_t wake_at, bool on_first);
/* Consumer: the most blocks any ring holds. */
size_t source_set_held(struct source_set *set);

/*
 * -l/--list: probe every known source (enabled or not) and print one line each to f:
 * "hwrng: available, enabled (virtio_rng.0, quality 1024)" or
 * "via: not available: no PadLock RNG on this CPU". Drivers the set does not hold (not
 * configured, not on by default; file instances excepted) are listed as disabled. Returns
 * the number of enabled sources that can work. No source may take more than 100 ms.
 */
int source_set_list(struct source_set *set, FILE *f);

/*
 * Open every enabled source (driver init). A source that cannot work is logged once and
 * marked absent. Returns the number of usable sources (0 means none), or -errno.
 */
int source_set_init(struct source_set *set);

/*
 * Read exactly n bytes from an opened source (source_set_init succeeded for it) on the
 * calling thread, straight from its driver: no FIPS tests, no ring. Short reads are
 * repeated; a read that returns 0 (nothing now) is followed by the framework's dry-spell
 * wait (SOURCE_DRY_MIN_NS doubling to SOURCE_DRY_MAX_NS). For benchmarks and tools.
 * Returns n, -EBUSY while the source's reader thread runs, -EBADF when the source is not
 * opened, -EINVAL when n > SSIZE_MAX, or the driver's -errno (-ENODATA at the end of a
 * regular file); on error the bytes already read are lost.
 */
ssize_t source_read_once(struct source *src, void *buf, size_t n);

/*
 * Start one reader thread per usable source. Each thread writes 1 to wake_fd (an eventfd)
 * when it publishes a block the consumer waits for (source_set_prepare_wait()) or changes
 * state. Signals stay blocked in the threads,
 * except the private one used to interrupt reads. 0 or -errno.
 */
int source_set_start(struct source_set *set, int wake_fd);

/* Ask every thread to stop, interrupt blocked reads, join them all. */
void source_set_stop(struct source_set *set);

/*
 * The same, waiting at most limit_ns. A read that only a fatal signal ends (virtio-rng
 * waits for its host killably) can outlast any signal of ours: such a thread (still in
 * its read 50 us after the signal, or still running at the limit) is left running, the
 * set is marked abandoned (source_set_free() then leaves it alone) and false is returned;
 * the process must exit, which ends the read. True when all were joined.
 */
bool source_set_stop_within(struct source_set *set, uint64_t limit_ns);

/*
 * Consumer side, main thread only. Drop blocks older than max_age_ns, then copy up to n
 * tested bytes into buf from the oldest fresh block on; returns the bytes copied. Bytes
 * handed out are never handed out again.
 */
size_t source_take(struct source *src, uint8_t *buf, size_t n, uint64_t now, uint64_t max_age_ns);
/*
 * The same without a copy: drop the stale blocks, then point iov[] (at most max_iov
 * entries, one per block) at up to n tested bytes from the oldest fresh one on. Returns the
 * entries used; *bytes gets the bytes they hold. They stay in the ring until
 * source_consume(), which must follow before anything else takes from this source.
 */
size_t source_peek(struct source *src, struct iovec *iov, size_t max_iov, size_t n, uint64_t now,
		   uint64_t max_age_ns, size_t *bytes);
/* Wipe and hand back the first n bytes source_peek() pointed at. */
void source_consume(struct source *src, size_t n);
/* Fresh tested bytes ready to take. */
size_t source_available(struct source *src, uint64_t now, uint64_t max_age_ns);
/* Credit quality in bits per 1024 bits (configured, else found, else the driver's). */
unsigned int source_quality(const struct source *src);
/* Record what the sink did with bytes taken from src. */
void source_account_fed(struct source *src, size_t bytes, uint64_t bits);
/* A consistent snapshot of the counters. */
void source_get_stats(const struct source *src, struct source_stats *out);
/*
 * Whether the thread is alive: it is in a deliberate wait of the framework (ring full,
 * back-off, dry-spell sleep) or finished a read or test within limit_ns. A read that has
 * blocked for longer than limit_ns counts as wedged. For the watchdog.
 */
bool source_is_healthy(const struct source *src, uint64_t now, uint64_t limit_ns);

#endif
