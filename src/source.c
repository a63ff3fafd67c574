// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source framework: the driver table, option validation, and the runtime (one reader
 * thread per usable source, FIPS gate, failure policy, the consumer side of the rings).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ring.h"
#include "source.h"
#include "util.h"

extern const struct source_ops source_hwrng, source_virtio, source_caam, source_via, source_file;

/*
 * The table of drivers, in the order -l lists them. A driver compiled out for this
 * architecture stays in the table as a stub that says so.
 */
#ifndef SOURCE_TEST_DRIVERS /* tests/test_source_rules.c includes this file with its own */
const struct source_ops *const source_drivers[] = {
	&source_hwrng, &source_virtio, &source_caam, &source_via, &source_file,
};
const size_t source_n_drivers = ARRAY_SIZE(source_drivers);
#endif

#define MAX_COUNTERS 8
#define COUNTER_NAME_MAX 32
#define INSTANCE_MAX 32

/* Keys every source accepts; handled here, not by the drivers. */
static const struct option_spec common_options[] = {
	{ .key = "enabled", .type = OPTION_BOOL, .def = "yes", .help = "use this source (yes/no)" },
	{ .key = "quality",
	  .type = OPTION_UINT,
	  .min = 0,
	  .max = 1024,
	  .help = "bits of entropy credited per 1024 bits read (default: the source's own)" },
	{ 0 },
};

struct source_kv {
	char *key;
	char *value;
};

struct source {
	struct source_set *set; /* NULL for a temporary source (checks) */
	const struct source_ops *ops;
	char *name;
	struct source_kv *kv;
	size_t n_kv;
	bool configured; /* has a [source] section */
	bool enabled;
	int conf_quality;	   /* -1 when not configured */
	_Atomic int found_quality; /* -1 until the driver sets it */
	void *priv;
	bool opened; /* init succeeded, fini not called yet */

	struct ring ring;
	size_t take_off; /* consumer: bytes taken from the oldest block */

	/* Owned by the reader thread while it runs. */
	struct fips_ctx fips;
	struct source_fail_window window;
	uint64_t backoff_ns;
	uint64_t blocks_since_open;
	bool in_trouble; /* "source-failed" logged, "source-recovered" not yet */

	pthread_t thread;
	bool thread_started;
	_Atomic bool thread_done;
	_Atomic bool stop;
	int wake_fd;
	_Atomic bool waiting;	      /* in a deliberate wait of the framework */
	_Atomic bool in_read;	      /* inside the driver's read */
	_Atomic uint64_t progress_ns; /* when the thread last started or finished a step */

	/* Reader thread: bytes read into the free slots from the head on (see fill_head()). */
	size_t ahead;
	uint64_t ahead_time_ns; /* when the last of them were read */

	pthread_mutex_t lock; /* guards st, counter_names and the waits */
	pthread_cond_t cond;  /* CLOCK_MONOTONIC: ring space, stop */
	struct source_stats st;
	char counter_names[MAX_COUNTERS][COUNTER_NAME_MAX];
};

struct source_set {
	struct source **src;
	size_t n;
	bool started;
	size_t ring_blocks;
	bool abandoned; /* a thread outlived source_set_stop_within() */
	struct source_set *next_abandoned;
	/* The consumer is about to sleep: the next published block must wake it. */
	_Atomic size_t wake_at;	    /* 0: the consumer is busy; else the blocks it waits for */
	_Atomic bool wake_on_first; /* ... or the first block in an empty ring */
	pthread_mutex_t lock;	    /* for none_left */
	bool none_left;		    /* "no-source-left" logged */
};

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

/* ---- drivers and options ---- */

static size_t type_len(const char *name)
{
	const char *colon = strchr(name, ':');

	return colon ? (size_t)(colon - name) : strlen(name);
}

static const struct source_ops *find_driver_in(const struct source_ops *const *drivers, size_t n,
					       const char *name)
{
	size_t len;

	if (!name)
		return NULL;
	len = type_len(name);
	for (size_t i = 0; i < n; i++)
		if (strlen(drivers[i]->name) == len && strncmp(drivers[i]->name, name, len) == 0)
			return drivers[i];
	return NULL;
}

