// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader thread of a source, the producer side of its ring: open the driver, read
 * into the ring's free slots, FIPS-test each block, publish the passed ones, wait
 * (cancellably) when the ring is full or the driver is dry, back off after failures, and
 * log each change of health once. Also what a driver calls from this thread (sleep,
 * counters).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "source_internal.h"
#include "util.h"

static struct timespec deadline_ts(uint64_t ns)
{
	uint64_t t = now_ns();
	struct timespec ts;

	t = ns > UINT64_MAX - t ? UINT64_MAX : t + ns;
	ts.tv_sec = (time_t)(t / NSEC_PER_SEC);
	ts.tv_nsec = (long)(t % NSEC_PER_SEC);
	return ts;
}

int source_sleep(struct source *src, uint64_t ns)
{
	struct timespec ts = deadline_ts(ns);
	bool stop;

	pthread_mutex_lock(&src->lock);
	atomic_store(&src->waiting, true);
	while (!atomic_load(&src->stop))
		if (pthread_cond_timedwait(&src->cond, &src->lock, &ts) == ETIMEDOUT)
			break;
	stop = atomic_load(&src->stop);
	atomic_store(&src->progress_ns, now_ns());
	atomic_store(&src->waiting, false);
	pthread_mutex_unlock(&src->lock);
	return stop ? -ECANCELED : 0;
}

bool source_stopping(const struct source *src)
{
	return atomic_load(&src->stop);
}

int source_counter(struct source *src, const char *name)
{
	int r = -ENOSPC;

	pthread_mutex_lock(&src->lock);
	for (size_t i = 0; i < src->st.n_counters; i++)
		if (strcmp(src->counter_names[i], name) == 0) {
			r = (int)i;
			goto out;
		}
	if (src->st.n_counters < MAX_COUNTERS) {
		size_t i = src->st.n_counters++;

		snprintf(src->counter_names[i], COUNTER_NAME_MAX, "%s", name);
		src->st.counter_names[i] = src->counter_names[i];
		src->st.counters[i] = 0;
		r = (int)i;
	}
out:
	pthread_mutex_unlock(&src->lock);
	return r;
}

void source_counter_add(struct source *src, int index, uint64_t n)
{
	pthread_mutex_lock(&src->lock);
	if (index >= 0 && (size_t)index < src->st.n_counters &&
	    (size_t)index < ARRAY_SIZE(src->st.counters))
		src->st.counters[index] += n;
	pthread_mutex_unlock(&src->lock);
}

void source_read_why(struct source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(src->read_why, sizeof(src->read_why), fmt, ap);
	va_end(ap);
}

/* ---- failure window ---- */

/*
 * False alarms: FIPS 140-2 fails a perfect source's block with p ~ 1/1250 = 8e-4 (measured
 * by rngtest on good sources). With 5 failures needed in the last 64 blocks, the chance
 * that a given block trips the window is about p * C(63,4) * p^4 = 595665 * p^5 ~ 2e-10;
 * three in a row, p^3 ~ 5e-10. Even at 400 blocks/s (1 MB/s) that is a false back-off
 * about once in 50 days, and a false alarm costs a 1 s back-off. A source that fails every
 * block trips after 3 blocks; one that fails 10% of its blocks after about 50.
 */
bool source_fail_window_add(struct source_fail_window *w, bool failed)
{
	w->history = (w->history << 1) | (failed ? 1u : 0u);
	w->consecutive = failed ? w->consecutive + 1 : 0;
	return w->consecutive >= SOURCE_FAIL_CONSECUTIVE ||
	       __builtin_popcountll(w->history) >= SOURCE_FAIL_WINDOW_MAX;
}

void source_fail_window_reset(struct source_fail_window *w)
{
	w->history = 0;
	w->consecutive = 0;
}

static void wake(struct source *src);

/*
 * After a block was published: wake the consumer only if it said it would sleep and this
 * ring now holds the blocks it waits for, or this block is the ring's only one and it
 * asked for that. Both sides use sequentially consistent
 * operations (wake_at, then ring; ring, then wake_at), so a block published while the
 * consumer looks at the rings is seen by one or the other.
 */
