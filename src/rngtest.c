// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngtest: FIPS 140-2 tests on standard input, a drop-in for rng-tools' rngtest. Scripts
 * parse its statistics, so their lines keep rng-tools' exact form.
 *
 * Input is read in chunks of whole blocks, as much as one read() returns (at most
 * CHUNK_BLOCKS blocks, and never past the -c limit or the next -b statistics), so a fast
 * source costs one read, one clock pair and one write per chunk while a slow one is tested
 * block by block as its data arrives.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "fips.h"
#include "fips_engine.h"
#include "util.h"

#define CHUNK_BLOCKS 64
#define SEED_BYTES 4

/* Exit codes of rng-tools' rngtest. */
#define EXIT_FAIL 1
#define EXIT_USAGE 10
#define EXIT_INPUT 11
#define EXIT_OS 12

struct speed {
	uint64_t bits, ns; /* totals, for the average */
	double min, max;   /* slowest and fastest measurement, bits/s */
	bool measured;
};

struct stats {
	uint64_t bytes_in, bytes_out, good, bad;
	uint64_t failed[FIPS_N_TESTS];
	struct speed in, fips, out;
};

struct opts {
	uint64_t block_count; /* 0: until end of input */
	uint64_t block_stats; /* 0: none */
	uint64_t timed_stats; /* seconds, 0: none */
	bool pipe;
};

static void speed_add(struct speed *s, uint64_t bits, uint64_t ns)
{
	double rate;

	/* A measurement below the clock's resolution counts as 1 ns. */
	if (ns == 0)
		ns = 1;
	rate = (double)bits * 1e9 / (double)ns;
	if (!s->measured || rate < s->min)
		s->min = rate;
	if (!s->measured || rate > s->max)
		s->max = rate;
	s->measured = true;
	s->bits += bits;
	s->ns += ns;
}

static void print_speed(const char *what, const struct speed *s)
{
	static const char *const units[] = { "bits", "Kibits", "Mibits", "Gibits", "Tibits" };
	double min = s->measured ? s->min : 0, max = s->measured ? s->max : 0;
	double avg = s->ns ? (double)s->bits * 1e9 / (double)s->ns : 0;
	size_t u = 0;

	while (u + 1 < ARRAY_SIZE(units) && min >= 1024 && avg >= 1024 && max >= 1024) {
		min /= 1024;
		avg /= 1024;
		max /= 1024;
		u++;
	}
	fprintf(stderr, "rngtest: %s: (min=%.3f; avg=%.3f; max=%.3f)%s/s\n", what, min, avg, max,
		units[u]);
}

static void print_stats(const struct stats *st, const struct opts *o, uint64_t start_ns)
{
	fprintf(stderr, "rngtest: bits received from input: %llu\n",
		(unsigned long long)st->bytes_in * 8);
	if (o->pipe)
		fprintf(stderr, "rngtest: bits sent to output: %llu\n",
			(unsigned long long)st->bytes_out * 8);
	fprintf(stderr, "rngtest: FIPS 140-2 successes: %llu\n", (unsigned long long)st->good);
	fprintf(stderr, "rngtest: FIPS 140-2 failures: %llu\n", (unsigned long long)st->bad);
	for (size_t i = 0; i < FIPS_N_TESTS; i++)
		fprintf(stderr, "rngtest: %s: %llu\n", fips_test_names[i],
			(unsigned long long)st->failed[i]);
	print_speed("input channel speed", &st->in);
	print_speed("FIPS tests speed", &st->fips);
	if (o->pipe)
		print_speed("output channel speed", &st->out);
	fprintf(stderr, "rngtest: Program run time: %llu microseconds\n",
		(unsigned long long)((now_ns() - start_ns) / NSEC_PER_USEC));
}

