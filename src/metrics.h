/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The status snapshot (stats.h, struct status_doc) as metrics for Prometheus, in the text
 * exposition format (version 0.0.4) that node_exporter's textfile collector reads and
 * `promtool check metrics` lints: "# HELP" and "# TYPE" on every family, base units,
 * "_total" on counters. Made from the same struct as the status document, by the daemon
 * (metrics-file) and by `rngd --status --format=openmetrics` (from the status file): one
 * source of truth, no counters of its own. Every metric is described in rngd(8), METRICS.
 * Knows nothing of sources or threads; does not log.
 */
#ifndef RNGD_METRICS_H
#define RNGD_METRICS_H

#include <stdio.h>

#include "stats.h"

/* Default metrics-interval, seconds. */
#define METRICS_INTERVAL_DEFAULT 15

/* The source states a source's rngd_source_state family lists (source_state_name()). */
extern const char *const metrics_source_states[];
extern const size_t metrics_n_source_states;

/*
 * Write doc's metrics to out. Times are whole seconds (what the status document keeps),
 * so that both ways of making them agree. 0, or -EIO when out has an error.
 */
int metrics_format(const struct status_doc *doc, FILE *out);

/*
 * The same into a file, atomically (stats_write_file(): a temporary in the directory,
 * opened through a directory fd with O_NOFOLLOW, then renamed over path). The directory is
 * never created: -ENOENT when it is missing. 0 or -errno.
 */
int metrics_write(const char *path, const struct status_doc *doc);

#endif