static void wake_consumer(struct source *src)
{
	size_t at;

	atomic_thread_fence(memory_order_seq_cst);
	if (!src->set) {
		wake(src);
		return;
	}
	at = atomic_load(&src->set->wake_at);
	if (at) {
		size_t held = ring_count(&src->ring);

		if ((held >= at || (held == 1 && atomic_load(&src->set->wake_on_first))) &&
		    atomic_exchange(&src->set->wake_at, 0))
			wake(src);
	}
}

static void wake(struct source *src)
{
	uint64_t one = 1;

	/* An eventfd write fails only when the counter would overflow: then it is set. */
	if (src->wake_fd >= 0 && write(src->wake_fd, &one, sizeof(one)) < 0) {
	}
}

static void check_none_left(struct source_set *set)
{
	bool any = false, all_ended = true;

	if (!set)
		return;
	pthread_mutex_lock(&set->lock);
	for (size_t i = 0; i < set->n; i++) {
		struct source *s = set->src[i];
		enum source_state st;
		int err;

		pthread_mutex_lock(&s->lock);
		st = s->st.state;
		err = s->st.last_error;
		pthread_mutex_unlock(&s->lock);
		if (st == SOURCE_STARTING || st == SOURCE_RUNNING)
			any = true;
		if (st != SOURCE_ABSENT && !(st == SOURCE_FAILED && err == ENODATA))
			all_ended = false;
	}
	if (!any && !set->none_left) {
		set->none_left = true;
		/* Every input used up (files read to the end) is a normal finish, no alert. */
		if (all_ended)
			log_full(LOG_NOTICE, NULL, "no-source-left", NULL,
				 "every source has reached its end");
		else
			log_full(LOG_ERR, NULL, "no-source-left", SOURCE_MESSAGE_NO_SOURCE,
				 "no entropy source is working");
	} else if (any) {
		set->none_left = false;
	}
	pthread_mutex_unlock(&set->lock);
}

/* Change state; logs once per change of health, never once per attempt. */
void source_change_state(struct source *src, enum source_state state, int err, const char *text)
{
	enum source_state old;

	/* Once the thread runs, only it changes the state: no lock to see that nothing does. */
	if (!text && src->st.state == state)
		return;

	pthread_mutex_lock(&src->lock);
	old = src->st.state;
	if (text) {
		src->st.last_error = err;
		snprintf(src->st.last_error_text, sizeof(src->st.last_error_text), "%s", text);
	}
	if (old != state) {
		src->st.state = state;
		src->st.state_since = realtime_ns();
	}
	pthread_mutex_unlock(&src->lock);
	if (old == state)
		return;
	wake(src);

	switch (state) {
	case SOURCE_RUNNING:
		if (src->in_trouble) {
			src->in_trouble = false;
			log_full(LOG_NOTICE, src->name, "source-recovered",
				 SOURCE_MESSAGE_RECOVERED, "recovered");
		} else {
			log_full(LOG_INFO, src->name, "source-running", NULL,
				 "running, first block passed the FIPS tests");
		}
		check_none_left(src->set);
		break;
	case SOURCE_BACKOFF:
		if (!src->in_trouble) {
			src->in_trouble = true;
			log_full(LOG_WARNING, src->name, "source-failed", SOURCE_MESSAGE_FAILED,
				 "failed: %s; retrying with back-off", text ? text : "unknown");
		}
		check_none_left(src->set);
		break;
	case SOURCE_WAITING:
		/* Gone while it worked is trouble (it recovers); never there yet is not. */
		if (old == SOURCE_RUNNING || old == SOURCE_STARTING)
			src->in_trouble = true;
		log_full(src->in_trouble ? LOG_WARNING : LOG_NOTICE, src->name, "source-waiting",
			 SOURCE_MESSAGE_WAITING, "waiting: %s; trying again every %llu ms",
			 text ? text : "unknown",
			 (unsigned long long)(SOURCE_WAIT_RETRY_NS / NSEC_PER_MSEC));
		break;
	case SOURCE_FAILED:
		src->in_trouble = true;
		if (err == ENODATA) /* a regular file read to its end */
			log_full(LOG_NOTICE, src->name, "source-ended", NULL, "%s",
				 text ? text : "end of file");
		else
			log_full(LOG_ERR, src->name, "source-failed", SOURCE_MESSAGE_FAILED,
				 "failed: %s; giving up until reload", text ? text : "unknown");
		check_none_left(src->set);
		break;
	default:
		break;
	}
}

