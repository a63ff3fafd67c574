// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The RDRAND and RDSEED instructions for the rdseed and rdrand sources, alone in their
 * object file so that a unit test can define x86_rand_step() and x86_rand_pause() itself
 * (CF=0, stuck values) and the real ones are then left out at link time.
 */
#include "config.h"

#include "sources/x86_rand.h"

#if (defined(ENABLE_SOURCE_RDSEED) || defined(ENABLE_SOURCE_RDRAND)) && defined(__x86_64__)

/*
 * The 64-bit forms only (REX.W 0F C7 /6 and /7): Zen 5's RDSEED returns 0 with CF=1 in its
 * 16- and 32-bit forms (CVE-2025-62626). Written as bytes (rax) so that no assembler support
 * for the mnemonics is needed: 48 0F C7 F0 is rdrand %rax, 48 0F C7 F8 rdseed %rax.
 */
bool x86_rand_step(enum x86_rand_insn insn, uint64_t *v)
{
	uint64_t r;
	uint8_t ok;

	if (insn == X86_RDSEED)
		__asm__ __volatile__(".byte 0x48,0x0f,0xc7,0xf8; setc %1"
				     : "=a"(r), "=qm"(ok)
				     :
				     : "cc");
	else
		__asm__ __volatile__(".byte 0x48,0x0f,0xc7,0xf0; setc %1"
				     : "=a"(r), "=qm"(ok)
				     :
				     : "cc");
	*v = r;
	return ok;
}

void x86_rand_pause(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}
#endif