const struct source_ops *source_find_driver(const char *name)
{
	return find_driver_in(source_drivers, source_n_drivers, name);
}

static const struct option_spec *find_option(const struct source_ops *ops, const char *key)
{
	const struct option_spec *o = option_find(ops->options, key);

	return o ? o : option_find(common_options, key);
}

int source_check_drivers(const struct source_ops *const *drivers, size_t n, char *why, size_t len)
{
	char owner[64];
	int r = option_check_table("source 'common'", common_options, NULL, why, len);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		const struct source_ops *d = drivers[i];

		if (!d || !d->name || !*d->name || strchr(d->name, ':')) {
			snprintf(why, len, "driver %zu has no valid name", i);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(drivers[j]->name, d->name) == 0) {
				snprintf(why, len, "source '%s' twice", d->name);
				return -EINVAL;
			}
		if (!d->read) {
			snprintf(why, len, "source '%s' has no read", d->name);
			return -EINVAL;
		}
		if (d->quality > 1024) {
			snprintf(why, len, "source '%s': quality %u > 1024", d->name, d->quality);
			return -EINVAL;
		}
		snprintf(owner, sizeof(owner), "source '%s'", d->name);
		r = option_check_table(owner, d->options, common_options, why, len);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool valid_instance(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > INSTANCE_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return false;
	return true;
}

static void source_free(struct source *src);
static struct source *source_new(const struct source_ops *ops, const char *name,
				 const struct conf_section *s);

int source_check_section(const struct conf_section *s, const struct conf_kv **bad, char *why,
			 size_t len)
{
	const struct source_ops *ops;
	const char *colon;
	struct source *tmp;
	char hint[96];
	int r;

	*bad = NULL;
	if (!s->name || !*s->name) {
		snprintf(why, len, "source without a name");
		return -EINVAL;
	}
	ops = source_find_driver(s->name);
	if (!ops) {
		snprintf(why, len, "unknown source '%.*s'", (int)type_len(s->name), s->name);
		return -EINVAL;
	}
	colon = strchr(s->name, ':');
	if (ops->instances && !colon) {
		snprintf(why, len, "source '%s' needs an instance name: [source %s:NAME]",
			 ops->name, ops->name);
		return -EINVAL;
	}
	if (!ops->instances && colon) {
		snprintf(why, len, "source '%s' takes no instance name", ops->name);
		return -EINVAL;
	}
	if (colon && !valid_instance(colon + 1)) {
		snprintf(why, len,
			 "bad instance name '%s': 1 to %d of the characters A-Z a-z 0-9 _ . -",
			 colon + 1, INSTANCE_MAX);
		return -EINVAL;
	}
	snprintf(hint, sizeof(hint), " for source '%s' (see -O %s)", ops->name, ops->name);
	r = option_check_section(s, ops->options, common_options, hint, bad, why, len);
	if (r < 0)
		return r;
	if (!ops->check)
		return 0;
	tmp = source_new(ops, s->name, s);
	if (!tmp) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	why[0] = '\0';
	r = ops->check(tmp, why, len);
	source_free(tmp);
	if (r < 0) {
		if (!why[0])
			snprintf(why, len, "invalid configuration");
		return -EINVAL;
	}
	return 0;
}

int source_print_options(const char *name, FILE *f)
{
	const struct source_ops *ops = source_find_driver(name);

	if (!ops)
		return -ENOENT;
	fprintf(f, "%s%s: %s\n", ops->name, ops->instances ? ":NAME" : "",
		ops->help ? ops->help : "");
	fprintf(f, "  default quality %u/1024%s%s\n", ops->quality,
		ops->default_on ? ", on by default where available" : "",
		ops->hwrng_family ? ", reads /dev/hwrng" : "");
	for (const struct option_spec *o = ops->options; o && o->key; o++)
		option_print(o, f);
	for (const struct option_spec *o = common_options; o->key; o++)
		option_print(o, f);
	return 0;
}

/* ---- for drivers ---- */

const char *source_name(const struct source *src)
{
	return src->name;
}

const char *source_opt_str(const struct source *src, const char *key)
{
	const struct option_spec *o;

	for (size_t i = 0; i < src->n_kv; i++)
		if (strcmp(src->kv[i].key, key) == 0)
			return src->kv[i].value;
	o = find_option(src->ops, key);
	return o ? o->def : NULL;
}

uint64_t source_opt_uint(const struct source *src, const char *key)
{
	const char *v = source_opt_str(src, key);
	uint64_t u = 0;

	if (v && parse_uint(v, 0, UINT64_MAX, &u) < 0)
		u = 0;
	return u;
}

bool source_opt_bool(const struct source *src, const char *key)
{
	const char *v = source_opt_str(src, key);
	bool b = false;

	if (v && parse_bool(v, &b) < 0)
		b = false;
	return b;
}

bool source_opt_is_set(const struct source *src, const char *key)
{
	for (size_t i = 0; i < src->n_kv; i++)
		if (strcmp(src->kv[i].key, key) == 0)
			return true;
	return false;
}

void *source_priv(const struct source *src)
{
	return src->priv;
}

void source_set_priv(struct source *src, void *priv)
{
	src->priv = priv;
}

void source_set_quality(struct source *src, unsigned int quality)
{
	atomic_store(&src->found_quality, (int)MIN(quality, 1024u));
}

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

/* ---- sources and sets ---- */

static struct source *source_new(const struct source_ops *ops, const char *name,
				 const struct conf_section *s)
{
	struct source *src = calloc(1, sizeof(*src));
	pthread_condattr_t ca;

	if (!src)
		return NULL;
	src->ops = ops;
	src->conf_quality = -1;
	atomic_init(&src->found_quality, -1);
	src->wake_fd = -1;
	src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
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

static void source_free(struct source *src)
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
		src->enabled = !(ops->hwrng_family && family);
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
	char why[160];
	int r = probe_one(src, why, sizeof(why));

	if (r < 0) {
		fprintf(f, "%s: not available: %s%s\n", src->name, why[0] ? why : strerror(-r),
			enabled ? "" : " (disabled)");
		return;
	}
	fprintf(f, "%s: available, %s (%s%squality %u)\n", src->name,
		enabled ? "enabled" : "disabled", why, why[0] ? ", " : "", source_quality(src));
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

/*
 * Whether an open that failed with r may work later without anyone touching rngd: the
 * hwrng device without a backend yet (ENODEV: its module binds later, or the backend is
 * being switched), or a node whose group udev has not set yet (EACCES at boot). Anything
 * else (no such device at all, wrong CPU) cannot change while the daemon runs.
 */
static bool may_appear(const struct source *src, int r)
{
	return src->ops->hwrng_family && (r == -ENODEV || r == -EACCES);
}

static int open_source(struct source *src, char *why, size_t len)
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

static void drop_read_ahead(struct source *src);

static void close_source(struct source *src)
{
	drop_read_ahead(src);
	if (src->opened && src->ops->fini)
		src->ops->fini(src);
	src->opened = false;
	src->priv = NULL;
}

int source_set_init(struct source_set *set)
{
	int usable = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];
		char why[160];
		int r;

		if (!src->enabled || src->opened)
			continue;
		if (!src->ring.slots) {
			r = ring_init(&src->ring, set->ring_blocks);
			if (r < 0)
				return r;
		}
		r = open_source(src, why, sizeof(why));
		if (r < 0 && may_appear(src, r)) {
			/* Its reader thread keeps trying: count it as usable. */
			set_error(src, -r, why);
			pthread_mutex_lock(&src->lock);
			src->st.state = SOURCE_WAITING;
			src->st.state_since = realtime_ns();
			pthread_mutex_unlock(&src->lock);
			log_full(LOG_NOTICE, src->name, "source-waiting", SOURCE_MESSAGE_WAITING,
				 "waiting: %s; trying again every %llu ms", why,
				 (unsigned long long)(SOURCE_WAIT_RETRY_NS / NSEC_PER_MSEC));
			usable++;
			continue;
		}
		if (r < 0) {
			set_error(src, -r, why);
			/* A default source this machine lacks (via on AMD) is no news. */
			log_full(src->configured ? LOG_WARNING : LOG_DEBUG, src->name,
				 "source-absent", NULL, "not available: %s", why);
			continue;
		}
		pthread_mutex_lock(&src->lock);
		src->st.state = SOURCE_STARTING;
		src->st.state_since = realtime_ns();
		pthread_mutex_unlock(&src->lock);
		usable++;
	}
	return usable;
}

