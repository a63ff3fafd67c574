// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A set's lifetime, on the main thread: build it from the configuration, list it (-l),
 * open its sources, start one reader thread each (source_reader.c), stop and free them,
 * and the snapshots the main thread reads (stats, health).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpu_trust.h"
#include "log.h"
#include "source_internal.h"
#include "util.h"

/* A reader thread's stack (source_set_start()). */
#define READER_STACK_BYTES (256 * 1024)

/* Sets whose threads outlived their stop; the process exit ends them (main thread only). */
static struct source_set *abandoned_sets;

const char *source_state_name(enum source_state s)
{
	switch (s) {
	case SOURCE_ABSENT:
		return "absent";
	case SOURCE_STARTING:
		return "starting";
	case SOURCE_RUNNING:
		return "running";
	case SOURCE_BACKOFF:
		return "backoff";
	case SOURCE_FAILED:
		return "failed";
	case SOURCE_WAITING:
		return "waiting";
	}
	return "unknown";
}

struct source *source_new(const struct source_ops *ops, const char *name,
			  const struct conf_section *s)
{
	struct source *src = calloc(1, sizeof(*src));
	pthread_condattr_t ca;

	if (!src)
		return NULL;
	src->ops = ops;
	src->conf_quality = -1;
	atomic_init(&src->found_quality, -1);
	src->kept_quality = -1;
	src->ahead_quality = UINT_MAX;
	src->wake_fd = -1;
	pthread_mutex_init(&src->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&src->cond, &ca);
	pthread_condattr_destroy(&ca);
	src->st.state = SOURCE_ABSENT;
	src->st.state_since = realtime_ns();
	src->name = strdup(name);
	if (!src->name)
		goto fail;
	if (ops->cpu_rng) {
		struct cpu_trust t;

		/* An unreadable command line counts as none: the kernel's default, trust. */
		cpu_trust_get(&t);
		src->cpu_distrusted = t.distrusted;
		snprintf(src->cpu_trust_setting, sizeof(src->cpu_trust_setting), "%s", t.setting);
	}
	if (s && s->n_kv) {
		src->kv = calloc(s->n_kv, sizeof(*src->kv));
		if (!src->kv)
			goto fail;
		for (size_t i = 0; i < s->n_kv; i++) {
			src->kv[i].key = strdup(s->kv[i].key);
			src->kv[i].value = strdup(s->kv[i].value ? s->kv[i].value : "");
			src->n_kv++;
			if (!src->kv[i].key || !src->kv[i].value)
				goto fail;
		}
	}
	return src;
fail:
	source_free(src);
	return NULL;
}

void source_free(struct source *src)
{
	if (!src)
		return;
	if (src->opened && src->ops->fini)
		src->ops->fini(src);
	src->opened = false;
	ring_fini(&src->ring);
	for (size_t i = 0; i < src->n_kv; i++) {
		free(src->kv[i].key);
		free(src->kv[i].value);
	}
	free(src->kv);
	free(src->name);
	pthread_cond_destroy(&src->cond);
	pthread_mutex_destroy(&src->lock);
	free(src);
}

