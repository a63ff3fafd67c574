// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Known-answer tests for src/fips.c: blocks built to sit exactly on each boundary of
 * FIPS 140-2 (Change Notice 1, 2001-10-10) section 4.9.1, and random and biased data
 * compared with a plain bit-by-bit reference written here from the standard.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#endif

#include "fips.h"
#include "fips_engine.h"
#include "util.h"

#define NBITS FIPS_BLOCK_BITS
#define ALL_TESTS (FIPS_MONOBIT | FIPS_POKER | FIPS_RUNS | FIPS_LONG_RUN | FIPS_CONTINUOUS)

/* Runs intervals, lengths 1..5 and 6+, pass inclusive. */
static const unsigned int run_lo[6] = { 2315, 1114, 527, 240, 103, 103 };
static const unsigned int run_hi[6] = { 2685, 1386, 723, 384, 209, 209 };
/* Typical counts of a random block: 20000 / 2^(k+2). */
static const unsigned int run_base[6] = { 2500, 1250, 625, 312, 156, 156 };

/* ---- a deterministic generator (splitmix64) ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rng_next(s) % n);
}

/* ---- the reference: one bit at a time, straight from the standard ---- */

struct ref {
	unsigned int ones;
	long long poker;	 /* 16 * sum(f^2) - 25000000 */
	unsigned int runs[2][6]; /* [bit][length 1..5, 6+] */
	unsigned int longest;
	bool repeat; /* two consecutive 32-bit words equal */
};

static unsigned int bit_at(const uint8_t *b, unsigned int i)
{
	return (b[i / 8] >> (7 - i % 8)) & 1;
}

static void set_bit(uint8_t *b, unsigned int i, unsigned int v)
{
	uint8_t m = (uint8_t)(0x80 >> (i % 8));

	b[i / 8] = v ? (uint8_t)(b[i / 8] | m) : (uint8_t)(b[i / 8] & ~m);
}

/* A run of exactly l bits v at bit p: the bits around it (if any) set to !v. */
static void put_run(uint8_t *b, unsigned int p, unsigned int l, unsigned int v)
{
	for (unsigned int i = p; i < p + l; i++)
		set_bit(b, i, v);
	if (p > 0)
		set_bit(b, p - 1, !v);
	if (p + l < NBITS)
		set_bit(b, p + l, !v);
}

static void ref_analyze(uint32_t *last, const uint8_t *b, struct ref *r)
{
	unsigned int f[16] = { 0 }, len = 0;
	long long sum = 0;

	memset(r, 0, sizeof(*r));
	for (unsigned int i = 0; i < NBITS; i++) {
		unsigned int v = bit_at(b, i);

		r->ones += v;
		len++;
		if (i + 1 == NBITS || bit_at(b, i + 1) != v) {
			r->runs[v][MIN(len, 6u) - 1]++;
			r->longest = MAX(r->longest, len);
			len = 0;
		}
	}
	for (unsigned int i = 0; i < NBITS / 4; i++) {
		unsigned int n = 0;

		for (unsigned int j = 0; j < 4; j++)
			n = n << 1 | bit_at(b, 4 * i + j);
		f[n]++;
	}
	for (unsigned int i = 0; i < 16; i++)
		sum += (long long)f[i] * f[i];
	r->poker = 16 * sum - 25000000;
	for (unsigned int i = 0; i < FIPS_BLOCK_BYTES; i += 4) {
		uint32_t w;

		memcpy(&w, b + i, 4);
		if (w == *last)
			r->repeat = true;
		*last = w;
	}
}

static unsigned int ref_mask(const struct ref *r)
{
	unsigned int m = 0;

	if (r->ones <= 9725 || r->ones >= 10275)
		m |= FIPS_MONOBIT;
	if (r->poker <= 10800 || r->poker >= 230850)
		m |= FIPS_POKER;
	for (unsigned int v = 0; v < 2; v++)
		for (unsigned int k = 0; k < 6; k++)
			if (r->runs[v][k] < run_lo[k] || r->runs[v][k] > run_hi[k])
				m |= FIPS_RUNS;
	if (r->longest >= 26)
		m |= FIPS_LONG_RUN;
	if (r->repeat)
		m |= FIPS_CONTINUOUS;
	return m;
}

static unsigned int ref_test(uint32_t *last, const uint8_t *b)
{
	struct ref r;

	ref_analyze(last, b, &r);
	return ref_mask(&r);
}

