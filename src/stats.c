// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "stats.h"
#include "util.h"

const char *const stats_fips_keys[FIPS_N_TESTS] = {
	"monobit", "poker", "runs", "long-run", "continuous",
};

/* ---- writing ---- */

static void format_time(uint64_t ns, char *buf, size_t len)
{
	struct utc_time u;

	utc_from_seconds((int64_t)(ns / NSEC_PER_SEC), &u);
	snprintf(buf, len, "%04" PRId64 "-%02u-%02uT%02u:%02u:%02uZ", u.year, u.mon, u.mday, u.hour,
		 u.min, u.sec);
}

/*
 * The document is written here, text straight into a buffer on the stack, laid out byte
 * for byte as jansson's json_dumps() lays out JSON_INDENT(2) | JSON_PRESERVE_ORDER (each
 * member on its own line, two spaces a level, `"key": value`, the closing bracket on the
 * parent's indent, "{}" and "[]" when empty); tests/test_stats.c checks the file against
 * json_dumps() of the document read back. jansson reads it (--status, stats_load_status()),
 * but no longer writes it: the trees of the values raised the top of the heap for a moment
 * every status-interval, and its tables (12 kB) were resident for the one text it made
 * (bench/README.md, footprint).
 */
#define MAX_DEPTH 4

/*
 * Its 4 KiB buffer is no new stack: write_atomic() has just returned from open_dir_of()'s
 * PATH_MAX array at the same depth (the deepest stack of a daemon is feed(), daemon.c).
 */
struct writer {
	int fd;
	int err;		   /* the first failure's -errno; nothing is written after it */
	unsigned int depth;	   /* of the object or array open now; 0 outside the document */
	bool empty[MAX_DEPTH + 1]; /* nothing in the object or array at that depth yet */
	size_t len;
	char buf[4096];
};

static void w_flush(struct writer *w)
{
	if (w->len && w->err == 0)
		w->err = write_full(w->fd, w->buf, w->len);
	w->len = 0;
}

static void w_put(struct writer *w, const char *s, size_t n)
{
	while (n) {
		size_t k = MIN(n, sizeof(w->buf) - w->len);

		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == sizeof(w->buf))
			w_flush(w);
	}
}

static void w_puts(struct writer *w, const char *s)
{
	w_put(w, s, strlen(s));
}

static void w_newline(struct writer *w)
{
	static const char spaces[] = "\n        ";

	w_put(w, spaces, 1);
	for (unsigned int n = 2 * w->depth; n; n -= MIN(n, 8u))
		w_put(w, spaces + 1, MIN(n, 8u));
}

/*
 * The length of the UTF-8 sequence at p, 1 to 4; 0 when it is none JSON can carry (what
 * jansson refuses: a stray or overlong form, a surrogate, beyond U+10FFFF).
 */
