// SPDX-License-Identifier: GPL-2.0-or-later
/* Health tests before the FIPS gate (health.h). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "health.h"

/* SplitMix64's finaliser: a bijection that sends no small or zero input to zero. */
static uint64_t spread(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * The key words go through spread() first: the hash multiplies by key[1] (a block's last,
 * short word is zero-padded), so a key word of 0 would hash every 2500-byte block alike. Early
 * at boot, before the CRNG is ready, the reader's key is a clock value and a 0.
 */
void health_init(struct health *h, const uint64_t key[2])
{
	memset(h, 0, sizeof(*h));
	h->key[0] = spread(key[0]);
	h->key[1] = spread(key[1] ^ h->key[0]);
	for (int i = 0; i < 4; i++)
		h->akey[i] = spread(h->key[1] + (uint64_t)i + 1);
	h->anchor = (uint8_t)spread(h->key[0] + h->key[1]);
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
	unsigned __int128 m = (unsigned __int128)a * b;

	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The high bit of each byte of x that is zero, only those (no borrow between bytes). */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((x & low7) + low7) | x | low7);
}

/*
 * A keyed multiply-mix hash (wyhash-style): two 64-bit words per multiplication. Not a
 * cryptographic hash: it tells equal blocks from different ones, with collisions at
 * 2^-64 for blocks nobody chose to collide; the random key keeps a writer from choosing.
 * The same pass notes the 16-byte chunks that hold the anchor byte a (in chunk[], up to
 * HEALTH_ANCHOR_QUERY of them: *n_chunk), without a branch: the hash is a chain of
 * multiplications, the compares fill the idle units beside it.
 */
static uint64_t block_hash(const uint64_t key[2], const uint8_t *p, size_t len, uint8_t a,
			   uint16_t *chunk, size_t *n_chunk)
{
	const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
	const uint64_t pat = a * 0x0101010101010101ull;
	uint64_t h = key[0] ^ mix(len ^ k0, key[1] ^ k1);
	size_t i = 0, n = 0;

	for (; i + 16 <= len; i += 16) {
		uint64_t w0 = load64(p + i), w1 = load64(p + i + 8);

		h = mix(w0 ^ k1 ^ h, w1 ^ key[1]);
		chunk[n] = (uint16_t)(i / 16);
		n += ((zero_bytes(w0 ^ pat) | zero_bytes(w1 ^ pat)) != 0) &
		     (n < HEALTH_ANCHOR_QUERY);
	}
	*n_chunk = n;
	if (i < len) {
		uint8_t tail[16] = { 0 };

		memcpy(tail, p + i, len - i);
		h = mix(load64(tail) ^ k1 ^ h, load64(tail + 8) ^ key[1]);
	}
	return mix(h ^ k0, h ^ key[0] ^ k1);
}

/* Whether the 8 bytes of w are all equal. */
static inline bool uniform(uint64_t w)
{
	return ((w ^ (w >> 8)) & 0x00ffffffffffffffull) == 0;
}

/* Whether the run of equal bytes through p[i] is HEALTH_RCT_CUTOFF long or more. */
static bool long_run(const uint8_t *p, size_t len, size_t i)
{
	size_t a = i, b = i + 1;

	while (a > 0 && p[a - 1] == p[i])
		a--;
	while (b < len && p[b] == p[i])
		b++;
	return b - a >= HEALTH_RCT_CUTOFF;
}

/*
 * SP 800-90B §4.4 on one block, in one pass over its 8-byte words:
 *  - Repetition Count Test (§4.4.1): a byte repeated HEALTH_RCT_CUTOFF times in a row.
 *    Such a run (21 >= 15) holds a whole 8-byte-aligned word of one value: look for those
 *    words (a random word is one with p = 2^-56), and measure the run only there.
 *  - Adaptive Proportion Test (§4.4.2): the first byte of each 512-byte window counted in
 *    the window (the block's last, shorter window too: a count can only be lower there).
 *    A byte of x is zero where p equals that byte; its lane of lanes counts them (at most
 *    64 per window: no carry between lanes).
 */
static unsigned int test_90b(const uint8_t *p, size_t len)
{
	const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
	const uint64_t even = 0x00ff00ff00ff00ffull;
	unsigned int res = 0;

	for (size_t w = 0; w < len; w += HEALTH_APT_WINDOW) {
		size_t end = len - w < HEALTH_APT_WINDOW ? len : w + HEALTH_APT_WINDOW, i = w;
		uint64_t pattern = p[w] * ones, lanes = 0;
		unsigned int count;

		for (; i + 8 <= end; i += 8) {
			uint64_t v = load64(p + i), x = v ^ pattern;
			uint64_t nonzero = (((x & low7) + low7) | x) & ~low7;

			lanes += (~nonzero >> 7) & ones;
			if (uniform(v) && long_run(p, len, i))
				res |= HEALTH_RCT;
		}
		/* The lanes' sum (up to 512): pairs into 16-bit lanes first. */
		lanes = (lanes & even) + ((lanes >> 8) & even);
		count = (unsigned int)((lanes * 0x0001000100010001ull) >> 48);
		for (; i < end; i++)
			count += p[i] == p[w];
		if (count >= HEALTH_APT_CUTOFF)
			res |= HEALTH_APT;
	}
	return res;
}

/*
 * An anchor's fingerprint: the keyed multiply-mix of block_hash() over its 32-byte window.
 * The key is secret, so is A: a writer can neither aim at nor steer clear of anchors.
 */
static inline uint64_t window_hash(const uint64_t akey[4], const uint8_t *p)
{
	uint64_t h = mix(load64(p) ^ akey[0], load64(p + 8) ^ akey[1]);

	return mix(load64(p + 16) ^ akey[2] ^ h, load64(p + 24) ^ akey[3]);
}

