/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Health tests that run on every block before the FIPS 140-2 gate, on the reader thread
 * (no I/O, no locks; an allocation only when the history grows, at most 9 times a process):
 *  - a repeated-block detector: a keyed 64-bit hash of each block against the hashes of
 *    the last HEALTH_HISTORY blocks of every source (one history for the daemon, for its
 *    life: struct source_history in source_internal.h). A block seen again is replayed
 *    data (a file read twice, or a copy of it through a second source, a writer that
 *    repeats itself, a stuck DMA buffer): FIPS 140-2 passes a random block repeated
 *    forever, this does not.
 *    The threat that sizes it: a feeder that loops a recorded stream into a FIFO, a file
 *    or a device. 65,536 blocks are 164 MB: a loop is caught if its period is shorter,
 *    that is up to 4.5 hours of a 10 kB/s hwrng (27 minutes at 100 kB/s; the daemon
 *    reads sources only as fast as it feeds, so in daemon mode far longer).
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
 *    those: a block dense in A, 32 anchors or more, p ~ 1e-8 at random, keeps the 32nd).
 *    That is enough: a block made of the
 *    tail of history block X (from s) and the head of the next one Y holds X's last anchor
 *    if X has any in [s, 2500 - W], else Y's first if Y has any in [0, s - W]; it escapes
 *    only without either, p ~ e^-(2436 / 256) ~ 7e-5 for random data (the next block is
 *    caught then, the same way), or if that fingerprint was dropped from a full bucket of
 *    the table (p ~ 1e-3). A random block has about 9.5 anchors (2469 / 256); one without
 *    any (p ~ 7e-5; data without the byte A) has its whole-block hash alone. A block that
 *    shares an anchored window with a recent block is replayed too: a near copy (a bit
 *    flipped) is not new data.
 *    Each hash and fingerprint comes with a second, independently keyed word; the lookup
 *    tables keep HEALTH_TAG_BITS of it beside the index of the first, and a match needs
 *    both: 64 + 14 = 78 bits.
 *    Memory: at most 4.1 MiB for the daemon, whatever the number of sources and reloads:
 *    1 MiB of anchor fingerprints and 2 MiB of their table, 512 KiB of block hashes and
 *    512 KiB of their table, 64 KiB of counts. It grows as blocks arrive: the FIFOs
 *    (struct health, 1.6 MiB) are mapped zero pages written in order, and the tables,
 *    written at random places, are sized to the history: HEALTH_HISTORY_MIN blocks
 *    first, doubled (rebuilt from the old ones: no entry lost, the same load) each time
 *    the history is full, up to HEALTH_HISTORY (40 bytes of tables a block). A daemon that
 *    has tested few blocks holds a few KiB, not 4.1 MiB. Time: bench/health-history.
 *  - SP 800-90B §4.4's two continuous tests on bytes, with the cut-offs for an assessed
 *    min-entropy of H = 1 bit per byte and alpha = 2^-20: the Repetition Count Test (a
 *    byte repeated HEALTH_RCT_CUTOFF times in a row) and the Adaptive Proportion Test
 *    (the first byte of a 512-byte window occurring HEALTH_APT_CUTOFF times in it), each
 *    within one block (a stuck source fails every block anyway). H = 1 is far below what
 *    any source here claims, so these catch stuck and grossly biased sources without
 *    false alarms.
 * False positives on a perfect source, per block (each entry compared matches at 2^-78:
 * the 64-bit word and the 14-bit tag of the second): repeated block 65536 * 2^-78 ~ 2e-19
 * (two equal 2500-byte random blocks: 2^-20000); anchors about 9.5 * 131072 * 2^-78 ~
 * 4e-18 (a fingerprint collision between the ~9.5 of the block and the 131072 of the
 * history; at most 32 * 131072 * 2^-78 ~ 1.4e-17; two equal random windows: 2^-248): below
 * the 1e-15 of the former 1024-block history with 64-bit matches, that is less than one
 * false replay in 800 years at 100 MB/s, costing one block and a back-off. Asking for two
 * matching anchors would make that negligible, but two matches need more than the first
 * and last anchor of each block in the history (more memory and time) or let most shifted
 * copies through: one is enough; RCT about 2500 * 2^-160; APT below 10^-700.
 */