static size_t utf8_len(const unsigned char *p)
{
	uint32_t cp;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : p[0] < 0xf5 ? 4 : 0;
	if (n == 0)
		return 0;
	cp = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also the terminating NUL */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A string, escaped as jansson escapes; NULL is null. Not UTF-8: -EINVAL, the file unwritten. */
static void w_str(struct writer *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s, *run;

	if (!s) {
		w_puts(w, "null");
		return;
	}
	w_put(w, "\"", 1);
	for (run = p; *p;) {
		size_t n = utf8_len(p);
		char esc[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };
		const char *e = esc;
		size_t elen = 2;

		if (n == 0) {
			w->err = w->err ? w->err : -EINVAL;
			return;
		}
		if (n > 1 || (*p >= 0x20 && *p != '"' && *p != '\\')) {
			p += n;
			continue;
		}
		switch (*p) {
		case '"':
			e = "\\\"";
			break;
		case '\\':
			e = "\\\\";
			break;
		case '\b':
			e = "\\b";
			break;
		case '\f':
			e = "\\f";
			break;
		case '\n':
			e = "\\n";
			break;
		case '\r':
			e = "\\r";
			break;
		case '\t':
			e = "\\t";
			break;
		default:
			elen = sizeof(esc);
			break;
		}
		w_put(w, (const char *)run, (size_t)(p - run));
		w_put(w, e, elen);
		run = ++p;
	}
	w_put(w, (const char *)run, (size_t)(p - run));
	w_put(w, "\"", 1);
}

/* json_int_t is long long: a counter is capped at 2^63 - 1, as json_integer() held it. */
static void w_uint(struct writer *w, uint64_t v)
{
	char digits[20], *d = digits + sizeof(digits);

	v = MIN(v, (uint64_t)LLONG_MAX);
	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	w_put(w, d, (size_t)(digits + sizeof(digits) - d));
}

/* A time as "2026-11-30T04:46:55Z"; 0 (never) is null. */
static void w_time(struct writer *w, uint64_t ns)
{
	char buf[32];

	if (ns == 0) {
		w_puts(w, "null");
		return;
	}
	format_time(ns, buf, sizeof(buf));
	w_str(w, buf);
}

static void w_open(struct writer *w, char bracket)
{
	w_put(w, &bracket, 1);
	if (w->depth < MAX_DEPTH)
		w->depth++;
	w->empty[w->depth] = true;
}

static void w_close(struct writer *w, char bracket)
{
	bool empty = w->empty[w->depth];

	if (w->depth)
		w->depth--;
	if (!empty)
		w_newline(w);
	w_put(w, &bracket, 1);
}

/* Before a member or an element: the comma after the one before it, a new line, the indent. */
static void w_next(struct writer *w)
{
	if (!w->empty[w->depth])
		w_put(w, ",", 1);
	w->empty[w->depth] = false;
	w_newline(w);
}

static void w_key(struct writer *w, const char *key)
{
	w_next(w);
	w_str(w, key);
	w_put(w, ": ", 2);
}

/* `"key": value` members: called once a member, not inlined there (the text's size is RSS). */
static _noinline_ void w_key_uint(struct writer *w, const char *key, uint64_t v)
{
	w_key(w, key);
	w_uint(w, v);
}

static _noinline_ void w_key_str(struct writer *w, const char *key, const char *s)
{
	w_key(w, key);
	w_str(w, s);
}

static _noinline_ void w_key_time(struct writer *w, const char *key, uint64_t ns)
{
	w_key(w, key);
	w_time(w, ns);
}

/* The index of the first of ctr[0..n) named name (n when none). */
static size_t counter_named(const struct status_counter *ctr, size_t n, const char *name)
{
	size_t i = 0;

	while (i < n && !(ctr[i].name && strcmp(ctr[i].name, name) == 0))
		i++;
	return i;
}

static void w_source(struct writer *w, const struct status_source *s)
{
	const struct status_counter *ctr = s->counters;
	size_t n = MIN(s->n_counters, (size_t)STATUS_MAX_COUNTERS);

	w_open(w, '{');
	w_key_str(w, "name", s->name ? s->name : "?");
	w_key_str(w, "state", s->state ? s->state : "?");
	w_key_time(w, "state_since", s->state_since);
	w_key_uint(w, "bytes_read", s->bytes_read);
	w_key_uint(w, "blocks_tested", s->blocks_tested);
	w_key_uint(w, "blocks_passed", s->blocks_passed);
	w_key(w, "fips_failures");
	w_open(w, '{');
	for (size_t i = 0; i < FIPS_N_TESTS; i++)
		w_key_uint(w, stats_fips_keys[i], s->fips_failures[i]);
	w_close(w, '}');
	w_key_uint(w, "blocks_replayed", s->blocks_replayed);
	w_key_uint(w, "health_failures", s->health_failures);
	w_key_uint(w, "bytes_fed", s->bytes_fed);
	w_key_uint(w, "bits_credited", s->bits_credited);
	w_key_str(w, "last_error", s->last_error);
	w_key_time(w, "last_passed", s->last_passed);
	w_key(w, "counters");
	w_open(w, '{');
	for (size_t i = 0; i < n; i++) {
		if (!ctr[i].name || counter_named(ctr, i, ctr[i].name) < i)
			continue;
		/* A name given twice is one member, where it came first, with the last value. */
		uint64_t value = ctr[i].value;

		for (size_t j = i + 1; j < n; j++)
			if (ctr[j].name && strcmp(ctr[j].name, ctr[i].name) == 0)
				value = ctr[j].value;
		w_key_uint(w, ctr[i].name, value);
	}
	w_close(w, '}');
	w_close(w, '}');
}

/* The whole document, newline-terminated, to fd. 0 or -errno. */
static int write_doc(int fd, const void *data)
{
	const struct status_doc *doc = data;
	const char *backend = doc->kernel_hwrng_backend;
	struct writer w = { .fd = fd };

	w_open(&w, '{');
	w_key_uint(&w, "version", STATUS_FORMAT_VERSION);
	w_key_str(&w, "rngd_version", doc->rngd_version ? doc->rngd_version : PACKAGE_VERSION);
	w_key_uint(&w, "pid", (uint64_t)doc->pid);
	w_key_time(&w, "started", doc->started);
	w_key_time(&w, "updated", doc->updated ? doc->updated : realtime_ns());

	w_key(&w, "kernel");
	w_open(&w, '{');
	w_key_str(&w, "generation", doc->kernel_generation);
	w_key(&w, "crng_ready");
	w_puts(&w, doc->crng_ready ? "true" : "false");
	w_close(&w, '}');

	w_key(&w, "kernel_hwrng");
	w_open(&w, '{');
	w_key_str(&w, "mode", doc->kernel_hwrng_mode ? doc->kernel_hwrng_mode : "leave");
	w_key_str(&w, "takeover", doc->kernel_hwrng_takeover ? doc->kernel_hwrng_takeover : "none");
	w_key_str(&w, "backend", backend && backend[0] ? backend : NULL);
	w_close(&w, '}');

	w_key(&w, "feed");
	w_open(&w, '{');
	w_key_uint(&w, "feeds", doc->feeds);
	w_key_uint(&w, "bytes_fed", doc->bytes_fed);
	w_key_uint(&w, "bits_credited", doc->bits_credited);
	w_key_uint(&w, "reseeds", doc->reseeds);
	w_key_time(&w, "last_feed", doc->last_feed);
	w_key_uint(&w, "interval", doc->feed_interval);
	w_close(&w, '}');

	w_key(&w, "sources");
	w_open(&w, '[');
	for (size_t i = 0; i < doc->n_sources; i++) {
		w_next(&w);
		w_source(&w, &doc->sources[i]);
	}
	w_close(&w, ']');
	w_close(&w, '}');
	w_put(&w, "\n", 1);
	if (w.err == 0)
		w_flush(&w);
	return w.err;
}

/* mkdir -p of dir with mode 0755, for the components that are missing. */
static int mkdir_parents(const char *dir)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = c;
		if (c == '\0')
			return 0;
	}
}

