// SPDX-License-Identifier: GPL-2.0-or-later
/* Health tests before the FIPS gate (health.h). */
#include "config.h"

#include <endian.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
/* RNGD_PORTABLE: the portable code alone, so that x86 tests it too (tests/test_portable.c). */
#if defined(__SSE2__) && !defined(RNGD_PORTABLE)
#define HEALTH_SSE2 1
#include <emmintrin.h>
#endif

#include "health.h"
#include "wide.h"

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
static void set_keys(struct health *h, const uint64_t key[2])
{
	h->key[0] = spread(key[0]);
	h->key[1] = spread(key[1] ^ h->key[0]);
	for (int i = 0; i < 4; i++) {
		h->akey[i] = spread(h->key[1] + (uint64_t)i + 1);
		h->akey2[i] = spread(h->key[0] + (uint64_t)i + 17);
	}
	h->key2[0] = spread(h->key[0] ^ h->akey[3]);
	h->key2[1] = spread(h->key[1] ^ h->akey2[3]);
	h->anchor = (uint8_t)spread(h->key[0] + h->key[1]);
}

/* The tables' sizes for a history of cap blocks (health.h). */
static size_t table_slots(size_t cap)
{
	return 2 * cap;
}

static size_t anchor_buckets(size_t cap)
{
	return (size_t)((uint64_t)cap * HEALTH_ABUCKETS / HEALTH_HISTORY);
}

_Static_assert((uint64_t)HEALTH_HISTORY_MIN * HEALTH_ABUCKETS / HEALTH_HISTORY >= 1 &&
		       (HEALTH_HISTORY_MIN & (HEALTH_HISTORY_MIN - 1)) == 0 &&
		       HEALTH_HISTORY % HEALTH_HISTORY_MIN == 0,
	       "the first tables: a power of two, a bucket at least");
_Static_assert(HEALTH_TABLE == 2 * HEALTH_HISTORY, "the block table at the last cap");

/*
 * Zero pages of their own (mmap, not malloc): mapped only where written, and given back
 * whole when the tables grow, without moving malloc's mmap threshold for the rest of the
 * daemon (glibc raises it to the size of a freed mapped chunk).
 */
static void *zero_pages(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap_tables(uint32_t *table, uint32_t (*atable)[HEALTH_ASLOTS], size_t cap)
{
	if (table)
		munmap(table, table_slots(cap) * sizeof(*table));
	if (atable)
		munmap(atable, anchor_buckets(cap) * sizeof(*atable));
}

struct health *health_new(const uint64_t key[2])
{
	/* calloc: zero pages, mapped as the FIFOs fill; no memset to touch them all. */
	struct health *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	set_keys(h, key);
	h->cap = HEALTH_HISTORY_MIN;
	h->table = zero_pages(table_slots(h->cap) * sizeof(*h->table));
	h->atable = zero_pages(anchor_buckets(h->cap) * sizeof(*h->atable));
	if (!h->table || !h->atable) {
		health_free(h);
		return NULL;
	}
	return h;
}

void health_free(struct health *h)
{
	if (!h)
		return;
	unmap_tables(h->table, h->atable, h->cap);
	free(h);
}

static inline uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t hi, lo = wide_mul64(a, b, &hi);

	return lo ^ hi;
}

/*
 * Little-endian on every machine: byte k of p is byte k of the word (bits 8k to 8k + 7),
 * which the anchor mask's gather relies on, and the hashes are the same everywhere.
 */
static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

#ifndef HEALTH_SSE2
/* The high bit of each byte of x that is zero, only those (no borrow between bytes). */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((x & low7) + low7) | x | low7);
}
#endif

/* Bit k set where p[k] == a, for the 16 bytes from p (w0, w1: the same as words). */
static inline unsigned int eq_mask16(const uint8_t *p, uint64_t w0, uint64_t w1, uint8_t a)
{
#ifdef HEALTH_SSE2
	__m128i v = _mm_loadu_si128((const __m128i *)p);

	(void)w0;
	(void)w1;
	return (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)a)));
#else
	const uint64_t pat = a * 0x0101010101010101ull, gather = 0x0102040810204080ull;

	(void)p;
	return (unsigned int)(((zero_bytes(w0 ^ pat) >> 7) * gather) >> 56) |
	       (unsigned int)(((zero_bytes(w1 ^ pat) >> 7) * gather) >> 56) << 8;
#endif
}

#define WHERE_WORDS (HEALTH_ANCHOR_SPAN / 64)
_Static_assert(WHERE_WORDS <= 64, "a bit of where[WHERE_WORDS] for each word");

