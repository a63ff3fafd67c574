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
 * Reading, with the loop rdseed uses (cpu_words.c): a failed instruction (Z set) is
 * retried a bounded number of times, then short sleeps, then read() returns 0 and the
 * framework waits; every word is checked before use, and an all-zero word, an all-ones
 * word or one equal to the word before is stuck output: the whole of what the call read
 * is wiped, never delivered.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/cpu_words.h"
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

static int rndr_probe(struct source *src, char *why, size_t len)
{
	enum rndr_insn insn;

	return choose(src, &insn, why, len);
}

static bool step(const struct cpu_words *cw, uint64_t *w)
{
	return rndr_step((enum rndr_insn)cw->which, w);
}

static const struct cpu_words_insn insn_rndrrs = {
	.name = "RNDRRS",
	.tries = RNDR_RNDRRS_TRIES,
	.step = step,
};
static const struct cpu_words_insn insn_rndr = {
	.name = "RNDR",
	.tries = RNDR_RNDR_TRIES,
	.step = step,
};

static int rndr_init(struct source *src, char *why, size_t len)
{
	enum rndr_insn insn;
	struct cpu_words *cw;
	int r = choose(src, &insn, why, len);

	if (r < 0)
		return r;
	cw = calloc(1, sizeof(*cw));
	if (!cw) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	cpu_words_init(cw, src, insn == RNDR_RNDRRS ? &insn_rndrrs : &insn_rndr, insn, "nzcv-fail",
		       "dry");
	source_set_priv(src, cw);
	return 0;
}

static void rndr_fini(struct source *src)
{
	struct cpu_words *cw = source_priv(src);

	if (!cw)
		return;
	wipe(cw, sizeof(*cw));
	free(cw);
	source_set_priv(src, NULL);
}

static ssize_t rndr_readv(struct source *src, const struct iovec *iov, int cnt)
{
	return cpu_words_readv(src, source_priv(src), iov, cnt);
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
