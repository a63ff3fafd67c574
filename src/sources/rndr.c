// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * RNDRRS and RNDR (arm64, FEAT_RNG): the CPU's random number instructions, 64 bits per
 * MRS. The Arm ARM (DDI 0487, RNDR and RNDRRS):
 *   RNDR:   "Returns a 64-bit random number which is reseeded from the True Random Number
 *            source at an IMPLEMENTATION DEFINED rate."
 *   RNDRRS: "Returns a 64-bit random number which is reseeded from the True Random Number
 *            source immediately before the read of the random number."
 * and both: "If the instruction cannot return a genuine random number in a reasonable
 * period of time, PSTATE.NZCV is set to 0b0100" (the value is then not to be used).
 *
 * RNDRRS is the seed-grade form and is preferred; RNDR is the fallback, as RDRAND is for
 * RDSEED: with instruction = auto (the default) RNDRRS is used when it delivers at start,
 * else RNDR at RNDR's lower default credit; the administrator can pin either. Detection is
 * the kernel's: AT_HWCAP2 & HWCAP2_RNG (the kernel also hides FEAT_RNG it does not trust).
 *
 * Reading, as x86_rand.c: a failed instruction (Z set) is retried a bounded number of
 * times, then short sleeps, then read() returns 0 and the framework waits; every word is
 * checked before use, and an all-zero word, an all-ones word or one equal to the word
 * before is stuck output: the whole of what the call read is wiped, never delivered.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/rndr.h"
#include "util.h"

/* The schema stays when compiled out, so that a configuration stays valid (as via's). */
static const char *const instruction_choices[] = { "auto", "rndrrs", "rndr", NULL };

static const struct option_spec rndr_options[] = {
	{ .key = "instruction",
	  .type = OPTION_CHOICE,
	  .choices = instruction_choices,
	  .def = "auto",
	  .help = "auto (RNDRRS where it delivers, else RNDR), rndrrs or rndr" },
	{ 0 },
};

#ifdef ENABLE_SOURCE_RNDR

static const char *insn_name(enum rndr_insn insn)
{
	return insn == RNDR_RNDRRS ? "RNDRRS" : "RNDR";
}

/* Whether insn delivers one word in RNDR_PROBE_TRIES tries (the word is wiped). */
static bool delivers(enum rndr_insn insn)
{
	uint64_t w;

	for (int i = 0; i < RNDR_PROBE_TRIES; i++)
		if (rndr_step(insn, &w)) {
			wipe(&w, sizeof(w));
			return true;
		}
	return false;
}

/*
 * Which instruction src uses: 0 with *insn and, in why, a detail for -l ("RNDRRS"), the
 * fallback's quality set; or -errno with why.
 */
static int choose(struct source *src, enum rndr_insn *insn, char *why, size_t len)
{
	const char *want = source_opt_str(src, "instruction");
	int r = rndr_detect(why, len);

	if (r < 0)
		return r;
	if (strcmp(want, "rndr") == 0 || strcmp(want, "rndrrs") == 0) {
		*insn = strcmp(want, "rndr") == 0 ? RNDR_RNDR : RNDR_RNDRRS;
		if (*insn == RNDR_RNDR)
			source_set_quality(src, RNDR_QUALITY_RNDR);
		snprintf(why, len, "%s, as configured", insn_name(*insn));
		return 0;
	}
	if (delivers(RNDR_RNDRRS)) {
		*insn = RNDR_RNDRRS;
		snprintf(why, len, "RNDRRS");
		return 0;
	}
	if (delivers(RNDR_RNDR)) {
		*insn = RNDR_RNDR;
		source_set_quality(src, RNDR_QUALITY_RNDR);
		snprintf(why, len, "RNDR: RNDRRS failed %d times in a row", RNDR_PROBE_TRIES);
		return 0;
	}
	snprintf(why, len, "neither RNDRRS nor RNDR delivered a number in %d tries each",
		 RNDR_PROBE_TRIES);
	return -EIO;
}

struct rndr {
	enum rndr_insn insn;
	uint64_t last; /* the last word read, for the repeat check */
	bool have_last;
	uint8_t carry[8]; /* the rest of the last word, delivered by the next call */
	size_t carry_n;
	unsigned int stuck_calls; /* calls in a row that discarded stuck output */
	int c_fail, c_dry, c_zero, c_ones, c_repeat;
};

static int rndr_probe(struct source *src, char *why, size_t len)
{
	enum rndr_insn insn;

	return choose(src, &insn, why, len);
}