static int set_add(struct source_set *set, struct source *src)
{
	struct source **n = realloc(set->src, (set->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	set->src = n;
	set->src[set->n++] = src;
	src->set = set;
	return 0;
}

static int probe_one(struct source *src, char *why, size_t len);

/*
 * Whether a default-on driver yields to its defer_to driver here: that one probes available
 * (a probe is fast and has no side effects). The set's own source of that name is probed
 * when it has one (its configuration counts), else a fresh one.
 */
static bool deferred(struct source_set *set, const struct source_ops *ops)
{
	const struct source_ops *to = ops->defer_to ? source_find_driver(ops->defer_to) : NULL;
	struct source *src, *tmp = NULL;
	char why[160];
	bool r;

	if (!to)
		return false;
	src = source_set_find(set, to->name);
	if (!src && !(src = tmp = source_new(to, to->name, NULL)))
		return true; /* out of memory: leave the weaker source off */
	r = probe_one(src, why, sizeof(why)) == 0;
	source_free(tmp);
	return r;
}

int source_set_new(struct source_set **ret, const struct conf *conf, char *err, size_t errlen)
{
	struct source_set *set = calloc(1, sizeof(*set));
	const struct source *family = NULL;
	int r;

	if (!set) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	set->ring_blocks = SOURCE_RING_BLOCKS;
	pthread_mutex_init(&set->lock, NULL);
	/* Every section passed source_check_section() when conf took it (conf.h). */
	for (size_t i = 0; i < conf->n_sections; i++) {
		const struct conf_section *s = &conf->sections[i];
		const struct source_ops *ops = source_find_driver(s->name);
		struct source *src;

		if (!ops) { /* cannot be: conf refuses unknown sources */
			snprintf(err, errlen, "unknown source '%s'", s->name);
			r = -EINVAL;
			goto fail;
		}
		src = source_new(ops, s->name, s);
		if (!src || set_add(set, src) < 0) {
			source_free(src);
			snprintf(err, errlen, "out of memory");
			r = -ENOMEM;
			goto fail;
		}
		src->configured = true;
		src->enabled = source_opt_bool(src, "enabled");
		if (source_opt_is_set(src, "quality"))
			src->conf_quality = (int)source_opt_uint(src, "quality");
		if (src->enabled && src->ops->hwrng_family) {
			if (family) {
				snprintf(
					err, errlen,
					"sources '%s' and '%s' both read /dev/hwrng: enable only one",
					family->name, src->name);
				r = -EINVAL;
				goto fail;
			}
			family = src;
		}
	}
	/*
	 * Default-on drivers without a section. Only the first hwrng-family one is enabled,
	 * and none when a configured one is: there is one current hwrng backend.
	 */
	for (size_t i = 0; i < source_n_drivers; i++) {
		const struct source_ops *ops = source_drivers[i];
		struct source *src;

		if (!ops->default_on || ops->instances || source_set_find(set, ops->name))
			continue;
		src = source_new(ops, ops->name, NULL);
		if (!src || set_add(set, src) < 0) {
			source_free(src);
			snprintf(err, errlen, "out of memory");
			r = -ENOMEM;
			goto fail;
		}
		src->enabled = !(ops->hwrng_family && family) && !deferred(set, ops);
		if (src->enabled && ops->hwrng_family)
			family = src;
	}
	*ret = set;
	return 0;
fail:
	source_set_free(set);
	return r;
}

void source_set_free(struct source_set *set)
{
	if (!set)
		return;
	source_set_stop(set);
	/*
	 * A thread still blocked in its driver uses the set: leave it all to the exit, still
	 * reachable (so that leak checkers do not count it).
	 */
	if (set->abandoned) {
		set->next_abandoned = abandoned_sets;
		abandoned_sets = set;
		return;
	}
	for (size_t i = 0; i < set->n; i++)
		source_free(set->src[i]);
	free(set->src);
	pthread_mutex_destroy(&set->lock);
	free(set);
}

size_t source_set_size(const struct source_set *set)
{
	return set->n;
}

size_t source_set_count_state(const struct source_set *set, enum source_state state)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct source_stats st;

		source_get_stats(set->src[i], &st);
		n += st.state == state;
	}
	return n;
}

bool source_set_reads_path(const struct source_set *set, const char *path)
{
	struct stat out, st;

	if (stat(path, &out) < 0)
		return false;
	for (size_t i = 0; i < set->n; i++) {
		const struct source *src = set->src[i];
		const struct option_spec *o = src->ops->options;

		for (; src->enabled && o && o->key; o++) {
			const char *v = o->type == OPTION_PATH ? source_opt_str(src, o->key) : NULL;

			if (v && stat(v, &st) == 0 && st.st_dev == out.st_dev &&
			    st.st_ino == out.st_ino)
				return true;
		}
	}
	return false;
}

