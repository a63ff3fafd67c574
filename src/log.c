// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"

static int max_level = LOG_INFO;
static enum log_target target = LOG_TARGET_STDERR;
static const char *ident;

/* Whether stderr is the journal stream systemd gave us (systemd.exec(5), JOURNAL_STREAM). */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(int level, enum log_target t)
{
	max_level = level;
	if (t == LOG_TARGET_AUTO)
		t = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
	target = t;
}

int log_get_max_level(void)
{
	return max_level;
}

void log_set_ident(const char *s)
{
	ident = s;
}

void log_full(int level, const char *source, const char *event, const char *message_id,
	      const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int saved_errno = errno;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (target == LOG_TARGET_JOURNAL) {
		char f_prio[32], f_src[96], f_ev[96], f_id[64];
		/* sd_journal_send() needs a fixed argument list: unused fields repeat PRIORITY. */
		snprintf(f_prio, sizeof(f_prio), "PRIORITY=%d", level);
		snprintf(f_src, sizeof(f_src), "RNGD_SOURCE=%s", source ? source : "");
		snprintf(f_ev, sizeof(f_ev), "RNGD_EVENT=%s", event ? event : "");
		snprintf(f_id, sizeof(f_id), "MESSAGE_ID=%s", message_id ? message_id : "");
		if (sd_journal_send("MESSAGE=%s%s%s", source ? source : "", source ? ": " : "",
				    msg, "%s", f_prio, "%s", source ? f_src : f_prio, "%s",
				    event ? f_ev : f_prio, "%s", message_id ? f_id : f_prio,
				    NULL) >= 0) {
			errno = saved_errno;
			return;
		}
		/* journald unreachable: fall back to stderr. */
	}
	fprintf(stderr, "%s: %s%s%s\n", ident ? ident : program_invocation_short_name,
		source ? source : "", source ? ": " : "", msg);
	errno = saved_errno;
}
