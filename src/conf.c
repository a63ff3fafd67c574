// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration parser. A load parses the text into a fresh struct conf (only what the
 * text sets), then merges that into a deep copy of the caller's conf, has the caller's
 * section check (conf->check_section) validate the touched source sections, and swaps the
 * copy in: the caller's conf changes only on success. The syntax is ini.c's; the [rngd]
 * keys are checked against their schema (option.h) as they are parsed. Nothing here knows
 * what a source is.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "ini.h"
#include "option.h"
#include "util.h"

#define CONF_MAX_FILE (1024 * 1024)	/* bytes */
#define CONF_MAX_SECTIONS 256
#define CONF_MAX_KEYS 256		/* per section */

/*
 * Defaults of the string keys. conf_init() points at these instead of allocating, so that
 * it cannot fail; conf_free() and the setters know not to free them.
 */
static const char def_random_device[] = "/dev/random";
#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif
/* configure --runstatedir (default /run, as rngd.service's RuntimeDirectory=), as the man
 * pages say (Makefile.am substitutes the same value into them). */
static const char def_pid_file[] = RUNSTATEDIR "/rngd.pid";
static const char def_status_file[] = RUNSTATEDIR "/rngd/status.json";
static const char def_kernel_hwrng[] = "take-over";
static const char *const kernel_hwrng_modes[] = { "take-over", "leave", "watch", NULL };

static bool is_static(const char *s)
{
	return s == def_random_device || s == def_pid_file || s == def_status_file ||
	       s == def_kernel_hwrng;
}

static void free_str(char **s)
{
	if (*s && !is_static(*s))
		free(*s);
	*s = NULL;
}

