/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A scripted random-number instruction, shared by the CPU sources' unit tests
 * (tests/test_rndr.c, tests/test_x86_rand.c), whose fake step functions return
 * insn_script_next(): first the results the test pushed, then, unless the instruction is
 * failing for good, the good words insn_good_word(0), (1), ... in turn.
 */
#ifndef RNGD_INSN_SCRIPT_H
#define RNGD_INSN_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How many results a test may push. */
#define INSN_SCRIPT_MAX 128

/* Word i of the good words: distinct, never stuck (neither 0, all ones nor a repeat). */
uint64_t insn_good_word(uint64_t i);

/* Empty the script and start the good words again at word 0. */
void insn_script_reset(void);

/* Empty the script only: the good words go on where they were. */
void insn_script_clear(void);

/*
 * Queue a result: ok is the instruction's success flag (CF=1 on x86, NZCV Z clear on
 * arm64), v its value. Fails the test beyond INSN_SCRIPT_MAX.
 */
void insn_push(bool ok, uint64_t v);

/* Queue n failed results (value 0). */
void insn_push_fails(unsigned int n);

/*
 * The next result: the script's next one; after the script, a failure with value 0 if
 * failing, else the next good word. Sets *v, returns the success flag.
 */
bool insn_script_next(bool failing, uint64_t *v);

/* Fails the test unless the n bytes at buf are those of the good words from word first on. */
void insn_expect_good(const uint8_t *buf, size_t n, uint64_t first);

#endif
