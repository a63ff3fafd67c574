// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/sources/via.c: detection through the CPUID seam, option checks, MSR
 * configuration against a regular file, and reading with the driver's real xstore inline
 * assembly executed under the SIGILL emulator of tests/xstore_emu.c.
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
#include <unistd.h>

#include <cmocka.h>

#include "fake_source.h"
#include "fips.h"
#include "sources/via.h"
#include "util.h"
#include "xstore_emu.h"

/* ---- pread/pwrite wrappers: count calls, inject one error ---- */

ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);

static int pread_fail, pwrite_fail;	/* errno to fail the next call with */
static unsigned int n_pwrite;
static bool pwrite_drop;	/* pretend to write */

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	if (pread_fail) {
		errno = pread_fail;
		pread_fail = 0;
		return -1;
	}
	return __real_pread(fd, buf, n, off);
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (pwrite_fail) {
		errno = pwrite_fail;
		pwrite_fail = 0;
		return -1;
	}
	n_pwrite++;
	if (pwrite_drop)
		return (ssize_t)n;
	return __real_pwrite(fd, buf, n, off);
}

/* ---- the CPU the driver sees ---- */

static struct {
	char vendor[13];
	uint32_t sig;		/* CPUID 1 EAX */
	uint32_t max_ext;	/* CPUID 0xC0000000 EAX */
	uint32_t feat;		/* CPUID 0xC0000001 EDX */
} cpu;

/* Defined here, it replaces the real one of src/sources/via_cpuid.c at link time. */
void via_cpuid(uint32_t leaf, struct via_cpuid_regs *r)
{
	memset(r, 0, sizeof(*r));
	switch (leaf) {
	case 0:
		r->eax = 1;
		memcpy(&r->ebx, cpu.vendor, 4);
		memcpy(&r->edx, cpu.vendor + 4, 4);
		memcpy(&r->ecx, cpu.vendor + 8, 4);
		break;
	case 1:
		r->eax = cpu.sig;
		break;
	case 0xc0000000:
		r->eax = cpu.max_ext;
		break;
	case 0xc0000001:
		r->edx = cpu.feat;
		break;
	}
}

#define RNG_PRESENT (1u << 2)
#define RNG_ENABLED (1u << 3)

static void set_cpu(const char *vendor, unsigned int family, unsigned int model,
		    unsigned int stepping, uint32_t max_ext, uint32_t feat)
{
	memcpy(cpu.vendor, vendor, 12);
	cpu.vendor[12] = '\0';
	cpu.sig = (family << 8) | ((model & 0xf) << 4) | stepping | ((model >> 4) << 16);
	cpu.max_ext = max_ext;
	cpu.feat = feat;
}

static void nehemiah(unsigned int stepping)
{
	set_cpu("CentaurHauls", 6, 9, stepping, 0xc0000001, RNG_PRESENT | RNG_ENABLED);
}

static void esther(void)
{
	set_cpu("CentaurHauls", 6, 10, 0, 0xc0000002, RNG_PRESENT | RNG_ENABLED);
}

static void nano(void)
{
	set_cpu("CentaurHauls", 6, 15, 2, 0xc0000002, RNG_PRESENT | RNG_ENABLED);
}

static void zhaoxin(void)
{
	set_cpu("  Shanghai  ", 7, 59, 0, 0xc0000001, RNG_PRESENT | RNG_ENABLED);
}

/* ---- the MSR device: a regular file holding MSR 0x110B ---- */

static char msr_path[64];
static int msr_fd = -1;

static void msr_file(uint64_t value)
{
	strcpy(msr_path, "/tmp/test_via_msr.XXXXXX");
	msr_fd = mkstemp(msr_path);
	assert_true(msr_fd >= 0);
	assert_int_equal(__real_pwrite(msr_fd, &value, 8, VIA_MSR_RNG), 8);
}

static uint64_t msr_value(void)
{
	uint64_t v = 0;

	assert_int_equal(__real_pread(msr_fd, &v, 8, VIA_MSR_RNG), 8);
	return v;
}