/* A seed word that differs from the block's first word. */
static void seed_for(const uint8_t *block, uint8_t seed[4])
{
	for (int i = 0; i < 4; i++)
		seed[i] = (uint8_t)~block[i];
}

/* Test one block from a fresh stream with the engine; also check the reference agrees. */
static unsigned int test_one(const uint8_t *block)
{
	struct fips_ctx ctx;
	uint8_t seed[4];
	uint32_t last;

	seed_for(block, seed);
	memcpy(&last, seed, 4);
	fips_init(&ctx, seed);
	return fips_test_block(&ctx, block);
}

static unsigned int ref_one(const uint8_t *block)
{
	uint8_t seed[4];
	uint32_t last;

	seed_for(block, seed);
	memcpy(&last, seed, 4);
	return ref_test(&last, block);
}

static void expect_block(const uint8_t *block, unsigned int expected, const char *what)
{
	unsigned int ref = ref_one(block), got = test_one(block);

	if (ref != expected)
		fail_msg("%s: the reference says %#x, expected %#x (bad test block)", what, ref,
			 expected);
	if (got != expected)
		fail_msg("%s: fips_test_block() returned %#x, expected %#x", what, got, expected);
}

/* ---- block builder: alternating runs with given counts per length ---- */

struct spec {
	unsigned int n[2][6]; /* runs of zeros [0] and ones [1], lengths 1..5 and 6+ */
	int ones;	      /* total ones wanted, or -1 for about half */
};

static void spec_base(struct spec *s)
{
	for (int v = 0; v < 2; v++)
		memcpy(s->n[v], run_base, sizeof(run_base));
	s->ones = -1;
}

/*
 * Lay out the runs of s in a shuffled order (seeded), alternating bits; the 6+ runs get
 * the bits left over so that the block has exactly 20000 bits. Returns false when the
 * spec cannot be laid out.
 */
static bool build_runs(const struct spec *s, uint64_t seed, uint8_t *out)
{
	static unsigned int len[2][NBITS];
	unsigned int cnt[2] = { 0, 0 }, total[2] = { 0, 0 }, nlong[2];
	int extra[2];
	unsigned int bit, pos = 0, idx[2] = { 0, 0 };

	for (unsigned int v = 0; v < 2; v++) {
		for (unsigned int k = 0; k < 6; k++)
			for (unsigned int i = 0; i < s->n[v][k]; i++) {
				len[v][cnt[v]++] = k + 1;
				total[v] += k + 1;
			}
		nlong[v] = s->n[v][5];
	}
	if (cnt[0] > cnt[1] + 1 || cnt[1] > cnt[0] + 1)
		return false;
	if (s->ones >= 0) {
		extra[1] = s->ones - (int)total[1];
		extra[0] = NBITS - s->ones - (int)total[0];
	} else {
		int left = NBITS - (int)total[0] - (int)total[1];

		extra[1] = NBITS / 2 - (int)total[1];
		extra[1] = MAX(0, MIN(left, extra[1]));
		extra[0] = left - extra[1];
	}
	for (unsigned int v = 0; v < 2; v++) {
		unsigned int j = 0;

		if (extra[v] < 0 || (extra[v] > 0 && nlong[v] == 0) ||
		    (nlong[v] && (unsigned int)extra[v] > 14 * nlong[v]))
			return false;
		/* The 6+ runs are the last nlong entries; spread the extra bits over them. */
		for (int e = 0; e < extra[v]; e++) {
			len[v][cnt[v] - nlong[v] + j]++;
			j = (j + 1) % nlong[v];
		}
		for (unsigned int i = cnt[v] - 1; i > 0; i--) {
			unsigned int r = rng_below(&seed, i + 1), t = len[v][i];

			len[v][i] = len[v][r];
			len[v][r] = t;
		}
	}
	bit = cnt[1] > cnt[0] ? 1 : cnt[0] > cnt[1] ? 0 : (unsigned int)(seed & 1);
	memset(out, 0, FIPS_BLOCK_BYTES);
	while (idx[0] < cnt[0] || idx[1] < cnt[1]) {
		unsigned int l = len[bit][idx[bit]++];

		for (unsigned int i = 0; i < l; i++)
			set_bit(out, pos++, bit);
		bit ^= 1;
	}
	assert_int_equal(pos, NBITS);
	return true;
}

/*
 * Build a block from s whose only failures (by the reference) are those in allowed;
 * tries shuffles until one does. Checks the block has exactly the runs of the spec.
 */
