/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sections of a struct conf as plain data, for conf.c (conf_section.c): no checks of
 * meaning, no error text. -ENOMEM is the only failure.
 */
#ifndef RNGD_CONF_INTERNAL_H
#define RNGD_CONF_INTERNAL_H

#include "conf.h"

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
/* The section of c called name, or NULL. */
struct conf_section *conf_section_find(const struct conf *c, const char *name);
/* Append *s to c's sections, taking over what it owns (s is zeroed). 0 or -ENOMEM. */
int conf_section_add(struct conf *c, struct conf_section *s);

#endif
