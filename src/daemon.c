// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "notify.h"
#include "daemon_internal.h"
#include "daemon_status.h"
#include "kernel_hwrng_state.h"
#include "stats.h"
#include "util.h"

/* Largest RNDADDENTROPY we make. */
#define KERNEL_CHUNK FIPS_BLOCK_BYTES
/* Blocks one feed takes at most (two full batches of each of two sources). */
#define FEED_IOV 512
/* --once gives up when no tested block arrived in this time. */
#define ONCE_TIMEOUT_NS (15 * NSEC_PER_SEC)
/* Longest wait after failed feeds (1 s doubling up to this). */
#define FEED_RETRY_MAX_NS (64 * NSEC_PER_SEC)
/*
 * --dump is a one-shot tool: its output's back-off stops at 8 s, and a write that fails
 * then too ends it (exit 1, as -o's untransferred data): 1 + 2 + 4 + 8 = 15 s of retries.
 */
#define DUMP_RETRY_MAX_NS (8 * NSEC_PER_SEC)

/*
 * Signals whose default action ends the process, other than the synchronous faults (the
 * crash handler's, kernel_hwrng.c): each one stops the daemon the way SIGTERM does, so that
 * every exit gives the kernel's hwrng back. SOURCE_INTERRUPT_SIGNAL is the readers' own.
 */
