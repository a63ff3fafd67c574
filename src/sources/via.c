// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * VIA / Centaur / Zhaoxin PadLock RNG: the unprivileged `xstore` instruction executed
 * directly, 8 bytes per instruction (or a bounded `rep xstore`), with the status word each
 * instruction returns in EAX checked against the wanted configuration, and that
 * configuration kept in MSR 0x110B on the parts that have it (C3 Nehemiah, C7 Esther).
 * Facts: seed 000 (the 2004 8-byte xstore patch) and kernel-interfaces.md §5.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/via.h"
#include "util.h"

static const char *const noise_choices[] = { "a", "b", "both", NULL };
static const char *const bps_choices[] = { "8", "4", "2", "1", NULL };

static const struct option_spec via_options[] = {
	{ .key = "noise-source",
	  .type = OPTION_CHOICE,
	  .choices = noise_choices,
	  .help = "noise source a, b or both (two-source C3 Nehemiah and C7 only; default: as found)" },
	{ .key = "raw-bits",
	  .type = OPTION_BOOL,
	  .def = "no",
	  .help = "bypass the whitener (not credited unless quality is set)" },
	{ .key = "string-filter",
	  .type = OPTION_BOOL,
	  .help = "hardware bit-string filter (needs MSR 0x110B; default: as found)" },
	{ .key = "filter-length",
	  .type = OPTION_UINT,
	  .min = 8,
	  .max = 63,
	  .help = "longest run of equal bits the string filter lets through (with string-filter=yes)" },
	{ .key = "dc-bias",
	  .type = OPTION_UINT,
	  .min = 0,
	  .max = 7,
	  .help = "DC bias of the noise source (needs MSR 0x110B; default: as found)" },
	{ .key = "dry-delay-us",
	  .type = OPTION_UINT,
	  .def = "10",
	  .min = 1,
	  .max = 1000,
	  .help = "microseconds to wait when xstore has no data yet" },
	{ .key = "bytes-per-store",
	  .type = OPTION_CHOICE,
	  .def = "8",
	  .choices = bps_choices,
	  .help = "random bytes per xstore: 8 is fastest, fewer spend more noise per byte" },
	{ .key = "rep",
	  .type = OPTION_BOOL,
	  .def = "no",
	  .help = "one bounded rep xstore per read instead of one xstore per 8 bytes" },
	{ .key = "msr-device",
	  .type = OPTION_PATH,
	  .def = "/dev/cpu/0/msr",
	  .help = "MSR device used to configure C3/C7 parts" },
	{ .key = NULL },
};

static int via_check(struct source *src, char *why, size_t len)
{
	bool filter_set = source_opt_is_set(src, "string-filter");
	bool filter = source_opt_bool(src, "string-filter");

	if (source_opt_is_set(src, "filter-length") && !(filter_set && filter)) {
		snprintf(why, len, "filter-length needs string-filter=yes");
		return -EINVAL;
	}
	if (filter && !source_opt_is_set(src, "filter-length")) {
		snprintf(why, len, "string-filter=yes needs filter-length (8..63)");
		return -EINVAL;
	}
	return 0;
}

#if defined(ENABLE_SOURCE_VIA) && (defined(__i386__) || defined(__x86_64__))

/* Upper bound of one rep xstore, and the spare bytes it may write past ECX (OpenBSD: 7). */
#define REP_MAX 4096
#define REP_SPARE 8
/* Instructions whose data is discarded, and dry waits, allowed in one read() call. */
#define MAX_WASTED 64
#define MAX_DRY 100

/* What CPUID and the CPU's identity say. */
struct via_cpu {
	const char *name;
	unsigned int family, model, stepping;
	bool rng;		/* has the RNG */
	bool enabled;		/* CPUID reports it enabled */
	bool has_msr;		/* MSR 0x110B exists */
	bool two_sources;
};

struct via {
	struct via_cpu cpu;
	int msr_fd;
	uint32_t want_mask, want_val;	/* status bits that must read as want_val */
	uint32_t edx;			/* xstore divisor */
	unsigned int bps;		/* random bytes per xstore */
	bool rep;
	uint64_t dry_ns;
	int c_config, c_filter, c_dry, c_short, c_reapply;
	uint8_t rep_buf[REP_MAX + REP_SPARE];
};

