// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngd: command line, start-up in dependency order, and shutdown in reverse. The main loop
 * is in daemon.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "daemon.h"
#include "log.h"
#include "notify.h"
#include "pidfile.h"
#include "privs.h"
#include "sink.h"
#include "source.h"
#include "source_set.h"
#include "stats.h"
#include "util.h"

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

struct options {
	const char *config_path;
	bool config_explicit;
	bool config_seen; /* read at start: a reload must find it again */
	bool foreground;
	int log_level;
	bool list, check_config, test_mode, once, status, status_json, ignore_fail;
	const char *dump;
	uint64_t dump_bytes;
	const char *print_options;
	struct override *ov;
	size_t n_ov;
};

enum {
	OPT_CHECK_CONFIG = 0x100,
	OPT_STATUS,
	OPT_JSON,
	OPT_ONCE,
	OPT_DUMP,
	OPT_DUMP_BYTES,
	OPT_HELP,
	OPT_FORCE_OUTPUT,
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
		"      --once                  seed the kernel once, reseed, exit\n"
		"      --dump=NAME             write one source's tested output to stdout\n"
		"      --dump-bytes=N          stop --dump after N bytes\n"
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

static void parse_args(struct options *o, int argc, char **argv)
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
			add_override(o, NULL, "use-slow-sources", "yes", c);
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
			o->status_json = true;
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
	if (o->status_json && !o->status)
		usage_error("%s goes with --status", "--json");
	if (o->dump_bytes && !o->dump)
		usage_error("%s goes with --dump", "--dump-bytes");
}

static void free_options(struct options *o)
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
static int load_config(const struct options *o, struct conf *c, char *err, size_t len)
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
static int dump_config(const struct options *o, struct conf *c, char *err, size_t len)
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
static int reload_config(void *ctx, struct conf *out, char *err, size_t len)
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
	return load_config(o, out, err, len);
}

/*
 * Background mode: fork once everything that can fail at start has been done, so that the
 * parent's exit status is the child's start-up result (rng-tools forks first and so exits 0
 * whatever happens). Returns in the child with *report_fd set; the parent never returns.
 */
static void daemonize(int *report_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		log_error("cannot create a pipe: %m");
		exit(EXIT_RUNTIME);
	}
	pid = fork();
	if (pid < 0) {
		log_error("cannot fork: %m");
		exit(EXIT_RUNTIME);
	}
	if (pid > 0) {
		unsigned char code = EXIT_RUNTIME;

		close(p[1]);
		if (read(p[0], &code, 1) != 1) {
			int st;

			if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
				code = (unsigned char)WEXITSTATUS(st);
		}
		_exit(code);
	}
	close(p[0]);
	setsid();
	*report_fd = p[1];
}

static void report_start(int *report_fd, unsigned char code)
{
	if (*report_fd < 0)
		return;
	if (write(*report_fd, &code, 1) != 1) {
		/* The parent is gone; nothing to report to. */
	}
	close(*report_fd);
	*report_fd = -1;
	if (code == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			/* Keep a terminal for the log lines; anything else is let go of. */
			if (!isatty(STDERR_FILENO))
				dup2(fd, STDERR_FILENO);
			if (fd > STDERR_FILENO)
				close(fd);
		}
	}
}

/* Sources that are open now (not absent, not waiting for their device). */
static int count_ready(struct source_set *set)
{
	int n = 0;

	for (size_t i = 0; i < source_set_size(set); i++) {
		struct source_stats st;

		source_get_stats(source_set_get(set, i), &st);
		n += st.state == SOURCE_STARTING;
	}
	return n;
}

/*
 * "no usable entropy source: NAME: why; ..." into buf, for the journal and STATUS=: why
 * each enabled source cannot work here.
 */
static void no_source_why(struct source_set *set, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "no usable entropy source");
	const char *sep = ": ";

	for (size_t i = 0; i < source_set_size(set) && off < len; i++) {
		struct source *src = source_set_get(set, i);
		struct source_stats st;

		source_get_stats(src, &st);
		if (!st.last_error_text[0])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s: %s", sep, source_name(src),
					st.last_error_text);
		sep = "; ";
	}
}

