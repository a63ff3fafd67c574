/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Health tests that run on every block before the FIPS 140-2 gate, on the reader thread
 * (pure: no I/O, no locks, no allocation):
 *  - a repeated-block detector: a keyed 64-bit hash of each block against the hashes of
 *    the source's last HEALTH_HISTORY blocks (per source name, across re-opens and
 *    reloads: struct source_history in source_internal.h). A block seen again is replayed
 *    data (a file read twice, a writer that repeats itself, a stuck DMA buffer): FIPS
 *    140-2 passes a random block repeated forever, this does not.
 *    Whole-block hashes only match a repeat shifted by a multiple of the block size; a
 *    repeat with any other period (a reader that lost its place, a device that repeats
 *    every 2496 bytes) is caught by anchors: the positions i of a block where the byte is
 *    A, a per-process value derived from the key, and the HEALTH_ANCHOR_WIN bytes from i lie
 *    in the block. Anchors depend on the data only, not on where a block starts, so a
 *    shifted copy has the same anchors with the same windows (but those cut by a block
 *    edge); each window's keyed 64-bit hash is its fingerprint. A secret A and key: a
 *    writer can neither aim at anchors nor avoid them. A block is replayed if any of its
 *    anchors' fingerprints (its first HEALTH_ANCHOR_QUERY, in its first HEALTH_ANCHOR_SPAN
 *    bytes) is in the history; it leaves there those of its first and its last anchor (of
 *    those: a block dense in A, 32 anchors or more, p ~ 1e-8 at random, keeps the 32nd). That is enough: a block made of the
 *    tail of history block X (from s) and the head of the next one Y holds X's last anchor
 *    if X has any in [s, 2500 - W], else Y's first if Y has any in [0, s - W]; it escapes
 *    only without either, p ~ e^-(2436 / 256) ~ 7e-5 for random data (the next block is
 *    caught then, the same way), or if that fingerprint was dropped from a full bucket of
 *    the table (p ~ 1e-3). A random block has about 9.5 anchors (2469 / 256); one without
 *    any (p ~ 7e-5; data without the byte A) has its whole-block hash alone. A block that
 *    shares an anchored window with a recent block is replayed too: a near copy (a bit
 *    flipped) is not new data.
 *    Memory: 65 KiB per source name (struct health; 24 KiB before the anchors): 16 KiB
 *    of anchor fingerprints, 32 KiB of their table, 17 KiB of block hashes and the rest.
 *  - SP 800-90B §4.4's two continuous tests on bytes, with the cut-offs for an assessed
 *    min-entropy of H = 1 bit per byte and alpha = 2^-20: the Repetition Count Test (a
 *    byte repeated HEALTH_RCT_CUTOFF times in a row) and the Adaptive Proportion Test
 *    (the first byte of a 512-byte window occurring HEALTH_APT_CUTOFF times in it), each
 *    within one block (a stuck source fails every block anyway). H = 1 is far below what
 *    any source here claims, so these catch stuck and grossly biased sources without
 *    false alarms.
 * False positives on a perfect source, per block: repeated block 1024 * 2^-64 ~ 6e-17
 * (hash collision; two equal 2500-byte random blocks: 2^-20000); anchors about
 * 9.5 * 2048 * 2^-64 ~ 1e-15 (a fingerprint collision between the ~9.5 of the block and
 * the 2048 of the history; at most 32 * 2048 * 2^-64 ~ 4e-15; two equal random windows:
 * 2^-248), that is one false replay in about 800 years at 100 MB/s, costing one block
 * and a back-off. Asking for two matching anchors would make that negligible, but two
 * matches need more than the first and last anchor of each block in the history (more
 * memory and time) or let most shifted copies through: one is enough;
 * RCT about 2500 * 2^-160; APT below 10^-700.
 */
#ifndef RNGD_HEALTH_H
#define RNGD_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEALTH_HISTORY 1024   /* blocks remembered per source */
#define HEALTH_TABLE 2048     /* their hashes' lookup table (a power of two, >= 2 * HISTORY) */
#define HEALTH_ANCHOR_WIN 32  /* bytes of data an anchor's fingerprint covers */
#define HEALTH_ANCHOR_QUERY 32 /* anchors of a block looked up, at most */
#define HEALTH_ANCHOR_SPAN 4096 /* anchors start in a block's first bytes (a multiple of 64) */
#define HEALTH_ANCHOR_KEEP 2  /* anchors of a block remembered: its first and last */
#define HEALTH_ANCHORS (HEALTH_HISTORY * HEALTH_ANCHOR_KEEP) /* 2048: never overflows */
#define HEALTH_ABUCKETS 1024  /* their lookup table's buckets (a power of two) */
#define HEALTH_ASLOTS 8       /* of this many fingerprints */
#define HEALTH_RCT_CUTOFF 21  /* 1 + ceil(20 / H), H = 1 (SP 800-90B §4.4.1) */
#define HEALTH_APT_WINDOW 512 /* non-binary window (SP 800-90B §4.4.2) */
#define HEALTH_APT_CUTOFF 410 /* H = 1, alpha = 2^-20 (SP 800-90B §4.4.2, table 2) */

/* Verdicts of health_test_block(), as bits. */
enum {
	HEALTH_REPEATED = 1u << 0, /* the block, or an anchored window of it, is in the history */
	HEALTH_RCT = 1u << 1,	   /* repetition count test failed */
	HEALTH_APT = 1u << 2,	   /* adaptive proportion test failed */
};

/*
 * The tables hold the top bits of a hash over 1 + its index in hist or afp (0: a free
 * slot): half the size of a table of hashes, and equal hashes do no harm.
 */
struct health {
	uint64_t key[2];		     /* hash key, random per process */
	uint64_t akey[4];		     /* anchor fingerprints' key */
	uint8_t anchor;			     /* the anchor byte A */
	uint8_t n_anchors[HEALTH_HISTORY];   /* anchors each block of hist keeps in afp */
	uint64_t hist[HEALTH_HISTORY];	     /* oldest at next once full */
	size_t n_hist, next;
	uint32_t table[HEALTH_TABLE];
	uint64_t afp[HEALTH_ANCHORS];	     /* a FIFO: oldest at a_next - a_count */
	size_t a_count, a_next;
	uint32_t atable[HEALTH_ABUCKETS][HEALTH_ASLOTS];
};

/*
 * Start an empty history (key: a per-process random key, e.g. from getrandom(); all zero
 * works but lets a writer craft collisions).
 */
void health_init(struct health *h, const uint64_t key[2]);
/*
 * Test one block of len bytes: 0 when it passed, else HEALTH_* bits. A block that is not
 * repeated enters the history (a failed one too: its repetition is just as bad).
 */
unsigned int health_test_block(struct health *h, const uint8_t *block, size_t len);

#endif
