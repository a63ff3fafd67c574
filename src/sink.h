/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where tested entropy goes: the kernel (RNDADDENTROPY with honest credit, RNDRESEEDCRNG)
 * or, in output mode, a file, FIFO or stdout (plain write, no credit). Also the feeding
 * policy, as pure functions of a clock and the kernel's state so that tests drive it.
 * Nothing here logs above debug level; errors are returned as -errno.
 */
#ifndef RNGD_SINK_H
#define RNGD_SINK_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum kernel_gen {
	KERNEL_MODERN,		/* poolsize 256: credit counts only before the CRNG is ready */
	KERNEL_LEGACY,		/* poolsize 4096: POLLOUT below the write-wakeup threshold */
};

/* An open sink; opaque, owned by the main thread. */
struct sink;

/*
 * Open path into a new sink, *ret (left untouched on failure). A character device with the
 * random driver's numbers (1:8, 1:9) makes a kernel sink; anything else (regular file, FIFO,
 * /dev/stdout) an output sink. "-" is stdout. procdir NULL means /proc/sys/kernel/random.
 * 0 or -errno.
 */
int sink_open(struct sink **ret, const char *path, const char *procdir);
/*
 * sink_open() with the output rules: an output that is a block device or a memory device
 * (/dev/mem, /dev/kmem, /dev/port) is refused (-EINVAL), and an existing regular file that
 * is not empty is refused (-EEXIST) unless flags has SINK_OVERWRITE (then it is
 * truncated); why (may be NULL) says why in one line.
 */
#define SINK_OVERWRITE 1u
int sink_open_flags(struct sink **ret, const char *path, const char *procdir, unsigned int flags,
		    char *why, size_t len);
/* Close and free s (NULL is fine). Returns NULL, for s = sink_close(s). */
struct sink *sink_close(struct sink *s);
/* Whether s writes to an output (file, FIFO, stdout): plain writes, no ioctls, no credit. */
bool sink_is_output(const struct sink *s);
/* The random driver's generation behind a kernel sink; KERNEL_MODERN for an output. */
enum kernel_gen sink_generation(const struct sink *s);

/* Kernel generation from procdir/poolsize (4096 legacy, else modern). */
int sink_detect_generation(const char *procdir, enum kernel_gen *ret);
/* Whether the CRNG is initialised: getrandom(GRND_NONBLOCK) succeeds. */
bool sink_crng_ready(void);
/* Legacy: current entropy_avail in bits, or -errno. */
int sink_entropy_avail(struct sink *s);
/* Legacy: write_wakeup_threshold (bits). 0 or -errno. */
int sink_set_watermark(struct sink *s, unsigned int bits);

/*
 * Credit arithmetic. bits = bytes * 8 * quality / 1024, the sub-bit remainder carried in
 * *rem (units of 1/1024 bit) to the next call, never more than max_bits_per_byte * bytes
 * (max_bits_per_byte 1..8).
 */
uint64_t sink_credit(uint64_t *rem, size_t bytes, unsigned int quality,
		     unsigned int max_bits_per_byte);

/*
 * RNDADDENTROPY of n bytes credited with bits (<= 8 * n, enforced). EFAULT is retried
 * once. -EPERM means no CAP_SYS_ADMIN. Output mode writes the bytes instead.
 */
int sink_add_entropy(struct sink *s, const uint8_t *buf, size_t n, unsigned int bits);
/* Output mode: write cnt buffers (iov[] is used up). 0 or -errno; -EINVAL when feeding. */
int sink_write_iov(struct sink *s, struct iovec *iov, int cnt);
/*
 * Whether the kernel lets us feed it: an empty RNDADDENTROPY (no data, no credit).
 * 0, -EPERM without CAP_SYS_ADMIN, other -errno. Always 0 in output mode.
 */
int sink_check_access(struct sink *s);
/* RNDRESEEDCRNG; ENODATA (CRNG not ready) is not an error. 0 or -errno. */
int sink_reseed(struct sink *s);

/*
 * The main loop's wait on the sink, the one place that knows when the kernel is worth
 * polling. Before poll(): sets *pfd to what to wait for (fd -1: nothing; s NULL is no sink)
 * and returns the longest the loop may then sleep in ms, -1 for no limit of the sink's.
 * Only a legacy kernel sink waits, for POLLOUT ("below the write-wakeup threshold"), and
 * never longer than interval_ns, the feed interval; and only while POLLOUT means "feed
 * me": not when the kernel's write_wakeup_threshold is above the daemon's watermark (the
 * kernel then polls writable while the daemon would not refill), and not for an interval
 * after a POLLOUT that sink_feed_state() found needs no refill (a device that always polls
 * writable, like /dev/urandom). Then the loop sleeps until its feed timer, which checks
 * entropy_avail every interval. The loop skips the wait when it has nothing to give.
 */
int sink_prepare_wait(struct sink *s, uint64_t interval_ns, struct pollfd *pfd);
/*
 * After poll(): revents of the pollfd from sink_prepare_wait(). Returns 1 when the kernel
 * asks to be fed (POLLOUT, or POLLERR/POLLHUP: a write will tell), 0 when not, -EBADF on
 * POLLNVAL.
 */
int sink_wait_done(struct sink *s, short revents);

/*
 * Feeding policy. The main loop asks feed_plan() what to do now; it returns how many
 * bytes to inject (0: nothing) and sets *next_ns to the monotonic time at which to ask
 * again (the loop also asks when new blocks arrive).
 *  - CRNG not ready: as much as is available, right away.
 *  - first injection: as soon as the first block passed, ready or not.
 *  - modern, ready: feed_bytes every feed_interval.
 *  - legacy, ready: when the kernel polls writable (or every feed_interval at most),
 *    refill to the watermark.
 */
struct feed_policy {
	enum kernel_gen gen;
	uint64_t interval_ns;
	size_t feed_bytes;
	bool output_mode;	/* output sink: write every block at once */
	bool fed_once;
	uint64_t last_feed_ns;
};

struct feed_state {
	uint64_t now_ns;
	bool crng_ready;
	bool writable;			/* legacy: POLLOUT seen */
	int entropy_avail;		/* legacy: bits */
	unsigned int watermark;		/* legacy: bits */
	size_t available;		/* fresh tested bytes waiting in the sources */
};

/*
 * The kernel's side of st for feed_plan(): on a legacy kernel sink, entropy_avail (-errno
 * when unknown), watermark (bits, the threshold the daemon set) and writable; nothing
 * otherwise. Also reads the kernel's write_wakeup_threshold, and notes a POLLOUT that
 * asked for nothing (see sink_prepare_wait()).
 */
void sink_feed_state(struct sink *s, unsigned int watermark, struct feed_state *st);

void feed_policy_init(struct feed_policy *p, enum kernel_gen gen, uint64_t interval_ns,
		      size_t feed_bytes, bool output_mode);
size_t feed_plan(const struct feed_policy *p, const struct feed_state *st, uint64_t *next_ns);
/* Record that bytes were injected at now_ns. */
void feed_done(struct feed_policy *p, uint64_t now_ns, size_t bytes);

#endif
