/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A set of sources at run time: built from the configuration (source_set.c), one reader
 * thread per usable source (source_reader.c) that reads 2500-byte blocks, FIPS-tests them
 * with its own continuous-test state and publishes the passed ones, time-stamped, into its
 * ring. Reads are on demand: when the ring is full the thread waits. Every wait is
 * cancellable; a stop ends every thread within 100 ms even when a read blocks. The main
 * thread takes the blocks through pool.h.
 */
#ifndef RNGD_SOURCE_SET_H
#define RNGD_SOURCE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "conf.h"
#include "fips.h"
#include "source.h"

/*
 * FIPS failure window of a source: a perfect source fails about 1 block in 1250, so a
 * source is disabled only when at least SOURCE_FAIL_WINDOW_MAX of its last
 * SOURCE_FAIL_WINDOW blocks failed, or SOURCE_FAIL_CONSECUTIVE blocks in a row did.
 */
#define SOURCE_FAIL_WINDOW 64
#define SOURCE_FAIL_WINDOW_MAX 5
#define SOURCE_FAIL_CONSECUTIVE 3

struct source_fail_window {
	uint64_t history; /* bit i set: the block i blocks ago failed */
	unsigned int consecutive;
};

/* Record one tested block; true when the source must be disabled. Pure. */
bool source_fail_window_add(struct source_fail_window *w, bool failed);
/* Forget the history (after a re-open). */
void source_fail_window_reset(struct source_fail_window *w);

/* Back-off after a failure: 1 s, doubling per consecutive failure, at most 1 h. */
#ifndef SOURCE_BACKOFF_MIN_NS /* tests/test_source_rules.c builds the reader with a shorter one */
#define SOURCE_BACKOFF_MIN_NS (1ULL * 1000000000ULL)
#endif
#define SOURCE_BACKOFF_MAX_NS (3600ULL * 1000000000ULL)
/* How often a waiting source tries to open again: it starts within this of appearing. */
#define SOURCE_WAIT_RETRY_NS (500ULL * 1000000ULL)
/* Waits after a read that returned 0: 10 ms, doubling, at most 1 s. */
#define SOURCE_DRY_MIN_NS (10ULL * 1000000ULL)
#define SOURCE_DRY_MAX_NS (1000ULL * 1000000ULL)
/*
 * Blocks a source's ring holds by default (see source_set_ring_blocks()): one being fed and
 * the next one ready. The kernel takes feed-bytes (64) a feed-interval, so a deeper ring only
 * read more of the device at start and after each max-age (4 blocks: 10 kB of a 9.6 kB/s
 * virtio-rng, most of it thrown away unfed).
 */
#define SOURCE_RING_BLOCKS 2
/* Largest single readv of a reader thread, straight into the ring's free slots. */
#define SOURCE_READ_AHEAD (256 * 1024)

/* ---- Runtime (main thread) ---- */

struct source_stats {
	enum source_state state;
	uint64_t state_since; /* CLOCK_REALTIME ns of the last state change */
	uint64_t bytes_read;
	uint64_t blocks_tested;
	uint64_t blocks_passed;
	uint64_t fips_failures[FIPS_N_TESTS];
	/* Rejected before the FIPS tests (health.h), not counted in blocks_tested: */
	uint64_t blocks_replayed; /* seen before (repeated-block detector) */
	uint64_t health_failures; /* SP 800-90B repetition count or adaptive proportion */
	uint64_t bytes_fed;
	uint64_t bits_credited;
	uint64_t window_trips;	  /* times the failure window disabled it (back-off) */
	uint64_t last_passed_ns;  /* CLOCK_MONOTONIC read time of the last block that passed,
				     0: none yet */
	int last_error; /* errno of the last failure, 0 if none */
	char last_error_text[160];
	size_t n_counters;
	const char *counter_names[8];
	uint64_t counters[8];
};

/*
 * Build the sources from conf: every section, plus every default-on driver that has no
 * section. Nothing is opened. conf's sections were validated when conf took them
 * (conf_init() with source_check_section); only the rules across sections are checked
 * here. 0, or -EINVAL with err for a configuration that enables two hwrng-family sources. A
 * default-on hwrng-family driver without a section is added disabled when another hwrng-family
 * source is enabled.
 */
int source_set_new(struct source_set **ret, const struct conf *conf, char *err, size_t errlen);
/* Stops (if started), finis and frees everything; accepts NULL. */
void source_set_free(struct source_set *set);

size_t source_set_size(const struct source_set *set);
/* How many of its sources are in state now (each read under its lock). */
size_t source_set_count_state(const struct source_set *set, enum source_state state);
/*
 * Whether an enabled source of set reads the file path names (any of its path-typed keys,
 * the driver's default included, names the same file: device and inode). false when path
 * does not exist.
 */
bool source_set_reads_path(const struct source_set *set, const char *path);
struct source *source_set_get(struct source_set *set, size_t i);
/* The source called name, or NULL. */
struct source *source_set_find(struct source_set *set, const char *name);

