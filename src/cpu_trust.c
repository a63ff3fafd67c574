// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * random.trust_cpu= on the kernel command line, read as the kernel reads it (cpu_trust.h).
 * The kernel trusts the CPU's RNG by default (since 6.2 always; before, per
 * CONFIG_RANDOM_TRUST_CPU); an administrator who says otherwise on the command line has
 * decided not to credit RDSEED/RDRAND/RNDR, and rngd must not quietly credit them instead:
 * on 5.18+ kernels its credit would be the only one that changes anything.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_trust.h"

int cpu_trust_parse_bool(const char *s, bool *res)
{
	if (!s)
		return -EINVAL;
	/*
	 * Current kernels' kstrtobool(). Older ones knew only y/n/1/0/on/off and ignored
	 * "false" (kept trusting): rngd takes the administrator at their word either way,
	 * since crediting less is the safe side of a disagreement.
	 */
	if (s[0] == 'o' || s[0] == 'O') { /* "on", "off" */
		if (s[1] == 'n' || s[1] == 'N' || s[1] == 'f' || s[1] == 'F') {
			*res = s[1] == 'n' || s[1] == 'N';
			return 0;
		}
		return -EINVAL;
	}
	if (s[0] && strchr("yYtTeE1", s[0])) {
		*res = true;
		return 0;
	}
	if (s[0] && strchr("nNfFdD0", s[0])) {
		*res = false;
		return 0;
	}
	return -EINVAL;
}

/* The kernel's parameq(): equal names, '-' and '_' the same. */
static bool param_eq(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;

		if (x != y)
			return false;
		if (!x)
			return true;
	}
}

/*
 * One word of the command line from p, as the kernel's next_arg() splits it: into word
 * (a copy, quotes removed as the kernel removes them), its name and its value (NULL
 * without '='). Returns where the next word starts.
 */
static const char *next_word(const char *p, char *word, char **name, char **val)
{
	size_t i, eq = 0, n;
	bool in_quote = false, quoted = false;

	if (*p == '"') {
		p++;
		in_quote = quoted = true;
	}
	for (i = 0; p[i]; i++) {
		if (isspace((unsigned char)p[i]) && !in_quote)
			break;
		if (eq == 0 && p[i] == '=')
			eq = i; /* as in the kernel, an '=' first in the word does not count */
		if (p[i] == '"')
			in_quote = !in_quote;
	}
	n = i;
	memcpy(word, p, n);
	word[n] = '\0';
	*name = word;
	*val = NULL;
	if (eq) {
		word[eq] = '\0';
		*val = word + eq + 1;
		if (**val == '"') {
			(*val)++;
			if (n > 0 && word[n - 1] == '"')
				word[n - 1] = '\0';
		}
	}
	if (quoted && n > 0 && word[n - 1] == '"')
		word[n - 1] = '\0';
	p += n;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

void cpu_trust_parse(const char *cmdline, struct cpu_trust *out)
{
	const char *p = cmdline;
	char *word, *name, *val;

	out->distrusted = false;
	out->setting[0] = '\0';
	if (!p)
		return;
	word = malloc(strlen(p) + 1);
	if (!word)
		return;
	while (isspace((unsigned char)*p))
		p++;
	while (*p) {
		bool b;

		p = next_word(p, word, &name, &val);
		if (!val && strcmp(name, "--") == 0)
			break; /* the rest is init's (kernel/params.c parse_args()) */
		if (!param_eq(name, CPU_TRUST_PARAM))
			continue;
		if (cpu_trust_parse_bool(val, &b) < 0)
			continue; /* ignored by the kernel too ("Malformed early option") */
		out->distrusted = !b;
		snprintf(out->setting, sizeof(out->setting), "%s=%.16s", CPU_TRUST_PARAM, val);
	}
	free(word);
}

int cpu_trust_get(struct cpu_trust *out)
{
	char *text = NULL;
	int r = cpu_trust_read_cmdline(&text);

	cpu_trust_parse(r < 0 ? NULL : text, out);
	free(text);
	return r < 0 ? r : 0;
}