/* ---- reader threads ---- */

void source_set_ring_blocks(struct source_set *set, size_t blocks)
{
	set->ring_blocks = blocks ? blocks : 1;
}

size_t source_set_held(struct source_set *set)
{
	size_t most = 0;

	for (size_t i = 0; i < set->n; i++)
		if (set->src[i]->ring.slots)
			most = MAX(most, ring_count(&set->src[i]->ring));
	return most;
}

bool source_set_prepare_wait(struct source_set *set, size_t wake_at, bool on_first)
{
	wake_at = MAX(wake_at, 1);
	atomic_store(&set->wake_on_first, on_first);
	atomic_store(&set->wake_at, wake_at);
	atomic_thread_fence(memory_order_seq_cst);
	if (source_set_held(set) >= wake_at) {
		atomic_store(&set->wake_at, 0);
		return false;
	}
	return true;
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
static void set_state(struct source *src, enum source_state state, int err, const char *text)
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
static ssize_t read_some(struct source *src, const struct iovec *iov, int cnt, uint64_t *time_ns)
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
		if (source_sleep(src, dry) < 0)
			return -ECANCELED;
		dry = MIN(dry * 2, SOURCE_DRY_MAX_NS);
	}
}

/* Read exactly n bytes, unbuffered. 0, -ECANCELED when stopping, or the driver's -errno. */
static int fill(struct source *src, uint8_t *buf, size_t n)
{
	uint64_t t;

	for (size_t done = 0; done < n;) {
		struct iovec iov = { .iov_base = buf + done, .iov_len = n - done };
		ssize_t r = read_some(src, &iov, 1, &t);

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
	/* A source stopped before keeps its stop flag; no thread runs now. */
	atomic_store(&src->stop, false);
	r = fill(src, buf, n);
	return r < 0 ? r : (ssize_t)n;
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
		int cnt = 0;
		struct block *b;
		ssize_t r;

		while (cnt < (int)ARRAY_SIZE(iov) && room < SOURCE_READ_AHEAD &&
		       (b = ring_write_ahead(&src->ring, (size_t)cnt))) {
			iov[cnt].iov_base = b->data + off;
			iov[cnt].iov_len = MIN(sizeof(b->data) - off, SOURCE_READ_AHEAD - room);
			room += iov[cnt++].iov_len;
			off = 0;
			if (!src->ops->readv)
				break;
		}
		r = read_some(src, iov, cnt, &src->ahead_time_ns);
		if (r < 0)
			return (int)r;
		src->ahead += (size_t)r;
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

/*
 * Seed the continuous test, then read, test and publish blocks until something goes
 * wrong. Returns -ECANCELED when stopping, -EBADMSG when too many blocks failed, or the
 * driver's error; why says what happened.
 */
static int stream(struct source *src, char *why, size_t len)
{
	uint8_t seed[4];
	int r;

	/*
	 * The seed is read on its own, so that the blocks after it line up with the driver's
	 * reads: on a slow device (9.6 kB/s here) the first block then costs one read of
	 * read-size bytes instead of two.
	 */
	r = fill(src, seed, sizeof(seed));
	if (r < 0) {
		wipe(seed, sizeof(seed));
		goto read_error;
	}
	fips_init(&src->fips, seed);
	wipe(seed, sizeof(seed));
	source_fail_window_reset(&src->window);
	src->blocks_since_open = 0;

	for (;;) {
		struct block *b = wait_slot(src);
		unsigned int res;
		bool trip;

		if (!b)
			return -ECANCELED;
		r = fill_head(src, &b->time_ns);
		if (r < 0)
			goto read_error; /* close_source() wipes what was read */
		/* No clock read here: the read's time marks progress, a test takes microseconds. */
		res = fips_test_block(&src->fips, b->data);
		trip = source_fail_window_add(&src->window, res != 0);

		pthread_mutex_lock(&src->lock);
		src->st.blocks_tested++;
		if (res == 0)
			src->st.blocks_passed++;
		for (unsigned int i = 0; i < FIPS_N_TESTS; i++)
			if (res & (1u << i))
				src->st.fips_failures[i]++;
		pthread_mutex_unlock(&src->lock);

		if (res == 0) {
			ring_publish(&src->ring);
			head_done(src, true);
			wake_consumer(src);
			set_state(src, SOURCE_RUNNING, 0, NULL);
		} else {
			wipe(b, sizeof(*b));
			head_done(src, false);
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

read_error:
	if (r == -ECANCELED)
		return r;
	if (r == -ENODATA)
		snprintf(why, len, "end of file");
	else
		snprintf(why, len, "read: %s", strerror(-r));
	return r;
}

static void run(struct source *src)
{
	char why[160];
	int r;

	for (;;) {
		if (!src->opened) {
			r = open_source(src, why, sizeof(why));
			if (r < 0 && may_appear(src, r)) {
				set_state(src, SOURCE_WAITING, -r, why);
			} else if (r < 0) {
				/* Still in back-off; logged when it started. */
				set_state(src, SOURCE_BACKOFF, -r, why);
			} else {
				set_state(src, SOURCE_STARTING, 0, NULL);
			}
		}
		if (src->opened) {
			r = stream(src, why, sizeof(why));
			if (r == -ECANCELED)
				return;
			close_source(src);
			if (r == -ENODATA) {
				atomic_store(&src->waiting, true); /* ending on purpose */
				set_state(src, SOURCE_FAILED, ENODATA, why);
				return;
			}
			atomic_store(&src->waiting, true); /* about to sleep */
			if (may_appear(src, r)) {
				/* The device went away (backend switched, module removed). */
				set_state(src, SOURCE_WAITING, -r, why);
			} else {
				set_state(src, SOURCE_BACKOFF, -r, why);
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

static void *reader_main(void *arg)
{
	struct source *src = arg;
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SOURCE_INTERRUPT_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
	run(src);
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

static int install_handler(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_once);
	return handler_result;
}

int source_set_start(struct source_set *set, int wake_fd)
{
	sigset_t all, old;
	int r = install_handler();

	if (r < 0)
		return r;
	/* The threads inherit a mask with everything blocked; they unblock their signal. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if ((!src->opened && src->st.state != SOURCE_WAITING) || src->thread_started)
			continue;
		src->wake_fd = wake_fd;
		atomic_store(&src->stop, false);
		atomic_store(&src->thread_done, false);
		atomic_store(&src->progress_ns, now_ns());
		r = -pthread_create(&src->thread, NULL, reader_main, src);
		if (r < 0)
			break;
		src->thread_started = true;
		set->started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		source_set_stop(set);
	return r;
}

bool source_set_stop_within(struct source_set *set, uint64_t limit_ns)
{
	struct timespec tick = { .tv_sec = 0, .tv_nsec = 50000 };
	uint64_t deadline = limit_ns == UINT64_MAX ? UINT64_MAX : now_ns() + limit_ns;
	bool all_done = false;

	if (!set || !set->started)
		return !set || !set->abandoned;
	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if (!src->thread_started)
			continue;
		pthread_mutex_lock(&src->lock);
		atomic_store(&src->stop, true);
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->lock);
	}
	/*
	 * A thread may be blocked in read(), or about to enter it when the signal comes:
	 * look every 50 us, signal again every 5 ms until it is out. With a time limit, a
	 * thread still in its driver's read after the first look is not waited for: that
	 * read did not end at the signal, so it waits killably and only the exit ends it.
	 */
	for (unsigned int n = 0; !all_done && now_ns() < deadline; n++) {
		all_done = true;
		for (size_t i = 0; i < set->n; i++) {
			struct source *src = set->src[i];

			if (!src->thread_started || atomic_load(&src->thread_done))
				continue;
			if (n > 0 && limit_ns != UINT64_MAX && atomic_load(&src->in_read))
				continue;
			all_done = false;
			if (n % 100 == 0)
				pthread_kill(src->thread, SOURCE_INTERRUPT_SIGNAL);
		}
		if (!all_done)
			nanosleep(&tick, NULL);
	}
	for (size_t i = 0; i < set->n; i++) {
		struct source *src = set->src[i];

		if (!src->thread_started)
			continue;
		if (atomic_load(&src->thread_done)) {
			pthread_join(src->thread, NULL);
		} else {
			/*
			 * Still inside the driver: virtio-rng, for one, waits for the host
			 * killably, so only the process's exit ends that read (kernel-
			 * interfaces.md §3). Let it go; the set stays allocated for it.
			 */
			pthread_detach(src->thread);
			set->abandoned = true;
		}
		src->thread_started = false;
		atomic_store(&src->waiting, false);
	}
	set->started = false;
	return !set->abandoned;
}

void source_set_stop(struct source_set *set)
{
	source_set_stop_within(set, UINT64_MAX);
}

/* ---- consumer ---- */

static bool stale(const struct block *b, uint64_t now, uint64_t max_age_ns)
{
	return now > b->time_ns && now - b->time_ns > max_age_ns;
}

/*
 * After the consumer released blocks: the producer waits for half the ring to be free
 * (wait_slot()). Once per batch of releases, not per block: the fence is not free.
 */
static void released(struct source *src)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&src->waiting) && ring_count(&src->ring) <= (src->ring.mask + 1) / 2) {
		pthread_mutex_lock(&src->lock);
		pthread_cond_signal(&src->cond);
		pthread_mutex_unlock(&src->lock);
	}
}

/* Drop the blocks older than max_age_ns from the front of the ring. */
static void drop_stale(struct source *src, uint64_t now, uint64_t max_age_ns)
{
	const struct block *b;
	bool any = false;

	while ((b = ring_read_slot(&src->ring)) && stale(b, now, max_age_ns)) {
		ring_release(&src->ring);
		src->take_off = 0;
		any = true;
	}
	if (any)
		released(src);
}

size_t source_peek(struct source *src, struct iovec *iov, size_t max_iov, size_t n, uint64_t now,
		   uint64_t max_age_ns, size_t *bytes)
{
	size_t used = 0, done = 0, off;
	struct block *b;

	/* Blocks are published in time order: past the first fresh one, all are fresh. */
	drop_stale(src, now, max_age_ns);
	off = src->take_off;
	while (used < max_iov && done < n && (b = ring_peek(&src->ring, used))) {
		size_t k = MIN(n - done, sizeof(b->data) - off);

		iov[used].iov_base = b->data + off;
		iov[used++].iov_len = k;
		done += k;
		off = 0;
	}
	*bytes = done;
	return used;
}

void source_consume(struct source *src, size_t n)
{
	struct block *b;

	bool any = false;

	while (n > 0 && (b = ring_read_slot(&src->ring))) {
		size_t k = MIN(n, sizeof(b->data) - src->take_off);

		n -= k;
		if (src->take_off + k == sizeof(b->data)) {
			ring_release(&src->ring); /* wipes the whole block */
			src->take_off = 0;
			any = true;
			continue;
		}
		wipe(b->data + src->take_off, k);
		src->take_off += k;
	}
	if (any)
		released(src);
}

size_t source_take(struct source *src, uint8_t *buf, size_t n, uint64_t now, uint64_t max_age_ns)
{
	struct iovec iov[8];
	size_t done = 0, got;

	/* source_peek() drops the stale blocks, also when nothing is taken (n == 0). */
	do {
		size_t used =
			source_peek(src, iov, ARRAY_SIZE(iov), n - done, now, max_age_ns, &got);

		for (size_t i = 0; i < used; i++) {
			memcpy(buf + done, iov[i].iov_base, iov[i].iov_len);
			done += iov[i].iov_len;
		}
		source_consume(src, got);
	} while (got > 0 && done < n);
	return done;
}

size_t source_available(struct source *src, uint64_t now, uint64_t max_age_ns)
{
	struct ring *r = &src->ring;
	size_t count = ring_count(r);
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	/* Blocks are published in time order: past the first fresh one, all are fresh. */
	for (size_t i = 0; i < count; i++) {
		const struct block *b = &r->slots[(tail + i) & r->mask];

		if (!stale(b, now, max_age_ns))
			return (count - i) * sizeof(b->data) - (i == 0 ? src->take_off : 0);
	}
	return 0;
}

unsigned int source_quality(const struct source *src)
{
	int found = atomic_load(&src->found_quality);

	if (src->conf_quality >= 0)
		return (unsigned int)src->conf_quality;
	if (found >= 0)
		return (unsigned int)found;
	return src->ops->quality;
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
