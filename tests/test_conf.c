// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/conf.c. Source sections are validated by the real
 * source_check_section() against the real drivers' schemas (hwrng, virtio, caam, via,
 * file:NAME), as the daemon does.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "conf.h"
#include "source.h"

static char err[CONF_ERR_MAX];

/* The value of key in section s (NULL when s is), or NULL. */
static const char *section_get(const struct conf_section *s, const char *key)
{
	for (size_t i = 0; s && i < s->n_kv; i++)
		if (strcmp(s->kv[i].key, key) == 0)
			return s->kv[i].value;
	return NULL;
}

static int load(struct conf *c, const char *text)
{
	err[0] = '\0';
	return conf_load_string(c, "t.conf", text, strlen(text), err, sizeof(err));
}

static void assert_defaults(const struct conf *c)
{
	assert_null(c->path);
	assert_string_equal(c->random_device, "/dev/random");
	assert_int_equal(c->feed_interval, 60);
	assert_int_equal(c->feed_bytes, 64);
	assert_int_equal(c->max_age, 60);
	assert_true(c->reseed);
	assert_int_equal(c->watermark, 0);
	assert_int_equal(c->entropy_count, 8);
	assert_string_equal(c->pid_file, RUNSTATEDIR "/rngd.pid");
	assert_null(c->user);
	assert_null(c->group);
	assert_int_equal(c->ready_timeout, 5);
	assert_string_equal(c->status_file, RUNSTATEDIR "/rngd/status.json");
	assert_int_equal(c->status_interval, 10);
	assert_null(c->metrics_file);
	assert_int_equal(c->metrics_interval, 15);
	assert_int_equal(c->stats_interval, 0);
	assert_false(c->force_output);
	assert_string_equal(c->kernel_hwrng, "take-over");
	assert_int_equal(c->n_sections, 0);
	assert_null(c->sections);
}

/* text must fail with exactly msg and leave a default conf as it was. */
static void check_error(const char *text, const char *msg)
{
	struct conf c;

	conf_init(&c, source_check_section);
	if (load(&c, text) != -EINVAL)
		fail_msg("accepted: %s", text);
	if (strcmp(err, msg) != 0)
		fail_msg("for:\n%s\ngot:      %s\nexpected: %s", text, err, msg);
	assert_defaults(&c);
	conf_free(&c);
}

static void test_defaults(void **state)
{
	struct conf c;

	conf_init(&c, source_check_section);
	assert_defaults(&c);
	conf_free(&c);
	/* An empty text changes nothing. */
	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, ""), 0);
	assert_int_equal(conf_load_string(&c, "t.conf", NULL, 0, err, sizeof(err)), 0);
	assert_defaults(&c);
	conf_free(&c);
}

static void test_every_key(void **state)
{
	static const char text[] = "[rngd]\n"
				   "random-device = /dev/stdout\n"
				   "feed-interval = 86400\n"
				   "feed-bytes = 2500\n"
				   "max-age = 1\n"
				   "reseed = no\n"
				   "fill-watermark = 4096\n"
				   "entropy-count = 1\n"
				   "pid-file = /var/run/x.pid\n"
				   "user = rngd\n"
				   "group = entropy\n"
				   "ready-timeout = 3600\n"
				   "status-file = /tmp/s.json\n"
				   "status-interval = 0\n"
				   "metrics-file = /var/lib/prometheus/node-exporter/rngd.prom\n"
				   "metrics-interval = 0\n"
				   "stats-interval = 86400\n"
				   "force-output = yes\n"
				   "kernel-hwrng = watch\n";
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, text), 0);
	assert_string_equal(c.random_device, "/dev/stdout");
	assert_int_equal(c.feed_interval, 86400);
	assert_int_equal(c.feed_bytes, 2500);
	assert_int_equal(c.max_age, 1);
	assert_false(c.reseed);
	assert_int_equal(c.watermark, 4096);
	assert_int_equal(c.entropy_count, 1);
	assert_string_equal(c.pid_file, "/var/run/x.pid");
	assert_string_equal(c.user, "rngd");
	assert_string_equal(c.group, "entropy");
	assert_int_equal(c.ready_timeout, 3600);
	assert_string_equal(c.status_file, "/tmp/s.json");
	assert_string_equal(c.kernel_hwrng, "watch");
	assert_int_equal(c.status_interval, 0);
	assert_string_equal(c.metrics_file, "/var/lib/prometheus/node-exporter/rngd.prom");
	assert_int_equal(c.metrics_interval, 0);
	assert_int_equal(c.stats_interval, 86400);
	assert_true(c.force_output);
	assert_null(c.path);
	assert_int_equal(c.n_sections, 0);
	conf_free(&c);
}

