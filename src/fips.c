// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FIPS 140-2 tests, word-parallel.
 *
 * The block is read as a big-endian stream of 64-bit words, so the first bit of the stream
 * (the most significant bit of byte 0) is bit 63 of word 0. Runs are counted without
 * walking bits: for a word z of "ones" (the block itself for runs of ones, its complement
 * for runs of zeros), S = z & ~(z >> 1 | carry) marks the first bit of every run, and
 * S & (z << 1) & (z << 2) & ... & (z << (k - 1)) (with bits shifted in from the next word)
 * marks the first bit of every run of length k or more. The number of runs of length
 * exactly k is then popcount(>= k) - popcount(>= k + 1). Bits past the end of the block are
 * zero in both streams, which ends the last run where the block ends.
 *
 * The long-run test is exact but runs only on the few blocks (about 8 %) that hold two
 * consecutive 00 or ff bytes, without which no run of 26 is possible.
 */
#include "config.h"

/*
 * RNGD_PORTABLE: the generic scalar code alone, so that x86 tests it too
 * (tests/test_portable_fallback).
 */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(RNGD_PORTABLE)
#define FIPS_X86 1
#include <cpuid.h>
#endif
#if defined(__x86_64__) && !defined(RNGD_PORTABLE)
#define FIPS_X86_64 1
#endif
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(RNGD_PORTABLE)
#define FIPS_ARM64 1
#endif
#include <endian.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fips.h"
#include "fips_engine.h"
#include "util.h"
#include "wide.h"

const char *const fips_test_names[FIPS_N_TESTS] = {
	"FIPS 140-2(2001-10-10) Monobit",
	"FIPS 140-2(2001-10-10) Poker",
	"FIPS 140-2(2001-10-10) Runs",
	"FIPS 140-2(2001-10-10) Long run",
	"FIPS 140-2(2001-10-10) Continuous run",
};

/* FIPS 140-2 Change Notice 1 (2001-10-10), section 4.9.1. */
#define MONOBIT_MIN 9726	/* pass: 9725 < X < 10275 */
#define MONOBIT_MAX 10274
/*
 * Poker: X = 16/5000 * sum(f(i)^2) - 5000 must satisfy 2.16 < X < 46.17. Multiplied by
 * 5000: 10800 < 16 * sum - 25000000 < 230850, exact in integers.
 */
#define POKER_LOW 10800
#define POKER_HIGH 230850
#define LONG_RUN 26		/* a run of 26 or more fails */

static const struct {
	unsigned int lo, hi;
} runs_interval[6] = {
	{ 2315, 2685 }, { 1114, 1386 }, { 527, 723 }, { 240, 384 }, { 103, 209 }, { 103, 209 },
};

#define WORDS ((FIPS_BLOCK_BYTES + 7) / 8)	/* 313; the last holds 32 bits */
#define TAIL_BYTES (FIPS_BLOCK_BYTES - (WORDS - 1) * 8)

void fips_init(struct fips_ctx *ctx, const uint8_t seed[4])
{
	memcpy(&ctx->last_word, seed, sizeof(ctx->last_word));
}

static inline uint64_t load_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

/* Bits p+j of the stream (z, then zn), moved to position p, for each p of the word. */
static inline uint64_t ahead(uint64_t z, uint64_t zn, unsigned int j)
{
	return wide_shl_hi(z, zn, j);
}

/* The block's i-th big-endian word; the last one holds TAIL_BYTES, zero-padded. */
static inline uint64_t block_word(const uint8_t *block, unsigned int i)
{
	uint8_t tail[8] = { 0 };
	uint64_t w;

	if (i < WORDS - 1)
		return load_be64(block + i * 8);
	if (i > WORDS - 1)
		return 0;
	memcpy(tail, block + i * 8, TAIL_BYTES);
	w = load_be64(tail);
	wipe(tail, sizeof(tail));
	return w;
}

/*
 * Exact long-run test. With e the "no transition" mask (bit p set when bits p and p+1 are
 * equal), a run of LONG_RUN equal bits starts at p when e(p .. p+LONG_RUN-2) are all set;
 * found for the 64 positions of a word by doubling over the 128 bits of (e, next e).
 */
