/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FIPS 140-2 (Change Notice 1, 2001-10-10) statistical tests on 20000-bit blocks:
 * monobit, poker, runs, long run, and the continuous run test on 32-bit words.
 * Pure: no I/O, no allocation, no logging. Bits are taken most significant first within
 * each byte.
 */
#ifndef RNGD_FIPS_H
#define RNGD_FIPS_H

#include <stdbool.h>
#include <stdint.h>

#define FIPS_BLOCK_BITS 20000
#define FIPS_BLOCK_BYTES (FIPS_BLOCK_BITS / 8)

/* Bits of the result of fips_test_block(); a block may fail several tests at once. */
enum fips_test {
	FIPS_MONOBIT = 1u << 0,
	FIPS_POKER = 1u << 1,
	FIPS_RUNS = 1u << 2,
	FIPS_LONG_RUN = 1u << 3,
	FIPS_CONTINUOUS = 1u << 4,
};
#define FIPS_N_TESTS 5

/* Test names as rng-tools prints them, indexed by bit number. */
extern const char *const fips_test_names[FIPS_N_TESTS];

/*
 * State of one stream: the last 32-bit word seen, for the continuous run test. The first
 * 32 bits of a stream only seed it (fips_init).
 */
struct fips_ctx {
	uint32_t last_word;
};

/* Start a stream; seed is the stream's first 32 bits, in memory order. */
void fips_init(struct fips_ctx *ctx, const uint8_t seed[4]);

/*
 * Run all five tests on one 2500-byte block and carry the continuous-test state to the
 * next block. Returns 0 when the block passed, else a mask of enum fips_test bits.
 */
unsigned int fips_test_block(struct fips_ctx *ctx, const uint8_t block[FIPS_BLOCK_BYTES]);

#endif
