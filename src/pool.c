// SPDX-License-Identifier: GPL-2.0-or-later
/* The consumer side of a source set (pool.h); main thread only. */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "sink.h"
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
 * (wait_slot()). Once per batch of releases, not per block. The check is made under the
 * source's lock, which wait_slot() holds from its waiting store through its own check of
 * the ring: either this sees it waiting and signals, or it sees the released slots. (A
 * lock-free check would need a full fence on both sides between the store and the load,
 * which ThreadSanitizer cannot model.)
 */
static void released(struct source *src)
{
	pthread_mutex_lock(&src->lock);
	if (atomic_load(&src->waiting) && ring_count(&src->ring) <= (src->ring.mask + 1) / 2)
		pthread_cond_signal(&src->cond);
	pthread_mutex_unlock(&src->lock);
}

void source_drop_stale(struct source *src, uint64_t now, uint64_t max_age_ns)
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
	source_drop_stale(src, now, max_age_ns);
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

/* ---- the pool: every source of a set, in turn ---- */

struct pool {
	struct source_set *set;
	size_t next; /* where the next pool_peek() starts */
	/* Per source, in the order of the set. */
	struct pool_source {
		uint64_t credit_rem; /* credit remainder, 1/1024 bit */
		size_t got;	     /* what the last pool_peek() pointed at ... */
		uint64_t bits;	     /* ... the credit it deserves ... */
		uint64_t next_rem;   /* ... and the remainder once it is fed */
	} *per_src;
};

int pool_new(struct pool **ret, struct source_set *set)
{
	size_t n = source_set_size(set);
	struct pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->per_src = calloc(n ? n : 1, sizeof(*p->per_src));
	if (!p->per_src) {
		free(p);
		return -ENOMEM;
	}
	p->set = set;
	*ret = p;
	return 0;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	free(p->per_src);
	free(p);
}

size_t pool_available(struct pool *p, uint64_t now, uint64_t max_age_ns)
{
	size_t n = 0;

	for (size_t i = 0; i < source_set_size(p->set); i++) {
		struct source *src = source_set_get(p->set, i);

		/* Dropping the stale blocks lets the source read fresh ones. */
		source_drop_stale(src, now, max_age_ns);
		n += source_available(src, now, max_age_ns);
	}
	return n;
}

/*
 * The credit of the n bytes source_peek() just gave of src: each block's at the quality
 * stamped on it when it was read (a backend switched since, or a quality changed since,
 * does not change what an earlier read is worth).
 */
static uint64_t peeked_credit(struct source *src, size_t n, uint64_t *rem,
			      unsigned int max_bits_per_byte)
{
	size_t off = src->take_off;
	uint64_t bits = 0;
	struct block *b;

	for (size_t i = 0; n > 0 && (b = ring_peek(&src->ring, i)); i++) {
		size_t k = MIN(n, sizeof(b->data) - off);

		bits += sink_credit(rem, k, b->quality, max_bits_per_byte);
		n -= k;
		off = 0;
	}
	return bits;
}

size_t pool_peek(struct pool *p, struct iovec *iov, size_t max_iov, size_t n, uint64_t now,
		 uint64_t max_age_ns, unsigned int max_bits_per_byte, size_t *bytes,
		 uint64_t *bits)
{
	size_t count = source_set_size(p->set), used = 0, k = 0, first = count;

	*bits = 0;
	for (size_t j = 0; j < count; j++) {
		size_t i = (p->next + j) % count;
		struct source *src = source_set_get(p->set, i);
		struct pool_source *ps = &p->per_src[i];

		ps->got = 0;
		ps->bits = 0;
		if (k < n && used < max_iov)
			used += source_peek(src, iov + used, max_iov - used, n - k, now, max_age_ns,
					    &ps->got);
		/* The remainder moves on only once the sink took the bytes (pool_consume()). */
		ps->next_rem = ps->credit_rem;
		if (ps->got && max_bits_per_byte)
			ps->bits = peeked_credit(src, ps->got, &ps->next_rem, max_bits_per_byte);
		*bits += ps->bits;
		k += ps->got;
		if (ps->got && first == count)
			first = i;
	}
	/*
	 * The next call starts after the source that gave first: a turn goes to a source
	 * that has data, not to a position in the set (absent and waiting sources hold their
	 * places in it, and would hand their turns to whoever follows them).
	 */
	if (first < count)
		p->next = (first + 1) % count;
	*bytes = k;
	return used;
}

void pool_consume(struct pool *p, bool fed)
{
	for (size_t i = 0; i < source_set_size(p->set); i++) {
		struct source *src = source_set_get(p->set, i);
		struct pool_source *ps = &p->per_src[i];

		if (!ps->got)
			continue;
		source_consume(src, ps->got);
		if (fed) {
			ps->credit_rem = ps->next_rem;
			source_account_fed(src, ps->got, ps->bits);
		}
		ps->got = 0;
		ps->bits = 0;
	}
}