bool fips_has_long_run(const uint8_t *block)
{
	const uint64_t tail_mask = ~UINT64_C(0) << (64 - TAIL_BYTES * 8);
	uint64_t x = block_word(block, 0), xn = block_word(block, 1), e, en, found = 0;

	e = ~(x ^ ahead(x, xn, 1));
	for (unsigned int i = 0; i < WORDS; i++) {
		uint64_t xnn = block_word(block, i + 2);
		/* a1 = (e, en) as a 128-bit word, high half first; ak: k set bits from p */
		uint64_t a2, a2n, a4, a4n, a8, a8n, a16;

		en = ~(xn ^ ahead(xn, xnn, 1));
		/* The last bit of the block ends its run: nothing is equal to what follows it. */
		if (i + 1 == WORDS - 1)
			en &= tail_mask << 1;
		else if (i + 1 >= WORDS)
			en = 0;
		if (i == WORDS - 1)
			e &= tail_mask << 1;
		a2 = e & ahead(e, en, 1), a2n = en & en << 1;
		a4 = a2 & ahead(a2, a2n, 2), a4n = a2n & a2n << 2;
		a8 = a4 & ahead(a4, a4n, 4), a8n = a4n & a4n << 4;
		a16 = a8 & ahead(a8, a8n, 8);
		found |= a16 & ahead(a8, a8n, 16) & ahead(e, en, 24);
		e = en;
		xn = xnn;
	}
	return found != 0;
}

/* 0x80 in each byte of w that is zero (exact, no false positives). */
static inline uint64_t zero_bytes(uint64_t w)
{
	const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f);

	return ~(((w & low7) + low7) | w | low7);
}

/*
 * Add the runs of set bits of z to ge[0..5] (>= 1 .. >= 6). zn is the next word, pz the
 * previous word's last bit (0 before the first word).
 */
static inline __attribute__((always_inline)) void chain_runs(uint64_t z, uint64_t zn, uint64_t pz,
							     uint64_t ge[6])
{
	uint64_t c = z & ~((z >> 1) | (pz << 63));

	ge[0] += (uint64_t)__builtin_popcountll(c);
	for (unsigned int k = 1; k < 6; k++) {
		c &= ahead(z, zn, k);
		ge[k] += (uint64_t)__builtin_popcountll(c);
	}
}

/* Everything test_bits() learns in its pass over the block. */
struct bit_counts {
	uint64_t ones_ge[6], zeros_ge[6];	/* runs of length >= 1 .. >= 6 */
	unsigned int ones;
	uint64_t pairs;		/* two consecutive bytes without a transition: maybe a long run */
	uint64_t prev_zt;	/* 0x80 when the previous word ended in such a byte */
};

/*
 * t has bit p set where bit p differs from bit p+1. A run of 26 equal bits is 25 zeros of
 * t in a row, which always hold two whole aligned zero bytes of t; blocks without such a
 * pair (about 92 % of random blocks) cannot fail the long-run test.
 */
static inline __attribute__((always_inline)) void note_pairs(struct bit_counts *bc, uint64_t t)
{
	uint64_t zt = zero_bytes(t);

	bc->pairs |= (zt & (zt << 8)) | (bc->prev_zt & (zt >> 56));
	bc->prev_zt = zt & 0x80;
}

/*
 * One pass over the block: monobit count, runs of ones and zeros by length, and the
 * long-run prefilter. In all but the last two words the zeros are exactly the complement
 * of the ones, so both run chains share the look-ahead words and one counter each: ones in
 * the low half, zeros in the high half (a block has at most 10000 runs of a kind). The
 * last two words see the end of the block, past which no run continues.
 */
static inline __attribute__((always_inline)) void scan_bits(const uint8_t *block,
							    struct bit_counts *bc)
{
	const uint64_t tail_mask = ~UINT64_C(0) << (64 - TAIL_BYTES * 8);
	uint64_t acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, acc4 = 0, acc5 = 0;
	uint64_t x = load_be64(block), xn, last, p1 = 0, p0 = 1, t;

/* Both chains one step further; written out, as compilers do not always unroll a loop. */
#define STEP(acc, a)                                                                     \
	do {                                                                             \
		c &= (a);                                                                \
		d &= ~(a);                                                               \
		acc += (uint64_t)__builtin_popcountll(c) |                               \
		       (uint64_t)__builtin_popcountll(d) << 32;                          \
	} while (0)