/* The directory part of path into dir; false when path has none ("status.json", "/x"). */
static bool parent_dir(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path || (size_t)(slash - path) >= size)
		return false;
	snprintf(dir, size, "%.*s", (int)(slash - path), path);
	return true;
}

/* The last component of path (after the last '/'). */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The directory of path, opened without following a symlink in its place. fd or -errno. */
static int open_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd;

	if (!parent_dir(path, dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "%s", path[0] == '/' ? "/" : ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;
		struct stat st;

		/* Linux says ENOTDIR for a symlink with O_DIRECTORY|O_NOFOLLOW: tell them apart. */
		if (r == -ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			r = -ELOOP;
		return r;
	}
	return fd;
}

/* Whether directory dfd holds nothing but rngd's files: base, its temporaries, the pid file. */
static bool only_rngd_files(int dfd, const char *base)
{
	size_t n = strlen(base);
	struct dirent *e;
	bool only = true;
	int fd = dup(dfd);
	DIR *d;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while (only && (e = readdir(d))) {
		const char *name = e->d_name;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
		    strcmp(name, "rngd.pid") == 0 || strncmp(name, "kernel-hwrng.", 13) == 0 ||
		    (strncmp(name, base, n) == 0 && (name[n] == '\0' || name[n] == '.')))
			continue;
		only = false;
	}
	closedir(d);
	return only;
}