static void build_clean(const struct spec *s, unsigned int allowed, uint8_t *out, const char *what)
{
	for (uint64_t seed = 1; seed < 200; seed++) {
		struct ref r;
		uint32_t last;
		uint8_t sw[4];

		if (!build_runs(s, seed * 7919, out))
			fail_msg("%s: spec cannot be laid out", what);
		seed_for(out, sw);
		memcpy(&last, sw, 4);
		ref_analyze(&last, out, &r);
		for (int v = 0; v < 2; v++)
			for (int k = 0; k < 6; k++)
				assert_int_equal(r.runs[v][k], s->n[v][k]);
		if (s->ones >= 0)
			assert_int_equal(r.ones, s->ones);
		if ((ref_mask(&r) & ~allowed) == 0)
			return;
	}
	fail_msg("%s: no clean layout found", what);
}

/* ---- monobit ---- */

static void test_monobit(void **state)
{
	static const struct {
		int ones;
		unsigned int expected;
	} cases[] = {
		{ 9725, FIPS_MONOBIT },	 { 9726, 0 }, { 10000, 0 }, { 10274, 0 },
		{ 10275, FIPS_MONOBIT },
	};
	uint8_t block[FIPS_BLOCK_BYTES];
	char what[64];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct spec s;

		spec_base(&s);
		s.ones = cases[i].ones;
		/* Make room: fewer bits in the fixed-length runs of the scarce bit. */
		if (s.ones < 10000) {
			s.n[1][2] -= 60;
			s.n[1][0] += 60;
		} else if (s.ones > 10000) {
			s.n[0][2] -= 60;
			s.n[0][0] += 60;
		}
		snprintf(what, sizeof(what), "monobit %d ones", s.ones);
		build_clean(&s, FIPS_MONOBIT, block, what);
		expect_block(block, cases[i].expected, what);
	}
}

/* ---- poker ---- */

static int isqrt(long long n)
{
	long long lo = 0, hi = 1 << 20;

	while (lo < hi) {
		long long mid = (lo + hi + 1) / 2;

		if (mid * mid <= n)
			lo = mid;
		else
			hi = mid - 1;
	}
	return (int)lo;
}

/*
 * A block whose nibble counts give 16 * sum(f^2) - 25000000 == x exactly. With f = 312 + a
 * and sum(a) = 8, sum(f^2) = 1562496 + sum(a^2). The 16 values get a = 1 on 0, 15 and the
 * six values with two bits set, then +-w, +-x, +-y, +-z on the pairs (0, 15), (3, 12),
 * (5, 10), (6, 9), which adds 2 * (w^2 + x^2 + y^2 + z^2).
 */
static bool poker_block(long long x, uint64_t seed, uint8_t *out)
{
	static const unsigned int pairs[4][2] = { { 0, 15 }, { 3, 12 }, { 5, 10 }, { 6, 9 } };
	static uint8_t nib[NBITS / 4];
	long long q = (x + 25000000) / 16 - 1562496 - 8;
	int f[16], t[4] = { -1, -1, -1, -1 };
	unsigned int n = 0;

	if ((x + 25000000) % 16 || q < 0 || q % 2)
		return false;
	q /= 2;
	/* Four squares summing to q, the smallest first (the 0/15 pair moves monobit). */
	for (int w = 0; w * w <= q && t[0] < 0; w++)
		for (int a = w; w * w + a * a <= q && t[0] < 0; a++)
			for (int b = a; w * w + a * a + b * b <= q && t[0] < 0; b++) {
				long long rest = q - w * w - a * a - b * b;
				int c = isqrt(rest);
				if ((long long)c * c == rest && c >= b) {
					t[0] = w;
					t[1] = a;
					t[2] = b;
					t[3] = c;
				}
			}
	if (t[0] < 0)
		return false;
	for (int v = 0; v < 16; v++)
		f[v] = 312;
	for (int p = 0; p < 4; p++) {
		f[pairs[p][0]] += 1 + t[p];
		f[pairs[p][1]] += 1 - t[p];
	}
	for (int v = 0; v < 16; v++)
		for (int i = 0; i < f[v]; i++)
			nib[n++] = (uint8_t)v;
	assert_int_equal(n, NBITS / 4);
	for (unsigned int i = n - 1; i > 0; i--) {
		unsigned int r = rng_below(&seed, i + 1);
		uint8_t tmp = nib[i];

		nib[i] = nib[r];
		nib[r] = tmp;
	}
	for (unsigned int i = 0; i < n; i += 2)
		out[i / 2] = (uint8_t)(nib[i] << 4 | nib[i + 1]);
	return true;
}

