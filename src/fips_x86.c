// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FIPS 140-2 engines for x86-64 with AVX2 and with AVX-512, compiled with target
 * attributes (the build needs no -m flags) and chosen at start by CPUID and XGETBV
 * (src/fips.c). They count what the scalar engine counts, with the same method (see
 * src/fips.c), on 4 or 8 words at once; src/fips.c judges the counts.
 *
 * Two passes over a 2500-byte block:
 *  - the bytes as they are: poker (nibble counts, which also give the monobit count),
 *    the long-run prefilter (two consecutive equal bytes that are 00 or ff: a run of 26
 *    always covers two such whole bytes) and the continuous test (each 32-bit word
 *    against the next); and each vector, its 64-bit words byte-swapped, into the padded
 *    copy, so that pass 2 loads native words.
 *    Poker: a shuffle table per pair of nibble values v and v + 8 turns each nibble into
 *    1 (for v) or 16 (for v + 8), so a byte of the accumulator holds two 4-bit counters;
 *    7 rounds of 2 nibbles per byte fit in them before they are added up.
 *  - the 64-bit words of the padded copy: runs of ones and zeros of length >= 1 .. >= 6
 *    by the shifted-AND chains, both chains in one loop on the same look-ahead words (the
 *    zeros' chain is the ones' of the complement up to the last full word, where the
 *    block's end is still 5 or more bits away); the 32-bit tail word is done on its own.
 * The scalar ends and the engine macro are shared with the other SIMD engines
 * (src/fips_simd.h).
 */
#include "config.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fips_simd.h"
#include "util.h"

#define BYTES FIPS_BLOCK_BYTES
#define FULL_WORDS FIPS_FULL_WORDS

/* ---- CPU features ---- */

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

/* What the OS saves (XCR0 bits) and CPUID.7.0 says; false without OSXSAVE. */
static bool cpu_features(uint64_t xcr0_need, unsigned int ebx7_need, unsigned int ecx7_need)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return false;
	if (!(ecx & bit_OSXSAVE) || !(ecx & bit_AVX) || !(ecx & bit_POPCNT))
		return false;
	if ((xgetbv0() & xcr0_need) != xcr0_need)
		return false;
	if (__get_cpuid_max(0, NULL) < 7)
		return false;
	__cpuid_count(7, 0, eax, ebx, ecx, edx);
	return (ebx & ebx7_need) == ebx7_need && (ecx & ecx7_need) == ecx7_need;
}

#define XCR0_AVX 0x06	     /* SSE and AVX state */
#define XCR0_AVX512 0xe6     /* and opmask, ZMM_Hi256, Hi16_ZMM */

static bool avx2_supported(void)
{
	return cpu_features(XCR0_AVX, bit_AVX2, 0);
}

static bool avx512_supported(void)
{
	return cpu_features(XCR0_AVX512, bit_AVX512F | bit_AVX512BW,
			    bit_AVX512VBMI2 | bit_AVX512VPOPCNTDQ);
}

/* Shuffle tables: nibble v -> 1, v + 8 -> 16, others 0; for v = 0..7. */
#define PAIR_TABLE(v)                                                                    \
	{ (v) == 0, (v) == 1, (v) == 2, (v) == 3, (v) == 4, (v) == 5, (v) == 6, (v) == 7,    \
	  16 * ((v) == 0), 16 * ((v) == 1), 16 * ((v) == 2), 16 * ((v) == 3),                \
	  16 * ((v) == 4), 16 * ((v) == 5), 16 * ((v) == 6), 16 * ((v) == 7) }
static const uint8_t pair_tables[8][16] __attribute__((aligned(16))) = {
	PAIR_TABLE(0), PAIR_TABLE(1), PAIR_TABLE(2), PAIR_TABLE(3),
	PAIR_TABLE(4), PAIR_TABLE(5), PAIR_TABLE(6), PAIR_TABLE(7),
};
#define POKER_ROUNDS 7	/* 2 nibbles a round: 14 <= 15 */

static const uint8_t popcount_table[16] __attribute__((aligned(16))) = {
	0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
};

/* Byte order reversal within each 64-bit lane, for a 128-bit lane. */
static const uint8_t bswap_table[16] __attribute__((aligned(16))) = {
	7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
};

/* ---- AVX2 ---- */

#define AVX2_FN __attribute__((target("avx2,popcnt")))

static inline AVX2_FN __m256i bcast16(const uint8_t t[16])
{
	return _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)t));
}

static inline AVX2_FN uint64_t hsum256(__m256i v)
{
	return (uint64_t)_mm256_extract_epi64(v, 0) + (uint64_t)_mm256_extract_epi64(v, 1) +
	       (uint64_t)_mm256_extract_epi64(v, 2) + (uint64_t)_mm256_extract_epi64(v, 3);
}

