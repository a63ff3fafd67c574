// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RDSEED and RDRAND, the part the two sources share: detection, and a read loop that
 * never delivers what the instruction did not vouch for (CF=0) nor what looks stuck.
 *
 * Detection needs the CPUID bit (CPUID.01H:ECX[30] RDRAND, CPUID.(EAX=07H,ECX=0):EBX[18]
 * RDSEED) and the kernel's flag in /proc/cpuinfo: the kernel clears its flag on parts it
 * knows to be bad (AMD family 15h/16h after resume, a failed boot self-test, clearcpuid=)
 * while the instruction still executes, and its judgment wins (kernel-interfaces.md §6).
 *
 * Reading: one 64-bit instruction per word. CF=0 is retried a bounded number of times
 * (RDRAND X86_RDRAND_TRIES back to back, then -EIO, per Intel's guide a hardware problem;
 * RDSEED X86_RDSEED_TRIES with PAUSE, then short sleeps, then 0 so that the framework
 * waits: it may legitimately run dry). Every word is checked before use: all zeros, all
 * ones (AMD's RDRAND returned ~0 with CF=1 after resume) or the same as the word before
 * is stuck output, and the whole of what the call read is wiped, never delivered. A
 * random 64-bit word trips these checks with p ~ 3 * 2^-64: never, in practice. Every
 * block read still goes through the framework's health tests and FIPS gate. The loop is
 * the one rndr uses too (cpu_words.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/cpu_words.h"
#include "sources/x86_rand.h"
#include "util.h"

#if (defined(ENABLE_SOURCE_RDSEED) || defined(ENABLE_SOURCE_RDRAND)) && defined(__x86_64__)

#define RDRAND_BIT (1u << 30) /* CPUID.01H:ECX */
#define RDSEED_BIT (1u << 18) /* CPUID.(EAX=07H,ECX=0):EBX */

static const char *insn_name(enum x86_rand_insn insn)
{
	return insn == X86_RDSEED ? "RDSEED" : "RDRAND";
}

/*
 * 1 when the first "flags" line of /proc/cpuinfo names flag, 0 when not, or -errno.
 *
 * Read a piece at a time and matched a byte at a time, so a word split between two reads is
 * one word: no stdio (its FILE, buffer and getline() line were a kilobyte and a half of the
 * daemon's heap, and its code pages of libc, for one look at one line at start).
 */
static int kernel_flag(const char *flag)
{
	enum { KEY, OTHER_LINE, FLAGS } where = KEY;
	size_t fl = strlen(flag), col = 0, wlen = 0;
	bool key_ok = true, word_ok = true;
	int r = -ENOENT; /* no flags line at all */
	char buf[512];
	ssize_t n;
	int fd = open(X86_RAND_CPUINFO, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	while (r == -ENOENT && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		for (ssize_t i = 0; i < n && r == -ENOENT; i++) {
			char c = buf[i];

			switch (where) {
			case KEY: /* the line's name: "flags", then anything up to ':' */
				if (c == '\n') {
					col = 0;
					key_ok = true;
				} else if (c == ':') {
					where = key_ok && col >= 5 ? FLAGS : OTHER_LINE;
				} else {
					key_ok = key_ok && (col >= 5 || c == "flags"[col]);
					col++;
				}
				break;
			case OTHER_LINE:
				if (c == '\n') {
					where = KEY;
					col = 0;
					key_ok = true;
				}
				break;
			case FLAGS: /* words between spaces; the line's end ends the search */
				if (c == ' ' || c == '\n') {
					if (wlen == fl && word_ok)
						r = 1;
					else if (c == '\n')
						r = 0;
					wlen = 0;
					word_ok = true;
				} else {
					word_ok = word_ok && wlen < fl && c == flag[wlen];
					wlen++;
				}
				break;
			}
		}
	}
	/* The file's end in the middle of the flags line ends its last word. */
	if (r == -ENOENT && where == FLAGS)
		r = wlen == fl && word_ok;
	close(fd);
	return r;
}

int x86_rand_detect(enum x86_rand_insn insn, char *why, size_t len)
{
	const char *flag = insn == X86_RDSEED ? "rdseed" : "rdrand";
	struct x86_rand_cpuid_regs r;
	bool has;
	int k;

	x86_rand_cpuid(0, 0, &r);
	if (insn == X86_RDSEED) {
		uint32_t max = r.eax;

		has = false;
		if (max >= 7) {
			x86_rand_cpuid(7, 0, &r);
			has = r.ebx & RDSEED_BIT;
		}
		if (!has) {
			snprintf(why, len,
				 "no RDSEED on this CPU (CPUID.(EAX=07H,ECX=0):EBX[18] clear)");
			return -ENODEV;
		}
	} else {
		x86_rand_cpuid(1, 0, &r);
		has = r.ecx & RDRAND_BIT;
		if (!has) {
			snprintf(why, len, "no RDRAND on this CPU (CPUID.01H:ECX[30] clear)");
			return -ENODEV;
		}
	}
	k = kernel_flag(flag);
	if (k < 0) {
		snprintf(why, len, "cannot tell whether the kernel trusts %s: %s: %s",
			 insn_name(insn), X86_RAND_CPUINFO,
			 k == -ENOENT ? "no flags line" : strerror(-k));
		return k;
	}
	if (k == 0) {
		snprintf(why, len, "the kernel disabled %s on this CPU (no '%s' in %s)",
			 insn_name(insn), flag, X86_RAND_CPUINFO);
		return -ENODEV;
	}
	return 0;
}

static bool step(const struct cpu_words *cw, uint64_t *w)
{
	return x86_rand_step((enum x86_rand_insn)cw->which, w);
}

_Static_assert(X86_RDRAND_TRIES == 10, "the message below says 10");
static const struct cpu_words_insn insn_rdrand = {
	.name = "RDRAND",
	.tries = X86_RDRAND_TRIES,
	.step = step,
	.gave_up_error = "RDRAND kept CF=0 10 times in a row (a hardware problem, says Intel)",
};
static const struct cpu_words_insn insn_rdseed = {
	.name = "RDSEED",
	.tries = X86_RDSEED_TRIES,
	.step = step,
	.between = x86_rand_pause, /* Intel's guide 5.3.1: retry RDSEED with PAUSE */
};

int x86_rand_init(struct source *src, enum x86_rand_insn insn, char *why, size_t len)
{
	struct cpu_words *cw;
	int r = x86_rand_detect(insn, why, len);

	if (r < 0)
		return r;
	cw = calloc(1, sizeof(*cw));
	if (!cw) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	if (insn == X86_RDSEED)
		cpu_words_init(cw, src, &insn_rdseed, insn, "cf0", "dry");
	else
		cpu_words_init(cw, src, &insn_rdrand, insn, "cf0", "cf0-gave-up");
	source_set_priv(src, cw);
	return 0;
}

void x86_rand_fini(struct source *src)
{
	struct cpu_words *cw = source_priv(src);

	if (!cw)
		return;
	wipe(cw, sizeof(*cw));
	free(cw);
	source_set_priv(src, NULL);
}

ssize_t x86_rand_readv(struct source *src, const struct iovec *iov, int cnt)
{
	return cpu_words_readv(src, source_priv(src), iov, cnt);
}

ssize_t x86_rand_read(struct source *src, void *buf, size_t max)
{
	struct iovec iov = { .iov_base = buf, .iov_len = max };

	return x86_rand_readv(src, &iov, 1);
}

#endif
