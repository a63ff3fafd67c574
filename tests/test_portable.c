// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fixed test vectors for the arithmetic that depends on the machine: the 128-bit products
 * (src/wide.h), the health tests' keyed hashes and anchor masks (byte order, SSE2 or the
 * portable gather), the FIPS tests (POPCNT or not) and the credit (sink_credit). The
 * expected values were recorded on x86-64 with the code as it was before it was made
 * portable (__int128, SSE2, POPCNT); every build must reproduce them bit for bit: the
 * native one, tests/test_portable_fallback (the same file with RNGD_PORTABLE: no
 * __int128, no SSE2, no POPCNT, so the fallbacks run on x86-64 too) and the cross builds
 * (i386, armhf, arm64, big-endian s390x; scripts/cross).
 * RNGD_PRINT_VECTORS=1 prints the values instead of checking them.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The health tests' static functions (block_hash, window_hash, mix) are tested directly. */
#include "../src/health.c"

#include "fips.h"
#include "sink.h"
#include "wide.h"

static bool printing;

static void check64(const char *what, unsigned int i, uint64_t got, uint64_t want)
{
	if (printing) {
		printf("\t%s[%u] 0x%016llxull\n", what, i, (unsigned long long)got);
		return;
	}
	if (got != want)
		fail_msg("%s[%u]: 0x%016llx, expected 0x%016llx", what, i, (unsigned long long)got,
			 (unsigned long long)want);
}

/* splitmix64: the same stream on every machine */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill(uint8_t *p, size_t n, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(next(s) >> 56);
}

static void test_mul(void **state)
{
	static const struct {
		uint64_t a, b, hi, lo;
	} v[] = {
		{ 0, 0, 0, 0 },
		{ 1, 1, 0, 1 },
		{ ~0ull, ~0ull, 0xfffffffffffffffeull, 1 },
		{ 0xffffffffull, 0xffffffffull, 0, 0xfffffffe00000001ull },
		{ 0x100000000ull, 0x100000000ull, 1, 0 },
		{ 0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull, 0x7641f3080ff92329ull,
		  0xd67411c46c86742dull },
		{ 0xa0761d6478bd642full, 0xe7037ed1a0b428dbull, 0x90ccc56588c08119ull,
		  0x8f3907f7b2b80c35ull },
		{ 0x8000000000000000ull, 2, 1, 0 },
		{ 0xffffffffffffffffull, 0x100000001ull, 0x100000000ull, 0xfffffffeffffffffull },
	};

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t hi, lo = wide_mul64(v[i].a, v[i].b, &hi);

		check64("mul.hi", i, hi, v[i].hi);
		check64("mul.lo", i, lo, v[i].lo);
		check64("mix", i, mix(v[i].a, v[i].b), v[i].hi ^ v[i].lo);
	}
}

/* block_hash() and its anchor mask over blocks of several lengths, and window_hash(). */
static void test_health_hashes(void **state)
{
	static const size_t lens[] = { 0, 15, 16, 17, 63, 64, 100, 2496, 2500, 4096, 5000 };
	static const uint64_t want_hash[] = {
		0x6908a543d1ade84aull, 0x9449436add8fcae2ull, 0x60aa16998830c406ull,
		0x66c613ff71bad31full, 0x3b6aed20154d982cull, 0xebbb3f3fc4d8f12dull,
		0x2ca938e63c3bda72ull, 0xaa9eee2c4fad9c48ull, 0x3ce05a6af2e2fefaull,
		0xdaee5b58199110a1ull, 0x4c55f0392504e64full,
	};
	static const uint64_t want_where[] = {
		0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000001ull,
		0x0000000000000001ull, 0x00000d2b40000001ull, 0x80000d2b40000001ull,
		0x8016607dc0000002ull, 0x8ff6e6c071315f3bull, 0x8ff6e6c071315f3bull,
		0x73de818f20604fdcull, 0x73de818f20604fdcull,
	};
	static const uint64_t want_window[] = {
		0x9ed0aba64cfb30d6ull, 0xe1cd7c406ba51f55ull, 0x04fe417695ef817full,
		0xdd2be713aa74fd41ull, 0xf084c6656d918399ull, 0x7ae26c9b407c5e32ull,
		0xf7e02bb11101a721ull, 0xb0a18f691b6b8d72ull,
	};
	const uint64_t key[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	struct health *h = health_new(key);
	uint64_t s = 42, where[WHERE_WORDS + 1], x2;
	static uint8_t block[5000];

	assert_non_null(h);
	check64("anchor", 0, h->anchor, 0x79);
	fill(block, sizeof(block), &s);
	/* a run of the anchor byte across a 16-byte boundary, and one at the end of a word */
	memset(block + 30, h->anchor, 5);
	block[63] = h->anchor;
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t f = 0;

		memset(where, 0x5a, sizeof(where));
		check64("hash", i, block_hash(h, block, lens[i], h->anchor, where, &x2),
			printing ? 0 : want_hash[i]);
		/* where[] is meaningful where where[WHERE_WORDS] says so */
		for (unsigned int g = 0; g < WHERE_WORDS; g++)
			if (where[WHERE_WORDS] >> g & 1)
				f = (f ^ where[g]) * 0x100000001b3ull + g;
		f ^= where[WHERE_WORDS];
		check64("where", i, f, printing ? 0 : want_where[i]);
	}
	for (unsigned int i = 0; i < 8; i++)
		check64("window", i, window_hash(h->akey, block + 311 * i),
			printing ? 0 : want_window[i]);
	health_free(h);
}

