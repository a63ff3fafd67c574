// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "sdlib.h"

/* An identical message within this time of the first is counted, not logged again. */
#define REPEAT_WINDOW_NS (60 * NSEC_PER_SEC)

static int max_level = LOG_INFO;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int level;
	char source[64];
	char msg[1024];
	uint64_t since_ns;
	unsigned int repeats;
} last;
static enum log_target target = LOG_TARGET_STDERR;
static const char *ident;

/* Whether stderr is the journal stream systemd gave us (systemd.exec(5), JOURNAL_STREAM). */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM"), *colon = e ? strchr(e, ':') : NULL;
	uint64_t dev, ino;
	char dev_text[24];
	struct stat st;

	/* "DEV:INO"; parsed without sscanf() (64 KiB of libc's scanf code faulted in). */
	if (!colon || (size_t)(colon - e) >= sizeof(dev_text))
		return false;
	memcpy(dev_text, e, (size_t)(colon - e));
	dev_text[colon - e] = '\0';
	if (parse_uint(dev_text, 0, UINT64_MAX, &dev) < 0 ||
	    parse_uint(colon + 1, 0, UINT64_MAX, &ino) < 0)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(int level, enum log_target t)
{
#ifdef HAVE_SYSTEMD
	const char *why;
#endif

	max_level = level;
	if (t == LOG_TARGET_AUTO)
		t = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
#ifdef HAVE_SYSTEMD
	/* Loaded here, so that a failure is said once, at start, not at some later line. */
	if (t == LOG_TARGET_JOURNAL && !sdlib_get(&why)) {
		fprintf(stderr, "%s: libsystemd cannot be loaded (%s): plain lines on stderr, "
			"without the journal fields\n", ident ? ident : program_invocation_short_name,
			why);
		t = LOG_TARGET_STDERR;
	}
#endif
	target = t;
}

void log_set_ident(const char *s)
{
	ident = s;
}

static void emit(int level, const char *source, const char *event, const char *message_id,
		 const char *msg);

/*
 * Whether msg repeats the last message within REPEAT_WINDOW_NS: then it is only counted.
 * Otherwise the count of the suppressed repeats is logged first, and msg becomes the last.
 */
static bool repeated(int level, const char *source, const char *msg)
{
	uint64_t now = now_ns();
	const char *src = source ? source : "";

	if (last.level == level && strcmp(last.source, src) == 0 && strcmp(last.msg, msg) == 0 &&
	    now - last.since_ns < REPEAT_WINDOW_NS) {
		last.repeats++;
		return true;
	}
	if (last.repeats > 0)
		emit(last.level, last.source[0] ? last.source : NULL, "repeated", NULL, "");
	last.level = level;
	snprintf(last.source, sizeof(last.source), "%s", src);
	snprintf(last.msg, sizeof(last.msg), "%s", msg);
	last.since_ns = now;
	last.repeats = 0;
	return false;
}

void log_flush(void)
{
	pthread_mutex_lock(&lock);
	if (last.repeats > 0)
		emit(last.level, last.source[0] ? last.source : NULL, "repeated", NULL, "");
	last.repeats = 0;
	last.msg[0] = '\0';
	pthread_mutex_unlock(&lock);
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

	pthread_mutex_lock(&lock);
	if (!repeated(level, source, msg))
		emit(level, source, event, message_id, msg);
	pthread_mutex_unlock(&lock);
	errno = saved_errno;
}

/* One line to the journal or stderr; an empty msg reports the repeats of the last one. */
static void emit(int level, const char *source, const char *event, const char *message_id,
		 const char *msg)
{
	char summary[1100], line[1280];
	int n;

	if (!msg[0]) {
		snprintf(summary, sizeof(summary), "last message repeated %u more time%s: %s",
			 last.repeats, last.repeats == 1 ? "" : "s", last.msg);
		msg = summary;
	}

#ifdef HAVE_SYSTEMD
	if (target == LOG_TARGET_JOURNAL) {
		/* Not NULL: log_setup() loaded it before it chose the journal. */
		const struct sdlib *sd = sdlib_get(NULL);
		char f_prio[32], f_src[96], f_ev[96], f_id[64];

		/* sd_journal_send() needs a fixed argument list: unused fields repeat PRIORITY. */
		snprintf(f_prio, sizeof(f_prio), "PRIORITY=%d", level);
		snprintf(f_src, sizeof(f_src), "RNGD_SOURCE=%s", source ? source : "");
		snprintf(f_ev, sizeof(f_ev), "RNGD_EVENT=%s", event ? event : "");
		snprintf(f_id, sizeof(f_id), "MESSAGE_ID=%s", message_id ? message_id : "");
		if (sd->journal_send("MESSAGE=%s%s%s", source ? source : "", source ? ": " : "",
				     msg, "%s", f_prio, "%s", source ? f_src : f_prio, "%s",
				     event ? f_ev : f_prio, "%s", message_id ? f_id : f_prio,
				     NULL) >= 0)
			return;
		/* journald unreachable: fall back to stderr. */
	}
#endif
	/*
	 * Built --without-systemd, the journal target is plain stderr lines too: each one
	 * formatted whole and written with one write(), not through stdio.
	 */
	n = snprintf(line, sizeof(line), "%s: %s%s%s\n",
		     ident ? ident : program_invocation_short_name, source ? source : "",
		     source ? ": " : "", msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	(void)write_full(STDERR_FILENO, line, (size_t)n);
}