static void print_version(FILE *f)
{
	fprintf(f,
		"rngtest (%s) %s\n"
		"License GPLv2+: GNU GPL version 2 or later <https://gnu.org/licenses/gpl.html>.\n"
		"This is free software: you are free to change and redistribute it.\n"
		"There is NO WARRANTY, to the extent permitted by law.\n",
		PACKAGE_NAME, PACKAGE_VERSION);
}

static void print_help(void)
{
	printf("Usage: rngtest [OPTION...]\n"
	       "Check the randomness of data using FIPS 140-2 RNG tests.\n"
	       "\n"
	       "  -b, --blockstats=n         Dump statistics every n blocks (default: 0)\n"
	       "  -c, --blockcount=n         Exit after processing n blocks (default: 0)\n"
	       "  -p, --pipe                 Enable pipe mode: work silently, and echo to\n"
	       "                             stdout all good blocks\n"
	       "  -t, --timedstats=n         Dump statistics every n seconds (default: 0)\n"
	       "  -?, --help                 Give this help list\n"
	       "      --usage                Give a short usage message\n"
	       "  -V, --version              Print program version\n"
	       "\n"
	       "FIPS tests operate on 20000-bit blocks.  Data is read from stdin.  Statistics\n"
	       "and messages are sent to stderr.\n"
	       "\n"
	       "Exit status: 0 when no block failed and at least one passed, 1 when a block\n"
	       "failed or none was tested, 10 on usage errors, 11 on input errors, 12 on other\n"
	       "errors (such as output errors in pipe mode).\n");
}

static int usage_error(void)
{
	fprintf(stderr, "Usage: rngtest [OPTION...]\n"
			"Try `rngtest --help' or `rngtest --usage' for more information.\n");
	return EXIT_USAGE;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_HELP = 0x100, OPT_USAGE };
	static const struct option longopts[] = {
		{ "blockcount", required_argument, NULL, 'c' },
		{ "blockstats", required_argument, NULL, 'b' },
		{ "timedstats", required_argument, NULL, 't' },
		{ "pipe", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "usage", no_argument, NULL, OPT_USAGE },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:c:t:pV", longopts, NULL)) != -1) {
		uint64_t *val = NULL, max = UINT64_MAX;

		switch (c) {
		case 'b':
			val = &o->block_stats;
			break;
		case 'c':
			val = &o->block_count;
			break;
		case 't':
			val = &o->timed_stats;
			max = UINT32_MAX;
			break;
		case 'p':
			o->pipe = true;
			break;
		case 'V':
			print_version(stdout);
			return 0;
		case OPT_USAGE:
			printf("Usage: rngtest [-p?V] [-b n] [-c n] [-t n] [--blockstats=n]\n"
			       "            [--blockcount=n] [--pipe] [--timedstats=n] [--help]\n"
			       "            [--usage] [--version]\n");
			return 0;
		case OPT_HELP:
			print_help();
			return 0;
		case '?':
			/* -? is left out of the option string so that it lands here too. */
			if (optopt == '?') {
				print_help();
				return 0;
			}
			if (optopt)
				fprintf(stderr, "rngtest: invalid option -- '%c'\n", optopt);
			else
				fprintf(stderr, "rngtest: unrecognized option '%s'\n",
					argv[optind - 1]);
			fprintf(stderr, "Try `rngtest --help' or `rngtest --usage' for more "
					"information.\n");
			return EXIT_USAGE;
		case ':':
			fprintf(stderr, "rngtest: option '%s' requires an argument\n",
				argv[optind - 1]);
			fprintf(stderr, "Try `rngtest --help' or `rngtest --usage' for more "
					"information.\n");
			return EXIT_USAGE;
		default:
			return usage_error();
		}
		if (val && parse_uint(optarg, 0, max, val) < 0) {
			fprintf(stderr, "rngtest: invalid value '%s' for option -%c\n", optarg, c);
			return usage_error();
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rngtest: unexpected argument '%s'\n", argv[optind]);
		return usage_error();
	}
	return -1;
}

struct input {
	int fd, sigfd;
	bool eof, interrupted;
	int error; /* -errno of a failed read */
};