/*
 * One driver read into iov[0..cnt) (cnt > 1 only for drivers with readv): retried on
 * EINTR, and after a wait (doubling from SOURCE_DRY_MIN_NS to SOURCE_DRY_MAX_NS, so that a
 * dry source never spins) when the driver has nothing now. Returns the bytes read (> 0),
 * -ECANCELED when stopping, or the driver's -errno. *time_ns gets the time the read
 * returned.
 */
static ssize_t read_driver(struct source *src, const struct iovec *iov, int cnt, uint64_t *time_ns)
{
	uint64_t dry = SOURCE_DRY_MIN_NS;
	size_t max = 0;

	for (int i = 0; i < cnt; i++)
		max += iov[i].iov_len;
	for (;;) {
		ssize_t r;

		if (atomic_load(&src->stop))
			return -ECANCELED;
		atomic_store(&src->progress_ns, now_ns());
		atomic_store(&src->in_read, true);
		r = cnt > 1 ? src->ops->readv(src, iov, cnt)
			    : src->ops->read(src, iov[0].iov_base, iov[0].iov_len);
		atomic_store(&src->in_read, false);
		*time_ns = now_ns();
		atomic_store(&src->progress_ns, *time_ns);
		if (r > 0) {
			if ((size_t)r > max)
				return -EIO; /* a driver bug; never trust the bytes */
			pthread_mutex_lock(&src->lock);
			src->st.bytes_read += (uint64_t)r;
			pthread_mutex_unlock(&src->lock);
			return r;
		}
		if (r == -EINTR)
			continue;
		if (r != 0 && r != -EAGAIN)
			return r;
		if (src->no_dry_wait) /* source_test_now(): nothing now is an answer */
			return -EAGAIN;
		if (source_sleep(src, dry) < 0)
			return -ECANCELED;
		dry = MIN(dry * 2, SOURCE_DRY_MAX_NS);
	}
}

/* Read exactly n bytes, unbuffered. 0, -ECANCELED when stopping, or the driver's -errno. */
static int read_exact(struct source *src, uint8_t *buf, size_t n)
{
	uint64_t t;

	for (size_t done = 0; done < n;) {
		struct iovec iov = { .iov_base = buf + done, .iov_len = n - done };
		ssize_t r = read_driver(src, &iov, 1, &t);

		if (r < 0)
			return (int)r;
		done += (size_t)r;
	}
	return 0;
}

ssize_t source_read_once(struct source *src, void *buf, size_t n)
{
	int r;

	if (src->thread_started)
		return -EBUSY;
	if (!src->opened)
		return -EBADF;
	if (n > SSIZE_MAX)
		return -EINVAL;
	r = read_exact(src, buf, n);
	return r < 0 ? r : (ssize_t)n;
}

/* The byte a block is made of when all its bytes are one, else -1. */
static int constant_block(const uint8_t *p, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (p[i] != p[0])
			return -1;
	return n ? p[0] : -1;
}

/*
 * Complete the block in the head slot (ring_write_slot()'s), reading straight into the
 * ring. A driver with readv reads on into the free slots after it, up to
 * SOURCE_READ_AHEAD bytes, so that one call serves several blocks; src->ahead counts the
 * bytes from the head slot's first on. *time_ns gets the time of the read that completed
 * the block: a read happens only while the head block is short, so that is the last one.
 */