static int teardown(void **state)
{
	if (msr_fd >= 0) {
		close(msr_fd);
		unlink(msr_path);
		msr_fd = -1;
	}
	if (XEMU_SUPPORTED)
		xemu_remove();
	pread_fail = pwrite_fail = 0;
	pwrite_drop = false;
	return 0;
}

/* A source with opts plus msr-device=<the file> when one exists. */
static struct source *new_source(const char *const *opts)
{
	static char msr_opt[80];
	const char *all[20];
	size_t n = 0;

	for (; opts && opts[n]; n++)
		all[n] = opts[n];
	if (msr_fd >= 0) {
		snprintf(msr_opt, sizeof(msr_opt), "msr-device=%s", msr_path);
		all[n++] = msr_opt;
	} else {
		all[n++] = "msr-device=/nonexistent/msr";
	}
	all[n] = NULL;
	return fake_source_new(&source_via, "via", all);
}

static int probe(const char *const *opts, char *why)
{
	struct source *src = new_source(opts);
	int r;

	why[0] = '\0';
	r = source_via.probe(src, why, 160);
	fake_source_free(src);
	return r;
}

static int check(const char *const *opts, char *why)
{
	struct source *src = new_source(opts);
	int r;

	why[0] = '\0';
	r = source_via.check(src, why, 160);
	fake_source_free(src);
	return r;
}

/* init with opts; returns the source, or NULL with why when init failed (r set). */
static struct source *init(const char *const *opts, int *r, char *why)
{
	struct source *src = new_source(opts);

	why[0] = '\0';
	*r = source_via.init(src, why, 160);
	if (*r < 0) {
		fake_source_free(src);
		return NULL;
	}
	return src;
}

