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
 *    the key-derived value A and the HEALTH_ANCHOR_WIN bytes from i lie in the block. The
 *    anchors depend on the data only, not on where a block starts, so a shifted copy has
 *    the same anchors with the same windows (those not cut by a block edge); each window's
 *    keyed 64-bit hash is its fingerprint. A block any of whose fingerprints (its first
 *    HEALTH_ANCHOR_QUERY) is in the history is replayed; a block keeps its first
 *    HEALTH_ANCHOR_KEEP in the history. A random block has about 9.5 anchors (2469 / 256),
 *    a shifted copy misses all of them with p ~ e^-9.3 ~ 1e-4 (the next block is caught
 *    then). A block without any anchor (p ~ 6e-5 for random data; data without byte A)
 *    has the whole-block hash alone. A block sharing one anchored window with a recent
 *    block is a replay too: a near copy is not new data.
 *    Memory: 177 KiB per source name (struct health; 24 KiB before anchors): 96 KiB of
 *    anchor fingerprints, 64 KiB of their table, 17 KiB for the block hashes and counts.
 *  - SP 800-90B §4.4's two continuous tests on bytes, with the cut-offs for an assessed
 *    min-entropy of H = 1 bit per byte and alpha = 2^-20: the Repetition Count Test (a
 *    byte repeated HEALTH_RCT_CUTOFF times in a row) and the Adaptive Proportion Test
 *    (the first byte of a 512-byte window occurring HEALTH_APT_CUTOFF times in it), each
 *    within one block (a stuck source fails every block anyway). H = 1 is far below what
 *    any source here claims, so these catch stuck and grossly biased sources without
 *    false alarms.
 * False positives on a perfect source, per block: repeated block 1024 * 2^-64 ~ 6e-17
 * (hash collision; two equal 2500-byte random blocks: 2^-20000); anchors about
 * 9.5 * 9700 * 2^-64 ~ 5e-15 (a fingerprint collision among the ~9.5 of the block and the
 * ~9700 of the history; at most 32 * 12288 * 2^-64 ~ 2e-14; two equal random windows:
 * 2^-248), that is one false replay in about 150 years at 100 MB/s, and it costs one
 * block and a back-off (asking for two matching anchors instead would make that ~1e-27,
 * but let a shifted copy through with p ~ 1e-3 instead of 1e-4: one is enough);
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
#define HEALTH_ANCHOR_KEEP 12 /* anchors of a block remembered, at most */
#define HEALTH_ANCHORS (HEALTH_HISTORY * HEALTH_ANCHOR_KEEP) /* 12288: never overflows */
#define HEALTH_ATABLE 16384   /* their lookup table (a power of two, > HEALTH_ANCHORS) */
#define HEALTH_RCT_CUTOFF 21  /* 1 + ceil(20 / H), H = 1 (SP 800-90B §4.4.1) */
#define HEALTH_APT_WINDOW 512 /* non-binary window (SP 800-90B §4.4.2) */
#define HEALTH_APT_CUTOFF 410 /* H = 1, alpha = 2^-20 (SP 800-90B §4.4.2, table 2) */

/* Verdicts of health_test_block(), as bits. */
enum {
	HEALTH_REPEATED = 1u << 0, /* the same block was seen in the history */
	HEALTH_RCT = 1u << 1,	   /* repetition count test failed */
	HEALTH_APT = 1u << 2,	   /* adaptive proportion test failed */
};

/*
 * The tables hold 1 + an index into hist or afp (0: free slot): a table of indices is a
 * quarter of one of hashes, and holds equal hashes without harm.
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
	uint32_t atable[HEALTH_ATABLE];
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
