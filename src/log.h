/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging. Foreground: one plain line per message on stderr. Under journald: structured
 * journal entries (RNGD_SOURCE=, RNGD_EVENT=, MESSAGE_ID=). Levels are the syslog ones. Safe to call
 * from any thread; never allocates on the heap.
 */
#ifndef RNGD_LOG_H
#define RNGD_LOG_H

#include <stdbool.h>
#include <syslog.h>

#include "util.h"

enum log_target {
	LOG_TARGET_AUTO,	/* journal if stderr is connected to it (JOURNAL_STREAM), else stderr */
	LOG_TARGET_STDERR,
	LOG_TARGET_JOURNAL,
};

/* Set the most verbose level printed (LOG_ERR..LOG_DEBUG) and where lines go. */
void log_setup(int max_level, enum log_target target);
/* Prefix for stderr lines, e.g. "rngd"; default program_invocation_short_name. */
void log_set_ident(const char *ident);

/*
 * Log one message. source names the entropy source concerned (or NULL), event is a short
 * machine-readable event name (or NULL), message_id a 32-hex-digit id for events that
 * operators alert on (or NULL). On stderr a source's name prefixes the message.
 */
void log_full(int level, const char *source, const char *event, const char *message_id,
	      const char *fmt, ...) _printf_(5, 6);

/*
 * Repeats: a message identical to the previous one (level, source, text) within 60 s of its
 * first occurrence is counted instead of logged; "last message repeated N more times" is
 * logged before the next different message, or by log_flush() (at exit).
 */
void log_flush(void);

#define log_error(...) log_full(LOG_ERR, NULL, NULL, NULL, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, NULL, NULL, NULL, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, NULL, NULL, NULL, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, NULL, NULL, NULL, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, NULL, NULL, NULL, __VA_ARGS__)

#endif
