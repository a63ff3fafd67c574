/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The service manager protocol (sd_notify(3)): READY, STATUS, WATCHDOG, RELOADING,
 * STOPPING. Main thread only. Every function is a no-op returning 0 when NOTIFY_SOCKET is
 * not set (not started by systemd). Functions return 1 when a message was sent, 0 when
 * nothing was sent, -errno when sending failed; they never log. libsystemd is loaded by the
 * first function that has something to send (sdlib.h). Built --without-systemd, every
 * function is a no-op.
 */
#ifndef RNGD_NOTIFY_H
#define RNGD_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Shortest time between two STATUS= messages. */
#define NOTIFY_STATUS_INTERVAL_NS NSEC_PER_SEC

/*
 * Forget the last STATUS sent and any pending one. Call once at start-up. -ELIBACC, and
 * *why says why, when NOTIFY_SOCKET is set but libsystemd cannot be loaded (then nothing is
 * ever sent); 0 otherwise.
 */
int notify_init(const char **why);

/* READY=1: start-up (or a reload) is complete. */
int notify_ready(void);

/*
 * READY=1 with STATUS=<why>, then wait (at most 1 s) until the manager has read it: for a
 * daemon about to exit with "nothing to do here" (66, 77) before it was ready. Without
 * READY=1 systemd counts any exit of a Type=notify service before it as a protocol
 * failure, whatever SuccessExitStatus= says; with it the unit ends inactive, not failed.
 */
int notify_nothing_to_do(const char *why);

/*
 * STATUS=<text> for `systemctl status`. now is CLOCK_MONOTONIC in ns (passed in so tests
 * control time). A text equal to the last one sent is dropped. A new text that comes less
 * than NOTIFY_STATUS_INTERVAL_NS after the previous STATUS is kept pending and sent by a
 * later notify_status() or notify_status_flush() once the interval has passed; a newer
 * text replaces a pending one. Texts longer than 255 bytes are cut.
 */
int notify_status(uint64_t now, const char *fmt, ...) _printf_(2, 3);

/* Send the pending STATUS if there is one and the interval has passed. */
int notify_status_flush(uint64_t now);

/*
 * When the pending STATUS may be sent (CLOCK_MONOTONIC ns, as now above): the caller's
 * wake-up for a fresh notify_status(). UINT64_MAX when none is pending.
 */
uint64_t notify_status_due(void);

/*
 * WATCHDOG=1, but only when healthy is true: the caller passes whether the main loop runs
 * and every source thread is alive or deliberately idle. When it is false nothing is sent,
 * so that systemd restarts a wedged daemon after WatchdogSec=.
 */
int notify_watchdog(bool healthy);

/*
 * The watchdog interval systemd expects pings within (sd_watchdog_enabled(3)): 1 and
 * *ret_usec set when enabled for this process, 0 when not (*ret_usec untouched), -errno.
 * Ping at half the interval.
 */
int notify_watchdog_usec(uint64_t *ret_usec);

/*
 * RELOADING=1 with MONOTONIC_USEC= (systemd >= 253 wants it for Type=notify-reload; older
 * versions ignore it). Follow with notify_ready() when the reload is done.
 */
int notify_reloading(void);

/* STOPPING=1: shutdown has begun. */
int notify_stopping(void);

#endif
