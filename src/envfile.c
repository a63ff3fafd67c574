// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shell-style environment files as data (envfile.h). One pass over the text with a cursor;
 * a value is built in a growing buffer; any construct that would need a shell to run
 * something stops that line with a note, and the parse goes on at the next line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envfile.h"

static void set_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m)   ? "a FIFO"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

int envfile_read(const char *path, char **text, size_t *len, char *why, size_t why_len)
{
	size_t got = 0;
	struct stat st;
	char *buf;
	int fd, r;

	*text = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO must not hold the open until a writer comes. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		set_why(why, why_len, "cannot open '%s': %s", path, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		set_why(why, why_len, "cannot stat '%s': %s", path, strerror(errno));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		set_why(why, why_len, "'%s' is %s, not a regular file", path, kind_of(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	buf = malloc(ENVFILE_MAX_SIZE + 2);
	if (!buf) {
		close(fd);
		set_why(why, why_len, "out of memory");
		return -ENOMEM;
	}
	/* The size stat gives is not trusted (it grows, /proc says 0): read one byte too many. */
	while (got < ENVFILE_MAX_SIZE + 1) {
		ssize_t n = read(fd, buf + got, ENVFILE_MAX_SIZE + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			set_why(why, why_len, "cannot read '%s': %s", path, strerror(errno));
			free(buf);
			close(fd);
			return r;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got > ENVFILE_MAX_SIZE) {
		set_why(why, why_len, "'%s' is larger than %d KiB: not an environment file", path,
			ENVFILE_MAX_SIZE / 1024);
		free(buf);
		return -EFBIG;
	}
	for (size_t i = 0; i < got; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
			unsigned int line = 1;

			for (size_t j = 0; j < i; j++)
				line += buf[j] == '\n';
			set_why(why, why_len,
				"'%s':%u: control byte 0x%02x: a binary file, not an environment file",
				path, line, c);
			free(buf);
			return -EINVAL;
		}
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

/* The parse's cursor and the value being built. */
struct cursor {
	const char *p, *end;
	unsigned int line;
	char *val;
	size_t n, cap;
	const char *why; /* set when the line cannot be taken */
	const struct envfile *ef;
};

static int put(struct cursor *c, const char *s, size_t n)
{
	if (c->n + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 64;
		char *v;

		while (cap < c->n + n + 1)
			cap *= 2;
		v = realloc(c->val, cap);
		if (!v)
			return -ENOMEM;
		c->val = v;
		c->cap = cap;
	}
	memcpy(c->val + c->n, s, n);
	c->n += n;
	c->val[c->n] = '\0';
	return 0;
}

static bool is_name_start(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

static bool is_name_char(char ch)
{
	return is_name_start(ch) || (ch >= '0' && ch <= '9');
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* The next byte, counting lines. */
static char next(struct cursor *c)
{
	char ch = *c->p++;

	if (ch == '\n')
		c->line++;
	return ch;
}

/* $NAME or ${NAME} at c->p (just after the '$'): the earlier value, or a why. */
static int expand(struct cursor *c)
{
	const char *start, *v;
	bool braced = false;
	char name[128];
	size_t n;

	if (c->p < c->end && (*c->p == '(' || *c->p == '[')) {
		c->why = "command substitution and arithmetic are not run";
		return 0;
	}
	if (c->p < c->end && *c->p == '{') {
		braced = true;
		c->p++;
	}
	start = c->p;
	while (c->p < c->end && is_name_char(*c->p))
		c->p++;
	n = (size_t)(c->p - start);
	if (n == 0 && !braced)
		return put(c, "$", 1); /* a lone '$' is itself, as in the shell */
	if (n == 0 || !is_name_start(*start) || n >= sizeof(name) ||
	    (braced && (c->p >= c->end || *c->p != '}'))) {
		c->why = "only $NAME and ${NAME} expansions are read";
		return 0;
	}
	if (braced)
		c->p++;
	memcpy(name, start, n);
	name[n] = '\0';
	v = envfile_get(c->ef, name, 0);
	/* Unset is empty, as in the shell; the environment is not this file's to read. */
	return v ? put(c, v, strlen(v)) : 0;
}

/* '...' after its opening quote. */
static int single_quoted(struct cursor *c)
{
	const char *start = c->p;

	while (c->p < c->end && *c->p != '\'')
		next(c);
	if (c->p >= c->end) {
		c->why = "a quote is not closed";
		return 0;
	}
	c->p++;
	return put(c, start, (size_t)(c->p - 1 - start));
}

/* "..." after its opening quote: backslash escapes $ ` " \ and the line end only. */
static int double_quoted(struct cursor *c)
{
	int r = 0;

	while (r == 0 && !c->why) {
		char ch;

		if (c->p >= c->end) {
			c->why = "a quote is not closed";
			break;
		}
		ch = next(c);
		if (ch == '"')
			break;
		if (ch == '\\' && c->p < c->end && strchr("$`\"\\\n", *c->p)) {
			ch = next(c);
			if (ch != '\n')
				r = put(c, &ch, 1);
		} else if (ch == '$') {
			r = expand(c);
		} else if (ch == '`') {
			c->why = "command substitution is not run";
		} else {
			r = put(c, &ch, 1);
		}
	}
	return r;
}

/* The value after '=', up to an unquoted blank or the line end. */
static int value(struct cursor *c)
{
	int r = 0;

	while (r == 0 && !c->why && c->p < c->end) {
		char ch = *c->p;

		if (is_blank(ch) || ch == '\n')
			break;
		next(c);
		if (ch == '\'')
			r = single_quoted(c);
		else if (ch == '"')
			r = double_quoted(c);
		else if (ch == '\\') {
			if (c->p < c->end) {
				ch = next(c);
				if (ch != '\n')
					r = put(c, &ch, 1);
			}
		} else if (ch == '$')
			r = expand(c);
		else if (ch == '`')
			c->why = "command substitution is not run";
		else if (strchr(";&|<>()", ch))
			c->why = "shell syntax is not run";
		else
			r = put(c, &ch, 1);
	}
	return r;
}

static int add_note(struct envfile *ef, unsigned int line, const char *text)
{
	struct envfile_note *n = realloc(ef->notes, (ef->n_notes + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	ef->notes = n;
	n[ef->n_notes].line = line;
	n[ef->n_notes].text = strdup(text);
	if (!n[ef->n_notes].text)
		return -ENOMEM;
	ef->n_notes++;
	return 0;
}

static int add_var(struct envfile *ef, const char *name, size_t name_len, struct cursor *c,
		   unsigned int line)
{
	struct envfile_var *v = realloc(ef->vars, (ef->n_vars + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	ef->vars = v;
	v = &v[ef->n_vars];
	v->name = strndup(name, name_len);
	v->value = c->val ? c->val : strdup("");
	v->line = line;
	c->val = NULL;
	c->n = c->cap = 0;
	if (!v->name || !v->value) {
		free(v->name);
		free(v->value);
		return -ENOMEM;
	}
	ef->n_vars++;
	return 0;
}

/* Skip to the start of the next physical line. */
static void skip_line(struct cursor *c)
{
	while (c->p < c->end && next(c) != '\n')
		;
}

/* One logical line at c->p (blanks skipped): an assignment, a comment, or a note. */
static int statement(struct cursor *c, struct envfile *ef)
{
	unsigned int line = c->line;
	const char *name;
	size_t name_len;
	int r;

	if (*c->p == '#') {
		skip_line(c);
		return 0;
	}
	if ((size_t)(c->end - c->p) > 7 && strncmp(c->p, "export", 6) == 0 && is_blank(c->p[6])) {
		c->p += 6;
		while (c->p < c->end && is_blank(*c->p))
			c->p++;
	}
	name = c->p;
	while (c->p < c->end && is_name_char(*c->p))
		c->p++;
	name_len = (size_t)(c->p - name);
	if (name_len == 0 || !is_name_start(*name) || c->p >= c->end || *c->p != '=') {
		skip_line(c);
		return add_note(ef, line, "not an assignment: not run");
	}
	c->p++;
	c->why = NULL;
	c->n = 0;
	if (c->val)
		c->val[0] = '\0';
	r = value(c);
	if (r < 0)
		return r;
	while (!c->why && c->p < c->end && is_blank(*c->p))
		c->p++;
	if (!c->why && c->p < c->end && *c->p != '\n' && *c->p != '#')
		c->why = "more than one word (a command after the assignment?): not run";
	if (c->why) {
		skip_line(c);
		return add_note(ef, line, c->why);
	}
	skip_line(c); /* the newline, or a comment after the value */
	return add_var(ef, name, name_len, c, line);
}

int envfile_parse(const char *text, size_t len, struct envfile *ef)
{
	struct cursor c = { .p = text, .end = text + len, .line = 1, .ef = ef };
	int r = 0;

	while (r == 0 && c.p < c.end) {
		if (is_blank(*c.p) || *c.p == '\n') {
			next(&c);
			continue;
		}
		r = statement(&c, ef);
	}
	free(c.val);
	return r;
}

const char *envfile_get(const struct envfile *ef, const char *name, unsigned int before)
{
	for (size_t i = ef->n_vars; i-- > 0;)
		if ((before == 0 || ef->vars[i].line < before) &&
		    strcmp(ef->vars[i].name, name) == 0)
			return ef->vars[i].value;
	return NULL;
}

void envfile_free(struct envfile *ef)
{
	for (size_t i = 0; i < ef->n_vars; i++) {
		free(ef->vars[i].name);
		free(ef->vars[i].value);
	}
	free(ef->vars);
	for (size_t i = 0; i < ef->n_notes; i++)
		free(ef->notes[i].text);
	free(ef->notes);
	ef->vars = NULL;
	ef->notes = NULL;
	ef->n_vars = ef->n_notes = 0;
}
