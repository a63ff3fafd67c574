// SPDX-License-Identifier: GPL-2.0-or-later
/* Sections and keys as plain data (conf_section.h); no checks of meaning. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf_section.h"

void conf_section_free(struct conf_section *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->kv && i < s->n_kv; i++) {
		free(s->kv[i].key);
		free(s->kv[i].value);
	}
	free(s->kv);
	free(s->name);
	free(s->type);
	memset(s, 0, sizeof(*s));
}

/* Fill s for a section called name (type is the part before ':'). */
int conf_section_init(struct conf_section *s, const char *name, unsigned int line)
{
	const char *colon = strchr(name, ':');

	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	s->type = colon ? strndup(name, (size_t)(colon - name)) : strdup(name);
	s->line = line;
	if (!s->name || !s->type) {
		conf_section_free(s);
		return -ENOMEM;
	}
	return 0;
}

int conf_section_copy(struct conf_section *dst, const struct conf_section *src)
{
	int r = conf_section_init(dst, src->name, src->line);

	if (r < 0)
		return r;
	if (src->n_kv == 0)
		return 0;
	dst->kv = calloc(src->n_kv, sizeof(*dst->kv));
	if (!dst->kv)
		goto nomem;
	for (size_t i = 0; i < src->n_kv; i++) {
		dst->kv[i].key = strdup(src->kv[i].key);
		dst->kv[i].value = strdup(src->kv[i].value);
		dst->kv[i].line = src->kv[i].line;
		dst->n_kv = i + 1;
		if (!dst->kv[i].key || !dst->kv[i].value)
			goto nomem;
	}
	return 0;
nomem:
	conf_section_free(dst);
	return -ENOMEM;
}

struct conf_kv *conf_section_find_kv(const struct conf_section *s, const char *key)
{
	for (size_t i = 0; i < s->n_kv; i++)
		if (strcmp(s->kv[i].key, key) == 0)
			return &s->kv[i];
	return NULL;
}

/*
 * Set key to value in s, replacing an existing value. Takes ownership of key and value
 * on success only.
 */
int conf_section_set_owned(struct conf_section *s, char *key, char *value, unsigned int line)
{
	struct conf_kv *kv = conf_section_find_kv(s, key);

	if (kv) {
		free(kv->value);
		free(key);
		kv->value = value;
		kv->line = line;
		return 0;
	}
	kv = realloc(s->kv, (s->n_kv + 1) * sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	s->kv = kv;
	s->kv[s->n_kv++] = (struct conf_kv){ .key = key, .value = value, .line = line };
	return 0;
}

int conf_section_set(struct conf_section *s, const char *key, const char *value,
		       unsigned int line)
{
	char *k = strdup(key), *v = strdup(value);

	if (!k || !v || conf_section_set_owned(s, k, v, line) < 0) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	return 0;
}
