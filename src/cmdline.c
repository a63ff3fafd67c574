// SPDX-License-Identifier: GPL-2.0-or-later
/* rngd's command line: options, --help, and the configuration they make (cmdline.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdline.h"
#include "compat.h"
#include "conf.h"
#include "log.h"
#include "source.h"
#include "util.h"

enum {
	OPT_CHECK_CONFIG = 0x100,
	OPT_STATUS,
	OPT_JSON,
	OPT_ONCE,
	OPT_DUMP,
	OPT_DUMP_BYTES,
	OPT_HELP,
	OPT_FORCE_OUTPUT,
	OPT_KERNEL_HWRNG,
	OPT_RESTORE_KERNEL_HWRNG,
	OPT_GRANT_KERNEL_HWRNG,
	OPT_FORMAT,
	OPT_METRICS_FILE,
	OPT_METRICS_INTERVAL,
	OPT_IMPORT_RNG_TOOLS,
	/* rng-tools-debian 2.3's long options (rngd(8) MIGRATING FROM RNG-TOOLS) */
	OPT_HRNG,
	OPT_RNG_DRIVER,
	OPT_RNG_ENTROPY,
	OPT_RNG_QUALITY,
	OPT_RNG_BUFFERS,
	OPT_RNG_TIMEOUT,
	OPT_FEED_INTERVAL,
	OPT_TIMEOUT,
	OPT_STATS_INTERVAL,
};

static const struct option long_options[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "background", no_argument, NULL, 'b' },
	{ "debug", no_argument, NULL, 'd' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "list", no_argument, NULL, 'l' },
	{ "exclude", required_argument, NULL, 'x' },
	{ "include", required_argument, NULL, 'n' },
	{ "option", required_argument, NULL, 'O' },
	{ "rng-device", required_argument, NULL, 'r' },
	{ "random-device", required_argument, NULL, 'o' },
	{ "pid-file", required_argument, NULL, 'p' },
	{ "pidfile", required_argument, NULL, 'p' }, /* rng-tools-debian */
	{ "random-step", required_argument, NULL, 's' },
	{ "fill-watermark", required_argument, NULL, 'W' },
	{ "force-reseed", required_argument, NULL, 'R' },
	{ "entropy-count", required_argument, NULL, 'e' },
	{ "test", no_argument, NULL, 't' },
	{ "ignorefail", no_argument, NULL, 'i' },
	{ "use-slow-sources", no_argument, NULL, 'u' },
	{ "drop-privileges", required_argument, NULL, 'D' },
	{ "version", no_argument, NULL, 'v' },
	{ "config", required_argument, NULL, 'c' },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "status", no_argument, NULL, OPT_STATUS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "dump", required_argument, NULL, OPT_DUMP },
	{ "dump-bytes", required_argument, NULL, OPT_DUMP_BYTES },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "force-output", no_argument, NULL, OPT_FORCE_OUTPUT },
	{ "kernel-hwrng", required_argument, NULL, OPT_KERNEL_HWRNG },
	{ "restore-kernel-hwrng", no_argument, NULL, OPT_RESTORE_KERNEL_HWRNG },
	{ "grant-kernel-hwrng", optional_argument, NULL, OPT_GRANT_KERNEL_HWRNG },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	{ "metrics-interval", required_argument, NULL, OPT_METRICS_INTERVAL },
	{ "import-rng-tools", no_argument, NULL, OPT_IMPORT_RNG_TOOLS },
	{ "hrng", required_argument, NULL, OPT_HRNG },
	{ "rng-driver", required_argument, NULL, OPT_RNG_DRIVER },
	{ "rng-entropy", required_argument, NULL, OPT_RNG_ENTROPY },
	{ "rng-quality", required_argument, NULL, OPT_RNG_QUALITY },
	{ "rng-buffers", required_argument, NULL, OPT_RNG_BUFFERS },
	{ "rng-timeout", required_argument, NULL, OPT_RNG_TIMEOUT },
	{ "feed-interval", required_argument, NULL, OPT_FEED_INTERVAL },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ 0 },
};

/*
 * rng-tools 6's letters, and V (the version, as in both). rng-tools-debian's own letters
 * S H Q T B are taken only to say which long option to use instead: where the two disagree
 * (t, R too), rng-tools 6 wins. The leading ':' reports a missing argument apart.
 */
