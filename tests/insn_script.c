// SPDX-License-Identifier: GPL-2.0-or-later
/* A scripted random-number instruction for the CPU sources' unit tests (insn_script.h). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "insn_script.h"
#include "util.h"

struct step {
	bool ok;
	uint64_t v;
};

static struct step script[INSN_SCRIPT_MAX];
static size_t n_script, at_script;
static uint64_t next_good;

uint64_t insn_good_word(uint64_t i)
{
	uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void insn_script_reset(void)
{
	insn_script_clear();
	next_good = 0;
}

void insn_script_clear(void)
{
	n_script = at_script = 0;
}

void insn_push(bool ok, uint64_t v)
{
	assert_true(n_script < INSN_SCRIPT_MAX);
	script[n_script++] = (struct step){ ok, v };
}

void insn_push_fails(unsigned int n)
{
	while (n--)
		insn_push(false, 0);
}

bool insn_script_next(bool failing, uint64_t *v)
{
	if (at_script < n_script) {
		*v = script[at_script].v;
		return script[at_script++].ok;
	}
	if (failing) {
		*v = 0; /* a failed instruction's value: the source must never use it */
		return false;
	}
	*v = insn_good_word(next_good++);
	return true;
}

void insn_expect_good(const uint8_t *buf, size_t n, uint64_t first)
{
	for (size_t off = 0; off < n; off += 8) {
		uint64_t w = insn_good_word(first + off / 8);

		assert_memory_equal(buf + off, &w, MIN(8, n - off));
	}
}
