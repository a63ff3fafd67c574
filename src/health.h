/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Health tests that run on every block before the FIPS 140-2 gate, on the reader thread
 * (pure: no I/O, no locks, no allocation):
 *  - a repeated-block detector: a keyed 64-bit hash of each block against the hashes of
 *    the source's last HEALTH_HISTORY blocks (per source name, across re-opens and
 *    reloads: struct source_history in source_internal.h). A block seen again is replayed
 *    data (a file read twice, a writer that repeats itself, a stuck DMA buffer): FIPS
 *    140-2 passes a random block repeated forever, this does not. Whole blocks only: a
 *    repeat shifted by other than a multiple of the block size is not matched.
 *  - SP 800-90B §4.4's two continuous tests on bytes, with the cut-offs for an assessed
 *    min-entropy of H = 1 bit per byte and alpha = 2^-20: the Repetition Count Test (a
 *    byte repeated HEALTH_RCT_CUTOFF times in a row) and the Adaptive Proportion Test
 *    (the first byte of a 512-byte window occurring HEALTH_APT_CUTOFF times in it), each
 *    within one block (a stuck source fails every block anyway). H = 1 is far below what
 *    any source here claims, so these catch stuck and grossly biased sources without
 *    false alarms.
 * False positives on a perfect source, per block: repeated block 1024 * 2^-64 ~ 6e-17
 * (hash collision; two equal 2500-byte random blocks: 2^-20000); RCT about
 * 2500 * 2^-160; APT below 10^-700. None in the lifetime of any machine.
 */
#ifndef RNGD_HEALTH_H
#define RNGD_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEALTH_HISTORY 1024   /* block hashes remembered per source */
#define HEALTH_TABLE 2048     /* their lookup table (a power of two, >= 2 * HEALTH_HISTORY) */
#define HEALTH_RCT_CUTOFF 21  /* 1 + ceil(20 / H), H = 1 (SP 800-90B §4.4.1) */
#define HEALTH_APT_WINDOW 512 /* non-binary window (SP 800-90B §4.4.2) */
#define HEALTH_APT_CUTOFF 410 /* H = 1, alpha = 2^-20 (SP 800-90B §4.4.2, table 2) */

/* Verdicts of health_test_block(), as bits. */
enum {
	HEALTH_REPEATED = 1u << 0, /* the same block was seen in the history */
	HEALTH_RCT = 1u << 1,	   /* repetition count test failed */
	HEALTH_APT = 1u << 2,	   /* adaptive proportion test failed */
};

struct health {
	uint64_t key[2];	       /* hash key, random per process */
	uint64_t hist[HEALTH_HISTORY]; /* oldest at next once full */
	size_t n_hist, next;
	uint64_t table[HEALTH_TABLE];
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
