/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FIPS 140-2 engines behind fips_test_block(): the portable scalar one and SIMD ones
 * (src/fips_x86.c: AVX2, AVX-512; src/fips_arm64.c: NEON), chosen once at start by what the
 * CPU has, or forced by name (RNGD_FIPS_ENGINE, rngd(8), rngtest(1)). Every engine gives the
 * same verdicts on every block; tests/test_fips runs each one the CPU supports against the
 * reference.
 *
 * An engine gathers the counts below in its own way and src/fips.c judges them
 * (fips_verdict), so that the test limits live in one place.
 */
#ifndef RNGD_FIPS_ENGINE_H
#define RNGD_FIPS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "fips.h"

/* What one pass over a block found. */
struct fips_counts {
	uint64_t ones;			/* monobit: set bits */
	uint64_t nibbles[16];		/* poker: 4-bit values, most significant first */
	uint64_t ones_ge[6], zeros_ge[6]; /* runs of length >= 1 .. >= 6 */
	bool maybe_long_run;		/* the long-run test must look (fips_has_long_run) */
	bool repeat;			/* continuous: two consecutive 32-bit words equal */
};

/*
 * One engine. test() runs all five tests on a block; *last_word is the continuous test's
 * state (the previous 32-bit word in memory order), updated to the block's last word.
 * Returns 0 or a mask of enum fips_test bits.
 */
struct fips_engine {
	const char *name;
	bool (*supported)(void);
	unsigned int (*test)(const uint8_t *block, uint32_t *last_word);
	/*
	 * What test() judges, for tests: the same counts from every engine, except that
	 * maybe_long_run may be set by one engine on blocks another has cleared already.
	 */
	void (*counts)(const uint8_t *block, uint32_t *last_word, struct fips_counts *c);
};

/* The engines of this build, scalar first, slowest to fastest; NULL ends the list. */
extern const struct fips_engine *const fips_engines[];

/* The FIPS limits applied to counts (monobit, poker, runs, and long run when flagged). */
unsigned int fips_verdict(const struct fips_counts *c, const uint8_t *block);

/* The exact long-run test (a run of 26 or more equal bits). */
bool fips_has_long_run(const uint8_t *block);

#if defined(__x86_64__)
extern const struct fips_engine fips_engine_avx2, fips_engine_avx512;
#endif
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
extern const struct fips_engine fips_engine_neon;
#endif

/*
 * Choose the engine: NULL or "auto" for the fastest the CPU supports, else a name of
 * fips_engines. Returns 0, -EINVAL for an unknown name, -ENOTSUP when the CPU lacks it.
 * Call before any thread tests blocks; fips_test_block() alone chooses "auto".
 */
int fips_engine_select(const char *name);

/* The engine fips_test_block() uses (choosing "auto" when none was chosen yet). */
const struct fips_engine *fips_engine_current(void);

/*
 * "auto" and the names of fips_engines, for messages: "auto, scalar, avx2, avx512". A
 * static buffer, written on each call: the main thread's.
 */
const char *fips_engine_names(void);

#endif
