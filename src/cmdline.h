/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rngd's command line (main.c's agent, built into rngd only): the options, --help, and the
 * configuration they make (the file with the command line applied on top, again on every
 * reload). Usage errors exit 2 and --help/--version exit 0 from here, as main would.
 */
#ifndef RNGD_CMDLINE_H
#define RNGD_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"

/* Exit codes (sysexits.h values where one fits). */
enum {
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
	EXIT_NO_SOURCE = 66,	/* EX_NOINPUT */
	EXIT_NO_PERM = 77,	/* EX_NOPERM */
	EXIT_CONFIG = 78,	/* EX_CONFIG */
};

/* A setting from the command line, applied after the configuration file (the command line
 * wins) and again on every reload. */
struct override {
	char *source;		/* NULL for an [rngd] key */
	char *key;
	char *value;
	char where[48];		/* "option -R" */
};

/* What --status prints. */
enum status_format {
	STATUS_FORMAT_TABLE,	/* for people (default) */
	STATUS_FORMAT_JSON,	/* --json, --format=json: the document as it is */
	STATUS_FORMAT_METRICS,	/* --format=openmetrics: metrics.h */
};

struct options {
	const char *config_path;
	bool config_explicit;
	bool config_seen; /* read at start: a reload must find it again */
	bool foreground;
	int log_level;
	bool list, check_config, test_mode, once, status, ignore_fail;
	enum status_format status_format;
	const char *status_format_option; /* "--json" or "--format" when given */
	const char *dump;
	uint64_t dump_bytes;
	const char *print_options;
	bool restore_kernel_hwrng;	/* --restore-kernel-hwrng */
	const char *grant_kernel_hwrng; /* --grant-kernel-hwrng[=GROUP]: the group */
	struct override *ov;
	size_t n_ov;
};

/* Parse argv into o (zero-initialised by the caller). Exits on --help, --version and usage errors. */
void cmdline_parse(struct options *o, int argc, char **argv);
/* Free what cmdline_parse() allocated. */
void cmdline_free(struct options *o);
/*
 * Load the configuration file and apply the command line on top. A missing default file
 * is fine (the defaults run); a missing file named with -c is not. 0 or -EINVAL, err set.
 */
int cmdline_load_config(const struct options *o, struct conf *c, char *err, size_t len);
/* --dump NAME: only NAME runs, its tested output goes to stdout. 0 or -errno, err set. */
int cmdline_dump_config(const struct options *o, struct conf *c, char *err, size_t len);
/*
 * For daemon_init()'s reload hook (ctx is the struct options): cmdline_load_config(), but
 * a file read at start that cannot be read again keeps the running configuration.
 */
int cmdline_reload_config(void *ctx, struct conf *out, char *err, size_t len);

#endif
