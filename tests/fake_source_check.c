// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in for source_check_section() of src/source.c, so that the configuration parser
 * can be tested and fuzzed alone. It knows a few sources and keys:
 *   hwrng, virtio, caam: device (path), read-size (64..65536), backend, sysfs (path)
 *   via: noise-source (a|b|both), dry-delay-us (1..1000)
 *   file:NAME (instance required): path (path, required)
 *   every source: enabled (bool), quality (0..1024)
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"
#include "util.h"

struct fake_key {
	const char *source;	/* NULL: every source */
	const char *key;
	char type;		/* 'p' path, 'u' uint, 'b' bool, 's' string, 'c' choice */
	uint64_t min, max;
};

static const struct fake_key fake_keys[] = {
	{ NULL, "enabled", 'b', 0, 0 },
	{ NULL, "quality", 'u', 0, 1024 },
	{ "hwrng", "device", 'p', 0, 0 },
	{ "hwrng", "read-size", 'u', 64, 65536 },
	{ "hwrng", "backend", 's', 0, 0 },
	{ "hwrng", "sysfs", 'p', 0, 0 },
	{ "virtio", "device", 'p', 0, 0 },
	{ "virtio", "read-size", 'u', 64, 65536 },
	{ "caam", "device", 'p', 0, 0 },
	{ "via", "noise-source", 'c', 0, 0 },
	{ "via", "dry-delay-us", 'u', 1, 1000 },
	{ "file", "path", 'p', 0, 0 },
};

static const char *const fake_sources[] = { "hwrng", "virtio", "caam", "via", "file" };

static int check_value(const struct fake_key *k, const char *v, char *why, size_t len)
{
	uint64_t u;
	bool b;
	int r;

	switch (k->type) {
	case 'p':
		if (v[0] != '/') {
			snprintf(why, len, "'%s' is not an absolute path", v);
			return -EINVAL;
		}
		return 0;
	case 'u':
		r = parse_uint(v, k->min, k->max, &u);
		if (r == -ERANGE) {
			snprintf(why, len, "'%s' is out of range %llu..%llu", v,
				 (unsigned long long)k->min, (unsigned long long)k->max);
			return -EINVAL;
		}
		if (r < 0) {
			snprintf(why, len, "'%s' is not a decimal number", v);
			return -EINVAL;
		}
		return 0;
	case 'b':
		if (parse_bool(v, &b) < 0) {
			snprintf(why, len, "'%s' is not a boolean (yes or no)", v);
			return -EINVAL;
		}
		return 0;
	case 'c':
		if (strcmp(v, "a") && strcmp(v, "b") && strcmp(v, "both")) {
			snprintf(why, len, "'%s' is not one of a, b, both", v);
			return -EINVAL;
		}
		return 0;
	default:
		return 0;
	}
}

int source_check_section(const struct conf_section *s, const struct conf_kv **bad, char *why,
			 size_t len)
{
	const char *colon = strchr(s->name, ':');
	bool known = false, is_file;

	*bad = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(fake_sources); i++)
		if (strcmp(s->type, fake_sources[i]) == 0)
			known = true;
	if (!known) {
		snprintf(why, len, "unknown source '%s'", s->type);
		return -EINVAL;
	}
	is_file = strcmp(s->type, "file") == 0;
	if (is_file && (!colon || !colon[1])) {
		snprintf(why, len, "source 'file' needs an instance name: [source file:NAME]");
		return -EINVAL;
	}
	if (!is_file && colon) {
		snprintf(why, len, "source '%s' takes no instance name", s->type);
		return -EINVAL;
	}

	for (size_t i = 0; i < s->n_kv; i++) {
		const struct fake_key *k = NULL;

		for (size_t j = 0; j < ARRAY_SIZE(fake_keys); j++)
			if ((!fake_keys[j].source || strcmp(fake_keys[j].source, s->type) == 0) &&
			    strcmp(fake_keys[j].key, s->kv[i].key) == 0)
				k = &fake_keys[j];
		if (!k) {
			*bad = &s->kv[i];
			snprintf(why, len, "unknown key for source '%s'", s->type);
			return -EINVAL;
		}
		if (check_value(k, s->kv[i].value, why, len) < 0) {
			*bad = &s->kv[i];
			return -EINVAL;
		}
	}

	if (is_file) {
		bool has_path = false;

		for (size_t i = 0; i < s->n_kv; i++)
			if (strcmp(s->kv[i].key, "path") == 0)
				has_path = true;
		if (!has_path) {
			snprintf(why, len, "missing key 'path'");
			return -EINVAL;
		}
	}
	return 0;
}
