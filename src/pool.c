// SPDX-License-Identifier: GPL-2.0-or-later
/* The consumer side of a source set (pool.h); main thread only. */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "source_internal.h"
#include "util.h"

size_t source_set_held(struct source_set *set)
{
	size_t most = 0;

	for (size_t i = 0; i < set->n; i++)
		if (set->src[i]->ring.slots)
			most = MAX(most, ring_count(&set->src[i]->ring));
	return most;
}

bool source_set_prepare_wait(struct source_set *set, size_t wake_at, bool on_first)
{
	wake_at = MAX(wake_at, 1);
	atomic_store(&set->wake_on_first, on_first);
	atomic_store(&set->wake_at, wake_at);
	atomic_thread_fence(memory_order_seq_cst);
	if (source_set_held(set) >= wake_at) {
		atomic_store(&set->wake_at, 0);
		return false;
	}
	return true;
}

static bool stale(const struct block *b, uint64_t now, uint64_t max_age_ns)
{
	return now > b->time_ns && now - b->time_ns > max_age_ns;
}

/*
 * After the consumer released blocks: the producer waits for half the ring to be free
 * (wait_slot()). Once per batch of releases, not per block: the fence is not free.
 */
static void released(struct source *src)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&src->waiting) && ring_count(&src->ring) <= (src->ring.mask + 1) / 2) {
		pthread_mutex_lock(&src->lock);
		pthread_cond_signal(&src->cond);
		pthread_mutex_unlock(&src->lock);
	}
}

/* Drop the blocks older than max_age_ns from the front of the ring. */
static void drop_stale(struct source *src, uint64_t now, uint64_t max_age_ns)
{
	const struct block *b;
	bool any = false;

	while ((b = ring_read_slot(&src->ring)) && stale(b, now, max_age_ns)) {
		ring_release(&src->ring);
		src->take_off = 0;
		any = true;
	}
	if (any)
		released(src);
}

size_t source_peek(struct source *src, struct iovec *iov, size_t max_iov, size_t n, uint64_t now,
		   uint64_t max_age_ns, size_t *bytes)
{
	size_t used = 0, done = 0, off;
	struct block *b;

	/* Blocks are published in time order: past the first fresh one, all are fresh. */
	drop_stale(src, now, max_age_ns);
	off = src->take_off;
	while (used < max_iov && done < n && (b = ring_peek(&src->ring, used))) {
		size_t k = MIN(n - done, sizeof(b->data) - off);

		iov[used].iov_base = b->data + off;
		iov[used++].iov_len = k;
		done += k;
		off = 0;
	}
	*bytes = done;
	return used;
}

void source_consume(struct source *src, size_t n)
{
	struct block *b;

	bool any = false;

	while (n > 0 && (b = ring_read_slot(&src->ring))) {
		size_t k = MIN(n, sizeof(b->data) - src->take_off);

		n -= k;
		if (src->take_off + k == sizeof(b->data)) {
			ring_release(&src->ring); /* wipes the whole block */
			src->take_off = 0;
			any = true;
			continue;
		}
		wipe(b->data + src->take_off, k);
		src->take_off += k;
	}
	if (any)
		released(src);
}

size_t source_take(struct source *src, uint8_t *buf, size_t n, uint64_t now, uint64_t max_age_ns)
{
	struct iovec iov[8];
	size_t done = 0, got;

	/* source_peek() drops the stale blocks, also when nothing is taken (n == 0). */
	do {
		size_t used =
			source_peek(src, iov, ARRAY_SIZE(iov), n - done, now, max_age_ns, &got);

		for (size_t i = 0; i < used; i++) {
			memcpy(buf + done, iov[i].iov_base, iov[i].iov_len);
			done += iov[i].iov_len;
		}
		source_consume(src, got);
	} while (got > 0 && done < n);
	return done;
}

size_t source_available(struct source *src, uint64_t now, uint64_t max_age_ns)
{
	struct ring *r = &src->ring;
	size_t count = ring_count(r);
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	/* Blocks are published in time order: past the first fresh one, all are fresh. */
	for (size_t i = 0; i < count; i++) {
		const struct block *b = &r->slots[(tail + i) & r->mask];

		if (!stale(b, now, max_age_ns))
			return (count - i) * sizeof(b->data) - (i == 0 ? src->take_off : 0);
	}
	return 0;
}