static int rndr_init(struct source *src, char *why, size_t len)
{
	enum rndr_insn insn;
	struct rndr *x;
	int r = choose(src, &insn, why, len);

	if (r < 0)
		return r;
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	x->insn = insn;
	x->c_fail = source_counter(src, "nzcv-fail");
	x->c_dry = source_counter(src, "dry");
	x->c_zero = source_counter(src, "stuck-zero");
	x->c_ones = source_counter(src, "stuck-ones");
	x->c_repeat = source_counter(src, "stuck-repeat");
	source_set_priv(src, x);
	return 0;
}

static void rndr_fini(struct source *src)
{
	struct rndr *x = source_priv(src);

	if (!x)
		return;
	wipe(x, sizeof(*x));
	free(x);
	source_set_priv(src, NULL);
}

/* What one call saw, added to the counters once at its end. */
struct tally {
	uint64_t fail, dry, zero, ones, repeat;
};

/* One word after the bounded retries: true, or false when the instruction kept failing. */
static bool get_word(struct rndr *x, uint64_t *w, struct tally *t)
{
	unsigned int tries = x->insn == RNDR_RNDRRS ? RNDR_RNDRRS_TRIES : RNDR_RNDR_TRIES;

	for (unsigned int i = 0; i < tries; i++) {
		if (rndr_step(x->insn, w))
			return true;
		t->fail++;
	}
	wipe(w, sizeof(*w));
	t->dry++;
	return false;
}

/* Whether w is stuck output (counted); w becomes the word before the next. */
static bool stuck(struct rndr *x, uint64_t w, struct tally *t)
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

static void add_tally(struct source *src, const struct rndr *x, const struct tally *t)
{
	if (t->fail)
		source_counter_add(src, x->c_fail, t->fail);
	if (t->dry)
		source_counter_add(src, x->c_dry, t->dry);
	if (t->zero)
		source_counter_add(src, x->c_zero, t->zero);
	if (t->ones)
		source_counter_add(src, x->c_ones, t->ones);
	if (t->repeat)
		source_counter_add(src, x->c_repeat, t->repeat);
}

static ssize_t rndr_readv(struct source *src, const struct iovec *iov, int cnt)
{
	struct rndr *x = source_priv(src);
	struct tally t = { 0 };
	uint64_t nap = RNDR_NAP_NS;
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
				if (naps++ == RNDR_NAPS) {
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
				if (++discards == RNDR_STUCK_DISCARDS) {
					source_read_why(src,
							"%s output stuck (%s) %d times in one read",
							insn_name(x->insn),
							t.zero	 ? "an all-zero word"
							: t.ones ? "an all-ones word"
								 : "a word repeated",
							RNDR_STUCK_DISCARDS);
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
	if (discards > 0 && ++x->stuck_calls == RNDR_STUCK_CALLS) {
		wipe_iov(iov, cnt, got);
		source_read_why(src, "%s output stuck in %d reads in a row", insn_name(x->insn),
				RNDR_STUCK_CALLS);
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

static ssize_t rndr_read(struct source *src, void *buf, size_t max)
{
	struct iovec iov = { .iov_base = buf, .iov_len = max };

	return rndr_readv(src, &iov, 1);
}

#else /* compiled out (--disable-source-rndr): a stub that says so */

static int rndr_probe(struct source *src, char *why, size_t len)
{
	snprintf(why, len, "not compiled in (configured with --disable-source-rndr)");
	return -EOPNOTSUPP;
}

static int rndr_init(struct source *src, char *why, size_t len)
{
	return rndr_probe(src, why, len);
}

static ssize_t rndr_read(struct source *src, void *buf, size_t max)
{
	return -ENODEV;
}

#define rndr_readv NULL
#define rndr_fini NULL

#endif

/*
 * Quality 256 of 1024 for RNDRRS, 2 for RNDR (RNDR_QUALITY_RNDR). RNDRRS is the output of
 * a DRBG reseeded from the TRNG before every read, but the Arm ARM specifies neither the
 * entropy of a reseed nor a full-entropy output (unlike RDSEED's specification), and rngd
 * cannot check either from the output: a quarter is credited. RNDR is reseeded at an
 * IMPLEMENTATION DEFINED rate, so nothing bounds the DRBG outputs per seed: it is credited
 * like RDRAND, 2 bits per 1024. rngd.conf(5) has the wording and the reasoning.
 */
const struct source_ops source_rndr = {
	.name = "rndr",
	.help = "arm64 RNDRRS/RNDR instructions (FEAT_RNG; RNDRRS preferred)",
	.default_on = true,
	.cpu_rng = true,
	.quality = 256,
	.options = rndr_options,
	.probe = rndr_probe,
	.init = rndr_init,
	.read = rndr_read,
	.readv = rndr_readv,
	.fini = rndr_fini,
};