static void done(struct source *src)
{
	source_via.fini(src);
	assert_null(source_priv(src));
	fake_source_free(src);
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * The driver is compiled in only on x86 and when configured (--disable-source-via leaves it
 * out); otherwise it is a stub (test_stub), and the tests of the real driver skip.
 */
#ifdef ENABLE_SOURCE_VIA
#define VIA_BUILT XEMU_SUPPORTED
#define NOT_BUILT_WHY "not compiled in for this architecture"
#else
#define VIA_BUILT 0
#define NOT_BUILT_WHY "not compiled in (configured with --disable-source-via)"
#endif

static void skip_not_built(const char *what)
{
#ifdef ENABLE_SOURCE_VIA
	print_message("%s needs x86 (i386/x86_64); skipped\n", what);
#else
	print_message("via source compiled out (--disable-source-via); skipped\n");
#endif
	skip();
}

#define SKIP_IF_NOT_X86()                                                                   \
	do {                                                                                \
		if (!VIA_BUILT)                                                             \
			skip_not_built("via source");                                       \
	} while (0)

static bool emu(void)
{
	if (!VIA_BUILT)
		return false;
	assert_int_equal(xemu_install(), 0);
	return true;
}

#define SKIP_IF_NO_EMU()                                                                    \
	do {                                                                                \
		if (!emu())                                                                 \
			skip_not_built("xstore emulation");                                 \
	} while (0)

/* ---- detection ---- */

static void test_stub(void **state)
{
	char why[160];
	int r;

	set_cpu("CentaurHauls", 6, 15, 2, 0xc0000002, RNG_PRESENT | RNG_ENABLED);
	r = probe(NULL, why);
	if (VIA_BUILT) {
		assert_int_equal(r, 0);
	} else {
		assert_int_equal(r, -EOPNOTSUPP);
		assert_string_equal(why, NOT_BUILT_WHY);
	}
}

static void test_probe_reasons(void **state)
{
	char why[160];

	SKIP_IF_NOT_X86();

	set_cpu("AuthenticAMD", 26, 17, 0, 0, 0);
	assert_int_equal(probe(NULL, why), -ENODEV);
	assert_string_equal(why, "vendor AuthenticAMD");

	set_cpu("CentaurHauls", 6, 8, 0, 0, 0);
	assert_int_equal(probe(NULL, why), -ENODEV);
	assert_string_equal(why, "no Centaur extended CPUID leaf");

	set_cpu("CentaurHauls", 6, 15, 2, 0xc0000001, 0);
	assert_int_equal(probe(NULL, why), -ENODEV);
	assert_string_equal(why, "PadLock RNG not present");

	set_cpu("CentaurHauls", 6, 15, 2, 0xc0000001, RNG_PRESENT);
	assert_int_equal(probe(NULL, why), -ENODEV);
	assert_string_equal(why, "PadLock RNG present but disabled");

	set_cpu("  Shanghai  ", 7, 59, 0, 0xc0000001, RNG_PRESENT);
	assert_int_equal(probe(NULL, why), -ENODEV);
	assert_string_equal(why, "PadLock RNG present but disabled");

	nano();
	assert_int_equal(probe(NULL, why), 0);
	zhaoxin();
	assert_int_equal(probe(NULL, why), 0);
	esther();
	assert_int_equal(probe(OPTS("noise-source=both", "dc-bias=2"), why), 0);

	/* C3/C7 with the RNG disabled: init enables it through the MSR. */
	set_cpu("CentaurHauls", 6, 9, 8, 0xc0000001, RNG_PRESENT);
	assert_int_equal(probe(NULL, why), 0);
}

static void test_probe_c5xl_stepping0(void **state)
{
	char why[160];

	SKIP_IF_NOT_X86();

	/* Seed 000: the first C5XL has the RNG without saying so in CPUID. */
	set_cpu("CentaurHauls", 6, 9, 0, 0, 0);
	assert_int_equal(probe(NULL, why), 0);
	/* Only that stepping: a later one without the CPUID bits is believed. */
	set_cpu("CentaurHauls", 6, 9, 1, 0, 0);
	assert_int_equal(probe(NULL, why), -ENODEV);
	/* and no other model is guessed at */
	set_cpu("CentaurHauls", 6, 10, 0, 0, 0);
	assert_int_equal(probe(NULL, why), -ENODEV);
}

static void test_probe_refuses_config_needing_msr(void **state)
{
	char why[160];

	SKIP_IF_NOT_X86();

	nano();
	assert_int_equal(probe(OPTS("dc-bias=3"), why), -EOPNOTSUPP);
	assert_string_equal(why, "dc-bias: Nano has no MSR 0x110B to configure");
	assert_int_equal(probe(OPTS("raw-bits=yes"), why), -EOPNOTSUPP);
	assert_string_equal(why, "raw-bits: Nano has no MSR 0x110B to configure");
	assert_int_equal(probe(OPTS("raw-bits=no", "rep=yes", "bytes-per-store=8"), why), 0);
	zhaoxin();
	assert_int_equal(probe(OPTS("string-filter=no"), why), -EOPNOTSUPP);
	assert_string_equal(why, "string-filter: Zhaoxin has no MSR 0x110B to configure");

	/* A single-source C3 stepping asked for both noise sources. */
	nehemiah(5);
	assert_int_equal(probe(OPTS("noise-source=both"), why), -EOPNOTSUPP);
	assert_string_equal(why, "noise-source: C3 Nehemiah stepping 5 has one noise source");
	nehemiah(8);
	assert_int_equal(probe(OPTS("noise-source=both"), why), 0);
}

static void test_check(void **state)
{
	char why[160];

	assert_int_equal(check(NULL, why), 0);
	assert_int_equal(check(OPTS("filter-length=20"), why), -EINVAL);
	assert_string_equal(why, "filter-length needs string-filter=yes");
	assert_int_equal(check(OPTS("string-filter=no", "filter-length=20"), why), -EINVAL);
	assert_int_equal(check(OPTS("string-filter=yes"), why), -EINVAL);
	assert_string_equal(why, "string-filter=yes needs filter-length (8..63)");
	assert_int_equal(check(OPTS("string-filter=yes", "filter-length=20"), why), 0);
	/* OpenBSD and the Zhaoxin driver use rep xstore with one byte per store */
	assert_int_equal(check(OPTS("rep=yes", "bytes-per-store=1"), why), 0);
	assert_int_equal(check(OPTS("rep=yes"), why), 0);
}

static void test_option_table(void **state)
{
	const struct option_spec *o;
	size_t n = 0;

	for (o = source_via.options; o->key; o++, n++) {
		assert_non_null(o->help);
		if (strcmp(o->key, "bytes-per-store") == 0)
			assert_string_equal(o->def, "8");
		if (strcmp(o->key, "dry-delay-us") == 0) {
			assert_string_equal(o->def, "10");
			assert_int_equal(o->min, 1);
			assert_int_equal(o->max, 1000);
		}
		if (strcmp(o->key, "filter-length") == 0) {
			assert_int_equal(o->min, 8);
			assert_int_equal(o->max, 63);
		}
		if (strcmp(o->key, "dc-bias") == 0)
			assert_int_equal(o->max, 7);
	}
	assert_int_equal(n, 9);
	assert_string_equal(source_via.name, "via");
	assert_true(source_via.quality <= 1024);
}

/* ---- MSR configuration ---- */

static void test_msr_apply(void **state)
{
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NOT_X86();

	/* Disabled RNG with raw bits and a string-filter failure left over; high dword kept. */
	nehemiah(8);
	msr_file(0xabcd000000000000ull | VIA_RAW_BITS | VIA_STRFILT_FAIL |
		 (2u << VIA_DCBIAS_SHIFT));
	n_pwrite = 0;
	src = init(OPTS("noise-source=b", "string-filter=yes", "filter-length=33"), &r, why);
	assert_non_null(src);
	assert_int_equal(n_pwrite, 1);
	/* dc-bias untouched: the configuration does not set it */
	assert_true(msr_value() ==
		    (0xabcd000000000000ull | VIA_RNG_ENABLE | (1u << VIA_NOISE_SHIFT) |
		     (2u << VIA_DCBIAS_SHIFT) | VIA_STRFILT_ENABLE | (33u << VIA_FLTLEN_SHIFT)));
	assert_int_equal(fake_source_found_quality(src), -1);
	done(src);

	/* Nothing to change: nothing written. */
	n_pwrite = 0;
	src = init(OPTS("noise-source=b", "string-filter=yes", "filter-length=33"), &r, why);
	assert_non_null(src);
	assert_int_equal(n_pwrite, 0);
	done(src);

	/* raw bits: set in the MSR, and not credited */
	src = init(OPTS("raw-bits=yes", "dc-bias=7", "noise-source=both"), &r, why);
	assert_non_null(src);
	assert_true((msr_value() & (VIA_RAW_BITS | VIA_DCBIAS_MASK | VIA_NOISE_MASK)) ==
		    (VIA_RAW_BITS | VIA_DCBIAS_MASK | VIA_NOISE_MASK));
	assert_int_equal(fake_source_found_quality(src), 0);
	done(src);
}

static void test_msr_errors(void **state)
{
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NOT_X86();

	nehemiah(8);
	/* No msr driver: a configuration needing the MSR fails, the defaults run. */
	src = init(OPTS("dc-bias=1"), &r, why);
	assert_null(src);
	assert_int_equal(r, -ENOENT);
	assert_string_equal(why, "no /nonexistent/msr: load the msr module");
	src = init(NULL, &r, why);
	assert_non_null(src);
	done(src);
	/* ... unless the RNG is disabled and only the MSR can enable it */
	set_cpu("CentaurHauls", 6, 9, 8, 0xc0000001, RNG_PRESENT);
	assert_null(init(NULL, &r, why));
	assert_int_equal(r, -ENOENT);

	nehemiah(8);
	msr_file(0);
	pread_fail = EIO;
	assert_null(init(NULL, &r, why));
	assert_int_equal(r, -EIO);
	assert_non_null(strstr(why, ": no MSR 0x110B on this CPU"));

	pwrite_fail = EPERM;
	assert_null(init(NULL, &r, why));
	assert_int_equal(r, -EPERM);
	assert_non_null(strstr(why, "needs CAP_SYS_RAWIO; writes blocked by lockdown or "
				    "msr.allow_writes=off"));
}

static void test_msr_readback_verified(void **state)
{
	char why[160];
	int r;

	SKIP_IF_NOT_X86();

	/* A write that reports success but does not stick is caught by the read-back. */
	nehemiah(8);
	msr_file(VIA_RNG_ENABLE);
	pwrite_drop = true;
	assert_null(init(OPTS("dc-bias=4"), &r, why));
	assert_int_equal(r, -EIO);
	assert_non_null(strstr(why, "MSR 0x110B did not take the configuration"));
	assert_true(msr_value() == VIA_RNG_ENABLE);
}

/* ---- reading under the emulator ---- */

/* Read exactly n bytes with as many read() calls as needed (bounded). */
static void read_all(struct source *src, uint8_t *buf, size_t n)
{
	size_t got = 0;

	for (int calls = 0; got < n; calls++) {
		ssize_t r = source_via.read(src, buf + got, n - got);

		assert_true(r >= 0);
		got += (size_t)r;
		assert_true(calls < 100000);
	}
}

static void test_read_normal(void **state)
{
	uint8_t buf[FIPS_BLOCK_BYTES];
	struct fips_ctx fips;
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	nano();
	src = init(NULL, &r, why);
	assert_non_null(src);
	assert_int_equal(source_via.read(src, buf, 4), 4);
	fips_init(&fips, buf);
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
	/* one 8-byte xstore per 8 bytes, the last one partly used */
	assert_int_equal(xemu.n_xstore, 1 + (sizeof(buf) + 7) / 8);
	assert_int_equal(xemu.n_rep, 0);
	assert_int_equal(fips_test_block(&fips, buf), 0);
	assert_int_equal(fake_source_counter(src, "config-changed"), 0);
	assert_int_equal(fake_source_slept_ns(src), 0);
	done(src);
}

static void test_read_bytes_per_store(void **state)
{
	static const struct {
		const char *opt;
		unsigned int per_insn;
	} cases[] = { { "bytes-per-store=4", 4 },
		      { "bytes-per-store=2", 2 },
		      { "bytes-per-store=1", 1 } };
	uint8_t buf[1000];

	SKIP_IF_NO_EMU();
	esther();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct source *src;
		char why[160];
		int r;

		xemu.n_xstore = 0;
		src = init(OPTS(cases[i].opt), &r, why);
		assert_non_null(src);
		assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
		assert_int_equal(xemu.n_xstore, sizeof(buf) / cases[i].per_insn);
		done(src);
	}
}

