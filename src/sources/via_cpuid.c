// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPUID for the via source. Alone in its object file on purpose: a test (or the emulating
 * benchmark) that defines via_cpuid() itself is linked with its own, and this one is never
 * pulled from the library (a link-time fake, no writable function pointer).
 */
#include "config.h"

#include "sources/via.h"

#if defined(ENABLE_SOURCE_VIA) && (defined(__i386__) || defined(__x86_64__))
#include <cpuid.h>

void via_cpuid(uint32_t leaf, struct via_cpuid_regs *r)
{
	__cpuid(leaf, r->eax, r->ebx, r->ecx, r->edx);
}
#endif
