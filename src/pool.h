/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The consumer side of a source set, main thread only: fresh tested blocks across all
 * sources, taken from each in turn, never older than max-age, each byte handed out once,
 * and the credit each source's bytes deserve (with its remainder kept per source). The
 * daemon's loop takes through pool_peek()/pool_consume() for the kernel feed and for the
 * output stream alike.
 */
#ifndef RNGD_POOL_H
#define RNGD_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "source_set.h"

/*
 * The consumer is about to sleep in poll(): returns false when a ring already holds
 * wake_at blocks (do not sleep). Otherwise a source thread writes to wake_fd when a block
 * it publishes brings its ring to wake_at blocks, or, with on_first, is the only one in
 * its ring: a consumer waiting for a batch learns that something is pending and can set
 * its own deadline for the rest (without on_first, it must have one anyway). Source
 * threads write to wake_fd for a block only after this call, so that a busy consumer is
 * not woken once per block; state changes always wake it.
 */
bool source_set_prepare_wait(struct source_set *set, size_t wake_at, bool on_first);
/* Consumer: the most blocks any ring holds. */
size_t source_set_held(struct source_set *set);

/*
 * Consumer side, main thread only. Drop blocks older than max_age_ns, then copy up to n
 * tested bytes into buf from the oldest fresh block on; returns the bytes copied. Bytes
 * handed out are never handed out again.
 */
size_t source_take(struct source *src, uint8_t *buf, size_t n, uint64_t now, uint64_t max_age_ns);
/*
 * The same without a copy: drop the stale blocks, then point iov[] (at most max_iov
 * entries, one per block) at up to n tested bytes from the oldest fresh one on. Returns the
 * entries used; *bytes gets the bytes they hold. They stay in the ring until
 * source_consume(), which must follow before anything else takes from this source.
 */
size_t source_peek(struct source *src, struct iovec *iov, size_t max_iov, size_t n, uint64_t now,
		   uint64_t max_age_ns, size_t *bytes);
/* Wipe and hand back the first n bytes source_peek() pointed at. */
void source_consume(struct source *src, size_t n);
/* Fresh tested bytes ready to take. */
size_t source_available(struct source *src, uint64_t now, uint64_t max_age_ns);

#endif