static void test_read_rep(void **state)
{
	uint8_t buf[FIPS_BLOCK_BYTES + 8];
	struct fips_ctx fips;
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	zhaoxin();
	src = init(OPTS("rep=yes"), &r, why);
	assert_non_null(src);
	/* An odd length: the emulated instruction overruns into the spare bytes. */
	memset(buf, 0x55, sizeof(buf));
	assert_int_equal(source_via.read(src, buf, 13), 13);
	assert_int_equal(xemu.n_rep, 1);
	assert_int_equal(buf[13], 0x55);
	fips_init(&fips, buf);
	assert_int_equal(source_via.read(src, buf, FIPS_BLOCK_BYTES), FIPS_BLOCK_BYTES);
	assert_int_equal(xemu.n_rep, 2);
	assert_int_equal(xemu.n_xstore, 0);
	assert_int_equal(fips_test_block(&fips, buf), 0);
	/* bounded: a big read takes several instructions of at most 4096 bytes */
	{
		uint8_t *big = malloc(10000);

		assert_non_null(big);
		assert_int_equal(source_via.read(src, big, 10000), 10000);
		assert_int_equal(xemu.n_rep, 2 + 3);
		free(big);
	}
	done(src);

	/* Fewer bytes per store: still one instruction per buffer. */
	src = init(OPTS("rep=yes", "bytes-per-store=1"), &r, why);
	assert_non_null(src);
	memset(buf, 0x55, sizeof(buf));
	assert_int_equal(source_via.read(src, buf, 101), 101);
	assert_int_equal(xemu.n_rep, 6);
	assert_int_equal(buf[101], 0x55);
	done(src);
}