static void vendor_of(char vendor[13])
{
	struct via_cpuid_regs r;

	via_cpuid(0, &r);
	memcpy(vendor, &r.ebx, 4);
	memcpy(vendor + 4, &r.edx, 4);
	memcpy(vendor + 8, &r.ecx, 4);
	vendor[12] = '\0';
}

/* 0, or -ENODEV with the reason the PadLock RNG cannot be used on this CPU. */
static int identify(struct via_cpu *c, char *why, size_t len)
{
	struct via_cpuid_regs r;
	char vendor[13];
	bool zhaoxin, leaf;
	uint32_t feat = 0;

	memset(c, 0, sizeof(*c));
	vendor_of(vendor);
	zhaoxin = strcmp(vendor, "  Shanghai  ") == 0;
	if (!zhaoxin && strcmp(vendor, "CentaurHauls") != 0) {
		snprintf(why, len, "vendor %s", vendor);
		return -ENODEV;
	}
	via_cpuid(1, &r);
	c->stepping = r.eax & 0xf;
	c->model = (r.eax >> 4) & 0xf;
	c->family = (r.eax >> 8) & 0xf;
	if (c->family == 0xf)
		c->family += (r.eax >> 20) & 0xff;
	if (c->family >= 6)
		c->model |= ((r.eax >> 16) & 0xf) << 4;

	via_cpuid(0xc0000000, &r);
	leaf = r.eax >= 0xc0000001 && r.eax <= 0xc00000ff;
	if (leaf) {
		via_cpuid(0xc0000001, &r);
		feat = r.edx;
	}
	c->rng = feat & (1u << 2);
	c->enabled = feat & (1u << 3);

	if (zhaoxin) {
		/* Zhaoxin enables its RNG in MSR 0x1257, not 0x110B (kernel zhaoxin.c). */
		c->name = "Zhaoxin";
	} else if (c->family == 6 && c->model == 9) {
		c->name = "C3 Nehemiah";
		c->has_msr = true;
		/* Seed 000: stepping > 7 (C5P) has two noise sources, C5XL one. */
		c->two_sources = c->stepping > 7;
		/*
		 * Seed 000: first-generation C5XL (stepping 0) has a working RNG but does not
		 * report xstore in CPUID.
		 */
		if (c->stepping == 0 && !c->rng) {
			c->rng = true;
			c->name = "C3 Nehemiah C5XL stepping 0";
		}
	} else if (c->family == 6 && (c->model == 10 || c->model == 13)) {
		c->name = "C7 Esther";
		c->has_msr = true;
		c->two_sources = true;
	} else if (c->family == 6 && c->model >= 15) {
		c->name = "Nano";	/* no MSR 0x110B (kernel via-rng.c) */
	} else {
		c->name = "Centaur";
	}

	if (!c->rng) {
		snprintf(why, len,
			 leaf ? "PadLock RNG not present" : "no Centaur extended CPUID leaf");
		return -ENODEV;
	}
	/* On C3/C7 init enables it through MSR 0x110B like the kernel's init_c3() does. */
	if (!c->enabled && !c->has_msr) {
		snprintf(why, len, "PadLock RNG present but disabled");
		return -ENODEV;
	}
	return 0;
}

static bool needs_msr_field(struct source *src, const char **key)
{
	static const char *const keys[] = { "noise-source", "string-filter", "dc-bias" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (source_opt_is_set(src, keys[i])) {
			*key = keys[i];
			return true;
		}
	}
	if (source_opt_bool(src, "raw-bits")) {
		*key = "raw-bits";
		return true;
	}
	return false;
}

/*
 * The wanted configuration: the fields the options set, plus the enable bit and the raw
 * bits, which decide whether the data is whitened and credited. Fields the options leave
 * unset are left as found and not policed. 0, or -EOPNOTSUPP with why.
 */
