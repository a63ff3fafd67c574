// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngd: command line, start-up in dependency order, and shutdown in reverse. The main loop
 * is in daemon.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdline.h"
#include "conf.h"
#include "daemon.h"
#include "fips_engine.h"
#include "import.h"
#include "kernel_hwrng_root.h"
#include "log.h"
#include "notify.h"
#include "pidfile.h"
#include "privs.h"
#include "sink.h"
#include "source.h"
#include "source_set.h"
#include "stats.h"
#include "util.h"

/*
 * Background mode: fork once everything that can fail at start has been done, so that the
 * parent's exit status is the child's start-up result (rng-tools forks first and so exits 0
 * whatever happens). Returns in the child with *report_fd set; the parent never returns.
 */
static void daemonize(int *report_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		log_error("cannot create a pipe: %m");
		exit(EXIT_RUNTIME);
	}
	pid = fork();
	if (pid < 0) {
		log_error("cannot fork: %m");
		exit(EXIT_RUNTIME);
	}
	if (pid > 0) {
		unsigned char code = EXIT_RUNTIME;

		close(p[1]);
		if (read(p[0], &code, 1) != 1) {
			int st;

			if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
				code = (unsigned char)WEXITSTATUS(st);
		}
		_exit(code);
	}
	close(p[0]);
	setsid();
	*report_fd = p[1];
}

static void report_start(int *report_fd, unsigned char code)
{
	if (*report_fd < 0)
		return;
	if (write(*report_fd, &code, 1) != 1) {
		/* The parent is gone; nothing to report to. */
	}
	close(*report_fd);
	*report_fd = -1;
	if (code == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			/* Keep a terminal for the log lines; anything else is let go of. */
			if (!isatty(STDERR_FILENO))
				dup2(fd, STDERR_FILENO);
			if (fd > STDERR_FILENO)
				close(fd);
		}
	}
}

/*
 * "no usable entropy source: NAME: why; ..." into buf, for the journal and STATUS=: why
 * each enabled source cannot work here.
 */
static void no_source_why(struct source_set *set, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "no usable entropy source");
	const char *sep = ": ";

	for (size_t i = 0; i < source_set_size(set) && off < len; i++) {
		struct source *src = source_set_get(set, i);
		struct source_stats st;

		source_get_stats(src, &st);
		if (!st.last_error_text[0])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s: %s", sep, source_name(src),
					st.last_error_text);
		sep = "; ";
	}
}

/* The standard fds that were closed at start (bit fd), now on /dev/null. */
static unsigned int std_closed;

/* Open /dev/null on whichever of fds 0-2 is closed. 0 or -errno. */
static int take_std_fds(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		std_closed |= 1u << fd;
		/* The lowest free fd: this one, as the ones below it are open. */
		n = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
		if (n < 0)
			return -errno;
		if (n != fd) {
			close(n);
			return -EBADF;
		}
	}
	return 0;
}

/*
 * Root's steps around the unit (rngd(8), SECURITY): no configuration is read, so that a
 * config that no longer parses, or another status-file, cannot keep the kernel's trust from
 * being put back. Each returns an exit code.
 */

/* --restore-kernel-hwrng (ExecStopPost=+): each thing done or refused is logged. */
static int restore_command(void)
{
	return kernel_hwrng_root_restore() < 0 ? EXIT_RUNTIME : 0;
}

/* --grant-kernel-hwrng=GROUP (ExecStartPre=+). */
static int grant_command(const char *group)
{
	char why[512] = "";
	struct group *gr = getgrnam(group);
	uint64_t gid;
	int r;

	if (gr)
		gid = gr->gr_gid;
	else if (parse_uint(group, 0, UINT32_MAX - 1, &gid) < 0) {
		log_error("--grant-kernel-hwrng: no group '%s'", group);
		return EXIT_CONFIG;
	}
	r = kernel_hwrng_root_grant((gid_t)gid, why, sizeof(why));
	if (r < 0)
		log_error("--grant-kernel-hwrng: %s", why);
	else if (r > 0) /* nothing to grant: said, not an error (the daemon acts as leave) */
		log_notice("--grant-kernel-hwrng: %s", why);
	return r < 0 ? EXIT_RUNTIME : 0;
}

/* -O NAME alone: that source's keys and defaults. */
static int show_source_options(const char *name)
{
	/* cmdline_parse() has refused unknown names. */
	return source_print_options(name, stdout) < 0 ? EXIT_USAGE : 0;
}

/*
 * The status helper: beside this program when that is where it was built (a build tree's
 * rngd runs its own), else where it is installed. A path that does not fit is not looked
 * at.
 */
