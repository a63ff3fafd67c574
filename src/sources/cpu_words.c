// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CPU instruction sources' read loop (cpu_words.h): nothing is delivered that the
 * instruction did not vouch for, nor what looks stuck.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "sources/cpu_words.h"
#include "util.h"

/* What one call saw, added to the counters once at its end. */
struct tally {
	uint64_t fail, gave_up, zero, ones, repeat;
};

void cpu_words_init(struct cpu_words *cw, struct source *src, const struct cpu_words_insn *insn,
		    int which, const char *fail_name, const char *gave_up_name)
{
	memset(cw, 0, sizeof(*cw));
	cw->insn = insn;
	cw->which = which;
	cw->c_fail = source_counter(src, fail_name);
	cw->c_gave_up = source_counter(src, gave_up_name);
	cw->c_zero = source_counter(src, "stuck-zero");
	cw->c_ones = source_counter(src, "stuck-ones");
	cw->c_repeat = source_counter(src, "stuck-repeat");
}

/* One word after the bounded retries: true, or false when the instruction kept failing. */
static bool get_word(struct cpu_words *cw, uint64_t *w, struct tally *t)
{
	for (unsigned int i = 0; i < cw->insn->tries; i++) {
		if (cw->insn->step(cw, w))
			return true;
		t->fail++;
		if (cw->insn->between)
			cw->insn->between();
	}
	wipe(w, sizeof(*w));
	t->gave_up++;
	return false;
}

/* Whether w is stuck output (counted); w becomes the word before the next. */
static bool stuck(struct cpu_words *cw, uint64_t w, struct tally *t)
{
	bool repeat = cw->have_last && w == cw->last;

	cw->last = w;
	cw->have_last = true;
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

static void add_tally(struct source *src, const struct cpu_words *cw, const struct tally *t)
{
	if (t->fail)
		source_counter_add(src, cw->c_fail, t->fail);
	if (t->gave_up)
		source_counter_add(src, cw->c_gave_up, t->gave_up);
	if (t->zero)
		source_counter_add(src, cw->c_zero, t->zero);
	if (t->ones)
		source_counter_add(src, cw->c_ones, t->ones);
	if (t->repeat)
		source_counter_add(src, cw->c_repeat, t->repeat);
}

ssize_t cpu_words_readv(struct source *src, struct cpu_words *cw, const struct iovec *iov, int cnt)
{
	const char *name = cw->insn->name;
	struct tally t = { 0 };
	uint64_t nap = CPU_WORDS_NAP_NS;
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
		if (cw->carry_n == 0) {
			if (!get_word(cw, &w, &t)) {
				if (got > 0)
					break;
				if (cw->insn->gave_up_error) {
					source_read_why(src, "%s", cw->insn->gave_up_error);
					ret = -EIO;
					goto out;
				}
				if (naps++ == CPU_WORDS_NAPS) {
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
			if (stuck(cw, w, &t)) {
				wipe(&w, sizeof(w));
				wipe_iov(iov, cnt, got);
				got = 0;
				i = 0;
				off = 0;
				if (++discards == CPU_WORDS_STUCK_DISCARDS) {
					source_read_why(src,
							"%s output stuck (%s) %d times in one read",
							name,
							t.zero	 ? "an all-zero word"
							: t.ones ? "an all-ones word"
								 : "a word repeated",
							CPU_WORDS_STUCK_DISCARDS);
					ret = -EIO;
					goto out;
				}
				continue;
			}
			memcpy(cw->carry, &w, sizeof(w));
			wipe(&w, sizeof(w));
			cw->carry_n = sizeof(w);
		}
		k = MIN(cw->carry_n, iov[i].iov_len - off);
		memcpy(dst + off, cw->carry + sizeof(cw->carry) - cw->carry_n, k);
		wipe(cw->carry + sizeof(cw->carry) - cw->carry_n, k);
		cw->carry_n -= k;
		off += k;
		got += k;
	}
	if (discards > 0 && ++cw->stuck_calls == CPU_WORDS_STUCK_CALLS) {
		wipe_iov(iov, cnt, got);
		source_read_why(src, "%s output stuck in %d reads in a row", name,
				CPU_WORDS_STUCK_CALLS);
		ret = -EIO;
		goto out;
	}
	if (discards == 0)
		cw->stuck_calls = 0;
	ret = (ssize_t)got;
out:
	if (ret <= 0) {
		/* Nothing of this call is delivered; a re-open starts the checks anew. */
		wipe(cw->carry, sizeof(cw->carry));
		cw->carry_n = 0;
	}
	add_tally(src, cw, &t);
	return ret;
}
