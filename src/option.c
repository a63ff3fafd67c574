// SPDX-License-Identifier: GPL-2.0-or-later
/* Option schemas and the one validator (option.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "option.h"
#include "util.h"

#define USER_NAME_MAX 32 /* useradd(8) limit on Linux */

const struct option_spec *option_find(const struct option_spec *table, const char *key)
{
	for (const struct option_spec *o = table; o && o->key; o++)
		if (strcmp(o->key, key) == 0)
			return o;
	return NULL;
}

/* A user or group name as useradd(8) accepts by default, or a numeric id. */
static bool valid_user_name(const char *s, size_t n)
{
	if (n == 0 || n > USER_NAME_MAX || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-')
			continue;
		/* Samba machine accounts end in '$'. */
		if (ch == '$' && i > 0 && i == n - 1)
			continue;
		return false;
	}
	return true;
}

static int check_user(const char *v, char *why, size_t len)
{
	const char *colon = strchr(v, ':');
	size_t ulen = colon ? (size_t)(colon - v) : strlen(v);

	if (!valid_user_name(v, ulen)) {
		snprintf(why, len, "'%.*s' is not a valid user name", (int)ulen, v);
		return -EINVAL;
	}
	if (colon && !valid_user_name(colon + 1, strlen(colon + 1))) {
		snprintf(why, len, "'%s' is not a valid group name", colon + 1);
		return -EINVAL;
	}
	return 0;
}

int option_check_value(const struct option_spec *o, const char *v, char *why, size_t len)
{
	uint64_t u;
	bool b;

	if (*v == '\0' && o->empty_ok)
		return 0;
	switch (o->type) {
	case OPTION_STRING:
		if (*v == '\0') {
			snprintf(why, len, "empty value");
			return -EINVAL;
		}
		return 0;
	case OPTION_PATH:
		if (v[0] != '/') {
			snprintf(why, len, "'%s' is not an absolute path", v);
			return -EINVAL;
		}
		if (strlen(v) >= PATH_MAX) {
			snprintf(why, len, "path too long");
			return -EINVAL;
		}
		return 0;
	case OPTION_UINT:
		return parse_uint_why(v, o->min, o->max, &u, why, len);
	case OPTION_BOOL:
		if (parse_bool(v, &b) < 0) {
			snprintf(why, len, "'%s' is not a boolean (yes or no)", v);
			return -EINVAL;
		}
		return 0;
	case OPTION_CHOICE:
		for (const char *const *c = o->choices; c && *c; c++)
			if (strcmp(*c, v) == 0)
				return 0;
		snprintf(why, len, "'%s' is not one of:", v);
		for (const char *const *c = o->choices; c && *c; c++) {
			size_t l = strlen(why);

			if (l < len)
				snprintf(why + l, len - l, " %s", *c);
		}
		return -EINVAL;
	case OPTION_USER:
		return check_user(v, why, len);
	case OPTION_GROUP:
		if (!valid_user_name(v, strlen(v))) {
			snprintf(why, len, "'%s' is not a valid group name", v);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(why, len, "bad option type");
	return -EINVAL;
}

int option_check_table(const char *owner, const struct option_spec *table,
		       const struct option_spec *reserved, char *why, size_t len)
{
	char vwhy[160];

	for (const struct option_spec *o = table; o && o->key; o++) {
		if (!*o->key) {
			snprintf(why, len, "%s: empty option key", owner);
			return -EINVAL;
		}
		if (option_find(reserved, o->key)) {
			snprintf(why, len, "%s: key '%s' is common to all", owner, o->key);
			return -EINVAL;
		}
		for (const struct option_spec *p = table; p != o; p++)
			if (strcmp(p->key, o->key) == 0) {
				snprintf(why, len, "%s: key '%s' twice", owner, o->key);
				return -EINVAL;
			}
		if (o->type > OPTION_GROUP) {
			snprintf(why, len, "%s: key '%s': bad type", owner, o->key);
			return -EINVAL;
		}
		if (o->type == OPTION_UINT && o->min > o->max) {
			snprintf(why, len, "%s: key '%s': min > max", owner, o->key);
			return -EINVAL;
		}
		if (o->type == OPTION_CHOICE && (!o->choices || !o->choices[0])) {
			snprintf(why, len, "%s: key '%s': no choices", owner, o->key);
			return -EINVAL;
		}
		if (o->def && option_check_value(o, o->def, vwhy, sizeof(vwhy)) < 0) {
			snprintf(why, len, "%s: key '%s': bad default: %s", owner, o->key, vwhy);
			return -EINVAL;
		}
	}
	return 0;
}

int option_check_section(const struct conf_section *s, const struct option_spec *table,
			 const struct option_spec *extra, const char *unknown_hint,
			 const struct conf_kv **bad, char *why, size_t len)
{
	for (size_t i = 0; i < s->n_kv; i++) {
		const struct conf_kv *kv = &s->kv[i];
		const struct option_spec *o = option_find(table, kv->key);

		if (!o)
			o = option_find(extra, kv->key);
		*bad = kv;
		if (!o) {
			snprintf(why, len, "unknown key%s", unknown_hint ? unknown_hint : "");
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->kv[j].key, kv->key) == 0) {
				snprintf(why, len, "set twice");
				return -EINVAL;
			}
		if (!kv->value) {
			snprintf(why, len, "no value");
			return -EINVAL;
		}
		if (option_check_value(o, kv->value, why, len) < 0)
			return -EINVAL;
	}
	*bad = NULL;
	return 0;
}

void option_print(const struct option_spec *o, FILE *f)
{
	fprintf(f, "  %s=%s", o->key, o->def ? o->def : "");
	switch (o->type) {
	case OPTION_STRING:
		fprintf(f, "  (text)");
		break;
	case OPTION_PATH:
		fprintf(f, "  (absolute path)");
		break;
	case OPTION_UINT:
		fprintf(f, "  (%llu..%llu)", (unsigned long long)o->min,
			(unsigned long long)o->max);
		break;
	case OPTION_BOOL:
		fprintf(f, "  (yes/no)");
		break;
	case OPTION_CHOICE:
		fprintf(f, "  (");
		for (const char *const *c = o->choices; c && *c; c++)
			fprintf(f, "%s%s", c == o->choices ? "" : "|", *c);
		fprintf(f, ")");
		break;
	case OPTION_USER:
		fprintf(f, "  (user[:group])");
		break;
	case OPTION_GROUP:
		fprintf(f, "  (group)");
		break;
	}
	fprintf(f, "\n      %s\n", o->help ? o->help : "");
}