struct source *source_set_get(struct source_set *set, size_t i)
{
	return i < set->n ? set->src[i] : NULL;
}

struct source *source_set_find(struct source_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->src[i]->name, name) == 0)
			return set->src[i];
	return NULL;
}

static int probe_one(struct source *src, char *why, size_t len)
{
	int r;

	why[0] = '\0';
	if (src->ops->probe)
		return src->ops->probe(src, why, len);
	if (!src->ops->init)
		return 0;
	r = src->ops->init(src, why, len);
	if (src->ops->fini)
		src->ops->fini(src);
	src->priv = NULL;
	return r;
}

static void list_one(struct source *src, bool enabled, FILE *f, int *count)
{
	const char *defer;
	char why[160], trust[128] = "";
	int r = probe_one(src, why, sizeof(why));

	if (r < 0) {
		fprintf(f, "%s: not available: %s%s\n", src->name, why[0] ? why : strerror(-r),
			enabled ? "" : " (disabled)");
		return;
	}
	/* A default-on source left off by defer_to says so ("off by default where ..."). */
	defer = !enabled && !src->configured && src->ops->default_on ? src->ops->defer_to : NULL;
	if (src->cpu_distrusted)
		snprintf(trust, sizeof(trust), "%s on the kernel command line: %s, ",
			 src->cpu_trust_setting,
			 src->conf_quality >= 0 ? "configured quality wins"
						: "mixed in, not credited");
	fprintf(f, "%s: available, %s (%s%s%s%s%s%squality %u)\n", src->name,
		enabled ? "enabled" : "disabled", defer ? "off by default where " : "",
		defer ? defer : "", defer ? " is available, " : "", why, why[0] ? ", " : "", trust,
		source_quality(src));
	if (enabled)
		(*count)++;
}

int source_set_list(struct source_set *set, FILE *f)
{
	int count = 0;

	for (size_t i = 0; i < set->n; i++)
		list_one(set->src[i], set->src[i]->enabled, f, &count);
	/* Drivers the set does not hold: not configured and not on by default. */
	for (size_t i = 0; i < source_n_drivers; i++) {
		const struct source_ops *ops = source_drivers[i];
		struct source *tmp;

		if (ops->instances || source_set_find(set, ops->name))
			continue;
		tmp = source_new(ops, ops->name, NULL);
		if (!tmp)
			return -ENOMEM;
		list_one(tmp, false, f, &count);
		source_free(tmp);
	}
	return count;
}

static void set_error(struct source *src, int err, const char *text)
{
	pthread_mutex_lock(&src->lock);
	src->st.last_error = err;
	snprintf(src->st.last_error_text, sizeof(src->st.last_error_text), "%s", text);
	pthread_mutex_unlock(&src->lock);
}

/* Whether an open failed for a reason of this run (limits, permissions), not this machine. */
static bool failed_at_run_time(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == EACCES || err == EPERM;
}

void source_set_abort(struct source_set *set)
{
	if (set)
		set->start_failed = true;
}

bool source_start_failed(const struct source *src)
{
	return src->set && src->set->start_failed;
}

/* Whether src is enabled but was not opened; st gets its snapshot then. */
static bool not_opened(const struct source *src, struct source_stats *st)
{
	if (!src->enabled || src->opened)
		return false;
	source_get_stats(src, st);
	return true;
}

int source_set_start_error(const struct source_set *set)
{
	int run = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct source *src = set->src[i];
		struct source_stats st;

		if (!not_opened(src, &st) || st.state != SOURCE_ABSENT)
			continue;
		if (src->configured && st.last_error == EINVAL)
			return EINVAL;
		if (!run && failed_at_run_time(st.last_error))
			run = st.last_error;
	}
	return run;
}

