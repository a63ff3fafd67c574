/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon module's own helpers, shared by the loop (daemon.c) and its reload
 * (daemon_reload.c); main thread only.
 */
#ifndef RNGD_DAEMON_INTERNAL_H
#define RNGD_DAEMON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon.h"

/*
 * Threads still in a driver's read after this are left to the process exit: a thread
 * that is not in a read stops within microseconds of being asked.
 */
#define STOP_LIMIT_NS NSEC_PER_MSEC

/* The ring size and batch for the mode: streaming modes hold more. */
void daemon_setup_ring(struct daemon *d, struct source_set *set);
/* A pool over d->set for the consumer side. 0 or -ENOMEM. */
int daemon_setup_pool(struct daemon *d);
/* The feed policy for the sink and keys; keep_history keeps when it last fed. */
void daemon_setup_policy(struct daemon *d, bool keep_history);
/* Set the next tick for the period the state calls for (from now). */
void daemon_reset_tick(struct daemon *d);
/* Sources that are not absent (running, starting, waiting or backing off). */
size_t daemon_usable_sources(struct daemon *d);
/* SIGHUP: reload the configuration. 0 (also when the old one was kept) or -errno (fatal). */
int daemon_reload(struct daemon *d);
/* Join retired sets whose threads have left their reads. */
void daemon_reap_retired(struct daemon *d);

#endif