static void test_poker(void **state)
{
	/* 16 * sum(f^2) is a multiple of 32 (sum(f^2) is even as sum(f) is), so X steps by 32. */
	static const struct {
		long long x;
		unsigned int expected;
	} cases[] = {
		{ 10784, FIPS_POKER },	{ 10816, 0 },	    { 230848, 0 },
		{ 230880, FIPS_POKER }, { 64, FIPS_POKER }, { 100000, 0 },
		{ 400000, FIPS_POKER },
	};
	uint8_t block[FIPS_BLOCK_BYTES];
	char what[64];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool ok = false;

		snprintf(what, sizeof(what), "poker X*5000 = %lld", cases[i].x);
		for (uint64_t seed = 1; seed < 200 && !ok; seed++) {
			struct ref r;
			uint32_t last = 0;

			if (!poker_block(cases[i].x, seed, block))
				break;
			ref_analyze(&last, block, &r);
			assert_true(r.poker == cases[i].x);
			ok = (ref_one(block) & ~FIPS_POKER) == 0;
		}
		if (!ok)
			fail_msg("%s: cannot build a block", what);
		expect_block(block, cases[i].expected, what);
	}
}

/* ---- runs ---- */

/* Set runs of bit v and length class k to count; keep the number of runs of v unchanged. */
static bool spec_runs(struct spec *s, unsigned int v, unsigned int k, unsigned int count)
{
	int delta = (int)count - (int)run_base[k];

	spec_base(s);
	s->n[v][k] = count;
	for (unsigned int j = 0; j < 6 && delta; j++) {
		int room, d;

		if (j == k)
			continue;
		/* Stay 10 inside the interval of the compensating length. */
		room = delta > 0 ? (int)s->n[v][j] - (int)run_lo[j] - 10
				 : (int)run_hi[j] - 10 - (int)s->n[v][j];
		d = MIN(room, abs(delta));
		s->n[v][j] =
			delta > 0 ? s->n[v][j] - (unsigned int)d : s->n[v][j] + (unsigned int)d;
		delta += delta > 0 ? -d : d;
	}
	return delta == 0;
}

static void test_runs(void **state)
{
	uint8_t block[FIPS_BLOCK_BYTES];
	char what[80];

	for (unsigned int v = 0; v < 2; v++)
		for (unsigned int k = 0; k < 6; k++) {
			const unsigned int ends[2] = { run_lo[k], run_hi[k] };

			for (int e = 0; e < 2; e++)
				for (int d = -1; d <= 1; d++) {
					unsigned int count = ends[e] + (unsigned int)d;
					bool inside = count >= run_lo[k] && count <= run_hi[k];
					struct spec s;

					snprintf(what, sizeof(what),
						 "%u runs of %ss of length %u%s", count,
						 v ? "one" : "zero", k + 1, k == 5 ? "+" : "");
					assert_true(spec_runs(&s, v, k, count));
					build_clean(&s, FIPS_RUNS, block, what);
					expect_block(block, inside ? 0 : FIPS_RUNS, what);
				}
		}
}

/* ---- long run ---- */

static void test_long_run(void **state)
{
	/* Start bits: block start, inside byte 0, across a byte, across 64-bit word 0/1,
	 * across the last full word into the 32-bit tail, the tail itself, block end. */
	static const unsigned int starts[] = { 0, 1, 3, 50, 60, 19950, 19968, 0xffffffff };
	uint8_t base[FIPS_BLOCK_BYTES], block[FIPS_BLOCK_BYTES];
	char what[80];
	struct spec s;

	spec_base(&s);
	for (unsigned int v = 0; v < 2; v++)
		for (unsigned int l = 25; l <= 26; l++)
			for (size_t i = 0; i < ARRAY_SIZE(starts); i++) {
				unsigned int p = starts[i] == 0xffffffff ? NBITS - l : starts[i];
				bool ok = false;

				snprintf(what, sizeof(what), "run of %u %ss at bit %u", l,
					 v ? "one" : "zero", p);
				for (uint64_t seed = 1; seed < 100 && !ok; seed++) {
					if (!build_runs(&s, seed, base))
						fail_msg("%s: base block", what);
					memcpy(block, base, sizeof(block));
					put_run(block, p, l, v);
					ok = (ref_one(block) & ~FIPS_LONG_RUN) == 0;
				}
				if (!ok)
					fail_msg("%s: no clean block", what);
				expect_block(block, l >= 26 ? FIPS_LONG_RUN : 0, what);
			}
}

