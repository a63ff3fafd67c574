// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fault injection for tests/fault.sh: linked into tests/rngd-fault (the daemon's main.c)
 * with -Wl,--wrap=readv,--wrap=preadv,--wrap=read,--wrap=writev,--wrap=write,--wrap=ioctl.
 * Nothing else changes in the daemon. Set by the environment:
 *   RNGD_FAULT=OP:CALL:WHAT[,OP:CALL:WHAT...]
 *     OP    read   a read of the source file (readv, preadv, read on RNGD_FAULT_SOURCE)
 *           write  a write to the output (writev, write on RNGD_FAULT_SINK)
 *           ioctl  an RNDADDENTROPY with data (RNGD_FAULT_KERNEL)
 *     CALL  the 1-based number of that call that fails
 *     WHAT  EIO, EAGAIN, EINTR, ENODEV, EPIPE, ENOSPC, EFAULT, EINVAL, EPERM, or "short"
 *           (a read of 1 byte only)
 *   RNGD_FAULT_SOURCE=PATH  the source's file
 *   RNGD_FAULT_SINK=PATH    the output file
 *   RNGD_FAULT_KERNEL=LOG   fake the kernel: every RND* ioctl answered here, never sent;
 *                           each accepted RNDADDENTROPY appended to LOG as "BITS HEX\n"
 *   RNGD_FAULT_ZEROS=N      from the Nth read() of the source on, what it read is replaced
 *                           by zeros (a failing device: its blocks fail the tests)
 * Every injected fault is reported on stderr as "fault: OP CALL WHAT".
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/random.h>

ssize_t __real_readv(int fd, const struct iovec *iov, int cnt);
ssize_t __real_preadv(int fd, const struct iovec *iov, int cnt, off_t off);
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_writev(int fd, const struct iovec *iov, int cnt);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_ioctl(int fd, unsigned long req, ...);
ssize_t __wrap_readv(int fd, const struct iovec *iov, int cnt);
ssize_t __wrap_preadv(int fd, const struct iovec *iov, int cnt, off_t off);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_writev(int fd, const struct iovec *iov, int cnt);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __wrap_ioctl(int fd, unsigned long req, ...);

enum op { OP_READ, OP_WRITE, OP_IOCTL, N_OPS };
static const char *const op_names[N_OPS] = { "read", "write", "ioctl" };
#define SHORT_READ (-1)
#define MAX_FAULTS 16

static struct {
	enum op op;
	unsigned long call;
	int err; /* errno, or SHORT_READ */
} faults[MAX_FAULTS];
static size_t n_faults;
static unsigned long calls[N_OPS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const struct {
	const char *name;
	int err;
} errnames[] = {
	{ "EIO", EIO },	    { "EAGAIN", EAGAIN },    { "EINTR", EINTR },   { "ENODEV", ENODEV },
	{ "EPIPE", EPIPE }, { "ENOSPC", ENOSPC },    { "EFAULT", EFAULT }, { "EINVAL", EINVAL },
	{ "EPERM", EPERM }, { "short", SHORT_READ },
};

static void setup(void)
{
	char *spec = getenv("RNGD_FAULT") ? strdup(getenv("RNGD_FAULT")) : NULL;
	char *save = NULL;

	for (char *t = spec ? strtok_r(spec, ",", &save) : NULL; t && n_faults < MAX_FAULTS;
	     t = strtok_r(NULL, ",", &save)) {
		char op[16], what[16];
		unsigned long call;
		int i;

		if (sscanf(t, "%15[a-z]:%lu:%15s", op, &call, what) != 3)
			abort();
		for (i = 0; i < N_OPS && strcmp(op, op_names[i]) != 0; i++)
			;
		if (i == N_OPS)
			abort();
		faults[n_faults].op = (enum op)i;
		faults[n_faults].call = call;
		for (i = 0; i < (int)(sizeof(errnames) / sizeof(errnames[0])); i++)
			if (strcmp(what, errnames[i].name) == 0)
				break;
		if (i == (int)(sizeof(errnames) / sizeof(errnames[0])))
			abort();
		faults[n_faults++].err = errnames[i].err;
	}
	free(spec);
}

/* Whether fd is the file the environment variable var names. */
static bool is_target(int fd, const char *var)
{
	const char *want = getenv(var);
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (!want)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return false;
	path[n] = '\0';
	return strcmp(path, want) == 0;
}

/* The name of an injected errno (errnames[]; glibc's strerrorname_np() is not in musl). */
static const char *errname(int err)
{
	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].err == err)
			return errnames[i].name;
	return "?";
}

