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
#include <sys/random.h>
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

static json_t *j_uint(uint64_t v)
{
	/* json_int_t is long long; counters never get near 2^63, but do not wrap if they do. */
	return json_integer(v > (uint64_t)LLONG_MAX ? LLONG_MAX : (json_int_t)v);
}

static void format_time(uint64_t ns, char *buf, size_t len)
{
	struct utc_time u;

	utc_from_seconds((int64_t)(ns / NSEC_PER_SEC), &u);
	snprintf(buf, len, "%04" PRId64 "-%02u-%02uT%02u:%02u:%02uZ", u.year, u.mon, u.mday, u.hour,
		 u.min, u.sec);
}

static json_t *j_time(uint64_t ns)
{
	char buf[32];

	if (ns == 0)
		return json_null();
	format_time(ns, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *j_str(const char *s)
{
	/* json_string() refuses invalid UTF-8; an error text from a device must not lose all. */
	return s ? json_stringn_nocheck(s, strlen(s)) : json_null();
}

/*
 * Set key to a new reference; counts a failure in *bad instead of returning (obj NULL, out
 * of memory, too: jansson releases v).
 */
static void set(json_t *obj, const char *key, json_t *v, int *bad)
{
	if (!v || json_object_set_new(obj, key, v) < 0)
		(*bad)++;
}

/* o when all its members were set, else NULL (o released). */
static json_t *checked(json_t *o, int bad)
{
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *source_to_json(const struct status_source *s)
{
	json_t *o = json_object(), *fips = json_object(), *ctr = json_object();
	int bad = 0;

	if (!o || !fips || !ctr) {
		json_decref(o);
		json_decref(fips);
		json_decref(ctr);
		return NULL;
	}
	set(o, "name", j_str(s->name ? s->name : "?"), &bad);
	set(o, "state", j_str(s->state ? s->state : "?"), &bad);
	set(o, "state_since", j_time(s->state_since), &bad);
	set(o, "bytes_read", j_uint(s->bytes_read), &bad);
	set(o, "blocks_tested", j_uint(s->blocks_tested), &bad);
	set(o, "blocks_passed", j_uint(s->blocks_passed), &bad);
	for (size_t i = 0; i < FIPS_N_TESTS; i++)
		set(fips, stats_fips_keys[i], j_uint(s->fips_failures[i]), &bad);
	set(o, "fips_failures", fips, &bad);
	set(o, "blocks_replayed", j_uint(s->blocks_replayed), &bad);
	set(o, "health_failures", j_uint(s->health_failures), &bad);
	set(o, "bytes_fed", j_uint(s->bytes_fed), &bad);
	set(o, "bits_credited", j_uint(s->bits_credited), &bad);
	set(o, "last_error", j_str(s->last_error), &bad);
	set(o, "last_passed", j_time(s->last_passed), &bad);
	for (size_t i = 0; i < MIN(s->n_counters, (size_t)STATUS_MAX_COUNTERS); i++)
		if (s->counters[i].name)
			set(ctr, s->counters[i].name, j_uint(s->counters[i].value), &bad);
	set(o, "counters", ctr, &bad);
	return checked(o, bad);
}

/*
 * The document goes to the file a value at a time, never as one tree: the top level and the
 * sources array are laid out here as jansson lays out JSON_INDENT(2) (each member on its
 * own line, indented two spaces a level, `"key": value`, "," between, the closing brace on
 * the parent's indent), and jansson dumps each value (a scalar, a small object, one
 * source), indented to its depth. A tree of the whole document (five sources: about 10 KiB
 * of small allocations) and json_dumps()'s doubling string and its copy (4 + 2 + 3.3 KiB)
 * raised the top of the heap 20 KiB above the daemon's data for a moment every
 * status-interval, and those pages stayed in its RSS (bench/README.md, Footprint). Now one
 * source's tree at a time, and the text through a buffer on the stack: about one write().
 * tests/test_stats.c checks the file against json_dumps() of the document read back.
 */
#define DOC_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY)

/*
 * Its 4 KiB buffer is no new stack: write_atomic() has just returned from open_dir_of()'s
 * PATH_MAX array at the same depth (the deepest stack of a daemon is feed(), daemon.c).
 */
struct writer {
	int fd;
	int err;	     /* the first failure's -errno; nothing is written after it */
	unsigned int indent; /* spaces after each newline of the value being dumped */
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

static void w_indent(struct writer *w, unsigned int n)
{
	static const char spaces[] = "        ";

	for (; n > sizeof(spaces) - 1; n -= sizeof(spaces) - 1)
		w_put(w, spaces, sizeof(spaces) - 1);
	w_put(w, spaces, n);
}

/* json_dump_callback()'s: jansson's text with each line indented by w->indent. */
static int w_dumped(const char *s, size_t n, void *data)
{
	struct writer *w = data;
	const char *nl;

	while ((nl = memchr(s, '\n', n))) {
		w_put(w, s, (size_t)(nl - s) + 1);
		w_indent(w, w->indent);
		n -= (size_t)(nl - s) + 1;
		s = nl + 1;
	}
	w_put(w, s, n);
	return 0;
}

/* v (a new reference, taken; NULL: out of memory) as a value at depth. */
static void w_value(struct writer *w, unsigned int depth, json_t *v)
{
	if (!v) {
		w->err = w->err ? w->err : -ENOMEM;
		return;
	}
	w->indent = 2 * depth;
	/* Fails only on what JSON cannot say: a string that is not UTF-8. */
	if (w->err == 0 && json_dump_callback(v, w_dumped, w, DOC_FLAGS) < 0)
		w->err = -EINVAL;
	json_decref(v);
}

/* A member of the top-level object, not the last one: `\n  "key": value,`. */
static void w_member(struct writer *w, const char *key, json_t *v)
{
	w_puts(w, "\n  \"");
	w_puts(w, key);
	w_puts(w, "\": ");
	w_value(w, 1, v);
	w_puts(w, ",");
}

static json_t *kernel_to_json(const struct status_doc *doc)
{
	json_t *o = json_object();
	int bad = 0;

	set(o, "generation", j_str(doc->kernel_generation), &bad);
	set(o, "crng_ready", json_boolean(doc->crng_ready), &bad);
	return checked(o, bad);
}

static json_t *kernel_hwrng_to_json(const struct status_doc *doc)
{
	const char *backend = doc->kernel_hwrng_backend;
	json_t *o = json_object();
	int bad = 0;

	set(o, "mode", j_str(doc->kernel_hwrng_mode ? doc->kernel_hwrng_mode : "leave"), &bad);
	set(o, "takeover", j_str(doc->kernel_hwrng_takeover ? doc->kernel_hwrng_takeover : "none"),
	    &bad);
	set(o, "backend", j_str(backend && backend[0] ? backend : NULL), &bad);
	return checked(o, bad);
}

static json_t *feed_to_json(const struct status_doc *doc)
{
	json_t *o = json_object();
	int bad = 0;

	set(o, "feeds", j_uint(doc->feeds), &bad);
	set(o, "bytes_fed", j_uint(doc->bytes_fed), &bad);
	set(o, "bits_credited", j_uint(doc->bits_credited), &bad);
	set(o, "reseeds", j_uint(doc->reseeds), &bad);
	set(o, "last_feed", j_time(doc->last_feed), &bad);
	set(o, "interval", j_uint(doc->feed_interval), &bad);
	return checked(o, bad);
}

/*
 * jansson seeds its hash tables at the first object from /dev/urandom: an open, a read and
 * a close. One getrandom() gives it the seed instead (its own way when that fails).
 */
static void seed_json(void)
{
	static bool seeded;
	uint32_t seed = 0;

	if (seeded)
		return;
	seeded = true;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed) && seed)
		json_object_seed(seed);
}

/* The whole document, newline-terminated, to fd. 0 or -errno. */
static int write_doc(int fd, const void *data)
{
	const struct status_doc *doc = data;
	struct writer w = { .fd = fd };

	seed_json();
	w_puts(&w, "{");
	w_member(&w, "version", json_integer(STATUS_FORMAT_VERSION));
	w_member(&w, "rngd_version",
		 j_str(doc->rngd_version ? doc->rngd_version : PACKAGE_VERSION));
	w_member(&w, "pid", json_integer(doc->pid));
	w_member(&w, "started", j_time(doc->started));
	w_member(&w, "updated", j_time(doc->updated ? doc->updated : realtime_ns()));
	w_member(&w, "kernel", kernel_to_json(doc));
	w_member(&w, "kernel_hwrng", kernel_hwrng_to_json(doc));
	w_member(&w, "feed", feed_to_json(doc));
	w_puts(&w, "\n  \"sources\": [");
	for (size_t i = 0; w.err == 0 && i < doc->n_sources; i++) {
		w_puts(&w, i ? ",\n    " : "\n    ");
		w_value(&w, 2, source_to_json(&doc->sources[i]));
	}
	w_puts(&w, doc->n_sources ? "\n  ]\n}\n" : "]\n}\n");
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
