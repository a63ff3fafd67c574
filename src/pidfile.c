// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pid file (pidfile.h). The lock, not the file's content, says whether a daemon runs:
 * a file left by a daemon killed with SIGKILL is unlocked and taken over.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pidfile.h"
#include "util.h"

static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	uint64_t v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_uint(buf, 1, INT32_MAX, &v) < 0)
		return 0;
	return (pid_t)v;
}

/* O_NONBLOCK: a FIFO planted at the path must not hang the open. */
static int open_pid_file(const char *path, int flags)
{
	return open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
}

/* Whether fd is still the file at path: not unlinked (by the keeper of a daemon that just
 * exited, or by that daemon itself) between the open and the lock. */
static bool is_at_path(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * Whether the pid a held lock names is a process that no longer runs (none, or a zombie
 * that its parent has not reaped yet): the holder is then a keeper removing the file, or a
 * daemon that has not written its own pid yet.
 */
static bool holder_gone(pid_t pid)
{
	char path[64], buf[256], *end;
	ssize_t n;
	int fd;

	if (pid == 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kill(pid, 0) < 0 && errno == ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')' (comm may hold one). */
	end = strrchr(buf, ')');
	return end && end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X');
}

/* One try: 0, -EAGAIN (the file was unlinked, or is held by a process that has gone: try
 * again), or -errno with why. */
static int lock_once(struct pidfile *p, const char *path, pid_t *holder, char *why, size_t len)
{
	struct stat st;
	int fd, r;

	fd = open_pid_file(path, O_RDWR | O_CREAT);
	if (fd < 0) {
		r = -errno;
		snprintf(why, len, "%s", r == -ELOOP ? "is a symlink, not followed" : strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		snprintf(why, len, "%s", r == -EINVAL ? "not a regular file" : strerror(-r));
		close(fd);
		return r;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		if (r == -EWOULDBLOCK) {
			*holder = read_pid(fd);
			if (*holder)
				snprintf(why, len, "another rngd (pid %ld) is running with it",
					 (long)*holder);
			else
				snprintf(why, len, "another rngd is running with it");
			r = holder_gone(*holder) ? -EAGAIN : -EBUSY;
		} else {
			snprintf(why, len, "cannot lock it: %s", strerror(-r));
		}
		close(fd);
		return r;
	}
	if (!is_at_path(fd, path)) {
		close(fd);
		snprintf(why, len, "removed while being locked");
		return -EAGAIN;
	}
	p->path = strdup(path);
	if (!p->path) {
		close(fd);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	p->fd = fd;
	return 0;
}

/*
 * A daemon that has just exited leaves its keeper (pidfile_keep_removable()) to remove the
 * file, racing a new start (restart): while it holds the lock for the removal, the lock's
 * pid names a process gone, and a lock taken on the file it removes is on no path. Either
 * is tried again, for up to 2 s; a daemon that runs is refused at once.
 */
int pidfile_lock(struct pidfile *p, const char *path, pid_t *holder, char *why, size_t len)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int r, tries = 200;

	p->fd = p->keeper_fd = -1;
	p->path = NULL;
	do {
		*holder = 0;
		r = lock_once(p, path, holder, why, len);
	} while (r == -EAGAIN && --tries > 0 && nanosleep(&tick, NULL) == 0);
	return r == -EAGAIN ? -EBUSY : r;
}

int pidfile_write(struct pidfile *p)
{
	char buf[32];
	int n;

	if (p->fd < 0)
		return 0;
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(p->fd, 0) < 0)
		return -errno;
	if (pwrite(p->fd, buf, (size_t)n, 0) != n)
		return -EIO;
	return 0;
}

/* The keeper: wait until every write end of the pipe is closed, then remove the file if
 * no daemon holds it. */
static _Noreturn void keeper(const char *path, int rfd)
{
	char c;
	int fd;

	while (read(rfd, &c, 1) != 0 && errno == EINTR)
		;
	fd = open_pid_file(path, O_RDWR);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && is_at_path(fd, path))
		unlink(path);
	_exit(0);
}

int pidfile_keep_removable(struct pidfile *p)
{
	int pfd[2];
	pid_t pid;

	if (p->fd < 0)
		return 0;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		sigset_t none;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		/*
		 * Nothing of the daemon's: above all not its copy of the locked fd, nor the
		 * terminal or pipe its caller reads; and signals as a plain process has them.
		 */
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		for (int fd = 3; fd < 1024; fd++)
			if (fd != pfd[0])
				close(fd);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		keeper(p->path, pfd[0]);
	}
	close(pfd[0]);
	p->keeper_fd = pfd[1];
	return 0;
}

void pidfile_release(struct pidfile *p)
{
	if (p->fd >= 0) {
		/* Still locked while it goes: a new daemon cannot take the name meanwhile. */
		if (unlink(p->path) < 0 && p->keeper_fd < 0 && ftruncate(p->fd, 0) < 0) {
			/* Left as it is: the lock, not the content, says whether rngd runs. */
		}
		close(p->fd);
		p->fd = -1;
	}
	if (p->keeper_fd >= 0) {
		close(p->keeper_fd);
		p->keeper_fd = -1;
	}
	free(p->path);
	p->path = NULL;
}