/* Count a call of op; the fault to inject (errno or SHORT_READ), 0 for none. */
static int next_fault(enum op op)
{
	unsigned long call;
	int err = 0;

	pthread_once(&once, setup);
	pthread_mutex_lock(&lock);
	call = ++calls[op];
	for (size_t i = 0; i < n_faults; i++)
		if (faults[i].op == op && faults[i].call == call)
			err = faults[i].err;
	pthread_mutex_unlock(&lock);
	if (err) {
		char line[96];
		int k = snprintf(line, sizeof(line), "fault: %s %lu %s\n", op_names[op], call,
				 err == SHORT_READ ? "short" : errname(err));

		(void)__real_write(STDERR_FILENO, line, (size_t)k);
	}
	return err;
}

static ssize_t fail(int err)
{
	errno = err;
	return -1;
}

ssize_t __wrap_readv(int fd, const struct iovec *iov, int cnt)
{
	int err = is_target(fd, "RNGD_FAULT_SOURCE") ? next_fault(OP_READ) : 0;

	if (err == SHORT_READ)
		return __real_readv(fd, &(struct iovec){ iov[0].iov_base, 1 }, 1);
	return err ? fail(err) : __real_readv(fd, iov, cnt);
}

ssize_t __wrap_preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	int err = is_target(fd, "RNGD_FAULT_SOURCE") ? next_fault(OP_READ) : 0;

	if (err == SHORT_READ)
		return __real_preadv(fd, &(struct iovec){ iov[0].iov_base, 1 }, 1, off);
	return err ? fail(err) : __real_preadv(fd, iov, cnt, off);
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	static unsigned long reads;
	bool target = is_target(fd, "RNGD_FAULT_SOURCE");
	int err = target ? next_fault(OP_READ) : 0;
	const char *zeros = getenv("RNGD_FAULT_ZEROS");
	ssize_t r;

	if (err == SHORT_READ)
		return __real_read(fd, buf, n ? 1 : 0);
	if (err)
		return fail(err);
	r = __real_read(fd, buf, n);
	/* One reader thread reads the source: no lock for the count. */
	if (target && zeros && r > 0 && ++reads >= strtoul(zeros, NULL, 10))
		memset(buf, 0, (size_t)r);
	return r;
}

ssize_t __wrap_writev(int fd, const struct iovec *iov, int cnt)
{
	int err = is_target(fd, "RNGD_FAULT_SINK") ? next_fault(OP_WRITE) : 0;

	return err > 0 ? fail(err) : __real_writev(fd, iov, cnt);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	int err = is_target(fd, "RNGD_FAULT_SINK") ? next_fault(OP_WRITE) : 0;

	return err > 0 ? fail(err) : __real_write(fd, buf, n);
}

/* The fake kernel: accepts RNDADDENTROPY and logs what it took. */
static int fake_kernel(unsigned long req, void *arg)
{
	const char *log = getenv("RNGD_FAULT_KERNEL");
	const struct rand_pool_info *info = arg;
	FILE *f;
	int err;

	switch (req) {
	case RNDGETENTCNT:
		*(int *)arg = 256;
		return 0;
	case RNDRESEEDCRNG:
		return 0;
	case RNDADDENTROPY:
		if (info->buf_size == 0) /* sink_check_access() */
			return 0;
		err = next_fault(OP_IOCTL);
		if (err > 0)
			return (int)fail(err);
		f = fopen(log, "ae");
		if (!f)
			return (int)fail(EIO);
		fprintf(f, "%d ", info->entropy_count);
		for (int i = 0; i < info->buf_size; i++)
			fprintf(f, "%02x", ((const unsigned char *)info->buf)[i]);
		fputc('\n', f);
		fclose(f);
		return 0;
	default:
		return (int)fail(ENOTTY);
	}
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (getenv("RNGD_FAULT_KERNEL") &&
	    (req == RNDGETENTCNT || req == RNDRESEEDCRNG || req == RNDADDENTROPY))
		return fake_kernel(req, arg);
	return __real_ioctl(fd, req, arg);
}
