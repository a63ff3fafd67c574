// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the daemon's replay history (src/health.h) costs: its memory (the RSS it adds after
 * a few blocks, as it grows, and full), and the time of
 * health_test_block() per 2500-byte block once the history is full (every lookup then
 * misses the caches as it would in a long-running daemon), with and without the lock the
 * reader threads take around it. Usage: bench/health-history [BLOCKS] (default 500000).
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fips.h"
#include "health.h"

#define BLOCK FIPS_BLOCK_BYTES
#define DISTINCT 256

static uint64_t state = 0x2400;

/* SplitMix64: fast pseudo-random data that passes the tests. */
static void fill(uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t z = (state += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		memcpy(b + i, &z, len - i < 8 ? len - i : 8);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long rss_kib(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* ns per block over n blocks (refilled DISTINCT at a time, not timed). */
static double run(struct health *h, uint8_t *blocks, long n, pthread_mutex_t *lock)
{
	double ns = 0;

	for (long i = 0; i < n; i += DISTINCT) {
		double t0;

		fill(blocks, (size_t)DISTINCT * BLOCK);
		t0 = now();
		for (int j = 0; j < DISTINCT; j++) {
			unsigned int r;

			if (lock)
				pthread_mutex_lock(lock);
			r = health_test_block(h, blocks + (size_t)j * BLOCK, BLOCK);
			if (lock)
				pthread_mutex_unlock(lock);
			if (r) {
				fprintf(stderr, "health-history: a false alarm (%u) on random data\n", r);
				exit(1);
			}
		}
		ns += now() - t0;
	}
	return ns / (double)n;
}

/* Test one block of new data; a false alarm ends the run. */
static void test_one(struct health *h, uint8_t *b)
{
	fill(b, BLOCK);
	if (health_test_block(h, b, BLOCK)) {
		fprintf(stderr, "health-history: a false alarm on random data\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const uint64_t key[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	static const long marks[] = { 1, 40, 120, 1000 };
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 500000;
	long rss0, rss[sizeof(marks) / sizeof(marks[0])], rss1, seen = 0;
	uint8_t *blocks = malloc((size_t)DISTINCT * BLOCK);
	struct health *h;
	const size_t tables =
		(size_t)HEALTH_TABLE * 4 + (size_t)HEALTH_ABUCKETS * HEALTH_ASLOTS * 4;
	double fill_ns, plain, locked;

	if (!blocks || n < DISTINCT) {
		fprintf(stderr, "usage: health-history [BLOCKS >= %d]\n", DISTINCT);
		return 2;
	}
	fill(blocks, (size_t)DISTINCT * BLOCK); /* its pages in the RSS before rss0 */
	rss0 = rss_kib();
	h = health_new(key);
	if (!h) {
		fprintf(stderr, "health-history: out of memory\n");
		return 1;
	}
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		for (; seen < marks[m]; seen++)
			test_one(h, blocks);
		rss[m] = rss_kib() - rss0;
	}
	/* Filling: the history's first HEALTH_HISTORY blocks (pages touched as it goes). */
	fill_ns = run(h, blocks, HEALTH_HISTORY, NULL);
	rss1 = rss_kib();
	plain = run(h, blocks, n, NULL);
	locked = run(h, blocks, n, &lock);
	printf("replay history: %d blocks (%.0f MB of data) of every source\n", HEALTH_HISTORY,
	       (double)HEALTH_HISTORY * BLOCK / 1e6);
	printf("  memory when full: %zu bytes (%.2f MiB): %zu of FIFOs, %zu of tables\n",
	       sizeof(struct health) + tables, (double)(sizeof(struct health) + tables) / (1 << 20),
	       sizeof(struct health), tables);
	printf("  RSS it adds: after %ld, %ld, %ld, %ld blocks +%ld, +%ld, +%ld, +%ld KiB; "
	       "full +%ld KiB\n",
	       marks[0], marks[1], marks[2], marks[3], rss[0], rss[1], rss[2], rss[3], rss1 - rss0);
	printf("  time per 2500-byte block: %.0f ns filling, %.0f ns full, %.0f ns full with "
	       "the lock (%ld blocks; %.0f MB/s)\n",
	       fill_ns, plain, locked, n, BLOCK / locked * 1e3);
	health_free(h);
	free(blocks);
	return 0;
}
