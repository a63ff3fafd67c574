/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option schemas: the one type system of every configuration key, the [rngd] keys
 * (conf.c) and each source's keys (src/sources/NAME.c) alike, and the one validator that
 * checks a value, or a whole section, against a schema. Nothing here logs, allocates or
 * knows of files and lines: errors are a reason alone ("'x' is not a decimal number"), the
 * caller adds where.
 */
#ifndef RNGD_OPTION_H
#define RNGD_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf_section.h"

enum option_type {
	OPTION_STRING, /* any non-empty text */
	OPTION_PATH,   /* an absolute path shorter than PATH_MAX */
	OPTION_UINT,   /* decimal in [min, max] */
	OPTION_BOOL,   /* yes/no (parse_bool()) */
	OPTION_CHOICE, /* one of choices[] */
	OPTION_USER,   /* USER or USER:GROUP, names as useradd(8) takes them, or ids */
	OPTION_GROUP,  /* a group name or id */
};

/* One key of a schema; a table ends with key == NULL. */
struct option_spec {
	const char *key;
	enum option_type type;
	const char *def;	    /* default as text, NULL for "unset" */
	uint64_t min, max;	    /* OPTION_UINT */
	const char *const *choices; /* OPTION_CHOICE, NULL-terminated */
	const char *help;	    /* one line, for -O NAME and the man page */
	bool empty_ok;		    /* an empty value is allowed and means "none" */
};

/* The entry for key in a table, or NULL. */
const struct option_spec *option_find(const struct option_spec *table, const char *key);

/* Check one value against o. 0, or -EINVAL with why (the reason alone). */
int option_check_value(const struct option_spec *o, const char *value, char *why, size_t len);

/*
 * Check that a table is well formed: keys non-empty and unique (and none of reserved[], a
 * table of keys the owner may not redefine, or NULL), known types, min <= max, choices
 * present, defaults valid. 0 or -EINVAL with why, which names owner.
 */
int option_check_table(const char *owner, const struct option_spec *table,
		       const struct option_spec *reserved, char *why, size_t len);

/*
 * The one validator of a section: every key of s must be in table or extra (either may be
 * NULL), appear once, and have a valid value. 0, or -EINVAL with *bad set to the offending
 * line and why to the reason; unknown_hint is appended to "unknown key" (e.g. " for source
 * 'via' (see -O via)").
 */
int option_check_section(const struct conf_section *s, const struct option_spec *table,
			 const struct option_spec *extra, const char *unknown_hint,
			 const struct conf_kv **bad, char *why, size_t len);

/* Print one key with its default, type and help, two lines, for -O NAME. */
void option_print(const struct option_spec *o, FILE *f);

#endif
