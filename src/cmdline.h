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
	EXIT_NO_SOURCE = 66, /* EX_NOINPUT */
	EXIT_NO_PERM = 77,   /* EX_NOPERM */
	EXIT_CONFIG = 78,    /* EX_CONFIG */
};

/* A setting from the command line, applied after the configuration file (the command line
 * wins) and again on every reload. */
struct override {
	char *source; /* NULL for an [rngd] key */
	char *key;
	char *value;
	char where[48]; /* "option -R" */
};

/* What --status prints. */
enum status_format {
	STATUS_FORMAT_TABLE,   /* for people (default) */
	STATUS_FORMAT_JSON,    /* --json, --format=json: the document as it is */
	STATUS_FORMAT_METRICS, /* --format=openmetrics: metrics.h */
};

/* A line for the log, said once logging is set up (rng-tools names, no-op options). */
struct cmdline_notice {
	int level;
	char *text;
};

struct compat_source;

struct options {
	const char *config_path;
	bool config_explicit;
	bool config_seen; /* read at start: a reload must find it again */
	bool foreground;
	bool foreground_said; /* -f or -b given */
	int log_level;	      /* 0: not parsed yet */
	bool log_level_said;  /* -d or -q given */
	bool help, version, hrng_help;
	bool import; /* --import-rng-tools [FILE] */
	const char *import_file;
	const struct compat_source *print_compat; /* -O NAME of an rng-tools source not here */
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
	struct cmdline_notice *notices;
	size_t n_notices;
	int bad_first, bad_end; /* after a failed parse: argv[first..end) is what failed */
};

/*
 * Parse argv into o (zero-initialised by the caller). Exits on --help, --version, usage
 * errors (2) and the wrong values that cmdline_parse_args() checks (78), after one line on
 * stderr.
 */
void cmdline_parse(struct options *o, int argc, char **argv);
/*
 * The same without exiting or printing: 0, or EXIT_USAGE (a usage error) or EXIT_CONFIG (a
 * wrong value that only the command line checks: -W 101%, --rng-entropy=2) with err set
 * (o keeps what was parsed; free it with cmdline_free()). debian: rng-tools-debian 2.3's short
 * letters (-t N is --feed-interval, -R --rng-driver, -S -H -Q -T -B its own), as its RNGDOPTIONS
 * has them.
 * --help and --version set o->help and o->version.
 */
int cmdline_parse_args(struct options *o, int argc, char **argv, bool debian, char *err,
		       size_t errlen);
/* Log the notices the parse left (once, after log_setup()). */
void cmdline_log_notices(const struct options *o);
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
