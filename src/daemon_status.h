/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the main loop (daemon.c) reports; main thread only, errors logged here. */
#ifndef RNGD_DAEMON_STATUS_H
#define RNGD_DAEMON_STATUS_H

#include <stdbool.h>

#include "daemon.h"

/* SIGUSR1 and stats-interval: one statistics line for the feed, one per source. */
void daemon_stats_line(struct daemon *d);
/*
 * STATUS= for systemd (sent only on change, at most once a second), the status file (every
 * status-interval) and the metrics file (every metrics-interval), from one snapshot; both
 * files now when force_file.
 */
void daemon_update_status(struct daemon *d, bool force_file);
/*
 * STATUS= alone, from a fresh snapshot: after a feed (when no change waits already), and
 * when a change kept back by the once-a-second limit is due (notify_status_due()).
 */
void daemon_notify_status(struct daemon *d);
/* Whether d writes a metrics file: one is set and d is the daemon (not -t, --once, --dump). */
bool daemon_writes_metrics(const struct daemon *d);
/* The metrics file now, when d writes one (at exit). */
void daemon_write_metrics(struct daemon *d);
/* Test mode: the rate line of the last interval, or with final the summary of the run. */
void daemon_test_rate_line(struct daemon *d, bool final);

#endif