/* ---- continuous run ---- */

static void clean_block(uint8_t *block, uint64_t seed)
{
	for (;; seed++) {
		for (size_t i = 0; i < FIPS_BLOCK_BYTES; i++)
			block[i] = (uint8_t)rng_next(&seed);
		if (ref_one(block) == 0)
			return;
	}
}

static void test_continuous(void **state)
{
	uint8_t a[FIPS_BLOCK_BYTES], b[FIPS_BLOCK_BYTES], seed[4];
	static const size_t words[] = { 0, 1, 311, 312, 623 }; /* word i copied to i + 1 */
	struct fips_ctx ctx;
	char what[64];

	clean_block(a, 11);
	clean_block(b, 12);

	/* Equal consecutive words inside a block, at the start, middle, end. */
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		uint8_t c[FIPS_BLOCK_BYTES];

		memcpy(c, a, sizeof(c));
		memcpy(c + 4 * (words[i] + 1), c + 4 * words[i], 4);
		snprintf(what, sizeof(what), "words %zu and %zu equal", words[i], words[i] + 1);
		expect_block(c, FIPS_CONTINUOUS, what);
	}
	/* Equal words that are not consecutive pass. */
	{
		uint8_t c[FIPS_BLOCK_BYTES];

		memcpy(c, a, sizeof(c));
		memcpy(c + 8, c, 4);
		memcpy(c + FIPS_BLOCK_BYTES - 4, c + FIPS_BLOCK_BYTES - 12, 4);
		expect_block(c, 0, "words 0 and 2 equal");
	}

	/* The first word equal to the seed. */
	memcpy(seed, a, 4);
	fips_init(&ctx, seed);
	assert_int_equal(fips_test_block(&ctx, a), FIPS_CONTINUOUS);
	/* The state carries on: the next block passes, then fails if it repeats b's end. */
	seed_for(a, seed);
	fips_init(&ctx, seed);
	assert_int_equal(fips_test_block(&ctx, a), 0);
	assert_int_equal(fips_test_block(&ctx, b), 0);
	memcpy(a, b + FIPS_BLOCK_BYTES - 4, 4);
	assert_int_equal(ref_one(a) & ~FIPS_CONTINUOUS, 0);
	assert_int_equal(fips_test_block(&ctx, a), FIPS_CONTINUOUS);
	/* ... and the same block passes after a different one. */
	assert_int_equal(fips_test_block(&ctx, b), 0);
	seed_for(a, seed);
	fips_init(&ctx, seed);
	assert_int_equal(fips_test_block(&ctx, a), 0);
}

/* ---- degenerate blocks ---- */

static void test_constant_blocks(void **state)
{
	uint8_t block[FIPS_BLOCK_BYTES];

	memset(block, 0, sizeof(block));
	expect_block(block, ALL_TESTS, "all zeros");
	memset(block, 0xff, sizeof(block));
	expect_block(block, ALL_TESTS, "all ones");
	/* 1010...: 10000 ones, one nibble value, 20000 runs of one bit, repeated words. */
	memset(block, 0xaa, sizeof(block));
	expect_block(block, FIPS_POKER | FIPS_RUNS | FIPS_CONTINUOUS, "alternating 10");
	memset(block, 0x55, sizeof(block));
	expect_block(block, FIPS_POKER | FIPS_RUNS | FIPS_CONTINUOUS, "alternating 01");
}

/* ---- random and biased streams against the reference ---- */

/* Fill a block with bits of probability p (per mille) of being one, or sticky bits. */
static void biased_block(uint8_t *block, uint64_t *s, unsigned int p, unsigned int stick)
{
	unsigned int prev = 0;

	for (unsigned int i = 0; i < NBITS; i++) {
		unsigned int v = rng_below(s, 1000) < p;

		if (stick && rng_below(s, 1000) < stick)
			v = prev;
		set_bit(block, i, v);
		prev = v;
	}
}