/* The verdicts of a stream of blocks: plain, biased, with long runs, repeated words. */
static void test_fips_verdicts(void **state)
{
	static const uint8_t want[64] = {
		0, 7, 0, 16, 6, 22, 3, 8, 0, 7, 8, 16, 6, 22, 3, 8,
		0, 7, 8, 16, 6, 22, 3, 8, 0, 7, 8, 16, 6, 22, 3, 8,
		0, 7, 8, 16, 6, 22, 3, 8, 0, 7, 8, 16, 6, 22, 3, 8,
		0, 7, 8, 16, 6, 22, 3, 8, 0, 7, 8, 16, 6, 22, 3, 8,
	};
	struct fips_ctx ctx;
	uint64_t s = 7;
	uint8_t block[FIPS_BLOCK_BYTES];

	fips_init(&ctx, (const uint8_t[4]){ 1, 2, 3, 4 });
	for (unsigned int k = 0; k < 64; k++) {
		unsigned int r, at = (unsigned int)(next(&s) % (FIPS_BLOCK_BYTES - 8));

		fill(block, sizeof(block), &s);
		switch (k % 8) {
		case 1: /* monobit: a byte in 16 forced to ff */
			for (size_t i = at % 16; i < sizeof(block); i += 16)
				block[i] = 0xff;
			break;
		case 2: /* a long run of ones (k / 8 + 22 bits) from a bit position */
			for (unsigned int b = 0; b < k / 8 + 22; b++)
				block[(at * 8 + 3 + b) / 8 % FIPS_BLOCK_BYTES] |=
					(uint8_t)(0x80 >> ((at * 8 + 3 + b) % 8));
			break;
		case 3: /* a repeated 32-bit word at an aligned position */
			memcpy(block + (at & ~3u) + 4, block + (at & ~3u), 4);
			break;
		case 4: /* poker: one nibble value in a quarter of the block */
			for (size_t i = 0; i < sizeof(block) / 4; i++)
				block[i] = (uint8_t)((block[i] & 0xf0) | 0x5);
			break;
		case 5: /* runs: alternating bits in a stretch */
			memset(block + at / 2, 0x55, 200);
			break;
		case 6: /* slightly biased: one bit in 32 forced on */
			for (size_t i = at % 4; i < sizeof(block); i += 4)
				block[i] |= (uint8_t)(1u << (k % 8));
			break;
		case 7: /* the block's tail: a long run at its very end */
			memset(block + sizeof(block) - 4, 0, 4);
			block[sizeof(block) - 5] &= 0xf8;
			break;
		default:
			break;
		}
		r = fips_test_block(&ctx, block);
		if (printing)
			printf("\tfips[%u] %u\n", k, r);
		else if (r != want[k])
			fail_msg("FIPS verdict of block %u: 0x%x, expected 0x%x", k, r, want[k]);
	}
}

static void test_credit(void **state)
{
	static const struct {
		uint64_t rem;
		size_t bytes;
		unsigned int quality, max;
		uint64_t bits, rem_after;
	} v[] = {
		{ 0, 0, 1024, 8, 0, 0 },
		{ 0, 2500, 1024, 8, 20000, 0 },
		{ 0, 2500, 1000, 8, 19531, 256 },
		{ 256, 2500, 1000, 8, 19531, 512 },
		{ 1023, 1, 1, 8, 1, 7 },
		{ 0, 2500, 2000, 8, 20000, 0 },	 /* quality above 1024: 1024 */
		{ 0, 2500, 1024, 4, 10000, 0 },	 /* capped: no remainder kept */
		{ 500, 2500, 1024, 9, 20000, 500 }, /* max above 8: 8 */
		{ 0, 3, 341, 8, 7, 1016 },
		{ 0, SIZE_MAX, 1024, 8, SIZE_MAX > UINT32_MAX ? UINT64_MAX : (uint64_t)SIZE_MAX * 8, 0 },
		{ 1023, SIZE_MAX, 1023, 8,
		  SIZE_MAX > UINT32_MAX ? UINT64_MAX : ((uint64_t)SIZE_MAX * 8 * 1023 + 1023) / 1024,
		  7 },
		{ 0, SIZE_MAX / 8, 1024, 1, SIZE_MAX / 8, 0 },
		{ 7, SIZE_MAX / 8192, 1024, 8, (uint64_t)(SIZE_MAX / 8192) * 8, 7 },
	};

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t rem = v[i].rem;

		check64("credit.bits", i, sink_credit(&rem, v[i].bytes, v[i].quality, v[i].max),
			v[i].bits);
		check64("credit.rem", i, rem, v[i].rem_after);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mul),
		cmocka_unit_test(test_health_hashes),
		cmocka_unit_test(test_fips_verdicts),
		cmocka_unit_test(test_credit),
	};

	printing = getenv("RNGD_PRINT_VECTORS") != NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
