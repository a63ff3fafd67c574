// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The FIPS 140-2 engine for arm64 with Advanced SIMD (NEON), chosen at start when the
 * kernel reports it (AT_HWCAP's HWCAP_ASIMD: nearly every arm64 CPU has it, but Linux also
 * runs on those without). It counts what the scalar engine counts, with the same
 * method (src/fips.c), on 16 bytes at once, in the two passes of src/fips_simd.h:
 *  - the bytes: poker by a table lookup per pair of nibble values v and v + 8 (TBL), which
 *    turns each nibble into 1 (for v) or 16 (for v + 8), so a byte of the accumulator
 *    holds two 4-bit counters; 7 rounds of 2 nibbles per byte fit in them before they are
 *    added up. The long-run prefilter and the continuous test as the x86 engines do them.
 *    It also writes the padded copy's words: the big-endian words in native order (REV64).
 *  - two words of the padded copy: the runs chains of ones and of zeros side by side, the
 *    look-ahead and look-behind words taken from the neighbouring vectors (EXT) rather than
 *    loaded again.
 * Counts are gathered per byte (CNT) and widened into 16-bit lanes as they come (UADALP),
 * which no step can overflow: 156 steps of at most 16 a lane.
 */
#include "config.h"

/* Little-endian only: the lane reinterpretations below assume it (aarch64_be is rare). */
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(RNGD_PORTABLE)

#include <arm_neon.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "fips_engine.h"
#include "fips_simd.h"
#include "util.h"

/* The kernel's arch/arm64/include/uapi/asm/hwcap.h, for libcs whose headers lack it. */
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif

#define STEPS (FIPS_BLOCK_BYTES / 16) /* 156: bytes 0..2495, words 0..311 */
#define POKER_ROUNDS 7		      /* 2 nibbles a round in a 4-bit counter: 14 <= 15 */

static bool neon_supported(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
}

/*
 * Sums of the 16 byte lanes of each of v[0..7] into lanes 0..7 of a 16-bit vector added to
 * total. Three pairwise adds fold 8 bytes of each into 1 (at most 8 * 14 = 112).
 */
static inline uint16x8_t add_lane_sums(uint16x8_t total, const uint8x16_t v[8])
{
	uint8x16_t a = vpaddq_u8(vpaddq_u8(vpaddq_u8(v[0], v[1]), vpaddq_u8(v[2], v[3])),
				 vpaddq_u8(vpaddq_u8(v[4], v[5]), vpaddq_u8(v[6], v[7])));

	return vpadalq_u8(total, a);
}

/*
 * n <= POKER_ROUNDS steps of 16 bytes from q: the nibble counters (tables[p]: v -> 1,
 * v + 8 -> 16) into acc[], zeroed first, the continuous test into *repeat, and each step's
 * bytes, as two big-endian words in native order, to words (the padded copy). Returns the
 * long-run candidates: non-zero where a byte is 00 or ff and equal to the next.
 */
static inline __attribute__((always_inline)) uint8x16_t
bytes_group(const uint8_t *q, size_t n, uint8_t *words, const uint8x16_t tables[8],
	    uint8x16_t acc[8], uint32x4_t *repeat)
{
	const uint8x16_t low4 = vdupq_n_u8(0x0f);
	uint8x16_t candidates = vdupq_n_u8(0);

#pragma GCC unroll 8
	for (unsigned int p = 0; p < 8; p++)
		acc[p] = vdupq_n_u8(0);
	for (const uint8_t *end = q + 16 * n; q < end; q += 16, words += 16) {
		uint8x16_t v = vld1q_u8(q), v1 = vld1q_u8(q + 1), w1 = vld1q_u8(q + 4);
		uint8x16_t lo = vandq_u8(v, low4), hi = vshrq_n_u8(v, 4);
		/* 00 or ff: equal to its own sign spread over the byte. */
		uint8x16_t sign = vreinterpretq_u8_s8(vshrq_n_s8(vreinterpretq_s8_u8(v), 7));

		vst1q_u8(words, vrev64q_u8(v));

#pragma GCC unroll 8
		for (unsigned int p = 0; p < 8; p++)
			acc[p] = vaddq_u8(acc[p], vaddq_u8(vqtbl1q_u8(tables[p], lo),
							   vqtbl1q_u8(tables[p], hi)));
		candidates = vorrq_u8(candidates, vandq_u8(vceqq_u8(v, v1), vceqq_u8(v, sign)));
		*repeat = vorrq_u32(*repeat,
				    vceqq_u32(vreinterpretq_u32_u8(v), vreinterpretq_u32_u8(w1)));
	}
	return candidates;
}