/*
 * Read into buf[*have..min] until at least min bytes are there, or up to max when more is
 * available at once; stop early at end of file, on an error or on SIGINT/SIGTERM. A
 * deadline (monotonic ns, 0 for none) also cuts the wait short. Returns the bytes read.
 */
static size_t fill_input(struct input *in, uint8_t *buf, size_t *have, size_t min, size_t max,
			 uint64_t deadline)
{
	size_t got = 0;

	while (*have < min && !in->eof && !in->error && !in->interrupted) {
		struct pollfd p[2] = {
			{ .fd = in->fd, .events = POLLIN },
			{ .fd = in->sigfd, .events = POLLIN },
		};
		int timeout = -1;
		ssize_t r;

		if (deadline) {
			uint64_t now = now_ns();

			if (now >= deadline)
				break;
			timeout = (int)MIN((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC,
					   (uint64_t)INT32_MAX);
		}
		r = poll(p, 2, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			in->error = -errno;
			break;
		}
		if (p[1].revents & POLLIN) {
			in->interrupted = true;
			break;
		}
		if (r == 0)
			break;
		/* Whatever poll says about the input (POLLNVAL, POLLERR), read() reports it. */
		r = read(in->fd, buf + *have, max - *have);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			in->error = -errno;
		} else if (r == 0) {
			in->eof = true;
		} else {
			*have += (size_t)r;
			got += (size_t)r;
		}
	}
	return got;
}

/* Block SIGINT and SIGTERM and return a signalfd for them, or -errno. */
static int setup_signals(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	/*
	 * A shell starts background jobs with SIGINT ignored, and an ignored signal never
	 * reaches the signalfd; rng-tools' rngtest catches it regardless, so do we.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Test the n whole blocks of buf; move the ones that passed to its front. */
static size_t test_blocks(struct fips_ctx *ctx, struct stats *st, uint8_t *buf, size_t n)
{
	size_t passed = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t *block = buf + i * FIPS_BLOCK_BYTES;
		unsigned int r = fips_test_block(ctx, block);

		if (r) {
			st->bad++;
			for (size_t t = 0; t < FIPS_N_TESTS; t++)
				if (r & (1u << t))
					st->failed[t]++;
			continue;
		}
		st->good++;
		if (passed != i)
			memmove(buf + passed * FIPS_BLOCK_BYTES, block, FIPS_BLOCK_BYTES);
		passed++;
	}
	return passed;
}

