// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the configuration parser: the input is a configuration file. Each
 * run also checks the parser's promises: on failure the conf is unchanged and the error
 * text is set; on success a second load of the same text on top gives the same result.
 * Input that starts with '!' is a list of command-line settings instead, one per line:
 * "SOURCE:KEY:VALUE" for conf_set_source(), "KEY=VALUE" for conf_set().
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value of key in s, or NULL. */
static const char *section_get(const struct conf_section *s, const char *key)
{
	for (size_t i = 0; i < s->n_kv; i++)
		if (strcmp(s->kv[i].key, key) == 0)
			return s->kv[i].value;
	return NULL;
}

static void fuzz_cli(const char *text, size_t size)
{
	char err[CONF_ERR_MAX];
	char *copy = strndup(text, size), *line, *save = NULL;
	struct conf c;

	if (!copy)
		return;
	conf_init(&c, source_check_section);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *colon2 = colon ? strchr(colon + 1, ':') : NULL;
		char *eq = strchr(line, '=');
		uint64_t before = c.feed_interval + c.feed_bytes + c.max_age;
		size_t n_sections = c.n_sections;
		int r;

		err[0] = '\0';
		if (colon2) {
			*colon = *colon2 = '\0';
			r = conf_set_source(&c, line, colon + 1, colon2 + 1, "option -O", err,
					    sizeof(err));
		} else if (eq) {
			*eq = '\0';
			r = conf_set(&c, line, eq + 1, "option", err, sizeof(err));
		} else {
			continue;
		}
		if (r < 0 &&
		    (r != -EINVAL || strncmp(err, "option", 6) != 0 || c.n_sections != n_sections ||
		     c.feed_interval + c.feed_bytes + c.max_age != before))
			abort();
	}
	conf_free(&c);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONF_ERR_MAX] = "";
	struct conf c;
	int r;

	if (size > 0 && data[0] == '!') {
		fuzz_cli((const char *)data + 1, size - 1);
		return 0;
	}
	conf_init(&c, source_check_section);
	r = conf_load_string(&c, "fuzz", (const char *)data, size, err, sizeof(err));
	if (r < 0) {
		/* Failed loads leave the defaults and always say why. */
		if (r != -EINVAL || strncmp(err, "fuzz", 4) != 0 || c.feed_interval != 60 ||
		    c.n_sections != 0 || !c.random_device || strcmp(c.random_device, "/dev/random"))
			abort();
	} else {
		/* Every section can be found, and a second identical load is accepted too. */
		for (size_t i = 0; i < c.n_sections; i++) {
			const struct conf_section *s = conf_find_section(&c, c.sections[i].name);

			if (s != &c.sections[i])
				abort();
			for (size_t j = 0; j < s->n_kv; j++)
				if (section_get(s, s->kv[j].key) != s->kv[j].value)
					abort();
		}
		if (conf_load_string(&c, "fuzz", (const char *)data, size, err, sizeof(err)) < 0)
			abort();
	}
	conf_free(&c);
	return 0;
}
