// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What one 2500-byte block costs a reader thread, in the same run: the FIPS 140-2 tests with
 * each engine this CPU runs (src/fips_engine.h), and the replay and SP 800-90B checks
 * (health_test_block(), src/health.h) that come before them. Pseudo-random blocks, all
 * distinct; the best of 9 rounds of BLOCKS blocks each (the figure least disturbed by other
 * work on the machine). Usage: bench/block-cost [BLOCKS] (default 4000).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fips_engine.h"
#include "health.h"

#define ROUNDS 9

static uint64_t state = 0x2300;

static void fill(uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint64_t z = (state += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		b[i] = (uint8_t)(z ^ (z >> 31));
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;
	uint64_t key[2] = { 1, 2 };
	volatile unsigned int sink = 0;
	struct health *h;
	double best, fips_best = 0;
	uint8_t *data;

	if (n == 0 || !(data = malloc(n * ROUNDS * FIPS_BLOCK_BYTES)) || !(h = health_new(key))) {
		fprintf(stderr, "block-cost: bad block count or out of memory\n");
		return 1;
	}
	fill(data, n * ROUNDS * FIPS_BLOCK_BYTES);
	printf("per 2500-byte block, best of %d rounds of %zu blocks\n", ROUNDS, n);
	for (size_t e = 0; fips_engines[e]; e++) {
		const struct fips_engine *eng = fips_engines[e];

		if (!eng->supported()) {
			printf("  FIPS 140-2, %-7s engine: not supported by this CPU\n", eng->name);
			continue;
		}
		best = 1e9;
		for (int r = 0; r < ROUNDS; r++) {
			uint32_t last = 0;
			double t = now();

			for (size_t i = 0; i < n; i++)
				sink += eng->test(data + (r * n + i) * FIPS_BLOCK_BYTES, &last);
			t = now() - t;
			best = t < best ? t : best;
		}
		fips_best = best;
		printf("  FIPS 140-2, %-7s engine: %7.0f ns  (%.0f MB/s)\n", eng->name,
		       best / (double)n * 1e9, (double)n * FIPS_BLOCK_BYTES / best / 1e6);
	}
	/* Every block is new to the history: the path of a healthy source. */
	best = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double t = now();

		for (size_t i = 0; i < n; i++)
			sink += health_test_block(h, data + (r * n + i) * FIPS_BLOCK_BYTES,
						  FIPS_BLOCK_BYTES);
		t = now() - t;
		best = t < best ? t : best;
	}
	printf("  replay + SP 800-90B checks:  %7.0f ns  (%.2fx the fastest FIPS engine's time)\n",
	       best / (double)n * 1e9, best / fips_best);
	health_free(h);
	free(data);
	(void)sink; /* read: the results were used, for the compiler as well */
	return 0;
}
