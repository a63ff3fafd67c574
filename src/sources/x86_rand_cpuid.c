// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPUID for the rdseed and rdrand sources. Alone in its object file on purpose: a test that
 * defines x86_rand_cpuid() itself (to hide RDSEED, say) is linked with its own and this one
 * is never pulled from the library, while the real instructions (x86_rand_insn.c) stay.
 */
#include "config.h"

#include "sources/x86_rand.h"

#if (defined(ENABLE_SOURCE_RDSEED) || defined(ENABLE_SOURCE_RDRAND)) && defined(__x86_64__)
#include <cpuid.h>

void x86_rand_cpuid(uint32_t leaf, uint32_t subleaf, struct x86_rand_cpuid_regs *r)
{
	__cpuid_count(leaf, subleaf, r->eax, r->ebx, r->ecx, r->edx);
}
#endif
