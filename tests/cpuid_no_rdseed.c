// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * For tests/rngd-no-rdseed: the real CPUID with RDSEED hidden (CPUID.(EAX=07H,ECX=0):EBX[18]
 * cleared), linked instead of src/sources/x86_rand_cpuid.c. Only the flag is faked: the
 * real RDRAND and RDSEED instructions (x86_rand_insn.c) still execute. tests/x86-rand.sh
 * uses it to show rdrand becoming a default source where RDSEED is absent.
 */
#include "config.h"

#include "sources/x86_rand.h"

#ifdef __x86_64__
#include <cpuid.h>

void x86_rand_cpuid(uint32_t leaf, uint32_t subleaf, struct x86_rand_cpuid_regs *r)
{
	__cpuid_count(leaf, subleaf, r->eax, r->ebx, r->ecx, r->edx);
	if (leaf == 7 && subleaf == 0)
		r->ebx &= ~(1u << 18);
}
#else
void x86_rand_cpuid(uint32_t leaf, uint32_t subleaf, struct x86_rand_cpuid_regs *r)
{
	*r = (struct x86_rand_cpuid_regs){ 0 };
}
#endif
