// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "sources/via.h"
#include "xstore_emu.h"

volatile struct xemu xemu;

#if XEMU_SUPPORTED

#ifdef __x86_64__
#define R_IP REG_RIP
#define R_AX REG_RAX
#define R_CX REG_RCX
#define R_DX REG_RDX
#define R_DI REG_RDI
#else
#define R_IP REG_EIP
#define R_AX REG_EAX
#define R_CX REG_ECX
#define R_DX REG_EDX
#define R_DI REG_EDI
#endif

static struct sigaction old_action;

/* pread/pwrite are async-signal-safe, so the MSR file is fine to use in the handler. */
static uint32_t msr_get(void)
{
	uint64_t v;

	if (xemu.msr_fd >= 0) {
		if (pread(xemu.msr_fd, &v, sizeof(v), VIA_MSR_RNG) != sizeof(v))
			return 0;
		return (uint32_t)v;
	}
	return xemu.msr;
}

static void msr_set(uint32_t lo)
{
	uint64_t v;

	if (xemu.msr_fd >= 0) {
		if (pread(xemu.msr_fd, &v, sizeof(v), VIA_MSR_RNG) != sizeof(v))
			v = 0;
		v = (v & ~(uint64_t)UINT32_MAX) | lo;
		if (pwrite(xemu.msr_fd, &v, sizeof(v), VIA_MSR_RNG) != sizeof(v))
			return;
	} else {
		xemu.msr = lo;
	}
}

/* splitmix64 */
static uint64_t next64(void)
{
	uint64_t z = (xemu.prng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill the 8 bytes of one store. */
static void fill8(uint8_t *p, bool bad)
{
	uint64_t r = next64();

	if (xemu.stuck)
		memcpy(p, (const void *)xemu.stuck_bytes, 8);
	else
		memcpy(p, &r, 8);
	if (xemu.mark)
		for (int i = 0; i < 8; i++)
			p[i] = bad ? 0xff : (p[i] & 0x7f);
}

/* The status of one instruction: tampering by someone else happens before it executes. */
static uint32_t status(bool *bad)
{
	uint64_t n = xemu.n_xstore + xemu.n_rep + 1;	/* this one, from 1 */
	uint32_t lo;

	if (xemu.tamper_every && n % xemu.tamper_every == 0)
		msr_set(msr_get() ^ xemu.tamper_xor);
	lo = msr_get() & ~VIA_COUNT_MASK;
	if (xemu.filter_fail_every && n % xemu.filter_fail_every == 0)
		lo |= VIA_STRFILT_FAIL;
	*bad = (lo & xemu.good_mask) != xemu.good_val || (lo & VIA_STRFILT_FAIL);
	return lo;
}

static void on_sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	const uint8_t *ip = (const uint8_t *)g[R_IP];
	static const unsigned int bps_of[4] = { 8, 4, 2, 1 };
	unsigned int bps = bps_of[g[R_DX] & 3];
	uint8_t *di = (uint8_t *)g[R_DI];
	uint32_t eax;
	bool bad;

	if (ip[0] == 0x0f && ip[1] == 0xa7 && ip[2] == 0xc0) {
		eax = status(&bad);
		xemu.n_xstore++;
		if (xemu.dry) {
			xemu.dry--;
		} else {
			uint8_t tmp[8];

			/* CHUNK_8 stores 8 bytes; the others a 32-bit word (kernel via-rng.c). */
			fill8(tmp, bad);
			memcpy(di, tmp, bps == 8 ? 8 : 4);
			g[R_DI] = (greg_t)(di + bps);
			eax |= bps;
			xemu.n_bytes += bps;
		}
		g[R_IP] += 3;
	} else if (ip[0] == 0xf3 && ip[1] == 0x0f && ip[2] == 0xa7 && ip[3] == 0xc0) {
		unsigned long c = (unsigned long)g[R_CX];

		eax = status(&bad);
		xemu.n_rep++;
		/* A dry RNG ends the emulated rep early, leaving the rest in ECX. */
		while (c > 0 && !xemu.dry) {
			unsigned int adv = c < bps ? (unsigned int)c : bps;

			fill8(di, bad);	/* may write past ECX: up to 7 bytes (OpenBSD) */
			di += adv;
			c -= adv;
			xemu.n_bytes += adv;
		}
		if (xemu.dry)
			xemu.dry--;
		if ((uint8_t *)g[R_DI] != di)
			eax |= bps;
		g[R_DI] = (greg_t)di;
		g[R_CX] = (greg_t)c;
		g[R_IP] += 4;
	} else {
		/* Not ours: let it fault again with the default action. */
		signal(SIGILL, SIG_DFL);
		return;
	}
	if (bad)
		xemu.n_bad_insn++;
	g[R_AX] = (greg_t)eax;
}

int xemu_install(void)
{
	struct sigaction sa;

	memset((void *)&xemu, 0, sizeof(xemu));
	xemu.msr_fd = -1;
	xemu.msr = VIA_RNG_ENABLE;
	xemu.prng = 1;
	xemu.good_mask = VIA_RNG_ENABLE | VIA_RAW_BITS;
	xemu.good_val = VIA_RNG_ENABLE;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigill;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old_action) < 0)
		return -errno;
	return 0;
}

void xemu_remove(void)
{
	sigaction(SIGILL, &old_action, NULL);
}

uint32_t xemu_msr(void)
{
	return msr_get();
}

#else

int xemu_install(void)
{
	return -ENOTSUP;
}

void xemu_remove(void)
{
}

uint32_t xemu_msr(void)
{
	return 0;
}

#endif
