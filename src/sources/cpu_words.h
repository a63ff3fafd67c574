/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The read loop the CPU instruction sources share (rdseed and rdrand in x86_rand.c, rndr):
 * one 64-bit instruction per word, a failed instruction retried a bounded number of times,
 * then either an error (RDRAND: a hardware problem) or short sleeps and 0 (a source that
 * may run dry: the framework waits); every word checked before use, stuck output (all
 * zeros, all ones, the word before again) wiped with everything the call had read, and
 * the source failed with -EIO when that persists. A random 64-bit word looks stuck with
 * p ~ 3 * 2^-64: never, in practice.
 */
#ifndef RNGD_SOURCES_CPU_WORDS_H
#define RNGD_SOURCES_CPU_WORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "source.h"

/* Sleeps before a dry read returns 0: this many, doubling from CPU_WORDS_NAP_NS. */
#define CPU_WORDS_NAPS 4
#define CPU_WORDS_NAP_NS (20ULL * 1000)
/*
 * Stuck output discards everything one read() call has read so far; this many discards in
 * one call, or a discard in this many calls in a row, and read() fails with -EIO.
 */
#define CPU_WORDS_STUCK_DISCARDS 3
#define CPU_WORDS_STUCK_CALLS 4

struct cpu_words;

struct cpu_words_insn {
	const char *name;   /* "RDSEED", for the log */
	unsigned int tries; /* of one word, back to back */
	/* One instruction: true with *w when it delivered. */
	bool (*step)(const struct cpu_words *cw, uint64_t *w);
	void (*between)(void); /* between tries (PAUSE), or NULL */
	/*
	 * NULL: a word given up on is "dry" (naps, then 0). Else the read fails with -EIO and
	 * this why ("RDRAND kept CF=0 10 times in a row ...").
	 */
	const char *gave_up_error;
};

struct cpu_words {
	const struct cpu_words_insn *insn;
	int which;     /* the driver's own: which instruction step() runs */
	uint64_t last; /* the last word read, for the repeat check */
	bool have_last;
	uint8_t carry[8]; /* the rest of the last word, delivered by the next call */
	size_t carry_n;
	unsigned int stuck_calls; /* calls in a row that discarded stuck output */
	int c_fail, c_gave_up, c_zero, c_ones, c_repeat;
};

/*
 * Start cw for insn on src, registering its counters: fail_name for each failed
 * instruction, gave_up_name for each word given up on, and stuck-zero, stuck-ones,
 * stuck-repeat.
 */
void cpu_words_init(struct cpu_words *cw, struct source *src, const struct cpu_words_insn *insn,
		    int which, const char *fail_name, const char *gave_up_name);
/* The driver's readv: bytes, 0 when dry, -EIO with source_read_why(), -EINTR at a stop. */
ssize_t cpu_words_readv(struct source *src, struct cpu_words *cw, const struct iovec *iov, int cnt);

#endif