int source_set_init(struct source_set *set)
{
	return source_set_open(set, SOURCE_OPEN_ALL);
}

/* Whether src is one that source_set_open(which) opens. */
static bool picked(const struct source *src, enum source_open which)
{
	return which == SOURCE_OPEN_ALL || src->ops->cpu_rng == (which == SOURCE_OPEN_CPU);
}

bool source_set_other_configured(const struct source_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->src[i]->enabled && set->src[i]->configured &&
		    picked(set->src[i], SOURCE_OPEN_OTHER))
			return true;
	return false;
}

int source_set_open(struct source_set *set, enum source_open which)
{
	int usable = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];
		char why[160];
		bool waits;
		int r;

		if (!src->enabled || src->opened || !picked(src, which))
			continue;
		r = source_open(src, why, sizeof(why));
		waits = r < 0 && source_may_appear(src, r);
		/*
		 * The ring after the open, for a source that opened or may still: one this
		 * machine lacks (via on AMD) leaves no freed ring in the daemon's heap.
		 */
		if ((r == 0 || waits) && !src->ring.slots) {
			int e = ring_init(&src->ring, set->ring_blocks);

			if (e < 0) {
				if (r == 0)
					source_close(src);
				return e;
			}
		}
		if (waits) {
			/* Its reader thread keeps trying: count it as usable. */
			source_change_state(src, SOURCE_WAITING, -r, why);
			usable++;
			continue;
		}
		if (r < 0) {
			/* No reader will fill it: give its ring back (opened again, it gets one). */
			ring_fini(&src->ring);
			set_error(src, -r, why);
			/*
			 * A default source this machine lacks (via on AMD) is no news; one that
			 * failed for a reason of this run (EMFILE, EACCES, ENOMEM) is.
			 */
			log_full(src->configured || failed_at_run_time(-r) ? LOG_WARNING
									  : LOG_DEBUG,
				 src->name, "source-absent", NULL, "not available: %s", why);
			continue;
		}
		if (src->cpu_distrusted && src->conf_quality < 0)
			log_full(LOG_NOTICE, src->name, "cpu-distrusted", NULL,
				 "%s on the kernel command line: mixed in, credited 0 "
				 "(quality = N in [source %s] overrides)",
				 src->cpu_trust_setting, src->name);
		else if (src->cpu_distrusted)
			log_full(LOG_NOTICE, src->name, "cpu-distrusted", NULL,
				 "%s on the kernel command line, but quality = %d is configured: "
				 "credited at that",
				 src->cpu_trust_setting, src->conf_quality);
		pthread_mutex_lock(&src->lock);
		src->st.state = SOURCE_STARTING;
		src->st.state_since = realtime_ns();
		pthread_mutex_unlock(&src->lock);
		usable++;
	}
	return usable;
}

void source_set_ring_blocks(struct source_set *set, size_t blocks)
{
	set->ring_blocks = blocks ? blocks : 1;
}

size_t source_set_test_cpu_now(struct source_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];
		size_t held = ring_count(&src->ring);

		if (!src->opened || src->thread_started || !src->ops->cpu_rng ||
		    source_quality(src) == 0)
			continue;
		if (source_test_now(src, 1) == 0)
			n += ring_count(&src->ring) - held;
	}
	return n;
}

