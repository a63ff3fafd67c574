// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the rdseed and rdrand sources (src/sources/rdseed.c, rdrand.c, x86_rand.c)
 * with CPUID, the instruction step and /proc/cpuinfo faked at link time: detection and its
 * reasons, CF=0 retries and their bound, each stuck pattern rejected, the carry of partial
 * words across buffers, a stop during RDSEED's back-off. The real instructions are tested
 * by tests/x86-rand.sh.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_source.h"
#include "insn_script.h"
#include "sources/x86_rand.h"
#include "util.h"

/* The driver tests need both sources (one compiled out: its stub is tested by x86-rand.sh). */
#if defined(ENABLE_SOURCE_RDSEED) && defined(ENABLE_SOURCE_RDRAND) && defined(__x86_64__)
#define BUILT 1
#else
#define BUILT 0
#endif

/* ---- the CPU: CPUID leaves, the kernel's flags, a script of instruction results ---- */

static struct {
	uint32_t max_leaf;
	bool rdrand, rdseed;
	const char *flags; /* /proc/cpuinfo's flags, NULL: the file cannot be opened */
} cpu;

static bool fail_after_script; /* CF=0 forever once the script is done */
static uint64_t n_steps, n_pauses;

static void reset_cpu(void)
{
	cpu.max_leaf = 0x16;
	cpu.rdrand = cpu.rdseed = true;
	cpu.flags = "fpu vme de rdrand rdseed adx smap";
	insn_script_reset();
	fail_after_script = false;
	n_steps = n_pauses = 0;
}

void x86_rand_cpuid(uint32_t leaf, uint32_t subleaf, struct x86_rand_cpuid_regs *r)
{
	memset(r, 0, sizeof(*r));
	if (leaf == 0)
		r->eax = cpu.max_leaf;
	else if (leaf == 1)
		r->ecx = cpu.rdrand ? 1u << 30 : 0;
	else if (leaf == 7 && subleaf == 0 && cpu.max_leaf >= 7)
		r->ebx = cpu.rdseed ? 1u << 18 : 0;
}

bool x86_rand_step(enum x86_rand_insn insn, uint64_t *v)
{
	n_steps++;
	return insn_script_next(fail_after_script, v);
}

void x86_rand_pause(void)
{
	n_pauses++;
}

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);

