/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pid file: one daemon per pid file (an flock held for the daemon's life), opened
 * without following a symlink or blocking on a FIFO, regular files only, and removed at
 * exit even after the daemon dropped its privileges.
 */
#ifndef RNGD_PIDFILE_H
#define RNGD_PIDFILE_H

#include <stddef.h>
#include <sys/types.h>

struct pidfile {
	char *path;
	int fd;	      /* open, locked; -1 when none */
	int keeper_fd; /* write end of the pipe to the remover process; -1 when none */
};

/*
 * Open path (O_CREAT|O_NOFOLLOW|O_NONBLOCK, a regular file only) and lock it. 0, or -errno
 * with why: -EBUSY when another process holds the lock (why names its pid, *holder gets
 * it, 0 when unknown), -ELOOP for a symlink, -EINVAL for a file that is not regular.
 */
int pidfile_lock(struct pidfile *p, const char *path, pid_t *holder, char *why, size_t len);

/* Write the calling process's pid (after the fork). 0 or -errno. */
int pidfile_write(struct pidfile *p);

/*
 * Before dropping privileges: leave a small process (the parent's privileges, nothing
 * open but a pipe) that removes the pid file once the daemon has exited, however it
 * ended, unless another daemon holds it by then. Needed only when the daemon will not be
 * allowed to remove it itself. 0 or -errno.
 */
int pidfile_keep_removable(struct pidfile *p);

/* At exit: remove the file (when allowed: else the keeper does) and close. Accepts an
 * unlocked struct (fd -1). */
void pidfile_release(struct pidfile *p);

#endif
