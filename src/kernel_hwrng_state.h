/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The take-over's state record, kernel-hwrng.state in the daemon's runtime directory: every
 * backend whose rng_quality the daemon set to 0, with the quality it had. Written by the
 * daemon before each change (kernel_hwrng.c) so that a crash loses nothing; read back by the
 * daemon after a crash and, as untrusted data, by root's --restore-kernel-hwrng
 * (kernel_hwrng_root.c; rngd(8), SECURITY). Also the fixed paths both sides use.
 *
 * The format is text, one "key=value" per line:
 *     backend=NAME
 *     quality=N
 * repeated for each backend (N: 0..1024). A "sysfs=" line (files of rngd before 2026-12)
 * is accepted and ignored: the sysfs directory is fixed, never taken from a file.
 */
#ifndef RNGD_KERNEL_HWRNG_STATE_H
#define RNGD_KERNEL_HWRNG_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define KERNEL_HWRNG_STATE_NAME "kernel-hwrng.state"
/* A longer state file is refused unread (a real one is well under 1 KiB). */
#define KERNEL_HWRNG_STATE_SIZE_MAX 4096
/* A backend name's size with its NUL (the kernel's names are short: "virtio_rng.0"). */
#define KERNEL_HWRNG_NAME_SIZE 128
/* Backends one record can hold. */
#define KERNEL_HWRNG_STATE_MAX 16

struct kernel_hwrng_saved {
	char backend[KERNEL_HWRNG_NAME_SIZE];
	unsigned int quality; /* rng_quality before the daemon wrote 0 */
};

struct kernel_hwrng_state {
	size_t n;
	struct kernel_hwrng_saved saved[KERNEL_HWRNG_STATE_MAX];
};

/*
 * The fixed paths: the hw_random class in sysfs, the daemon's runtime directory (user
 * rngd's under the unit: untrusted for root) and root's own directory. A build with
 * RNGD_ROOT_TEST_HOOKS (tests only) takes them from RNGD_TEST_SYSFS, RNGD_TEST_RUNTIME_DIR
 * and RNGD_TEST_ROOT_DIR when set; the installed rngd has no such switch.
 */
const char *kernel_hwrng_sysfs_dir(void);
const char *kernel_hwrng_runtime_dir(void);
const char *kernel_hwrng_root_dir(void);

/* The state file's path (runtime directory + name), malloc()'d, or NULL (no memory). */
char *kernel_hwrng_state_path(void);

/*
 * Whether name can be a backend's name: 1..127 printable bytes, none of them a space, '/'
 * or '=', and not "none". Pure.
 */
bool kernel_hwrng_name_valid(const char *name);

/*
 * One "key=value" line of text[0..len) from *pos: key and value copied, NUL-terminated.
 * 1 when a line was read, 0 at the end, -EBADMSG on a line without '=', with a NUL byte or
 * a control character, or too long for key or value. Bounded: each call moves *pos on.
 */
int kernel_hwrng_kv_next(const char *text, size_t len, size_t *pos, char *key, size_t key_size,
			 char *value, size_t value_size);

/*
 * Parse a state record. 0, or -EBADMSG with why saying which line and what is wrong (an
 * unknown key, an empty or invalid name, a quality outside 0..1024, a backend without its
 * quality, a name twice, too many). *st is complete only on success.
 */
int kernel_hwrng_state_parse(const char *text, size_t len, struct kernel_hwrng_state *st,
			     char *why, size_t why_len);

/* The record as text into buf. Its length, or -ENOSPC. */
int kernel_hwrng_state_format(const struct kernel_hwrng_state *st, char *buf, size_t size);

/* backend's entry, or NULL. */
const struct kernel_hwrng_saved *kernel_hwrng_state_find(const struct kernel_hwrng_state *st,
							 const char *backend);

/*
 * Remember backend's quality (a backend already there keeps its first quality: the original).
 * 0, -EINVAL for an invalid name or quality, -ENOSPC when full.
 */
int kernel_hwrng_state_add(struct kernel_hwrng_state *st, const char *backend,
			   unsigned int quality);

/* Forget backend. true when it was there. */
bool kernel_hwrng_state_remove(struct kernel_hwrng_state *st, const char *backend);

/*
 * Read a small file that someone else may control, as data: name relative to dirfd
 * (AT_FDCWD: a path), not following a symlink, opened O_NONBLOCK (a FIFO cannot hold it up),
 * only a regular file of at most size - 1 bytes; NUL-terminated into buf. *sb gets its
 * fstat() (owner, links) when sb is not NULL. Length, or -errno: -ENOENT, -ELOOP (symlink),
 * -EINVAL (not a regular file), -EFBIG (too long).
 */
int kernel_hwrng_read_small(int dirfd, const char *name, char *buf, size_t size, struct stat *sb);

/* kernel_hwrng_read_small() and kernel_hwrng_state_parse(). 0 or -errno (why for -EBADMSG). */
int kernel_hwrng_state_read(int dirfd, const char *name, struct kernel_hwrng_state *st,
			    struct stat *sb, char *why, size_t why_len);

/*
 * Write the record to path atomically: a new file next to it (O_EXCL, O_NOFOLLOW, mode
 * 0644), renamed over path; no fsync (/run does not outlive the machine, and a process's
 * crash leaves the page cache). The directory is made (0755) when missing. An empty record
 * removes the file instead. 0 or -errno.
 */
int kernel_hwrng_state_write(const char *path, const struct kernel_hwrng_state *st);

/* What a -errno of kernel_hwrng_read_small() means, for a refusal line. */
const char *kernel_hwrng_read_error(int r);

#endif