static const char short_options[] = ":fbdqlx:n:O:r:o:p:s:W:R:e:tiuD:vVc:hS:H:Q:T:B:";
/* rng-tools-debian 2.3's letters, for --import-rng-tools of its RNGDOPTIONS. */
static const char short_options_debian[] = ":fbp:r:o:s:W:t:T:R:H:Q:B:S:Vh";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rngd [OPTION...]\n"
		"Feed the kernel entropy from hardware sources, tested with FIPS 140-2.\n\n"
		"  -f, --foreground            do not fork; log to stderr\n"
		"  -b, --background            fork once the sources are open (default)\n"
		"  -d, --debug                 debug messages\n"
		"  -q, --quiet                 errors only\n"
		"  -l, --list                  list the sources and whether they work here\n"
		"  -x, --exclude=NAME          disable a source\n"
		"  -n, --include=NAME          enable a source\n"
		"  -O, --option=SRC:KEY:VALUE  set a source option (-O SRC lists its keys);\n"
		"                              rngd:KEY:VALUE sets an [rngd] key\n"
		"  -r, --rng-device=PATH       device of the hwrng source (/dev/hwrng)\n"
		"  -o, --random-device=PATH    sink: /dev/random, or a file, FIFO or /dev/stdout\n"
		"      --force-output          -o may overwrite an existing, non-empty file\n"
		"  -p, --pid-file=PATH         pid file in background mode\n"
		"  -s, --random-step=BYTES     bytes per feed (feed-bytes, 64)\n"
		"  -W, --fill-watermark=BITS   legacy kernels: refill level (or N%% of the pool)\n"
		"  -R, --force-reseed=SECONDS  seconds between feeds (feed-interval, 60)\n"
		"  -e, --entropy-count=BITS    at most BITS credited per byte (1..8, 8)\n"
		"  -t, --test                  test the sources: FIPS on, nothing fed, rates shown\n"
		"  -u, --use-slow-sources      accepted for compatibility (all sources are read)\n"
		"  -D, --drop-privileges=USER[:GROUP]  run as USER keeping only CAP_SYS_ADMIN\n"
		"  -c, --config=FILE           configuration file (" CONF_DEFAULT_PATH ")\n"
		"      --check-config          check the configuration and exit\n"
		"      --status [--json]       print the running daemon's status\n"
		"      --format=FORMAT         --status as: table (default), json, or openmetrics\n"
		"                              (Prometheus text, as metrics-file has it)\n"
		"      --metrics-file=PATH     write metrics for Prometheus there (node_exporter's\n"
		"                              textfile directory)\n"
		"      --metrics-interval=SECONDS  how often (15)\n"
		"      --once                  seed the kernel once, reseed, exit\n"
		"      --dump=NAME             write one source's tested output to stdout\n"
		"      --dump-bytes=N          stop --dump after N bytes\n"
		"      --kernel-hwrng=MODE     the kernel's hwrng thread: take-over (default),\n"
		"                              leave or watch\n"
		"      --restore-kernel-hwrng  put back rng_quality (and its owner) after a stop\n"
		"      --grant-kernel-hwrng[=GROUP]  let GROUP (rngd) write rng_quality\n"
		"      --import-rng-tools [FILE]  print the rngd.conf equivalent of an rng-tools\n"
		"                              environment file (/etc/default/rng-tools-debian,\n"
		"                              /etc/sysconfig/rngd, ...)\n"
		"  -v, -V, --version           print the version\n"
		"  -h, --help                  this help\n\n"
		"rng-tools' options and source names are accepted too (rngd(8), MIGRATING FROM\n"
		"RNG-TOOLS): rng-tools-debian's long options (--hrng, --rng-driver, --rng-entropy,\n"
		"--feed-interval, --stats-interval, ...); -x/-n/-O with jitter, pkcs11, tpm, ...\n"
		"or a source number.\n\n"
		"Exit status: 0 stopped cleanly, 1 runtime failure, 2 usage, 66 no usable source,\n"
		"77 not permitted (no CAP_SYS_ADMIN), 78 bad configuration.\n");
}

/* Parser state that the options themselves do not keep. */
struct parse {
	struct options *o;
	char *err;
	size_t errlen;
	unsigned int noticed;	   /* rng-tools sources already given their notice */
	unsigned int noop_noticed; /* ... and their no-op -O keys */
	unsigned int opt_noticed;  /* no-op long options (bit: option code - OPT_HRNG) */
	int namedpipe_on;	   /* -1 not said, 0 -x namedpipe, 1 -n namedpipe */
	struct override *pipe_ov;  /* -O namedpipe:KEY:VALUE, applied at the end */
	size_t n_pipe_ov;
	const char *rng_entropy; /* --rng-entropy: the source it goes to is known last */
	bool via_driver;	 /* --hrng=viapadlock, --rng-driver=viapadlock */
};

/* An error: exit code EXIT_USAGE, the text in p->err. */
static int _printf_(2, 3) fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

/* A wrong value for a source or key that is here: exit code EXIT_CONFIG, as the file's. */
static int _printf_(2, 3) fail_config(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return EXIT_CONFIG;
}

