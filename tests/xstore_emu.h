/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only emulation of the VIA PadLock `xstore` (0F A7 C0) and `rep xstore`
 * (F3 0F A7 C0) instructions: on a CPU without them they raise SIGILL; the handler decodes
 * the faulting instruction, does what the hardware would (store to [EDI/RDI] and advance
 * it, count down ECX/RCX for rep, EAX = MSR 0x110B low dword with the byte count), and
 * resumes after it. So the driver's real inline assembly runs in the tests. x86 only.
 */
#ifndef RNGD_XSTORE_EMU_H
#define RNGD_XSTORE_EMU_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__i386__) || defined(__x86_64__)
#define XEMU_SUPPORTED 1
#else
#define XEMU_SUPPORTED 0
#endif

/* The emulated RNG. Set fields between instructions only (the handler reads them). */
struct xemu {
	/* MSR 0x110B: in msr_fd at offset 0x110B when msr_fd >= 0, else in msr. */
	int msr_fd;
	uint32_t msr;
	uint64_t prng;			/* state of the output generator */
	unsigned int dry;		/* the next N instructions deliver nothing */
	/* "Someone else": before every tamper_every-th instruction, MSR ^= tamper_xor. */
	unsigned int tamper_every;
	uint32_t tamper_xor;
	/* Every filter_fail_every-th instruction reports a string-filter failure (bit 15). */
	unsigned int filter_fail_every;
	/* Output stuck at these 8 bytes. */
	bool stuck;
	uint8_t stuck_bytes[8];
	/*
	 * Marking for the tamper tests: data of an instruction whose status passes the test's
	 * own check ((EAX & good_mask) == good_val, no filter failure) has its top bits
	 * cleared; any other data is all 0xff.
	 */
	bool mark;
	uint32_t good_mask, good_val;
	/* Counted by the handler. */
	uint64_t n_xstore, n_rep, n_bytes, n_bad_insn;
};

extern volatile struct xemu xemu;

/* Reset xemu to a normal enabled RNG (MSR 0x40, no file) and install the handler. 0/-errno. */
int xemu_install(void);
/* Restore the previous SIGILL disposition. */
void xemu_remove(void);
/* The emulated MSR's low dword now. */
uint32_t xemu_msr(void);

#endif