static void test_layout(void **state)
{
	/* Comments, blanks, tabs, CRLF, a BOM, sections in any order, instances. */
	static const char text[] = "\xef\xbb\xbf# comment\r\n"
				   "; another comment = with equals\r\n"
				   "\r\n"
				   "   [source file:usb0]   \r\n"
				   "\tpath\t=\t/dev/ttyUSB0  \r\n"
				   "  quality=512\r\n"
				   "[  source   hwrng ]\n"
				   "device = /dev/hwrng\n"
				   "  # indented comment, caf\xc3\xa9\n"
				   "[rngd]\n"
				   "feed-bytes =128\n"
				   "[source file:usb1]\n"
				   "path = /tmp/a=b\n"
				   "[source via]\n"
				   "noise-source = both";
	const struct conf_section *s;
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, text), 0);
	assert_int_equal(c.feed_bytes, 128);
	assert_int_equal(c.n_sections, 4);

	s = conf_find_section(&c, "file:usb0");
	assert_non_null(s);
	assert_string_equal(s->name, "file:usb0");
	assert_string_equal(s->type, "file");
	assert_int_equal(s->line, 4);
	assert_int_equal(s->n_kv, 2);
	assert_string_equal(s->kv[0].key, "path");
	assert_string_equal(s->kv[0].value, "/dev/ttyUSB0");
	assert_int_equal(s->kv[0].line, 5);
	assert_string_equal(section_get(s, "quality"), "512");
	assert_int_equal(s->kv[1].line, 6);
	assert_null(section_get(s, "device"));

	s = conf_find_section(&c, "hwrng");
	assert_non_null(s);
	assert_string_equal(s->type, "hwrng");
	assert_int_equal(s->line, 7);
	assert_string_equal(section_get(s, "device"), "/dev/hwrng");

	s = conf_find_section(&c, "file:usb1");
	assert_string_equal(section_get(s, "path"), "/tmp/a=b");
	s = conf_find_section(&c, "via");
	assert_string_equal(section_get(s, "noise-source"), "both");
	assert_int_equal(s->kv[0].line, 15);

	assert_null(conf_find_section(&c, "file"));
	assert_null(conf_find_section(&c, "caam"));
	assert_null(conf_find_section(&c, NULL));
	assert_null(section_get(NULL, "x"));
	conf_free(&c);
}