static int test_input(const struct opts *o, struct input *in, uint8_t *buf, uint64_t start_ns)
{
	struct stats st = { 0 };
	struct fips_ctx ctx;
	uint64_t interval = o->timed_stats * NSEC_PER_SEC;
	uint64_t next_timed = interval ? now_ns() + interval : 0;
	size_t have = 0, seed = o->pipe ? 2 * SEED_BYTES : SEED_BYTES;
	bool drained = false;
	int status;

	if (!o->pipe)
		fprintf(stderr, "rngtest: starting FIPS tests...\n");

	/* In pipe mode rng-tools discards the first 32 bits and seeds with the next 32. */
	st.bytes_in = fill_input(in, buf, &have, seed, seed, 0);
	if (in->error) {
		fprintf(stderr, "rngtest: error reading input: %s\n", strerror(-in->error));
		return EXIT_INPUT;
	}
	if (have < seed) {
		if (!in->interrupted && !o->pipe)
			fprintf(stderr, "rngtest: entropy source drained\n");
		return EXIT_FAIL;
	}
	fips_init(&ctx, buf + seed - SEED_BYTES);
	have = 0;

	for (;;) {
		uint64_t done = st.good + st.bad, want = CHUNK_BLOCKS, t0, t1, t2;
		size_t n, passed;

		if (o->block_count) {
			if (done >= o->block_count)
				break;
			want = MIN(want, o->block_count - done);
		}
		if (o->block_stats)
			want = MIN(want, o->block_stats - done % o->block_stats);

		t0 = now_ns();
		n = fill_input(in, buf, &have, FIPS_BLOCK_BYTES, (size_t)want * FIPS_BLOCK_BYTES,
			       next_timed);
		t1 = now_ns();
		if (n)
			speed_add(&st.in, n * 8, t1 - t0);
		st.bytes_in += n;
		if (in->error) {
			fprintf(stderr, "rngtest: error reading input: %s\n", strerror(-in->error));
			status = EXIT_INPUT;
			goto out;
		}

		n = have / FIPS_BLOCK_BYTES;
		if (n) {
			passed = test_blocks(&ctx, &st, buf, n);
			t2 = now_ns();
			speed_add(&st.fips, n * FIPS_BLOCK_BITS, t2 - t1);
			if (o->pipe && passed) {
				int r = write_full(STDOUT_FILENO, buf, passed * FIPS_BLOCK_BYTES);

				if (r < 0) {
					fprintf(stderr, "rngtest: error writing to output: %s\n",
						strerror(-r));
					print_stats(&st, o, start_ns);
					status = EXIT_OS;
					goto out;
				}
				speed_add(&st.out, passed * FIPS_BLOCK_BITS, now_ns() - t2);
				st.bytes_out += passed * FIPS_BLOCK_BYTES;
			}
			/* A partial block stays at the front for the next chunk. */
			have -= n * FIPS_BLOCK_BYTES;
			if (have)
				memmove(buf, buf + n * FIPS_BLOCK_BYTES, have);
			if (o->block_stats && (st.good + st.bad) % o->block_stats == 0)
				print_stats(&st, o, start_ns);
		}
		if (interval && now_ns() >= next_timed) {
			print_stats(&st, o, start_ns);
			next_timed = now_ns() + interval;
		}
		if (in->interrupted)
			break;
		if (in->eof) {
			drained = true;
			break;
		}
	}
	if (drained && !o->pipe)
		fprintf(stderr, "rngtest: entropy source drained\n");
	print_stats(&st, o, start_ns);
	status = st.bad == 0 && st.good > 0 ? 0 : EXIT_FAIL;
out:
	return status;
}

/* RNGD_FIPS_ENGINE (rngtest(1)): -1 when chosen, else an exit code. */
static int select_engine(void)
{
	const char *name = getenv("RNGD_FIPS_ENGINE");
	int r = fips_engine_select(name);

	if (r == -EINVAL) {
		fprintf(stderr, "rngtest: RNGD_FIPS_ENGINE=%s: unknown engine (one of %s)\n", name,
			fips_engine_names());
		return EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "rngtest: RNGD_FIPS_ENGINE=%s: this CPU cannot run that engine\n",
			name);
		return EXIT_USAGE;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct input in = { .fd = STDIN_FILENO };
	uint64_t start_ns = now_ns();
	uint8_t *buf;
	int r;

	r = parse_args(argc, argv, &o);
	if (r >= 0)
		return r;
	r = select_engine();
	if (r >= 0)
		return r;
	if (!o.pipe) {
		print_version(stderr);
		fputc('\n', stderr);
	}

	/* A closed stdin is an input error; the signalfd must not take its place. */
	if (fcntl(STDIN_FILENO, F_GETFD) < 0)
		in.error = -errno;
	in.sigfd = setup_signals();
	if (in.sigfd < 0) {
		fprintf(stderr, "rngtest: cannot set up signals: %s\n", strerror(-in.sigfd));
		return EXIT_OS;
	}
	buf = malloc((size_t)CHUNK_BLOCKS * FIPS_BLOCK_BYTES);
	if (!buf) {
		fprintf(stderr, "rngtest: out of memory\n");
		return EXIT_OS;
	}
	r = test_input(&o, &in, buf, start_ns);
	wipe(buf, (size_t)CHUNK_BLOCKS * FIPS_BLOCK_BYTES);
	free(buf);
	close(in.sigfd);
	return r;
}