static void test_read_dry(void **state)
{
	uint8_t buf[64];
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	nano();
	src = init(OPTS("dry-delay-us=25"), &r, why);
	assert_non_null(src);
	xemu.dry = 5;
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(fake_source_counter(src, "dry"), 5);
	assert_int_equal(fake_source_slept_ns(src), 5 * 25000);

	/* A long dry spell: read gives up with what it has (here nothing). */
	xemu.dry = 100000;
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), 0);
	assert_true(fake_source_counter(src, "dry") > 5);

	/* Rep mode: dry too. */
	done(src);
	src = init(OPTS("rep=yes"), &r, why);
	assert_non_null(src);
	xemu.dry = 3;
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(fake_source_counter(src, "dry"), 3);

	/* Stopping cuts the wait short. */
	xemu.dry = 100000;
	fake_source_stop(src);
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), -EINTR);
	done(src);
}

static void test_config_changed_by_someone_else(void **state)
{
	uint8_t buf[256];
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	esther();
	msr_file(VIA_RNG_ENABLE);
	xemu.msr_fd = msr_fd;
	src = init(OPTS("noise-source=both"), &r, why);
	assert_non_null(src);
	xemu.good_mask = VIA_RNG_ENABLE | VIA_RAW_BITS | VIA_NOISE_MASK;
	xemu.good_val = VIA_RNG_ENABLE | VIA_NOISE_MASK;
	xemu.mark = true;
	/* Someone switches raw bits on once, just before the 5th instruction. */
	xemu.tamper_every = 5;
	xemu.tamper_xor = VIA_RAW_BITS;
	assert_int_equal(source_via.read(src, buf, 48), 48);
	xemu.tamper_every = 0;
	assert_int_equal(fake_source_counter(src, "config-changed"), 1);
	assert_int_equal(xemu.n_bad_insn, 1);
	assert_int_equal(xemu.n_xstore, 7);
	/* re-applied */
	assert_true((msr_value() & 0xffffffffu) == (VIA_RNG_ENABLE | VIA_NOISE_MASK));
	for (size_t i = 0; i < 48; i++)
		assert_true(buf[i] < 0x80);
	done(src);
}