static _noinline_ void status_helper_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size);
	char *slash;

	if (n > 0 && (size_t)n < size) {
		buf[n] = '\0';
		slash = strrchr(buf, '/');
		if (slash && (size_t)(slash + 1 - buf) + sizeof(STATUS_HELPER) <= size) {
			memcpy(slash + 1, STATUS_HELPER, sizeof(STATUS_HELPER));
			if (access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, size, "%s", PKGLIBEXECDIR "/" STATUS_HELPER);
}

/*
 * --status [--json | --format=F]: the running daemon's status file, for people, as it is,
 * or as metrics for Prometheus. The daemon does not link jansson, which reads it: the
 * helper (src/status_main.c) does, run here in this process's place.
 */
static _noinline_ int show_status(const struct options *o, const struct conf *conf)
{
	static const char *const formats[] = {
		[STATUS_FORMAT_TABLE] = "table",
		[STATUS_FORMAT_JSON] = "json",
		[STATUS_FORMAT_METRICS] = "openmetrics",
	};
	char helper[PATH_MAX];

	if (!conf->status_file) {
		log_error(
			"the status file is disabled ('status-file' is empty): there is no status "
			"to show");
		return EXIT_RUNTIME;
	}
	status_helper_path(helper, sizeof(helper));
	log_flush();
	execv(helper, (char *[]){ helper, (char *)formats[o->status_format],
				  (char *)conf->status_file, NULL });
	log_error("--status: cannot run '%s': %m", helper);
	return EXIT_RUNTIME;
}

/* --check-config and -l: the set is built (every key validated), then said or listed. */
static int check_sources(const struct options *o, struct source_set *set, const struct conf *conf)
{
	if (o->list)
		return source_set_list(set, stdout) > 0 ? 0 : EXIT_NO_SOURCE;
	if (conf->user) {
		uid_t uid;
		gid_t gid;

		/* The user and group must exist here (privs_lookup() says which does not). */
		if (privs_lookup(conf->user, conf->group, &uid, &gid) < 0)
			return EXIT_CONFIG;
	}
	printf("%s: configuration OK\n", conf->path ? conf->path : "defaults");
	return 0;
}

/*
 * In background mode, the pid file is locked before the sources are opened (a second
 * daemon must not switch the first's backend) and before the fork (so that it fails in
 * the foreground). 0 or an exit code.
 */
static int lock_pid_file(const struct options *o, const struct daemon *d, struct pidfile *pf)
{
	char why[256];
	pid_t holder;
	int r;

	if (o->foreground || !d->conf.pid_file)
		return 0;
	r = pidfile_lock(pf, d->conf.pid_file, &holder, why, sizeof(why));
	if (r == -EBUSY) {
		log_error("pid file '%s': %s; not starting a second one", d->conf.pid_file, why);
		return EXIT_RUNTIME;
	}
	if (r < 0)
		log_warning("cannot use pid file '%s': %s, ignoring", d->conf.pid_file, why);
	return 0;
}

/*
 * Open the sources, the CPU ones first and the boot seeding from them (daemon_seed_early())
 * before the others. 0 when at least one can work (for --once: one is open now), or an
 * exit code with the reason logged and told to systemd.
 */
static int open_sources(struct daemon *d)
{
	char text[256];
	int usable = source_set_open(d->set, SOURCE_OPEN_CPU), r;
	/*
	 * Boot seeding first, the other sources' probes (sysfs scans, devices) after it; not
	 * when their open could still find a configuration error: nothing is fed before that.
	 */
	bool early = usable > 0 && source_set_start_error(d->set) != EINVAL &&
		     !source_set_other_configured(d->set);

	if (early)
		daemon_seed_early(d);
	r = source_set_open(d->set, SOURCE_OPEN_OTHER);
	usable = usable < 0 ? usable : r < 0 ? r : usable + r;
	r = source_set_start_error(d->set);
	if (r == EINVAL) { /* the source has said why, naming itself */
		notify_nothing_to_do("bad configuration of a source");
		return EXIT_CONFIG;
	}
	/*
	 * --once seeds from what is there now: it does not wait for a device to appear (a
	 * source that passed a block in the boot seeding is running already).
	 */
	if (usable > 0 && d->mode == DAEMON_ONCE)
		usable = (int)(source_set_count_state(d->set, SOURCE_STARTING) +
			       source_set_count_state(d->set, SOURCE_RUNNING));
	if (usable > 0 && !early)
		daemon_seed_early(d);
	if (usable > 0)
		return 0;
	no_source_why(d->set, text, sizeof(text));
	log_full(LOG_WARNING, NULL, "no-source", SOURCE_MESSAGE_NO_SOURCE, "%s", text);
	/* A limit or a permission of this run is a runtime failure, not "nothing here". */
	if (r > 0) {
		log_error("a source failed for a reason of this run (%s), not for want of hardware",
			  strerror(r));
		return EXIT_RUNTIME;
	}
	notify_nothing_to_do(text);
	return EXIT_NO_SOURCE;
}

/*
 * Hand the status directory to the daemon's user (so that the status file can still be
 * replaced after the drop). Never fatal: without it there is no status file. 0, or -errno
 * when the user does not exist.
 */
static int hand_over_status_dir(const struct conf *conf)
{
	uid_t uid;
	gid_t gid;
	int r;

	if (!conf->user || !conf->status_file)
		return 0;
	r = privs_lookup(conf->user, conf->group, &uid, &gid);
	if (r < 0)
		return r;
	r = stats_prepare_dir(conf->status_file, uid, gid);
	if (r == -ELOOP)
		log_warning("the directory of '%s' is a symlink: not followed; no status file",
			    conf->status_file);
	else if (r == -EPERM)
		log_warning("the directory of '%s' is neither user '%s''s nor one rngd made "
			    "(root's, mode 0755, only its files): not handing it over; no status "
			    "file",
			    conf->status_file, conf->user);
	else if (r < 0)
		log_warning("cannot prepare the directory of '%s': %s, ignoring", conf->status_file,
			    strerror(-r));
	return 0;
}

/*
 * Every device, sysfs file and MSR is open: drop what is not needed from here on, before
 * any thread starts (capabilities are per thread). 0 or an exit code.
 */
static int drop_privileges(struct daemon *d)
{
	int r = hand_over_status_dir(&d->conf);

	/* Opens rng_quality for writing, which the drop would make impossible. */
	daemon_start_kernel_hwrng(d);
	if (r >= 0)
		r = privs_drop(d->conf.user, d->conf.group);
	if (r >= 0)
		r = privs_verify();
	if (r >= 0)
		return 0;
	return r == -EPERM		      ? EXIT_NO_PERM
	       : r == -ENOENT || r == -EINVAL ? EXIT_CONFIG
					      : EXIT_RUNTIME;
}

/*
 * From open sources to running threads: the fork (background mode), the pid file, the
 * drop. 0 or an exit code, which the parent of the fork exits with too.
 */
static int start_daemon(const struct options *o, struct daemon *d, struct pidfile *pf)
{
	int report_fd = -1, ret, r;

	if (!o->foreground)
		daemonize(&report_fd);
	r = pidfile_write(pf);
	if (r < 0)
		log_warning("cannot write pid file '%s': %s, ignoring", pf->path, strerror(-r));
	/* After the drop, the daemon may not remove it from its directory: a keeper will. */
	if (pf->fd >= 0 && d->conf.user) {
		r = pidfile_keep_removable(pf);
		if (r < 0)
			log_warning("pid file '%s' may stay behind at exit: %s", pf->path,
				    strerror(-r));
	}
	ret = drop_privileges(d);
	if (ret == 0 && daemon_start(d) < 0)
		ret = EXIT_RUNTIME;
	report_start(&report_fd, (unsigned char)ret);
	return ret;
}

/*
 * A stop by signal (d->leave_readers): the kernel's hwrng given back, the last numbers,
 * status and pid files written or removed, every write to the sink made with write() (no
 * stdio buffer). End the process now, the readers with it, without waking or joining them:
 * the exit_group() ends each thread, virtio-rng's killable read included. Their memory is
 * not wiped (the address space goes with them), nothing is freed. The log's last repeat
 * line is the one thing left to write.
 */
static _Noreturn void end_now(int code)
{
	log_flush();
	_exit(code);
}

/* Run until the daemon stops: its exit code. */
static int wait_daemon(struct daemon *d)
{
	int r = daemon_run(d);

	if (d->conf.status_file)
		(void)stats_remove_status(d->conf.status_file);
	return r == -EPERM    ? EXIT_NO_PERM
	       : r == -ENOENT ? EXIT_NO_SOURCE
	       : r < 0	      ? EXIT_RUNTIME
			      : 0;
}

/*
 * The daemon's modes (feed, -t, --once, --dump): conf and set become the daemon's (freed
 * here either way). The exit code.
 */
static int run_daemon(struct options *o, struct conf *conf, struct source_set *set)
{
	enum daemon_mode mode = o->test_mode ? DAEMON_TEST
				: o->once    ? DAEMON_ONCE
				: o->dump    ? DAEMON_DUMP
					     : DAEMON_FEED;
	struct pidfile pid_file = { .fd = -1, .keeper_fd = -1 };
	struct daemon d;
	int ret, r;

	r = daemon_init(&d, conf, set, mode, o->dump_bytes, cmdline_reload_config, o);
	if (r < 0) {
		if (r == -EPERM)
			notify_nothing_to_do("not permitted to feed the kernel: no CAP_SYS_ADMIN");
		source_set_free(set);
		conf_free(conf);
		return r == -EPERM ? EXIT_NO_PERM : EXIT_RUNTIME;
	}
	ret = lock_pid_file(o, &d, &pid_file);
	if (!ret)
		ret = open_sources(&d);
	if (!ret)
		ret = start_daemon(o, &d, &pid_file);
	if (ret) /* a failed start puts back what the sources changed (rng_current): rngd(8) */
		source_set_abort(d.set);
	else
		ret = wait_daemon(&d);
	pidfile_release(&pid_file);
	if (d.leave_readers)
		end_now(ret);
	daemon_fini(&d);
	return ret;
}

/* Everything after the command line: one mode, its exit code. */
static int run_mode(struct options *o)
{
	char err[CONF_ERR_MAX];
	struct source_set *set = NULL;
	struct conf conf;
	int ret;

	if (o->import)
		return import_rng_tools(o->import_file, stdout);
	if (o->print_options)
		return show_source_options(o->print_options);
	if (o->restore_kernel_hwrng)
		return restore_command();
	if (o->grant_kernel_hwrng)
		return grant_command(o->grant_kernel_hwrng);
	if (cmdline_load_config(o, &conf, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return EXIT_CONFIG;
	}
	o->config_seen = conf.path != NULL;
	if (o->status)
		ret = show_status(o, &conf);
	else if (o->dump && cmdline_dump_config(o, &conf, err, sizeof(err)) < 0) {
		log_error("%s", err);
		ret = EXIT_CONFIG;
	} else if (source_set_new(&set, &conf, err, sizeof(err)) < 0) {
		log_error("%s", err);
		ret = EXIT_CONFIG;
	} else if (o->check_config || o->list) {
		ret = check_sources(o, set, &conf);
		source_set_free(set);
	} else if ((std_closed & (1u << STDOUT_FILENO)) &&
		   (o->dump || strcmp(conf.random_device, "-") == 0 ||
		    strcmp(conf.random_device, "/dev/stdout") == 0)) {
		/* Writing to the /dev/null put there would "succeed" and lose every byte. */
		log_error("%s: standard output is closed (started with >&-): nothing to write "
			  "the data to",
			  o->dump ? "--dump" : "-o /dev/stdout");
		source_set_free(set);
		ret = EXIT_CONFIG;
	} else {
		return run_daemon(o, &conf, set);
	}
	conf_free(&conf);
	return ret;
}

/* RNGD_FIPS_ENGINE (rngd(8) ENVIRONMENT), before any thread tests a block. */
static int select_fips_engine(void)
{
	const char *name = getenv("RNGD_FIPS_ENGINE");
	int r = fips_engine_select(name);

	if (r == -EINVAL)
		log_error("RNGD_FIPS_ENGINE=%s: unknown FIPS engine (one of %s)", name,
			  fips_engine_names());
	else if (r < 0)
		log_error("RNGD_FIPS_ENGINE=%s: this CPU cannot run that FIPS engine", name);
	return r;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	char why[256];
	int ret;

	/*
	 * First thing: a closed standard fd would be taken by the next open (signalfd, the
	 * sink, an output file) and then written to as a log or overwritten with /dev/null.
	 */
	if (take_std_fds() < 0)
		return EXIT_RUNTIME;
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
	/*
	 * One malloc arena: the reader threads allocate once each (their history), which is
	 * not worth an arena of 64 MiB address space and its set-up per thread. (glibc's;
	 * musl's malloc has no per-thread arenas, and no mallopt.)
	 */
	mallopt(M_ARENA_MAX, 1);
#endif
	log_set_ident("rngd");
	cmdline_parse(&o, argc, argv);
	log_setup(o.log_level, o.foreground ? LOG_TARGET_AUTO : LOG_TARGET_STDERR);
	cmdline_log_notices(&o);

	if (source_check_drivers(source_drivers, source_n_drivers, why, sizeof(why)) < 0) {
		log_error("internal error: source table: %s", why);
		ret = EXIT_RUNTIME;
	} else if (select_fips_engine() < 0) {
		ret = EXIT_CONFIG;
	} else {
		ret = run_mode(&o);
	}
	cmdline_free(&o);
	log_flush();
	return ret;
}