static void test_bad_lines(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "feed-bytes = 1\n", "t.conf:1: key 'feed-bytes': outside any section" },
		{ "# c\n[rngd]\nfeed-bytes\n",
		  "t.conf:3: expected 'key = value', '[section]' or a comment" },
		{ "[rngd]\n = 5\n", "t.conf:2: missing key before '='" },
		{ "[rngd]\nfeed bytes = 5\n", "t.conf:2: invalid key 'feed bytes'" },
		{ "[rngd]\nfoo = 1\n", "t.conf:2: key 'foo': unknown key in [rngd]" },
		{ "[rngd]\nFeed-Bytes = 1\n", "t.conf:2: key 'Feed-Bytes': unknown key in [rngd]" },
		{ "[rngd]\nfeed-bytes = 1\n\nfeed-bytes = 2\n",
		  "t.conf:4: key 'feed-bytes': duplicate key (first at line 2)" },
		{ "[rngd]\n[rngd]\n", "t.conf:2: duplicate section '[rngd]' (first at line 1)" },
		{ "[source hwrng]\n[rngd]\n[source hwrng]\n",
		  "t.conf:3: duplicate section '[source hwrng]' (first at line 1)" },
		{ "[global]\n", "t.conf:1: unknown section '[global]'" },
		{ "[sources hwrng]\n", "t.conf:1: unknown section '[sources hwrng]'" },
		{ "[]\n", "t.conf:1: unknown section '[]'" },
		{ "[rngd\n", "t.conf:1: section header must end with ']'" },
		{ "[rngd] # c\n", "t.conf:1: section header must end with ']'" },
		{ "[source]\n", "t.conf:1: section '[source]' needs a source name" },
		{ "[source a b]\n", "t.conf:1: invalid source name 'a b'" },
		{ "[source a]b]\n", "t.conf:1: invalid source name 'a]b'" },
		{ "[rngd]\nfeed-bytes =\n", "t.conf:2: key 'feed-bytes': empty value" },
		{ "[rngd]\nrandom-device = \n", "t.conf:2: key 'random-device': empty value" },
		{ "[rngd]\nfeed-interval = 0\n",
		  "t.conf:2: key 'feed-interval': '0' is out of range 1..86400" },
		{ "[rngd]\nfeed-interval = 86401\n",
		  "t.conf:2: key 'feed-interval': '86401' is out of range 1..86400" },
		{ "[rngd]\nfeed-bytes = 2501\n",
		  "t.conf:2: key 'feed-bytes': '2501' is out of range 1..2500" },
		{ "[rngd]\nfeed-bytes = 0\n",
		  "t.conf:2: key 'feed-bytes': '0' is out of range 1..2500" },
		{ "[rngd]\nmax-age = 0\n",
		  "t.conf:2: key 'max-age': '0' is out of range 1..86400" },
		{ "[rngd]\nfill-watermark = 4097\n",
		  "t.conf:2: key 'fill-watermark': '4097' is out of range 0..4096" },
		{ "[rngd]\nentropy-count = 9\n",
		  "t.conf:2: key 'entropy-count': '9' is out of range 1..8" },
		{ "[rngd]\nentropy-count = 0\n",
		  "t.conf:2: key 'entropy-count': '0' is out of range 1..8" },
		{ "[rngd]\nready-timeout = 3601\n",
		  "t.conf:2: key 'ready-timeout': '3601' is out of range 0..3600" },
		{ "[rngd]\nkernel-hwrng = takeover\n",
		  "t.conf:2: key 'kernel-hwrng': 'takeover' is not one of: take-over leave watch" },
		{ "[rngd]\nstatus-interval = 86401\n",
		  "t.conf:2: key 'status-interval': '86401' is out of range 0..86400" },
		{ "[rngd]\nmax-age = 99999999999999999999\n",
		  "t.conf:2: key 'max-age': '99999999999999999999' is out of range 1..86400" },
		{ "[rngd]\nfeed-interval = 0x10\n",
		  "t.conf:2: key 'feed-interval': '0x10' is not a decimal number" },
		{ "[rngd]\nfeed-interval = -1\n",
		  "t.conf:2: key 'feed-interval': '-1' is not a decimal number" },
		{ "[rngd]\nfeed-interval = 60 # seconds\n",
		  "t.conf:2: key 'feed-interval': '60 # seconds' is not a decimal number" },
		{ "[rngd]\nfeed-interval = 6 0\n",
		  "t.conf:2: key 'feed-interval': '6 0' is not a decimal number" },
		{ "[rngd]\nreseed = maybe\n",
		  "t.conf:2: key 'reseed': 'maybe' is not a boolean (yes or no)" },
		{ "[rngd]\nreseed = \n", "t.conf:2: key 'reseed': empty value" },
		/* It did nothing (every source is always read); -u alone is still accepted. */
		{ "[rngd]\nuse-slow-sources = yes\n",
		  "t.conf:2: key 'use-slow-sources': unknown key in [rngd]" },
		{ "[rngd]\nrandom-device = dev/random\n",
		  "t.conf:2: key 'random-device': 'dev/random' is not an absolute path" },
		{ "[rngd]\npid-file = rngd.pid\n",
		  "t.conf:2: key 'pid-file': 'rngd.pid' is not an absolute path" },
		{ "[rngd]\nstatus-file = \"/run/x\"\n",
		  "t.conf:2: key 'status-file': '\"/run/x\"' is not an absolute path" },
		{ "[rngd]\nuser = bad user\n",
		  "t.conf:2: key 'user': 'bad user' is not a valid user name" },
		{ "[rngd]\nuser = -x\n", "t.conf:2: key 'user': '-x' is not a valid user name" },
		{ "[rngd]\nuser = :g\n", "t.conf:2: key 'user': '' is not a valid user name" },
		{ "[rngd]\nuser = u:\n", "t.conf:2: key 'user': '' is not a valid group name" },
		{ "[rngd]\nuser = u:g:h\n",
		  "t.conf:2: key 'user': 'g:h' is not a valid group name" },
		{ "[rngd]\ngroup = a/b\n",
		  "t.conf:2: key 'group': 'a/b' is not a valid group name" },
		{ "[rngd]\nuser = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		  ("t.conf:2: key 'user': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' "
		   "is not a valid user name") },
		{ "[rngd]\nuser = u:g\ngroup = h\n",
		  "t.conf:3: key 'group': group already set by 'user' at line 2" },
		{ "[rngd]\ngroup = h\nuser = u:g\n",
		  "t.conf:3: key 'user': group already set by 'group' at line 2" },
		{ "[rngd]\nfeed-bytes = 1\x01\n", "t.conf:2: control character 0x01" },
		{ "[rngd]\r\nfeed-bytes = 1\r2\n", "t.conf:2: control character 0x0d" },
		{ "[rngd]\n\x7f\n", "t.conf:2: control character 0x7f" },
		{ "[rngd]\n# caf\xe9\n", "t.conf:2: invalid UTF-8" },
		{ "[rngd]\n# \xc0\xaf overlong\n", "t.conf:2: invalid UTF-8" },
		{ "[rngd]\n# \xed\xa0\x80 surrogate\n", "t.conf:2: invalid UTF-8" },
		{ "[rngd]\n# \xf4\x90\x80\x80 too big\n", "t.conf:2: invalid UTF-8" },
		{ "[rngd]\n# \xe2\x82 truncated\n", "t.conf:2: invalid UTF-8" },
		{ "[rngd]\n# \xe2\x82", "t.conf:2: invalid UTF-8" },
		{ "[rngd]\n# \xff\n", "t.conf:2: invalid UTF-8" },
		{ "\xef\xbb[rngd]\n", "t.conf:1: invalid UTF-8" },
		/* Source sections, checked by source_check_section() and the real schemas. */
		{ "[source nosuch]\n", "t.conf:1: unknown source 'nosuch'" },
		{ "[rngd]\n[source hwrng:0]\n", "t.conf:2: source 'hwrng' takes no instance name" },
		{ "[source file]\npath = /x\n",
		  "t.conf:1: source 'file' needs an instance name: [source file:NAME]" },
		{ "[source file:a]\nquality = 1\n", "t.conf:1: key 'path' is required" },
		{ "[source hwrng]\ndevice = /dev/hwrng\nspeed = 9\n",
		  "t.conf:3: key 'speed': unknown key for source 'hwrng' (see -O hwrng)" },
		{ "[source hwrng]\nread-size = 15\n",
		  "t.conf:2: key 'read-size': '15' is out of range 16..65536" },
		{ "[source via]\n\nenabled = perhaps\n",
		  "t.conf:3: key 'enabled': 'perhaps' is not a boolean (yes or no)" },
		{ "[source caam]\nquality = 1025\n",
		  "t.conf:2: key 'quality': '1025' is out of range 0..1024" },
		{ "[source hwrng]\nquality = 1\nquality = 2\n",
		  "t.conf:3: key 'quality': duplicate key (first at line 2)" },
		{ "[source hwrng]\ndevice =\n", "t.conf:2: key 'device': empty value" },
		/* Syntax errors come before source checks, in file order. */
		{ "[source nosuch]\n[rngd]\nx\n",
		  "t.conf:3: expected 'key = value', '[section]' or a comment" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_error(cases[i].text, cases[i].msg);
}