/*
 * Pass 1 over the raw bytes: poker, long-run prefilter, continuous (32-byte steps); and
 * the words, byte-swapped, into pad for pass 2.
 */
static AVX2_FN void avx2_bytes(const uint8_t *block, uint8_t *pad, struct fips_counts *c)
{
	const __m256i low4 = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	const __m256i ones = _mm256_set1_epi8(-1), bswap = bcast16(bswap_table);
	__m256i tables[8], totals[8], repeat = zero;
	const size_t steps = BYTES / 32; /* 78: bytes 0..2495 */
	uint8_t flags[BYTES / 32];
	bool any = false;

	for (unsigned int p = 0; p < 8; p++) {
		tables[p] = bcast16(pair_tables[p]);
		totals[p] = zero;
	}
	for (size_t s0 = 0; s0 < steps; s0 += POKER_ROUNDS) {
		__m256i acc[8];
		size_t end = MIN(s0 + POKER_ROUNDS, steps);

#pragma GCC unroll 8
		for (unsigned int p = 0; p < 8; p++)
			acc[p] = zero;
		for (size_t s = s0; s < end; s++) {
			const uint8_t *q = block + 32 * s;
			__m256i v = _mm256_loadu_si256((const __m256i *)q);
			__m256i v1 = _mm256_loadu_si256((const __m256i *)(q + 1));
			__m256i w1 = _mm256_loadu_si256((const __m256i *)(q + 4));
			__m256i lo = _mm256_and_si256(v, low4);
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
			__m256i ff = _mm256_or_si256(_mm256_cmpeq_epi8(v, zero),
						     _mm256_cmpeq_epi8(v, ones));

			_mm256_store_si256((__m256i *)FIPS_PAD_WORD(pad, 4 * s),
					   _mm256_shuffle_epi8(v, bswap));

#pragma GCC unroll 8
			for (unsigned int p = 0; p < 8; p++)
				acc[p] = _mm256_add_epi8(
					acc[p], _mm256_add_epi8(_mm256_shuffle_epi8(tables[p], lo),
								_mm256_shuffle_epi8(tables[p], hi)));
			/* Long-run candidates: rare (about 8 % of random blocks have one). */
			flags[s] = !_mm256_testz_si256(ff, _mm256_cmpeq_epi8(v, v1));
			any |= flags[s];
			repeat = _mm256_or_si256(repeat, _mm256_cmpeq_epi32(v, w1));
		}
#pragma GCC unroll 8
		for (unsigned int p = 0; p < 8; p++) {
			__m256i l = _mm256_sad_epu8(_mm256_and_si256(acc[p], low4), zero);
			__m256i h = _mm256_sad_epu8(
				_mm256_and_si256(_mm256_srli_epi16(acc[p], 4), low4), zero);

			totals[p] = _mm256_add_epi64(totals[p],
						     _mm256_add_epi64(l, _mm256_slli_epi64(h, 32)));
		}
	}
	for (unsigned int p = 0; p < 8; p++) {
		uint64_t t = hsum256(totals[p]);

		c->nibbles[p] += t & 0xffffffff;
		c->nibbles[p + 8] += t >> 32;
	}
	c->maybe_long_run = any && fips_long_run_flagged(block, flags, steps, 32);
	c->repeat = !_mm256_testz_si256(repeat, repeat);
}

/* The set bits of each byte of v, by nibbles (0 .. 8). */
static inline AVX2_FN __m256i avx2_popcount_bytes(__m256i v, __m256i table, __m256i low4)
{
	__m256i lo = _mm256_and_si256(v, low4);
	__m256i hi = _mm256_and_si256(_mm256_srli_epi64(v, 4), low4);

	return _mm256_add_epi8(_mm256_shuffle_epi8(table, lo), _mm256_shuffle_epi8(table, hi));
}

/* The set bits of v, by the integer units (POPCNT). */
static inline AVX2_FN uint64_t avx2_popcount_int(__m256i v)
{
	uint64_t w[4] __attribute__((aligned(32)));

	_mm256_store_si256((__m256i *)w, v);
	/* Through memory: extracting the lanes would cost the vector units almost as much. */
	__asm__("" : "+m"(w));
	return (uint64_t)__builtin_popcountll(w[0]) + (uint64_t)__builtin_popcountll(w[1]) +
	       (uint64_t)__builtin_popcountll(w[2]) + (uint64_t)__builtin_popcountll(w[3]);
}

