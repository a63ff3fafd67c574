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
 * block read still goes through the framework's health tests and FIPS gate.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/x86_rand.h"
#include "util.h"

#if (defined(ENABLE_SOURCE_RDSEED) || defined(ENABLE_SOURCE_RDRAND)) && defined(__x86_64__)

#define RDRAND_BIT (1u << 30) /* CPUID.01H:ECX */
#define RDSEED_BIT (1u << 18) /* CPUID.(EAX=07H,ECX=0):EBX */

static const char *insn_name(enum x86_rand_insn insn)
{
	return insn == X86_RDSEED ? "RDSEED" : "RDRAND";
}

/* 1 when the first "flags" line of /proc/cpuinfo names flag, 0 when not, or -errno. */
static int kernel_flag(const char *flag)
{
	FILE *f = fopen(X86_RAND_CPUINFO, "re");
	size_t n = 0, fl = strlen(flag);
	char *line = NULL;
	int r = -ENOENT; /* no flags line at all */

	if (!f)
		return -errno;
	while (getline(&line, &n, f) >= 0) {
		char *p;

		if (strncmp(line, "flags", 5) != 0 || !(p = strchr(line, ':')))
			continue;
		for (r = 0; !r && (p = strstr(p, flag));) {
			char after = p[fl];

			r = (p[-1] == ' ' || p[-1] == ':') &&
			    (after == ' ' || after == '\n' || after == '\0');
			p += fl;
		}
		break;
	}
	free(line);
	fclose(f);
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

struct x86_rand {
	enum x86_rand_insn insn;
	uint64_t last; /* the last word read, for the repeat check */
	bool have_last;
	uint8_t carry[8]; /* the rest of the last word, delivered by the next call */
	size_t carry_n;
	unsigned int stuck_calls; /* calls in a row that discarded stuck output */
	int c_cf0, c_gave_up, c_zero, c_ones, c_repeat;
};

int x86_rand_init(struct source *src, enum x86_rand_insn insn, char *why, size_t len)
{
	struct x86_rand *x;
	int r = x86_rand_detect(insn, why, len);

	if (r < 0)
		return r;
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	x->insn = insn;
	x->c_cf0 = source_counter(src, "cf0");
	x->c_gave_up = source_counter(src, insn == X86_RDSEED ? "dry" : "cf0-gave-up");
	x->c_zero = source_counter(src, "stuck-zero");
	x->c_ones = source_counter(src, "stuck-ones");
	x->c_repeat = source_counter(src, "stuck-repeat");
	source_set_priv(src, x);
	return 0;
}

void x86_rand_fini(struct source *src)
{
	struct x86_rand *x = source_priv(src);

	if (!x)
		return;
	wipe(x, sizeof(*x));
	free(x);
	source_set_priv(src, NULL);
}

/* What one call saw, added to the counters once at its end. */
struct tally {
	uint64_t cf0, gave_up, zero, ones, repeat;
};

/* One word after the bounded retries: true, or false when the instruction kept CF=0. */
static bool get_word(struct x86_rand *x, uint64_t *w, struct tally *t)
{
	unsigned int tries = x->insn == X86_RDSEED ? X86_RDSEED_TRIES : X86_RDRAND_TRIES;

	for (unsigned int i = 0; i < tries; i++) {
		if (x86_rand_step(x->insn, w))
			return true;
		t->cf0++;
		if (x->insn == X86_RDSEED)
			x86_rand_pause();
	}
	t->gave_up++;
	return false;
}

/* Whether w is stuck output (counted); w becomes the word before the next. */
static bool stuck(struct x86_rand *x, uint64_t w, struct tally *t)
{
	bool repeat = x->have_last && w == x->last;

	x->last = w;
	x->have_last = true;
	if (w == 0)
		t->zero++;
	else if (w == UINT64_MAX)
		t->ones++;
	else if (repeat)
		t->repeat++;
	else
		return false;
	return true;
}

static void wipe_iov(const struct iovec *iov, int cnt, size_t n)
{
	for (int i = 0; i < cnt && n > 0; i++) {
		size_t k = MIN(n, iov[i].iov_len);

		wipe(iov[i].iov_base, k);
		n -= k;
	}
}

static void add_tally(struct source *src, const struct x86_rand *x, const struct tally *t)
{
	if (t->cf0)
		source_counter_add(src, x->c_cf0, t->cf0);
	if (t->gave_up)
		source_counter_add(src, x->c_gave_up, t->gave_up);
	if (t->zero)
		source_counter_add(src, x->c_zero, t->zero);
	if (t->ones)
		source_counter_add(src, x->c_ones, t->ones);
	if (t->repeat)
		source_counter_add(src, x->c_repeat, t->repeat);
}

ssize_t x86_rand_readv(struct source *src, const struct iovec *iov, int cnt)
{
	struct x86_rand *x = source_priv(src);
	struct tally t = { 0 };
	uint64_t nap = X86_RDSEED_NAP_NS;
	unsigned int naps = 0, discards = 0;
	size_t got = 0, off = 0;
	ssize_t ret;
	int i = 0;

	while (i < cnt) {
		uint8_t *dst = iov[i].iov_base;
		size_t k;
		uint64_t w;

		if (off == iov[i].iov_len) {
			i++;
			off = 0;
			continue;
		}
		if (x->carry_n == 0) {
			if (!get_word(x, &w, &t)) {
				if (got > 0)
					break;
				if (x->insn == X86_RDRAND) {
					source_read_why(src,
							"RDRAND kept CF=0 %d times in a row "
							"(a hardware problem, says Intel)",
							X86_RDRAND_TRIES);
					ret = -EIO;
					goto out;
				}
				if (naps++ == X86_RDSEED_NAPS) {
					ret = 0; /* dry: the framework waits, then reads again */
					goto out;
				}
				if (source_sleep(src, nap) < 0) {
					ret = -EINTR;
					goto out;
				}
				nap *= 2;
				continue;
			}
			if (stuck(x, w, &t)) {
				wipe(&w, sizeof(w));
				wipe_iov(iov, cnt, got);
				got = 0;
				i = 0;
				off = 0;
				if (++discards == X86_STUCK_DISCARDS) {
					source_read_why(src,
							"%s output stuck (%s) %d times in one read",
							insn_name(x->insn),
							t.zero	 ? "an all-zero word"
							: t.ones ? "an all-ones word"
								 : "a word repeated",
							X86_STUCK_DISCARDS);
					ret = -EIO;
					goto out;
				}
				continue;
			}
			memcpy(x->carry, &w, sizeof(w));
			wipe(&w, sizeof(w));
			x->carry_n = sizeof(w);
		}
		k = MIN(x->carry_n, iov[i].iov_len - off);
		memcpy(dst + off, x->carry + sizeof(x->carry) - x->carry_n, k);
		wipe(x->carry + sizeof(x->carry) - x->carry_n, k);
		x->carry_n -= k;
		off += k;
		got += k;
	}
	if (discards > 0 && ++x->stuck_calls == X86_STUCK_CALLS) {
		wipe_iov(iov, cnt, got);
		source_read_why(src, "%s output stuck in %d reads in a row", insn_name(x->insn),
				X86_STUCK_CALLS);
		ret = -EIO;
		goto out;
	}
	if (discards == 0)
		x->stuck_calls = 0;
	ret = (ssize_t)got;
out:
	if (ret <= 0) {
		/* Nothing of this call is delivered; a re-open starts the checks anew. */
		wipe(x->carry, sizeof(x->carry));
		x->carry_n = 0;
	}
	add_tally(src, x, &t);
	return ret;
}

ssize_t x86_rand_read(struct source *src, void *buf, size_t max)
{
	struct iovec iov = { .iov_base = buf, .iov_len = max };

	return x86_rand_readv(src, &iov, 1);
}

#endif