static int wanted_config(struct source *src, const struct via_cpu *c, uint32_t *mask, uint32_t *val,
			 char *why, size_t len)
{
	const char *key;

	if (!c->has_msr && needs_msr_field(src, &key)) {
		snprintf(why, len, "%s: %s has no MSR 0x110B to configure", key, c->name);
		return -EOPNOTSUPP;
	}
	if (source_opt_is_set(src, "noise-source") && !c->two_sources) {
		snprintf(why, len, "noise-source: %s stepping %u has one noise source", c->name,
			 c->stepping);
		return -EOPNOTSUPP;
	}
	*mask = VIA_RNG_ENABLE | VIA_RAW_BITS;
	*val = VIA_RNG_ENABLE | (source_opt_bool(src, "raw-bits") ? VIA_RAW_BITS : 0);
	if (source_opt_is_set(src, "noise-source")) {
		const char *ns = source_opt_str(src, "noise-source");
		uint32_t sel = strcmp(ns, "a") == 0 ? 0 : strcmp(ns, "b") == 0 ? 1 : 3;

		*mask |= VIA_NOISE_MASK;
		*val |= sel << VIA_NOISE_SHIFT;
	}
	if (source_opt_is_set(src, "dc-bias")) {
		*mask |= VIA_DCBIAS_MASK;
		*val |= (uint32_t)source_opt_uint(src, "dc-bias") << VIA_DCBIAS_SHIFT;
	}
	if (source_opt_is_set(src, "string-filter")) {
		*mask |= VIA_STRFILT_ENABLE;
		if (source_opt_bool(src, "string-filter")) {
			*mask |= VIA_FLTLEN_MASK;
			*val |= VIA_STRFILT_ENABLE | (uint32_t)source_opt_uint(src, "filter-length")
							     << VIA_FLTLEN_SHIFT;
		}
	}
	return 0;
}

static int via_probe(struct source *src, char *why, size_t len)
{
	struct via_cpu c;
	uint32_t mask, val;
	int r;

	r = identify(&c, why, len);
	if (r < 0)
		return r;
	return wanted_config(src, &c, &mask, &val, why, len);
}

static int msr_read(int fd, uint64_t *v)
{
	ssize_t n = pread(fd, v, sizeof(*v), VIA_MSR_RNG);

	if (n < 0)
		return -errno;
	return n == sizeof(*v) ? 0 : -EIO;
}

static int msr_write(int fd, uint64_t v)
{
	ssize_t n = pwrite(fd, &v, sizeof(v), VIA_MSR_RNG);

	if (n < 0)
		return -errno;
	return n == sizeof(v) ? 0 : -EIO;
}

static void msr_error(int err, const char *path, bool writing, char *why, size_t len)
{
	switch (err) {
	case -ENOENT:
	case -ENODEV:
	case -ENXIO:
		snprintf(why, len, "no %s: load the msr module", path);
		break;
	case -EPERM:
	case -EACCES:
		if (writing)
			snprintf(why, len,
				 "%s: MSR write refused: needs CAP_SYS_RAWIO; writes blocked "
				 "by lockdown or msr.allow_writes=off",
				 path);
		else
			snprintf(why, len, "%s: needs CAP_SYS_RAWIO", path);
		break;
	case -EIO:
		snprintf(why, len, "%s: no MSR 0x110B on this CPU", path);
		break;
	default:
		snprintf(why, len, "%s: %s", path, strerror(-err));
		break;
	}
}

/*
 * Make the wanted fields of MSR 0x110B true: read, change only those fields (and clear a
 * string-filter failure), write only when something changed, read back and verify.
 */
static int apply_config(struct via *v, const char *path, char *why, size_t len)
{
	uint64_t old, now;
	uint32_t lo;
	int r;

	r = msr_read(v->msr_fd, &old);
	if (r < 0)
		goto fail_read;
	lo = ((uint32_t)old & ~v->want_mask & ~VIA_STRFILT_FAIL) | v->want_val;
	if (lo == (uint32_t)old)
		return 0;
	r = msr_write(v->msr_fd, (old & ~(uint64_t)UINT32_MAX) | lo);
	if (r < 0) {
		msr_error(r, path, true, why, len);
		return r;
	}
	r = msr_read(v->msr_fd, &now);
	if (r < 0)
		goto fail_read;
	if (((uint32_t)now & v->want_mask) != v->want_val) {
		snprintf(why, len,
			 "%s: MSR 0x110B did not take the configuration "
			 "(wrote 0x%08x, read 0x%08x)",
			 path, lo, (uint32_t)now);
		return -EIO;
	}
	return 0;
fail_read:
	msr_error(r, path, false, why, len);
	return r;
}