/*
 * Pass 2 over the native words of pad: runs of ones and zeros >= 1 .. >= 6 (zeros >= 1
 * follows from ones in fips_simd_finish()), both chains in one loop on the same shifts.
 * The vector units count the ones' chain (pshufb popcount into byte counters), the
 * integer units the zeros' (POPCNT), at the same time: a pshufb popcount for both chains
 * left the vector units the bottleneck (block-cost: 1086 ns a block against 883-976).
 */
static AVX2_FN void avx2_runs(const uint8_t *pad, struct fips_counts *c)
{
	const __m256i low4 = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
	const __m256i table = bcast16(popcount_table);
	/* The bit before the block: no run of zeros continues into it (word -1 says none of ones). */
	__m256i first = _mm256_setr_epi64x(INT64_MIN, 0, 0, 0);
	const size_t steps = FIPS_FULL_WORDS / 4; /* 78 */
	uint64_t z1 = 0, z2 = 0, z3 = 0, z4 = 0, z5 = 0;

	/* A byte counts at most 8 a step: 31 steps fit. */
	for (size_t s0 = 0; s0 < steps; s0 += 31) {
		__m256i acc[6];
		size_t end = MIN(s0 + 31, steps);

#pragma GCC unroll 6
		for (unsigned int k = 0; k < 6; k++)
			acc[k] = zero;
		for (size_t s = s0; s < end; s++) {
			const uint8_t *q = FIPS_PAD_WORD(pad, 4 * s);
			__m256i xp = _mm256_loadu_si256((const __m256i *)(q - 8));
			__m256i x = _mm256_load_si256((const __m256i *)q);
			__m256i xn = _mm256_loadu_si256((const __m256i *)(q + 8));
			/* Each bit's predecessor in the stream. */
			__m256i behind = _mm256_or_si256(_mm256_srli_epi64(x, 1),
							 _mm256_slli_epi64(xp, 63));
			/* A run starts where its bit differs from the one before it. */
			__m256i cv = _mm256_andnot_si256(behind, x);
			__m256i dv = _mm256_andnot_si256(x, _mm256_or_si256(behind, first));

			first = zero;
			acc[0] = _mm256_add_epi8(acc[0], avx2_popcount_bytes(cv, table, low4));
#define AVX2_STEP(k)                                                                      \
	do {                                                                              \
		__m256i a = _mm256_or_si256(_mm256_slli_epi64(x, k),                      \
					    _mm256_srli_epi64(xn, 64 - (k)));             \
		cv = _mm256_and_si256(cv, a);                                             \
		dv = _mm256_andnot_si256(a, dv);                                          \
		acc[k] = _mm256_add_epi8(acc[k], avx2_popcount_bytes(cv, table, low4));  \
		z##k += avx2_popcount_int(dv);                                            \
	} while (0)
			AVX2_STEP(1);
			AVX2_STEP(2);
			AVX2_STEP(3);
			AVX2_STEP(4);
			AVX2_STEP(5);
#undef AVX2_STEP
		}
#pragma GCC unroll 6
		for (unsigned int k = 0; k < 6; k++)
			c->ones_ge[k] += hsum256(_mm256_sad_epu8(acc[k], zero));
	}
	c->zeros_ge[1] += z1, c->zeros_ge[2] += z2, c->zeros_ge[3] += z3;
	c->zeros_ge[4] += z4, c->zeros_ge[5] += z5;
}

FIPS_SIMD_ENGINE(avx2, AVX2_FN, 32);

/* ---- AVX-512 (F, BW, VBMI2 for double shifts, VPOPCNTDQ) ---- */

#define AVX512_FN __attribute__((target("avx512f,avx512bw,avx512vbmi2,avx512vpopcntdq,popcnt")))

static inline AVX512_FN __m512i bcast16x4(const uint8_t t[16])
{
	return _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)t));
}

