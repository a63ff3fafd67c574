/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VIA / Centaur / Zhaoxin PadLock RNG source (src/sources/via.c): its descriptor, the
 * layout of MSR 0x110B as the driver uses it, and its CPUID (a link-time test seam).
 */
#ifndef RNGD_SOURCES_VIA_H
#define RNGD_SOURCES_VIA_H

#include <stdint.h>

#include "source.h"

extern const struct source_ops source_via;

/*
 * MSR 0x110B (MSR_VIA_RNG), low dword; xstore returns this dword in EAX with the count of
 * bytes stored in the low bits. Layout from seed 000 and the kernel's via-rng.c
 * (kernel-interfaces.md §5.3).
 */
#define VIA_MSR_RNG		0x110bu
#define VIA_COUNT_MASK		0x1fu		/* 4:0 bytes stored (read-only) */
#define VIA_RNG_ENABLE		(1u << 6)
#define VIA_NOISE_SHIFT		8		/* 9:8 noise source: 00 A, 01 B, 11 both */
#define VIA_NOISE_MASK		(3u << VIA_NOISE_SHIFT)
#define VIA_DCBIAS_SHIFT	10		/* 12:10 DC bias */
#define VIA_DCBIAS_MASK		(7u << VIA_DCBIAS_SHIFT)
#define VIA_RAW_BITS		(1u << 13)
#define VIA_STRFILT_ENABLE	(1u << 14)
#define VIA_STRFILT_FAIL	(1u << 15)	/* status */
#define VIA_FLTLEN_SHIFT	16		/* 22:16 string filter length */
#define VIA_FLTLEN_MASK		(0x7fu << VIA_FLTLEN_SHIFT)

/* Register values of one CPUID leaf (sub-leaf 0). */
struct via_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/*
 * CPUID leaf (sub-leaf 0) into *r: the real instruction (x86 only, src/sources/via_cpuid.c,
 * alone in its object file). Tests and the emulating benchmark define their own via_cpuid()
 * to pose as any CPU, and the linker then leaves the real one out.
 */
void via_cpuid(uint32_t leaf, struct via_cpuid_regs *r);

#endif