/*
 * Ring capacity of each source, in blocks, for the sources opened after this call (default
 * SOURCE_RING_BLOCKS). Reading on demand wants a small ring; streaming output a larger one.
 */
void source_set_ring_blocks(struct source_set *set, size_t blocks);

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
 * The same for some of them: the CPU sources (rdseed, rdrand, rndr: nothing to probe, boot
 * seeding starts from them), the others, or all. A source is opened by one call only.
 */
enum source_open { SOURCE_OPEN_ALL, SOURCE_OPEN_CPU, SOURCE_OPEN_OTHER };
int source_set_open(struct source_set *set, enum source_open which);

/*
 * Whether an enabled source other than a CPU one is configured: only such a source's open
 * can find a configuration error (source_set_start_error()) after the CPU sources'.
 */
bool source_set_other_configured(const struct source_set *set);

/*
 * The daemon's start failed after source_set_init(): the drivers' fini (at
 * source_set_free()) put back what their init changed (rng_current). Accepts NULL.
 */
void source_set_abort(struct source_set *set);

/*
 * After source_set_init(): why enabled sources are absent, beyond "not on this machine".
 * EINVAL when a configured one was refused by its driver (a configuration error: a wrong
 * backend name, a directory as a file source); else the errno of the first that failed for
 * a reason of this run (EMFILE, ENFILE, ENOMEM, EACCES, EPERM); else 0.
 */
int source_set_start_error(const struct source_set *set);

/*
 * Read exactly n bytes from an opened source (source_set_init succeeded for it) on the
 * calling thread, straight from its driver: no FIPS tests, no ring. Short reads are
 * repeated; a read that returns 0 (nothing now) is followed by the framework's dry-spell
 * wait (SOURCE_DRY_MIN_NS doubling to SOURCE_DRY_MAX_NS). For benchmarks and tools.
 * Returns n, -EBUSY while the source's reader thread runs, -ECANCELED after its set was
 * stopped, -EBADF when the source is not opened, -EINVAL when n > SSIZE_MAX, or the driver's -errno
 * (-ENODATA at the end of a regular file); on error the bytes already read are lost.
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
 * Ask every thread to stop and interrupt blocked reads, without waiting: the first half of
 * a stop, so that the threads end while the caller does other work (a daemon's last
 * writes) before source_set_stop_within(). NULL is fine.
 */
void source_set_interrupt(struct source_set *set);

/*
 * The same, waiting at most limit_ns. A read that only a fatal signal ends (virtio-rng
 * waits for its host killably) can outlast any signal of ours: such a thread (still in
 * its read 50 us after the signal, or still running at the limit) is left running, the
 * set is marked abandoned (source_set_free() then leaves it alone) and false is returned;
 * the process must exit, which ends the read. True when all were joined.
 */
bool source_set_stop_within(struct source_set *set, uint64_t limit_ns);

/*
 * Whether sets a and b (built, opened or not) differ in their sources' configuration:
 * names, enabled, keys and values. When they do, what gets the first difference
 * ("source 'hwrng' key 'read-size'", "source 'file:x' (added)").
 */
bool source_set_differs(const struct source_set *a, const struct source_set *b, char *what,
			size_t len);

/*
 * The first enabled source of set that could not be opened for want of permission
 * (EACCES, EPERM, whether absent or waiting), or NULL.
 */
const struct source *source_set_denied(const struct source_set *set);

/*
 * Retire a set without waiting on a blocked read (a reload's old set): ask every thread
 * to stop, interrupt their reads, and join those that end within limit_ns. True when all
 * were joined; else call source_set_reap() later (each thread writes wake_fd as it ends)
 * until it returns true, then source_set_free().
 */
bool source_set_retire(struct source_set *set, uint64_t limit_ns);

/* Join the threads of a retired set that have ended, interrupt the others again. True
 * when none is left running. */
bool source_set_reap(struct source_set *set);

/*
 * Credit quality in bits per 1024 bits: configured, else 0 for a CPU source the kernel
 * command line distrusts (cpu_trust.h), else found (for an hwrng source: the quality of the
 * backend its last read came from, the take-over's kept one included), else the driver's.
 * Each block is stamped with it when it is read, and credited at that.
 */
unsigned int source_quality(const struct source *src);
/*
 * Before the threads start: one block of each open CPU source (never a device read that
 * can block) whose quality is above 0, read, tested and published on the calling thread.
 * The blocks published.
 */
size_t source_set_test_cpu_now(struct source_set *set);
/*
 * Credit what src reads from backend at quality, whatever its driver finds in sysfs
 * (kernel_hwrng.c: the rng_quality it found before writing 0 there); the driver asks with
 * source_kept_quality() at each read. backend NULL or quality -1: nothing kept. A configured
 * quality still wins. Any thread.
 */
void source_keep_quality(struct source *src, const char *backend, int quality);
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
