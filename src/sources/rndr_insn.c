// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FEAT_RNG detection and the RNDRRS and RNDR instructions for the rndr source, alone in
 * their object file so that a unit test can define rndr_detect() and rndr_step() itself
 * (on any architecture) and these are then left out at link time.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "sources/rndr.h"

#if defined(ENABLE_SOURCE_RNDR) && defined(__aarch64__)
#include <sys/auxv.h>

#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
/* arch/arm64/include/uapi/asm/hwcap.h; older headers lack it. */
#ifndef HWCAP2_RNG
#define HWCAP2_RNG (1UL << 16)
#endif

int rndr_detect(char *why, size_t len)
{
	if (getauxval(AT_HWCAP2) & HWCAP2_RNG)
		return 0;
	snprintf(why, len,
		 "no FEAT_RNG on this CPU (AT_HWCAP2 lacks HWCAP2_RNG; "
		 "no 'rng' in the Features of /proc/cpuinfo)");
	return -ENODEV;
}

/*
 * MRS Xt, RNDRRS is s3_3_c2_c4_1 and RNDR s3_3_c2_c4_0 (op0 3, op1 3, CRn 2, CRm 4, op2 1
 * or 0): the generic system-register names, so that assemblers without FEAT_RNG take them.
 * Success leaves NZCV 0b0000, failure sets it to 0b0100 (Z): "cset ne" is the verdict.
 */
bool rndr_step(enum rndr_insn insn, uint64_t *v)
{
	uint64_t r;
	uint32_t ok;

	if (insn == RNDR_RNDRRS)
		__asm__ __volatile__("mrs %0, s3_3_c2_c4_1\n\tcset %w1, ne"
				     : "=r"(r), "=r"(ok)
				     :
				     : "cc");
	else
		__asm__ __volatile__("mrs %0, s3_3_c2_c4_0\n\tcset %w1, ne"
				     : "=r"(r), "=r"(ok)
				     :
				     : "cc");
	*v = r;
	return ok;
}

#else /* not arm64, or compiled out: rndr.c's stub answers for the latter */

/* The architecture this build is for (the kernel's, uname(), may be wider: i386 on x86_64). */
#if defined(__x86_64__)
#define BUILD_ARCH "x86_64"
#elif defined(__i386__)
#define BUILD_ARCH "i386"
#elif defined(__arm__)
#define BUILD_ARCH "arm"
#elif defined(__s390x__)
#define BUILD_ARCH "s390x"
#elif defined(__powerpc64__)
#define BUILD_ARCH "ppc64"
#elif defined(__riscv) && __riscv_xlen == 64
#define BUILD_ARCH "riscv64"
#else
#define BUILD_ARCH "another architecture"
#endif

int rndr_detect(char *why, size_t len)
{
	snprintf(why, len, "not compiled in for this architecture (arm64 only; this is %s)",
		 BUILD_ARCH);
	return -EOPNOTSUPP;
}

bool rndr_step(enum rndr_insn insn, uint64_t *v)
{
	*v = 0;
	return false;
}
#endif