static void oom(void)
{
	fprintf(stderr, "rngd: out of memory\n");
	exit(EXIT_RUNTIME);
}

static char *xstrdup(const char *s)
{
	char *r = strdup(s);

	if (!r)
		oom();
	return r;
}

static char *xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r)
		oom();
	return r;
}

static void push_override(struct override **list, size_t *n, const char *source, const char *key,
			  const char *value, const char *where)
{
	struct override *ov = realloc(*list, (*n + 1) * sizeof(*ov));

	if (!ov)
		oom();
	*list = ov;
	ov = &ov[(*n)++];
	ov->source = source ? xstrdup(source) : NULL;
	ov->key = xstrdup(key);
	ov->value = xstrdup(value);
	snprintf(ov->where, sizeof(ov->where), "%s", where);
}

static void add_override(struct options *o, const char *source, const char *key, const char *value,
			 const char *where)
{
	push_override(&o->ov, &o->n_ov, source, key, value, where);
}

/* A line to log once logging is set up (cmdline_log_notices()). */
static void _printf_(3, 4) add_notice(struct options *o, int level, const char *fmt, ...)
{
	struct cmdline_notice *n = realloc(o->notices, (o->n_notices + 1) * sizeof(*n));
	va_list ap;
	int r;

	if (!n)
		oom();
	o->notices = n;
	n = &n[o->n_notices];
	va_start(ap, fmt);
	r = vasprintf(&n->text, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom();
	n->level = level;
	o->n_notices++;
}

/* "option -x" or "option --exclude" for the option being parsed. */
static void where_of(int c, const struct option *lo, char *buf, size_t len)
{
	if (lo)
		snprintf(buf, len, "option --%s", lo->name);
	else
		snprintf(buf, len, "option -%c", c);
}

/* The one notice for an rng-tools source this rngd does not have (-n, -O). */
static void not_here(struct parse *p, const struct compat_source *cs, const char *where)
{
	unsigned int bit = 1u << compat_source_index(cs);

	if (p->noticed & bit)
		return;
	p->noticed |= bit;
	add_notice(p->o, LOG_NOTICE, "%s: rng-tools' source '%s' is not in rngd: %s; ignoring",
		   where, cs->name, cs->why);
}

/* An rng-tools source named by number: rng-tools 6.17's table says which. */
static void by_index(struct parse *p, const struct compat_source *cs, int index, const char *where)
{
	if (index >= 0)
		add_notice(p->o, LOG_DEBUG, "%s: source %d is rng-tools' '%s'", where, index,
			   cs->name);
}

/* -x NAME, -n NAME: a source here, an rng-tools name or number, or an unknown name. */
static int source_switch(struct parse *p, const char *ref, bool on, const char *where)
{
	const struct compat_source *cs;
	int index;

	cs = compat_find_source(ref, &index);
	if (!cs) {
		if (!source_find_driver(ref))
			return fail(p, "%s: unknown source '%s' ('rngd -l' lists them)", where,
				    ref);
		add_override(p->o, ref, "enabled", on ? "yes" : "no", where);
		return 0;
	}
	by_index(p, cs, index, where);
	if (!compat_source_here(cs)) {
		/* Excluding what is not here is what the user wants already: silent. */
		if (on)
			not_here(p, cs, where);
		else
			add_notice(p->o, LOG_DEBUG,
				   "%s: '%s' (rng-tools) is not in rngd: nothing to exclude", where,
				   cs->name);
		return 0;
	}
	if (strcmp(cs->name, "namedpipe") == 0) {
		p->namedpipe_on = on;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cs->ours) && cs->ours[i]; i++)
		if (source_find_driver(cs->ours[i]))
			add_override(p->o, cs->ours[i], "enabled", on ? "yes" : "no", where);
	return 0;
}