int stats_prepare_dir(const char *path, uid_t uid, gid_t gid)
{
	char dir[PATH_MAX];
	bool made = false;
	struct stat st;
	int r;

	if (!parent_dir(path, dir, sizeof(dir)))
		return 0;
	if (mkdir(dir, 0755) == 0) {
		made = true;
	} else if (errno == ENOENT) {
		r = mkdir_parents(dir);
		if (r < 0)
			return r;
		made = true;
	} else if (errno != EEXIST) {
		return -errno;
	}
	/* From here on only through the fd: the name may be swapped for a symlink. */
	_cleanup_(closep) int dfd = open_dir_of(path);

	if (dfd < 0)
		return dfd;
	if (fstat(dfd, &st) < 0)
		return -errno;
	if (made) {
		/* Readable by `rngd --status` whatever the daemon's umask (the unit sets 0077). */
		if (fchmod(dfd, 0755) < 0)
			return -errno;
		if (uid != (uid_t)-1 && fchown(dfd, uid, gid) < 0)
			return -errno;
		return 0;
	}
	if (uid == (uid_t)-1 || st.st_uid == uid)
		return 0;
	/*
	 * A directory rngd made on an earlier run as root (root's, 0755, holding only rngd's
	 * files) is handed to the new user; anything else (another user's, writable by
	 * others, a shared directory such as /run itself) is not.
	 */
	if (st.st_uid != 0 || (st.st_mode & 07777) != 0755 || !only_rngd_files(dfd, base_name(path)))
		return -EPERM;
	if (fchown(dfd, uid, gid) < 0)
		return -errno;
	return 0;
}

int stats_remove_status(const char *path)
{
	_cleanup_(closep) int dfd = open_dir_of(path);

	if (dfd < 0)
		return dfd;
	return unlinkat(dfd, base_name(path), 0) < 0 ? -errno : 0;
}

/*
 * A temporary in path's directory, renamed over path. durable: fsync before the rename, for
 * a file that outlives the process (the metrics file). The status file needs none: it
 * describes the running process and /run goes at reboot; its fsync cost the main loop a
 * journal commit every status-interval and the stop path one more.
 */