static int fill_head(struct source *src, uint64_t *time_ns)
{
	while (src->ahead < FIPS_BLOCK_BYTES) {
		struct iovec iov[SOURCE_READ_AHEAD / FIPS_BLOCK_BYTES + 1];
		size_t off = src->ahead, room = 0;
		size_t max = MAX(src->read_max, FIPS_BLOCK_BYTES);
		int cnt = 0;
		struct block *b;
		ssize_t r;

		/*
		 * A source that computes its data (RDRAND) fills the whole readv before it
		 * returns: the first block of a stream must not wait for 256 KiB. So the
		 * limit starts at one block and doubles with each read. It is not reset when
		 * the source is opened again after a back-off: a file or FIFO that failed must
		 * be read on in large steps, or a long replayed stretch takes a back-off per
		 * block (tests/hostile.sh, repeated data read to its end).
		 */
		while (cnt < (int)ARRAY_SIZE(iov) && room < max &&
		       (b = ring_write_ahead(&src->ring, (size_t)cnt))) {
			iov[cnt].iov_base = b->data + off;
			iov[cnt].iov_len = MIN(sizeof(b->data) - off, max - room);
			room += iov[cnt++].iov_len;
			off = 0;
			if (!src->ops->readv)
				break;
		}
		r = read_driver(src, iov, cnt, &src->ahead_time_ns);
		if (r < 0)
			return (int)r;
		src->ahead += (size_t)r;
		/* The quality of what this read returned (an hwrng: of its backend, now). */
		src->ahead_quality = MIN(src->ahead_quality, source_quality(src));
		src->read_max = MIN(2 * max, (size_t)SOURCE_READ_AHEAD);
	}
	*time_ns = src->ahead_time_ns;
	return 0;
}

/*
 * The head block was used up (published, or failed and wiped): what was read beyond it
 * is now the next head block's. A failed block's slot stays the head, so the bytes ahead
 * move back one slot (rare: a good source fails one block in about 1250).
 */
static void head_done(struct source *src, bool published)
{
	size_t left = src->ahead - FIPS_BLOCK_BYTES;

	if (!published) {
		for (size_t i = 0; left > 0; i++) {
			struct block *to = ring_write_ahead(&src->ring, i);
			struct block *from = ring_write_ahead(&src->ring, i + 1);
			size_t k;

			if (!to || !from)
				break; /* cannot be: what was read lies in free slots */
			k = MIN(left, sizeof(from->data));
			memcpy(to->data, from->data, k);
			wipe(from->data, k);
			left -= k;
		}
	}
	src->ahead -= FIPS_BLOCK_BYTES;
	/* What is left was read by the same reads: it keeps their lowest quality. */
	if (src->ahead == 0)
		src->ahead_quality = UINT_MAX;
}

/* Drop what was read ahead (a re-open starts a new stream). */
static void drop_read_ahead(struct source *src)
{
	for (size_t i = 0; src->ahead > 0; i++) {
		struct block *b = ring_write_ahead(&src->ring, i);
		size_t k;

		if (!b)
			break; /* cannot be: what was read lies in free slots */
		k = MIN(src->ahead, sizeof(b->data));
		wipe(b->data, k);
		src->ahead -= k;
	}
	src->ahead = 0;
	src->ahead_quality = UINT_MAX;
}

/*
 * Whether an open that failed with r may work later without anyone touching rngd: the
 * hwrng device without a backend yet (ENODEV: its module binds later, or the backend is
 * being switched), a node whose group udev has not set yet (EACCES at boot), or a path
 * not created yet (a FIFO its feeder makes later). Anything else (no such device at all,
 * wrong CPU) cannot change while the daemon runs.
 */
bool source_may_appear(const struct source *src, int r)
{
	return (src->ops->hwrng_family && (r == -ENODEV || r == -EACCES)) ||
	       (src->ops->path_may_appear && r == -ENOENT);
}

int source_open(struct source *src, char *why, size_t len)
{
	int r = 0;

	why[0] = '\0';
	if (src->ops->init)
		r = src->ops->init(src, why, len);
	if (r < 0) {
		if (src->ops->fini)
			src->ops->fini(src);
		src->priv = NULL;
		if (!why[0])
			snprintf(why, len, "%s", strerror(-r));
		return r;
	}
	src->opened = true;
	return 0;
}