/* -O for an rng-tools name or number; rest is what follows "NAME:" (NULL: -O NAME). */
static int compat_option(struct parse *p, const struct compat_source *cs, int index,
			 const char *arg, const char *rest)
{
	const char *value, *why;
	char *key;

	by_index(p, cs, index, "option -O");
	if (!rest) {
		if (!compat_source_here(cs)) {
			p->o->print_compat = cs;
			return 0;
		}
		/* rdrand: RDRAND's keys (RDSEED's are the same); namedpipe: the file source. */
		for (size_t i = 0; i < ARRAY_SIZE(cs->ours) && cs->ours[i]; i++)
			if (source_find_driver(cs->ours[i]))
				p->o->print_options = cs->ours[i];
		return 0;
	}
	value = strchr(rest, ':');
	if (!value || value == rest)
		return fail(p, "option -O '%s': expected SOURCE:KEY:VALUE", arg);
	if (!compat_source_here(cs)) {
		not_here(p, cs, "option -O");
		return 0;
	}
	key = xstrndup(rest, (size_t)(value - rest));
	why = compat_noop_key(cs, key);
	if (why) {
		unsigned int bit = 1u << compat_source_index(cs);

		if (!(p->noop_noticed & bit))
			add_notice(p->o, LOG_NOTICE, "option -O %s:%s: %s; ignoring", cs->name, key,
				   why);
		p->noop_noticed |= bit;
	} else if (strcmp(cs->name, "namedpipe") == 0) {
		push_override(&p->pipe_ov, &p->n_pipe_ov, cs->ours[0], key, value + 1, "option -O");
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(cs->ours) && cs->ours[i]; i++)
			if (source_find_driver(cs->ours[i]))
				add_override(p->o, cs->ours[i], key, value + 1, "option -O");
	}
	free(key);
	return 0;
}

/*
 * -O SRC:KEY:VALUE, where SRC is TYPE:INSTANCE for sources with instances
 * ("-O file:usb0:path:/dev/ttyUSB0"); VALUE may hold colons. -O SRC alone lists the
 * source's keys. SRC may be one of rng-tools' names or numbers.
 */
static int parse_option_arg(struct parse *p, const char *arg)
{
	const char *end = strchr(arg, ':'), *value;
	const struct source_ops *drv;
	const struct compat_source *cs;
	char *source, *key;
	int index, r;

	source = xstrndup(arg, end ? (size_t)(end - arg) : strlen(arg));
	cs = compat_find_source(source, &index);
	if (cs) {
		r = compat_option(p, cs, index, arg, end ? end + 1 : NULL);
		free(source);
		return r;
	}
	if (end && strcmp(source, "rngd") == 0) {
		free(source);
		/* -O rngd:KEY:VALUE: any [rngd] key; VALUE may be empty ("status-file"). */
		value = strchr(end + 1, ':');
		if (!value || value == end + 1)
			return fail(p, "option -O '%s': expected rngd:KEY:VALUE", arg);
		key = xstrndup(end + 1, (size_t)(value - end - 1));
		add_override(p->o, NULL, key, value + 1, "option -O");
		free(key);
		return 0;
	}
	drv = source_find_driver(source);
	free(source);
	if (!drv)
		return fail(p, "option -O: unknown source '%.*s' ('rngd -l' lists them)",
			    end ? (int)(end - arg) : (int)strlen(arg), arg);
	if (end && drv->instances)
		end = strchr(end + 1, ':');
	if (!end) {
		p->o->print_options = arg;
		return 0;
	}
	value = strchr(end + 1, ':');
	if (!value || value == end + 1)
		return fail(p, "option -O '%s': expected SOURCE:KEY:VALUE", arg);
	source = xstrndup(arg, (size_t)(end - arg));
	key = xstrndup(end + 1, (size_t)(value - end - 1));
	add_override(p->o, source, key, value + 1, "option -O");
	free(source);
	free(key);
	return 0;
}

/*
 * -W N or N%: rng-tools-debian took a percentage of the pool. The watermark matters on
 * legacy kernels only, whose pool is 4096 bits.
 */
static int watermark(struct parse *p, const char *arg, const char *where)
{
	size_t n = strlen(arg);
	uint64_t pct;
	char bits[24];

	if (n > 0 && arg[n - 1] == '%') {
		char *num = xstrndup(arg, n - 1);
		int r = parse_uint(num, 0, 100, &pct);

		free(num);
		if (r < 0)
			return fail_config(p, "%s: '%s' is not a percentage from 0%% to 100%%",
					   where, arg);
		snprintf(bits, sizeof(bits), "%" PRIu64, pct * 4096 / 100);
		arg = bits;
	}
	add_override(p->o, NULL, "fill-watermark", arg, where);
	return 0;
}

/* --hrng=NAME, --rng-driver=NAME (rng-tools-debian): which source the old driver is here. */
static int old_driver(struct parse *p, const char *arg, bool hrng, const char *where)
{
	static const char *const hrngs[] = { "intelfwh", "viakernel", "viapadlock", NULL };

	if (hrng && strcasecmp(arg, "help") == 0) {
		p->o->hrng_help = true;
		return 0;
	}
	if (strcasecmp(arg, "viapadlock") == 0) {
		/* Its PadLock driver read xstore alone, with /dev/hwrng set aside. */
		p->via_driver = true;
		add_override(p->o, "via", "enabled", "yes", where);
		add_override(p->o, "hwrng", "enabled", "no", where);
		return 0;
	}
	/* intelfwh and viakernel were the stream driver on /dev/hwrng: the hwrng source. */
	if (!hrng && strcasecmp(arg, "stream") == 0)
		return 0;
	for (size_t i = 0; hrng && hrngs[i]; i++)
		if (strcasecmp(arg, hrngs[i]) == 0)
			return 0;
	return fail(p, "%s: '%s' is not one of: %s", where, arg,
		    hrng ? "intelfwh viakernel viapadlock help" : "stream viapadlock");
}

