/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rndr source (src/sources/rndr.c): Arm's FEAT_RNG instructions RNDRRS and RNDR,
 * read with MRS. Its two link-time seams are alone in rndr_insn.c, so that a unit test can
 * define them itself (failures, stuck values) on any architecture: detection (arm64 and
 * AT_HWCAP2's HWCAP2_RNG) and one instruction.
 */
#ifndef RNGD_SOURCES_RNDR_H
#define RNGD_SOURCES_RNDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source.h"
#include "sources/cpu_words.h"

extern const struct source_ops source_rndr;

enum rndr_insn {
	RNDR_RNDRRS, /* reseeded from the TRNG immediately before each read: preferred */
	RNDR_RNDR,   /* reseeded at an IMPLEMENTATION DEFINED rate: the fallback */
};

/*
 * Failed instructions (NZCV 0b0100) retried back to back for one word, RNDRRS and RNDR,
 * then RNDR_NAPS sleeps doubling from RNDR_NAP_NS before read() returns 0 and the
 * framework's own dry wait takes over (the Arm ARM: the instruction fails when it "cannot
 * return a genuine random number in a reasonable period of time").
 */
#define RNDR_RNDRRS_TRIES 64
#define RNDR_RNDR_TRIES 16
#define RNDR_NAPS CPU_WORDS_NAPS
#define RNDR_NAP_NS CPU_WORDS_NAP_NS
/* At start (instruction = auto): RNDRRS is used when one of this many tries delivers. */
#define RNDR_PROBE_TRIES 32
/* Stuck output, as for RDSEED: discards per read, reads in a row, then -EIO. */
#define RNDR_STUCK_DISCARDS CPU_WORDS_STUCK_DISCARDS
#define RNDR_STUCK_CALLS CPU_WORDS_STUCK_CALLS
/* Default credit of RNDR when the source falls back to it (rngd.conf(5)). */
#define RNDR_QUALITY_RNDR 2

/*
 * Can FEAT_RNG be used here? 0, or -EOPNOTSUPP off arm64 and -ENODEV without HWCAP2_RNG,
 * with why ("not an arm64 build (x86_64)", "no FEAT_RNG on this CPU (...)").
 */
int rndr_detect(char *why, size_t len);
/*
 * One RNDRRS or RNDR into *v: true when NZCV said a genuine random number (Z clear), false
 * when the instruction failed (*v is then meaningless). Never called off arm64.
 */
bool rndr_step(enum rndr_insn insn, uint64_t *v);

#endif