void source_close(struct source *src)
{
	drop_read_ahead(src);
	if (src->opened && src->ops->fini)
		src->ops->fini(src);
	src->opened = false;
	src->priv = NULL;
}

/*
 * The next slot to fill. When the ring is full, wait until the consumer has emptied half
 * of it (it signals then), so that a fast source costs one wake-up per several blocks.
 */
static struct block *wait_slot(struct source *src)
{
	struct block *b = ring_write_slot(&src->ring);
	size_t low = (src->ring.mask + 1) / 2;

	if (b)
		return b;
	/*
	 * waiting is stored and the ring checked under the lock that the consumer takes to
	 * check waiting after it released slots (released() in pool.c): either it sees
	 * waiting and signals, or this thread sees the released slots.
	 */
	pthread_mutex_lock(&src->lock);
	atomic_store(&src->waiting, true);
	while (!atomic_load(&src->stop) && ring_count(&src->ring) > low)
		pthread_cond_wait(&src->cond, &src->lock);
	b = ring_write_slot(&src->ring);
	atomic_store(&src->progress_ns, now_ns());
	atomic_store(&src->waiting, false);
	pthread_mutex_unlock(&src->lock);
	return atomic_load(&src->stop) ? NULL : b;
}

/* The reason for a read error r in why. r, or -ECANCELED as it is. */
static int read_failed(struct source *src, int r, char *why, size_t len)
{
	if (r == -ECANCELED)
		return r;
	if (r == -ENODATA)
		snprintf(why, len, "end of file");
	else
		snprintf(why, len, "read: %s", src->read_why[0] ? src->read_why : strerror(-r));
	src->read_why[0] = '\0';
	return r;
}

/* Seed the continuous test from the source. 0 or the read's error (why says it). */
static int seed_tests(struct source *src, char *why, size_t len)
{
	uint8_t seed[4];
	int r;

	/*
	 * The seed is read on its own, so that the blocks after it line up with the driver's
	 * reads: on a slow device (9.6 kB/s here) the first block then costs one read of
	 * read-size bytes instead of two.
	 */
	r = read_exact(src, seed, sizeof(seed));
	if (r == 0) {
		fips_init(&src->fips, seed);
		source_fail_window_reset(&src->window);
		src->blocks_since_open = 0;
	}
	wipe(seed, sizeof(seed));
	return r < 0 ? read_failed(src, r, why, len) : 0;
}

/*
 * Read, test and publish blocks until something goes wrong, or (max < SIZE_MAX, before
 * the thread runs) until max blocks were tested or the ring is full: then 0. Returns
 * -ECANCELED when stopping, -EBADMSG when too many blocks failed, or the driver's error;
 * why says what happened.
 */
