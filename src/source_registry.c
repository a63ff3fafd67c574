// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The driver registry: checks of the driver table and of a configuration section against
 * its driver's option schema (the one validator, option.h, plus the driver's own rules),
 * -O NAME, and what a driver may ask about its source (options, private data, quality).
 * Runs on the main thread, except the getters, which a reader thread may call too.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "log.h"
#include "option.h"
#include "source_internal.h"
#include "util.h"

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

	/* The characters of a configuration key. */
	return n <= INSTANCE_MAX && ini_valid_key(s);
}

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
	fprintf(f, "  default quality %u/1024%s%s%s%s%s%s\n", ops->quality,
		ops->cpu_rng ? " (0 with random.trust_cpu=off on the kernel command line)" : "",
		ops->default_on ? ", on by default where available" : "",
		ops->default_on && ops->defer_to ? " and " : "",
		ops->default_on && ops->defer_to ? ops->defer_to : "",
		ops->default_on && ops->defer_to ? " is not" : "",
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

void source_notice_once(struct source *src, const char *event, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	/* A temporary source (checks, -l) says nothing: the daemon's will. */
	if (src->noticed || !src->set)
		return;
	src->noticed = true;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_full(LOG_NOTICE, src->name, event, NULL, "%s", text);
}
