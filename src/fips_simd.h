/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the SIMD FIPS 140-2 engines share (src/fips_x86.c, src/fips_arm64.c): the scalar
 * ends of the counting method of src/fips.c that no vector step covers (the long-run
 * candidates, the block's 32-bit tail word, the last bytes, the continuous test at the
 * block's edges), the padded copy the runs pass reads, and the macro that makes an engine
 * from its two passes. Static inline, no intrinsics: each engine file compiles it for its
 * own target.
 *
 * The engines read the block twice:
 *  - the bytes as they are, in steps of a vector: poker, the long-run prefilter, the
 *    continuous test; the bytes past the last whole step go to fips_simd_finish();
 *  - the big-endian 64-bit words of a padded copy (native order, written by the first
 *    pass, ends by fips_pad_ends()): the runs chains of src/fips.c over the 312 full
 *    words; the 32-bit tail word goes to fips_tail_runs().
 * The number of runs of zeros follows from that of ones: runs alternate, so it is the
 * same, plus one when the block starts with 0, plus one when it ends with 0, minus one.
 */
#ifndef RNGD_FIPS_SIMD_H
#define RNGD_FIPS_SIMD_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fips_engine.h"
#include "util.h"

#define FIPS_FULL_WORDS (FIPS_BLOCK_BYTES / 8)				/* 312 */
#define FIPS_TAIL_BYTES (FIPS_BLOCK_BYTES - FIPS_FULL_WORDS * 8)	/* 4 */

/* POPCNT for the scalar ends on x86-64 (the engines run only where the CPU has it). */
#if defined(__x86_64__)
#define FIPS_POPCNT_FN __attribute__((target("popcnt"))) static inline
#else
#define FIPS_POPCNT_FN static inline
#endif

static inline unsigned int fips_bit_at(const uint8_t *block, size_t i)
{
	return (block[i / 8] >> (7 - i % 8)) & 1;
}

/*
 * Whether bytes b and b + 1 are both 00 or both ff and lie in a run of 26 or more equal
 * bits. Every such run covers two such bytes, so this tried on every b is the exact test.
 */
static inline bool fips_long_run_at(const uint8_t *block, size_t b)
{
	size_t lo = 8 * b, hi = 8 * b + 16; /* the run is [lo, hi) so far */
	unsigned int v;

	if (block[b] != block[b + 1] || (block[b] != 0 && block[b] != 0xff))
		return false;
	v = block[b] & 1;
	while (lo > 0 && hi - lo < 26 && fips_bit_at(block, lo - 1) == v)
		lo--;
	while (hi < FIPS_BLOCK_BITS && hi - lo < 26 && fips_bit_at(block, hi) == v)
		hi++;
	return hi - lo >= 26;
}

/*
 * The long-run test on the bytes of the n steps (step bytes each) flagged in flags[]; a
 * step's last byte is tried with the next step's first.
 */
static inline bool fips_long_run_flagged(const uint8_t *block, const uint8_t *flags, size_t n,
					 size_t step)
{
	for (size_t s = 0; s < n; s++) {
		if (!flags[s])
			continue;
		for (size_t b = s * step; b < (s + 1) * step; b++)
			if (fips_long_run_at(block, b))
				return true;
	}
	return false;
}

/* Runs of set bits of the block's last (32-bit, zero-padded) word z; pz the bit before. */
FIPS_POPCNT_FN void fips_tail_runs(uint64_t z, uint64_t pz, uint64_t ge[6])
{
	uint64_t c = z & ~((z >> 1) | (pz << 63));

	ge[0] += (uint64_t)__builtin_popcountll(c);
	for (unsigned int k = 1; k < 6; k++) {
		c &= z << k;
		ge[k] += (uint64_t)__builtin_popcountll(c);
	}
}

/*
 * The counts of the last bytes, from byte `from` (a multiple of 4) to the end, the tail
 * word's runs, the monobit count from the nibbles, and the runs of zeros of length >= 1;
 * x311 is the last full word and last the tail word (words 311 and 312 of the padded copy).
 */
FIPS_POPCNT_FN void fips_simd_finish(const uint8_t *block, size_t from, uint64_t x311,
				     uint64_t last, struct fips_counts *c)
{
	const uint64_t tail_mask = ~UINT64_C(0) << (64 - FIPS_TAIL_BYTES * 8);

	for (size_t i = from; i < FIPS_BLOCK_BYTES; i++) {
		c->nibbles[block[i] >> 4]++;
		c->nibbles[block[i] & 15]++;
	}
	for (size_t i = from; i + 1 < FIPS_BLOCK_BYTES && !c->maybe_long_run; i++)
		c->maybe_long_run = fips_long_run_at(block, i);
	for (unsigned int v = 1; v < 16; v++)
		c->ones += c->nibbles[v] * (uint64_t)__builtin_popcount(v);

	fips_tail_runs(last, x311 & 1, c->ones_ge);
	fips_tail_runs(~last & tail_mask, !(x311 & 1), c->zeros_ge);
	/* Runs alternate: see the top of this file. */
	c->zeros_ge[0] = c->ones_ge[0] + !(block[0] & 0x80) + !(block[FIPS_BLOCK_BYTES - 1] & 1) - 1;
}

/* The first word against the previous block's last, and the new state. */
static inline bool fips_continuous_ends(const uint8_t *block, uint32_t *last_word)
{
	uint32_t first;
	bool repeat;

	memcpy(&first, block, sizeof(first));
	repeat = first == *last_word;
	memcpy(last_word, block + FIPS_BLOCK_BYTES - 4, sizeof(*last_word));
	return repeat;
}

/*
 * The padded copy the runs pass reads: the block's big-endian 64-bit words in native order,
 * word i at pad + 8 + 8 * i, with a zero word before them (pad) and the 32-bit tail word,
 * zero-padded, after them (word 312). The bytes pass writes words 0..311 (it has the bytes
 * in a register anyway); this writes the two ends.
 */
#define FIPS_PAD_BYTES (8 + (FIPS_FULL_WORDS + 1) * 8)
#define FIPS_PAD_WORD(pad, i) ((pad) + 8 + 8 * (i))

static inline void fips_pad_ends(uint8_t *pad, const uint8_t *block)
{
	uint32_t t;
	uint64_t last;

	memcpy(&t, block + FIPS_FULL_WORDS * 8, sizeof(t));
	last = (uint64_t)be32toh(t) << 32;
	memset(pad, 0, 8);
	memcpy(FIPS_PAD_WORD(pad, FIPS_FULL_WORDS), &last, sizeof(last));
}

/*
 * An engine from its two passes over STEP-byte vectors: NAME_bytes(block, pad, c), which
 * also writes words 0..311 to pad (FIPS_PAD_WORD(pad, i) is STEP-aligned for i a multiple
 * of STEP / 8), and NAME_runs(pad, c). Defines NAME_counts(), NAME_test() and
 * fips_engine_NAME (with NAME_supported()), compiled for the engine's target (FN) so that
 * the passes inline into them. The padded copy holds entropy: wiped.
 */
#define FIPS_SIMD_ENGINE(NAME, FN, STEP)                                                  \
	static FN void NAME##_counts(const uint8_t *block, uint32_t *last_word,           \
				     struct fips_counts *c)                               \
	{                                                                                 \
		uint8_t buf[(STEP) - 8 + FIPS_PAD_BYTES] __attribute__((aligned(STEP)));  \
		uint8_t *pad = buf + (STEP) - 8;                                          \
		uint64_t x311, last;                                                      \
                                                                                          \
		memset(c, 0, sizeof(*c));                                                 \
		fips_pad_ends(pad, block);                                                \
		NAME##_bytes(block, pad, c);                                              \
		NAME##_runs(pad, c);                                                      \
		memcpy(&x311, FIPS_PAD_WORD(pad, FIPS_FULL_WORDS - 1), sizeof(x311));     \
		memcpy(&last, FIPS_PAD_WORD(pad, FIPS_FULL_WORDS), sizeof(last));         \
		wipe(buf, sizeof(buf));                                                   \
		fips_simd_finish(block, (FIPS_BLOCK_BYTES / (STEP)) * (STEP), x311, last, \
				 c);                                                      \
		c->repeat |= fips_continuous_ends(block, last_word);                      \
	}                                                                                 \
                                                                                          \
	static FN unsigned int NAME##_test(const uint8_t *block, uint32_t *last_word)     \
	{                                                                                 \
		struct fips_counts c;                                                     \
                                                                                          \
		NAME##_counts(block, last_word, &c);                                      \
		return fips_verdict(&c, block);                                           \
	}                                                                                 \
                                                                                          \
	const struct fips_engine fips_engine_##NAME = {                                   \
		.name = #NAME,                                                            \
		.supported = NAME##_supported,                                            \
		.test = NAME##_test,                                                      \
		.counts = NAME##_counts,                                                  \
	}

#endif