/* --rng-entropy=H, 0 < H <= 1 bits per bit: the quality of the old driver's source. */
static int rng_entropy(struct parse *p)
{
	const char *target = p->via_driver ? "via" : "hwrng";
	char q[32], *end;
	double h;

	errno = 0;
	h = strtod(p->rng_entropy, &end);
	if (errno || end == p->rng_entropy || *end || !(h > 0.0 && h <= 1.0))
		return fail_config(p,
				   "option --rng-entropy: '%s' is not a number of bits per bit "
				   "above 0 and at most 1",
				   p->rng_entropy);
	snprintf(q, sizeof(q), "%u", (unsigned int)(h * 1024.0 + 0.5));
	add_override(p->o, target, "quality", q, "option --rng-entropy");
	return 0;
}

/* rng-tools-debian's options that have nothing to do here: one notice each. */
static void noop_option(struct parse *p, int c, const char *where, const char *why)
{
	unsigned int bit = 1u << (c - OPT_HRNG);

	if (p->opt_noticed & bit)
		return;
	p->opt_noticed |= bit;
	add_notice(p->o, LOG_NOTICE, "%s: %s; ignoring", where, why);
}

/*
 * What the parse left for its end: namedpipe's file source, --rng-entropy; only freed when
 * the parse failed (r, returned as it is).
 */
static int finish(struct parse *p, int r)
{
	/* The file source checks its section at every key: path first. */
	for (int pass = 0; r == 0 && pass < 2; pass++)
		for (size_t i = 0; i < p->n_pipe_ov; i++) {
			struct override *ov = &p->pipe_ov[i];

			if ((strcmp(ov->key, "path") == 0) == (pass == 0))
				add_override(p->o, ov->source, ov->key, ov->value, ov->where);
		}
	if (r == 0 && (p->n_pipe_ov || p->namedpipe_on == 1)) {
		/* rng-tools left namedpipe off unless -n namedpipe; so does this. */
		add_override(p->o, "file:namedpipe", "enabled", p->namedpipe_on == 1 ? "yes" : "no",
			     p->namedpipe_on == 1 ? "option -n namedpipe" : "option -O namedpipe");
		if (p->namedpipe_on == 1)
			add_notice(p->o, LOG_NOTICE,
				   "option -n namedpipe: read as the file source 'file:namedpipe', "
				   "which credits nothing unless given a quality (-O "
				   "namedpipe:quality:1024 credits it in full, as rng-tools did)");
	}
	for (size_t i = 0; i < p->n_pipe_ov; i++) {
		free(p->pipe_ov[i].source);
		free(p->pipe_ov[i].key);
		free(p->pipe_ov[i].value);
	}
	free(p->pipe_ov);
	p->pipe_ov = NULL;
	p->n_pipe_ov = 0;
	return r == 0 && p->rng_entropy ? rng_entropy(p) : r;
}

/* --format=FORMAT of --status. */
static int parse_format(struct parse *p, const char *s)
{
	if (strcmp(s, "table") == 0)
		p->o->status_format = STATUS_FORMAT_TABLE;
	else if (strcmp(s, "json") == 0)
		p->o->status_format = STATUS_FORMAT_JSON;
	/* What the textfile collector reads is Prometheus' text format: both names say it. */
	else if (strcmp(s, "openmetrics") == 0 || strcmp(s, "prometheus") == 0)
		p->o->status_format = STATUS_FORMAT_METRICS;
	else
		return fail(
			p, "option --format: '%s' is not one of: table json openmetrics prometheus",
			s);
	return 0;
}

