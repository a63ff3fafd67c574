// SPDX-License-Identifier: GPL-2.0-or-later
/* rngd's command line: options, --help, and the configuration they make (cmdline.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdline.h"
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
	{ 0 },
};

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
		"  -W, --fill-watermark=BITS   legacy kernels: refill level\n"
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
		"  -v, --version               print the version\n"
		"  -h, --help                  this help\n\n"
		"Exit status: 0 stopped cleanly, 1 runtime failure, 2 usage, 66 no usable source,\n"
		"77 not permitted (no CAP_SYS_ADMIN), 78 bad configuration.\n");
}

static void _printf_(1, 2) usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rngd: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'rngd --help' for more information.\n");
	exit(EXIT_USAGE);
}

static void add_override(struct options *o, const char *source, const char *key,
			 const char *value, int opt)
{
	struct override *ov = realloc(o->ov, (o->n_ov + 1) * sizeof(*ov));

	if (!ov) {
		fprintf(stderr, "rngd: out of memory\n");
		exit(EXIT_RUNTIME);
	}
	o->ov = ov;
	ov = &o->ov[o->n_ov++];
	ov->source = source ? strdup(source) : NULL;
	ov->key = strdup(key);
	ov->value = strdup(value);
	if (opt < 0x100)
		snprintf(ov->where, sizeof(ov->where), "option -%c", opt);
	else
		snprintf(ov->where, sizeof(ov->where), "option --%s", key);
	if ((source && !ov->source) || !ov->key || !ov->value) {
		fprintf(stderr, "rngd: out of memory\n");
		exit(EXIT_RUNTIME);
	}
}

static char *xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r) {
		fprintf(stderr, "rngd: out of memory\n");
		exit(EXIT_RUNTIME);
	}
	return r;
}

/*
 * -O SRC:KEY:VALUE, where SRC is TYPE:INSTANCE for sources with instances
 * ("-O file:usb0:path:/dev/ttyUSB0"); VALUE may hold colons. -O SRC alone lists the
 * source's keys.
 */
static void parse_option_arg(struct options *o, const char *arg)
{
	const struct source_ops *drv = source_find_driver(arg);
	const char *end = strchr(arg, ':'), *value;
	char *source, *key;

	if (end && (size_t)(end - arg) == strlen("rngd") && strncmp(arg, "rngd", 4) == 0) {
		/* -O rngd:KEY:VALUE: any [rngd] key; VALUE may be empty ("status-file"). */
		value = strchr(end + 1, ':');
		if (!value || value == end + 1)
			usage_error("option -O '%s': expected rngd:KEY:VALUE", arg);
		key = xstrndup(end + 1, (size_t)(value - end - 1));
		add_override(o, NULL, key, value + 1, 'O');
		free(key);
		return;
	}
	if (end && drv && drv->instances)
		end = strchr(end + 1, ':');
	if (!end) {
		o->print_options = arg;
		return;
	}
	value = strchr(end + 1, ':');
	if (!value || value == end + 1)
		usage_error("option -O '%s': expected SOURCE:KEY:VALUE", arg);
	source = xstrndup(arg, (size_t)(end - arg));
	key = xstrndup(end + 1, (size_t)(value - end - 1));
	add_override(o, source, key, value + 1, 'O');
	free(source);
	free(key);
}

/* --format=FORMAT of --status. */
static enum status_format parse_format(const char *s)
{
	if (strcmp(s, "table") == 0)
		return STATUS_FORMAT_TABLE;
	if (strcmp(s, "json") == 0)
		return STATUS_FORMAT_JSON;
	/* What the textfile collector reads is Prometheus' text format: both names say it. */
	if (strcmp(s, "openmetrics") == 0 || strcmp(s, "prometheus") == 0)
		return STATUS_FORMAT_METRICS;
	usage_error("option --format: '%s' is not one of: table json openmetrics prometheus", s);
	return STATUS_FORMAT_TABLE; /* not reached: usage_error() exits */
}

void cmdline_parse(struct options *o, int argc, char **argv)
{
	int c;

	o->config_path = CONF_DEFAULT_PATH;
	o->log_level = LOG_INFO;
	while ((c = getopt_long(argc, argv, "fbdqlx:n:O:r:o:p:s:W:R:e:tiuD:vc:h?", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 'b':
			o->foreground = false;
			break;
		case 'd':
			o->log_level = LOG_DEBUG;
			break;
		case 'q':
			o->log_level = LOG_ERR;
			break;
		case 'l':
			o->list = true;
			break;
		case 'x':
			add_override(o, optarg, "enabled", "no", c);
			break;
		case 'n':
			add_override(o, optarg, "enabled", "yes", c);
			break;
		case 'O':
			parse_option_arg(o, optarg);
			break;
		case 'r':
			add_override(o, "hwrng", "device", optarg, c);
			break;
		case 'o':
			add_override(o, NULL, "random-device", optarg, c);
			break;
		case 'p':
			add_override(o, NULL, "pid-file", optarg, c);
			break;
		case 's':
			add_override(o, NULL, "feed-bytes", optarg, c);
			break;
		case 'W':
			add_override(o, NULL, "fill-watermark", optarg, c);
			break;
		case 'R':
			add_override(o, NULL, "feed-interval", optarg, c);
			break;
		case 'e':
			add_override(o, NULL, "entropy-count", optarg, c);
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
		case 'D':
			add_override(o, NULL, "user", optarg, c);
			break;
		case 'v':
			printf("rngd " PACKAGE_VERSION "\n");
			exit(0);
		case 'c':
			o->config_path = optarg;
			o->config_explicit = true;
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
		case OPT_FORMAT:
			o->status_format = parse_format(optarg);
			o->status_format_option = "--format";
			break;
		case OPT_METRICS_FILE:
			add_override(o, NULL, "metrics-file", optarg, c);
			break;
		case OPT_METRICS_INTERVAL:
			add_override(o, NULL, "metrics-interval", optarg, c);
			break;
		case OPT_ONCE:
			o->once = true;
			o->foreground = true;
			break;
		case OPT_DUMP:
			o->dump = optarg;
			o->foreground = true;
			break;
		case OPT_FORCE_OUTPUT:
			add_override(o, NULL, "force-output", "yes", c);
			break;
		case OPT_KERNEL_HWRNG:
			add_override(o, NULL, "kernel-hwrng", optarg, c);
			break;
		case OPT_RESTORE_KERNEL_HWRNG:
			o->restore_kernel_hwrng = true;
			break;
		case OPT_GRANT_KERNEL_HWRNG:
			o->grant_kernel_hwrng = optarg ? optarg : "rngd";
			break;
		case OPT_DUMP_BYTES:
			if (parse_uint(optarg, 1, UINT64_MAX, &o->dump_bytes) < 0)
				usage_error("option --dump-bytes: '%s' is not a positive number", optarg);
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'rngd --help' for more information.\n");
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->status_format_option && !o->status)
		usage_error("%s goes with --status", o->status_format_option);
	if (o->dump_bytes && !o->dump)
		usage_error("%s goes with --dump", "--dump-bytes");
}

void cmdline_free(struct options *o)
{
	for (size_t i = 0; i < o->n_ov; i++) {
		free(o->ov[i].source);
		free(o->ov[i].key);
		free(o->ov[i].value);
	}
	free(o->ov);
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