/* Open /dev/null on whichever of fds 0-2 is closed. 0 or -errno. */
static int take_std_fds(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lowest free fd: this one, as the ones below it are open. */
		n = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
		if (n < 0)
			return -errno;
		if (n != fd) {
			close(n);
			return -EBADF;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char err[CONF_ERR_MAX], why[256];
	struct options o = { 0 };
	struct conf conf;
	struct source_set *set = NULL;
	struct daemon d;
	enum daemon_mode mode = DAEMON_FEED;
	struct pidfile pid_file = { .fd = -1, .keeper_fd = -1 };
	int report_fd = -1, r, ret = EXIT_RUNTIME, usable;
	bool started = false;

	/*
	 * First thing: a closed standard fd would be taken by the next open (signalfd, the
	 * sink, an output file) and then written to as a log or overwritten with /dev/null.
	 */
	if (take_std_fds() < 0)
		return EXIT_RUNTIME;
	log_set_ident("rngd");
	parse_args(&o, argc, argv);
	log_setup(o.log_level, o.foreground ? LOG_TARGET_AUTO : LOG_TARGET_STDERR);

	if (source_check_drivers(source_drivers, source_n_drivers, why, sizeof(why)) < 0) {
		log_error("internal error: source table: %s", why);
		return EXIT_RUNTIME;
	}
	if (o.print_options) {
		if (source_print_options(o.print_options, stdout) < 0) {
			log_error("option -O: unknown source '%s'", o.print_options);
			return EXIT_USAGE;
		}
		return 0;
	}

	if (load_config(&o, &conf, err, sizeof(err)) < 0) {
		log_error("%s", err);
		free_options(&o);
		return EXIT_CONFIG;
	}
	o.config_seen = conf.path != NULL;
	if (o.status && !conf.status_file) {
		log_error("the status file is disabled ('status-file' is empty): there is no status "
			  "to show");
		ret = EXIT_RUNTIME;
		goto out_conf;
	}
	if (o.status) {
		r = stats_print_status(conf.status_file, o.status_json, stdout);
		ret = r < 0 ? EXIT_RUNTIME : 0;
		goto out_conf;
	}
	if (o.dump && dump_config(&o, &conf, err, sizeof(err)) < 0) {
		log_error("%s", err);
		ret = EXIT_CONFIG;
		goto out_conf;
	}
	if (source_set_new(&set, &conf, err, sizeof(err)) < 0) {
		log_error("%s", err);
		ret = EXIT_CONFIG;
		goto out_conf;
	}
	if (o.check_config && conf.user) {
		uid_t uid;
		gid_t gid;

		/* The user and group must exist here (privs_lookup() says which does not). */
		if (privs_lookup(conf.user, conf.group, &uid, &gid) < 0) {
			ret = EXIT_CONFIG;
			goto out_set;
		}
	}
	if (o.check_config) {
		printf("%s: configuration OK\n", conf.path ? conf.path : "defaults");
		ret = 0;
		goto out_set;
	}
	if (o.list) {
		ret = source_set_list(set, stdout) > 0 ? 0 : EXIT_NO_SOURCE;
		goto out_set;
	}

	if (o.test_mode)
		mode = DAEMON_TEST;
	else if (o.once)
		mode = DAEMON_ONCE;
	else if (o.dump)
		mode = DAEMON_DUMP;

	r = daemon_init(&d, &conf, set, mode, o.dump_bytes, reload_config, &o);
	if (r < 0) {
		ret = r == -EPERM ? EXIT_NO_PERM : EXIT_RUNTIME;
		if (ret == EXIT_NO_PERM)
			notify_nothing_to_do("not permitted to feed the kernel: no CAP_SYS_ADMIN");
		goto out_set;
	}
	/* conf and set belong to d from here on. */
	/*
	 * Locked before the sources are opened (a second daemon must not switch the first's
	 * backend) and before the fork (so that it fails in the foreground).
	 */
	if (!o.foreground && d.conf.pid_file) {
		pid_t holder;

		r = pidfile_lock(&pid_file, d.conf.pid_file, &holder, why, sizeof(why));
		if (r == -EBUSY) {
			log_error("pid file '%s': %s; not starting a second one", d.conf.pid_file,
				  why);
			ret = EXIT_RUNTIME;
			goto out_daemon;
		}
		if (r < 0)
			log_warning("cannot use pid file '%s': %s, ignoring", d.conf.pid_file, why);
	}
	usable = source_set_init(d.set);
	r = source_set_start_error(d.set);
	if (r == EINVAL) { /* the source has said why, naming itself */
		notify_nothing_to_do("bad configuration of a source");
		ret = EXIT_CONFIG;
		goto out_daemon;
	}
	/* --once seeds from what is there now: it does not wait for a device to appear. */
	if (usable > 0 && mode == DAEMON_ONCE)
		usable = count_ready(d.set);
	if (usable <= 0) {
		char text[256];

		no_source_why(d.set, text, sizeof(text));
		log_full(LOG_WARNING, NULL, "no-source", SOURCE_MESSAGE_NO_SOURCE, "%s", text);
		/* A limit or a permission of this run is a runtime failure, not "nothing here". */
		if (r > 0) {
			log_error("a source failed for a reason of this run (%s), not for want of "
				  "hardware",
				  strerror(r));
			ret = EXIT_RUNTIME;
			goto out_daemon;
		}
		notify_nothing_to_do(text);
		ret = EXIT_NO_SOURCE;
		goto out_daemon;
	}

	if (!o.foreground)
		daemonize(&report_fd);
	r = pidfile_write(&pid_file);
	if (r < 0)
		log_warning("cannot write pid file '%s': %s, ignoring", pid_file.path,
			    strerror(-r));
	/* After the drop, the daemon may not remove it from its directory: a keeper will. */
	if (pid_file.fd >= 0 && d.conf.user) {
		r = pidfile_keep_removable(&pid_file);
		if (r < 0)
			log_warning("pid file '%s' may stay behind at exit: %s", pid_file.path,
				    strerror(-r));
	}

	/*
	 * Every device, sysfs file and MSR is open: drop what is not needed from here on,
	 * before any thread starts (capabilities are per thread). The status directory goes to
	 * the new user first so that the status file can still be replaced.
	 */
	if (d.conf.user && d.conf.status_file) {
		uid_t uid;
		gid_t gid;

		r = privs_lookup(d.conf.user, d.conf.group, &uid, &gid);
		if (r >= 0) {
			r = stats_prepare_dir(d.conf.status_file, uid, gid);
			if (r == -ELOOP)
				log_warning("the directory of '%s' is a symlink: not followed; no "
					    "status file",
					    d.conf.status_file);
			else if (r == -EPERM)
				log_warning("the directory of '%s' is neither user '%s''s nor one "
					    "rngd made (root's, mode 0755, only its files): not "
					    "handing it over; no status file",
					    d.conf.status_file, d.conf.user);
			else if (r < 0)
				log_warning("cannot prepare the directory of '%s': %s, ignoring",
					    d.conf.status_file, strerror(-r));
			r = 0;
		}
	} else {
		r = 0;
	}
	if (r >= 0)
		r = privs_drop(d.conf.user, d.conf.group);
	if (r >= 0)
		r = privs_verify();
	if (r < 0) {
		ret = r == -EPERM ? EXIT_NO_PERM : r == -ENOENT || r == -EINVAL ? EXIT_CONFIG
										   : EXIT_RUNTIME;
		report_start(&report_fd, (unsigned char)ret);
		goto out_daemon;
	}

	r = daemon_start(&d);
	if (r < 0) {
		report_start(&report_fd, EXIT_RUNTIME);
		goto out_daemon;
	}
	report_start(&report_fd, 0);
	started = true;

	r = daemon_run(&d);
	if (d.conf.status_file)
		(void)stats_remove_status(d.conf.status_file);
	ret = r == -EPERM ? EXIT_NO_PERM : r == -ENOENT ? EXIT_NO_SOURCE : r < 0 ? EXIT_RUNTIME : 0;

out_daemon:
	/* A failed start puts back what the sources changed (rng_current), as rngd(8) says. */
	if (!started && ret != 0)
		source_set_abort(d.set);
	pidfile_release(&pid_file);
	daemon_fini(&d);
	free_options(&o);
	log_flush();
	return ret;
out_set:
	source_set_free(set);
out_conf:
	conf_free(&conf);
	free_options(&o);
	return ret;
}