/* rng-tools-debian's short letters in rngd's own command line: say what to use instead. */
static int debian_letter(struct parse *p, int c)
{
	static const struct {
		char letter;
		const char *use;
	} letters[] = {
		{ 'S', "--stats-interval" }, { 'H', "--rng-entropy" }, { 'Q', "--rng-quality" },
		{ 'T', "--rng-timeout" },    { 'B', "--rng-buffers" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(letters); i++)
		if (letters[i].letter == c)
			return fail(p,
				    "option -%c: rng-tools-debian's letter; rngd takes rng-tools "
				    "6's letters, and %s for this one",
				    c, letters[i].use);
	return fail(p, "invalid option -- '%c'", c);
}

/* The options that set a configuration key to their value: [rngd]'s, or source's. */
static const struct {
	int c;
	const char *source, *key;
} key_options[] = {
	{ 'r', "hwrng", "device" },
	{ 'o', NULL, "random-device" },
	{ 'p', NULL, "pid-file" },
	{ 's', NULL, "feed-bytes" },
	{ 'e', NULL, "entropy-count" },
	{ 'D', NULL, "user" },
	{ OPT_METRICS_FILE, NULL, "metrics-file" },
	{ OPT_METRICS_INTERVAL, NULL, "metrics-interval" },
	{ OPT_KERNEL_HWRNG, NULL, "kernel-hwrng" },
	{ OPT_STATS_INTERVAL, NULL, "stats-interval" },
};

/* The options that say what rngd does and how it talks, no key's: whether c is one. */
static bool run_option(struct options *o, int c, const char *arg)
{
	switch (c) {
	case 'f':
		o->foreground = true;
		o->foreground_said = true;
		break;
	case 'b':
		o->foreground = false;
		o->foreground_said = true;
		break;
	case 'd':
		o->log_level = LOG_DEBUG;
		o->log_level_said = true;
		break;
	case 'q':
		o->log_level = LOG_ERR;
		o->log_level_said = true;
		break;
	case 'l':
		o->list = true;
		break;
	case 't':
		o->test_mode = true;
		o->foreground = true;
		break;
	case 'i':
		o->ignore_fail = true;
		break;
	case 'u':
		/* rng-tools' "use slow sources": every source is always read here. */
		break;
	case 'v':
	case 'V':
		o->version = true;
		break;
	case 'c':
		o->config_path = arg;
		o->config_explicit = true;
		break;
	case 'h':
	case OPT_HELP:
		o->help = true;
		break;
	case OPT_CHECK_CONFIG:
		o->check_config = true;
		break;
	case OPT_STATUS:
		o->status = true;
		break;
	case OPT_JSON:
		o->status_format = STATUS_FORMAT_JSON;
		o->status_format_option = "--json";
		break;
	case OPT_ONCE:
		o->once = true;
		o->foreground = true;
		break;
	case OPT_DUMP:
		o->dump = arg;
		o->foreground = true;
		break;
	case OPT_RESTORE_KERNEL_HWRNG:
		o->restore_kernel_hwrng = true;
		break;
	case OPT_GRANT_KERNEL_HWRNG:
		o->grant_kernel_hwrng = arg ? arg : "rngd";
		break;
	case OPT_IMPORT_RNG_TOOLS:
		o->import = true;
		break;
	default:
		return false;
	}
	return true;
}

/* rng-tools-debian's long options (and its letters, by debian_code()), and unknown letters. */
static int debian_option(struct parse *p, int c, const char *arg, const char *where)
{
	uint64_t n;

	switch (c) {
	case OPT_HRNG:
	case OPT_RNG_DRIVER:
		return old_driver(p, arg, c == OPT_HRNG, where);
	case OPT_RNG_ENTROPY:
		p->rng_entropy = arg;
		break;
	case OPT_RNG_QUALITY:
		noop_option(p, c, where,
			    "the via source's hardware settings are its own keys (noise-source, "
			    "string-filter, dc-bias: -O via lists them)");
		break;
	case OPT_RNG_BUFFERS:
		noop_option(p, c, where, "rngd sizes its buffers itself");
		break;
	case OPT_RNG_TIMEOUT:
		noop_option(p, c, where,
			    "rngd does not give up on a slow source: it waits for it while the "
			    "others feed");
		break;
	case OPT_TIMEOUT:
	case OPT_FEED_INTERVAL:
		if (parse_uint(arg, 0, 0, &n) == 0) {
			noop_option(p, c, where,
				    "0 (never feed a full pool) has no equivalent: rngd feeds "
				    "every feed-interval seconds (60)");
			break;
		}
		add_override(p->o, NULL, "feed-interval", arg, where);
		break;
	default:
		return debian_letter(p, c);
	}
	return 0;
}

/*
 * One option of either dialect; c is the long-option code where the two differ: a key's
 * (key_options), what rngd does (run_option), those with a value to check here, and
 * rng-tools-debian's (debian_option).
 */
static int parse_one(struct parse *p, int c, const char *arg, const char *where)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_options); i++)
		if (key_options[i].c == c) {
			add_override(p->o, key_options[i].source, key_options[i].key, arg, where);
			return 0;
		}
	if (run_option(p->o, c, arg))
		return 0;
	switch (c) {
	case 'x':
	case 'n':
		return source_switch(p, arg, c == 'n', where);
	case 'O':
		return parse_option_arg(p, arg);
	case 'W':
		return watermark(p, arg, where);
	case 'R':
		if (strcasecmp(arg, "stream") == 0 || strcasecmp(arg, "viapadlock") == 0)
			return fail(p,
				    "%s: -R is rng-tools 6's --force-reseed=SECONDS; "
				    "rng-tools-debian's driver is --rng-driver=%s",
				    where, arg);
		add_override(p->o, NULL, "feed-interval", arg, where);
		return 0;
	case OPT_FORMAT:
		p->o->status_format_option = "--format";
		return parse_format(p, arg);
	case OPT_FORCE_OUTPUT:
		add_override(p->o, NULL, "force-output", "yes", where);
		return 0;
	case OPT_DUMP_BYTES:
		if (parse_uint(arg, 1, UINT64_MAX, &p->o->dump_bytes) < 0)
			return fail(p, "option --dump-bytes: '%s' is not a positive number", arg);
		return 0;
	default:
		return debian_option(p, c, arg, where);
	}
}