int source_set_start(struct source_set *set, int wake_fd)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r = source_install_interrupt();

	if (r < 0)
		return r;
	/*
	 * A reader's deepest path (a log line's formatting) needs a few KiB: 256 KiB instead
	 * of glibc's 8 MiB of address space each (musl's default is 128 KiB). Only the pages
	 * touched count in the RSS either way.
	 */
	r = -pthread_attr_init(&attr);
	if (r < 0)
		return r;
	r = -pthread_attr_setstacksize(&attr, READER_STACK_BYTES);
	set->stop_signaled_ns = 0;
	/*
	 * The threads inherit a mask with everything blocked; they unblock their interrupt
	 * signal and the synchronous ones (source_reader_main()).
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* The open sources first, then the waiting ones: the first block is not held up. */
	for (int pass = 0; pass < 2 && r >= 0; pass++) {
		for (size_t i = 0; i < set->n; i++) {
			struct source *src = set->src[i];

			/* thread_started first: a running thread may close its source. */
			if (src->thread_started ||
			    (pass == 0 ? !src->opened : src->st.state != SOURCE_WAITING))
				continue;
			src->wake_fd = wake_fd;
			atomic_store(&src->stop, false);
			atomic_store(&src->thread_done, false);
			atomic_store(&src->progress_ns, now_ns());
			r = -pthread_create(&src->thread, &attr, source_reader_main, src);
			if (r < 0)
				break;
			src->thread_started = true;
			set->started = true;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r < 0)
		source_set_stop(set);
	return r;
}

/* How often a stop signals a reader that has not ended yet. */
#define SIGNAL_AGAIN_NS (5 * NSEC_PER_MSEC)
/* How long a stop with a time limit waits for a reader inside its driver's read. */
#define FIRST_LOOK_NS (50 * NSEC_PER_USEC)

/*
 * Interrupt the read of every reader thread that has not ended yet, after ask_stop(). A
 * reader parked in a wait of the framework (waiting, not in its driver's read) is left
 * alone: ask_stop()'s broadcast ends that wait, and the reader loads stop before its next
 * read (stop is stored before waiting is loaded here; the reader clears waiting before it
 * loads stop; all sequentially consistent). A signal would cost it a wake-up and this
 * thread pthread_kill()'s four system calls. The 5 ms re-signal of a stop is the backstop.
 */
static void signal_readers(const struct source_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if (!src->thread_started || atomic_load(&src->thread_done) ||
		    (atomic_load(&src->waiting) && !atomic_load(&src->in_read)))
			continue;
		pthread_kill(src->thread, SOURCE_INTERRUPT_SIGNAL);
	}
}

/*
 * Set every reader's stop and wake its framework waits. The broadcast comes after the
 * unlock (allowed: the waiter looks at stop under the lock), so that the woken reader does
 * not block at once on the mutex still held here.
 */
static void ask_stop(struct source_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if (!src->thread_started)
			continue;
		pthread_mutex_lock(&src->lock);
		atomic_store(&src->stop, true);
		pthread_mutex_unlock(&src->lock);
		pthread_cond_broadcast(&src->cond);
	}
}

/* Join the readers that have ended; signal the others when again. Whether none is left. */
static bool join_ended(struct source_set *set, bool again)
{
	bool all = true;

	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if (!src->thread_started)
			continue;
		if (atomic_load(&src->thread_done)) {
			pthread_join(src->thread, NULL);
			src->thread_started = false;
			atomic_store(&src->waiting, false);
		} else {
			all = false;
			if (again)
				pthread_kill(src->thread, SOURCE_INTERRUPT_SIGNAL);
		}
	}
	if (all)
		set->started = false;
	return all;
}

bool source_set_reap(struct source_set *set)
{
	return !set || !set->started || join_ended(set, true);
}

/*
 * Wait up to 50 us for a reader to end: on the eventfd every reader writes as it ends
 * (source_set_start()), so that an ending thread wakes the caller at once instead of at
 * the end of a sleep that a loaded machine stretches to milliseconds; a plain sleep without
 * one. Whatever the eventfd held is consumed: *took says so, to give it back (give_back()).
 */
