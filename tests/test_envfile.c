// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for src/envfile.c: shell-style environment files read as data. */
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

#include "envfile.h"

static void parse(const char *text, struct envfile *ef)
{
	memset(ef, 0, sizeof(*ef));
	assert_int_equal(envfile_parse(text, strlen(text), ef), 0);
}

static void test_quoting(void **state)
{
	struct envfile ef;

	(void)state;
	parse("# a comment\n"
	      "A=plain\n"
	      "B='single \"quoted\" $A'\n"
	      "  export C=\"double $A ${A} \\$A \\\" \\\\ \\n\"\n"
	      "D=un\\ quoted\\$x # a comment after\n"
	      "E=\"two\n"
	      "lines\"\n"
	      "F=\n"
	      "G=\"$A\"'$A'$A\n"
	      "H=$UNSET-x\n"
	      "I=a\\\n"
	      "b\r\n"
	      "A=again\n",
	      &ef);
	assert_int_equal(ef.n_notes, 0);
	assert_int_equal(ef.n_vars, 10);
	assert_string_equal(envfile_get(&ef, "A", 0), "again");
	assert_string_equal(envfile_get(&ef, "A", 13), "plain");
	assert_string_equal(envfile_get(&ef, "B", 0), "single \"quoted\" $A");
	assert_string_equal(envfile_get(&ef, "C", 0), "double plain plain $A \" \\ \\n");
	assert_string_equal(envfile_get(&ef, "D", 0), "un quoted$x");
	assert_string_equal(envfile_get(&ef, "E", 0), "two\nlines");
	assert_int_equal(ef.vars[4].line, 6);
	assert_string_equal(envfile_get(&ef, "F", 0), "");
	assert_string_equal(envfile_get(&ef, "G", 0), "plain$Aplain");
	assert_string_equal(envfile_get(&ef, "H", 0), "-x");
	assert_string_equal(envfile_get(&ef, "I", 0), "ab");
	assert_null(envfile_get(&ef, "Z", 0));
	envfile_free(&ef);
}

/* Anything a shell would run is a note naming its line, and nothing of it is taken. */
static void test_not_run(void **state)
{
	static const struct {
		const char *text;
		const char *note;
	} cases[] = {
		{ "A=$(id)\n", "command substitution and arithmetic are not run" },
		{ "A=\"$(id)\"\n", "command substitution and arithmetic are not run" },
		{ "A=$((1+1))\n", "command substitution and arithmetic are not run" },
		{ "A=`id`\n", "command substitution is not run" },
		{ "A=\"x`id`\"\n", "command substitution is not run" },
		{ "A=${B:-x}\n", "only $NAME and ${NAME} expansions are read" },
		{ "A=$1\n", "only $NAME and ${NAME} expansions are read" },
		{ "A=1; id\n", "shell syntax is not run" },
		{ "A=1|id\n", "shell syntax is not run" },
		{ "A=1 id\n", "more than one word (a command after the assignment?): not run" },
		{ "id\n", "not an assignment: not run" },
		{ ". /etc/x\n", "not an assignment: not run" },
		{ "1A=x\n", "not an assignment: not run" },
		{ "A =x\n", "not an assignment: not run" },
		{ "A=\"open\n", "a quote is not closed" },
		{ "A='open\n", "a quote is not closed" },
	};
	struct envfile ef;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "X=1\n%sY=2\n", cases[i].text);
		parse(text, &ef);
		assert_int_equal(ef.n_notes, 1);
		assert_int_equal(ef.notes[0].line, 2);
		assert_string_equal(ef.notes[0].text, cases[i].note);
		assert_string_equal(envfile_get(&ef, "X", 0), "1");
		assert_null(envfile_get(&ef, "A", 0));
		/* A quote left open takes the rest of the file, as in the shell. */
		if (strstr(cases[i].note, "quote"))
			assert_null(envfile_get(&ef, "Y", 0));
		else
			assert_string_equal(envfile_get(&ef, "Y", 0), "2");
		envfile_free(&ef);
	}
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void test_read_bounded(void **state)
{
	char dir[] = "/tmp/test_envfile.XXXXXX", path[128], why[256], *text, *big;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ok", dir);
	write_file(path, "A=1\r\n", 5);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), 0);
	assert_int_equal(len, 5);
	assert_string_equal(text, "A=1\r\n");
	free(text);

	big = calloc(1, ENVFILE_MAX_SIZE + 1);
	assert_non_null(big);
	memset(big, '#', ENVFILE_MAX_SIZE);
	write_file(path, big, ENVFILE_MAX_SIZE);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), 0);
	free(text);
	write_file(path, big, ENVFILE_MAX_SIZE + 1);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), -EFBIG);
	assert_null(text);
	assert_non_null(strstr(why, "larger than 64 KiB"));
	free(big);

	write_file(path, "A=1\nB=\0\n", 8);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, ":2: control byte 0x00: a binary file"));
	write_file(path, "A=\x1b]0;x\x07\n", 9);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), -EINVAL);

	/* A FIFO without a writer: refused at once, not waited on. */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "is a FIFO, not a regular file"));
	unlink(path);
	assert_int_equal(envfile_read(dir, &text, &len, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "is a directory"));
	assert_int_equal(envfile_read("/dev/zero", &text, &len, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "is a character device"));
	snprintf(path, sizeof(path), "%s/ok", dir);
	unlink(path);
	assert_int_equal(envfile_read(path, &text, &len, why, sizeof(why)), -ENOENT);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_not_run),
		cmocka_unit_test(test_read_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
