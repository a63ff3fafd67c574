/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libsystemd, loaded on first use. rngd calls four of its functions, and only where systemd
 * is there (NOTIFY_SOCKET, WATCHDOG_USEC, JOURNAL_STREAM): a daemon started anywhere else
 * (rngd -f, an initramfs, a minimal init) never maps libsystemd and the six libraries it
 * pulls in, which under an emulated CPU cost more than all of rngd's own start-up
 * (bench/README.md, "minimal guest"). Thread-safe; the library stays loaded until exit.
 */
#ifndef RNGD_SDLIB_H
#define RNGD_SDLIB_H

#include "config.h"

#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

struct sdlib {
	__typeof__(sd_notify) *notify;
	__typeof__(sd_notify_barrier) *notify_barrier;
	__typeof__(sd_watchdog_enabled) *watchdog_enabled;
	__typeof__(sd_journal_send) *journal_send;
};

/*
 * The functions, loaded by the first call; NULL when libsystemd cannot be loaded (then,
 * when why is not NULL, *why says why: the dynamic linker's message).
 */
const struct sdlib *sdlib_get(const char **why);
#endif

#endif