static void via_fini(struct source *src)
{
	struct via *v = source_priv(src);

	if (!v)
		return;
	if (v->msr_fd >= 0)
		close(v->msr_fd);
	wipe(v, sizeof(*v));
	free(v);
	source_set_priv(src, NULL);
}

static int via_init(struct source *src, char *why, size_t len)
{
	const char *path = source_opt_str(src, "msr-device");
	struct via_cpu cpu;
	struct via *v;
	const char *key;
	int r;

	/* The CPU first: on any other, nothing is allocated (the daemon's heap, footprint). */
	r = identify(&cpu, why, len);
	if (r < 0)
		return r;
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	v->cpu = cpu;
	v->msr_fd = -1;
	source_set_priv(src, v);
	r = wanted_config(src, &v->cpu, &v->want_mask, &v->want_val, why, len);
	if (r < 0)
		goto fail;
	v->bps = (unsigned int)source_opt_uint(src, "bytes-per-store");
	v->edx = v->bps == 8 ? 0 : v->bps == 4 ? 1 : v->bps == 2 ? 2 : 3;
	v->rep = source_opt_bool(src, "rep");
	v->dry_ns = source_opt_uint(src, "dry-delay-us") * 1000;
	v->c_config = source_counter(src, "config-changed");
	v->c_filter = source_counter(src, "filter-failed");
	v->c_dry = source_counter(src, "dry");
	v->c_short = source_counter(src, "short-store");
	v->c_reapply = source_counter(src, "reapply-failed");

	if (v->cpu.has_msr) {
		v->msr_fd = open(path, O_RDWR | O_CLOEXEC);
		if (v->msr_fd < 0) {
			r = -errno;
			/* Without the MSR the defaults still run where the RNG is enabled. */
			if (needs_msr_field(src, &key) || !v->cpu.enabled) {
				msr_error(r, path, false, why, len);
				goto fail;
			}
		} else {
			r = apply_config(v, path, why, len);
			if (r < 0)
				goto fail;
		}
	}
	if (source_opt_bool(src, "raw-bits"))
		source_set_quality(src, 0);
	return 0;
fail:
	via_fini(src);
	return r;
}

/* xstore: EDI/RDI = destination, EDX = divisor; EAX = MSR 0x110B low dword with count. */
static inline uint32_t xstore(void *dst, uint32_t edx)
{
	uint32_t eax;

	__asm__ __volatile__(".byte 0x0f,0xa7,0xc0" : "=a"(eax), "+D"(dst), "+d"(edx) : : "memory");
	return eax;
}

/* rep xstore: ECX/RCX = bytes wanted; *dst and *count are advanced as the CPU leaves them. */
static inline uint32_t rep_xstore(void **dst, unsigned long *count, uint32_t edx)
{
	uint32_t eax;
	void *d = *dst;
	unsigned long c = *count;

	__asm__ __volatile__(".byte 0xf3,0x0f,0xa7,0xc0"
			     : "=a"(eax), "+D"(d), "+c"(c), "+d"(edx)
			     :
			     : "memory");
	*dst = d;
	*count = c;
	return eax;
}

/*
 * Judge one status word: 1 when its data may be used, 0 when it was discarded (counted,
 * configuration re-applied where possible).
 */
static int status_ok(struct source *src, struct via *v, uint32_t eax)
{
	char why[160];

	if ((eax & v->want_mask) != v->want_val) {
		/* Someone else changed the configuration: xstore is unprivileged. */
		source_counter_add(src, v->c_config, 1);
		if (v->msr_fd >= 0 &&
		    apply_config(v, source_opt_str(src, "msr-device"), why, sizeof(why)) < 0)
			source_counter_add(src, v->c_reapply, 1);
		return 0;
	}
	if (eax & VIA_STRFILT_FAIL) {
		source_counter_add(src, v->c_filter, 1);
		if (v->msr_fd >= 0 &&
		    apply_config(v, source_opt_str(src, "msr-device"), why, sizeof(why)) < 0)
			source_counter_add(src, v->c_reapply, 1);
		return 0;
	}
	return 1;
}