/*
 * Pass 1 over the bytes: poker, long-run prefilter, continuous (16-byte steps), and words
 * 0..311 of the padded copy.
 */
static void neon_bytes(const uint8_t *block, uint8_t *pad, struct fips_counts *c)
{
	/* tables[p] maps nibble v to weight[v] where index8[v] == p: v = p to 1, p + 8 to 16. */
	static const uint8_t index8[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7 };
	static const uint8_t weight[16] = {
		1, 1, 1, 1, 1, 1, 1, 1, 16, 16, 16, 16, 16, 16, 16, 16
	};
	const uint8x16_t low4 = vdupq_n_u8(0x0f);
	uint8x16_t tables[8];
	uint16x8_t low_total = vdupq_n_u16(0), high_total = vdupq_n_u16(0);
	uint32x4_t repeat = vdupq_n_u32(0);
	uint16_t low[8], high[8];
	uint8_t flags[STEPS] = { 0 };
	bool any = false;

#pragma GCC unroll 8
	for (unsigned int p = 0; p < 8; p++)
		tables[p] = vandq_u8(vceqq_u8(vld1q_u8(index8), vdupq_n_u8((uint8_t)p)),
				     vld1q_u8(weight));
	for (size_t s = 0; s < STEPS; s += POKER_ROUNDS) {
		size_t n = MIN(POKER_ROUNDS, STEPS - s);
		uint8x16_t acc[8], low_fields[8], high_fields[8];

		/*
		 * Long-run candidates are rare (about 8 % of random blocks have one): one test
		 * a group of steps, whose every step is then searched.
		 */
		if (vmaxvq_u8(bytes_group(block + 16 * s, n, FIPS_PAD_WORD(pad, 2 * s), tables, acc,
					  &repeat)) != 0) {
			memset(flags + s, 1, n);
			any = true;
		}
#pragma GCC unroll 8
		for (unsigned int p = 0; p < 8; p++) {
			low_fields[p] = vandq_u8(acc[p], low4);
			high_fields[p] = vshrq_n_u8(acc[p], 4);
		}
		low_total = add_lane_sums(low_total, low_fields);
		high_total = add_lane_sums(high_total, high_fields);
	}
	vst1q_u16(low, low_total);
	vst1q_u16(high, high_total);
	for (unsigned int p = 0; p < 8; p++) {
		c->nibbles[p] += low[p];
		c->nibbles[p + 8] += high[p];
	}
	c->maybe_long_run = any && fips_long_run_flagged(block, flags, STEPS, 16);
	c->repeat = vmaxvq_u32(repeat) != 0;
}

/* Words i and i + 1 of the padded copy. */
static inline uint64x2_t pad_words(const uint8_t *pad, size_t i)
{
	return vld1q_u64((const uint64_t *)FIPS_PAD_WORD(pad, i));
}

/* The runs counters: ones[k] and zeros[k] count runs of length >= k + 1, by 16-bit lane. */
struct runs_acc {
	uint16x8_t ones[6], zeros[6];
};

static inline uint16x8_t add_bits(uint16x8_t acc, uint64x2_t v)
{
	return vpadalq_u8(acc, vcntq_u8(vreinterpretq_u8_u64(v)));
}

