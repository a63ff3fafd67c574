// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngd --import-rng-tools [FILE]: an rng-tools environment file, read as data (envfile.h),
 * turned into the equivalent rngd.conf on standard output, with a comment for each thing it
 * drops and why. Each variable's words go through the command line's own parser
 * (cmdline_parse_args(), with rng-tools-debian's letters for its RNGDOPTIONS); what that
 * makes is checked against the configuration's rules one setting at a time, and the whole
 * output is parsed again before it is printed.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "conf.h"
#include "envfile.h"
#include "import.h"
#include "ini.h"
#include "log.h"
#include "source.h"
#include "util.h"

/* Where distributions keep rng-tools' settings, in the order they are looked for. */
static const char *const known_files[] = {
	"/etc/default/rng-tools-debian", /* Debian's rng-tools-debian: HRNGDEVICE, RNGDOPTIONS */
	"/etc/default/rng-tools",	 /* OpenEmbedded: EXTRA_ARGS */
	"/etc/sysconfig/rngd",		 /* Fedora, RHEL, dracut: RNGD_ARGS */
	"/etc/conf.d/rngd",		 /* Alpine and Gentoo's variables, Arch's RNGD_OPTS */
	"/etc/default/rngd",		 /* Buildroot: DAEMON_ARGS */
};

/* How a variable becomes command-line words. */
enum var_kind {
	ARGS,	     /* rng-tools 6 options, split on blanks */
	ARGS_DEBIAN, /* rng-tools-debian 2.3 options */
	ONE,	     /* opt VALUE */
	EACH,	     /* opt WORD for each word */
	HRNGDEVICE,  /* -r VALUE; /dev/null: no hwrng */
	HRNGSELECT,  /* the hwrng backend to select */
};

static const struct {
	const char *name;
	enum var_kind kind;
	const char *opt;
} known_vars[] = {
	{ "RNGDOPTIONS", ARGS_DEBIAN, NULL },
	{ "HRNGDEVICE", HRNGDEVICE, NULL },
	{ "HRNGSELECT", HRNGSELECT, NULL },
	{ "EXTRA_ARGS", ARGS, NULL },
	{ "RNGD_ARGS", ARGS, NULL },
	{ "RNGD_OPTS", ARGS, NULL },
	{ "DAEMON_ARGS", ARGS, NULL },
	/* Alpine's and Gentoo's /etc/conf.d/rngd, which their init script turns into options. */
	{ "INCLUDE_ENTROPY_SOURCES", EACH, "-n" },
	{ "EXCLUDE_ENTROPY_SOURCES", EACH, "-x" },
	{ "ENTROPY_COUNT", ONE, "-e" },
	{ "FORCE_RESEED", ONE, "-R" },
	{ "HWRNG_DEVICE", ONE, "-r" },
	{ "RANDOM_DEVICE", ONE, "-o" },
	{ "STEP", ONE, "-s" },
	{ "WATERMARK", ONE, "-W" },
};

#define MAX_WORDS 1024
#define MAX_ECHO 400 /* bytes of text in a comment line */

/* One setting of the output, in the order first set; a later one replaces the value. */
struct setting {
	char *section; /* NULL: [rngd] */
	char *key;
	char *value;
};

struct import {
	const char *path;
	struct conf check; /* the settings so far, checked as the configuration would be */
	struct setting *set;
	size_t n_set;
	FILE *comments; /* the dropped lines' comments */
	char *comments_text;
	size_t comments_len;
	unsigned int n_dropped;
};

/* Text from the file, fit for a comment line: bounded, blanks for tabs, '?' for non-ASCII. */
static void echo(FILE *f, const char *s)
{
	size_t n = 0;

	for (; *s && n < MAX_ECHO; s++, n++) {
		unsigned char c = (unsigned char)*s;

		fputc(c >= 0x80 ? '?' : c < 0x20 ? ' ' : c, f);
	}
	if (*s)
		fputs("...", f);
}

static void drop(struct import *im, unsigned int line, const char *var, const char *what,
		 const char *why)
{
	fprintf(im->comments, "# %s:%u: ", im->path, line);
	if (var)
		fprintf(im->comments, "%s: ", var);
	if (what) {
		echo(im->comments, what);
		fputs(": ", im->comments);
	}
	echo(im->comments, why);
	fputc('\n', im->comments);
	im->n_dropped++;
}

/* Whether "key = value" reads back as exactly that value. */
static int read_back(void *ctx, unsigned int line, char *section, const char *key,
		     const char *value)
{
	(void)line;
	(void)key;
	if (!section && strcmp(value, ctx) != 0)
		return -EINVAL;
	return 0;
}

static bool representable(const char *key, const char *value)
{
	char buf[INI_MAX_LINE], why[128];
	unsigned int line;
	int n = snprintf(buf, sizeof(buf), "[s]\n%s = %s\n", key, value);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return false;
	return ini_parse(buf, (size_t)n, read_back, (void *)value, &line, why, sizeof(why)) == 0;
}

static int keep(struct import *im, const struct override *ov)
{
	struct setting *s;

	for (size_t i = 0; i < im->n_set; i++) {
		s = &im->set[i];
		if (strcmp(s->key, ov->key) == 0 &&
		    (s->section && ov->source ? strcmp(s->section, ov->source) == 0
					      : !s->section && !ov->source)) {
			char *v = strdup(ov->value);

			if (!v)
				return -ENOMEM;
			free(s->value);
			s->value = v;
			return 0;
		}
	}
	s = realloc(im->set, (im->n_set + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	im->set = s;
	s = &s[im->n_set];
	s->section = ov->source ? strdup(ov->source) : NULL;
	s->key = strdup(ov->key);
	s->value = strdup(ov->value);
	im->n_set++;
	if ((ov->source && !s->section) || !s->key || !s->value)
		return -ENOMEM;
	return 0;
}

/* What a parse made of one variable's words: settings, notices, and what has no key. */
static int take(struct import *im, unsigned int line, const char *var, struct options *o)
{
	char err[CONF_ERR_MAX];
	int r;

	for (size_t i = 0; i < o->n_notices; i++)
		drop(im, line, var, NULL, o->notices[i].text);
	for (size_t i = 0; i < o->n_ov; i++) {
		const struct override *ov = &o->ov[i];
		char what[300];

		snprintf(what, sizeof(what), "%s %s%s%s = %s", ov->where,
			 ov->source ? ov->source : "", ov->source ? " " : "", ov->key, ov->value);
		r = ov->source
			    ? conf_set_source(&im->check, ov->source, ov->key, ov->value, ov->where,
					      err, sizeof(err))
			    : conf_set(&im->check, ov->key, ov->value, ov->where, err, sizeof(err));
		if (r < 0) {
			drop(im, line, var, NULL, err);
			continue;
		}
		if (!representable(ov->key, ov->value)) {
			drop(im, line, var, what,
			     "the value cannot be written in rngd.conf (blanks at its ends, control "
			     "or non-UTF-8 bytes)");
			continue;
		}
		r = keep(im, ov);
		if (r < 0)
			return r;
	}
	if (o->foreground_said)
		drop(im, line, var, "-f/-b",
		     "whether rngd forks is the service's choice (the unit runs it with -f)");
	if (o->log_level_said)
		drop(im, line, var, "-d/-q",
		     "the log level is set on the command line, not in rngd.conf");
	if (o->config_explicit)
		drop(im, line, var, o->config_path,
		     "a configuration file of its own: merge it by hand");
	if (o->ignore_fail)
		drop(im, line, var, "-i",
		     "nothing to do: a source is never disabled for good after FIPS failures");
	if (o->test_mode || o->list || o->check_config || o->once || o->status || o->dump ||
	    o->version || o->help || o->hrng_help || o->print_options || o->print_compat ||
	    o->restore_kernel_hwrng || o->grant_kernel_hwrng || o->import)
		drop(im, line, var, "-t/-l/-v/...", "a mode of the command, not configuration");
	return 0;
}

/* Split value on blanks into words[1..]; words[0] is the program. The count, or -E2BIG. */
static int split(char *value, char **words)
{
	int n = 1;

	words[0] = (char *)"rngd";
	for (char *w = strtok(value, " \t\r\n"); w; w = strtok(NULL, " \t\r\n")) {
		if (n >= MAX_WORDS - 1)
			return -E2BIG;
		words[n++] = w;
	}
	words[n] = NULL;
	return n;
}

/*
 * Parse the words; an option the parser refuses is dropped with its reason, and the rest
 * is parsed again (each round drops at least one word).
 */
static int translate(struct import *im, unsigned int line, const char *var, char **words, int n,
		     bool debian)
{
	char err[512], what[MAX_ECHO + 1];

	while (n > 1) {
		struct options o = { 0 };
		int r = cmdline_parse_args(&o, n, words, debian, err, sizeof(err));

		if (r == 0) {
			r = take(im, line, var, &o);
			cmdline_free(&o);
			return r;
		}
		if (o.bad_first < 1 || o.bad_end > n || o.bad_first >= o.bad_end) {
			drop(im, line, var, NULL, err);
			cmdline_free(&o);
			return 0;
		}
		what[0] = '\0';
		for (int i = o.bad_first; i < o.bad_end; i++) {
			size_t l = strlen(what);

			snprintf(what + l, sizeof(what) - l, "%s%s", l ? " " : "", words[i]);
		}
		drop(im, line, var, what, err);
		memmove(&words[o.bad_first], &words[o.bad_end],
			(size_t)(n + 1 - o.bad_end) * sizeof(*words));
		n -= o.bad_end - o.bad_first;
		cmdline_free(&o);
	}
	return 0;
}

/* Whether name is SRC_OPTIONS (Alpine: "key:value" words for -O src:key:value); src set. */
static bool source_options_var(const char *name, char *src, size_t len)
{
	size_t n = strlen(name), s = strlen("_OPTIONS");

	if (n <= s || n - s >= len || strcmp(name + n - s, "_OPTIONS") != 0)
		return false;
	for (size_t i = 0; i < n - s; i++)
		src[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
	src[n - s] = '\0';
	return true;
}

/* One assignment of the file. */
static int import_var(struct import *im, const struct envfile_var *v)
{
	char *value, *words[MAX_WORDS], **args = NULL, src[64];
	int n, r = 0, kind = -1;
	const char *opt = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(known_vars); i++)
		if (strcmp(v->name, known_vars[i].name) == 0) {
			kind = (int)known_vars[i].kind;
			opt = known_vars[i].opt;
		}
	if (kind < 0 && source_options_var(v->name, src, sizeof(src)))
		kind = EACH;
	if (kind < 0) {
		drop(im, v->line, v->name, NULL, "not an rng-tools variable");
		return 0;
	}
	value = strdup(v->value);
	if (!value)
		return -ENOMEM;
	n = split(value, words);
	if (n < 0) {
		drop(im, v->line, v->name, NULL, "more than 1000 words");
		goto out;
	}
	if (n == 1)
		goto out; /* empty: nothing to carry over */
	if (kind == ARGS || kind == ARGS_DEBIAN) {
		r = translate(im, v->line, v->name, words, n, kind == ARGS_DEBIAN);
		goto out;
	}
	/* The words an init script would have made of it: at most two per word. */
	args = calloc((size_t)n * 2 + 2, sizeof(*args));
	if (!args) {
		r = -ENOMEM;
		goto out;
	}
	args[0] = (char *)"rngd";
	if (kind == HRNGDEVICE && strcmp(v->value, "/dev/null") == 0) {
		/* rng-tools-debian's way to read no device (with its PadLock driver). */
		args[1] = (char *)"-x";
		args[2] = (char *)"hwrng";
		r = translate(im, v->line, v->name, args, 3, false);
	} else if (kind == HRNGDEVICE || kind == HRNGSELECT || kind == ONE) {
		char *arg = NULL;

		if (kind == HRNGSELECT && asprintf(&arg, "hwrng:backend:%s", words[1]) < 0) {
			r = -ENOMEM;
			goto out;
		}
		args[1] = (char *)(kind == HRNGDEVICE ? "-r" : kind == HRNGSELECT ? "-O" : opt);
		args[2] = arg ? arg : words[1];
		if (n > 2)
			drop(im, v->line, v->name, v->value,
			     "one value expected; only the first taken");
		r = translate(im, v->line, v->name, args, 3, false);
		free(arg);
	} else {
		char **made = calloc((size_t)n, sizeof(*made));
		int m = 1;

		if (!made) {
			r = -ENOMEM;
			goto out;
		}
		for (int i = 1; i < n && r == 0; i++) {
			args[m++] = (char *)(opt ? opt : "-O");
			if (!opt && asprintf(&made[i], "%s:%s", src, words[i]) < 0)
				r = -ENOMEM;
			args[m++] = opt ? words[i] : made[i];
		}
		if (r == 0)
			r = translate(im, v->line, v->name, args, m, false);
		for (int i = 1; i < n; i++)
			free(made[i]);
		free(made);
	}
out:
	free(args);
	free(value);
	return r;
}

/* As the shell sees it: of a variable set several times, the last value counts. */
static int import_var_last(struct import *im, const struct envfile *ef, size_t i)
{
	const struct envfile_var *v = &ef->vars[i];
	char why[64];

	for (size_t j = i + 1; j < ef->n_vars; j++)
		if (strcmp(ef->vars[j].name, v->name) == 0) {
			snprintf(why, sizeof(why), "set again on line %u: the last value counts",
				 ef->vars[j].line);
			drop(im, v->line, v->name, NULL, why);
			return 0;
		}
	return import_var(im, v);
}

static void print_section(FILE *f, const struct import *im, const char *section)
{
	bool header = false;

	for (size_t i = 0; i < im->n_set; i++) {
		const struct setting *s = &im->set[i];

		if (section ? !s->section || strcmp(s->section, section) != 0 : s->section != NULL)
			continue;
		if (!header)
			fprintf(f, "\n[%s%s]\n", section ? "source " : "rngd",
				section ? section : "");
		header = true;
		fprintf(f, "%s = %s\n", s->key, s->value);
	}
}

/* The whole rngd.conf into a buffer. 0 or -ENOMEM. */
static int render(struct import *im, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "# rngd.conf made by 'rngd --import-rng-tools' from %s\n", im->path);
	fprintf(f, "# (rngd(8), MIGRATING FROM RNG-TOOLS; rngd.conf(5)).\n");
	if (im->n_dropped) {
		fprintf(f, "#\n# Not carried over, and why:\n");
		fwrite(im->comments_text, 1, im->comments_len, f);
	} else {
		fprintf(f, "# Everything in it was carried over.\n");
	}
	print_section(f, im, NULL);
	for (size_t i = 0; i < im->n_set; i++) {
		bool first = true;

		if (!im->set[i].section)
			continue;
		for (size_t j = 0; j < i; j++)
			if (im->set[j].section &&
			    strcmp(im->set[j].section, im->set[i].section) == 0)
				first = false;
		if (first)
			print_section(f, im, im->set[i].section);
	}
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

static const char *find_known_file(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_files); i++)
		if (access(known_files[i], F_OK) == 0)
			return known_files[i];
	return NULL;
}

int import_rng_tools(const char *path, FILE *out)
{
	struct import im = { 0 };
	struct envfile ef = { 0 };
	char why[512], err[CONF_ERR_MAX], *text = NULL, *conf_text = NULL;
	size_t len, conf_len = 0;
	int r, ret = EXIT_RUNTIME;

	if (!path)
		path = find_known_file();
	if (!path) {
		log_error("--import-rng-tools: no rng-tools configuration here (looked for %s, %s, "
			  "%s, %s, %s)",
			  known_files[0], known_files[1], known_files[2], known_files[3],
			  known_files[4]);
		return EXIT_RUNTIME;
	}
	im.path = path;
	r = envfile_read(path, &text, &len, why, sizeof(why));
	if (r < 0) {
		log_error("--import-rng-tools: %s", why);
		return EXIT_RUNTIME;
	}
	conf_init(&im.check, source_check_section);
	im.comments = open_memstream(&im.comments_text, &im.comments_len);
	r = im.comments ? envfile_parse(text, len, &ef) : -ENOMEM;
	/* Notes and assignments in line order: each note's line has no assignment. */
	for (size_t v = 0, n = 0; r == 0 && (v < ef.n_vars || n < ef.n_notes);) {
		if (n < ef.n_notes && (v >= ef.n_vars || ef.notes[n].line < ef.vars[v].line)) {
			drop(&im, ef.notes[n].line, NULL, NULL, ef.notes[n].text);
			n++;
		} else {
			r = import_var_last(&im, &ef, v++);
		}
	}
	if (im.comments && fclose(im.comments) != 0 && r == 0)
		r = -ENOMEM;
	im.comments = NULL;
	if (r == 0)
		r = render(&im, &conf_text, &conf_len);
	if (r < 0) {
		log_error("--import-rng-tools: %s", strerror(-r));
		goto out;
	}
	/* What is printed must load as it is. */
	conf_free(&im.check);
	conf_init(&im.check, source_check_section);
	if (conf_load_string(&im.check, "output", conf_text, conf_len, err, sizeof(err)) < 0) {
		log_error("--import-rng-tools: internal error: the output does not load: %s", err);
		goto out;
	}
	if (fwrite(conf_text, 1, conf_len, out) != conf_len || fflush(out) != 0) {
		log_error("--import-rng-tools: cannot write the output: %m");
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < im.n_set; i++) {
		free(im.set[i].section);
		free(im.set[i].key);
		free(im.set[i].value);
	}
	free(im.set);
	free(im.comments_text);
	conf_free(&im.check);
	envfile_free(&ef);
	free(conf_text);
	free(text);
	return ret;
}