static void test_random_vs_reference(void **state)
{
	static const unsigned int probs[] = { 470, 480, 485, 486, 487, 500, 513, 514, 515, 520 };
	static const unsigned int sticks[] = { 0, 0, 0, 10, 20, 30, 50, 100, 500, 800, 990 };
	uint8_t block[FIPS_BLOCK_BYTES], seed[4] = { 1, 2, 3, 4 };
	unsigned int seen = 0, failures = 0;
	struct fips_ctx ctx;
	uint32_t last;
	uint64_t s = 42;

	fips_init(&ctx, seed);
	memcpy(&last, seed, 4);
	for (unsigned int n = 0; n < 6000; n++) {
		unsigned int got, want;

		switch (n % 4) {
		case 0:
		case 1:
			for (size_t i = 0; i < FIPS_BLOCK_BYTES; i++)
				block[i] = (uint8_t)rng_next(&s);
			break;
		case 2:
			biased_block(block, &s, probs[rng_below(&s, ARRAY_SIZE(probs))], 0);
			break;
		default:
			biased_block(block, &s, 500, sticks[rng_below(&s, ARRAY_SIZE(sticks))]);
			break;
		}
		/* Now and then, a repeated word or a word repeating the previous block's end. */
		if (rng_below(&s, 50) == 0) {
			size_t w = rng_below(&s, FIPS_BLOCK_BYTES / 4 - 1);

			memcpy(block + 4 * (w + 1), block + 4 * w, 4);
		}
		if (rng_below(&s, 50) == 0)
			memcpy(block, &last, 4);
		want = ref_test(&last, block);
		got = fips_test_block(&ctx, block);
		if (got != want)
			fail_msg("block %u: fips_test_block() %#x, reference %#x", n, got, want);
		seen |= want;
		failures += want != 0;
	}
	/* The data must have exercised every test. */
	assert_int_equal(seen, ALL_TESTS);
	assert_true(failures > 100);
}

/* ---- the engines ---- */

/*
 * Every engine this CPU runs against the scalar one and the reference, on long streams of
 * random, biased, sticky and patched blocks (long runs near every byte and word edge,
 * repeated words): the same verdict on every block.
 */
static void test_engines_agree(void **state)
{
	static uint8_t blocks[3000][FIPS_BLOCK_BYTES];
	static unsigned int want[3000];
	const size_t n = ARRAY_SIZE(blocks);
	uint8_t seed[4] = { 9, 8, 7, 6 };
	uint32_t last;
	uint64_t s = 7;

	for (size_t i = 0; i < n; i++) {
		uint8_t *b = blocks[i];

		if (i % 5 == 3)
			biased_block(b, &s, 500, 800 + rng_below(&s, 200));
		else if (i % 5 == 4)
			biased_block(b, &s, 470 + rng_below(&s, 60), 0);
		else
			for (size_t j = 0; j < FIPS_BLOCK_BYTES; j++)
				b[j] = (uint8_t)rng_next(&s);
		/* A run of 20 to 31 equal bits anywhere, often at the end. */
		if (i % 3 == 0) {
			unsigned int l = 20 + rng_below(&s, 12), v = rng_below(&s, 2);
			unsigned int p = i % 6 == 0 ? NBITS - l - rng_below(&s, 40)
						    : rng_below(&s, NBITS - l);

			for (unsigned int k = p; k < p + l; k++)
				set_bit(b, k, v);
		}
		if (rng_below(&s, 40) == 0) {
			size_t w = rng_below(&s, FIPS_BLOCK_BYTES / 4 - 1);

			memcpy(b + 4 * (w + 1), b + 4 * w, 4);
		}
	}
	memcpy(&last, seed, 4);
	for (size_t i = 0; i < n; i++)
		want[i] = ref_test(&last, blocks[i]);
	for (size_t e = 0; fips_engines[e]; e++) {
		const struct fips_engine *eng = fips_engines[e];
		unsigned int seen = 0;
		struct fips_ctx ctx;

		if (!eng->supported()) {
			print_message("engine %s: not supported by this CPU, skipped\n", eng->name);
			continue;
		}
		assert_int_equal(fips_engine_select(eng->name), 0);
		assert_ptr_equal(fips_engine_current(), eng);
		fips_init(&ctx, seed);
		for (size_t i = 0; i < n; i++) {
			unsigned int got = fips_test_block(&ctx, blocks[i]);

			if (got != want[i])
				fail_msg("engine %s, block %zu: %#x, reference %#x", eng->name, i,
					 got, want[i]);
			seen |= got;
		}
		assert_int_equal(seen, ALL_TESTS);
	}
	assert_int_equal(fips_engine_select("scalar"), 0);
}