/* rng-tools-debian's letters mapped to the codes of the options they mean here. */
static int debian_code(int c)
{
	switch (c) {
	case 't':
		return OPT_FEED_INTERVAL;
	case 'T':
		return OPT_RNG_TIMEOUT;
	case 'R':
		return OPT_RNG_DRIVER;
	case 'H':
		return OPT_RNG_ENTROPY;
	case 'Q':
		return OPT_RNG_QUALITY;
	case 'B':
		return OPT_RNG_BUFFERS;
	case 'S':
		return OPT_STATS_INTERVAL;
	default:
		return c;
	}
}

int cmdline_parse_args(struct options *o, int argc, char **argv, bool debian, char *err,
		       size_t errlen)
{
	struct parse p = { .o = o, .err = err, .errlen = errlen, .namedpipe_on = -1 };
	char where[48];
	int c, li, before, r = 0;

	if (!o->config_path)
		o->config_path = CONF_DEFAULT_PATH;
	if (!o->log_level)
		o->log_level = LOG_INFO;
	opterr = 0;
	optind = 0; /* glibc and musl: start over, also after an earlier parse */
	o->bad_first = o->bad_end = 0;
	while (r == 0 && (before = optind > 0 ? optind : 1,
			  c = getopt_long(argc, argv, debian ? short_options_debian : short_options,
					  long_options, (li = -1, &li))) != -1) {
		const struct option *lo = li >= 0 ? &long_options[li] : NULL;

		if (c == '?' && optopt == '?')
			c = 'h'; /* -? is --help, as with argp */
		if (c == '?') {
			if (optopt)
				r = debian ? fail(&p, "invalid option -- '%c'", optopt)
					   : debian_letter(&p, optopt);
			else
				r = fail(&p, "unrecognized option '%s'", argv[optind - 1]);
			break;
		}
		if (c == ':') {
			if (optopt && optopt < 0x100)
				r = fail(&p, "option -%c needs a value", optopt);
			else
				r = fail(&p, "option '%s' needs a value", argv[optind - 1]);
			break;
		}
		/* Named as written: -Q, not the code of --rng-quality it maps to. */
		where_of(c, lo, where, sizeof(where));
		if (debian && !lo)
			c = debian_code(c);
		r = parse_one(&p, c, optarg, where);
	}
	if (r != 0) {
		/* The words of the option that failed (several letters in one word: that word). */
		o->bad_first = before;
		o->bad_end = optind > before ? optind : before + 1;
	}
	if (r == 0 && optind < argc) {
		o->bad_first = optind;
		o->bad_end = argc;
		/* rng-tools-debian's -t N (--feed-interval) here reads as -t, then N. */
		if (o->test_mode && argv[optind][0] >= '0' && argv[optind][0] <= '9')
			r = fail(&p,
				 "unexpected argument '%s' (-t is rng-tools 6's --test; "
				 "rng-tools-debian's -t N is --feed-interval=N)",
				 argv[optind]);
		else if (!o->import)
			r = fail(&p, "unexpected argument '%s'", argv[optind]);
		else if (optind + 1 < argc)
			r = fail(&p, "--import-rng-tools takes one file, not '%s'",
				 argv[optind + 1]);
		else
			o->import_file = argv[optind];
	}
	if (r == 0)
		o->bad_first = o->bad_end = 0;
	if (r == 0 && o->status_format_option && !o->status)
		r = fail(&p, "%s goes with --status", o->status_format_option);
	if (r == 0 && o->dump_bytes && !o->dump)
		r = fail(&p, "%s goes with --dump", "--dump-bytes");
	return finish(&p, r);
}