static int test_blocks(struct source *src, size_t max, char *why, size_t len)
{
	int r;

	for (size_t n = 0; n < max; n++) {
		struct block *b = max == SIZE_MAX ? wait_slot(src) : ring_write_slot(&src->ring);
		unsigned int res, health;
		int constant;
		bool trip;

		if (!b)
			return max == SIZE_MAX ? -ECANCELED : 0;
		r = fill_head(src, &b->time_ns);
		if (r < 0)
			goto read_error; /* source_close() wipes what was read */
		b->quality = src->ahead_quality;
		/*
		 * No clock read here: the read's time marks progress, a test takes microseconds.
		 * Replayed or stuck data never reaches the FIPS tests (it could pass them).
		 */
		if (src->history) {
			pthread_mutex_lock(&src->history->lock);
			health = health_test_block(src->history->health, b->data,
						   sizeof(b->data));
			pthread_mutex_unlock(&src->history->lock);
		} else {
			health = 0; /* out of memory at start: FIPS alone, as before */
		}
		res = health ? 1 : fips_test_block(&src->fips, b->data);
		trip = source_fail_window_add(&src->window, res != 0);

		/* Stuck data repeats too: what it is matters more than that it was seen. */
		constant = (health & HEALTH_RCT) ? constant_block(b->data, sizeof(b->data)) : -1;
		pthread_mutex_lock(&src->lock);
		if (health & (HEALTH_RCT | HEALTH_APT))
			src->st.health_failures++;
		else if (health & HEALTH_REPEATED)
			src->st.blocks_replayed++;
		else
			src->st.blocks_tested++;
		if (res == 0) {
			src->st.blocks_passed++;
			src->st.last_passed_ns = b->time_ns;
		}
		if (trip)
			src->st.window_trips++;
		for (unsigned int i = 0; !health && i < FIPS_N_TESTS; i++)
			if (res & (1u << i))
				src->st.fips_failures[i]++;
		pthread_mutex_unlock(&src->lock);

		if (res == 0) {
			ring_publish(&src->ring);
			head_done(src, true);
			wake_consumer(src);
			source_change_state(src, SOURCE_RUNNING, 0, NULL);
		} else {
			wipe(b, sizeof(*b));
			head_done(src, false);
		}
		if (trip && constant >= 0) {
			snprintf(why, len, "constant output: every byte of a block is 0x%02x",
				 (unsigned int)constant);
			return -EBADMSG;
		}
		if (trip && health == HEALTH_REPEATED) {
			snprintf(why, len, "replayed data: block seen before");
			return -EBADMSG;
		}
		if (trip && health) {
			snprintf(why, len, "stuck or biased data: SP 800-90B %s test failed",
				 health & HEALTH_RCT ? "repetition count" : "adaptive proportion");
			return -EBADMSG;
		}
		if (trip) {
			snprintf(why, len,
				 "too many FIPS 140-2 failures (%d of the last %u blocks)",
				 __builtin_popcountll(src->window.history),
				 (unsigned int)MIN(src->blocks_since_open + 1, SOURCE_FAIL_WINDOW));
			return -EBADMSG;
		}
		/* Trust earned: a later failure starts the back-off over from its minimum. */
		if (++src->blocks_since_open == SOURCE_FAIL_WINDOW)
			src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	}
	return 0;

read_error:
	return read_failed(src, r, why, len);
}

/*
 * The reader thread's: seed the tests (unless source_test_now() did: they go on from there,
 * the stream in order), then test_blocks() until something goes wrong.
 */
static int read_blocks(struct source *src, char *why, size_t len)
{
	int r = src->tests_seeded ? 0 : seed_tests(src, why, len);

	src->tests_seeded = false;
	return r < 0 ? r : test_blocks(src, SIZE_MAX, why, len);
}

/*
 * The daemon's one history (health.h): every source's blocks are checked against every
 * source's, so that the same bytes through two sources (a file and a copy of it) are
 * credited once. Made at the first block of any source, kept for the life of the process
 * (at most 4.1 MiB, grown as blocks arrive, whatever the sources and reloads).
 */
static pthread_mutex_t history_lock = PTHREAD_MUTEX_INITIALIZER;
static struct source_history *history;

/* The daemon's history (made empty the first time), NULL: ENOMEM. */
static struct source_history *history_get(void)
{
	uint64_t key[2];
	struct source_history *h;