/* Pass 1, as avx2_bytes() in 64-byte steps. */
static AVX512_FN void avx512_bytes(const uint8_t *block, uint8_t *pad, struct fips_counts *c)
{
	const __m512i low4 = _mm512_set1_epi8(0x0f), zero = _mm512_setzero_si512();
	const __m512i ones = _mm512_set1_epi8(-1), bswap = bcast16x4(bswap_table);
	__m512i tables[8], totals[8];
	__mmask16 repeat = 0;
	const size_t steps = BYTES / 64; /* 39: bytes 0..2495 */
	uint8_t flags[BYTES / 64];
	bool any = false;

	for (unsigned int p = 0; p < 8; p++) {
		tables[p] = bcast16x4(pair_tables[p]);
		totals[p] = zero;
	}
	for (size_t s0 = 0; s0 < steps; s0 += POKER_ROUNDS) {
		__m512i acc[8];
		size_t end = MIN(s0 + POKER_ROUNDS, steps);

#pragma GCC unroll 8
		for (unsigned int p = 0; p < 8; p++)
			acc[p] = zero;
		for (size_t s = s0; s < end; s++) {
			const uint8_t *q = block + 64 * s;
			__m512i v = _mm512_loadu_si512(q);
			__m512i v1 = _mm512_loadu_si512(q + 1);
			__m512i w1 = _mm512_loadu_si512(q + 4);
			__m512i lo = _mm512_and_si512(v, low4);
			__m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);

			_mm512_store_si512(FIPS_PAD_WORD(pad, 8 * s), _mm512_shuffle_epi8(v, bswap));
#pragma GCC unroll 8
			for (unsigned int p = 0; p < 8; p++)
				acc[p] = _mm512_add_epi8(
					acc[p], _mm512_add_epi8(_mm512_shuffle_epi8(tables[p], lo),
								_mm512_shuffle_epi8(tables[p], hi)));
			flags[s] = (_mm512_cmpeq_epi8_mask(v, v1) &
				    (_mm512_cmpeq_epi8_mask(v, zero) |
				     _mm512_cmpeq_epi8_mask(v, ones))) != 0;
			any |= flags[s];
			repeat |= _mm512_cmpeq_epi32_mask(v, w1);
		}
#pragma GCC unroll 8
		for (unsigned int p = 0; p < 8; p++) {
			__m512i l = _mm512_sad_epu8(_mm512_and_si512(acc[p], low4), zero);
			__m512i h = _mm512_sad_epu8(
				_mm512_and_si512(_mm512_srli_epi16(acc[p], 4), low4), zero);

			totals[p] = _mm512_add_epi64(totals[p],
						     _mm512_add_epi64(l, _mm512_slli_epi64(h, 32)));
		}
	}
	for (unsigned int p = 0; p < 8; p++) {
		uint64_t t = (uint64_t)_mm512_reduce_add_epi64(totals[p]);

		c->nibbles[p] += t & 0xffffffff;
		c->nibbles[p + 8] += t >> 32;
	}
	c->maybe_long_run = any && fips_long_run_flagged(block, flags, steps, 64);
	c->repeat = repeat != 0;
}

/* Pass 2, as avx2_runs() on 8 words a step, with VPOPCNTDQ. */
static AVX512_FN void avx512_runs(const uint8_t *pad, struct fips_counts *c)
{
	const __m512i zero = _mm512_setzero_si512();
	__m512i first = _mm512_maskz_set1_epi64(1, INT64_MIN);
	__m512i cacc[6], dacc[6];
	const size_t steps = FULL_WORDS / 8; /* 39 */

	for (unsigned int k = 0; k < 6; k++)
		cacc[k] = dacc[k] = zero;
	for (size_t s = 0; s < steps; s++) {
		const uint8_t *q = FIPS_PAD_WORD(pad, 8 * s);
		__m512i xp = _mm512_loadu_si512(q - 8);
		__m512i x = _mm512_load_si512(q);
		__m512i xn = _mm512_loadu_si512(q + 8);
		/* (x >> 1) | (xp << 63): each bit's predecessor in the stream. */
		__m512i behind = _mm512_shrdi_epi64(x, xp, 1);
		__m512i cv = _mm512_andnot_si512(behind, x);
		__m512i dv = _mm512_andnot_si512(x, _mm512_or_si512(behind, first));

		first = zero;
		cacc[0] = _mm512_add_epi64(cacc[0], _mm512_popcnt_epi64(cv));
#define AVX512_STEP(k)                                                               \
	do {                                                                         \
		__m512i a = _mm512_shldi_epi64(x, xn, k);                            \
		cv = _mm512_and_si512(cv, a);                                        \
		dv = _mm512_andnot_si512(a, dv);                                     \
		cacc[k] = _mm512_add_epi64(cacc[k], _mm512_popcnt_epi64(cv));        \
		dacc[k] = _mm512_add_epi64(dacc[k], _mm512_popcnt_epi64(dv));        \
	} while (0)
		AVX512_STEP(1);
		AVX512_STEP(2);
		AVX512_STEP(3);
		AVX512_STEP(4);
		AVX512_STEP(5);
#undef AVX512_STEP
	}
	for (unsigned int k = 0; k < 6; k++) {
		c->ones_ge[k] += (uint64_t)_mm512_reduce_add_epi64(cacc[k]);
		c->zeros_ge[k] += (uint64_t)_mm512_reduce_add_epi64(dacc[k]);
	}
}

FIPS_SIMD_ENGINE(avx512, AVX512_FN, 64);

#else
/* Nothing for other CPUs; ISO C wants a declaration in every file. */
typedef int fips_x86_unused;
#endif
