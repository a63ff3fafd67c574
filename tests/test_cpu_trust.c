// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/cpu_trust.c (random.trust_cpu= read from a kernel command line as the
 * kernel reads it) and for what the source framework does with it: a cpu_rng source's
 * default credit becomes 0, a configured quality still wins, -l says why. The command line
 * comes from this file's cpu_trust_read_cmdline() (linked instead of src/cpu_trust_proc.c),
 * the drivers from this file's table (instead of src/sources/table.c).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf.h"
#include "cpu_trust.h"
#include "source.h"
#include "source_set.h"
#include "util.h"

/* ---- the seam: the command line the framework reads ---- */

static const char *fake_cmdline;
static int fake_err;

int cpu_trust_read_cmdline(char **text)
{
	*text = NULL;
	if (fake_err)
		return fake_err;
	*text = strdup(fake_cmdline ? fake_cmdline : "");
	return *text ? 0 : -ENOMEM;
}

/* ---- a CPU source and another, both always available ---- */

static int probe_ok(struct source *src, char *why, size_t len)
{
	return 0;
}

static ssize_t read_none(struct source *src, void *buf, size_t max)
{
	return 0;
}

static const struct source_ops cpu_ops = {
	.name = "cpu",
	.help = "a CPU instruction",
	.default_on = true,
	.cpu_rng = true,
	.quality = 512,
	.probe = probe_ok,
	.read = read_none,
};

static const struct source_ops dev_ops = {
	.name = "dev",
	.help = "a device",
	.default_on = true,
	.quality = 1024,
	.probe = probe_ok,
	.read = read_none,
};

const struct source_ops *const source_drivers[] = { &cpu_ops, &dev_ops };
const size_t source_n_drivers = ARRAY_SIZE(source_drivers);

/* ---- the value: kstrtobool() ---- */

