// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * source-latency: the figures of seed 000's table for any rngd source, in the same layout,
 * measured on the raw read path (the driver's read(), before the FIPS tests) with
 * source_read_once():
 *
 *   Maximum throughput for 10240xCOUNT test:   COUNT reads of 10240 bytes, timed as a
 *     Kbits / sec: N                            whole; 1 Kbit = 1024 bits (seed 000's
 *                                               39.0679 is 10240 bytes in 2.047716 s)
 *   Entropy allocation times (usec) for block size: 128     SAMPLES reads of 128 bytes,
 *     Min: N / Max: N / Avg: N                              each timed alone
 *   Entropy allocation times (usec) for block size: 10240   the same with 10240 bytes
 *
 * Without --count/--samples the amounts are cut to fit a time budget (--budget, 10 s) on
 * a slow source, from the rate of a first calibration read.
 *
 * Built twice: bench/source-latency, and bench/source-latency-emu (SOURCE_LATENCY_EMU)
 * which runs the via source on any x86 CPU under the SIGILL xstore emulator of the tests,
 * posing as a C3 Nehemiah C5P (seed 000's core) with MSR 0x110B in a temporary file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "source.h"
#include "source_set.h"
#include "util.h"

#ifdef SOURCE_LATENCY_EMU
#include "sources/via.h"
#include "xstore_emu.h"
#define PROG "source-latency-emu"
#else
#define PROG "source-latency"
#endif

/* sysexits.h values, spelled out. */
#define EXIT_USAGE 2
#define EXIT_UNAVAILABLE 66
#define EXIT_IO 74
#define EXIT_CONFIG 78

#define BIG 10240
#define SMALL 128
#define DEFAULT_COUNT 1024
#define DEFAULT_SAMPLES 256
#define DEFAULT_BUDGET 10

struct opts {
	const char *config;
	const char **overrides; /* SRC:KEY:VALUE */
	size_t n_overrides;
	uint64_t count, samples, budget;
	bool count_set, samples_set;
	const char *source;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [-c CONFIG] [-O SRC:KEY:VALUE ...] [--count N] [--samples N]\n"
		"       [--budget SECONDS] SOURCE\n"
		"Time raw reads of one rngd source (before the FIPS tests), as seed 000's table.\n"
		"  -c, --config FILE     load an rngd.conf (default: none, the built-in defaults)\n"
		"  -O, --option S:K:V    set key K of source S, as rngd -O\n"
		"  -n, --count N         blocks of 10240 bytes in the throughput test (default %d)\n"
		"  -s, --samples N       timed reads of 128 and of 10240 bytes (default %d)\n"
		"  -b, --budget SECONDS  without -n/-s, cut the amounts to finish in about this\n"
		"                        time on a slow source; 0 never cuts (default %d)\n"
		"Exit: 0 done, 2 usage, 66 source unavailable, 74 read error, 78 configuration.\n",
		DEFAULT_COUNT, DEFAULT_SAMPLES, DEFAULT_BUDGET);
}

_printf_(2, 3) __attribute__((noreturn)) static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static uint64_t number(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_uint(arg, min, max, &v) < 0)
		die(EXIT_USAGE, "option %s: '%s' is not a number in %llu..%llu", opt, arg,
		    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "option", required_argument, NULL, 'O' },
		{ "count", required_argument, NULL, 'n' },
		{ "samples", required_argument, NULL, 's' },
		{ "budget", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct opts){ .count = DEFAULT_COUNT,
			    .samples = DEFAULT_SAMPLES,
			    .budget = DEFAULT_BUDGET };
	o->overrides = calloc((size_t)argc, sizeof(*o->overrides));
	if (!o->overrides)
		die(1, "out of memory");
	while ((c = getopt_long(argc, argv, "c:O:n:s:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'O':
			o->overrides[o->n_overrides++] = optarg;
			break;
		case 'n':
			o->count = number("--count", optarg, 1, 1u << 20);
			o->count_set = true;
			break;
		case 's':
			o->samples = number("--samples", optarg, 1, 1u << 20);
			o->samples_set = true;
			break;
		case 'b':
			o->budget = number("--budget", optarg, 0, 86400);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(EXIT_USAGE);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		exit(EXIT_USAGE);
	}
	o->source = argv[optind];
}

static void set_or_die(struct conf *c, const char *src, const char *key, const char *value,
		       const char *where)
{
	char err[CONF_ERR_MAX];

	if (conf_set_source(c, src, key, value, where, err, sizeof(err)) < 0)
		die(EXIT_CONFIG, "%s", err);
}

/* -O SRC:KEY:VALUE, SRC being "file:NAME" for sources with instances (as rngd's -O). */
static void apply_override(struct conf *c, const char *arg)
{
	const char *c1 = strchr(arg, ':'), *key, *c2;
	const struct source_ops *drv;
	char *src, *k;

	if (!c1)
		die(EXIT_USAGE, "option -O '%s': expected SOURCE:KEY:VALUE", arg);
	src = strndup(arg, (size_t)(c1 - arg));
	if (!src)
		die(1, "out of memory");
	drv = source_find_driver(src);
	key = c1 + 1;
	if (drv && drv->instances) {
		const char *ci = strchr(key, ':');

		free(src);
		if (!ci)
			die(EXIT_USAGE, "option -O '%s': expected SOURCE:INSTANCE:KEY:VALUE", arg);
		src = strndup(arg, (size_t)(ci - arg));
		key = ci + 1;
	}
	c2 = strchr(key, ':');
	if (!src || !c2 || c2 == key)
		die(EXIT_USAGE, "option -O '%s': expected SOURCE:KEY:VALUE", arg);
	k = strndup(key, (size_t)(c2 - key));
	if (!k)
		die(1, "out of memory");
	set_or_die(c, src, k, c2 + 1, "option -O");
	free(k);
	free(src);
}

#ifdef SOURCE_LATENCY_EMU
/*
 * A C3 Nehemiah, stepping 8 (C5P: two noise sources, MSR 0x110B), as test_via.c poses.
 * Defined here, it replaces the real CPUID of src/sources/via_cpuid.c at link time.
 */
void via_cpuid(uint32_t leaf, struct via_cpuid_regs *r)
{
	static const char vendor[12] = "CentaurHauls";

	memset(r, 0, sizeof(*r));
	switch (leaf) {
	case 0:
		r->eax = 1;
		memcpy(&r->ebx, vendor, 4);
		memcpy(&r->edx, vendor + 4, 4);
		memcpy(&r->ecx, vendor + 8, 4);
		break;
	case 1:
		r->eax = (6u << 8) | (9u << 4) | 8u;
		break;
	case 0xc0000000:
		r->eax = 0xc0000001;
		break;
	case 0xc0000001:
		r->edx = (1u << 2) | (1u << 3); /* RNG present, enabled */
		break;
	}
}

static char emu_msr_path[128];

/* The driver and the emulator hold the file open; its name is no longer needed. */
static void emu_unlink(void)
{
	if (emu_msr_path[0])
		unlink(emu_msr_path);
	emu_msr_path[0] = '\0';
}

/* Emulator, CPU identity and a temporary MSR file named by via's msr-device. */
static void emu_setup(struct conf *c)
{
	uint64_t msr = VIA_RNG_ENABLE;
	int fd, r;

	r = xemu_install();
	if (r < 0)
		die(EXIT_UNAVAILABLE, "xstore emulation needs x86 (i386/x86_64): %s", strerror(-r));
	snprintf(emu_msr_path, sizeof(emu_msr_path), "/tmp/source-latency-msr.XXXXXX");
	fd = mkostemp(emu_msr_path, O_CLOEXEC);
	if (fd < 0)
		die(1, "cannot create the emulated MSR file: %s", strerror(errno));
	if (pwrite(fd, &msr, sizeof(msr), VIA_MSR_RNG) != (ssize_t)sizeof(msr)) {
		unlink(emu_msr_path);
		die(1, "cannot write the emulated MSR file: %s", strerror(errno));
	}
	atexit(emu_unlink);
	xemu.msr_fd = fd;
	set_or_die(c, "via", "msr-device", emu_msr_path, PROG);
}
#else
static void emu_unlink(void)
{
}
#endif

/* Keep only source enabled: every other section and every default-on driver is disabled. */
static void only(struct conf *c, const char *source)
{
	for (size_t i = 0; i < c->n_sections; i++)
		if (strcmp(c->sections[i].name, source) != 0)
			set_or_die(c, c->sections[i].name, "enabled", "no", PROG);
	for (size_t i = 0; i < source_n_drivers; i++) {
		const struct source_ops *d = source_drivers[i];

		if (d->default_on && !d->instances && strcmp(d->name, source) != 0)
			set_or_die(c, d->name, "enabled", "no", PROG);
	}
	set_or_die(c, source, "enabled", "yes", PROG);
}

static const char *source_arg;

static uint64_t timed_read(struct source *src, uint8_t *buf, size_t n)
{
	uint64_t t0 = now_ns();
	ssize_t r = source_read_once(src, buf, n);
	uint64_t t1 = now_ns();

	if (r < 0) {
		wipe(buf, n);
		emu_unlink();
		die(EXIT_IO, "%s: read: %s", source_arg,
		    r == -ENODATA ? "end of file" : strerror((int)-r));
	}
	return t1 - t0;
}

/* n, cut to what fits in secs at per seconds each; at least min. */
static uint64_t fit(uint64_t n, double secs, double per, uint64_t min)
{
	double k = secs / per;

	return k >= (double)n ? n : MAX((uint64_t)k, min);
}

/*
 * Cut the amounts not given on the command line so that the whole run takes about
 * budget seconds at the rate of a calibration read (which also warms the source up):
 * half for the throughput test and half for the samples, or what the other leaves.
 */
static void fit_budget(struct opts *o, struct source *src, uint8_t *buf)
{
	uint64_t ns = timed_read(src, buf, SMALL), bytes = SMALL;
	uint64_t count = o->count, samples = o->samples;
	double rate, t_count, t_sample, budget = (double)o->budget;

	if (ns < 10 * NSEC_PER_MSEC) {
		ns += timed_read(src, buf, BIG);
		bytes += BIG;
	}
	if (o->budget == 0 || (o->count_set && o->samples_set))
		return;
	rate = (double)bytes / ((double)(ns ? ns : 1) / 1e9); /* bytes per second */
	t_count = BIG / rate;
	t_sample = (SMALL + BIG) / rate;
	if (!o->count_set)
		o->count = fit(o->count,
			       o->samples_set ? budget - (double)o->samples * t_sample : budget / 2,
			       t_count, 1);
	if (!o->samples_set)
		o->samples = fit(o->samples,
				 o->count_set ? budget - (double)o->count * t_count : budget / 2,
				 t_sample, 2);
	if (o->count == count && o->samples == samples)
		return;
	fprintf(stderr,
		"%s: %s gives about %.0f bytes/s: reduced to 10240x%llu and %llu samples "
		"(from 10240x%llu and %llu) to finish in about %llu s; --count/--samples "
		"override\n",
		PROG, source_arg, rate, (unsigned long long)o->count,
		(unsigned long long)o->samples, (unsigned long long)count,
		(unsigned long long)samples, (unsigned long long)o->budget);
}

/* Rounded to the nearest microsecond, as whole numbers like seed 000's table. */
static unsigned long long usec(uint64_t ns)
{
	return (unsigned long long)((ns + NSEC_PER_USEC / 2) / NSEC_PER_USEC);
}

static void report_times(struct source *src, uint8_t *buf, size_t n, uint64_t samples)
{
	uint64_t min = UINT64_MAX, max = 0, sum = 0;

	for (uint64_t i = 0; i < samples; i++) {
		uint64_t ns = timed_read(src, buf, n);

		min = MIN(min, ns);
		max = MAX(max, ns);
		sum += ns;
	}
	printf("  Entropy allocation times (usec) for block size: %zu\n", n);
	printf("    Min: %llu\n", usec(min));
	printf("    Max: %llu\n", usec(max));
	printf("    Avg: %llu\n", usec(sum / samples));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct conf c;
	struct source_set *set = NULL;
	struct source *src;
	struct source_stats st;
	char err[CONF_ERR_MAX];
	const struct source_ops *drv;
	uint8_t *buf;
	uint64_t total = 0;
	double kbits;
	int r;

	parse_args(&o, argc, argv);
	source_arg = o.source;
	drv = source_find_driver(o.source);
	if (!drv)
		die(EXIT_USAGE, "unknown source '%s' (rngd -l lists them)", o.source);
	if (drv->instances && !strchr(o.source, ':'))
		die(EXIT_USAGE, "source '%s' needs an instance: %s:NAME", o.source, drv->name);
	/* Only our own errors: a source that cannot work is reported below, once. */
	log_setup(LOG_ERR, LOG_TARGET_STDERR);
	log_set_ident(PROG);

	conf_init(&c, source_check_section);
	if (o.config) {
		r = conf_load_file(&c, o.config, err, sizeof(err));
		if (r < 0)
			die(EXIT_CONFIG, "%s", err[0] ? err : strerror(-r));
	}
#ifdef SOURCE_LATENCY_EMU
	emu_setup(&c);
#endif
	for (size_t i = 0; i < o.n_overrides; i++)
		apply_override(&c, o.overrides[i]);
	only(&c, o.source);
	r = source_set_new(&set, &c, err, sizeof(err));
	if (r < 0) {
		emu_unlink();
		die(EXIT_CONFIG, "%s", err[0] ? err : strerror(-r));
	}
	src = source_set_find(set, o.source);
	r = src ? source_set_init(set) : -ENOENT;
	emu_unlink();
	if (src && r > 0) { /* measured now: one still waiting for its device is not there */
		source_get_stats(src, &st);
		if (st.state == SOURCE_WAITING)
			r = 0;
	}
	if (r <= 0 || !src) {
		const char *why = "not in the configuration";

		if (src) {
			source_get_stats(src, &st);
			if (st.last_error_text[0])
				why = st.last_error_text;
			else
				why = r < 0 ? strerror(-r) : "unknown reason";
		}
		die(EXIT_UNAVAILABLE, "%s: not available: %s", o.source, why);
	}

	buf = malloc(BIG);
	if (!buf)
		die(1, "out of memory");
	fit_budget(&o, src, buf);

	printf("%s%s, raw driver reads (before the FIPS tests):\n", o.source,
#ifdef SOURCE_LATENCY_EMU
	       " (emulated PadLock xstore, C3 Nehemiah C5P identity)"
#else
	       ""
#endif
	);
	for (uint64_t i = 0; i < o.count; i++)
		total += timed_read(src, buf, BIG);
	printf("  Maximum throughput for %dx%llu test:\n", BIG, (unsigned long long)o.count);
	kbits = (double)o.count * BIG * 8 / 1024 / ((double)(total ? total : 1) / 1e9);
	/* Six significant digits as seed 000 ("7519.05"), never an exponent. */
	if (kbits < 1e6)
		printf("    Kbits / sec: %g\n", kbits);
	else
		printf("    Kbits / sec: %.0f\n", kbits);
	fflush(stdout);
	report_times(src, buf, SMALL, o.samples);
	report_times(src, buf, BIG, o.samples);

	wipe(buf, BIG);
	free(buf);
	source_set_free(set);
	conf_free(&c);
	free(o.overrides);
#ifdef SOURCE_LATENCY_EMU
	xemu_remove();
#endif
	return 0;
}