/*
 * The chains of src/fips.c on the words x (xp: one word behind, xn: one ahead). first has
 * the top bit of lane 0 set on the block's first step: no run of zeros continues into the
 * block (xp's zero word says one does). Runs of zeros >= 1 are not counted: see
 * fips_simd_finish().
 */
static inline __attribute__((always_inline)) void
runs_step(uint64x2_t xp, uint64x2_t x, uint64x2_t xn, uint64x2_t first, struct runs_acc *r)
{
	/* Each bit's predecessor in the stream: (x >> 1) | (xp << 63). */
	uint64x2_t behind = vsriq_n_u64(vshlq_n_u64(xp, 63), x, 1);
	uint64x2_t cv = vbicq_u64(x, behind);
	uint64x2_t dv = vbicq_u64(vorrq_u64(behind, first), x);
	uint64x2_t a;

	r->ones[0] = add_bits(r->ones[0], cv);
/* a: bits p + k of the stream at p, (x << k) | (xn >> (64 - k)). */
#define NEON_STEP(k)                                              \
	do {                                                      \
		a = vsriq_n_u64(vshlq_n_u64(x, k), xn, 64 - (k)); \
		cv = vandq_u64(cv, a);                            \
		dv = vbicq_u64(dv, a);                            \
		r->ones[k] = add_bits(r->ones[k], cv);            \
		r->zeros[k] = add_bits(r->zeros[k], dv);          \
	} while (0)
	NEON_STEP(1);
	NEON_STEP(2);
	NEON_STEP(3);
	NEON_STEP(4);
	NEON_STEP(5);
#undef NEON_STEP
}

/* Pass 2 over the padded copy (fips_simd.h): runs. */
static void neon_runs(const uint8_t *pad, struct fips_counts *c)
{
	const uint64x2_t zero = vdupq_n_u64(0);
	uint64x2_t x = pad_words(pad, 0), ahead = pad_words(pad, 2), xn, tail;
	struct runs_acc r;

#pragma GCC unroll 6
	for (unsigned int k = 0; k < 6; k++)
		r.ones[k] = r.zeros[k] = vdupq_n_u16(0);
	/* The first step apart, so that the others do not carry `first`. */
	xn = vextq_u64(x, ahead, 1);
	runs_step(vextq_u64(zero, x, 1), x, xn,
		  vcombine_u64(vcreate_u64(UINT64_C(1) << 63), vcreate_u64(0)), &r);
	/*
	 * Steps 1 .. STEPS - 2, two a round, so that the words pass from one step to the next
	 * without moves: one step's look-ahead words are the next one's look-behind words.
	 */
	_Static_assert(STEPS % 2 == 0, "steps 1 .. STEPS - 2 go in pairs");
	for (size_t s = 1; s + 1 < STEPS; s += 2) {
		uint64x2_t x1 = ahead, x2 = pad_words(pad, 2 * s + 2),
			   x3 = pad_words(pad, 2 * s + 4);
		uint64x2_t xn1 = vextq_u64(x1, x2, 1), xn2 = vextq_u64(x2, x3, 1);

		runs_step(xn, x1, xn1, zero, &r);
		runs_step(xn1, x2, xn2, zero, &r);
		ahead = x3, xn = xn2;
	}
	/* The last step: the word after it is the tail word, the last of the padded copy. */
	tail = vcombine_u64(vld1_u64((const uint64_t *)FIPS_PAD_WORD(pad, 2 * STEPS)),
			    vcreate_u64(0));
	runs_step(xn, ahead, vextq_u64(ahead, tail, 1), zero, &r);
#pragma GCC unroll 6
	for (unsigned int k = 0; k < 6; k++) {
		c->ones_ge[k] += vaddlvq_u16(r.ones[k]);
		c->zeros_ge[k] += vaddlvq_u16(r.zeros[k]);
	}
}

FIPS_SIMD_ENGINE(neon, , 16);

#else
/* Nothing for other CPUs; ISO C wants a declaration in every file. */
typedef int fips_arm64_unused;
#endif
