/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * INI syntax, and nothing else: lines, comments ('#' or ';' first), "[section]" headers and
 * "key = value" pairs, in strict UTF-8 without control characters. What the sections and
 * keys mean is the caller's (conf.c). Nothing here allocates or logs.
 */
#ifndef RNGD_INI_H
#define RNGD_INI_H

#include <stdbool.h>
#include <stddef.h>

#define INI_MAX_LINE 4096 /* bytes, without the line ending */

/*
 * Called for each header (section: the text between the brackets, trimmed; key and value
 * NULL) and for each pair (section NULL; key and value trimmed, key valid) in file order.
 * 0 to go on, or -errno to stop ini_parse(), which returns it.
 */
typedef int (*ini_fn)(void *ctx, unsigned int line, char *section, const char *key,
		      const char *value);

/*
 * Parse len bytes of text (a UTF-8 byte order mark is skipped). 0; fn's -errno; or
 * -EINVAL for a syntax error, with *line set to its line and why to the reason ("invalid
 * UTF-8"; a pair before any header says "key 'k': outside any section").
 */
int ini_parse(const char *text, size_t len, ini_fn fn, void *ctx, unsigned int *line, char *why,
	      size_t why_len);

/* Keys are ASCII letters, digits, '-', '_' and '.', at least one. */
bool ini_valid_key(const char *s);

#endif