#ifndef RNGD_HEALTH_H
#define RNGD_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEALTH_HISTORY 65536  /* blocks remembered, of every source (164 MB of data) */
#define HEALTH_HISTORY_MIN 128 /* the tables' first size, in blocks (a power of two) */
#define HEALTH_TABLE 131072   /* their hashes' lookup table (a power of two, >= 2 * HISTORY) */
#define HEALTH_ANCHOR_WIN 32  /* bytes of data an anchor's fingerprint covers */
#define HEALTH_ANCHOR_QUERY 32 /* anchors of a block looked up, at most */
#define HEALTH_ANCHOR_SPAN 4096 /* anchors start in a block's first bytes (a multiple of 64) */
#define HEALTH_ANCHOR_KEEP 2  /* anchors of a block remembered: its first and last */
#define HEALTH_ANCHORS (HEALTH_HISTORY * HEALTH_ANCHOR_KEEP) /* 131072: never overflows */
#define HEALTH_ABUCKETS 65536 /* their lookup table's buckets (a power of two) */
#define HEALTH_TAG_BITS 14    /* of the second word, in the tables (32 - 18 index bits) */
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
 * The tables hold the top bits of the second word over 1 + the index in hist or afp of the
 * first (0: a free slot); the first word's low bits place it. Half the size of a table of
 * hashes, and equal hashes do no harm. Allocate it (health_new()): 1.6 MiB of address
 * space, its pages touched as it fills.
 */
struct health {
	uint64_t key[2];		     /* hash key, random per process */
	uint64_t key2[2];		     /* the second word's */
	uint64_t akey[4];		     /* anchor fingerprints' key */
	uint64_t akey2[4];		     /* their second word's */
	uint8_t anchor;			     /* the anchor byte A */
	bool capped;			     /* a growth failed (no memory): cap is final */
	size_t cap;			     /* blocks the tables hold now (a power of two) */
	uint32_t *table;		     /* 2 * cap slots */
	uint32_t (*atable)[HEALTH_ASLOTS];   /* cap * HEALTH_ABUCKETS / HEALTH_HISTORY buckets */
	/*
	 * The counters ahead of the arrays, in the page that holds the keys: each page of this
	 * 1.6 MB struct is resident from its first write on (an array's first entries), and
	 * the counters after the arrays were one more page for every source.
	 */
	size_t n_hist, next;		     /* of hist */
	size_t a_count, a_next;		     /* of afp */
	uint8_t n_anchors[HEALTH_HISTORY];   /* anchors each block of hist keeps in afp */
	uint64_t hist[HEALTH_HISTORY];	     /* oldest at next once full (only at the last cap) */
	uint64_t afp[HEALTH_ANCHORS];	     /* a FIFO: oldest at a_next - a_count */
};

/*
 * An empty history with tables for HEALTH_HISTORY_MIN blocks, or NULL (no memory). key: a
 * per-process random key, e.g. from getrandom(); all zero works but lets a writer craft
 * collisions. Free it with health_free().
 */
struct health *health_new(const uint64_t key[2]);
/* Free a history of health_new(); NULL is fine. */
void health_free(struct health *h);
/*
 * Test one block of len bytes: 0 when it passed, else HEALTH_* bits. A block that is not
 * repeated enters the history (a failed one too: its repetition is just as bad). When the
 * history is full below HEALTH_HISTORY, its tables first double (an allocation; without
 * memory the history stays at its size and the oldest block leaves instead).
 */
unsigned int health_test_block(struct health *h, const uint8_t *block, size_t len);

#endif
