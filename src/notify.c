// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify.h"
#include "sdlib.h"

#define STATUS_MAX 256

static struct {
	char last[STATUS_MAX];	/* last STATUS text sent */
	bool sent_any;
	uint64_t last_ns;	/* when it was sent */
	char pending[STATUS_MAX];
	bool has_pending;
} st;

static bool under_systemd(void)
{
	const char *e = getenv("NOTIFY_SOCKET");

	return e && *e;
}

#ifdef HAVE_SYSTEMD
/* sd_notify() returns > 0 when sent, 0 when NOTIFY_SOCKET is unset, -errno on failure. */
static int send_msg(const char *msg)
{
	const struct sdlib *sd;
	int r;

	if (!under_systemd())
		return 0;
	sd = sdlib_get(NULL);
	if (!sd)
		return -ELIBACC;
	r = sd->notify(0, msg);
	if (r < 0)
		return r;
	return r > 0 ? 1 : 0;
}

/* Wait (at most timeout_us) until the manager has read what was sent. */
static void barrier(uint64_t timeout_us)
{
	const struct sdlib *sd = sdlib_get(NULL);

	if (sd)
		(void)sd->notify_barrier(0, timeout_us);
}
#else
/* Built --without-systemd: the protocol is compiled out and nothing is ever sent. */
static int send_msg(const char *msg)
{
	return 0;
}

static void barrier(uint64_t timeout_us)
{
}
#endif

int notify_init(const char **why)
{
	memset(&st, 0, sizeof(st));
#ifdef HAVE_SYSTEMD
	if (under_systemd() && !sdlib_get(why))
		return -ELIBACC;
#endif
	return 0;
}

int notify_ready(void)
{
	return send_msg("READY=1");
}

int notify_nothing_to_do(const char *why)
{
	char msg[STATUS_MAX + 32];
	int r;

	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%.*s", STATUS_MAX - 1, why);
	r = send_msg(msg);
	/*
	 * The manager must have read the message before it sees the exit, or the exit counts
	 * as one before READY=1. The barrier is bounded: a manager that does not answer costs
	 * a second, not a hang.
	 */
	if (r > 0)
		barrier(1000000);
	return r;
}

static bool status_due(uint64_t now)
{
	return !st.sent_any || now - st.last_ns >= NOTIFY_STATUS_INTERVAL_NS;
}

static int send_status(const char *text, uint64_t now)
{
	char msg[STATUS_MAX + 8];
	int r;

	snprintf(msg, sizeof(msg), "STATUS=%s", text);
	r = send_msg(msg);
	/* Sent or not, the next try is an interval later: a pending text is not retried at once. */
	st.last_ns = now;
	if (r <= 0)
		return r;
	snprintf(st.last, sizeof(st.last), "%s", text);
	st.sent_any = true;
	st.last_ns = now;
	st.has_pending = false;
	return 1;
}

int notify_status(uint64_t now, const char *fmt, ...)
{
	char text[STATUS_MAX];
	va_list ap;

	if (!under_systemd())
		return 0;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* Newlines would start a new NAME=VALUE assignment of the protocol. */
	for (char *p = text; *p; p++)
		if (*p == '\n')
			*p = ' ';

	if (st.sent_any && strcmp(text, st.last) == 0) {
		/* Back to what systemd already shows: any pending change is moot. */
		st.has_pending = false;
		return 0;
	}
	if (!status_due(now)) {
		snprintf(st.pending, sizeof(st.pending), "%s", text);
		st.has_pending = true;
		return 0;
	}
	return send_status(text, now);
}

int notify_status_flush(uint64_t now)
{
	char text[STATUS_MAX];

	if (!st.has_pending || !status_due(now))
		return 0;
	memcpy(text, st.pending, sizeof(text));
	return send_status(text, now);
}

uint64_t notify_status_due(void)
{
	return st.has_pending ? st.last_ns + NOTIFY_STATUS_INTERVAL_NS : UINT64_MAX;
}

int notify_watchdog(bool healthy)
{
	if (!healthy)
		return 0;
	return send_msg("WATCHDOG=1");
}

int notify_watchdog_usec(uint64_t *ret_usec)
{
#ifdef HAVE_SYSTEMD
	const struct sdlib *sd;
	uint64_t usec = 0;
	int r;

	/* What sd_watchdog_enabled() answers without it: not asked for. */
	if (!getenv("WATCHDOG_USEC"))
		return 0;
	sd = sdlib_get(NULL);
	if (!sd)
		return -ELIBACC;
	r = sd->watchdog_enabled(0, &usec);
	if (r <= 0)
		return r;
	*ret_usec = usec;
	return 1;
#else
	return 0;
#endif
}

int notify_reloading(void)
{
	char msg[64];

	/* systemd.service(5), Type=notify-reload: CLOCK_MONOTONIC in microseconds. */
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
		 (uint64_t)(now_ns() / NSEC_PER_USEC));
	return send_msg(msg);
}

int notify_stopping(void)
{
	return send_msg("STOPPING=1");
}