static void test_parse_bool(void **state)
{
	static const char *const yes[] = { "1", "y", "Y", "yes", "t", "true", "T", "on", "ON",
					   "oN", "e", "enable", "E", "yak" };
	static const char *const no[] = { "0", "n", "N", "no", "f", "false", "F", "off", "OFF",
					  "oFf", "d", "disable", "D", "nonsense" };
	static const char *const bad[] = { "", "2", "x", "o", "oops", " 0", "-1", "\"0\"" };
	bool b;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		b = false;
		assert_int_equal(cpu_trust_parse_bool(yes[i], &b), 0);
		assert_true(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++) {
		b = true;
		assert_int_equal(cpu_trust_parse_bool(no[i], &b), 0);
		assert_false(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		b = true;
		assert_int_equal(cpu_trust_parse_bool(bad[i], &b), -EINVAL);
		assert_true(b); /* untouched */
	}
	assert_int_equal(cpu_trust_parse_bool(NULL, &b), -EINVAL);
}

/* ---- the command line ---- */

static bool distrusts(const char *cmdline, const char *setting)
{
	struct cpu_trust t;

	memset(&t, 0x55, sizeof(t));
	cpu_trust_parse(cmdline, &t);
	if (setting && strcmp(t.setting, setting) != 0)
		fail_msg("'%s': setting '%s', want '%s'", cmdline, t.setting, setting);
	return t.distrusted;
}

static void test_parse_cmdline(void **state)
{
	/* None, or not this parameter. */
	assert_false(distrusts(NULL, ""));
	assert_false(distrusts("", ""));
	assert_false(distrusts("   \n", ""));
	assert_false(distrusts("quiet root=/dev/vda1 ro\n", ""));
	assert_false(distrusts("random.trust_cpu_x=0 xrandom.trust_cpu=0 random.trust=0", ""));
	assert_false(distrusts("random.trust_bootloader=off", ""));
	assert_false(distrusts("trust_cpu=off", ""));
	/* Off, each way the kernel reads false; the setting as written. */
	assert_true(distrusts("random.trust_cpu=off", "random.trust_cpu=off"));
	assert_true(distrusts("quiet random.trust_cpu=0 ro\n", "random.trust_cpu=0"));
	assert_true(distrusts("random.trust_cpu=n", "random.trust_cpu=n"));
	assert_true(distrusts("random.trust_cpu=no", "random.trust_cpu=no"));
	assert_true(distrusts("random.trust_cpu=false", "random.trust_cpu=false"));
	assert_true(distrusts("random.trust_cpu=OFF\n", "random.trust_cpu=OFF"));
	assert_true(distrusts("\trandom.trust_cpu=0\t", "random.trust_cpu=0"));
	/* On: the kernel's default, nothing changes. */
	assert_false(distrusts("random.trust_cpu=on", "random.trust_cpu=on"));
	assert_false(distrusts("random.trust_cpu=1", "random.trust_cpu=1"));
	assert_false(distrusts("random.trust_cpu=y", "random.trust_cpu=y"));
	/* '-' and '_' are the same in a parameter's name (parameq()). */
	assert_true(distrusts("random.trust-cpu=off", "random.trust_cpu=off"));
	/* Quotes: around the value, around the whole word; they group blanks. */
	assert_true(distrusts("random.trust_cpu=\"off\"", "random.trust_cpu=off"));
	assert_true(distrusts("\"random.trust_cpu=0\" quiet", "random.trust_cpu=0"));
	assert_false(distrusts("foo=\"a random.trust_cpu=0 b\" quiet", ""));
	assert_false(distrusts("random.trust_cpu=\"o\"", "")); /* "o" alone is invalid */
	/* The last valid setting wins; invalid ones are ignored (the kernel warns). */
	assert_false(distrusts("random.trust_cpu=0 random.trust_cpu=1", "random.trust_cpu=1"));
	assert_true(distrusts("random.trust_cpu=1 random.trust_cpu=0", "random.trust_cpu=0"));
	assert_true(distrusts("random.trust_cpu=0 random.trust_cpu=maybe", "random.trust_cpu=0"));
	assert_true(distrusts("random.trust_cpu=0 random.trust_cpu= random.trust_cpu",
			      "random.trust_cpu=0"));
	assert_false(distrusts("random.trust_cpu= random.trust_cpu", ""));
	/* After a lone "--" the words are init's, not the kernel's. */
	assert_false(distrusts("quiet -- random.trust_cpu=0", ""));
	assert_true(distrusts("random.trust_cpu=0 -- random.trust_cpu=1", "random.trust_cpu=0"));
	assert_true(distrusts("--x=1 random.trust_cpu=0", "random.trust_cpu=0"));
	/* A long value is cut in the setting, not in the reading. */
	assert_true(distrusts("random.trust_cpu=falsefalsefalsefalsefalse",
			      "random.trust_cpu=falsefalsefalsef"));
}

static void test_get(void **state)
{
	struct cpu_trust t;

	fake_cmdline = "quiet random.trust_cpu=off";
	fake_err = 0;
	assert_int_equal(cpu_trust_get(&t), 0);
	assert_true(t.distrusted);
	/* An unreadable command line: no setting, the kernel's default (trust). */
	fake_err = -ENOENT;
	assert_int_equal(cpu_trust_get(&t), -ENOENT);
	assert_false(t.distrusted);
	assert_string_equal(t.setting, "");
	fake_err = 0;
}

/* ---- what the framework does with it ---- */

/* The set of conf text under cmdline; -l's output in *list (freed by the caller). */
static struct source_set *make_set(const char *cmdline, const char *text, char **list)
{
	struct source_set *set = NULL;
	struct conf c;
	char err[256];
	size_t len = 0;
	FILE *f;

	fake_cmdline = cmdline;
	conf_init(&c, source_check_section);
	assert_int_equal(conf_load_string(&c, "test.conf", text, strlen(text), err, sizeof(err)),
			 0);
	if (source_set_new(&set, &c, err, sizeof(err)) < 0)
		fail_msg("source_set_new: %s", err);
	conf_free(&c);
	f = open_memstream(list, &len);
	assert_non_null(f);
	assert_int_equal(source_set_list(set, f), 2);
	fclose(f);
	return set;
}

static void test_credit(void **state)
{
	struct source_set *set;
	char *list;

	/* Distrusted: the CPU source credits 0, the other one is untouched. */
	set = make_set("random.trust_cpu=off", "", &list);
	assert_int_equal(source_quality(source_set_find(set, "cpu")), 0);
	assert_int_equal(source_quality(source_set_find(set, "dev")), 1024);
	assert_non_null(strstr(list, "cpu: available, enabled (random.trust_cpu=off on the kernel "
				     "command line: mixed in, not credited, quality 0)\n"));
	assert_non_null(strstr(list, "dev: available, enabled (quality 1024)\n"));
	free(list);
	source_set_free(set);

	/* A configured quality wins, and -l says so. */
	set = make_set("random.trust_cpu=0", "[source cpu]\nquality = 300\n", &list);
	assert_int_equal(source_quality(source_set_find(set, "cpu")), 300);
	assert_non_null(strstr(list, "cpu: available, enabled (random.trust_cpu=0 on the kernel "
				     "command line: configured quality wins, quality 300)\n"));
	free(list);
	source_set_free(set);

	/* Configured without a quality: still 0. */
	set = make_set("random.trust_cpu=n", "[source cpu]\nenabled = yes\n", &list);
	assert_int_equal(source_quality(source_set_find(set, "cpu")), 0);
	free(list);
	source_set_free(set);

	/* Trusted, or nothing said: the driver's default, and -l says nothing of it. */
	set = make_set("random.trust_cpu=on", "", &list);
	assert_int_equal(source_quality(source_set_find(set, "cpu")), 512);
	assert_non_null(strstr(list, "cpu: available, enabled (quality 512)\n"));
	assert_null(strstr(list, "trust_cpu"));
	free(list);
	source_set_free(set);
	set = make_set("quiet", "", &list);
	assert_int_equal(source_quality(source_set_find(set, "cpu")), 512);
	free(list);
	source_set_free(set);
}

static void test_options_text(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(source_print_options("cpu", f), 0);
	assert_int_equal(source_print_options("dev", f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "default quality 512/1024 (0 with random.trust_cpu=off on the "
				    "kernel command line)"));
	assert_non_null(strstr(buf, "default quality 1024/1024, on by default"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_parse_cmdline),
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_credit),
		cmocka_unit_test(test_options_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
