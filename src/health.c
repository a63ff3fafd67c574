// SPDX-License-Identifier: GPL-2.0-or-later
/* Health tests before the FIPS gate (health.h). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "health.h"

void health_init(struct health *h, const uint64_t key[2])
{
	memset(h, 0, sizeof(*h));
	h->key[0] = key[0];
	h->key[1] = key[1];
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

/*
 * Repetition Count Test (§4.4.1): a byte repeated HEALTH_RCT_CUTOFF times in a row. Such
 * a run (21 >= 15) holds a whole 8-byte-aligned word of one byte value: look for those
 * words first (a random word is uniform with p = 2^-56), and measure the run only there.
 */
static bool rct_fails(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		size_t a, b;

		if (!uniform(load64(p + i)))
			continue;
		for (a = i; a > 0 && p[a - 1] == p[i]; a--)
			;
		for (b = i + 8; b < len && p[b] == p[i]; b++)
			;
		if (b - a >= HEALTH_RCT_CUTOFF)
			return true;
		/* Go on after the run. */
		if (b / 8 * 8 > i + 8)
			i = b / 8 * 8 - 8;
	}
	return false;
}

/*
 * Adaptive Proportion Test (§4.4.2): the first byte of each 512-byte window counted in the
 * window (the last, shorter window of a block too: a count can only be lower there).
 */
static bool apt_fails(const uint8_t *p, size_t len)
{
	for (size_t w = 0; w < len; w += HEALTH_APT_WINDOW) {
		size_t end = len - w < HEALTH_APT_WINDOW ? len : w + HEALTH_APT_WINDOW;
		unsigned int count = 0;
		uint8_t first = p[w];

		for (size_t i = w; i < end; i++)
			count += p[i] == first;
		if (count >= HEALTH_APT_CUTOFF)
			return true;
	}
	return false;
}

unsigned int health_test_block(struct health *h, const uint8_t *block, size_t len)
{
	uint64_t x = block_hash(h->key, block, len);
	unsigned int res = (rct_fails(block, len) ? HEALTH_RCT : 0) |
			   (apt_fails(block, len) ? HEALTH_APT : 0);

	for (size_t i = 0; i < h->n_hist; i++)
		if (h->hist[i] == x)
			return res | HEALTH_REPEATED;
	h->hist[h->next] = x;
	h->next = (h->next + 1) % HEALTH_HISTORY;
	if (h->n_hist < HEALTH_HISTORY)
		h->n_hist++;
	return res;
}