/* /proc/cpuinfo, two processors' worth, from a memory file; other paths are opened. */
int __wrap_open(const char *path, int flags, ...)
{
	static char text[4096];
	va_list ap;
	mode_t mode;
	int fd, n;

	va_start(ap, flags);
	mode = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	if (strcmp(path, X86_RAND_CPUINFO) != 0)
		return __real_open(path, flags, mode);
	if (!cpu.flags) {
		errno = EACCES;
		return -1;
	}
	n = snprintf(text, sizeof(text),
		     "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: %s\n"
		     "bugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: %s\n",
		     cpu.flags, cpu.flags);
	fd = memfd_create("cpuinfo", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, (size_t)n), n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* ---- helpers ---- */

static const struct source_ops *ops;
static struct source *src;

static int teardown(void **state)
{
	(void)state;
	if (src && ops->fini)
		ops->fini(src);
	fake_source_free(src);
	src = NULL;
	reset_cpu();
	return 0;
}

static int setup(void **state)
{
	(void)state;
	reset_cpu();
	return 0;
}

/* ---- tests ---- */

static void test_table_entries(void **state)
{
	(void)state;
	assert_string_equal(source_rdseed.name, "rdseed");
	assert_string_equal(source_rdrand.name, "rdrand");
	assert_true(source_rdseed.default_on && source_rdrand.default_on);
	assert_string_equal(source_rdrand.defer_to, "rdseed");
	assert_null(source_rdseed.defer_to);
	/* RDRAND never defaults to more credit than RDSEED. */
	assert_true(source_rdrand.quality <= source_rdseed.quality);
	assert_true(source_rdseed.quality < 1024);
}

#if BUILT
/* Open a source of driver d (init must succeed). */
static void open_src(const struct source_ops *d)
{
	char why[160] = "";

	ops = d;
	src = fake_source_new(d, NULL, NULL);
	assert_int_equal(d->init(src, why, sizeof(why)), 0);
}

static int probe(const struct source_ops *d, char *why, size_t len)
{
	struct source *s = fake_source_new(d, NULL, NULL);
	int r;

	why[0] = '\0';
	r = d->probe(s, why, len);
	fake_source_free(s);
	return r;
}

static uint64_t counter(const char *name)
{
	return fake_source_counter(src, name);
}

static void test_detect_reasons(void **state)
{
	char why[160];

	(void)state;
	assert_int_equal(probe(&source_rdseed, why, sizeof(why)), 0);
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), 0);

	cpu.rdseed = false;
	assert_int_equal(probe(&source_rdseed, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "no RDSEED on this CPU"));
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), 0);

	cpu.rdseed = true;
	cpu.max_leaf = 6; /* no leaf 7: whatever it would say, no RDSEED */
	assert_int_equal(probe(&source_rdseed, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "no RDSEED on this CPU"));

	reset_cpu();
	cpu.rdrand = false;
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "no RDRAND on this CPU"));

	/* The CPU has them; the kernel cleared its flag (bad part, clearcpuid=). */
	reset_cpu();
	cpu.flags = "fpu rdseed smap";
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), -ENODEV);
	assert_string_equal(
		why, "the kernel disabled RDRAND on this CPU (no 'rdrand' in /proc/cpuinfo)");
	assert_int_equal(probe(&source_rdseed, why, sizeof(why)), 0);
	cpu.flags = "fpu rdrand";
	assert_int_equal(probe(&source_rdseed, why, sizeof(why)), -ENODEV);
	assert_string_equal(
		why, "the kernel disabled RDSEED on this CPU (no 'rdseed' in /proc/cpuinfo)");
	/* Whole words only; the flag may end the line. */
	cpu.flags = "xrdrand rdrandx rdseed_x";
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), -ENODEV);
	assert_int_equal(probe(&source_rdseed, why, sizeof(why)), -ENODEV);
	cpu.flags = "fpu rdseed rdrand";
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), 0);
	/*
	 * A long line (a CPU of today has 150 flags): the flags it ends with are read in a
	 * second piece, and "rdseed" is split between the two ("rds" and "eed": the file is
	 * read 512 bytes at a time).
	 */
	{
		static char long_line[1200];
		size_t at = 512 - strlen("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: ") - 3;

		memset(long_line, 'x', sizeof(long_line) - 1);
		for (size_t i = 3; i < at; i += 8)
			long_line[i] = ' ';
		long_line[at - 1] = ' ';
		memcpy(long_line + at, "rdseed ", 7);
		memcpy(long_line + sizeof(long_line) - 8, " rdrand", 7);
		long_line[sizeof(long_line) - 1] = '\0';
		cpu.flags = long_line;
		assert_int_equal(probe(&source_rdseed, why, sizeof(why)), 0);
		assert_int_equal(probe(&source_rdrand, why, sizeof(why)), 0);
		long_line[at + 2] = 'S'; /* "rdSeed": not the flag */
		assert_int_equal(probe(&source_rdseed, why, sizeof(why)), -ENODEV);
	}

	cpu.flags = NULL;
	assert_int_equal(probe(&source_rdrand, why, sizeof(why)), -EACCES);
	assert_non_null(strstr(why, "/proc/cpuinfo"));

	/* init refuses the same way. */
	reset_cpu();
	cpu.rdseed = false;
	src = fake_source_new(&source_rdseed, NULL, NULL);
	ops = &source_rdseed;
	assert_int_equal(source_rdseed.init(src, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "no RDSEED"));
}