/*
 * One instruction into out (room for max): bytes delivered (> 0), 0 when the data was
 * discarded (*wasted counts it), -EAGAIN when the RNG had no data yet.
 */
static ssize_t read_once(struct source *src, struct via *v, uint8_t *out, size_t max,
			 unsigned int *wasted)
{
	ssize_t ret;
	uint32_t eax;

	if (v->rep) {
		void *d = v->rep_buf;
		unsigned long c = max < REP_MAX ? max : REP_MAX;
		size_t want = c, n;

		eax = rep_xstore(&d, &c, v->edx);
		n = (size_t)((uint8_t *)d - v->rep_buf);
		if (n > want)
			n = want;
		if (!status_ok(src, v, eax)) {
			++*wasted;
			ret = 0;
		} else if (n == 0) {
			ret = -EAGAIN;
		} else {
			memcpy(out, v->rep_buf, n);
			ret = (ssize_t)n;
		}
		wipe(v->rep_buf, want + REP_SPARE);
	} else {
		uint64_t word[2] = { 0, 0 };	/* 8 bytes, and room should a store be wider */
		unsigned int count;

		eax = xstore(word, v->edx);
		count = eax & VIA_COUNT_MASK;
		if (!status_ok(src, v, eax)) {
			++*wasted;
			ret = 0;
		} else if (count == 0) {
			ret = -EAGAIN;
		} else if (count != v->bps) {
			source_counter_add(src, v->c_short, 1);
			++*wasted;
			ret = 0;
		} else {
			ret = (ssize_t)(count < max ? count : max);
			memcpy(out, word, (size_t)ret);
		}
		wipe(word, sizeof(word));
	}
	return ret;
}

static ssize_t via_read(struct source *src, void *buf, size_t max)
{
	struct via *v = source_priv(src);
	uint8_t *out = buf;
	size_t got = 0;
	unsigned int wasted = 0, dry = 0;

	while (got < max && wasted < MAX_WASTED) {
		ssize_t n = read_once(src, v, out + got, max - got, &wasted);

		if (n == -EAGAIN) {
			source_counter_add(src, v->c_dry, 1);
			if (++dry > MAX_DRY)
				break;
			if (source_sleep(src, v->dry_ns) < 0)
				return got ? (ssize_t)got : -EINTR;
			continue;
		}
		got += (size_t)n;
	}
	/*
	 * Every instruction of this call had to be discarded: the status keeps disagreeing
	 * with the wanted configuration. Let the framework re-open (init re-applies the
	 * configuration) with back-off instead of spinning.
	 */
	if (got == 0 && wasted >= MAX_WASTED)
		return -EIO;
	return (ssize_t)got;
}

#else /* compiled out (--disable-source-via), or not x86: a stub that says so */

static int via_probe(struct source *src, char *why, size_t len)
{
#ifdef ENABLE_SOURCE_VIA
	snprintf(why, len, "not compiled in for this architecture");
#else
	snprintf(why, len, "not compiled in (configured with --disable-source-via)");
#endif
	return -EOPNOTSUPP;
}

static int via_init(struct source *src, char *why, size_t len)
{
	return via_probe(src, why, len);
}

static ssize_t via_read(struct source *src, void *buf, size_t max)
{
	return -ENODEV;
}

static void via_fini(struct source *src)
{
}

#endif

/*
 * Quality 512: the PadLock output is whitened (bias removed) but not cryptographically
 * conditioned, and VIA recommends hashing it further (OpenSSL's padlock engine notes that
 * using it directly does not follow VIA's recommendations); half credit leaves margin.
 * Raw bits get 0 unless the configuration says otherwise.
 */
const struct source_ops source_via = {
	.name = "via",
	.help = "VIA/Centaur/Zhaoxin PadLock RNG (xstore instruction)",
	.default_on = true,
	.quality = 512,
	.options = via_options,
	.check = via_check,
	.probe = via_probe,
	.init = via_init,
	.read = via_read,
	.fini = via_fini,
};
