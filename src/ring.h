/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Single-producer/single-consumer ring of tested, time-stamped 2500-byte blocks: a source
 * thread produces, the main thread consumes. Lock-free (C11 acquire/release); waiting is the
 * caller's business. Slots are wiped when consumed.
 */
#ifndef RNGD_RING_H
#define RNGD_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fips.h"

struct block {
	uint64_t time_ns;		/* CLOCK_MONOTONIC when the read that completed it returned */
	unsigned int quality;		/* its credit (bits per 1024), stamped when it was read */
	uint8_t data[FIPS_BLOCK_BYTES];
};

struct ring {
	struct block *slots;
	size_t mask;			/* capacity - 1; capacity is a power of two */
	_Atomic size_t head;		/* next slot to produce, written by the producer */
	_Atomic size_t tail;		/* next slot to consume, written by the consumer */
	size_t touched;			/* slots the producer was ever given, at most capacity */
};

/* capacity is rounded up to a power of two (at least 1). 0 or -ENOMEM. */
int ring_init(struct ring *r, size_t capacity);
/*
 * Wipe and free; r may be zeroed or half-built. Only the slots the producer was ever given
 * are wiped: the rest never held data, and touching them would only fault in zero pages.
 */
void ring_fini(struct ring *r);

/* Producer: the slot to fill next, or NULL when the ring is full. */
struct block *ring_write_slot(struct ring *r);
/*
 * Producer: the i-th free slot from ring_write_slot()'s on (0 is that one), or NULL. The
 * producer may fill free slots ahead; only ring_publish() hands one to the consumer.
 */
struct block *ring_write_ahead(struct ring *r, size_t i);
/* Producer: publish the slot returned by ring_write_slot(). */
void ring_publish(struct ring *r);

/* Consumer: the oldest published block, or NULL when empty. */
struct block *ring_read_slot(struct ring *r);
/* Consumer: the i-th oldest published block (0: ring_read_slot()'s), or NULL. */
struct block *ring_peek(struct ring *r, size_t i);
/* Consumer: wipe and release the block returned by ring_read_slot(). */
void ring_release(struct ring *r);

/* Number of published blocks; exact for the consumer, a lower bound for the producer. */
size_t ring_count(struct ring *r);

#endif