static void wait_for_reader(const struct source_set *set, bool *took)
{
	const struct timespec tick = { .tv_sec = 0, .tv_nsec = 50000 };
	struct pollfd p = { .fd = -1, .events = POLLIN };
	uint64_t v;

	for (size_t i = 0; i < set->n && p.fd < 0; i++)
		if (set->src[i]->thread_started)
			p.fd = set->src[i]->wake_fd;
	if (p.fd < 0) {
		nanosleep(&tick, NULL);
		return;
	}
	if (ppoll(&p, 1, &tick, NULL) > 0 && read(p.fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		*took = true;
}

/* Put back a wake-up wait_for_reader() consumed: it may have been another set's (a reload). */
static void give_back(const struct source_set *set, bool took)
{
	const uint64_t one = 1;

	for (size_t i = 0; took && i < set->n; i++)
		if (set->src[i]->wake_fd >= 0) {
			if (write(set->src[i]->wake_fd, &one, sizeof(one)) < 0) {
				/* only when the counter would overflow: then it is set */
			}
			return;
		}
}

bool source_set_retire(struct source_set *set, uint64_t limit_ns)
{
	uint64_t deadline = now_ns() + limit_ns, next_signal = now_ns() + SIGNAL_AGAIN_NS;
	bool took = false;

	if (!set || !set->started)
		return true;
	ask_stop(set);
	/* As in source_set_stop_within(): look at each wake-up, signal again every 5 ms. */
	for (;;) {
		bool all = true;

		for (size_t i = 0; i < set->n; i++)
			if (set->src[i]->thread_started && !atomic_load(&set->src[i]->thread_done))
				all = false;
		if (all || now_ns() >= deadline)
			break;
		if (now_ns() >= next_signal) {
			signal_readers(set);
			next_signal = now_ns() + SIGNAL_AGAIN_NS;
		}
		wait_for_reader(set, &took);
	}
	give_back(set, took);
	return source_set_reap(set);
}

bool source_set_stop_within(struct source_set *set, uint64_t limit_ns)
{
	uint64_t deadline = limit_ns == UINT64_MAX ? UINT64_MAX : now_ns() + limit_ns;
	uint64_t next_signal, first_look_end;
	bool all_done = false, took = false;

	if (!set || !set->started)
		return !set || !set->abandoned;
	if (set->stop_signaled_ns) /* source_set_interrupt() signalled them already */
		ask_stop(set);
	else
		source_set_interrupt(set);
	next_signal = set->stop_signaled_ns + SIGNAL_AGAIN_NS;
	first_look_end = set->stop_signaled_ns + FIRST_LOOK_NS;
	/*
	 * A thread may be blocked in read(), or about to enter it when the signal comes:
	 * look at each wake-up (at least every 50 us), signal again every 5 ms until it is
	 * out. With a time limit, a thread still in its driver's read after the first look
	 * (50 us after the first signal) is not waited for: that read did not end at the
	 * signal, so it waits killably and only the exit ends it.
	 */
	while (!all_done && now_ns() < deadline) {
		bool signal_now = now_ns() >= next_signal;

		all_done = true;
		for (size_t i = 0; i < set->n; i++) {
			struct source *src = set->src[i];

			if (!src->thread_started || atomic_load(&src->thread_done))
				continue;
			if (limit_ns != UINT64_MAX && atomic_load(&src->in_read) &&
			    now_ns() >= first_look_end)
				continue;
			all_done = false;
			if (signal_now)
				pthread_kill(src->thread, SOURCE_INTERRUPT_SIGNAL);
		}
		if (signal_now)
			next_signal = now_ns() + SIGNAL_AGAIN_NS;
		if (!all_done)
			wait_for_reader(set, &took);
	}
	give_back(set, took);
	if (join_ended(set, false))
		return !set->abandoned;
	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if (!src->thread_started)
			continue;
		/*
		 * Still inside the driver: virtio-rng, for one, waits for the host killably,
		 * so only the process's exit ends that read (kernel-interfaces.md §3). Let it
		 * go; the set stays allocated for it.
		 */
		pthread_detach(src->thread);
		set->abandoned = true;
		src->thread_started = false;
		atomic_store(&src->waiting, false);
	}
	set->started = false;
	return false;
}

void source_set_interrupt(struct source_set *set)
{
	if (!set || !set->started)
		return;
	ask_stop(set);
	signal_readers(set);
	set->stop_signaled_ns = now_ns();
}

void source_set_stop(struct source_set *set)
{
	source_set_stop_within(set, UINT64_MAX);
}

static const char *kv_value(const struct source *src, const char *key)
{
	for (size_t i = 0; i < src->n_kv; i++)
		if (strcmp(src->kv[i].key, key) == 0)
			return src->kv[i].value;
	return NULL;
}

/* The first key of a that b lacks or sets otherwise, or NULL. */
static const char *key_differs(const struct source *a, const struct source *b)
{
	for (size_t i = 0; i < a->n_kv; i++) {
		const char *v = kv_value(b, a->kv[i].key);

		if (!v || strcmp(v, a->kv[i].value) != 0)
			return a->kv[i].key;
	}
	return NULL;
}

bool source_set_differs(const struct source_set *a, const struct source_set *b, char *what,
			size_t len)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct source *nb = b->src[i];
		const struct source *na = source_set_find((struct source_set *)a, nb->name);
		const char *key;

		if (!na) {
			snprintf(what, len, "source '%s' (added)", nb->name);
			return true;
		}
		if (na->enabled != nb->enabled) {
			snprintf(what, len, "source '%s' key 'enabled'", nb->name);
			return true;
		}
		key = key_differs(na, nb);
		if (!key)
			key = key_differs(nb, na);
		if (key) {
			snprintf(what, len, "source '%s' key '%s'", nb->name, key);
			return true;
		}
	}
	for (size_t i = 0; i < a->n; i++)
		if (!source_set_find((struct source_set *)b, a->src[i]->name)) {
			snprintf(what, len, "source '%s' (removed)", a->src[i]->name);
			return true;
		}
	return false;
}

