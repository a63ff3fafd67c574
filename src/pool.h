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

/* Drop the blocks older than max_age_ns from the front of src's ring. */
void source_drop_stale(struct source *src, uint64_t now, uint64_t max_age_ns);
/*
 * One source, main thread only: drop the stale blocks, then point iov[] (at most max_iov
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

/* The pool of a set: its sources in turn, and the credit remainder of each. */
struct pool;

/* A pool over set, which must outlive it. 0 or -ENOMEM. */
int pool_new(struct pool **ret, struct source_set *set);
/* Accepts NULL. Blocks pool_peek() pointed at and not consumed stay in their rings. */
void pool_free(struct pool *p);

/* Drop every source's stale blocks, then return the fresh tested bytes they hold. */
size_t pool_available(struct pool *p, uint64_t now, uint64_t max_age_ns);

/*
 * Point iov[] (at most max_iov entries, one per block) at up to n fresh tested bytes,
 * taking from each source in turn as much as it has, starting with a different source on
 * each call so that none is favoured. Returns the entries used; *bytes gets the bytes
 * they hold and *bits the credit they deserve, each source's quality with its remainder
 * kept, at most max_bits_per_byte per byte (0: no credit, for output). pool_consume() must
 * follow before anything else takes from the set's sources.
 */
size_t pool_peek(struct pool *p, struct iovec *iov, size_t max_iov, size_t n, uint64_t now,
		 uint64_t max_age_ns, unsigned int max_bits_per_byte, size_t *bytes,
		 uint64_t *bits);
/*
 * Wipe and hand back what pool_peek() pointed at; when fed, account the bytes and their
 * credit to each source (source_account_fed()) and commit each source's credit remainder
 * (a failed injection leaves it as it was before pool_peek()).
 */
void pool_consume(struct pool *p, bool fed);

#endif
