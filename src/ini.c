// SPDX-License-Identifier: GPL-2.0-or-later
/* INI syntax (ini.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ini.h"

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Trim blanks at both ends of s in place; returns the new start. */
static char *trim(char *s)
{
	size_t n;

	while (is_blank(*s))
		s++;
	n = strlen(s);
	while (n > 0 && is_blank(s[n - 1]))
		s[--n] = '\0';
	return s;
}

bool ini_valid_key(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char ch = s[i];
		size_t need;
		uint32_t cp, min;

		if (ch < 0x80) {
			i++;
			continue;
		} else if ((ch & 0xe0) == 0xc0) {
			need = 1, cp = ch & 0x1f, min = 0x80;
		} else if ((ch & 0xf0) == 0xe0) {
			need = 2, cp = ch & 0x0f, min = 0x800;
		} else if ((ch & 0xf8) == 0xf0) {
			need = 3, cp = ch & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (n - i <= need)
			return false;
		for (size_t j = 1; j <= need; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

/* The bytes of one line, without its ending: why it is not acceptable text, or NULL. */
static const char *bad_text(const char *start, size_t n, char *why, size_t len)
{
	if (n > INI_MAX_LINE) {
		snprintf(why, len, "line too long (more than %d bytes)", INI_MAX_LINE);
		return why;
	}
	if (memchr(start, '\0', n))
		return "NUL byte";
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)start[i];

		if ((ch < ' ' && ch != '\t') || ch == 0x7f) {
			snprintf(why, len, "control character 0x%02x", ch);
			return why;
		}
	}
	if (!valid_utf8((const unsigned char *)start, n))
		return "invalid UTF-8";
	return NULL;
}

int ini_parse(const char *text, size_t len, ini_fn fn, void *ctx, unsigned int *line, char *why,
	      size_t why_len)
{
	char buf[INI_MAX_LINE + 1];
	unsigned int lineno = 0;
	bool in_section = false;
	size_t pos = 0;
	const char *bad;

	if (why_len)
		why[0] = '\0';
	/* A UTF-8 byte order mark, as some Windows editors write. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		pos = 3;

	while (pos < len) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		char *s, *eq, *key;
		int r;

		pos += n + (nl ? 1 : 0);
		*line = ++lineno;
		if (n > 0 && start[n - 1] == '\r')
			n--;
		bad = bad_text(start, n, why, why_len);
		if (bad)
			goto syntax;
		memcpy(buf, start, n);
		buf[n] = '\0';
		s = trim(buf);

		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			n = strlen(s);
			bad = "section header must end with ']'";
			if (s[n - 1] != ']')
				goto syntax;
			s[n - 1] = '\0';
			in_section = true;
			r = fn(ctx, lineno, trim(s + 1), NULL, NULL);
			if (r < 0)
				return r;
			continue;
		}
		eq = strchr(s, '=');
		bad = "expected 'key = value', '[section]' or a comment";
		if (!eq)
			goto syntax;
		*eq = '\0';
		key = trim(s);
		bad = "missing key before '='";
		if (!*key)
			goto syntax;
		if (!ini_valid_key(key)) {
			snprintf(why, why_len, "invalid key '%s'", key);
			return -EINVAL;
		}
		if (!in_section) {
			snprintf(why, why_len, "key '%s': outside any section", key);
			return -EINVAL;
		}
		r = fn(ctx, lineno, NULL, key, trim(eq + 1));
		if (r < 0)
			return r;
	}
	return 0;

syntax:
	if (bad != why)
		snprintf(why, why_len, "%s", bad);
	return -EINVAL;
}
