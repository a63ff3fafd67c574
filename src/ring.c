// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "ring.h"
#include "util.h"

/*
 * head and tail count slots forever (size_t wraps, which is fine because the capacity is a
 * power of two): the ring holds head - tail published blocks. The producer publishes with
 * a release store of head after filling a slot, the consumer releases with a release store
 * of tail after wiping one; each side reads the other's index with acquire.
 */

/* Rings of this size or more are mapped pages of their own, not malloc's. */
#define RING_MAP_BYTES (64 * 1024)

static bool ring_mapped(size_t cap)
{
	return cap * sizeof(struct block) >= RING_MAP_BYTES;
}

int ring_init(struct ring *r, size_t capacity)
{
	size_t cap = 1;

	while (cap < capacity) {
		if (cap > SIZE_MAX / 2 / sizeof(struct block))
			return -ENOMEM;
		cap <<= 1;
	}
	/*
	 * malloc, not calloc: a slot is read only after the producer filled it, and calloc's
	 * memset would make every page of every ring resident at start (5 rings of 10 KiB in
	 * the default set, most of them idle or never opened).
	 * A large ring (streaming: 256 blocks, 628 KiB) gets pages of its own, given back
	 * whole by ring_fini(). From malloc's heap (glibc's mmap threshold rises to the size
	 * of the first mapped chunk freed: the configuration's 1 MiB read buffer), each
	 * reload's rings landed elsewhere in it and their freed pages stayed resident:
	 * [heap] 672 -> 1,400 kB over the first 100 reloads of rngd -t (tests/reload-soak.sh).
	 */
	if (ring_mapped(cap)) {
		void *p = mmap(NULL, cap * sizeof(struct block), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		r->slots = p == MAP_FAILED ? NULL : p;
	} else {
		r->slots = malloc(cap * sizeof(struct block));
	}
	if (!r->slots)
		return -ENOMEM;
	r->mask = cap - 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->touched = 0;
	return 0;
}

void ring_fini(struct ring *r)
{
	if (!r->slots)
		return;
	wipe(r->slots, r->touched * sizeof(struct block));
	if (ring_mapped(r->mask + 1))
		munmap(r->slots, (r->mask + 1) * sizeof(struct block));
	else
		free(r->slots);
	r->slots = NULL;
	r->mask = 0;
	r->touched = 0;
}

struct block *ring_write_ahead(struct ring *r, size_t i)
{
	size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);

	if (head - tail + i > r->mask)
		return NULL;
	/* Slots are handed out in order from 0, so the first capacity are all there are. */
	if (r->touched <= r->mask && head + i >= r->touched)
		r->touched = MIN(head + i + 1, r->mask + 1);
	return &r->slots[(head + i) & r->mask];
}

struct block *ring_write_slot(struct ring *r)
{
	return ring_write_ahead(r, 0);
}

void ring_publish(struct ring *r)
{
	size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

struct block *ring_read_slot(struct ring *r)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	size_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	if (head == tail)
		return NULL;
	return &r->slots[tail & r->mask];
}

struct block *ring_peek(struct ring *r, size_t i)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	size_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	if (head - tail <= i)
		return NULL;
	return &r->slots[(tail + i) & r->mask];
}

void ring_release(struct ring *r)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	wipe(&r->slots[tail & r->mask], sizeof(struct block));
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}

size_t ring_count(struct ring *r)
{
	size_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	size_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	return head - tail;
}