static int copy_str(char **dst, const char *src)
{
	if (!src || is_static(src)) {
		*dst = (char *)src;
		return 0;
	}
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

/* An [rngd] key: its schema, and where its value lives in struct conf. */
struct global_key {
	struct option_spec opt;
	size_t offset;
};

#define KEY(name, t, field, lo, hi, empty)                                                  \
	{                                                                                   \
		.opt = { .key = name, .type = t, .min = lo, .max = hi, .empty_ok = empty }, \
		.offset = offsetof(struct conf, field)                                      \
	}

static const struct global_key global_keys[] = {
	KEY("random-device", OPTION_PATH, random_device, 0, 0, false),
	KEY("feed-interval", OPTION_UINT, feed_interval, 1, 86400, false),
	KEY("feed-bytes", OPTION_UINT, feed_bytes, 1, 2500, false),
	KEY("max-age", OPTION_UINT, max_age, 1, 86400, false),
	KEY("reseed", OPTION_BOOL, reseed, 0, 0, false),
	KEY("fill-watermark", OPTION_UINT, watermark, 0, 4096, false),
	KEY("entropy-count", OPTION_UINT, entropy_count, 1, 8, false),
	KEY("pid-file", OPTION_PATH, pid_file, 0, 0, true),
	KEY("user", OPTION_USER, user, 0, 0, true),
	KEY("group", OPTION_GROUP, group, 0, 0, true),
	KEY("ready-timeout", OPTION_UINT, ready_timeout, 0, 3600, false),
	KEY("status-file", OPTION_PATH, status_file, 0, 0, true),
	KEY("status-interval", OPTION_UINT, status_interval, 0, 86400, false),
	KEY("metrics-file", OPTION_PATH, metrics_file, 0, 0, true),
	KEY("metrics-interval", OPTION_UINT, metrics_interval, 0, 86400, false),
	KEY("stats-interval", OPTION_UINT, stats_interval, 0, 86400, false),
	KEY("force-output", OPTION_BOOL, force_output, 0, 0, false),
	{ .opt = { .key = "kernel-hwrng", .type = OPTION_CHOICE, .choices = kernel_hwrng_modes },
	  .offset = offsetof(struct conf, kernel_hwrng) },
};

#define N_GLOBAL_KEYS ARRAY_SIZE(global_keys)

static char **field_str(struct conf *c, const struct global_key *k)
{
	return (char **)((char *)c + k->offset);
}

static uint64_t *field_uint(struct conf *c, const struct global_key *k)
{
	return (uint64_t *)((char *)c + k->offset);
}

static bool *field_bool(struct conf *c, const struct global_key *k)
{
	return (bool *)((char *)c + k->offset);
}

static const struct global_key *find_global_key(const char *name)
{
	for (size_t i = 0; i < N_GLOBAL_KEYS; i++)
		if (strcmp(global_keys[i].opt.key, name) == 0)
			return &global_keys[i];
	return NULL;
}

/* Keys whose value is an allocated string (or NULL, or a static default). */
static bool is_string_key(const struct global_key *k)
{
	return k->opt.type != OPTION_UINT && k->opt.type != OPTION_BOOL;
}

static void set_why(char *why, size_t len, const char *fmt, ...) _printf_(3, 4);
static void set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/*
 * Error text "where[:line]: [key 'k': ]reason" into err. Returns r so that callers can
 * write "return fail(...)".
 */
static int fail(int r, char *err, size_t errlen, const char *where, unsigned int line,
		const char *key, const char *fmt, ...) _printf_(7, 8);
static int fail(int r, char *err, size_t errlen, const char *where, unsigned int line,
		const char *key, const char *fmt, ...)
{
	char reason[CONF_ERR_MAX];
	char at[24] = "";
	va_list ap;

	if (!err || errlen == 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(at, sizeof(at), ":%u", line);
	if (key)
		snprintf(err, errlen, "%s%s: key '%s': %s", where, at, key, reason);
	else
		snprintf(err, errlen, "%s%s: %s", where, at, reason);
	return r;
}

/*
 * Set one global key on c from value. All or nothing: on failure c is unchanged and why
 * says what is wrong with the value. keep_group: "user = NAME" leaves the group alone
 * (it was given by the 'group' key of the same file) instead of resetting it.
 */
static int set_global(struct conf *c, const struct global_key *k, const char *value,
		      bool keep_group, char *why, size_t len)
{
	char *str = NULL, *group = NULL;
	const char *colon;
	uint64_t u;
	bool b;
	int r;

	/* As for [source] lines (parse_source_key()): the value itself is the schema's. */
	if (*value == '\0' && !k->opt.empty_ok) {
		set_why(why, len, "empty value");
		return -EINVAL;
	}
	r = option_check_value(&k->opt, value, why, len);
		if (r < 0)
			return r;
	switch (k->opt.type) {
	case OPTION_UINT:
		if (parse_uint(value, 0, UINT64_MAX, &u) < 0)
			break;
		*field_uint(c, k) = u;
		return 0;
	case OPTION_BOOL:
		if (parse_bool(value, &b) < 0)
			break;
		*field_bool(c, k) = b;
		return 0;
	case OPTION_USER:
		colon = strchr(value, ':');
		if (*value != '\0') {
			str = colon ? strndup(value, (size_t)(colon - value)) : strdup(value);
			group = colon ? strdup(colon + 1) : NULL;
			if (!str || (colon && !group)) {
				free(str);
				free(group);
				goto nomem;
		}
	}
		free_str(&c->user);
		c->user = str;
		if (colon || !keep_group) {
			free_str(&c->group);
			c->group = group;
		}
		return 0;
	default:
		if (*value != '\0') {
			str = strdup(value);
			if (!str)
				goto nomem;
		}
		free_str(field_str(c, k));
		*field_str(c, k) = str;
		return 0;
	}
	set_why(why, len, "internal error: bad key type");
	return -EINVAL;

nomem:
	set_why(why, len, "out of memory");
	return -ENOMEM;
}

/* ---- public basics ---- */

void conf_init(struct conf *c, conf_check_fn check_section)
{
	*c = (struct conf){
		.check_section = check_section,
		.random_device = (char *)def_random_device,
		.feed_interval = 60,
		.feed_bytes = 64,
		.max_age = 60,
		.reseed = true,
		.watermark = 0,
		.entropy_count = 8,
		.pid_file = (char *)def_pid_file,
		.user = NULL,
		.group = NULL,
		.ready_timeout = 5,
		.status_file = (char *)def_status_file,
		.status_interval = 10,
		.metrics_file = NULL,
		.metrics_interval = 15,
		.stats_interval = 0,
		.kernel_hwrng = (char *)def_kernel_hwrng,
	};
}

void conf_free(struct conf *c)
{
	if (!c)
		return;
	free(c->path);
	for (size_t i = 0; i < N_GLOBAL_KEYS; i++)
		if (is_string_key(&global_keys[i]))
			free_str(field_str(c, &global_keys[i]));
	for (size_t i = 0; c->sections && i < c->n_sections; i++)
		conf_section_free(&c->sections[i]);
	free(c->sections);
	memset(c, 0, sizeof(*c));
}

/* Deep copy of src into dst (which is overwritten). */
static int conf_copy(struct conf *dst, const struct conf *src)
{
	*dst = *src;
	dst->path = NULL;
	dst->sections = NULL;
	dst->n_sections = 0;
	for (size_t i = 0; i < N_GLOBAL_KEYS; i++)
		if (is_string_key(&global_keys[i]))
			*field_str(dst, &global_keys[i]) = NULL;

	if (copy_str(&dst->path, src->path) < 0)
		goto nomem;
	for (size_t i = 0; i < N_GLOBAL_KEYS; i++) {
		const struct global_key *k = &global_keys[i];

		if (!is_string_key(k))
			continue;
		if (copy_str(field_str(dst, k), *field_str((struct conf *)src, k)) < 0)
			goto nomem;
	}
	if (src->n_sections > 0) {
		dst->sections = calloc(src->n_sections, sizeof(*dst->sections));
		if (!dst->sections)
			goto nomem;
		for (size_t i = 0; i < src->n_sections; i++) {
			if (conf_section_copy(&dst->sections[i], &src->sections[i]) < 0)
				goto nomem;
			dst->n_sections = i + 1;
		}
	}
	return 0;
nomem:
	conf_free(dst);
	return -ENOMEM;
}

/* The section of c called name, or NULL. */
static struct conf_section *conf_section_find(const struct conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_sections; i++)
		if (c->sections[i].name && strcmp(c->sections[i].name, name) == 0)
			return &c->sections[i];
	return NULL;
}

/* Append *s to c's sections, taking over what it owns (s is zeroed). */
static int conf_section_add(struct conf *c, struct conf_section *s)
{
	struct conf_section *n = realloc(c->sections, (c->n_sections + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	c->sections = n;
	c->sections[c->n_sections++] = *s;
	memset(s, 0, sizeof(*s));
	return 0;
}

const struct conf_section *conf_find_section(const struct conf *c, const char *name)
{
	return name ? conf_section_find(c, name) : NULL;
}

/* ---- parsing ---- */

/* Source names: printable, no blanks, no brackets (the source code checks the rest). */
static bool valid_source_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '[' || *s == ']')
			return false;
	return true;
}

/* What a parse found, beyond the values themselves. */
struct parse_state {
	struct conf *f;				/* what the text sets */
	const char *name;			/* for error messages */
	char *err;
	size_t errlen;
	int in;					/* IN_*: the section of the lines now */
	unsigned int key_line[N_GLOBAL_KEYS];	/* line where a global key was set, 0 = not */
	unsigned int user_group_line;		/* line of "user = U:G", 0 = none */
	unsigned int global_line;		/* line of [rngd], 0 = none */
};

enum { IN_NOTHING, IN_GLOBAL, IN_SOURCE };

/* inner: what is between the brackets, trimmed. */
static int parse_header(struct conf *f, struct parse_state *ps, const char *inner,
			unsigned int lineno, int *in, char *err, size_t errlen)
{
	struct conf_section s, *old;
	const char *name;

	if (strcmp(inner, "rngd") == 0) {
		if (ps->global_line)
			return fail(-EINVAL, err, errlen, ps->name, lineno, NULL,
				    "duplicate section '[rngd]' (first at line %u)",
				    ps->global_line);
		ps->global_line = lineno;
		*in = IN_GLOBAL;
		return 0;
	}
	if (strncmp(inner, "source", 6) != 0 ||
	    (inner[6] != '\0' && inner[6] != ' ' && inner[6] != '\t'))
		return fail(-EINVAL, err, errlen, ps->name, lineno, NULL, "unknown section '[%s]'",
			    inner);
	for (name = inner + 6; *name == ' ' || *name == '\t';)
		name++;
	if (!*name)
		return fail(-EINVAL, err, errlen, ps->name, lineno, NULL,
			    "section '[source]' needs a source name");
	if (!valid_source_name(name))
		return fail(-EINVAL, err, errlen, ps->name, lineno, NULL,
			    "invalid source name '%s'", name);
	old = conf_section_find(f, name);
	if (old)
		return fail(-EINVAL, err, errlen, ps->name, lineno, NULL,
			    "duplicate section '[source %s]' (first at line %u)", name, old->line);
	if (f->n_sections >= CONF_MAX_SECTIONS)
		return fail(-EINVAL, err, errlen, ps->name, lineno, NULL,
			    "too many sections (at most %d)", CONF_MAX_SECTIONS);
	if (conf_section_init(&s, name, lineno) < 0 || conf_section_add(f, &s) < 0) {
		conf_section_free(&s);
		return fail(-ENOMEM, err, errlen, ps->name, lineno, NULL, "out of memory");
	}
	*in = IN_SOURCE;
	return 0;
}

static int parse_global_key(struct conf *f, struct parse_state *ps, const char *key,
			    const char *value, unsigned int lineno, char *err, size_t errlen)
{
	const struct global_key *k = find_global_key(key);
	char why[CONF_ERR_MAX];
	size_t idx;
	int r;

	if (!k)
		return fail(-EINVAL, err, errlen, ps->name, lineno, key, "unknown key in [rngd]");
	idx = (size_t)(k - global_keys);
	if (ps->key_line[idx])
		return fail(-EINVAL, err, errlen, ps->name, lineno, key,
			    "duplicate key (first at line %u)", ps->key_line[idx]);
	/* "user = U:G" and "group = G" both set the group. */
	if (k->opt.type == OPTION_GROUP && ps->user_group_line)
		return fail(-EINVAL, err, errlen, ps->name, lineno, key,
			    "group already set by 'user' at line %u", ps->user_group_line);
	if (k->opt.type == OPTION_USER && strchr(value, ':')) {
		const struct global_key *g = find_global_key("group");
		unsigned int gl = ps->key_line[g - global_keys];

		if (gl)
			return fail(-EINVAL, err, errlen, ps->name, lineno, key,
				    "group already set by 'group' at line %u", gl);
		ps->user_group_line = lineno;
	}
	r = set_global(f, k, value, true, why, sizeof(why));
	if (r < 0)
		return fail(r, err, errlen, ps->name, lineno, key, "%s", why);
	ps->key_line[idx] = lineno;
	return 0;
}

static int parse_source_key(struct conf *f, struct parse_state *ps, const char *key,
			    const char *value, unsigned int lineno, char *err, size_t errlen)
{
	struct conf_section *s = &f->sections[f->n_sections - 1];
	struct conf_kv *kv = conf_section_find_kv(s, key);

	if (kv)
		return fail(-EINVAL, err, errlen, ps->name, lineno, key,
			    "duplicate key (first at line %u)", kv->line);
	if (!*value)
		return fail(-EINVAL, err, errlen, ps->name, lineno, key, "empty value");
	if (s->n_kv >= CONF_MAX_KEYS)
		return fail(-EINVAL, err, errlen, ps->name, lineno, NULL,
			    "too many keys in section (at most %d)", CONF_MAX_KEYS);
	if (conf_section_set(s, key, value, lineno) < 0)
		return fail(-ENOMEM, err, errlen, ps->name, lineno, NULL, "out of memory");
	return 0;
}

/* One header or pair of the text (ini_fn). */
static int parse_line(void *ctx, unsigned int lineno, char *section, const char *key,
		      const char *value)
{
	struct parse_state *ps = ctx;

	if (section)
		return parse_header(ps->f, ps, section, lineno, &ps->in, ps->err, ps->errlen);
	if (ps->in == IN_GLOBAL)
		return parse_global_key(ps->f, ps, key, value, lineno, ps->err, ps->errlen);
	return parse_source_key(ps->f, ps, key, value, lineno, ps->err, ps->errlen);
}

/* Parse text into f, which holds only what the text sets. */
static int parse(struct conf *f, struct parse_state *ps, const char *text, size_t len, char *err,
		 size_t errlen)
{
	char why[CONF_ERR_MAX];
	unsigned int line = 0;
	int r;

	ps->f = f;
	ps->err = err;
	ps->errlen = errlen;
	ps->in = IN_NOTHING;
	r = ini_parse(text, len, parse_line, ps, &line, why, sizeof(why));
	if (r < 0 && why[0]) /* a syntax error; the others said why themselves */
		return fail(r, err, errlen, ps->name, line, NULL, "%s", why);
	return r;
}

/* Error text for a section that the section check rejected. */
static int fail_section(char *err, size_t errlen, const char *where, bool with_line,
			const struct conf_section *s, const struct conf_kv *bad, const char *why)
{
	unsigned int line = 0;

	if (with_line)
		line = bad && bad->line ? bad->line : s->line;
	return fail(-EINVAL, err, errlen, where, line, bad ? bad->key : NULL, "%s", why);
}

/* The caller's check of a [source] section; without one, no source section is accepted. */
static int check_section(const struct conf *c, const struct conf_section *s,
			 const struct conf_kv **bad, char *why, size_t len)
{
	*bad = NULL;
	if (!c->check_section) {
		set_why(why, len, "no source sections here");
		return -EINVAL;
	}
	return c->check_section(s, bad, why, len);
}

/* Merge what the file set (f) into tmp and validate the source sections it touched. */
static int merge(struct conf *tmp, struct conf *f, const struct parse_state *ps, char *err,
		 size_t errlen)
{
	for (size_t i = 0; i < N_GLOBAL_KEYS; i++) {
		const struct global_key *k = &global_keys[i];
		bool set = ps->key_line[i] != 0;

		/* "user = U" also sets the group (to U's primary group unless given). */
		if (k->opt.type == OPTION_GROUP)
			set = set || ps->key_line[find_global_key("user") - global_keys];
		if (!set)
			continue;
		switch (k->opt.type) {
		case OPTION_UINT:
			*field_uint(tmp, k) = *field_uint(f, k);
			break;
		case OPTION_BOOL:
			*field_bool(tmp, k) = *field_bool(f, k);
			break;
		default:
			free_str(field_str(tmp, k));
			*field_str(tmp, k) = *field_str(f, k);
			*field_str(f, k) = NULL;
			break;
		}
	}

	for (size_t i = 0; i < f->n_sections; i++) {
		struct conf_section *fs = &f->sections[i];
		struct conf_section *ts = conf_section_find(tmp, fs->name);
		const struct conf_kv *bad = NULL;
		char why[CONF_ERR_MAX] = "";

		if (!ts) {
			if (conf_section_add(tmp, fs) < 0)
				return fail(-ENOMEM, err, errlen, ps->name, 0, NULL,
					    "out of memory");
			ts = &tmp->sections[tmp->n_sections - 1];
		} else {
			ts->line = fs->line;
			for (size_t j = 0; j < fs->n_kv; j++) {
				if (conf_section_set_owned(ts, fs->kv[j].key, fs->kv[j].value,
						      fs->kv[j].line) < 0)
					return fail(-ENOMEM, err, errlen, ps->name, 0, NULL,
						    "out of memory");
				fs->kv[j].key = NULL;
				fs->kv[j].value = NULL;
			}
		}
		if (check_section(tmp, ts, &bad, why, sizeof(why)) < 0)
			return fail_section(err, errlen, ps->name, true, ts, bad, why);
	}
	return 0;
}

static int load(struct conf *c, const char *name, const char *text, size_t len, const char *path,
		char *err, size_t errlen)
{
	struct parse_state ps = { .name = name };
	struct conf f, tmp;
	int r;

	/* f starts empty rather than with defaults: only what the text sets is merged. */
	memset(&f, 0, sizeof(f));
	r = parse(&f, &ps, text, len, err, errlen);
	if (r < 0)
		goto out;
	r = conf_copy(&tmp, c);
	if (r < 0) {
		fail(r, err, errlen, name, 0, NULL, "out of memory");
		goto out;
	}
	if (path) {
		free(tmp.path);
		tmp.path = strdup(path);
		if (!tmp.path) {
			r = fail(-ENOMEM, err, errlen, name, 0, NULL, "out of memory");
			conf_free(&tmp);
			goto out;
		}
	}
	r = merge(&tmp, &f, &ps, err, errlen);
	if (r < 0) {
		conf_free(&tmp);
		goto out;
	}
	conf_free(c);
	*c = tmp;
out:
	conf_free(&f);
	return r;
}

int conf_load_string(struct conf *c, const char *name, const char *text, size_t len, char *err,
		     size_t errlen)
{
	if (!name)
		name = "<string>";
	if (len > CONF_MAX_FILE)
		return fail(-EINVAL, err, errlen, name, 0, NULL, "too large (more than %d bytes)",
			    CONF_MAX_FILE);
	return load(c, name, len ? text : "", len, NULL, err, errlen);
}

int conf_load_file(struct conf *c, const char *path, char *err, size_t errlen)
{
	_cleanup_(closep) int fd = -1;
	_cleanup_(freep) char *buf = NULL;
	struct stat st;
	size_t size;
	ssize_t n;

	/*
	 * O_NONBLOCK: a FIFO (or a device) named as the configuration must not hang
	 * --check-config or a reload until a writer appears; only a regular file is read.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int r = -errno;

		return fail(r, err, errlen, path, 0, NULL, "%s", strerror(-r));
	}
	if (fstat(fd, &st) < 0) {
		int r = -errno;

		return fail(r, err, errlen, path, 0, NULL, "%s", strerror(-r));
	}
	if (!S_ISREG(st.st_mode))
		return fail(-EINVAL, err, errlen, path, 0, NULL, "not a regular file");
	/*
	 * The file's size and one byte more, to see it grow since fstat(): then up to the limit
	 * and one byte more, to tell "exactly the limit" from "too large". Never the limit's
	 * 1 MiB for a small file: freeing that much raises glibc's mmap threshold for good.
	 */
	size = (size_t)MIN((uint64_t)st.st_size, (uint64_t)CONF_MAX_FILE) + 1;
	buf = malloc(size);
	if (!buf)
		return fail(-ENOMEM, err, errlen, path, 0, NULL, "out of memory");
	n = read_full(fd, buf, size);
	if (n == (ssize_t)size && size <= CONF_MAX_FILE) {
		char *grown = realloc(buf, CONF_MAX_FILE + 1);
		ssize_t more;

		if (!grown)
			return fail(-ENOMEM, err, errlen, path, 0, NULL, "out of memory");
		buf = grown;
		more = read_full(fd, buf + size, CONF_MAX_FILE + 1 - size);
		n = more < 0 ? more : n + more;
	}
	if (n < 0)
		return fail((int)n, err, errlen, path, 0, NULL, "%s", strerror((int)-n));
	if (n > CONF_MAX_FILE)
		return fail(-EINVAL, err, errlen, path, 0, NULL, "too large (more than %d bytes)",
			    CONF_MAX_FILE);
	return load(c, path, buf, (size_t)n, path, err, errlen);
}

int conf_set(struct conf *c, const char *key, const char *value, const char *where, char *err,
	     size_t errlen)
{
	const struct global_key *k;
	char why[CONF_ERR_MAX];
	int r;

	if (!where)
		where = "command line";
	if (!key || !ini_valid_key(key))
		return fail(-EINVAL, err, errlen, where, 0, NULL, "invalid key '%s'",
			    key ? key : "");
	k = find_global_key(key);
	if (!k)
		return fail(-EINVAL, err, errlen, where, 0, key, "unknown key");
	r = set_global(c, k, value ? value : "", false, why, sizeof(why));
	if (r < 0)
		return fail(r, err, errlen, where, 0, key, "%s", why);
	return 0;
}

int conf_set_source(struct conf *c, const char *source, const char *key, const char *value,
		    const char *where, char *err, size_t errlen)
{
	struct conf_section *old, cand;
	const struct conf_kv *bad = NULL;
	char why[CONF_ERR_MAX] = "";
	int r;

	if (!where)
		where = "command line";
	if (!source || !valid_source_name(source))
		return fail(-EINVAL, err, errlen, where, 0, NULL, "invalid source name '%s'",
			    source ? source : "");
	if (!key || !ini_valid_key(key))
		return fail(-EINVAL, err, errlen, where, 0, NULL, "invalid key '%s'",
			    key ? key : "");
	if (!value || !*value)
		return fail(-EINVAL, err, errlen, where, 0, key, "empty value");

	old = conf_section_find(c, source);
	r = old ? conf_section_copy(&cand, old) : conf_section_init(&cand, source, 0);
	if (r < 0)
		return fail(r, err, errlen, where, 0, NULL, "out of memory");
	r = conf_section_set(&cand, key, value, 0);
	if (r < 0) {
		conf_section_free(&cand);
		return fail(r, err, errlen, where, 0, NULL, "out of memory");
	}
	if (check_section(c, &cand, &bad, why, sizeof(why)) < 0) {
		r = fail_section(err, errlen, where, false, &cand, bad, why);
		conf_section_free(&cand);
		return r;
	}
	if (old) {
		conf_section_free(old);
		*old = cand;
		return 0;
	}
	r = conf_section_add(c, &cand);
	if (r < 0) {
		conf_section_free(&cand);
		return fail(r, err, errlen, where, 0, NULL, "out of memory");
	}
	return 0;
}
