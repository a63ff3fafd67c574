/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The main loop: one thread (this one) waits in poll() on a signalfd, an eventfd the source
 * threads write to when a tested block is ready, a timerfd for the feeding clock and, on
 * legacy kernels, /dev/random's POLLOUT, until the next tick when something periodic is on
 * (poll()'s timeout). It is the only thread that touches the sink, the status file and
 * sd_notify.
 */
#ifndef RNGD_DAEMON_H
#define RNGD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "kernel_hwrng.h"
#include "pool.h"
#include "sink.h"
#include "source_set.h"

/* MESSAGE_ID= of the daemon's life-cycle journal entries (journalctl MESSAGE_ID=...). */
#define DAEMON_MESSAGE_STARTED "dfbec72ec5d144679c2d53ca412e6450"	 /* "started" */
#define DAEMON_MESSAGE_FIRST_FEED "f1384e28979a4ba39cc10f3c4d4233c1" /* "first-feed" */
#define DAEMON_MESSAGE_RELOADED "80aa514c93524b1e82dc11cdb8a92ef3"	 /* "reloaded" */
#define DAEMON_MESSAGE_STOPPING "8648b3f785d143f4a28bc3fddb3b8fa2"	 /* "stopping" */

enum daemon_mode {
	DAEMON_FEED,	/* feed the kernel (or write to an output sink) until stopped */
	DAEMON_TEST,	/* -t: test the sources, feed nothing, a rate line each second */
	DAEMON_ONCE,	/* --once: feed once, reseed, exit */
	DAEMON_DUMP,	/* --dump: one source to stdout, optionally a byte budget */
};

/* Loads the configuration again for SIGHUP (file plus command line). 0 or -EINVAL, err. */
typedef int (*daemon_reload_fn)(void *ctx, struct conf *out, char *err, size_t len);

struct daemon_counters {
	uint64_t feeds;
	uint64_t bytes_fed;
	uint64_t bits_credited;
	uint64_t reseeds;
	uint64_t last_feed;	/* CLOCK_REALTIME ns, 0 = never */
	uint64_t started;	/* CLOCK_REALTIME ns */
};

struct daemon {
	struct conf conf;
	struct source_set *set;
	enum daemon_mode mode;
	uint64_t byte_limit;	/* DAEMON_DUMP: stop after this many bytes, 0 = never */
	daemon_reload_fn reload;
	void *reload_ctx;

	struct sink *sink;	/* NULL in test mode */
	struct feed_policy policy;
	bool crng_ready;
	bool ready_sent;
	bool notify;		/* NOTIFY_SOCKET is set */
	bool want_more;		/* tested data is wanted at once */
	size_t batch;		/* blocks a ring holds before a streaming write */
	uint64_t partial_since; /* when less than a batch was first seen waiting, 0: not */
	bool stream_fast;	/* the last streaming write was a full batch */
	uint64_t timer_at;	/* when the feed timer fires, UINT64_MAX: disarmed */
	bool status_error_logged;
	bool metrics_error_logged;
	int sig_fd, wake_fd, timer_fd;
	uint64_t tick_ns;	/* tick period, 0 = off */
	uint64_t tick_at;	/* the next tick, poll()'s deadline (UINT64_MAX: off) */
	struct pool *pool;	/* the set's blocks, in turn, and their credit */
	/* Old sets of reloads whose threads were still in a read (source_set_retire()). */
	struct source_set *retired[8];
	size_t n_retired;
	uint8_t *buf;
	size_t buf_size;
	struct iovec *iov; /* feed()'s, FEED_IOV of them (8 KiB: not on the main thread's stack) */
	struct daemon_counters c;
	/* Test mode: what the last rate line saw. */
	uint64_t test_start_ns, test_last_ns, test_last_bytes, test_bytes;
	uint64_t next_status_ns, next_metrics_ns, next_stats_ns, next_watchdog_ns,
		ready_deadline_ns;
	uint64_t watchdog_ns;
	/* A failed feed: wait retry_ns (1 s doubling, capped) before the next one, at retry_at. */
	uint64_t retry_ns, retry_at;
	uint64_t bytes_lost;	/* taken from the sources for an output, but not written */
	struct kernel_hwrng kh;	/* the kernel's hwrng thread (kernel-hwrng) */
	/* daemon_run() stopped on a signal and left the readers running */
	bool leave_readers;
};

/*
 * Take ownership of conf and set, open the sink (kernel or output; none in test mode),
 * check CAP_SYS_ADMIN where the kernel is fed (-EPERM, logged, when missing), block the
 * signals and create the descriptors. Logs its own errors. 0 or -errno; on failure conf
 * and set still belong to the caller.
 */
int daemon_init(struct daemon *d, struct conf *conf, struct source_set *set,
		enum daemon_mode mode, uint64_t byte_limit, daemon_reload_fn reload,
		void *reload_ctx);

/*
 * kernel-hwrng: while privileges allow (before the drop), take the kernel's hwrng thread's
 * backend over or watch it, for a daemon that feeds the kernel until stopped; --once, -t,
 * --dump and an output sink leave it as they found it. Never fatal (logged).
 */
void daemon_start_kernel_hwrng(struct daemon *d);

/*
 * Boot: while the CRNG is not ready, feed the kernel from the CPU sources open now (a
 * quality above 0), a block at a time, read and tested on this thread as their readers
 * would, before the privilege drop and the threads (at most EARLY_BLOCKS blocks): the
 * first credit waits for neither. The daemon's feed and --once modes only.
 */
void daemon_seed_early(struct daemon *d);

/* Start the source threads. 0 or -errno (logged). */
int daemon_start(struct daemon *d);

/*
 * Run until SIGTERM/SIGINT, the end of --once or --dump, or a fatal error. Returns 0 on a
 * clean stop, -EPERM when the kernel refused the ioctl, -ENOENT when no source is left,
 * -EIO when tested data meant for an output could not be written, or another -errno (all
 * logged). The kernel's hwrng is given back before it returns. After a stop by signal,
 * d->leave_readers (never in sanitizer builds) says the readers were not asked to stop:
 * nothing they hold is still to be written, so the caller may end the process without
 * daemon_fini() (which would stop and join them as usual).
 */
int daemon_run(struct daemon *d);

/* Stop the threads, close everything, free conf and the sources. Accepts a half-built d. */
void daemon_fini(struct daemon *d);

#endif
