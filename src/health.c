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

/*
 * A keyed multiply-mix hash (wyhash-style): two 64-bit words per multiplication. Not a
 * cryptographic hash: it tells equal blocks from different ones, with collisions at
 * 2^-64 for blocks nobody chose to collide; the random key keeps a writer from choosing.
 */
static uint64_t block_hash(const uint64_t key[2], const uint8_t *p, size_t len)
{
	const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
	uint64_t h = key[0] ^ mix(len ^ k0, key[1] ^ k1);
	size_t i = 0;

	for (; i + 16 <= len; i += 16)
		h = mix(load64(p + i) ^ k1 ^ h, load64(p + i + 8) ^ key[1]);
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
 * The history: a FIFO of the last HEALTH_HISTORY hashes, and the same hashes in an open
 * addressing table (linear probing, half full at most) to find one in a probe or two.
 * 0 marks a free slot; a hash that is 0 is stored as 1 (a 2^-64 blur).
 */
static size_t slot_of(uint64_t x)
{
	return (size_t)(x ^ (x >> 32)) & (HEALTH_TABLE - 1);
}

static bool table_has(const struct health *h, uint64_t x)
{
	for (size_t i = slot_of(x); h->table[i]; i = (i + 1) & (HEALTH_TABLE - 1))
		if (h->table[i] == x)
			return true;
	return false;
}

static void table_add(struct health *h, uint64_t x)
{
	size_t i = slot_of(x);

	while (h->table[i])
		i = (i + 1) & (HEALTH_TABLE - 1);
	h->table[i] = x;
}

/* Remove x (present), shifting back the entries after it (Knuth 6.4, algorithm R). */
static void table_del(struct health *h, uint64_t x)
{
	size_t i = slot_of(x), j;

	while (h->table[i] != x)
		i = (i + 1) & (HEALTH_TABLE - 1);
	for (j = i;;) {
		size_t home;

		h->table[i] = 0;
		do {
			j = (j + 1) & (HEALTH_TABLE - 1);
			if (!h->table[j])
				return;
			home = slot_of(h->table[j]);
			/* j's entry may move to i unless its home lies cyclically in (i, j] */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		h->table[i] = h->table[j];
		i = j;
	}
}

unsigned int health_test_block(struct health *h, const uint8_t *block, size_t len)
{
	uint64_t x = block_hash(h->key, block, len);
	unsigned int res = test_90b(block, len);

	x = x ? x : 1;
	if (table_has(h, x))
		return res | HEALTH_REPEATED;
	if (h->n_hist == HEALTH_HISTORY)
		table_del(h, h->hist[h->next]);
	else
		h->n_hist++;
	h->hist[h->next] = x;
	h->next = (h->next + 1) % HEALTH_HISTORY;
	table_add(h, x);
	return res;
}