	for (unsigned int i = 0; i < WORDS - 2; i++) {
		/* p1/p0: a run of ones/zeros continues from the previous word (first: none). */
		uint64_t c = x & ~((x >> 1) | (p1 << 63));
		uint64_t d = ~x & ((x >> 1) | (p0 << 63));
		uint64_t a1;

		xn = load_be64(block + (i + 1) * 8);
		a1 = ahead(x, xn, 1);
		bc->ones += (unsigned int)__builtin_popcountll(x);
		note_pairs(bc, x ^ a1);
		acc0 += (uint64_t)__builtin_popcountll(c) | (uint64_t)__builtin_popcountll(d) << 32;
		STEP(acc1, a1);
		STEP(acc2, ahead(x, xn, 2));
		STEP(acc3, ahead(x, xn, 3));
		STEP(acc4, ahead(x, xn, 4));
		STEP(acc5, ahead(x, xn, 5));
		p1 = p0 = x & 1;
		x = xn;
	}
#undef STEP
	bc->ones_ge[0] = acc0 & 0xffffffff, bc->zeros_ge[0] = acc0 >> 32;
	bc->ones_ge[1] = acc1 & 0xffffffff, bc->zeros_ge[1] = acc1 >> 32;
	bc->ones_ge[2] = acc2 & 0xffffffff, bc->zeros_ge[2] = acc2 >> 32;
	bc->ones_ge[3] = acc3 & 0xffffffff, bc->zeros_ge[3] = acc3 >> 32;
	bc->ones_ge[4] = acc4 & 0xffffffff, bc->zeros_ge[4] = acc4 >> 32;
	bc->ones_ge[5] = acc5 & 0xffffffff, bc->zeros_ge[5] = acc5 >> 32;

	/* x: the last full word; last: the 32 bits of the tail, zero-padded. */
	last = block_word(block, WORDS - 1);
	bc->ones += (unsigned int)__builtin_popcountll(x) + (unsigned int)__builtin_popcountll(last);
	chain_runs(x, last, p1, bc->ones_ge);
	chain_runs(~x, ~last & tail_mask, !p1, bc->zeros_ge);
	chain_runs(last, 0, x & 1, bc->ones_ge);
	chain_runs(~last & tail_mask, 0, !(x & 1), bc->zeros_ge);
	note_pairs(bc, x ^ ahead(x, last, 1));
	/* Past the last comparison (bit 30 with bit 31), count a transition everywhere. */
	t = last ^ (last << 1);
	note_pairs(bc, t | ~(tail_mask << 1));
}

unsigned int fips_verdict(const struct fips_counts *c, const uint8_t *block)
{
	unsigned int result = 0;
	uint64_t sum = 0;
	int64_t x;

	if (c->ones < MONOBIT_MIN || c->ones > MONOBIT_MAX)
		result |= FIPS_MONOBIT;
	for (unsigned int k = 0; k < 16; k++)
		sum += c->nibbles[k] * c->nibbles[k];
	x = (int64_t)(16 * sum) - 25000000;
	if (!(x > POKER_LOW && x < POKER_HIGH))
		result |= FIPS_POKER;
	for (unsigned int k = 0; k < 6; k++) {
		uint64_t n1 = k < 5 ? c->ones_ge[k] - c->ones_ge[k + 1] : c->ones_ge[k];
		uint64_t n0 = k < 5 ? c->zeros_ge[k] - c->zeros_ge[k + 1] : c->zeros_ge[k];

		if (n1 < runs_interval[k].lo || n1 > runs_interval[k].hi ||
		    n0 < runs_interval[k].lo || n0 > runs_interval[k].hi)
			result |= FIPS_RUNS;
	}
	if (c->maybe_long_run && fips_has_long_run(block))
		result |= FIPS_LONG_RUN;
	if (c->repeat)
		result |= FIPS_CONTINUOUS;
	return result;
}

static inline __attribute__((always_inline)) void poker(const uint8_t *block, uint64_t f[16])
{
	uint32_t hist[4][256];
	size_t i;

	/* Four histograms keep consecutive increments of the same byte value independent. */
	memset(hist, 0, sizeof(hist));
	for (i = 0; i + 4 <= FIPS_BLOCK_BYTES; i += 4) {
		hist[0][block[i]]++;
		hist[1][block[i + 1]]++;
		hist[2][block[i + 2]]++;
		hist[3][block[i + 3]]++;
	}
	for (; i < FIPS_BLOCK_BYTES; i++)
		hist[0][block[i]]++;
	for (unsigned int b = 0; b < 256; b++) {
		uint64_t n = (uint64_t)hist[0][b] + hist[1][b] + hist[2][b] + hist[3][b];

		f[b >> 4] += n;
		f[b & 15] += n;
	}
}

static inline __attribute__((always_inline)) bool continuous(uint32_t *last_word,
							     const uint8_t *block)
{
	uint32_t last = *last_word;
	bool repeat = false;

	for (size_t i = 0; i < FIPS_BLOCK_BYTES; i += 4) {
		uint32_t w;

		memcpy(&w, block + i, sizeof(w));
		if (w == last)
			repeat = true;
		last = w;
	}
	*last_word = last;
	return repeat;
}

/* The scalar engine: one pass for the bits, a byte histogram for poker. */
static inline __attribute__((always_inline)) void scalar_counts(const uint8_t *block,
								uint32_t *last_word,
								struct fips_counts *c)
{
	struct bit_counts bc = { 0 };