	pthread_mutex_lock(&history_lock);
	if (!history) {
		if (getrandom(key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
			key[0] = now_ns(); /* unkeyed, still fine for data nobody crafted */
			key[1] = 0;
		}
		h = calloc(1, sizeof(*h));
		if (h && !(h->health = health_new(key))) {
			free(h);
			h = NULL;
		}
		if (h)
			pthread_mutex_init(&h->lock, NULL);
		wipe(key, sizeof(key));
		history = h;
	}
	h = history;
	pthread_mutex_unlock(&history_lock);
	return h;
}

/* The daemon's history for src, once (the warning too). */
static void take_history(struct source *src)
{
	if (src->history_tried)
		return;
	src->history_tried = true;
	src->history = history_get();
	if (!src->history)
		log_full(LOG_WARNING, src->name, "no-history", NULL,
			 "out of memory: no repeated-block check, FIPS tests only");
}

int source_test_now(struct source *src, size_t max)
{
	char why[160];
	int r;

	if (src->thread_started || !src->opened)
		return -EBUSY;
	take_history(src);
	src->no_dry_wait = true;
	r = src->tests_seeded ? 0 : seed_tests(src, why, sizeof(why));
	src->tests_seeded = r == 0;
	if (r == 0)
		r = test_blocks(src, max, why, sizeof(why));
	src->no_dry_wait = false;
	return r;
}

static void reader_loop(struct source *src)
{
	char why[160];
	int r;

	src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	for (;;) {
		if (!src->opened) {
			r = source_open(src, why, sizeof(why));
			if (r < 0 && source_may_appear(src, r)) {
				source_change_state(src, SOURCE_WAITING, -r, why);
			} else if (r < 0) {
				/* Still in back-off; logged when it started. */
				source_change_state(src, SOURCE_BACKOFF, -r, why);
			} else {
				source_change_state(src, SOURCE_STARTING, 0, NULL);
			}
		}
		if (src->opened) {
			/*
			 * Made when data first comes: a source that only waits (no device, no
			 * backend) holds no history, and one that is there does not wait for
			 * the other's.
			 */
			take_history(src);
			r = read_blocks(src, why, sizeof(why));
			if (r == -ECANCELED)
				return;
			if (r == -ENODEV && src->ops->hwrng_family) {
				/*
				 * No backend any more (switched to none, module removed): the
				 * same fd reads again once one is current (kernel-interfaces.md
				 * §2.4, checked on 6.18), so keep it: no re-open, which would
				 * need the privileges dropped since (/dev/hwrng is 0600 root).
				 */
				drop_read_ahead(src);
				atomic_store(&src->waiting, true);
				source_change_state(src, SOURCE_WAITING, -r, why);
				if (source_sleep(src, SOURCE_WAIT_RETRY_NS) < 0)
					return;
				continue;
			}
			/*
			 * Bad data (FIPS, replayed, stuck) is no reason to close: the source stays
			 * open and unread during the back-off, so that a FIFO writer blocks instead
			 * of dying of SIGPIPE, and a file is not re-read from its start.
			 */
			if (r == -EBADMSG)
				drop_read_ahead(src);
			else
				source_close(src);
			if (r == -ENODATA) {
				atomic_store(&src->waiting, true); /* ending on purpose */
				source_change_state(src, SOURCE_FAILED, ENODATA, why);
				return;
			}
			atomic_store(&src->waiting, true); /* about to sleep */
			if (source_may_appear(src, r)) {
				/* The device went away (backend switched, module removed). */
				source_change_state(src, SOURCE_WAITING, -r, why);
			} else {
				source_change_state(src, SOURCE_BACKOFF, -r, why);
			}
		}
		if (src->st.state == SOURCE_WAITING) {
			if (source_sleep(src, SOURCE_WAIT_RETRY_NS) < 0)
				return;
			continue;
		}
		if (source_sleep(src, src->backoff_ns) < 0)
			return;
		src->backoff_ns = MIN(src->backoff_ns * 2, SOURCE_BACKOFF_MAX_NS);
	}
}

void *source_reader_main(void *arg)
{
	struct source *src = arg;
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SOURCE_INTERRUPT_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
	unblock_sync_signals();
	reader_loop(src);
	atomic_store(&src->waiting, true);
	atomic_store(&src->thread_done, true);
	wake(src);
	return NULL;
}

static void interrupt_handler(int sig)
{
	(void)sig;
}

static int handler_result;

static void install_once(void)
{
	/* No SA_RESTART: a blocked read() must return EINTR. */
	struct sigaction sa = { .sa_handler = interrupt_handler };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SOURCE_INTERRUPT_SIGNAL, &sa, NULL) < 0)
		handler_result = -errno;
}

int source_install_interrupt(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_once);
	return handler_result;
}