/*
 * The fingerprints of the first HEALTH_ANCHOR_QUERY anchors of a block (in the chunks
 * block_hash() found; a byte in the last partial chunk cannot start a window), in fp:
 * their number.
 */
static size_t anchors(const struct health *h, const uint8_t *p, size_t len,
		      const uint16_t *chunk, size_t n_chunk, uint64_t *fp)
{
	const uint64_t pat = h->anchor * 0x0101010101010101ull;
	size_t n = 0;

	for (size_t c = 0; c < n_chunk; c++) {
		for (size_t at = (size_t)chunk[c] * 16; at < (size_t)chunk[c] * 16 + 16; at += 8) {
			uint64_t m = zero_bytes(load64(p + at) ^ pat);

			for (; m; m &= m - 1) {
				size_t i = at + (size_t)__builtin_ctzll(m) / 8;

				if (i + HEALTH_ANCHOR_WIN > len || n == HEALTH_ANCHOR_QUERY)
					return n;
				fp[n++] = window_hash(h->akey, p + i);
			}
		}
	}
	return n;
}

/*
 * The history: FIFOs of the last HEALTH_HISTORY block hashes and of their anchors'
 * fingerprints, each with an open addressing table (linear probing; at most half full for
 * the blocks, at most three quarters for the anchors, about 60 % with random data) of
 * 1 + the index of each entry, to find a hash in a probe or a few. A table of indices is
 * a quarter the size of one of hashes, and equal hashes (a block whose window recurs in
 * it) do no harm: an entry is removed by its index.
 */
struct fp_table {
	uint32_t *slot;
	size_t mask;
	const uint64_t *fp;
};

/*
 * A slot holds the hash's top 18 bits (tag) over 1 + the index (14 bits): the tag gives
 * the home slot (its low bits) and sorts out nearly all other entries without reading
 * the FIFO, which only a probable match reads.
 */
#define IDX_BITS 14
#define IDX_MASK ((1u << IDX_BITS) - 1)

static inline uint32_t tag_of(uint64_t x)
{
	return (uint32_t)(x >> (64 - (32 - IDX_BITS)));
}

static bool table_has(const struct fp_table *t, uint64_t x)
{
	uint32_t tag = tag_of(x);

	for (size_t i = tag & t->mask; t->slot[i]; i = (i + 1) & t->mask)
		if (t->slot[i] >> IDX_BITS == tag && t->fp[(t->slot[i] & IDX_MASK) - 1] == x)
			return true;
	return false;
}

static void table_add(const struct fp_table *t, size_t idx)
{
	uint32_t tag = tag_of(t->fp[idx]);
	size_t i = tag & t->mask;

	while (t->slot[i])
		i = (i + 1) & t->mask;
	t->slot[i] = tag << IDX_BITS | (uint32_t)(idx + 1);
}

/* Remove index idx (present), shifting back the entries after it (Knuth 6.4, algorithm R). */
static void table_del(const struct fp_table *t, size_t idx)
{
	size_t i = tag_of(t->fp[idx]) & t->mask, j;

	while ((t->slot[i] & IDX_MASK) != idx + 1)
		i = (i + 1) & t->mask;
	for (j = i;;) {
		size_t home;

		t->slot[i] = 0;
		do {
			j = (j + 1) & t->mask;
			if (!t->slot[j])
				return;
			home = (t->slot[j] >> IDX_BITS) & t->mask;
			/* j's entry may move to i unless its home lies cyclically in (i, j] */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		t->slot[i] = t->slot[j];
		i = j;
	}
}

unsigned int health_test_block(struct health *h, const uint8_t *block, size_t len)
{
	const struct fp_table blocks = { h->table, HEALTH_TABLE - 1, h->hist };
	const struct fp_table anch = { h->atable, HEALTH_ATABLE - 1, h->afp };
	uint16_t chunk[HEALTH_ANCHOR_QUERY + 1];
	uint64_t fp[HEALTH_ANCHOR_QUERY];
	size_t n_chunk, n, keep;
	uint64_t x = block_hash(h->key, block, len, h->anchor, chunk, &n_chunk);
	unsigned int res = test_90b(block, len);

	n = anchors(h, block, len, chunk, n_chunk, fp);
	keep = n;

	if (table_has(&blocks, x))
		return res | HEALTH_REPEATED;
	for (size_t i = 0; i < n; i++)
		if (table_has(&anch, fp[i]))
			return res | HEALTH_REPEATED;
	if (h->n_hist == HEALTH_HISTORY) {
		/* the oldest block leaves, with its anchors (the oldest in afp) */
		for (unsigned int k = h->n_anchors[h->next]; k > 0; k--) {
			table_del(&anch, (h->a_next + HEALTH_ANCHORS - h->a_count) % HEALTH_ANCHORS);
			h->a_count--;
		}
		table_del(&blocks, h->next);
	} else {
		h->n_hist++;
	}
	h->hist[h->next] = x;
	table_add(&blocks, h->next);
	if (keep > HEALTH_ANCHOR_KEEP)
		keep = HEALTH_ANCHOR_KEEP;
	h->n_anchors[h->next] = (uint8_t)keep;
	h->next = (h->next + 1) % HEALTH_HISTORY;
	/* at most HEALTH_ANCHOR_KEEP per block in the history: afp never overflows */
	for (size_t i = 0; i < keep; i++) {
		h->afp[h->a_next] = fp[i];
		table_add(&anch, h->a_next);
		h->a_next = (h->a_next + 1) % HEALTH_ANCHORS;
		h->a_count++;
	}
	return res;
}