static void test_nul_and_long_lines(void **state)
{
	static const char nul[] = "[rngd]\nfeed-bytes = 1\0\n";
	char line[4200];
	struct conf c;
	int n;

	conf_init(&c, source_check_section);
	assert_int_equal(conf_load_string(&c, "t.conf", nul, sizeof(nul) - 1, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "t.conf:2: NUL byte");
	assert_defaults(&c);

	/* 4096 bytes is the longest line; CR does not count. */
	n = snprintf(line, sizeof(line), "[rngd]\n#%04095d\r\n", 0);
	assert_int_equal(conf_load_string(&c, "t.conf", line, (size_t)n, err, sizeof(err)), 0);
	n = snprintf(line, sizeof(line), "[rngd]\n#%04096d\n", 0);
	assert_int_equal(conf_load_string(&c, "t.conf", line, (size_t)n, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "t.conf:2: line too long (more than 4096 bytes)");
	assert_defaults(&c);
	conf_free(&c);
}

static void test_limits(void **state)
{
	size_t cap = 300 * 32, n = 0;
	char *text = malloc(cap);
	struct conf c;

	assert_non_null(text);
	for (int i = 0; i < 257; i++)
		n += (size_t)snprintf(text + n, cap - n, "[source file:f%d]\npath = /x\n", i);
	conf_init(&c, source_check_section);
	assert_int_equal(conf_load_string(&c, "t.conf", text, n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:513: too many sections (at most 256)");
	assert_defaults(&c);

	/* At most 256 keys per section, checked before the source code sees them. */
	n = (size_t)snprintf(text, cap, "[source hwrng]\n");
	for (int i = 0; i < 257; i++)
		n += (size_t)snprintf(text + n, cap - n, "k%d = 1\n", i);
	assert_int_equal(conf_load_string(&c, "t.conf", text, n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.conf:258: too many keys in section (at most 256)");
	assert_defaults(&c);
	free(text);

	/* The size cap is checked before anything else. */
	text = calloc(1, 1024 * 1024 + 1);
	assert_non_null(text);
	assert_int_equal(conf_load_string(&c, "big", text, 1024 * 1024 + 1, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "big: too large (more than 1048576 bytes)");
	free(text);

	/* A short err buffer is truncated, never overrun; NULL err is allowed. */
	assert_int_equal(conf_load_string(&c, "t.conf", "x", 1, err, 5), -EINVAL);
	assert_string_equal(err, "t.co");
	assert_int_equal(conf_load_string(&c, "t.conf", "x", 1, NULL, 0), -EINVAL);
	assert_defaults(&c);
	conf_free(&c);
}

static void test_empty_values(void **state)
{
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, "[rngd]\nuser = u:g\n"), 0);
	assert_int_equal(load(&c, "[rngd]\npid-file =\nstatus-file=\nuser = \n"), 0);
	assert_null(c.pid_file);
	assert_null(c.status_file);
	assert_null(c.user);
	assert_null(c.group);
	assert_string_equal(c.random_device, "/dev/random");
	conf_free(&c);
}

static void test_user_group(void **state)
{
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, "[rngd]\nuser = rngd:entropy\n"), 0);
	assert_string_equal(c.user, "rngd");
	assert_string_equal(c.group, "entropy");
	/* "user = U" alone means U's primary group. */
	assert_int_equal(load(&c, "[rngd]\nuser = nobody\n"), 0);
	assert_string_equal(c.user, "nobody");
	assert_null(c.group);
	/* ... unless the same file names the group, in either order. */
	assert_int_equal(load(&c, "[rngd]\ngroup = g1\nuser = u1\n"), 0);
	assert_string_equal(c.user, "u1");
	assert_string_equal(c.group, "g1");
	assert_int_equal(load(&c, "[rngd]\nuser = u2\ngroup = g2\n"), 0);
	assert_string_equal(c.user, "u2");
	assert_string_equal(c.group, "g2");
	/* "group" alone keeps the user. */
	assert_int_equal(load(&c, "[rngd]\ngroup = 123\n"), 0);
	assert_string_equal(c.user, "u2");
	assert_string_equal(c.group, "123");
	assert_int_equal(load(&c, "[rngd]\nuser = 0:0\n"), 0);
	assert_string_equal(c.user, "0");
	assert_string_equal(c.group, "0");
	assert_int_equal(load(&c, "[rngd]\nuser = m_1.x-y$\n"), 0);
	assert_string_equal(c.user, "m_1.x-y$");

	/* The command line: -D USER:GROUP and -D USER. */
	assert_int_equal(conf_set(&c, "user", "a:b", "option -D", err, sizeof(err)), 0);
	assert_string_equal(c.user, "a");
	assert_string_equal(c.group, "b");
	assert_int_equal(conf_set(&c, "user", "c", "option -D", err, sizeof(err)), 0);
	assert_string_equal(c.user, "c");
	assert_null(c.group);
	assert_int_equal(conf_set(&c, "user", "c:$", "option -D", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option -D: key 'user': '$' is not a valid group name");
	assert_string_equal(c.user, "c");
	assert_null(c.group);
	conf_free(&c);
}

static void test_load_on_top(void **state)
{
	const struct conf_section *s;
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, "[rngd]\nfeed-bytes = 100\nmax-age = 7\n"
				  "[source hwrng]\ndevice = /dev/a\nquality = 10\n"),
			 0);
	assert_int_equal(load(&c, "\n[rngd]\nfeed-bytes = 200\n"
				  "[source hwrng]\nquality = 20\nread-size = 64\n"
				  "[source caam]\n"),
			 0);
	assert_int_equal(c.feed_bytes, 200);
	assert_int_equal(c.max_age, 7);
	assert_int_equal(c.n_sections, 2);
	s = conf_find_section(&c, "hwrng");
	assert_int_equal(s->line, 4);
	assert_int_equal(s->n_kv, 3);
	assert_string_equal(section_get(s, "device"), "/dev/a");
	assert_string_equal(section_get(s, "quality"), "20");
	assert_string_equal(section_get(s, "read-size"), "64");
	s = conf_find_section(&c, "caam");
	assert_non_null(s);
	assert_int_equal(s->n_kv, 0);
	conf_free(&c);
}

static void test_failed_load_keeps_conf(void **state)
{
	static const char good[] = "[rngd]\nfeed-bytes = 100\nuser = u:g\nstatus-file = /s\n"
				   "[source file:x]\npath = /tmp/x\n";
	static const char *const bad[] = {
		/* Fails in the parser, after some keys were accepted. */
		"[rngd]\nfeed-bytes = 200\nuser = v\nstatus-file =\nmax-age = 0\n",
		/* Fails when the merged source section is checked. */
		("[rngd]\nfeed-bytes = 200\npid-file =\n[source file:y]\npath = /y\n"
		 "[source file:x]\npath = /z\nquality = x\n"),
		"[source file:x]\npath = /z\n[source hwrng]\n[source bad]\n",
	};
	const struct conf_section *s;
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, good), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load(&c, bad[i]), -EINVAL);
		assert_int_equal(c.feed_bytes, 100);
		assert_int_equal(c.max_age, 60);
		assert_string_equal(c.user, "u");
		assert_string_equal(c.group, "g");
		assert_string_equal(c.status_file, "/s");
		assert_string_equal(c.pid_file, RUNSTATEDIR "/rngd.pid");
		assert_int_equal(c.n_sections, 1);
		s = conf_find_section(&c, "file:x");
		assert_int_equal(s->n_kv, 1);
		assert_string_equal(section_get(s, "path"), "/tmp/x");
	}
	assert_string_equal(err, "t.conf:4: unknown source 'bad'");
	conf_free(&c);
}

