// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
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

static void json_decref_p(json_t **j)
{
	json_decref(*j);
}

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

static void format_size(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", n);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

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

/* ---- reading (rngd --status) ---- */

static uint64_t get_uint(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v)
								 : 0;
}

static const char *get_str(const json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

/*
 * s with what a terminal would act on escaped, as systemctl does: control bytes (C0, DEL)
 * and C1 controls (U+0080..U+009F: CSI is U+009B) become \xNN, a backslash \\. The
 * document is anybody's who can write the status directory; its text goes to a terminal.
 */
static char *escape_text(const char *s)
{
	size_t n = 0;
	char *out, *o;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) ? 8
		     : *p == '\\'						    ? 2
										    : 1;
	out = o = malloc(n + 1);
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			o += sprintf(o, "\\xc2\\x%02x", p[1]);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			o += sprintf(o, "\\x%02x", *p);
		} else if (*p == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else {
			*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}

/* Every string of j (object values, array items, at any depth) escaped in place. */
static void escape_strings(json_t *j)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_object(j)) {
		json_object_foreach(j, key, v) {
			if (json_is_string(v)) {
				char *e = escape_text(json_string_value(v));

				if (e && strcmp(e, json_string_value(v)) != 0)
					json_object_set_new(j, key, json_string(e));
				free(e);
			} else {
				escape_strings(v);
			}
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) {
			if (json_is_string(v)) {
				char *e = escape_text(json_string_value(v));

				if (e && strcmp(e, json_string_value(v)) != 0)
					json_array_set_new(j, i, json_string(e));
				free(e);
			} else {
				escape_strings(v);
			}
		}
	}
}

static void print_table(const json_t *root, FILE *out)
{
	const json_t *kernel = json_object_get(root, "kernel");
	const json_t *feed = json_object_get(root, "feed");
	const json_t *sources = json_object_get(root, "sources");
	const json_t *s;
	char read[32], fed[32], blocks[48];
	int wname = 6, wstate = 5, wblocks = 13;
	size_t i;

	fprintf(out, "rngd %s, pid %" PRIu64 ", started %s, updated %s\n",
		get_str(root, "rngd_version", "?"), get_uint(root, "pid"),
		get_str(root, "started", "?"), get_str(root, "updated", "?"));
	fprintf(out, "kernel: %s random driver, CRNG %s\n", get_str(kernel, "generation", "?"),
		json_is_true(json_object_get(kernel, "crng_ready")) ? "ready" : "not ready");
	format_size(get_uint(feed, "bytes_fed"), fed, sizeof(fed));
	fprintf(out, "fed: %" PRIu64 " times, %s, %" PRIu64 " bits credited, %" PRIu64
		     " reseeds, last %s\n",
		get_uint(feed, "feeds"), fed, get_uint(feed, "bits_credited"),
		get_uint(feed, "reseeds"), get_str(feed, "last_feed", "never"));

	json_array_foreach(sources, i, s) {
		wname = MAX(wname, (int)strlen(get_str(s, "name", "?")));
		wstate = MAX(wstate, (int)strlen(get_str(s, "state", "?")));
		snprintf(blocks, sizeof(blocks), "%" PRIu64 "/%" PRIu64,
			 get_uint(s, "blocks_passed"), get_uint(s, "blocks_tested"));
		wblocks = MAX(wblocks, (int)strlen(blocks));
	}
	fprintf(out, "\n%-*s  %-*s  %10s  %-*s  %10s  %12s  %s\n", wname, "SOURCE", wstate,
		"STATE", "READ", wblocks, "PASSED/TESTED", "FED", "CREDITED", "LAST ERROR");
	json_array_foreach(sources, i, s) {
		format_size(get_uint(s, "bytes_read"), read, sizeof(read));
		format_size(get_uint(s, "bytes_fed"), fed, sizeof(fed));
		snprintf(blocks, sizeof(blocks), "%" PRIu64 "/%" PRIu64,
			 get_uint(s, "blocks_passed"), get_uint(s, "blocks_tested"));
		fprintf(out, "%-*s  %-*s  %10s  %-*s  %10s  %7" PRIu64 " bits  %s\n", wname,
			get_str(s, "name", "?"), wstate, get_str(s, "state", "?"), read, wblocks,
			blocks, fed, get_uint(s, "bits_credited"), get_str(s, "last_error", "-"));
	}
	if (json_array_size(sources) == 0)
		fprintf(out, "(no sources)\n");
}