void cmdline_parse(struct options *o, int argc, char **argv)
{
	char err[512];

	int r = cmdline_parse_args(o, argc, argv, false, err, sizeof(err));

	if (r == EXIT_CONFIG) {
		fprintf(stderr, "rngd: %s\n", err);
		exit(r);
	}
	if (r != 0) {
		fprintf(stderr, "rngd: %s\nTry 'rngd --help' for more information.\n", err);
		exit(r);
	}
	if (o->help) {
		usage(stdout);
		exit(0);
	}
	if (o->version) {
		printf("rngd " PACKAGE_VERSION "\n");
		exit(0);
	}
	if (o->hrng_help) {
		printf("--hrng (rng-tools-debian) here:\n"
		       "  intelfwh    the hwrng source (/dev/hwrng)\n"
		       "  viakernel   the hwrng source (/dev/hwrng, the kernel's via-rng)\n"
		       "  viapadlock  the via source (xstore), hwrng off\n");
		exit(0);
	}
	if (o->print_compat) {
		printf("%s: rng-tools' source, not in rngd: %s\n", o->print_compat->name,
		       o->print_compat->why);
		exit(0);
	}
}

void cmdline_log_notices(const struct options *o)
{
	for (size_t i = 0; i < o->n_notices; i++)
		log_full(o->notices[i].level, NULL, NULL, NULL, "%s", o->notices[i].text);
}

void cmdline_free(struct options *o)
{
	for (size_t i = 0; i < o->n_ov; i++) {
		free(o->ov[i].source);
		free(o->ov[i].key);
		free(o->ov[i].value);
	}
	free(o->ov);
	for (size_t i = 0; i < o->n_notices; i++)
		free(o->notices[i].text);
	free(o->notices);
}

/*
 * Load the configuration file and apply the command line on top. A missing default file
 * is fine (the defaults run); a missing file named with -c is not. 0 or -EINVAL, err set.
 */
int cmdline_load_config(const struct options *o, struct conf *c, char *err, size_t len)
{
	int r;

	conf_init(c, source_check_section);
	r = conf_load_file(c, o->config_path, err, len);
	if (r == -ENOENT && !o->config_explicit)
		r = 0;
	for (size_t i = 0; r == 0 && i < o->n_ov; i++) {
		const struct override *ov = &o->ov[i];

		if (ov->source)
			r = conf_set_source(c, ov->source, ov->key, ov->value, ov->where, err, len);
		else
			r = conf_set(c, ov->key, ov->value, ov->where, err, len);
	}
	if (r < 0) {
		conf_free(c);
		return -EINVAL;
	}
	return 0;
}

/* --dump NAME: only NAME runs, its tested output goes to stdout. */
int cmdline_dump_config(const struct options *o, struct conf *c, char *err, size_t len)
{
	const struct source_ops *drv = source_find_driver(o->dump);
	int r;

	if (!drv) {
		snprintf(err, len, "option --dump: unknown source '%s'", o->dump);
		return -EINVAL;
	}
	for (size_t i = 0; i < source_n_drivers; i++) {
		const char *name = source_drivers[i]->name;

		if (source_drivers[i]->default_on && strcmp(name, o->dump) != 0 &&
		    !conf_find_section(c, name)) {
			r = conf_set_source(c, name, "enabled", "no", "option --dump", err, len);
			if (r < 0)
				return r;
		}
	}
	for (size_t i = 0; i < c->n_sections; i++) {
		const char *name = c->sections[i].name;

		r = conf_set_source(c, name, "enabled", strcmp(name, o->dump) == 0 ? "yes" : "no",
				    "option --dump", err, len);
		if (r < 0)
			return r;
	}
	if (!conf_find_section(c, o->dump)) {
		r = conf_set_source(c, o->dump, "enabled", "yes", "option --dump", err, len);
		if (r < 0)
			return r;
	}
	return conf_set(c, "random-device", "/dev/stdout", "option --dump", err, len);
}

/*
 * SIGHUP: the same, but a file that was read at start and cannot be read again now (gone,
 * emptied, a pipe already drained as with -c <(...)) keeps the running configuration
 * rather than falling back to the defaults.
 */
int cmdline_reload_config(void *ctx, struct conf *out, char *err, size_t len)
{
	const struct options *o = ctx;
	struct stat st;

	if (o->config_seen) {
		if (stat(o->config_path, &st) < 0) {
			snprintf(err, len, "cannot read '%s' again: %s", o->config_path,
				 strerror(errno));
			return -EINVAL;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, len, "'%s' is not a regular file and cannot be read again",
				 o->config_path);
			return -EINVAL;
		}
		if (st.st_size == 0) {
			snprintf(err, len, "'%s' is empty", o->config_path);
			return -EINVAL;
		}
	}
	return cmdline_load_config(o, out, err, len);
}
