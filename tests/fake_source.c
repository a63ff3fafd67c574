// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_source.h"
#include "util.h"

#define FAKE_MAX_OPTS 32

struct source {
	const struct source_ops *ops;
	char *name;
	char *keys[FAKE_MAX_OPTS];
	char *values[FAKE_MAX_OPTS];
	size_t n_opts;
	void *priv;
	int found_quality;
	int kept_quality; /* fake_source_keep_quality() */
	char kept_backend[128];
	bool stopping;
	bool start_failed;
	uint64_t slept_ns;
	const char *counter_names[8];
	uint64_t counters[8];
	size_t n_counters;
	char read_why[128];
	char notice[512];
};

struct source *fake_source_new(const struct source_ops *ops, const char *name,
			       const char *const *opts)
{
	struct source *src = calloc(1, sizeof(*src));

	if (!src)
		abort();
	src->ops = ops;
	src->name = strdup(name ? name : ops->name);
	src->found_quality = -1;
	src->kept_quality = -1;
	for (size_t i = 0; opts && opts[i]; i++) {
		const char *eq = strchr(opts[i], '=');

		if (!eq || src->n_opts == FAKE_MAX_OPTS)
			abort();
		src->keys[src->n_opts] = strndup(opts[i], (size_t)(eq - opts[i]));
		src->values[src->n_opts] = strdup(eq + 1);
		src->n_opts++;
	}
	return src;
}

void fake_source_free(struct source *src)
{
	if (!src)
		return;
	for (size_t i = 0; i < src->n_opts; i++) {
		free(src->keys[i]);
		free(src->values[i]);
	}
	free(src->name);
	free(src);
}

int fake_source_found_quality(const struct source *src)
{
	return src->found_quality;
}

void fake_source_stop(struct source *src)
{
	src->stopping = true;
}

void fake_source_abort(struct source *src)
{
	src->start_failed = true;
}

uint64_t fake_source_counter(const struct source *src, const char *name)
{
	for (size_t i = 0; i < src->n_counters; i++)
		if (strcmp(src->counter_names[i], name) == 0)
			return src->counters[i];
	return 0;
}

uint64_t fake_source_slept_ns(const struct source *src)
{
	return src->slept_ns;
}

static const struct option_spec *find_option(const struct source *src, const char *key)
{
	for (const struct option_spec *o = src->ops->options; o && o->key; o++)
		if (strcmp(o->key, key) == 0)
			return o;
	return NULL;
}

const char *source_name(const struct source *src)
{
	return src->name;
}

const char *source_opt_str(const struct source *src, const char *key)
{
	const struct option_spec *o;

	for (size_t i = 0; i < src->n_opts; i++)
		if (strcmp(src->keys[i], key) == 0)
			return src->values[i];
	o = find_option(src, key);
	return o ? o->def : NULL;
}

uint64_t source_opt_uint(const struct source *src, const char *key)
{
	const char *v = source_opt_str(src, key);
	uint64_t n = 0;

	if (v && parse_uint(v, 0, UINT64_MAX, &n) < 0)
		abort();
	return n;
}

bool source_opt_bool(const struct source *src, const char *key)
{
	const char *v = source_opt_str(src, key);
	bool b = false;

	if (v && parse_bool(v, &b) < 0)
		abort();
	return b;
}

bool source_opt_is_set(const struct source *src, const char *key)
{
	for (size_t i = 0; i < src->n_opts; i++)
		if (strcmp(src->keys[i], key) == 0)
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
	src->found_quality = (int)quality;
}

bool source_kept_quality(struct source *src, const char *backend, unsigned int *quality)
{
	if (src->kept_quality < 0 || strcmp(src->kept_backend, backend) != 0)
		return false;
	*quality = (unsigned int)src->kept_quality;
	return true;
}

void fake_source_keep_quality(struct source *src, const char *backend, int quality)
{
	src->kept_quality = quality;
	snprintf(src->kept_backend, sizeof(src->kept_backend), "%s", backend ? backend : "");
}

void source_notice_once(struct source *src, const char *event, const char *fmt, ...)
{
	va_list ap;

	(void)event;
	if (src->notice[0])
		return;
	va_start(ap, fmt);
	vsnprintf(src->notice, sizeof(src->notice), fmt, ap);
	va_end(ap);
}

const char *fake_source_notice(const struct source *src)
{
	return src->notice;
}

int source_sleep(struct source *src, uint64_t ns)
{
	if (src->stopping)
		return -ECANCELED;
	src->slept_ns += ns;
	return 0;
}

bool source_stopping(const struct source *src)
{
	return src->stopping;
}

bool source_start_failed(const struct source *src)
{
	return src->start_failed;
}

int source_counter(struct source *src, const char *name)
{
	for (size_t i = 0; i < src->n_counters; i++)
		if (strcmp(src->counter_names[i], name) == 0)
			return (int)i;
	if (src->n_counters == ARRAY_SIZE(src->counters))
		return -ENOSPC;
	src->counter_names[src->n_counters] = name;
	return (int)src->n_counters++;
}

void source_counter_add(struct source *src, int index, uint64_t n)
{
	if (index >= 0 && (size_t)index < src->n_counters)
		src->counters[index] += n;
}

void source_read_why(struct source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(src->read_why, sizeof(src->read_why), fmt, ap);
	va_end(ap);
}

const char *fake_source_read_why(const struct source *src)
{
	return src->read_why;
}