static const int stop_signals[] = {
	SIGTERM, SIGINT, SIGQUIT, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ,
	SIGPWR,	 SIGIO,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

/*
 * Sanitizer builds stop and join the readers and free everything after a stop by signal
 * too (no d->leave_readers), so that the leak check at exit and ThreadSanitizer still see
 * the whole teardown that reload and the other stops use.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FULL_TEARDOWN true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define FULL_TEARDOWN true
#endif
#endif
#ifndef FULL_TEARDOWN
#define FULL_TEARDOWN false
#endif

static bool is_stop_signal(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		if (stop_signals[i] == sig)
			return true;
	return sig >= SIGRTMIN && sig <= SIGRTMAX && sig != SOURCE_INTERRUPT_SIGNAL;
}

static int block_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaddset(set, stop_signals[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (sig != SOURCE_INTERRUPT_SIGNAL)
			sigaddset(set, sig);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	/* A reader of our output that goes away is an EPIPE, not a death. */
	signal(SIGPIPE, SIG_IGN);
	/* Synchronous faults stay deliverable whatever mask we were started with. */
	unblock_sync_signals();
	return -pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* A one-shot timerfd at at_ns (CLOCK_MONOTONIC), or disarmed for UINT64_MAX. */
static int arm_timer(int fd, uint64_t at_ns)
{
	struct itimerspec its = { 0 };

	if (at_ns != UINT64_MAX) {
		if (at_ns == 0)
			at_ns = 1; /* 0 would disarm */
		its.it_value.tv_sec = (time_t)(at_ns / NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(at_ns % NSEC_PER_SEC);
	}
	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to drain. */
	}
}

/* Whether the sink is an output (file, FIFO, stdout) rather than the kernel. */
static bool output_sink(const struct daemon *d)
{
	return d->sink && sink_is_output(d->sink);
}

static bool legacy_kernel(const struct daemon *d)
{
	return d->sink && sink_generation(d->sink) == KERNEL_LEGACY;
}

static const char *sink_kind(const struct daemon *d)
{
	if (!d->sink)
		return "none";
	if (output_sink(d))
		return "output";
	return legacy_kernel(d) ? "legacy kernel" : "kernel";
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The tick serves the test-mode rate line, the status and metrics files, statistics and
 * the watchdog. The files' and the statistics' intervals (whole seconds) get a tick that
 * divides each of them, so that each comes on time: a tick of 10 s would write a metrics
 * file of 15 s every 20.
 */
static uint64_t tick_period(const struct daemon *d)
{
	uint64_t p = UINT64_MAX, s = 0, look = kernel_hwrng_look_seconds(&d->kh);

	if (d->conf.status_interval)
		s = gcd(s, d->conf.status_interval);
	if (daemon_writes_metrics(d) && d->conf.metrics_interval)
		s = gcd(s, d->conf.metrics_interval);
	if (d->conf.stats_interval)
		s = gcd(s, d->conf.stats_interval);
	/* The kernel's hwrng: a backend switch or a failing device is seen in time. */
	if (look)
		s = gcd(s, look);
	if (s)
		p = s * NSEC_PER_SEC;
	if (d->mode == DAEMON_TEST)
		p = MIN(p, NSEC_PER_SEC);
	if (d->watchdog_ns)
		p = MIN(p, MAX(d->watchdog_ns / 4, 10 * NSEC_PER_MSEC));
	if (!d->ready_sent && d->mode == DAEMON_FEED)
		p = MIN(p, 250 * NSEC_PER_MSEC);
	return p == UINT64_MAX ? 0 : p;
}

/*
 * kernel-hwrng take-over or watch without a reader of the kernel's hwrng yet: a source
 * that opens it later (rng-core loaded after start, a device that came) changes state,
 * which wakes the main loop (wake_fd), so look at each wake-up instead of on a timer (a
 * daemon without such a reader woke every 5 s for nothing). Not again once rng_quality
 * could not be opened: that needs a restart (kernel_hwrng_update() says so).
 */
static void look_for_late_reader(struct daemon *d)
{
	if (kernel_hwrng_acting(&d->kh) || d->kh.disabled || d->kh.mode == KERNEL_HWRNG_LEAVE ||
	    d->kh.no_access)
		return;
	kernel_hwrng_update(&d->kh, d->set);
	if (tick_period(d) != d->tick_ns)
		daemon_reset_tick(d);
}

/* The pool over d->set: its blocks in turn and their credit (after a reload, anew). */
int daemon_setup_pool(struct daemon *d)
{
	struct pool *pool;
	int r = pool_new(&pool, d->set);

	if (r < 0)
		return r;
	pool_free(d->pool);
	d->pool = pool;
	return 0;
}

/*
 * Streaming (output, test) wants room for a burst, and writes half a ring at a time: each
 * write wakes the reader of our output, and on a machine with few cores every wake-up is
 * a context switch taken from the source threads. What is left of a batch waits at most
 * STREAM_FLUSH_NS. Feeding the kernel reads on demand and keeps the default small ring.
 */
#define STREAM_RING_BLOCKS 256
#define STREAM_FLUSH_NS NSEC_PER_MSEC

void daemon_setup_ring(struct daemon *d, struct source_set *set)
{
	d->batch = 1;
	if (d->mode == DAEMON_TEST || d->mode == DAEMON_DUMP || output_sink(d)) {
		source_set_ring_blocks(set, STREAM_RING_BLOCKS);
		d->batch = STREAM_RING_BLOCKS / 2;
	}
}

void daemon_setup_policy(struct daemon *d, bool keep_history)
{
	struct feed_policy old = d->policy;
	bool output = d->mode == DAEMON_DUMP || output_sink(d);

	feed_policy_init(&d->policy, d->sink ? sink_generation(d->sink) : KERNEL_MODERN,
			 d->conf.feed_interval * NSEC_PER_SEC, (size_t)d->conf.feed_bytes, output);
	if (keep_history) {
		d->policy.fed_once = old.fed_once;
		d->policy.last_feed_ns = old.last_feed_ns;
	}
}

int daemon_init(struct daemon *d, struct conf *conf, struct source_set *set,
		enum daemon_mode mode, uint64_t byte_limit, daemon_reload_fn reload,
		void *reload_ctx)
{
	const char *lib_why = "";
	sigset_t mask;
	int r;

	memset(d, 0, sizeof(*d));
	kernel_hwrng_init(&d->kh);
	d->sig_fd = d->wake_fd = d->timer_fd = -1;
	d->timer_at = d->tick_at = UINT64_MAX;
	conf_init(&d->conf, source_check_section);
	d->mode = mode;
	d->byte_limit = byte_limit;
	d->reload = reload;
	d->reload_ctx = reload_ctx;
	d->c.started = realtime_ns();

	if (mode != DAEMON_TEST) {
		char why[256] = "";

		/* Before the open: an output open truncates nothing, but it may create. */
		if (source_set_reads_path(set, conf->random_device)) {
			log_error("cannot write to '%s': it is also a source", conf->random_device);
			r = -EINVAL;
			goto fail;
		}
		r = sink_open_flags(&d->sink, conf->random_device, NULL,
				    conf->force_output ? SINK_OVERWRITE : 0, why, sizeof(why));
		if (r < 0 && why[0]) {
			log_error("%s", why);
			goto fail;
		}
		if (r < 0) {
			log_error("cannot open '%s': %s", conf->random_device, strerror(-r));
			goto fail;
		}
		if (mode == DAEMON_ONCE && output_sink(d)) {
			log_error("--once feeds the kernel: '%s' is not a random device",
				  conf->random_device);
			r = -EINVAL;
			goto fail;
		}
		if (!output_sink(d)) {
			r = sink_check_access(d->sink);
			if (r == -EPERM) {
				log_error("cannot feed the kernel: no CAP_SYS_ADMIN (in a container?); "
					  "'rngd -t' tests the sources without feeding");
				goto fail;
			}
			if (r < 0) {
				log_error("cannot feed the kernel through '%s': %s",
					  conf->random_device, strerror(-r));
				goto fail;
			}
			if (legacy_kernel(d)) {
				unsigned int wm = conf->watermark ? (unsigned int)conf->watermark
								  : 4096 * 3 / 4;

				r = sink_set_watermark(d->sink, wm);
				if (r < 0)
					log_warning("cannot set write_wakeup_threshold to %u: %s, ignoring",
						    wm, strerror(-r));
			}
		}
	}

	r = block_signals(&mask);
	if (r < 0)
		goto fail;
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->buf_size = KERNEL_CHUNK;
	d->buf = malloc(d->buf_size);
	d->iov = malloc(FEED_IOV * sizeof(*d->iov));
	if (d->sig_fd < 0 || d->wake_fd < 0 || d->timer_fd < 0 || !d->buf || !d->iov) {
		r = d->buf && d->iov ? -errno : -ENOMEM;
		log_error("cannot set up the main loop: %s", strerror(-r));
		goto fail;
	}

	d->set = set;
	daemon_setup_ring(d, set);
	r = daemon_setup_pool(d);
	if (r < 0) {
		d->set = NULL;
		goto fail;
	}
	conf_free(&d->conf);
	d->conf = *conf;
	daemon_setup_policy(d, false);
	if (notify_init(&lib_why) < 0)
		log_error("NOTIFY_SOCKET is set, but libsystemd cannot be loaded (%s): systemd "
			  "will hear nothing from rngd (no READY=1, STATUS= or watchdog pings)",
			  lib_why);
	d->notify = getenv("NOTIFY_SOCKET") != NULL;
	{
		uint64_t usec = 0;

		if (notify_watchdog_usec(&usec) > 0)
			d->watchdog_ns = usec * NSEC_PER_USEC;
	}
	return 0;
fail:
	/* conf and set stay the caller's; d holds only its defaults and descriptors. */
	daemon_fini(d);
	return r;
}

void daemon_reset_tick(struct daemon *d)
{
	uint64_t p = tick_period(d);

	d->tick_ns = p;
	d->tick_at = p ? now_ns() + p : UINT64_MAX;
}

size_t daemon_usable_sources(struct daemon *d)
{
	return source_set_size(d->set) - source_set_count_state(d->set, SOURCE_ABSENT);
}

void daemon_start_kernel_hwrng(struct daemon *d)
{
	enum kernel_hwrng_mode m = KERNEL_HWRNG_TAKE_OVER;
	const char *dir = NULL;
	char *state;

	(void)kernel_hwrng_mode_parse(d->conf.kernel_hwrng, &m); /* validated by conf */
	d->kh.mode = m;
	/* Only a daemon that feeds the kernel acts; the others keep the mode for reloads. */
	if (d->mode != DAEMON_FEED || !d->sink || output_sink(d)) {
		d->kh.disabled = true;
		return;
	}
	/* No reader yet (rng-core loads later): the tick opens rng_quality when there is one. */
	(void)kernel_hwrng_reader(d->set, &dir);
	/*
	 * A fixed path (not the status file's directory): root's restore needs no config. Not
	 * in a PATH_MAX buffer on this deep call chain's stack (bench/README.md, footprint).
	 */
	state = kernel_hwrng_state_path();
	kernel_hwrng_start(&d->kh, m, dir, state, d->set);
	free(state);
}

int daemon_start(struct daemon *d)
{
	uint64_t now = now_ns();
	int r;

	d->crng_ready = sink_crng_ready();
	r = source_set_start(d->set, d->wake_fd);
	if (r < 0) {
		log_error("cannot start the source threads: %s", strerror(-r));
		return r;
	}
	d->test_last_ns = d->test_start_ns = now;
	d->ready_deadline_ns = now + d->conf.ready_timeout * NSEC_PER_SEC;
	d->next_status_ns = d->next_metrics_ns = now;
	d->next_stats_ns = now + d->conf.stats_interval * NSEC_PER_SEC;
	daemon_reset_tick(d);
	log_full(LOG_INFO, NULL, "started", DAEMON_MESSAGE_STARTED,
		 "started: %zu source(s), sink %s%s", daemon_usable_sources(d), sink_kind(d),
		 d->sink && !output_sink(d) && !d->crng_ready ? ", CRNG not ready yet" : "");
	return 0;
}

static size_t fresh_available(struct daemon *d, uint64_t now)
{
	return pool_available(d->pool, now, d->conf.max_age * NSEC_PER_SEC);
}

/*
 * Feed up to n bytes (as far as the sources have them), taking from each source in turn
 * (pool.h): to the kernel, credited, at most KERNEL_CHUNK per RNDADDENTROPY through
 * d->buf; to an output straight from the ring slots, without a copy and without credit;
 * in test mode nowhere. Returns the bytes fed or -errno.
 */
static ssize_t feed(struct daemon *d, size_t n, uint64_t now)
{
	bool kernel = d->sink && !output_sink(d);
	uint64_t max_age = d->conf.max_age * NSEC_PER_SEC;
	struct iovec *iov = d->iov;
	size_t total = 0;

	while (total < n) {
		size_t want = n - total, used, k;
		uint64_t credit;
		int r = 0;

		if (kernel)
			want = MIN(want, d->buf_size);
		if (d->byte_limit)
			want = MIN(want, d->byte_limit - d->c.bytes_fed);
		used = pool_peek(d->pool, iov, FEED_IOV, want, now, max_age,
				 kernel ? (unsigned int)d->conf.entropy_count : 0, &k, &credit);
		if (k == 0)
			break;
		if (kernel) {
			for (size_t i = 0, off = 0; i < used; off += iov[i++].iov_len)
				memcpy(d->buf + off, iov[i].iov_base, iov[i].iov_len);
			r = sink_add_entropy(d->sink, d->buf, k, (unsigned int)credit);
			wipe(d->buf, k);
		} else if (d->mode != DAEMON_TEST) {
			r = sink_write_iov(d->sink, iov, (int)used);
		}
		/*
		 * Consumed even when the write failed: part of it may have been written, and
		 * nothing is written twice. Counted, and the run ends with an error.
		 */
		pool_consume(d->pool, r == 0);
		if (r < 0 && !kernel && r != -EPIPE)
			d->bytes_lost += k;
		if (r < 0)
			return r;
		total += k;
		if (d->mode == DAEMON_TEST) {
			d->test_bytes += k;
			continue;
		}
		d->c.bytes_fed += k;
		if (kernel)
			d->c.bits_credited += credit;
		if (d->byte_limit && d->c.bytes_fed >= d->byte_limit)
			break;
	}
	return (ssize_t)total;
}

/* Arm the feed timer for at_ns (UINT64_MAX: disarm), unless it already is. */
static void set_feed_timer(struct daemon *d, uint64_t at_ns)
{
	if (at_ns == d->timer_at)
		return;
	if (arm_timer(d->timer_fd, at_ns) == 0)
		d->timer_at = at_ns;
}

static void fed_ok(struct daemon *d, uint64_t now, size_t fed)
{
	feed_done(&d->policy, now, fed);
	if (!output_sink(d)) {
		d->c.feeds++;
		d->c.last_feed = realtime_ns();
		if (d->conf.reseed && d->crng_ready && sink_reseed(d->sink) == 0)
			d->c.reseeds++;
		if (d->c.feeds == 1)
			log_full(LOG_INFO, NULL, "first-feed", DAEMON_MESSAGE_FIRST_FEED,
				 "first injection: %zu bytes, %" PRIu64 " bits credited%s", fed,
				 d->c.bits_credited, d->crng_ready ? "" : ", CRNG not ready yet");
		else
			log_debug("fed %zu bytes", fed);
	}
	if (!d->ready_sent) {
		/* READY=1 right after the first injection. */
		notify_ready();
		d->ready_sent = true;
	}
	/* What STATUS= says changed; a change kept back already is refreshed when due. */
	if (d->notify && !output_sink(d) && notify_status_due() == UINT64_MAX)
		daemon_notify_status(d);
}

/*
 * Ask the policy what to do now, do it, and arm the feed timer. Sets d->want_more when
 * tested data is wanted at once (output, test mode, CRNG not ready). 1 when finished
 * (--once, --dump-bytes, output closed), 0 to go on, or -errno.
 */
static int feed_cycle(struct daemon *d)
{
	uint64_t now = now_ns(), next = UINT64_MAX;
	struct feed_state st = { .now_ns = now };
	size_t want;
	ssize_t fed;

	if (d->mode == DAEMON_TEST) {
		d->want_more = true;
		fed = feed(d, SIZE_MAX, now);
		return fed < 0 ? (int)fed : 0;
	}
	if (d->retry_at > now) {
		/* Backing off after a failed feed: nothing before retry_at. */
		d->want_more = false;
		set_feed_timer(d, d->retry_at);
		return 0;
	}
	if (!d->crng_ready && !output_sink(d))
		d->crng_ready = sink_crng_ready();
	st.crng_ready = d->crng_ready;
	st.available = fresh_available(d, now);
	sink_feed_state(d->sink, d->conf.watermark ? (unsigned int)d->conf.watermark : 4096 * 3 / 4,
			&st);
	want = feed_plan(&d->policy, &st, &next);
	d->want_more = next <= now;
	if (want > 0) {
		fed = feed(d, want, now);
		if (fed == -EPIPE && output_sink(d)) {
			log_info("output closed by its reader; stopping");
			return 1;
		}
		if (fed == -EPERM) {
			log_error("the kernel refused RNDADDENTROPY: no CAP_SYS_ADMIN");
			return -EPERM;
		}
		if (fed < 0 && d->mode == DAEMON_DUMP && d->retry_ns >= DUMP_RETRY_MAX_NS) {
			log_error("--dump: cannot write the output: %s; giving up after %llu s of "
				  "retries",
				  strerror((int)-fed),
				  (unsigned long long)(2 * DUMP_RETRY_MAX_NS / NSEC_PER_SEC - 1));
			return -EIO;
		}
		if (fed < 0) {
			/* 1 s, doubling, at most FEED_RETRY_MAX_NS: never a storm of retries. */
			d->retry_ns = d->retry_ns ? MIN(d->retry_ns * 2, FEED_RETRY_MAX_NS)
						  : NSEC_PER_SEC;
			d->retry_at = now + d->retry_ns;
			log_warning("cannot %s: %s, retrying in %llu s",
				    output_sink(d) ? "write the output" : "feed",
				    strerror((int)-fed),
				    (unsigned long long)(d->retry_ns / NSEC_PER_SEC));
			d->want_more = false;
			next = d->retry_at;
		} else if (fed > 0) {
			d->retry_ns = 0;
			fed_ok(d, now, (size_t)fed);
			/*
			 * --once is done when the CRNG is ready: one block of a source with a low
			 * quality (rdrand: 39 bits) does not make it so, the next ones follow.
			 */
			if (d->mode == DAEMON_ONCE && (d->crng_ready || sink_crng_ready()))
				return 1;
			if (d->byte_limit && d->c.bytes_fed >= d->byte_limit)
				return 1;
		}
	}
	set_feed_timer(d, d->want_more ? UINT64_MAX : next);
	return 0;
}

/*
 * Blocks fed at most before the threads start: 16 of RDRAND at its default quality
 * (39 bits each) make 624 bits, over the 256 the kernel's CRNG waits for.
 */
#define EARLY_BLOCKS 16

void daemon_seed_early(struct daemon *d)
{
	if ((d->mode != DAEMON_FEED && d->mode != DAEMON_ONCE) || !d->sink || output_sink(d))
		return;
	for (size_t i = 0; i < EARLY_BLOCKS && !(d->crng_ready = sink_crng_ready()); i++)
		if (source_set_test_cpu_now(d->set) == 0 || feed_cycle(d) != 0)
			break;
}

/* Every source thread healthy or deliberately idle: may we pet the watchdog? */
static bool all_healthy(struct daemon *d, uint64_t now)
{
	uint64_t limit = d->watchdog_ns ? d->watchdog_ns / 2 : 30 * NSEC_PER_SEC;

	for (size_t i = 0; i < source_set_size(d->set); i++)
		if (!source_is_healthy(source_set_get(d->set, i), now, limit))
			return false;
	return true;
}

static void tick(struct daemon *d)
{
	uint64_t now = now_ns();

	if (d->mode == DAEMON_TEST)
		daemon_test_rate_line(d, false);
	if (d->conf.stats_interval && now >= d->next_stats_ns) {
		daemon_stats_line(d);
		d->next_stats_ns = now + d->conf.stats_interval * NSEC_PER_SEC;
	}
	if (!d->ready_sent && now >= d->ready_deadline_ns && d->mode == DAEMON_FEED) {
		/* Start-up budget spent: say ready anyway, and why nothing was fed. */
		notify_status(now, "nothing fed yet: no tested block within %" PRIu64 " s",
			      d->conf.ready_timeout);
		notify_status_flush(now);
		notify_ready();
		d->ready_sent = true;
	}
	/* Half a tick early is on time: ticks are not exactly one period apart. */
	if (d->watchdog_ns && now + d->tick_ns / 2 >= d->next_watchdog_ns) {
		notify_watchdog(all_healthy(d, now));
		d->next_watchdog_ns = now + d->watchdog_ns / 2;
	}
	kernel_hwrng_update(&d->kh, d->set);
	daemon_update_status(d, false);
	if (tick_period(d) != d->tick_ns)
		daemon_reset_tick(d);
}

/*
 * Streaming: whether to wait for the rest of a batch rather than write what is there now.
 * Less than a batch is written once it has waited STREAM_FLUSH_NS.
 */
static bool hold_for_batch(struct daemon *d, uint64_t now)
{
	size_t held = 0;

	if (!d->want_more || d->batch <= 1)
		goto write;
	held = source_set_held(d->set);
	if (held == 0 || held >= d->batch)
		goto write;
	if (!d->partial_since)
		d->partial_since = now;
	if (now - d->partial_since < STREAM_FLUSH_NS)
		return true;
write:
	d->partial_since = 0;
	d->stream_fast = d->want_more && d->batch > 1 && held >= d->batch;
	return false;
}

/*
 * poll()'s timeout for a deadline (CLOCK_MONOTONIC ns, UINT64_MAX: none) and the one the
 * rest of the loop wants. The tick and a STATUS= kept back are deadlines rather than
 * timerfds, whose expiry costs one more read() each time; a streaming batch's flush is one
 * too (wait_timeout()). Rounded up to the millisecond, so that the wait never ends before
 * the deadline.
 */
static int timeout_until(uint64_t at, int timeout)
{
	uint64_t now = now_ns(), left;
	int ms;

	if (at == UINT64_MAX)
		return timeout;
	left = at > now ? at - now : 0;
	ms = (int)MIN((left + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC, (uint64_t)INT_MAX);
	return timeout < 0 || ms < timeout ? ms : timeout;
}

/*
 * The poll timeout, given the one the rest of the loop wants. Blocks waiting and wanted
 * now (output, test, CRNG not ready): do not sleep. Streaming waits for a batch: with part
 * of one there, until its deadline; with nothing there, until the first block comes, or,
 * while the sources keep up (the last write was a full batch), STREAM_FLUSH_NS at most, so
 * that a fast source wakes us once per batch instead of twice.
 */
static int wait_timeout(struct daemon *d, int timeout)
{
	bool deadline = d->want_more && d->batch > 1 && (d->partial_since || d->stream_fast);

	if (!source_set_prepare_wait(d->set, d->want_more ? d->batch : 1, !deadline))
		return d->want_more ? 0 : timeout;
	if (!deadline)
		return timeout;
	return timeout_until((d->partial_since ? d->partial_since : now_ns()) + STREAM_FLUSH_NS,
			     timeout);
}

/* Whether the tick is due, and the next one set (one a period; missed ones are not run). */
static bool tick_due(struct daemon *d)
{
	uint64_t now = now_ns();

	if (now < d->tick_at)
		return false;
	d->tick_at += d->tick_ns;
	if (d->tick_at <= now)
		d->tick_at = now + d->tick_ns;
	return true;
}

/* Whether every source has ended for good (failed, or ran out of input). */
static bool no_source_left(struct daemon *d)
{
	for (size_t i = 0; i < source_set_size(d->set); i++) {
		struct source_stats s;

		source_get_stats(source_set_get(d->set, i), &s);
		if (s.state != SOURCE_FAILED && s.state != SOURCE_ABSENT)
			return false;
	}
	return true;
}

/*
 * Act on the signals the signalfd holds. Several at a time: a read that returns fewer than
 * fit was the last (no second read to see EAGAIN after a lone SIGTERM). Whether to stop;
 * *r gets a failed reload's error.
 */
static bool read_signals(struct daemon *d, int *r)
{
	struct signalfd_siginfo si[4];
	bool stop = false;
	ssize_t n;

	do {
		n = read(d->sig_fd, si, sizeof(si));
		for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(si[0]); i++) {
			int sig = (int)si[i].ssi_signo;

			if (is_stop_signal(sig)) {
				log_full(LOG_INFO, NULL, "stopping", DAEMON_MESSAGE_STOPPING,
					 "stopping on signal %s", strsignal(sig));
				stop = true;
			} else if (sig == SIGHUP) {
				*r = daemon_reload(d);
				if (*r < 0)
					stop = true;
			} else if (sig == SIGUSR1) {
				daemon_stats_line(d);
				daemon_update_status(d, true);
			}
		}
	} while (n == (ssize_t)sizeof(si));
	return stop;
}

int daemon_run(struct daemon *d)
{
	uint64_t once_deadline = now_ns() + ONCE_TIMEOUT_NS;
	bool by_signal = false;
	int r;

	/*
	 * The first cycle may finish the job already (--once with data at hand), or
	 * daemon_seed_early() has (--once and the CRNG ready).
	 */
	r = d->mode == DAEMON_ONCE && d->c.feeds && sink_crng_ready() ? 1 : feed_cycle(d);
	while (r == 0) {
		struct pollfd p[4] = {
			{ .fd = d->sig_fd, .events = POLLIN },
			{ .fd = d->wake_fd, .events = POLLIN },
			{ .fd = d->timer_fd, .events = POLLIN },
			{ .fd = -1, .events = POLLOUT },
		};
		int timeout = -1, sink_timeout;

		/* What the sink waits for (legacy kernels: POLLOUT), only with data to give. */
		sink_timeout =
			sink_prepare_wait(d->sink, d->conf.feed_interval * NSEC_PER_SEC, &p[3]);
		if (p[3].fd >= 0 && fresh_available(d, now_ns()) == 0)
			p[3].fd = -1;
		if (d->mode == DAEMON_ONCE)
			timeout = 1000;
		if (p[3].fd >= 0)
			timeout = sink_timeout;
		timeout = timeout_until(d->tick_at, wait_timeout(d, timeout));
		if (d->notify)
			timeout = timeout_until(notify_status_due(), timeout);
		if (poll(p, ARRAY_SIZE(p), timeout) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			log_error("poll: %m");
			break;
		}
		if (p[0].revents & POLLIN) {
			if (read_signals(d, &r)) {
				by_signal = r >= 0; /* not a failed reload */
				break;
			}
		}
		if (p[3].fd >= 0)
			sink_wait_done(d->sink, p[3].revents);
		if (p[1].revents & POLLIN) {
			drain_fd(d->wake_fd);
			look_for_late_reader(d);
		}
		if (d->n_retired)
			daemon_reap_retired(d);
		if (p[2].revents & POLLIN) {
			drain_fd(d->timer_fd);
			d->timer_at = UINT64_MAX; /* expired */
		}
		if (tick_due(d))
			tick(d);
		else if (d->notify && now_ns() >= notify_status_due())
			daemon_notify_status(d);
		if (!hold_for_batch(d, now_ns())) {
			r = feed_cycle(d);
			if (r != 0)
				break;
		}
		if (no_source_left(d) && fresh_available(d, now_ns()) == 0) {
			/* The source framework has said why, once. */
			if (d->mode != DAEMON_TEST && !output_sink(d))
				r = -ENOENT;
			log_info("no source left; stopping");
			break;
		}
		if (d->mode == DAEMON_ONCE && now_ns() > once_deadline && d->c.bytes_fed) {
			log_warning("--once: fed %" PRIu64 " bytes; the CRNG is still not ready "
				    "after %llu s, stopping",
				    d->c.bytes_fed,
				    (unsigned long long)(ONCE_TIMEOUT_NS / NSEC_PER_SEC));
			break;
		}
		if (d->mode == DAEMON_ONCE && now_ns() > once_deadline) {
			log_error("--once: no tested data within %llu s",
				  (unsigned long long)(ONCE_TIMEOUT_NS / NSEC_PER_SEC));
			r = -ETIMEDOUT;
			break;
		}
	}
	/*
	 * A stop by signal leaves the readers as they are, for the process's exit to end:
	 * what they hold (blocks in their rings, a read under way) would not be written after
	 * the signal anyway, none of them has anything to write or put back at a normal stop
	 * (their drivers' fini only closes and frees; rng_current is put back only after a
	 * failed start), and waking and joining them cost the stop about 0.2 ms
	 * (bench/README.md, "Stop"). The hwrng reader sits in virtio-rng's killable read,
	 * which only the exit ends anyway. Every other stop (--once, --dump's end, no source
	 * left, errors) ends them as before: they end while the last numbers are written,
	 * daemon_fini() joins them.
	 */
	d->leave_readers = by_signal && !FULL_TEARDOWN;
	if (!d->leave_readers)
		source_set_interrupt(d->set);
	notify_stopping();
	/* The last numbers stay for the textfile collector; their age says rngd is gone. */
	daemon_write_metrics(d);
	if (d->mode == DAEMON_TEST)
		daemon_test_rate_line(d, true);
	if (r >= 0 && d->bytes_lost) {
		log_error("%" PRIu64 " tested bytes could not be written to '%s'", d->bytes_lost,
			  d->conf.random_device);
		r = -EIO;
	}
	/*
	 * The kernel's hwrng given back now, while the readers end, not after they are joined
	 * (daemon_fini() would): the sysfs write and the state file's removal overlap their
	 * wake-ups. After the last numbers above, which still say what was taken. (A failed
	 * start, which never comes here, keeps the reverse order: the readers put rng_current
	 * back first.) Left as the readers are, the exit closes the descriptors.
	 */
	if (d->leave_readers)
		kernel_hwrng_give_back_at_exit(&d->kh);
	else
		kernel_hwrng_stop(&d->kh);
	return r > 0 ? 0 : r;
}

void daemon_fini(struct daemon *d)
{
	for (size_t i = 0; i < d->n_retired; i++) {
		source_set_stop_within(d->retired[i], STOP_LIMIT_NS);
		source_set_free(d->retired[i]);
	}
	d->n_retired = 0;
	if (d->set && !source_set_stop_within(d->set, STOP_LIMIT_NS))
		log_debug("a source thread is still in its driver's read; the exit ends it");
	source_set_free(d->set);
	d->set = NULL;
	/*
	 * Every exit of a started daemon passes here: clean stop (given back already, at the end
	 * of daemon_run(); nothing left to do), fatal error, failed start.
	 */
	kernel_hwrng_stop(&d->kh);
	d->sink = sink_close(d->sink);
	closep(&d->sig_fd);
	closep(&d->wake_fd);
	closep(&d->timer_fd);
	if (d->buf)
		wipe(d->buf, d->buf_size);
	free(d->buf);
	d->buf = NULL;
	free(d->iov);
	d->iov = NULL;
	pool_free(d->pool);
	d->pool = NULL;
	conf_free(&d->conf);
}