/* Tamper with a policed field on every k-th instruction: no mismatched byte gets out. */
static void tamper_run(const char *const *opts, bool with_msr, uint32_t tamper_xor)
{
	static const unsigned int ks[] = { 1, 2, 3, 4, 7, 64 };
	uint8_t *buf = malloc(20000);
	uint64_t changed = 0;

	assert_non_null(buf);
	for (size_t i = 0; i < ARRAY_SIZE(ks); i++) {
		struct source *src;
		char why[160];
		size_t got = 0;
		uint64_t insns;
		int r;

		if (with_msr) {
			msr_file(VIA_RNG_ENABLE);
			xemu.msr_fd = msr_fd;
		} else {
			xemu.msr_fd = -1;
			xemu.msr = VIA_RNG_ENABLE;
		}
		src = init(opts, &r, why);
		assert_non_null(src);
		xemu.mark = true;
		xemu.n_bad_insn = 0;
		xemu.tamper_every = ks[i];
		xemu.tamper_xor = tamper_xor;
		insns = xemu.n_xstore + xemu.n_rep;
		for (int calls = 0; calls < 200 && got < 20000; calls++) {
			ssize_t n = source_via.read(src, buf + got, 20000 - got);

			/* -EIO: a whole call's worth of instructions was discarded */
			if (n == -EIO)
				continue;
			assert_true(n >= 0);
			got += (size_t)n;
		}
		for (size_t j = 0; j < got; j++)
			if (buf[j] >= 0x80)
				fail_msg("k=%u: byte %zu came from a mismatched xstore", ks[i], j);
		changed = fake_source_counter(src, "config-changed");
		insns = xemu.n_xstore + xemu.n_rep - insns;
		if (insns >= ks[i])
			assert_true(xemu.n_bad_insn > 0);
		assert_int_equal(changed, xemu.n_bad_insn);
		if (ks[i] > 1)
			assert_true(got > 0);
		xemu.tamper_every = 0;
		done(src);
		if (with_msr) {
			close(msr_fd);
			unlink(msr_path);
			msr_fd = -1;
		}
	}
	free(buf);
}