static void test_cli(void **state)
{
	const struct conf_section *s;
	struct conf c;

	conf_init(&c, source_check_section);
	assert_int_equal(load(&c, "[rngd]\nfeed-interval = 300\nfeed-bytes = 64\n"
				  "[source hwrng]\ndevice = /dev/hwrng\nquality = 700\n"),
			 0);
	/* The command line wins over the file. */
	assert_int_equal(conf_set(&c, "feed-interval", "10", "option -R", err, sizeof(err)), 0);
	assert_int_equal(c.feed_interval, 10);
	assert_int_equal(
		conf_set(&c, "random-device", "/dev/stdout", "option -o", err, sizeof(err)), 0);
	assert_string_equal(c.random_device, "/dev/stdout");
	assert_int_equal(conf_set(&c, "random-device", "/dev/null", "option -o", err, sizeof(err)),
			 0);
	assert_string_equal(c.random_device, "/dev/null");
	assert_false(c.force_output);
	assert_int_equal(
		conf_set(&c, "force-output", "yes", "option --force-output", err, sizeof(err)), 0);
	assert_true(c.force_output);
	assert_int_equal(conf_set(&c, "pid-file", "", "option -p", err, sizeof(err)), 0);
	assert_null(c.pid_file);
	assert_int_equal(conf_set(&c, "pid-file", "/p", NULL, err, sizeof(err)), 0);
	assert_string_equal(c.pid_file, "/p");

	/* Errors leave the value alone. */
	assert_int_equal(conf_set(&c, "feed-interval", "0", "option -R", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "option -R: key 'feed-interval': '0' is out of range 1..86400");
	assert_int_equal(c.feed_interval, 10);
	assert_int_equal(conf_set(&c, "feed-bytes", "x", "option -s", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option -s: key 'feed-bytes': 'x' is not a decimal number");
	assert_int_equal(conf_set(&c, "feed-bytes", NULL, "option -s", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option -s: key 'feed-bytes': empty value");
	assert_int_equal(conf_set(&c, "random-device", "x", "option -o", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "option -o: key 'random-device': 'x' is not an absolute path");
	assert_string_equal(c.random_device, "/dev/null");
	assert_int_equal(conf_set(&c, "nope", "1", "option -X", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "option -X: key 'nope': unknown key");
	assert_int_equal(conf_set(&c, "a b", "1", NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "command line: invalid key 'a b'");
	assert_int_equal(c.feed_bytes, 64);

	/* Sources: a later value replaces an earlier one; sections are created. */
	assert_int_equal(
		conf_set_source(&c, "hwrng", "device", "/dev/other", "option -r", err, sizeof(err)),
		0);
	assert_int_equal(
		conf_set_source(&c, "hwrng", "enabled", "no", "option -x", err, sizeof(err)), 0);
	assert_int_equal(
		conf_set_source(&c, "hwrng", "enabled", "yes", "option -n", err, sizeof(err)), 0);
	s = conf_find_section(&c, "hwrng");
	assert_int_equal(s->n_kv, 3);
	assert_string_equal(section_get(s, "device"), "/dev/other");
	assert_int_equal(s->kv[0].line, 0);
	assert_string_equal(section_get(s, "quality"), "700");
	assert_int_equal(s->kv[1].line, 6);
	assert_string_equal(section_get(s, "enabled"), "yes");
	assert_int_equal(s->line, 4);

	assert_int_equal(
		conf_set_source(&c, "via", "noise-source", "a", "option -O", err, sizeof(err)), 0);
	s = conf_find_section(&c, "via");
	assert_non_null(s);
	assert_string_equal(s->type, "via");
	assert_int_equal(s->line, 0);
	assert_string_equal(section_get(s, "noise-source"), "a");
	assert_int_equal(c.n_sections, 2);

	/* Source errors leave everything alone. */
	assert_int_equal(
		conf_set_source(&c, "via", "noise-source", "c", "option -O", err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "option -O: key 'noise-source': 'c' is not one of: a b both");
	assert_string_equal(section_get(conf_find_section(&c, "via"), "noise-source"), "a");
	assert_int_equal(conf_set_source(&c, "via", "speed", "1", "option -O", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err,
			    "option -O: key 'speed': unknown key for source 'via' (see -O via)");
	assert_int_equal(conf_find_section(&c, "via")->n_kv, 1);
	assert_int_equal(
		conf_set_source(&c, "jitter", "enabled", "no", "option -x", err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "option -x: unknown source 'jitter'");
	assert_int_equal(
		conf_set_source(&c, "file:q", "quality", "1", "option -O", err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "option -O: key 'path' is required");
	assert_int_equal(conf_set_source(&c, "a b", "x", "1", "option -O", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "option -O: invalid source name 'a b'");
	assert_int_equal(conf_set_source(&c, "hwrng", "", "1", "option -O", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "option -O: invalid key ''");
	assert_int_equal(conf_set_source(&c, "hwrng", "device", "", "option -r", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "option -r: key 'device': empty value");
	assert_int_equal(c.n_sections, 2);
	assert_string_equal(section_get(conf_find_section(&c, "hwrng"), "device"), "/dev/other");

	/* A file section can now be built key by key, path first. */
	assert_int_equal(conf_set_source(&c, "file:q", "path", "/q", NULL, err, sizeof(err)), 0);
	assert_int_equal(conf_set_source(&c, "file:q", "quality", "1", NULL, err, sizeof(err)), 0);
	assert_int_equal(conf_find_section(&c, "file:q")->n_kv, 2);
	assert_string_equal(conf_find_section(&c, "file:q")->type, "file");
	conf_free(&c);
}

static void test_free_half_built(void **state)
{
	struct conf c;

	/* Zeroed, freed twice. */
	memset(&c, 0, sizeof(c));
	conf_free(&c);
	conf_free(&c);
	conf_free(NULL);

	/* Defaults only (static strings), then freed twice. */
	conf_init(&c, source_check_section);
	conf_free(&c);
	conf_free(&c);

	/* Sections without names, keys or values, as a failed build leaves them. */
	memset(&c, 0, sizeof(c));
	c.random_device = strdup("/dev/x");
	c.sections = calloc(3, sizeof(*c.sections));
	assert_non_null(c.sections);
	c.n_sections = 3;
	c.sections[0].name = strdup("hwrng");
	c.sections[1].name = strdup("file:x");
	c.sections[1].type = strdup("file");
	c.sections[1].kv = calloc(2, sizeof(struct conf_kv));
	c.sections[1].n_kv = 2;
	c.sections[1].kv[0].key = strdup("path");
	conf_free(&c);
	assert_null(c.sections);
	assert_int_equal(c.n_sections, 0);
}

static void test_load_file(void **state)
{
	char dir[] = "/tmp/rngd-test-conf-XXXXXX";
	char path[64], missing[64], fifo[64];
	const char text[] = "[rngd]\nfeed-bytes = 32\n[source hwrng]\nbogus = 1\n";
	struct conf c;
	char *big;
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rngd.conf", dir);
	snprintf(missing, sizeof(missing), "%s/missing.conf", dir);
	conf_init(&c, source_check_section);

	assert_int_equal(conf_load_file(&c, missing, err, sizeof(err)), -ENOENT);
	assert_true(strncmp(err, missing, strlen(missing)) == 0);
	assert_string_equal(err + strlen(missing), ": No such file or directory");
	assert_int_equal(conf_load_file(&c, dir, err, sizeof(err)), -EINVAL);
	assert_string_equal(err + strlen(dir), ": not a regular file");
	assert_defaults(&c);
	/* A FIFO is refused at once, writer or not: it must not hang --check-config (issue 12). */
	snprintf(fifo, sizeof(fifo), "%s/fifo.conf", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(conf_load_file(&c, fifo, err, sizeof(err)), -EINVAL);
	assert_string_equal(err + strlen(fifo), ": not a regular file");
	assert_int_equal(unlink(fifo), 0);
	assert_defaults(&c);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
	close(fd);
	assert_int_equal(conf_load_file(&c, path, err, sizeof(err)), -EINVAL);
	assert_string_equal(err + strlen(path),
			    ":4: key 'bogus': unknown key for source 'hwrng' (see -O hwrng)");
	assert_defaults(&c);

	/* Cut the bad section: loads, and remembers the path. */
	assert_int_equal(truncate(path, 23), 0);
	assert_int_equal(conf_load_file(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.feed_bytes, 32);
	assert_string_equal(c.path, path);
	assert_int_equal(conf_load_file(&c, path, err, sizeof(err)), 0);
	assert_string_equal(c.path, path);

	/* 1 MiB of comments is fine, one byte more is not. */
	big = malloc(1024 * 1024 + 1);
	assert_non_null(big);
	memset(big, '#', 1024 * 1024 + 1);
	for (size_t i = 1000; i < 1024 * 1024; i += 1000)
		big[i] = '\n';
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, big, 1024 * 1024), 1024 * 1024);
	close(fd);
	assert_int_equal(conf_load_file(&c, path, err, sizeof(err)), 0);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_int_equal(write(fd, "#", 1), 1);
	close(fd);
	assert_int_equal(conf_load_file(&c, path, err, sizeof(err)), -EINVAL);
	assert_string_equal(err + strlen(path), ": too large (more than 1048576 bytes)");
	assert_int_equal(c.feed_bytes, 32);
	free(big);

	conf_free(&c);
	unlink(path);
	rmdir(dir);
}

/*
 * rngd.conf.example loads as shipped, and with its [rngd] keys uncommented it gives exactly
 * the defaults: the example documents the real defaults of every global key.
 */
static void test_example(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[4096], line[512];
	size_t cap = 64 * 1024, n = 0;
	char *text = malloc(cap);
	size_t keys = 0;
	struct conf c;
	FILE *f;

	assert_non_null(text);
	snprintf(path, sizeof(path), "%s/rngd.conf.example", top ? top : ".");
	conf_init(&c, source_check_section);
	assert_int_equal(conf_load_file(&c, path, err, sizeof(err)), 0);
	free(c.path);
	c.path = NULL;
	assert_defaults(&c);

	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "# ---- Sources", 14) == 0)
			break;
		/* "#key = value" is a commented-out key, "# text" a comment. */
		if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z') {
			n += (size_t)snprintf(text + n, cap - n, "%s", line + 1);
			keys++;
		} else {
			n += (size_t)snprintf(text + n, cap - n, "%s", line);
		}
		assert_true(n < cap);
	}
	fclose(f);
	assert_int_equal(keys, 18);
	assert_int_equal(conf_load_string(&c, "example", text, n, err, sizeof(err)), 0);
	assert_defaults(&c);
	conf_free(&c);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_nul_and_long_lines),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_empty_values),
		cmocka_unit_test(test_user_group),
		cmocka_unit_test(test_load_on_top),
		cmocka_unit_test(test_failed_load_keeps_conf),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_free_half_built),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_example),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