	memset(c, 0, sizeof(*c));
	scan_bits(block, &bc);
	c->ones = bc.ones;
	memcpy(c->ones_ge, bc.ones_ge, sizeof(c->ones_ge));
	memcpy(c->zeros_ge, bc.zeros_ge, sizeof(c->zeros_ge));
	c->maybe_long_run = bc.pairs != 0;
	poker(block, c->nibbles);
	c->repeat = continuous(last_word, block);
}

static inline __attribute__((always_inline)) unsigned int scalar_test(const uint8_t *block,
								      uint32_t *last_word)
{
	struct fips_counts c;

	scalar_counts(block, last_word, &c);
	return fips_verdict(&c, block);
}

/* The counts alone, for tests (the portable build of them). */
static void scalar_engine_counts(const uint8_t *block, uint32_t *last_word,
				 struct fips_counts *c)
{
	scalar_counts(block, last_word, c);
}

#ifdef FIPS_X86
__attribute__((target("popcnt"))) static unsigned int scalar_test_popcnt(const uint8_t *block,
									  uint32_t *last_word)
{
	return scalar_test(block, last_word);
}

static bool cpu_has_popcnt(void)
{
	unsigned int eax, ebx, ecx, edx;

	/*
	 * CPUID.01H:ECX[23] directly: __builtin_cpu_supports() would first run libgcc's whole
	 * feature scan, which is most of this test's start-up cost on an emulated CPU
	 * (bench/boot).
	 */
	return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_POPCNT);
}
#endif

static unsigned int scalar_test_generic(const uint8_t *block, uint32_t *last_word)
{
	return scalar_test(block, last_word);
}

static bool scalar_supported(void)
{
	return true;
}

/*
 * The scalar engine, with POPCNT where the CPU has it (a choice made once; threads racing
 * here store the same value).
 */
static unsigned int scalar_engine_test(const uint8_t *block, uint32_t *last_word)
{
	typedef unsigned int (*test_fn)(const uint8_t *, uint32_t *);
	static _Atomic(test_fn) impl;
	test_fn fn = atomic_load_explicit(&impl, memory_order_relaxed);

	if (!fn) {
		fn = scalar_test_generic;
#ifdef FIPS_X86
		if (cpu_has_popcnt())
			fn = scalar_test_popcnt;
#endif
		atomic_store_explicit(&impl, fn, memory_order_relaxed);
	}
	return fn(block, last_word);
}

static const struct fips_engine scalar_engine = {
	.name = "scalar",
	.supported = scalar_supported,
	.test = scalar_engine_test,
	.counts = scalar_engine_counts,
};

const struct fips_engine *const fips_engines[] = {
	&scalar_engine,
#ifdef FIPS_X86_64
	&fips_engine_avx2,
	&fips_engine_avx512,
#endif
#ifdef FIPS_ARM64
	&fips_engine_neon,
#endif
	NULL,
};

static _Atomic(const struct fips_engine *) current;

static const struct fips_engine *fastest(void)
{
	const struct fips_engine *e = fips_engines[0];

	for (size_t i = 1; fips_engines[i]; i++)
		if (fips_engines[i]->supported())
			e = fips_engines[i];
	return e;
}

int fips_engine_select(const char *name)
{
	const struct fips_engine *e = NULL;

	if (!name || !*name || strcmp(name, "auto") == 0) {
		e = fastest();
	} else {
		for (size_t i = 0; fips_engines[i] && !e; i++)
			if (strcmp(fips_engines[i]->name, name) == 0)
				e = fips_engines[i];
		if (!e)
			return -EINVAL;
		if (!e->supported())
			return -ENOTSUP;
	}
	atomic_store_explicit(&current, e, memory_order_relaxed);
	return 0;
}

const struct fips_engine *fips_engine_current(void)
{
	const struct fips_engine *e = atomic_load_explicit(&current, memory_order_relaxed);

	if (!e) {
		e = fastest();
		atomic_store_explicit(&current, e, memory_order_relaxed);
	}
	return e;
}

const char *fips_engine_names(void)
{
	static char names[64];
	int n = snprintf(names, sizeof(names), "auto");

	for (size_t i = 0; fips_engines[i] && n >= 0 && (size_t)n < sizeof(names); i++)
		n += snprintf(names + n, sizeof(names) - (size_t)n, ", %s", fips_engines[i]->name);
	return names;
}

unsigned int fips_test_block(struct fips_ctx *ctx, const uint8_t block[FIPS_BLOCK_BYTES])
{
	return fips_engine_current()->test(block, &ctx->last_word);
}
