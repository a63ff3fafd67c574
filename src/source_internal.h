/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The source framework's own view of a source and a set, shared by its four files and
 * nothing else (drivers see struct source only through source.h):
 *   source_registry.c  the driver table's checks, option schemas, what drivers may ask
 *   source_set.c       a set's lifetime: build, list, open, start and stop the threads
 *   source_reader.c    the reader thread (producer side of each ring)
 *   pool.c             the consumer side: fresh blocks across the sources, credit
 */
#ifndef RNGD_SOURCE_INTERNAL_H
#define RNGD_SOURCE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "fips.h"
#include "health.h"
#include "ring.h"
#include "source_set.h"

#define MAX_COUNTERS 8
#define COUNTER_NAME_MAX 32

/*
 * The block history of the health tests (health.h): one for the daemon, shared by every
 * source of every set a reload makes (an old set's reader may still run beside the new
 * one's) and kept for the life of the process: a replay is caught whichever source reads
 * it, the same bytes are credited once.
 */
struct source_history {
	pthread_mutex_t lock;
	struct health *health;
};

struct source_kv {
	char *key;
	char *value;
};

struct source {
	/*
	 * Configuration: written by source_set_new() (main thread) before any thread starts,
	 * read-only afterwards by every thread.
	 */
	struct source_set *set; /* NULL for a temporary source (checks, -l) */
	const struct source_ops *ops;
	char *name;
	struct source_kv *kv;
	size_t n_kv;
	bool configured; /* has a [source] section */
	bool enabled;
	bool noticed;		   /* source_notice_once() spoke (the thread that opens it) */
	int conf_quality;	   /* -1 when not configured */
	/* ops->cpu_rng and random.trust_cpu=off on the kernel command line (cpu_trust.h). */
	bool cpu_distrusted;
	char cpu_trust_setting[48]; /* that setting as written */
	_Atomic int found_quality; /* -1 until the driver sets it (any thread) */
	/* kernel-hwrng take-over's quality for one backend (source_keep_quality()), under lock. */
	int kept_quality; /* -1: none */
	char kept_backend[128];

	/*
	 * The driver's state: the main thread opens it (source_set_init()) before the
	 * reader thread starts; from then on only the reader thread touches it, until it is
	 * joined.
	 */
	void *priv;
	bool opened; /* init succeeded, fini not called yet */

	/*
	 * The ring (ring.h): the reader thread writes slots and publishes them; the main
	 * thread (pool.c) reads and releases them. take_off is the main thread's alone.
	 */
	struct ring ring;
	size_t take_off; /* bytes already taken from the oldest block */

	/* The reader thread's alone while it runs (source_reader.c). */
	struct fips_ctx fips;
	struct source_history *history; /* the daemon's: survives re-opens and reloads */
	bool history_tried;	/* history taken (NULL: out of memory, said once) */
	bool tests_seeded;	/* by source_test_now(): the thread's first read_blocks() goes on */
	bool no_dry_wait;	/* in source_test_now(): a dry read returns -EAGAIN */
	struct source_fail_window window;
	uint64_t backoff_ns;
	uint64_t blocks_since_open;
	bool in_trouble;	/* "source-failed" logged, "source-recovered" not yet */
	size_t ahead;		/* bytes read into the free slots from the head on */
	uint64_t ahead_time_ns; /* when the last of them were read */
	unsigned int ahead_quality; /* the lowest quality of the reads of them (UINT_MAX: none) */
	size_t read_max;	/* this read's limit: one block at the first open, doubling */
	char read_why[128];	/* source_read_why(): why the driver's read failed */

	/*
	 * The thread's life: the main thread writes thread, thread_started, wake_fd and
	 * stop (source_set_start()/stop); the reader thread writes thread_done, waiting,
	 * in_read and progress_ns, which the main thread reads (health, stop).
	 */
	pthread_t thread;
	bool thread_started;
	int wake_fd;
	_Atomic bool stop;
	_Atomic bool thread_done;
	_Atomic bool waiting;	      /* in a deliberate wait of the framework */
	_Atomic bool in_read;	      /* inside the driver's read */
	_Atomic uint64_t progress_ns; /* when the thread last started or finished a step */

	/*
	 * Shared under lock: the reader thread updates st and the counters, the main thread
	 * snapshots them (source_get_stats()); cond carries "ring space" and "stop".
	 */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct source_stats st;
	char counter_names[MAX_COUNTERS][COUNTER_NAME_MAX];
};

struct source_set {
	/* The main thread's: written by source_set_new/start/stop, read by the readers. */
	struct source **src;
	size_t n;
	bool started;
	size_t ring_blocks;
	bool abandoned; /* a thread outlived source_set_stop_within() */
	uint64_t stop_signaled_ns; /* when a stop first signalled the threads (0: not yet) */
	bool start_failed; /* source_set_abort(): fini undoes what init changed */
	struct source_set *next_abandoned;
	/*
	 * The consumer is about to sleep (pool.c writes): the next published block must wake
	 * it (the reader thread that publishes it reads and clears wake_at).
	 */
	_Atomic size_t wake_at;	    /* 0: the consumer is busy; else the blocks it waits for */
	_Atomic bool wake_on_first; /* ... or the first block in an empty ring */
	/* Reader threads, under lock: whether "no-source-left" was logged. */
	pthread_mutex_t lock;
	bool none_left;
};

/* source_set.c: a source with its configuration (s may be NULL), nothing opened; NULL: ENOMEM. */
struct source *source_new(const struct source_ops *ops, const char *name,
			  const struct conf_section *s);
/* source_set.c: fini (if opened) and free; accepts NULL. */
void source_free(struct source *src);

/*
 * source_reader.c: whether an open or read that failed with r may work later by itself
 * (an hwrng device without a backend yet, a node udev has not opened to us yet).
 */
bool source_may_appear(const struct source *src, int r);
/* source_reader.c: the driver's init. 0, or -errno with why (never empty). */
int source_open(struct source *src, char *why, size_t len);
/* source_reader.c: drop what was read ahead, then the driver's fini. */
void source_close(struct source *src);
/* source_reader.c: install the handler of SOURCE_INTERRUPT_SIGNAL (once). 0 or -errno. */
int source_install_interrupt(void);
/*
 * source_reader.c: change src's state and log the change once (never once per attempt);
 * text, when given, becomes its last error. The reader thread's own, and source_set_init()'s
 * before the thread starts.
 */
void source_change_state(struct source *src, enum source_state state, int err, const char *text);
/* source_reader.c: the reader thread's body (pthread_create()); arg is the source. */
/*
 * Before its thread starts: read, test and publish up to max blocks of an opened source on
 * the calling thread, as the thread would (history, FIPS gate; the tests are seeded at the
 * first call). A source with nothing now is not waited for (-EAGAIN). 0 when done or the
 * ring is full, -EBUSY when the thread runs or the source is not open, or the error that
 * would have stopped the thread.
 */
int source_test_now(struct source *src, size_t max);
void *source_reader_main(void *arg);

#endif