static void test_tamper_continuous(void **state)
{
	SKIP_IF_NO_EMU();
	nehemiah(8);
	xemu.good_mask = VIA_RNG_ENABLE | VIA_RAW_BITS | VIA_NOISE_MASK | VIA_DCBIAS_MASK;
	xemu.good_val = VIA_RNG_ENABLE | (1u << VIA_NOISE_SHIFT) | (3u << VIA_DCBIAS_SHIFT);
	tamper_run(OPTS("noise-source=b", "dc-bias=3"), true, VIA_RAW_BITS);
	tamper_run(OPTS("noise-source=b", "dc-bias=3"), true, 1u << VIA_DCBIAS_SHIFT);
	tamper_run(OPTS("noise-source=b", "dc-bias=3", "rep=yes"), true, VIA_NOISE_MASK);
	tamper_run(OPTS("noise-source=b", "dc-bias=3"), true, VIA_RNG_ENABLE);
	/* No MSR (Nano): the tampering is undone only by the next tamper; data discarded. */
	nano();
	xemu.good_mask = VIA_RNG_ENABLE | VIA_RAW_BITS;
	xemu.good_val = VIA_RNG_ENABLE;
	tamper_run(NULL, false, VIA_RAW_BITS);
	tamper_run(OPTS("rep=yes"), false, VIA_RAW_BITS);
}

static void test_filter_failed(void **state)
{
	uint8_t buf[800];
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	nehemiah(3);
	msr_file(VIA_RNG_ENABLE);
	xemu.msr_fd = msr_fd;
	src = init(OPTS("string-filter=yes", "filter-length=16"), &r, why);
	assert_non_null(src);
	xemu.good_mask = VIA_RNG_ENABLE | VIA_STRFILT_ENABLE | VIA_FLTLEN_MASK;
	xemu.good_val = VIA_RNG_ENABLE | VIA_STRFILT_ENABLE | (16u << VIA_FLTLEN_SHIFT);
	xemu.mark = true;
	xemu.filter_fail_every = 4;
	read_all(src, buf, sizeof(buf));
	assert_true(fake_source_counter(src, "filter-failed") > 0);
	assert_int_equal(fake_source_counter(src, "filter-failed"), xemu.n_bad_insn);
	assert_int_equal(fake_source_counter(src, "config-changed"), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_true(buf[i] < 0x80);
	done(src);
}

static void test_stuck_output(void **state)
{
	static const uint8_t stuck[2][8] = {
		{ 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0 },
		{ 0xc3, 0x5a, 0x96, 0x0f, 0xc3, 0x5a, 0x96, 0x0f },
	};
	uint8_t buf[FIPS_BLOCK_BYTES];

	SKIP_IF_NO_EMU();
	nano();
	for (int i = 0; i < 2; i++) {
		struct fips_ctx fips;
		struct source *src;
		char why[160];
		unsigned int res;
		int r;

		src = init(NULL, &r, why);
		assert_non_null(src);
		xemu.stuck = true;
		memcpy((void *)xemu.stuck_bytes, stuck[i], 8);
		assert_int_equal(source_via.read(src, buf, 4), 4);
		fips_init(&fips, buf);
		assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
		res = fips_test_block(&fips, buf);
		assert_true(res != 0);
		/*
		 * The continuous test compares 32-bit words: it catches a stuck value whose
		 * halves are equal; a stuck 64-bit pattern with different halves is caught by
		 * the poker test instead.
		 */
		if (i == 1)
			assert_true(res & FIPS_CONTINUOUS);
		else
			assert_true(res & FIPS_POKER);
		done(src);
	}
}

static void test_single_source_c3_both_refused(void **state)
{
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	nehemiah(7);
	msr_file(VIA_RNG_ENABLE);
	xemu.msr_fd = msr_fd;
	src = init(OPTS("noise-source=both"), &r, why);
	assert_null(src);
	assert_int_equal(r, -EOPNOTSUPP);
	assert_string_equal(why, "noise-source: C3 Nehemiah stepping 7 has one noise source");
	assert_true(msr_value() == VIA_RNG_ENABLE);
	assert_int_equal(xemu.n_xstore, 0);
}

static void test_no_msr_parts(void **state)
{
	void (*const parts[])(void) = { nano, zhaoxin };
	uint8_t buf[100];

	SKIP_IF_NO_EMU();
	msr_file(0);	/* even with a device there, it is not touched */
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		struct source *src;
		char why[160];
		int r;

		parts[i]();
		assert_null(init(OPTS("noise-source=a"), &r, why));
		assert_int_equal(r, -EOPNOTSUPP);
		assert_non_null(strstr(why, "has no MSR 0x110B to configure"));
		n_pwrite = 0;
		src = init(NULL, &r, why);
		assert_non_null(src);
		assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
		assert_int_equal(n_pwrite, 0);
		assert_true(msr_value() == 0);
		done(src);
	}
}