/*
 * The document at path, parsed, with the checks every reader wants (logged): it exists, is
 * JSON, has a "version", and its writer still runs. 0 or -errno.
 */
static int load_json(const char *path, json_t **ret)
{
	_cleanup_(json_decref_p) json_t *root = NULL;
	json_error_t err;
	json_t *pid;
	FILE *f;
	int r;

	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		log_error("cannot read status file '%s': %s%s", path, strerror(-r),
			  r == -ENOENT ? " (is rngd running?)" : "");
		return r;
	}
	root = json_loadf(f, 0, &err);
	fclose(f);
	if (!root) {
		log_error("status file '%s' is not valid JSON: line %d column %d: %s", path,
			  err.line, err.column, err.text);
		return -EBADMSG;
	}
	if (!json_is_object(root) || !json_is_integer(json_object_get(root, "version"))) {
		log_error("'%s' is not an rngd status document (no \"version\")", path);
		return -EBADMSG;
	}
	pid = json_object_get(root, "pid");
	/* Left by a daemon that was killed (SIGKILL, crash): say so rather than show it. */
	if (json_is_integer(pid) && json_integer_value(pid) > 0 &&
	    json_integer_value(pid) <= INT32_MAX &&
	    kill((pid_t)json_integer_value(pid), 0) < 0 && errno == ESRCH) {
		log_error("status file '%s' is stale: the rngd that wrote it (pid %lld) is "
			  "not running",
			  path, (long long)json_integer_value(pid));
		return -ESRCH;
	}
	*ret = root;
	root = NULL;
	return 0;
}

/* Whether root has the format version this rngd reads (logged when not). */
static bool known_version(const char *path, const json_t *root, const char *alternative)
{
	json_int_t v = json_integer_value(json_object_get(root, "version"));

	if (v == STATUS_FORMAT_VERSION)
		return true;
	log_error("status file '%s' has format version %lld; this rngd reads version %d%s", path,
		  (long long)v, STATUS_FORMAT_VERSION, alternative);
	return false;
}

int stats_print_status(const char *path, bool json, FILE *out)
{
	_cleanup_(json_decref_p) json_t *root = NULL;
	int r = load_json(path, &root);

	if (r < 0)
		return r;
	if (json) {
		/* JSON escapes control characters; ASCII only escapes C1 controls as well. */
		if (json_dumpf(root, out,
			       JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII) < 0 ||
		    fputc('\n', out) == EOF)
			return -EIO;
		return 0;
	}
	if (!known_version(path, root, " (use --json)"))
		return -EPROTONOSUPPORT;
	escape_strings(root);
	print_table(root, out);
	return ferror(out) ? -EIO : 0;
}

/* "2026-11-30T04:46:55Z" (format_time()'s) to CLOCK_REALTIME ns; 0 for null or junk. */
static uint64_t get_time(const json_t *o, const char *key)
{
	static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ";
	const char *s = get_str(o, key, NULL);
	unsigned int f[6] = { 0 }, k = 0;
	struct utc_time u;
	int64_t t;

	if (!s || strlen(s) != sizeof(pattern) - 1)
		return 0;
	for (size_t i = 0; pattern[i]; i++) {
		if (pattern[i] != 'd') {
			if (s[i] != pattern[i])
				return 0;
			k++;
		} else if (s[i] >= '0' && s[i] <= '9') {
			f[k] = f[k] * 10 + (unsigned int)(s[i] - '0');
		} else {
			return 0;
		}
	}
	u = (struct utc_time){ f[0], f[1], f[2], f[3], f[4], f[5] };
	return utc_to_seconds(&u, &t) == 0 && t > 0 ? (uint64_t)t * NSEC_PER_SEC : 0;
}