/*
 * A keyed multiply-mix hash (wyhash-style): two 64-bit words per multiplication. Not a
 * cryptographic hash: it tells equal blocks from different ones, with collisions at
 * 2^-64 for blocks nobody chose to collide; the random key keeps a writer from choosing.
 * Four lanes, each its own chain over every fourth 16-byte chunk (the multiplications of
 * four chains overlap; the time saved pays for the anchor search in the same loop), each
 * started differently and joined in order, so that chunks swapped between lanes hash
 * differently.
 * The same pass notes where the block's bytes equal a, beside the multiplications: bit k
 * of where[g] for byte 64 * g + k, in the first HEALTH_ANCHOR_SPAN bytes (not in a last
 * partial 16 bytes: those start no anchor window); bit g of where[WHERE_WORDS] when
 * where[g] may be non-zero (one branch per group with anchors, not per group).
 * The lanes (256 bits) are joined twice, with independent keys: the hash and, in *x2, the
 * second word whose tag the tables keep (health.h).
 */
static uint64_t block_hash(const struct health *hh, const uint8_t *p, size_t len, uint8_t a,
			   uint64_t *where, uint64_t *x2)
{
	const uint64_t *key = hh->key, *key2 = hh->key2;
	const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
	uint64_t h[4], r;
	size_t i = 0;

	where[WHERE_WORDS] = 0;
	for (int l = 0; l < 4; l++)
		h[l] = key[0] ^ mix((len + (uint64_t)l) ^ k0, key[1] ^ k1);
	for (; i + 64 <= len; i += 64) {
		uint64_t m = 0;

		for (int l = 0; l < 4; l++) {
			uint64_t w0 = load64(p + i + 16 * l), w1 = load64(p + i + 16 * l + 8);

			h[l] = mix(w0 ^ k1 ^ h[l], w1 ^ key[1]);
			m |= (uint64_t)eq_mask16(p + i + 16 * l, w0, w1, a) << (16 * l);
		}
		if (i / 64 < WHERE_WORDS) {
			where[i / 64] = m;
			where[WHERE_WORDS] |= (uint64_t)(m != 0) << (i / 64);
		}
	}
	if (i + 16 <= len && i / 64 < WHERE_WORDS) {
		where[i / 64] = 0;
		where[WHERE_WORDS] |= 1ull << (i / 64); /* perhaps empty: anchors() copes */
	}
	for (; i + 16 <= len; i += 16) {
		uint64_t w0 = load64(p + i), w1 = load64(p + i + 8);

		h[0] = mix(w0 ^ k1 ^ h[0], w1 ^ key[1]);
		if (i / 64 < WHERE_WORDS)
			where[i / 64] |= (uint64_t)eq_mask16(p + i, w0, w1, a) << (i % 64);
	}
	if (i < len) {
		uint8_t tail[16] = { 0 };

		memcpy(tail, p + i, len - i);
		h[0] = mix(load64(tail) ^ k1 ^ h[0], load64(tail + 8) ^ key[1]);
	}
	r = h[0];
	for (int l = 1; l < 4; l++)
		r = mix(r ^ k0, h[l] ^ key[0]);
	*x2 = h[3];
	for (int l = 2; l >= 0; l--)
		*x2 = mix(*x2 ^ key2[0], h[l] ^ key2[1]);
	*x2 = mix(*x2 ^ k1, *x2 ^ key2[0] ^ k0);
	return mix(r ^ k0, r ^ key[0] ^ k1);
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

/* The second word: the same window, other key, other pairing of its words. */
static inline uint64_t window_hash2(const uint64_t akey2[4], const uint8_t *p)
{
	uint64_t h = mix(load64(p + 24) ^ akey2[0], load64(p) ^ akey2[1]);

	return mix(load64(p + 8) ^ akey2[2] ^ h, load64(p + 16) ^ akey2[3]);
}

/*
 * The fingerprints of the first HEALTH_ANCHOR_QUERY anchors of a block (where block_hash()
 * found the anchor byte), in fp, their second words in fp2: their number.
 */
static size_t anchors(const struct health *h, const uint8_t *p, size_t len,
		      const uint64_t *where, uint64_t *fp, uint64_t *fp2)
{
	size_t n = 0;

	for (uint64_t groups = where[WHERE_WORDS]; groups; groups &= groups - 1) {
		size_t g = (size_t)__builtin_ctzll(groups);

		for (uint64_t m = where[g]; m; m &= m - 1) {
			size_t i = g * 64 + (size_t)__builtin_ctzll(m);

			if (i + HEALTH_ANCHOR_WIN > len || n == HEALTH_ANCHOR_QUERY)
				return n;
			fp2[n] = window_hash2(h->akey2, p + i);
			fp[n++] = window_hash(h->akey, p + i);
		}
	}
	return n;
}

/*
 * The history: FIFOs of the last HEALTH_HISTORY block hashes and of their anchors'
 * fingerprints (afp: each block's, oldest first, n_anchors[] of them), each with a table
 * of 1 + the index of each entry. The blocks' is open addressing (linear probing, at most
 * half full: a hash in a probe or two); an entry is removed by its index, so equal
 * hashes would do no harm.
 */
struct fp_table {
	uint32_t *slot;
	size_t mask;
	const uint64_t *fp;
};

/*
 * A slot holds a tag, the second word's top HEALTH_TAG_BITS, over 1 + the index
 * (IDX_BITS): the tag sorts out nearly all other entries without reading the FIFO, which
 * only a probable match reads, and a match needs both words. The first word's low bits
 * give the home slot or bucket (read back from the FIFO when an entry moves or leaves).
 */
#define IDX_BITS (32 - HEALTH_TAG_BITS)
_Static_assert(HEALTH_HISTORY < (1u << IDX_BITS) && HEALTH_ANCHORS < (1u << IDX_BITS),
	       "1 + an index fits in IDX_BITS");
_Static_assert(HEALTH_ANCHOR_KEEP == 2, "the first and the last anchor");
#define IDX_MASK ((1u << IDX_BITS) - 1)

static inline uint32_t tag_of(uint64_t x2)
{
	return (uint32_t)(x2 >> (64 - HEALTH_TAG_BITS));
}

static bool table_has(const struct fp_table *t, uint64_t x, uint64_t x2)
{
	uint32_t tag = tag_of(x2);

	for (size_t i = x & t->mask; t->slot[i]; i = (i + 1) & t->mask)
		if (t->slot[i] >> IDX_BITS == tag && t->fp[(t->slot[i] & IDX_MASK) - 1] == x)
			return true;
	return false;
}

/* Put entry e (tag | 1 + index) in its home slot, or the next free one. */
static void table_put(const struct fp_table *t, uint32_t e)
{
	size_t i = t->fp[(e & IDX_MASK) - 1] & t->mask;

	while (t->slot[i])
		i = (i + 1) & t->mask;
	t->slot[i] = e;
}

static inline uint32_t entry_of(size_t idx, uint64_t x2)
{
	return tag_of(x2) << IDX_BITS | (uint32_t)(idx + 1);
}

/* Remove index idx (present), shifting back the entries after it (Knuth 6.4, algorithm R). */
static void table_del(const struct fp_table *t, size_t idx)
{
	size_t i = t->fp[idx] & t->mask, j;

	while ((t->slot[i] & IDX_MASK) != idx + 1)
		i = (i + 1) & t->mask;
	for (j = i;;) {
		size_t home;

		t->slot[i] = 0;
		do {
			j = (j + 1) & t->mask;
			if (!t->slot[j])
				return;
			home = t->fp[(t->slot[j] & IDX_MASK) - 1] & t->mask;
			/* j's entry may move to i unless its home lies cyclically in (i, j] */
		} while (i <= j ? (i < home && home <= j) : (i < home || home <= j));
		t->slot[i] = t->slot[j];
		i = j;
	}
}

/*
 * The anchors' table: anchor_buckets(cap) buckets (HEALTH_ABUCKETS at the last cap) of
 * HEALTH_ASLOTS slots (the same tag | index entries), a fingerprint in the bucket its first
 * word's low bits name. A lookup reads one bucket and compares its tags at once, no
 * probing, no branch to mispredict but on a probable match. A full bucket drops the new
 * fingerprint (2 a bucket on average: p ~ 1e-3; that anchor is then not remembered).
 */
static inline uint32_t *bucket_of(struct health *h, uint64_t x)
{
	return h->atable[x & (anchor_buckets(h->cap) - 1)];
}

static bool anchor_seen(struct health *h, uint64_t x, uint64_t x2)
{
	uint32_t tag = tag_of(x2), *b = bucket_of(h, x);
	unsigned int hit = 0;

#if defined(HEALTH_SSE2) && HEALTH_ASLOTS == 8
	const __m128i t = _mm_set1_epi32((int)tag);
	__m128i e0 = _mm_loadu_si128((const __m128i *)b);
	__m128i e1 = _mm_loadu_si128((const __m128i *)(b + 4));

	hit = (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(
		      _mm_cmpeq_epi32(_mm_srli_epi32(e0, IDX_BITS), t))) |
	      (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(
		      _mm_cmpeq_epi32(_mm_srli_epi32(e1, IDX_BITS), t))) << 4;
#else
	for (unsigned int k = 0; k < HEALTH_ASLOTS; k++)
		hit |= (unsigned int)(b[k] >> IDX_BITS == tag) << k;
#endif
	/* a free slot (0) matches tag 0 */
	for (; hit; hit &= hit - 1) {
		uint32_t e = b[__builtin_ctz(hit)];

		if (e && h->afp[(e & IDX_MASK) - 1] == x)
			return true;
	}
	return false;
}

/* Put entry e in the first free slot of its bucket; a full bucket drops it. */
static void anchor_put(struct health *h, uint32_t e)
{
	uint32_t *b = bucket_of(h, h->afp[(e & IDX_MASK) - 1]);

	for (unsigned int k = 0; k < HEALTH_ASLOTS; k++)
		if (!b[k]) {
			b[k] = e;
			return;
		}
}

static void anchor_del(struct health *h, size_t idx)
{
	uint32_t *b = bucket_of(h, h->afp[idx]);

	for (unsigned int k = 0; k < HEALTH_ASLOTS; k++)
		if ((b[k] & IDX_MASK) == idx + 1)
			b[k] = 0;
}

/*
 * Double the tables of a full history (not wrapped yet: its entries are at indices 0 to
 * n_hist - 1 and 0 to a_count - 1, which stay), moving every entry with its tag: the new
 * tables hold what the old ones held, at the same load. An anchor's new bucket receives
 * from one old bucket only (one more bit of the same word): nothing more is dropped.
 * Without memory, the history stays at cap blocks for good (its FIFO wraps there).
 */
static bool grow(struct health *h)
{
	size_t cap = 2 * h->cap, n = table_slots(h->cap), nb = anchor_buckets(h->cap);
	size_t amask = anchor_buckets(cap) - 1;
	uint32_t *table = zero_pages(table_slots(cap) * sizeof(*table));
	uint32_t(*atable)[HEALTH_ASLOTS] = zero_pages(anchor_buckets(cap) * sizeof(*atable));
	const struct fp_table blocks = { table, table_slots(cap) - 1, h->hist };

	if (!table || !atable) {
		unmap_tables(table, atable, cap);
		h->capped = true;
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (h->table[i])
			table_put(&blocks, h->table[i]);
	for (size_t b = 0; b < nb; b++)
		for (unsigned int k = 0; k < HEALTH_ASLOTS; k++) {
			uint32_t e = h->atable[b][k];

			if (e)
				atable[h->afp[(e & IDX_MASK) - 1] & amask][k] = e;
		}
	unmap_tables(h->table, h->atable, h->cap);
	h->table = table;
	h->atable = atable;
	h->cap = cap;
	h->next = h->n_hist; /* wrapped to 0 when the history filled */
	return true;
}

unsigned int health_test_block(struct health *h, const uint8_t *block, size_t len)
{
	struct fp_table blocks = { h->table, table_slots(h->cap) - 1, h->hist };
	uint64_t where[WHERE_WORDS + 1], fp[HEALTH_ANCHOR_QUERY], fp2[HEALTH_ANCHOR_QUERY];
	size_t n, keep;
	uint64_t x2, x = block_hash(h, block, len, h->anchor, where, &x2);
	unsigned int res = test_90b(block, len);

	n = anchors(h, block, len, where, fp, fp2);

	if (table_has(&blocks, x, x2))
		return res | HEALTH_REPEATED;
	for (size_t i = 0; i < n; i++)
		if (anchor_seen(h, fp[i], fp2[i]))
			return res | HEALTH_REPEATED;
	if (h->n_hist == h->cap && h->cap < HEALTH_HISTORY && !h->capped && grow(h)) {
		blocks.slot = h->table;
		blocks.mask = table_slots(h->cap) - 1;
	}
	if (h->n_hist == h->cap) {
		/* the oldest block leaves, with its anchors (the oldest in afp) */
		for (unsigned int k = h->n_anchors[h->next]; k > 0; k--) {
			anchor_del(h, (h->a_next + HEALTH_ANCHORS - h->a_count) % HEALTH_ANCHORS);
			h->a_count--;
		}
		table_del(&blocks, h->next);
	} else {
		h->n_hist++;
	}
	h->hist[h->next] = x;
	table_put(&blocks, entry_of(h->next, x2));
	/* the first and the last anchor (health.h); the one if the block has one */
	keep = n < HEALTH_ANCHOR_KEEP ? n : HEALTH_ANCHOR_KEEP;
	if (keep == 2) {
		fp[1] = fp[n - 1];
		fp2[1] = fp2[n - 1];
	}
	h->n_anchors[h->next] = (uint8_t)keep;
	h->next = (h->next + 1) & (h->cap - 1);
	/* HEALTH_ANCHOR_KEEP per block at most in the history: afp never overflows */
	for (size_t i = 0; i < keep; i++) {
		h->afp[h->a_next] = fp[i];
		anchor_put(h, entry_of(h->a_next, fp2[i]));
		h->a_next = (h->a_next + 1) % HEALTH_ANCHORS;
		h->a_count++;
	}
	return res;
}