static void test_persistent_mismatch(void **state)
{
	uint8_t buf[64];
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	/* A Nano whose status says raw bits, and no MSR to put it right. */
	nano();
	src = init(NULL, &r, why);
	assert_non_null(src);
	xemu.msr = VIA_RNG_ENABLE | VIA_RAW_BITS;
	memset(buf, 0x42, sizeof(buf));
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), -EIO);
	assert_int_equal(fake_source_counter(src, "config-changed"), 64);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0x42);
	/* Put right by someone: data flows again. */
	xemu.msr = VIA_RNG_ENABLE;
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
	done(src);
}

static void test_disabled_c3_enabled_by_init(void **state)
{
	uint8_t buf[64];
	struct source *src;
	char why[160];
	int r;

	SKIP_IF_NO_EMU();
	set_cpu("CentaurHauls", 6, 9, 0, 0, 0);	/* C5XL stepping 0, silent in CPUID */
	msr_file(0);
	xemu.msr_fd = msr_fd;
	src = init(NULL, &r, why);
	assert_non_null(src);
	assert_true(msr_value() & VIA_RNG_ENABLE);
	assert_int_equal(source_via.read(src, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(fake_source_counter(src, "config-changed"), 0);
	done(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stub, teardown),
		cmocka_unit_test_teardown(test_probe_reasons, teardown),
		cmocka_unit_test_teardown(test_probe_c5xl_stepping0, teardown),
		cmocka_unit_test_teardown(test_probe_refuses_config_needing_msr, teardown),
		cmocka_unit_test_teardown(test_check, teardown),
		cmocka_unit_test_teardown(test_option_table, teardown),
		cmocka_unit_test_teardown(test_msr_apply, teardown),
		cmocka_unit_test_teardown(test_msr_errors, teardown),
		cmocka_unit_test_teardown(test_msr_readback_verified, teardown),
		cmocka_unit_test_teardown(test_read_normal, teardown),
		cmocka_unit_test_teardown(test_read_bytes_per_store, teardown),
		cmocka_unit_test_teardown(test_read_rep, teardown),
		cmocka_unit_test_teardown(test_read_dry, teardown),
		cmocka_unit_test_teardown(test_config_changed_by_someone_else, teardown),
		cmocka_unit_test_teardown(test_tamper_continuous, teardown),
		cmocka_unit_test_teardown(test_filter_failed, teardown),
		cmocka_unit_test_teardown(test_stuck_output, teardown),
		cmocka_unit_test_teardown(test_single_source_c3_both_refused, teardown),
		cmocka_unit_test_teardown(test_no_msr_parts, teardown),
		cmocka_unit_test_teardown(test_persistent_mismatch, teardown),
		cmocka_unit_test_teardown(test_disabled_c3_enabled_by_init, teardown),
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

#ifndef ENABLE_SOURCE_VIA
	/* The stub and the option checks passed; the driver itself was not tested. */
	if (!failed) {
		printf("SKIP: via source compiled out (--disable-source-via)\n");
		return 77;
	}
#endif
	return failed;
}
