// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/notify.c against a fake NOTIFY_SOCKET: an AF_UNIX datagram socket
 * bound in a temporary directory, read back after every call (sd_notify() sends
 * synchronously, so a message is queued by the time the call returns).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "notify.h"
#include "util.h"

#define SEC NSEC_PER_SEC

/* Built --without-systemd every function is a no-op: only test_not_under_systemd applies. */
#ifdef HAVE_SYSTEMD
#define SKIP_WITHOUT_SYSTEMD() ((void)0)
#else
#define SKIP_WITHOUT_SYSTEMD()                                                              \
	do {                                                                                \
		print_message("built --without-systemd: nothing is sent; skipped\n");      \
		skip();                                                                     \
	} while (0)
#endif

struct fake {
	char dir[64];
	char path[96]; /* fits sun_path (108) */
	int fd;
};

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rngd-test-notify-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/notify", f->dir);
	f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", f->path, 1), 0);
	assert_int_equal(notify_init(NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	close(f->fd);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The next queued message, or "" when none is queued. */
static const char *next_msg(struct fake *f)
{
	static char buf[1024];
	ssize_t n = recv(f->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n < 0) {
		assert_int_equal(errno, EAGAIN);
		n = 0;
	}
	buf[n] = '\0';
	return buf;
}

static void expect_msg(struct fake *f, const char *want)
{
	assert_string_equal(next_msg(f), want);
}

static void expect_none(struct fake *f)
{
	assert_string_equal(next_msg(f), "");
}

static void expect_reloading(struct fake *f)
{
	const char *m = next_msg(f);
	const char *prefix = "RELOADING=1\nMONOTONIC_USEC=";
	uint64_t usec, now = now_ns() / NSEC_PER_USEC;

	assert_memory_equal(m, prefix, strlen(prefix));
	assert_int_equal(parse_uint(m + strlen(prefix), 1, UINT64_MAX, &usec), 0);
	/* Sent a moment ago on CLOCK_MONOTONIC. */
	assert_true(usec <= now && now - usec < 60 * 1000000ULL);
}

/* A whole life: start, status updates, reload, a wedged source, stop. */
static void test_lifecycle(void **state)
{
	struct fake *f = *state;
	uint64_t t = 1000 * SEC;
	bool healthy = true;

	SKIP_WITHOUT_SYSTEMD();
	/* Start: status while waiting for the first injection, then READY. */
	assert_int_equal(notify_status(t, "Starting: %d sources", 2), 1);
	expect_msg(f, "STATUS=Starting: 2 sources");
	assert_int_equal(notify_ready(), 1);
	expect_msg(f, "READY=1");
	assert_int_equal(notify_watchdog(healthy), 1);
	expect_msg(f, "WATCHDOG=1");

	/* Status: the same text again is not sent, even much later. */
	assert_int_equal(notify_status(t + 5 * SEC, "Starting: %d sources", 2), 0);
	expect_none(f);
	assert_true(notify_status_due() == UINT64_MAX);
	t += 5 * SEC;
	assert_int_equal(notify_status(t, "Feeding: 64 bytes fed"), 1);
	expect_msg(f, "STATUS=Feeding: 64 bytes fed");
	assert_true(notify_status_due() == UINT64_MAX);
	/* A change within a second waits (due a second after the last one sent); a newer change
	 * replaces it. */
	assert_int_equal(notify_status(t + SEC / 10, "Feeding: 128 bytes fed"), 0);
	assert_true(notify_status_due() == t + SEC);
	assert_int_equal(notify_status(t + SEC / 2, "Feeding: 192 bytes fed"), 0);
	assert_true(notify_status_due() == t + SEC);
	expect_none(f);
	assert_int_equal(notify_status_flush(t + SEC - 1), 0);
	expect_none(f);
	assert_int_equal(notify_status_flush(t + SEC), 1);
	expect_msg(f, "STATUS=Feeding: 192 bytes fed");
	assert_true(notify_status_due() == UINT64_MAX);
	assert_int_equal(notify_status_flush(t + 3 * SEC), 0);
	expect_none(f);
	t += SEC;
	/* A change that comes back to the shown text before it was due is dropped. */
	assert_int_equal(notify_status(t + SEC / 2, "Feeding: 256 bytes fed"), 0);
	assert_int_equal(notify_status(t + SEC / 2, "Feeding: 192 bytes fed"), 0);
	assert_true(notify_status_due() == UINT64_MAX);
	assert_int_equal(notify_status_flush(t + 2 * SEC), 0);
	expect_none(f);
	/* A pending change is sent by the next due notify_status() too. */
	assert_int_equal(notify_status(t + 2 * SEC, "Feeding: 320 bytes fed"), 1);
	expect_msg(f, "STATUS=Feeding: 320 bytes fed");
	t += 2 * SEC;
	/* Newlines cannot smuggle in another assignment. */
	assert_int_equal(notify_status(t + SEC, "a\nREADY=1"), 1);
	expect_msg(f, "STATUS=a READY=1");
	t += SEC;

	/* Reload. */
	assert_int_equal(notify_reloading(), 1);
	expect_reloading(f);
	assert_int_equal(notify_ready(), 1);
	expect_msg(f, "READY=1");
	assert_int_equal(notify_watchdog(healthy), 1);
	expect_msg(f, "WATCHDOG=1");

	/* A source thread wedges: the health check fails, no WATCHDOG for as long as it lasts. */
	healthy = false;
	for (int i = 0; i < 5; i++)
		assert_int_equal(notify_watchdog(healthy), 0);
	assert_int_equal(notify_status(t + SEC, "hwrng: wedged"), 1);
	expect_msg(f, "STATUS=hwrng: wedged");
	expect_none(f);
	healthy = true;
	assert_int_equal(notify_watchdog(healthy), 1);
	expect_msg(f, "WATCHDOG=1");

	/* Stop. */
	assert_int_equal(notify_stopping(), 1);
	expect_msg(f, "STOPPING=1");
	expect_none(f);
}

/*
 * A STATUS= that cannot be sent (the manager's socket gone) stays pending and is due an
 * interval after the try, not at once: the main loop waits for notify_status_due().
 */
static void test_status_send_fails(void **state)
{
	struct fake *f = *state;
	uint64_t t = 100 * SEC;

	SKIP_WITHOUT_SYSTEMD();
	assert_int_equal(notify_status(t, "one"), 1);
	expect_msg(f, "STATUS=one");
	assert_int_equal(notify_status(t + SEC / 2, "two"), 0);
	assert_true(notify_status_due() == t + SEC);
	assert_int_equal(unlink(f->path), 0);
	assert_true(notify_status_flush(t + SEC) < 0);
	assert_true(notify_status_due() == t + 2 * SEC);
	assert_int_equal(notify_status_flush(t + SEC + SEC / 2), 0); /* not due: not tried */
}

static void test_long_status_cut(void **state)
{
	struct fake *f = *state;
	char big[600], want[300];

	SKIP_WITHOUT_SYSTEMD();
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(notify_status(SEC, "%s", big), 1);
	snprintf(want, sizeof(want), "STATUS=%.255s", big);
	expect_msg(f, want);
}

static void test_not_under_systemd(void **state)
{
	struct fake *f = *state;
	uint64_t usec = 42;

	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(notify_ready(), 0);
	assert_int_equal(notify_status(SEC, "x"), 0);
	assert_int_equal(notify_status(3 * SEC, "y"), 0);
	assert_int_equal(notify_status_flush(10 * SEC), 0);
	assert_int_equal(notify_watchdog(true), 0);
	assert_int_equal(notify_reloading(), 0);
	assert_int_equal(notify_stopping(), 0);
	assert_int_equal(notify_watchdog_usec(&usec), 0);
	assert_true(usec == 42);
	expect_none(f);
	/* An empty NOTIFY_SOCKET is the same as none. */
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(notify_ready(), 0);
	expect_none(f);
}

static void test_watchdog_usec(void **state)
{
	char pid[32];
	uint64_t usec = 0;

	SKIP_WITHOUT_SYSTEMD();
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(notify_watchdog_usec(&usec), 0);
	setenv("WATCHDOG_USEC", "30000000", 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(notify_watchdog_usec(&usec), 1);
	assert_true(usec == 30000000);
	/* Meant for another process (a parent that forked us). */
	setenv("WATCHDOG_PID", "1", 1);
	assert_int_equal(notify_watchdog_usec(&usec), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_send_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_status_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_under_systemd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watchdog_usec, setup, teardown),
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

#ifndef HAVE_SYSTEMD
	if (!failed) {
		printf("SKIP: built --without-systemd: the sd_notify protocol was not tested\n");
		return 77;
	}
#endif
	return failed;
}
