/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by every module: checked number parsing, clocks, full reads and
 * writes, sysfs-style text files. None of them log; all return 0/bytes or -errno.
 */
#ifndef RNGD_UTIL_H
#define RNGD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define _noinline_ __attribute__((noinline))

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

/*
 * Parse an unsigned decimal integer in [min, max]. Leading and trailing blanks are not
 * accepted, nor signs, nor a base prefix. Returns 0 and sets *ret, -EINVAL on junk,
 * -ERANGE when out of range. *ret is untouched on failure.
 */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/*
 * parse_uint() that also says why a value is refused, in the words every error message of
 * rngd uses: "'x' is out of range 1..8", "'x' is not a decimal number". -EINVAL on failure.
 */
int parse_uint_why(const char *s, uint64_t min, uint64_t max, uint64_t *ret, char *why,
		   size_t len);

/* Parse yes/no, true/false, on/off, 1/0 (case-insensitive). 0 or -EINVAL. */
int parse_bool(const char *s, bool *ret);

/* CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds. */
uint64_t now_ns(void);
uint64_t realtime_ns(void);

/*
 * UTC calendar time, proleptic Gregorian, without gmtime_r()/timegm(): those read the
 * time-zone file (/etc/localtime, onto the heap) and fault in libc's time-zone and strftime
 * code for times that are UTC anyway. mon 1..12, mday 1..31.
 */
struct utc_time {
	int64_t year;
	unsigned int mon, mday, hour, min, sec;
};
void utc_from_seconds(int64_t t, struct utc_time *ret);
/*
 * Seconds since the epoch into *ret: 0, or -EINVAL when a field is out of range (leap
 * second 60 allowed). The error is not in the result: every int64_t there is a time.
 */
int utc_to_seconds(const struct utc_time *u, int64_t *ret);

/*
 * Read until n bytes, end of file or an error. EINTR is retried. Returns the number of
 * bytes read (less than n only at end of file), or -errno if nothing could be read.
 */
ssize_t read_full(int fd, void *buf, size_t n);

/* Write all n bytes, retrying short writes and EINTR. 0 or -errno. */
int write_full(int fd, const void *buf, size_t n);
/* The same for cnt buffers (iov[] is updated as they go out). 0 or -errno. */
int writev_full(int fd, struct iovec *iov, int cnt);

/*
 * Read a small text file (sysfs, procfs) into buf, NUL-terminated, trailing newline
 * removed. Returns the length or -errno (-EFBIG when it does not fit).
 */
ssize_t read_text_file(const char *path, char *buf, size_t size);

/*
 * Read a file of unknown size, up to max bytes (the rest is left unread), into *text: a
 * buffer of malloc() NUL-terminated, the caller's to free. It starts at 4 KiB and grows only
 * for a longer file, so a short one leaves no large buffer's far page in the heap. Returns
 * the length or -errno, with *text NULL.
 */
ssize_t read_text_alloc(const char *path, size_t max, char **text);

/* Write value followed by a newline to path in one write(). 0 or -errno. */
int write_text_file(const char *path, const char *value);

/*
 * The kernel's own random device that st is (char 1:8 "/dev/random", 1:9 "/dev/urandom",
 * Documentation/admin-guide/devices.txt), else NULL.
 */
struct stat;
const char *kernel_random_device(const struct stat *st);
/*
 * Same for a path, by its resolved name and by its device number (symlinks and other
 * device nodes included). Feeding the kernel its own output back as entropy is the defect
 * of peers.md §1.4.9; sources refuse such paths.
 */
const char *kernel_random_path(const char *path);
/*
 * A source's refusal of the kernel's own random device: the file st describes, or when st
 * is NULL, path (see kernel_random_path()). -EINVAL with the reason in why when it is one,
 * else 0.
 */
int refuse_kernel_random(const char *path, const struct stat *st, char *why, size_t len);

/*
 * Open path read-only for blocking reads, without blocking in open() itself (a FIFO with no
 * writer yet would). O_CLOEXEC, O_NOCTTY. The descriptor, or -errno.
 */
int open_read_blocking(const char *path);
/* What kind of file st is, for messages: "a directory", "a socket", "a block device"... */
const char *file_kind(const struct stat *st);

/* Wipe memory that held entropy; the compiler may not drop it. */
void wipe(void *p, size_t n);

/*
 * Unblock SIGSEGV, SIGBUS, SIGILL and SIGFPE in the calling thread: a synchronous fault
 * while blocked is undefined (the kernel kills the process without the default action).
 */
void unblock_sync_signals(void);

/* Close *fd if it is open and set it to -1; for _cleanup_(closep). */
void closep(int *fd);
void freep(void *p);

#endif
