/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the rdseed and rdrand sources (src/sources/rdseed.c, rdrand.c) share: detection
 * (CPUID and the kernel's flag in /proc/cpuinfo), the read loop with its bounded CF=0
 * retries and its stuck-output checks (x86_rand.c, over cpu_words.c, which rndr shares),
 * and two link-time seams, each alone in
 * its object file so that a test can replace one and keep the other: CPUID
 * (x86_rand_cpuid.c) and the instruction step (x86_rand_insn.c).
 */
#ifndef RNGD_SOURCES_X86_RAND_H
#define RNGD_SOURCES_X86_RAND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "source.h"
#include "sources/cpu_words.h"

extern const struct source_ops source_rdseed, source_rdrand;

enum x86_rand_insn {
	X86_RDRAND,
	X86_RDSEED,
};

/*
 * Intel DRNG Software Implementation Guide rev 2.1, 5.2.1: RDRAND failing 10 times in a
 * row means a hardware problem (the kernel's RDRAND_RETRY_LOOPS is 10 as well).
 */
#define X86_RDRAND_TRIES 10
/*
 * RDSEED may run dry under load (guide 5.3.1: retry with PAUSE): this many tries, each
 * after a PAUSE, before a short sleep; X86_RDSEED_NAPS sleeps (doubling from
 * X86_RDSEED_NAP_NS) before read() returns 0 and the framework's own dry wait takes over.
 */
#define X86_RDSEED_TRIES 64
#define X86_RDSEED_NAPS CPU_WORDS_NAPS
#define X86_RDSEED_NAP_NS CPU_WORDS_NAP_NS
/*
 * Stuck output (an all-zero or all-ones word, a word equal to the one before it) discards
 * everything one read() call has read so far; this many discards in one call, or a discard
 * in this many calls in a row, and read() fails with -EIO: the framework logs why, closes,
 * and re-opens after its back-off instead of letting the source spin (cpu_words.h).
 */
#define X86_STUCK_DISCARDS CPU_WORDS_STUCK_DISCARDS
#define X86_STUCK_CALLS CPU_WORDS_STUCK_CALLS

/* Register values of one CPUID leaf. */
struct x86_rand_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/*
 * CPUID leaf, sub-leaf into *r: the real instruction, alone in x86_rand_cpuid.c. A test
 * that defines its own is linked with it and the real one stays out (no writable pointer).
 */
void x86_rand_cpuid(uint32_t leaf, uint32_t subleaf, struct x86_rand_cpuid_regs *r);
/*
 * One 64-bit RDRAND or RDSEED into *v: true when the CPU set CF (a value was delivered).
 * Only the 64-bit forms: Zen 5's RDSEED returns 0 with CF=1 in the 16- and 32-bit forms
 * (CVE-2025-62626). The real instruction alone in x86_rand_insn.c (a link-time seam, with
 * x86_rand_pause()).
 */
bool x86_rand_step(enum x86_rand_insn insn, uint64_t *v);
/* PAUSE, between RDSEED retries. */
void x86_rand_pause(void);

/* The kernel's flags in /proc/cpuinfo ("rdrand", "rdseed"). */
#define X86_RAND_CPUINFO "/proc/cpuinfo"

/*
 * Can insn be used here? 0, or -ENODEV with why ("no RDSEED on this CPU", "the kernel
 * disabled RDRAND on this CPU (no 'rdrand' in /proc/cpuinfo)"); -errno with why when
 * /proc/cpuinfo cannot be read.
 */
int x86_rand_detect(enum x86_rand_insn insn, char *why, size_t len);

/* The drivers' probe, init, read, readv and fini, for insn. */
int x86_rand_init(struct source *src, enum x86_rand_insn insn, char *why, size_t len);
ssize_t x86_rand_readv(struct source *src, const struct iovec *iov, int cnt);
ssize_t x86_rand_read(struct source *src, void *buf, size_t max);
void x86_rand_fini(struct source *src);

#endif