static int write_atomic(const char *path, int (*fill)(int fd, const void *data), const void *data,
			bool durable)
{
	_cleanup_(closep) int dfd = -1;
	const char *base = base_name(path);
	char tmp[NAME_MAX + 1];
	int fd = -1, r;

	if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", base, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	dfd = open_dir_of(path);
	if (dfd < 0)
		return dfd;

	/* O_EXCL|O_NOFOLLOW: never through a name someone planted; a stale one goes first. */
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* The umask may have taken bits: people run `rngd --status` as any user. */
	if (fchmod(fd, 0644) < 0) {
		r = -errno;
		goto fail;
	}
	r = fill(fd, data);
	if (r < 0)
		goto fail;
	if (durable && fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	/* renameat() replaces a symlink at the status path; it never follows it. */
	if (renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, tmp, 0);
	return r;
}

int stats_write_status(const char *path, const struct status_doc *doc)
{
	int r = write_atomic(path, write_doc, doc, false);

	if (r == -ENOENT) {
		r = stats_prepare_dir(path, (uid_t)-1, (gid_t)-1);
		if (r == 0)
			r = write_atomic(path, write_doc, doc, false);
	}
	return r;
}

struct text {
	const char *s;
	size_t len;
};

static int write_text(int fd, const void *data)
{
	const struct text *t = data;

	return write_full(fd, t->s, t->len);
}

int stats_write_file(const char *path, const char *text, size_t len)
{
	return write_atomic(path, write_text, &(struct text){ text, len }, true);
}

/* ---- summaries ---- */

int stats_format_feed(const struct status_doc *doc, char *buf, size_t len)
{
	char last[32] = "never";

	if (doc->last_feed)
		format_time(doc->last_feed, last, sizeof(last));
	return snprintf(buf, len,
			"kernel %s, CRNG %s; fed %" PRIu64 " times, %" PRIu64
			" bytes, %" PRIu64 " bits credited, %" PRIu64 " reseeds, last feed %s",
			doc->kernel_generation ? doc->kernel_generation : "?",
			doc->crng_ready ? "ready" : "not ready", doc->feeds, doc->bytes_fed,
			doc->bits_credited, doc->reseeds, last);
}

int stats_format_source(const struct status_source *s, char *buf, size_t len)
{
	char fips[160] = "", health[96] = "";
	size_t off = 0;

	for (size_t i = 0; i < FIPS_N_TESTS; i++) {
		int n = snprintf(fips + off, sizeof(fips) - off, "%s%s %" PRIu64, i ? ", " : "",
				 stats_fips_keys[i], s->fips_failures[i]);

		if (n < 0 || (size_t)n >= sizeof(fips) - off)
			break;
		off += (size_t)n;
	}
	/* Blocks rejected before the FIPS tests: shown when there are any. */
	if (s->blocks_replayed || s->health_failures)
		snprintf(health, sizeof(health), "; %" PRIu64 " replayed, %" PRIu64 " SP 800-90B",
			 s->blocks_replayed, s->health_failures);
	return snprintf(buf, len,
			"%s, %" PRIu64 " bytes read, %" PRIu64 "/%" PRIu64
			" blocks passed (failures: %s%s), %" PRIu64 " bytes fed, %" PRIu64
			" bits credited%s%s%s",
			s->state ? s->state : "?", s->bytes_read, s->blocks_passed,
			s->blocks_tested, fips, health, s->bytes_fed, s->bits_credited,
			s->last_error ? ", last error '" : "", s->last_error ? s->last_error : "",
			s->last_error ? "'" : "");
}

static bool source_up(const struct status_source *s)
{
	return s->state && (strcmp(s->state, "running") == 0 || strcmp(s->state, "starting") == 0);
}

int stats_format_notify_status(const struct status_doc *doc, char *buf, size_t len)
{
	char fed[96], down[160] = "";
	size_t up = 0, total = 0, off = 0;

	for (size_t i = 0; i < doc->n_sources; i++) {
		const struct status_source *s = &doc->sources[i];
		int n;

		/* A source that cannot work on this machine (say, via on an AMD CPU) is no news. */
		if (s->state && strcmp(s->state, "absent") == 0)
			continue;
		total++;
		if (source_up(s)) {
			up++;
			continue;
		}
		if (off >= sizeof(down))
			continue;
		n = snprintf(down + off, sizeof(down) - off, "%s%s (%s)",
			     off ? ", " : "; not running: ", s->name ? s->name : "?",
			     s->state ? s->state : "?");
		off = n < 0 ? sizeof(down) : off + (size_t)n;
	}
	if (doc->feeds && doc->last_feed) {
		struct utc_time u;

		utc_from_seconds((int64_t)(doc->last_feed / NSEC_PER_SEC), &u);
		snprintf(fed, sizeof(fed),
			 "fed %" PRIu64 " bytes in %" PRIu64 " feeds, last %02u:%02u:%02u UTC",
			 doc->bytes_fed, doc->feeds, u.hour, u.min, u.sec);
	} else {
		snprintf(fed, sizeof(fed), "nothing fed yet");
	}
	return snprintf(buf, len, "%zu/%zu sources up; %s%s", up, total, fed, down);
}