/* The counts of the reference, in the form of struct fips_counts (runs: >= k). */
static void ref_counts(uint32_t *last, const uint8_t *b, struct fips_counts *c)
{
	struct ref r;

	ref_analyze(last, b, &r);
	memset(c, 0, sizeof(*c));
	c->ones = r.ones;
	for (size_t i = 0; i < FIPS_BLOCK_BYTES; i++) {
		c->nibbles[b[i] >> 4]++;
		c->nibbles[b[i] & 15]++;
	}
	for (int k = 5; k >= 0; k--) {
		c->ones_ge[k] = r.runs[1][k] + (k < 5 ? c->ones_ge[k + 1] : 0);
		c->zeros_ge[k] = r.runs[0][k] + (k < 5 ? c->zeros_ge[k + 1] : 0);
	}
	c->repeat = r.repeat;
}

/* Every engine's counts of block b equal the reference's; what says which block it is. */
static void check_counts(const uint8_t *b, const char *what, unsigned int n)
{
	static const uint8_t seed[4] = { 5, 6, 7, 8 };
	struct fips_counts want, got;
	uint32_t last;

	memcpy(&last, seed, 4);
	ref_counts(&last, b, &want);
	for (size_t e = 0; fips_engines[e]; e++) {
		const struct fips_engine *eng = fips_engines[e];

		if (!eng->supported())
			continue;
		memcpy(&last, seed, 4);
		eng->counts(b, &last, &got);
		if (got.ones != want.ones ||
		    memcmp(got.nibbles, want.nibbles, sizeof(got.nibbles)) ||
		    memcmp(got.ones_ge, want.ones_ge, sizeof(got.ones_ge)) ||
		    memcmp(got.zeros_ge, want.zeros_ge, sizeof(got.zeros_ge)) ||
		    got.repeat != want.repeat)
			fail_msg("engine %s, block %u (%s): counts differ from the reference; "
				 "ones >= 1..6: %llu %llu %llu %llu %llu %llu, want %llu %llu %llu "
				 "%llu %llu %llu; zeros >= 1..6: %llu %llu %llu %llu %llu %llu, "
				 "want %llu %llu %llu %llu %llu %llu",
				 eng->name, n, what, (unsigned long long)got.ones_ge[0],
				 (unsigned long long)got.ones_ge[1], (unsigned long long)got.ones_ge[2],
				 (unsigned long long)got.ones_ge[3], (unsigned long long)got.ones_ge[4],
				 (unsigned long long)got.ones_ge[5], (unsigned long long)want.ones_ge[0],
				 (unsigned long long)want.ones_ge[1],
				 (unsigned long long)want.ones_ge[2],
				 (unsigned long long)want.ones_ge[3],
				 (unsigned long long)want.ones_ge[4],
				 (unsigned long long)want.ones_ge[5],
				 (unsigned long long)got.zeros_ge[0],
				 (unsigned long long)got.zeros_ge[1],
				 (unsigned long long)got.zeros_ge[2],
				 (unsigned long long)got.zeros_ge[3],
				 (unsigned long long)got.zeros_ge[4],
				 (unsigned long long)got.zeros_ge[5],
				 (unsigned long long)want.zeros_ge[0],
				 (unsigned long long)want.zeros_ge[1],
				 (unsigned long long)want.zeros_ge[2],
				 (unsigned long long)want.zeros_ge[3],
				 (unsigned long long)want.zeros_ge[4],
				 (unsigned long long)want.zeros_ge[5]);
	}
}

/*
 * Every engine's counts equal the reference's exactly, not only its verdicts: blocks that
 * start and end with runs of zeros and of ones of every length from 1 to 30 (where the
 * engines treat the block's edges apart), and random and biased ones.
 */
static void test_engine_counts(void **state)
{
	uint8_t b[FIPS_BLOCK_BYTES];
	uint64_t s = 99;
	unsigned int n = 0;

	for (unsigned int kind = 0; kind < 4; kind++)
		for (unsigned int len = 1; len <= 30; len++)
			for (unsigned int rep = 0; rep < 3; rep++, n++) {
				char what[64];

				if (rep == 2)
					biased_block(b, &s, 500, 600);
				else
					for (size_t j = 0; j < FIPS_BLOCK_BYTES; j++)
						b[j] = (uint8_t)rng_next(&s);
				/* kind: start or end (bit 1), zeros or ones (bit 0), then a break. */
				for (unsigned int i = 0; i <= len; i++) {
					unsigned int pos = kind & 2 ? NBITS - 1 - i : i;

					set_bit(b, pos, i < len ? kind & 1 : !(kind & 1));
				}
				snprintf(what, sizeof(what), "a run of %u %ss at the %s", len,
					 kind & 1 ? "one" : "zero", kind & 2 ? "end" : "start");
				check_counts(b, what, n);
			}
}

