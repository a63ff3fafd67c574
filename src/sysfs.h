/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hw_random class in sysfs (kernel-interfaces.md §2): its attributes read or written as
 * short text lines, and the checks every user of it shares (the misc hwrng device 10:183,
 * the name "none", a name in rng_available, a quality). sysfs_read()/sysfs_write() are alone
 * in their object with the helpers so that the tests' --wrap of read_text_file() and
 * write_text_file() sees their calls.
 */
#ifndef RNGD_SYSFS_H
#define RNGD_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* include/linux/miscdevice.h: MISC_MAJOR 10, HWRNG_MINOR 183. */
#define SYSFS_HWRNG_MAJOR 10
#define SYSFS_HWRNG_MINOR 183

/* dir/attr into buf, trailing newline removed (read_text_file()). Length or -errno. */
int sysfs_read(const char *dir, const char *attr, char *buf, size_t size);

/* value and a newline to dir/attr in one write (write_text_file()). 0 or -errno. */
int sysfs_write(const char *dir, const char *attr, const char *value);

/* Whether st is the hwrng class's node: misc 10:183, or one whose sysfs entry is hw_random. */
bool sysfs_is_misc_hwrng(const struct stat *st);

/* The kernel's way of saying "no backend": "none" (6.18.y+) or an empty name. Pure. */
bool sysfs_is_none(const char *name);

/*
 * Whether name is one of the words of list (rng_available: names separated by spaces,
 * tabs or newlines). An empty name, or "none", is never listed. Pure, bounded by the list.
 */
bool sysfs_list_has(const char *list, const char *name);

/* rng_quality's text (0..1024, decimal, nothing after it) into *q. 0 or -EINVAL. */
int sysfs_parse_quality(const char *s, unsigned int *q);

/*
 * For root's steps: open dir/attr with flags (O_RDONLY or O_WRONLY; O_NOFOLLOW, O_NONBLOCK,
 * O_CLOEXEC and O_NOCTTY are added), and keep it only when it is a regular file on sysfs
 * (fstatfs() says SYSFS_MAGIC). The fd, or -errno: -ELOOP for a symlink, -EXDEV for a file
 * that is not on sysfs, -EINVAL for one that is not a regular file.
 */
int sysfs_open_checked(const char *dir, const char *attr, int flags);

/* A short text from fd (read from offset 0; trailing newline removed). Length or -errno. */
int sysfs_fd_read(int fd, char *buf, size_t size);

/* value and a newline to fd in one write at offset 0. 0 or -errno. */
int sysfs_fd_write(int fd, const char *value);

#endif
