// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for src/ring.c. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ring.h"
#include "util.h"

static void fill_block(struct block *b, uint64_t n)
{
	uint64_t x = n * 0x9e3779b97f4a7c15ULL + 1;

	b->time_ns = n;
	for (size_t i = 0; i < sizeof(b->data); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b->data[i] = (uint8_t)x;
	}
}

static bool block_is(const struct block *b, uint64_t n)
{
	struct block want;

	fill_block(&want, n);
	return b->time_ns == n && memcmp(b->data, want.data, sizeof(want.data)) == 0;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

static void test_capacity(void **state)
{
	struct ring r = { 0 };

	assert_int_equal(ring_init(&r, 5), 0);
	assert_int_equal(r.mask, 7);
	ring_fini(&r);
	assert_null(r.slots);
	ring_fini(&r);
	assert_int_equal(ring_init(&r, 0), 0);
	assert_int_equal(r.mask, 0);
	assert_non_null(ring_write_slot(&r));
	ring_publish(&r);
	assert_null(ring_write_slot(&r));
	ring_fini(&r);
	assert_int_equal(ring_init(&r, SIZE_MAX), -ENOMEM);
	ring_fini(&r);
}

/* The free slots ahead of the head and the published ones behind the tail, across the wrap. */
static void test_ahead_and_peek(void **state)
{
	struct ring r = { 0 };

	assert_int_equal(ring_init(&r, 4), 0);
	assert_int_equal(r.touched, 0);
	assert_non_null(ring_write_ahead(&r, 1));
	assert_int_equal(r.touched, 2);
	for (int round = 0; round < 3; round++) {
		/* Every slot is free: four ahead, in order, then none. */
		for (size_t i = 0; i < 4; i++)
			assert_ptr_equal(ring_write_ahead(&r, i),
					 &r.slots[(round * 3 + i) & r.mask]);
		assert_null(ring_write_ahead(&r, 4));
		assert_ptr_equal(ring_write_slot(&r), ring_write_ahead(&r, 0));
		for (int i = 0; i < 3; i++) {
			fill_block(ring_write_slot(&r), (uint64_t)(round * 3 + i));
			ring_publish(&r);
		}
		assert_non_null(ring_write_ahead(&r, 0));
		assert_null(ring_write_ahead(&r, 1));
		for (size_t i = 0; i < 3; i++)
			assert_true(block_is(ring_peek(&r, i), (uint64_t)(round * 3) + i));
		assert_null(ring_peek(&r, 3));
		for (int i = 0; i < 3; i++)
			ring_release(&r);
		assert_null(ring_peek(&r, 0));
		assert_int_equal(r.touched, 4); /* never more than the capacity */
	}
	ring_fini(&r);
}

static void test_full_empty_wrap(void **state)
{
	struct ring r = { 0 };
	uint64_t produced = 0, consumed = 0;

	assert_int_equal(ring_init(&r, 4), 0);
	assert_null(ring_read_slot(&r));
	assert_int_equal(ring_count(&r), 0);
	for (int round = 0; round < 10; round++) {
		/* Fill to full, then drain three, so the indices wrap around the slots. */
		struct block *b;

		while ((b = ring_write_slot(&r))) {
			fill_block(b, produced++);
			ring_publish(&r);
		}
		assert_int_equal(ring_count(&r), 4);
		for (int i = 0; i < 3; i++) {
			size_t slot;

			b = ring_read_slot(&r);
			assert_non_null(b);
			assert_true(block_is(b, consumed++));
			slot = (size_t)(b - r.slots);
			ring_release(&r);
			assert_true(all_zero(&r.slots[slot], sizeof(struct block)));
		}
		assert_int_equal(ring_count(&r), 1);
	}
	while (ring_read_slot(&r)) {
		assert_true(block_is(ring_read_slot(&r), consumed++));
		ring_release(&r);
	}
	assert_int_equal(consumed, produced);
	assert_null(ring_read_slot(&r));
	ring_fini(&r);
}

#define STRESS_BLOCKS 20000

static void *producer(void *arg)
{
	struct ring *r = arg;

	for (uint64_t n = 0; n < STRESS_BLOCKS; n++) {
		struct block *b;

		while (!(b = ring_write_slot(r)))
			sched_yield();
		fill_block(b, n);
		ring_publish(r);
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	struct ring r = { 0 };
	pthread_t t;
	uint64_t bad = 0;

	assert_int_equal(ring_init(&r, 4), 0);
	assert_int_equal(pthread_create(&t, NULL, producer, &r), 0);
	for (uint64_t n = 0; n < STRESS_BLOCKS; n++) {
		struct block *b;

		while (!(b = ring_read_slot(&r)))
			sched_yield();
		if (!block_is(b, n))
			bad++;
		ring_release(&r);
	}
	pthread_join(t, NULL);
	assert_int_equal(bad, 0);
	assert_null(ring_read_slot(&r));
	ring_fini(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_ahead_and_peek),
		cmocka_unit_test(test_full_empty_wrap),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