/*
 * The edges inside the engines: runs of 1 to 30 bits of either kind at every offset across
 * the boundaries of 64-bit words (the runs chains look ahead into the next word), of the
 * SIMD engines' steps and counter flushes (words 4, 8, 124 = 31 steps of 4, 248), of the
 * last full word and the 32-bit tail (bit 19968); and blocks of one repeated byte (every
 * value: the poker counters at their fullest, no runs or runs everywhere).
 */
static void test_engine_counts_edges(void **state)
{
	static const unsigned int edges[] = {
		64, 256, 512, 7936, 15872, 19904, FIPS_BLOCK_BYTES / 8 * 64, NBITS - 8,
	};
	uint8_t b[FIPS_BLOCK_BYTES];
	uint64_t s = 1234;
	unsigned int n = 0;
	char what[80];

	for (size_t e = 0; e < ARRAY_SIZE(edges); e++)
		for (unsigned int len = 1; len <= 30; len++)
			for (unsigned int v = 0; v < 2; v++)
				for (unsigned int p = edges[e] > len + 1 ? edges[e] - len - 1 : 0;
				     p <= edges[e] + 1 && p + len <= NBITS; p++, n++) {
					for (size_t j = 0; j < FIPS_BLOCK_BYTES; j++)
						b[j] = (uint8_t)rng_next(&s);
					put_run(b, p, len, v);
					snprintf(what, sizeof(what), "a run of %u %ss at bit %u", len,
						 v ? "one" : "zero", p);
					check_counts(b, what, n);
				}
	for (unsigned int byte = 0; byte < 256; byte++, n++) {
		memset(b, (int)byte, sizeof(b));
		snprintf(what, sizeof(what), "every byte %#04x", byte);
		check_counts(b, what, n);
	}
}

static void test_engine_select(void **state)
{
	assert_int_equal(fips_engine_select("no-such-engine"), -EINVAL);
	assert_int_equal(fips_engine_select(""), 0);
	assert_int_equal(fips_engine_select(NULL), 0);
	assert_int_equal(fips_engine_select("auto"), 0);
	assert_true(fips_engine_current()->supported());
	assert_int_equal(fips_engine_select("scalar"), 0);
	assert_string_equal(fips_engine_current()->name, "scalar");
	for (size_t e = 0; fips_engines[e]; e++)
		assert_int_equal(fips_engine_select(fips_engines[e]->name),
				 fips_engines[e]->supported() ? 0 : -ENOTSUP);
	/* The list the messages print (rngd(8) and rngtest(1) ENVIRONMENT name them all). */
#if defined(__x86_64__)
	assert_string_equal(fips_engine_names(), "auto, scalar, avx2, avx512");
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(fips_engine_names(), "auto, scalar, neon");
#else
	assert_string_equal(fips_engine_names(), "auto, scalar");
#endif
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/*
	 * The NEON engine is built, and runs wherever the kernel reports Advanced SIMD (nearly
	 * every arm64 CPU, and qemu-aarch64's): not skipped as unsupported by mistake.
	 */
	assert_int_equal(fips_engine_select("neon"),
			 getauxval(AT_HWCAP) & HWCAP_ASIMD ? 0 : -ENOTSUP);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monobit),
		cmocka_unit_test(test_poker),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_long_run),
		cmocka_unit_test(test_continuous),
		cmocka_unit_test(test_constant_blocks),
		cmocka_unit_test(test_random_vs_reference),
	};
	const struct CMUnitTest engines[] = {
		cmocka_unit_test(test_engine_select),
		cmocka_unit_test(test_engines_agree),
		cmocka_unit_test(test_engine_counts),
		cmocka_unit_test(test_engine_counts_edges),
	};
	int failed = cmocka_run_group_tests(engines, NULL, NULL);

	/* The crafted boundary cases and the random streams, once per engine. */
	for (size_t e = 0; fips_engines[e]; e++) {
		if (!fips_engines[e]->supported()) {
			printf("# engine %s: not supported by this CPU, skipped\n",
			       fips_engines[e]->name);
			continue;
		}
		printf("# engine %s\n", fips_engines[e]->name);
		if (fips_engine_select(fips_engines[e]->name) != 0)
			return 1;
		failed += _cmocka_run_group_tests(fips_engines[e]->name, tests, ARRAY_SIZE(tests),
						  NULL, NULL);
	}
	return failed ? 1 : 0;
}