const struct source *source_set_denied(const struct source_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct source_stats st;

		if (not_opened(set->src[i], &st) &&
		    (st.last_error == EACCES || st.last_error == EPERM))
			return set->src[i];
	}
	return NULL;
}

unsigned int source_quality(const struct source *src)
{
	int found = atomic_load(&src->found_quality);

	if (src->conf_quality >= 0)
		return (unsigned int)src->conf_quality;
	if (src->cpu_distrusted)
		return 0;
	if (found >= 0)
		return (unsigned int)found;
	return src->ops->quality;
}

void source_keep_quality(struct source *src, const char *backend, int quality)
{
	pthread_mutex_lock(&src->lock);
	if (!backend || quality < 0) {
		src->kept_quality = -1;
		src->kept_backend[0] = '\0';
	} else {
		src->kept_quality = (int)MIN((unsigned int)quality, 1024u);
		snprintf(src->kept_backend, sizeof(src->kept_backend), "%s", backend);
	}
	pthread_mutex_unlock(&src->lock);
}

bool source_kept_quality(struct source *src, const char *backend, unsigned int *quality)
{
	bool kept;

	pthread_mutex_lock(&src->lock);
	kept = src->kept_quality >= 0 && strcmp(src->kept_backend, backend) == 0;
	if (kept)
		*quality = (unsigned int)src->kept_quality;
	pthread_mutex_unlock(&src->lock);
	return kept;
}

void source_account_fed(struct source *src, size_t bytes, uint64_t bits)
{
	pthread_mutex_lock(&src->lock);
	src->st.bytes_fed += bytes;
	src->st.bits_credited += bits;
	pthread_mutex_unlock(&src->lock);
}

void source_get_stats(const struct source *src, struct source_stats *out)
{
	struct source *s = (struct source *)src;

	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}

bool source_is_healthy(const struct source *src, uint64_t now, uint64_t limit_ns)
{
	uint64_t t;

	if (!src->thread_started || atomic_load(&src->thread_done) || atomic_load(&src->waiting))
		return true;
	t = atomic_load(&src->progress_ns);
	return now <= t || now - t <= limit_ns;
}
