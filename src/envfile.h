/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shell-style environment files (in /etc/default, /etc/sysconfig, /etc/conf.d) read as
 * data, never run: NAME=VALUE lines with the shell's quoting ('...', "...", backslashes),
 * "export NAME=VALUE", comments, and $NAME / ${NAME} of a variable set earlier in the same
 * file. Anything else (commands, command substitution, other expansions, several words) is
 * a note naming the line, and that line is skipped. For --import-rng-tools (import.c).
 * Nothing here logs or exits.
 */
#ifndef RNGD_ENVFILE_H
#define RNGD_ENVFILE_H

#include <stddef.h>

#define ENVFILE_MAX_SIZE (64 * 1024) /* bytes: these files are a few hundred */

struct envfile_var {
	char *name;
	char *value;	   /* unquoted, expanded; may hold blanks and newlines */
	unsigned int line; /* where its assignment starts */
};

struct envfile_note {
	unsigned int line;
	char *text; /* why the line was skipped: "command substitution is not run" */
};

struct envfile {
	struct envfile_var *vars; /* in file order; a name set twice appears twice */
	size_t n_vars;
	struct envfile_note *notes;
	size_t n_notes;
};

/*
 * Read PATH into a NUL-terminated buffer (*text, free()d by the caller): only a regular
 * file (a FIFO or device is refused without blocking on it), at most ENVFILE_MAX_SIZE
 * bytes, text only (no NUL or other control bytes than tab, CR and LF). 0, or -errno with
 * why set to one line ("'/x' is a FIFO, not a regular file").
 */
int envfile_read(const char *path, char **text, size_t *len, char *why, size_t why_len);

/* Parse len bytes of text into ef (zeroed by the caller). 0 or -ENOMEM. */
int envfile_parse(const char *text, size_t len, struct envfile *ef);

/* The value of the last assignment to NAME before line (0: anywhere), or NULL. */
const char *envfile_get(const struct envfile *ef, const char *name, unsigned int before);

void envfile_free(struct envfile *ef);

#endif
