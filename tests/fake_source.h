/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A test double of the driver-facing half of source.h, so that one driver can be unit
 * tested without threads or the real framework: make a source for a driver with a list of
 * options, then call the driver's ops directly.
 */
#ifndef RNGD_FAKE_SOURCE_H
#define RNGD_FAKE_SOURCE_H

#include "source.h"

/* opts: "key=value" strings, NULL-terminated (may be NULL). Aborts on bad input. */
struct source *fake_source_new(const struct source_ops *ops, const char *name,
			       const char *const *opts);
void fake_source_free(struct source *src);
/* What the driver set with source_set_quality(), or -1. */
int fake_source_found_quality(const struct source *src);
/* What source_kept_quality() answers for backend (-1: nothing kept). */
void fake_source_keep_quality(struct source *src, const char *backend, int quality);
/* Make source_stopping() true and source_sleep() return -ECANCELED. */
void fake_source_stop(struct source *src);
/* Make source_start_failed() true (the daemon's start failed: fini undoes init). */
void fake_source_abort(struct source *src);
/* Value of a counter registered by the driver, or 0. Total ns slept via source_sleep(). */
uint64_t fake_source_counter(const struct source *src, const char *name);
uint64_t fake_source_slept_ns(const struct source *src);
/* What the driver gave source_notice_once(), or "". */
const char *fake_source_notice(const struct source *src);
/* What the driver last gave source_read_why(), or "". */
const char *fake_source_read_why(const struct source *src);

#endif
