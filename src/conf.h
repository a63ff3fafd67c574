/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration: the [rngd] global keys and one [source NAME] section per source, from an
 * INI file (/etc/rngd.conf by default) and from the command line, which wins. Strict: an
 * unknown section or key, a bad or out-of-range value or a duplicate is an error whose text
 * is "file:line: key 'x': reason" (or "file:line: reason" when no key is concerned).
 * Nothing here logs or touches devices.
 */
#ifndef RNGD_CONF_H
#define RNGD_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf_section.h"

/* configure --sysconfdir (Makefile.am passes SYSCONFDIR), as rngd(8) says. */
#ifdef SYSCONFDIR
#define CONF_DEFAULT_PATH SYSCONFDIR "/rngd.conf"
#else
#define CONF_DEFAULT_PATH "/etc/rngd.conf"
#endif
#define CONF_ERR_MAX 512

/*
 * Validates one [source NAME] section against what it names (source_check_section()).
 * 0, or -EINVAL with *bad set to the offending line (NULL: the section itself) and why to
 * the reason alone; the parser adds "file:line: key 'K': ".
 */
typedef int (*conf_check_fn)(const struct conf_section *s, const struct conf_kv **bad, char *why,
			     size_t len);

struct conf {
	char *path;			/* file that was loaded, NULL when none */

	/* [rngd] keys; command-line option in brackets. */
	char *random_device;		/* random-device [-o]: sink, default /dev/random */
	uint64_t feed_interval;		/* feed-interval [-R]: seconds between feeds, default 60 */
	uint64_t feed_bytes;		/* feed-bytes [-s]: bytes per feed, 1..2500, default 64 */
	uint64_t max_age;		/* max-age: seconds a tested block stays fresh, default 60 */
	bool reseed;			/* reseed: RNDRESEEDCRNG after each feed, default yes */
	uint64_t watermark;		/* fill-watermark [-W]: legacy kernels, bits; 0 = 3/4 pool */
	uint64_t entropy_count;		/* entropy-count [-e]: cap on credited bits per byte, 1..8 */
	char *pid_file;			/* pid-file [-p]: background mode only, default
					   /run/rngd.pid; NULL (empty value) = none */
	char *user;			/* user [-D USER:GROUP]: NULL = stay root */
	char *group;			/* group: NULL = the user's primary group */
	uint64_t ready_timeout;		/* ready-timeout: seconds before READY=1 anyway, default 5 */
	char *status_file;		/* status-file: default /run/rngd/status.json;
					   NULL (empty value) = none */
	uint64_t status_interval;	/* status-interval: seconds, 0 = only on SIGUSR1; default 10 */
	char *metrics_file;		/* metrics-file [--metrics-file]: Prometheus text (metrics.h);
					   NULL (default, empty value) = none */
	uint64_t metrics_interval;	/* metrics-interval [--metrics-interval]: seconds, 0 = only
					   on SIGUSR1 and at exit; default 15 */
	uint64_t stats_interval;	/* stats-interval: seconds between statistics lines, 0 = off
					   (default) */
	bool force_output;		/* force-output [--force-output]: an output that is an
					   existing, non-empty regular file is truncated, not refused */
	char *kernel_hwrng;		/* kernel-hwrng [--kernel-hwrng]: take-over (default), leave,
					   watch (kernel_hwrng.h) */

	struct conf_section *sections;	/* each one passed check_section */
	size_t n_sections;
	conf_check_fn check_section;	/* NULL: no [source] section is accepted */
};

/*
 * Fill c with the defaults; cannot fail. check_section validates every source section
 * that a load or conf_set_source() touches, once, before it is accepted. The default
 * strings are static: change string members only through conf_set() and the loaders,
 * never by free() or assignment.
 */
void conf_init(struct conf *c, conf_check_fn check_section);
/* Free everything c owns; c may be half-built. */
void conf_free(struct conf *c);

/*
 * Load an INI file on top of c. -ENOENT (err says so) when the file does not exist, so
 * that the caller can accept a missing default file; -EINVAL with err filled for bad
 * content; other -errno when it cannot be read. On failure c is left as it was.
 */
int conf_load_file(struct conf *c, const char *path, char *err, size_t errlen);

/* Same, from memory; name is used in error messages in place of a file name. */
int conf_load_string(struct conf *c, const char *name, const char *text, size_t len, char *err,
		     size_t errlen);

/*
 * Set one [rngd] key from the command line. where names the option for errors
 * ("option -R"). 0 or -EINVAL with err = "option -R: key 'feed-interval': reason".
 */
int conf_set(struct conf *c, const char *key, const char *value, const char *where, char *err,
	     size_t errlen);

/*
 * Set one key of a source section from the command line (-O SRC:KEY:VALUE, -x, -n, -r),
 * creating the section when needed. Validated by check_section, like a file's section.
 */
int conf_set_source(struct conf *c, const char *source, const char *key, const char *value,
		    const char *where, char *err, size_t errlen);

/* The section called name, or NULL. */
const struct conf_section *conf_find_section(const struct conf *c, const char *name);

#endif