static void test_read_and_carry(void **state)
{
	uint8_t buf[2 * 2500 + 3];
	struct iovec iov[3] = {
		{ buf, 2500 },
		{ buf + 2500, 2500 },
		{ buf + 5000, 3 },
	};

	(void)state;
	open_src(&source_rdrand);
	/* Buffers that are not multiples of 8: the rest of a word goes to the next one. */
	assert_int_equal(source_rdrand.readv(src, iov, 3), (ssize_t)sizeof(buf));
	insn_expect_good(buf, sizeof(buf), 0);
	assert_int_equal(source_rdrand.read(src, buf, 13), 13);
	{
		/* 5003 bytes were 625 words and 3 bytes of word 625: its other 5 come next. */
		uint64_t w625 = insn_good_word(625), w626 = insn_good_word(626);

		assert_memory_equal(buf, (uint8_t *)&w625 + 3, 5);
		assert_memory_equal(buf + 5, &w626, 8);
	}
	assert_int_equal(counter("cf0"), 0);
	assert_int_equal(n_pauses, 0);
}

static void test_rdrand_cf0_retried(void **state)
{
	uint8_t buf[64];

	(void)state;
	open_src(&source_rdrand);
	insn_push_fails(X86_RDRAND_TRIES - 1); /* the 10th try succeeds */
	assert_int_equal(source_rdrand.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	insn_expect_good(buf, sizeof(buf), 0);
	assert_int_equal(counter("cf0"), X86_RDRAND_TRIES - 1);
	assert_int_equal(counter("cf0-gave-up"), 0);
	assert_int_equal(n_pauses, 0); /* RDRAND retries back to back */
}

static void test_rdrand_cf0_bound(void **state)
{
	uint8_t buf[64];

	(void)state;
	open_src(&source_rdrand);
	insn_push_fails(X86_RDRAND_TRIES);
	assert_int_equal(source_rdrand.read(src, buf, sizeof(buf)), -EIO);
	assert_int_equal(n_steps, X86_RDRAND_TRIES); /* no more than the bound */
	assert_int_equal(counter("cf0"), X86_RDRAND_TRIES);
	assert_int_equal(counter("cf0-gave-up"), 1);
	assert_non_null(strstr(fake_source_read_why(src), "CF=0 10 times in a row"));
	assert_int_equal(fake_source_slept_ns(src), 0);

	/* With words read before the failures: those are delivered, the error comes later. */
	reset_cpu();
	insn_push(true, insn_good_word(0));
	insn_push(true, insn_good_word(1));
	insn_push_fails(X86_RDRAND_TRIES);
	assert_int_equal(source_rdrand.read(src, buf, sizeof(buf)), 16);
	insn_expect_good(buf, 16, 0);
}

static void test_rdseed_dry(void **state)
{
	uint8_t buf[64];
	uint64_t naps = 0;

	(void)state;
	open_src(&source_rdseed);
	fail_after_script = true;
	/* Retried with PAUSE, then short sleeps, then 0: the framework's dry wait. */
	for (unsigned int i = 0; i < X86_RDSEED_NAPS; i++)
		naps += X86_RDSEED_NAP_NS << i;
	assert_int_equal(source_rdseed.read(src, buf, sizeof(buf)), 0);
	assert_int_equal(fake_source_slept_ns(src), naps);
	assert_int_equal(counter("dry"), X86_RDSEED_NAPS + 1);
	assert_int_equal(counter("cf0"), n_steps);
	assert_int_equal(n_steps, X86_RDSEED_TRIES * (X86_RDSEED_NAPS + 1));
	assert_int_equal(n_pauses, n_steps);
}

static void test_rdseed_recovers(void **state)
{
	uint8_t buf[24];

	(void)state;
	open_src(&source_rdseed);
	insn_push_fails(X86_RDSEED_TRIES + 5); /* one nap, then it comes back */
	assert_int_equal(source_rdseed.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	insn_expect_good(buf, sizeof(buf), 0);
	assert_int_equal(counter("cf0"), X86_RDSEED_TRIES + 5);
	assert_int_equal(counter("dry"), 1);
	assert_int_equal(fake_source_slept_ns(src), X86_RDSEED_NAP_NS);
}

static void test_rdseed_stop_during_nap(void **state)
{
	uint8_t buf[24];

	(void)state;
	open_src(&source_rdseed);
	insn_push_fails(X86_RDSEED_TRIES);
	fake_source_stop(src);
	assert_int_equal(source_rdseed.read(src, buf, sizeof(buf)), -EINTR);
}

/* One stuck word among good ones: what was read before it is wiped, never delivered. */
static void stuck_once(uint64_t bad, const char *name)
{
	uint8_t buf[40];

	open_src(&source_rdrand);
	insn_push(true, 0x1111111111111111ULL);
	insn_push(true, 0x2222222222222222ULL);
	insn_push(true, bad);
	assert_int_equal(source_rdrand.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	insn_expect_good(buf, sizeof(buf), 0); /* only words after the stuck one */
	assert_int_equal(counter(name), 1);
	teardown(NULL);
}

static void test_stuck_patterns(void **state)
{
	(void)state;
	stuck_once(0, "stuck-zero");
	stuck_once(UINT64_MAX, "stuck-ones");
	stuck_once(0x2222222222222222ULL, "stuck-repeat");
}

static void test_stuck_repeat_across_calls(void **state)
{
	uint8_t buf[8];

	(void)state;
	open_src(&source_rdseed);
	insn_push(true, 0x123456789abcdef0ULL);
	insn_push(true, 0x123456789abcdef0ULL);
	assert_int_equal(source_rdseed.read(src, buf, 8), 8);
	assert_int_equal(source_rdseed.read(src, buf, 8), 8);
	insn_expect_good(buf, 8, 0);
	assert_int_equal(counter("stuck-repeat"), 1);
}

static void test_stuck_persistent_fails(void **state)
{
	uint8_t buf[64];

	(void)state;
	/* The AMD bug: ~0 with CF=1, every time. */
	memset(buf, 0x5a, sizeof(buf));
	open_src(&source_rdrand);
	for (int i = 0; i < INSN_SCRIPT_MAX; i++)
		insn_push(true, UINT64_MAX);
	assert_int_equal(source_rdrand.read(src, buf, sizeof(buf)), -EIO);
	assert_int_equal(counter("stuck-ones"), X86_STUCK_DISCARDS);
	assert_int_equal(n_steps, X86_STUCK_DISCARDS);
	assert_non_null(
		strstr(fake_source_read_why(src), "RDRAND output stuck (an all-ones word)"));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_not_equal(buf[i], 0xff); /* none of it reached the buffer */
}

static void test_stuck_in_calls_in_a_row(void **state)
{
	uint8_t buf[16];

	(void)state;
	open_src(&source_rdseed);
	/* One zero word per call: each call delivers good words, until X86_STUCK_CALLS. */
	for (int c = 1; c <= X86_STUCK_CALLS; c++) {
		insn_script_clear();
		insn_push(true, 0);
		if (c < X86_STUCK_CALLS) {
			assert_int_equal(source_rdseed.read(src, buf, sizeof(buf)), 16);
		} else {
			assert_int_equal(source_rdseed.read(src, buf, sizeof(buf)), -EIO);
			assert_non_null(strstr(fake_source_read_why(src), "in 4 reads in a row"));
		}
	}
	assert_int_equal(counter("stuck-zero"), X86_STUCK_CALLS);
	/* A clean call resets the run. */
	teardown(NULL);
	open_src(&source_rdseed);
	for (int c = 0; c < 2 * X86_STUCK_CALLS; c++) {
		insn_script_clear();
		if (c % 2 == 0)
			insn_push(true, 0);
		assert_int_equal(source_rdseed.read(src, buf, sizeof(buf)), 16);
	}
}

#endif /* BUILT */

static void test_stub(void **state)
{
	(void)state;
	/* Nothing to test here when compiled out: the stubs' probes say so. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table_entries, setup, teardown),
#if BUILT
		cmocka_unit_test_setup_teardown(test_detect_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_and_carry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdrand_cf0_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdrand_cf0_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdseed_dry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdseed_recovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rdseed_stop_during_nap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_repeat_across_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_persistent_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_in_calls_in_a_row, setup, teardown),
#endif
		cmocka_unit_test_setup_teardown(test_stub, setup, teardown),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	if (!failed && !BUILT) {
		printf("SKIP: rdseed and rdrand sources not compiled in (x86-64 only, or "
		       "configured with --disable-source-rdseed/--disable-source-rdrand)\n");
		return 77;
	}
	return failed;
}