static void load_source(const json_t *o, struct status_source *s)
{
	const json_t *fips = json_object_get(o, "fips_failures");
	const json_t *ctr = json_object_get(o, "counters");
	const char *key;
	json_t *v;

	s->name = get_str(o, "name", "?");
	s->state = get_str(o, "state", "?");
	s->state_since = get_time(o, "state_since");
	s->bytes_read = get_uint(o, "bytes_read");
	s->blocks_tested = get_uint(o, "blocks_tested");
	s->blocks_passed = get_uint(o, "blocks_passed");
	for (size_t i = 0; i < FIPS_N_TESTS; i++)
		s->fips_failures[i] = get_uint(fips, stats_fips_keys[i]);
	s->blocks_replayed = get_uint(o, "blocks_replayed");
	s->health_failures = get_uint(o, "health_failures");
	s->bytes_fed = get_uint(o, "bytes_fed");
	s->bits_credited = get_uint(o, "bits_credited");
	s->last_passed = get_time(o, "last_passed");
	s->last_error = get_str(o, "last_error", NULL);
	json_object_foreach((json_t *)ctr, key, v) {
		if (s->n_counters == STATUS_MAX_COUNTERS)
			break;
		s->counters[s->n_counters].name = key;
		s->counters[s->n_counters++].value = get_uint(ctr, key);
	}
}

int stats_load_status(const char *path, struct status_loaded *out)
{
	json_t *root = NULL, *kernel, *kh, *feed, *sources, *s;
	struct status_doc *doc = &out->doc;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	r = load_json(path, &root);
	if (r < 0)
		return r;
	out->root = root;
	if (!known_version(path, root, "")) {
		stats_status_free(out);
		return -EPROTONOSUPPORT;
	}
	kernel = json_object_get(root, "kernel");
	kh = json_object_get(root, "kernel_hwrng");
	feed = json_object_get(root, "feed");
	sources = json_object_get(root, "sources");
	out->sources = calloc(MAX(json_array_size(sources), (size_t)1), sizeof(*out->sources));
	if (!out->sources) {
		stats_status_free(out);
		log_error("out of memory");
		return -ENOMEM;
	}
	json_array_foreach(sources, i, s)
		load_source(s, &out->sources[i]);
	*doc = (struct status_doc){
		.rngd_version = get_str(root, "rngd_version", "?"),
		.pid = (pid_t)get_uint(root, "pid"),
		.started = get_time(root, "started"),
		.updated = get_time(root, "updated"),
		.kernel_generation = get_str(kernel, "generation", "?"),
		.crng_ready = json_is_true(json_object_get(kernel, "crng_ready")),
		.feeds = get_uint(feed, "feeds"),
		.bytes_fed = get_uint(feed, "bytes_fed"),
		.bits_credited = get_uint(feed, "bits_credited"),
		.reseeds = get_uint(feed, "reseeds"),
		.last_feed = get_time(feed, "last_feed"),
		.feed_interval = get_uint(feed, "interval"),
		.kernel_hwrng_mode = get_str(kh, "mode", "leave"),
		.kernel_hwrng_takeover = get_str(kh, "takeover", "none"),
		.kernel_hwrng_backend = get_str(kh, "backend", NULL),
		.n_sources = json_array_size(sources),
		.sources = out->sources,
	};
	return 0;
}

void stats_status_free(struct status_loaded *s)
{
	free(s->sources);
	json_decref(s->root);
	memset(s, 0, sizeof(*s));
}
