/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sections and keys as plain data (conf_section.c): a [source NAME] section of the
 * configuration file, or the keys the command line sets for one source. No checks of
 * meaning, no error text: the parser (conf.c) and the validator (option.c) both work on
 * these. -ENOMEM is the only failure.
 */
#ifndef RNGD_CONF_SECTION_H
#define RNGD_CONF_SECTION_H

#include <stddef.h>

/* One key = value line of a [source ...] section, or one -O option. */
struct conf_kv {
	char *key;
	char *value;
	unsigned int line;	/* 0 when set on the command line */
};

/* One [source NAME] section ("hwrng", "file:usb0"), or the sources named by -O/-x/-n. */
struct conf_section {
	char *name;		/* full name: "file:usb0" */
	char *type;		/* source type: "file" */
	unsigned int line;	/* line of the section header, 0 for the command line */
	struct conf_kv *kv;
	size_t n_kv;
};

/* Free what s owns and zero it; s may be half-built or zeroed. */
void conf_section_free(struct conf_section *s);
/* Fill s for a section called name (type is the part before ':'). 0 or -ENOMEM. */
int conf_section_init(struct conf_section *s, const char *name, unsigned int line);
/* Deep copy of src into dst (overwritten). 0 or -ENOMEM (dst then zeroed). */
int conf_section_copy(struct conf_section *dst, const struct conf_section *src);
/* The line of s that sets key, or NULL. */
struct conf_kv *conf_section_find_kv(const struct conf_section *s, const char *key);
/*
 * Set key to value in s, replacing an existing value. Takes ownership of key and value
 * on success only. 0 or -ENOMEM.
 */
int conf_section_set_owned(struct conf_section *s, char *key, char *value, unsigned int line);
/* The same with copies of key and value. */
int conf_section_set(struct conf_section *s, const char *key, const char *value,
		     unsigned int line);

#endif
