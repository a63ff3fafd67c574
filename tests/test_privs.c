// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/privs.c. They need root (they drop privileges for real, each in a
 * forked child) and are skipped otherwise. The child reports its /proc/self/status lines
 * and whether RNDADDENTROPY still works on a /dev/random opened before the drop.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/random.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "privs.h"
#include "util.h"

struct report {
	int drop_r;
	int verify_r;
	int ioctl_r;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	unsigned long uid[4], gid[4];
	unsigned int nnp;
	int groups;
	gid_t group0;
};

/* How the child gets into the state privs_drop() starts from. */
enum pre {
	PRE_ROOT,	/* plain root */
	PRE_SYSTEMD,	/* non-root with CAP_SYS_ADMIN in the ambient set, as User= gives */
	PRE_ROOT_LIMITED, /* root with CapabilityBoundingSet=CAP_SYS_ADMIN: no CAP_SETPCAP */
};

static bool have_user(const char *user, const char *group)
{
	return getpwnam(user) && (!group || getgrnam(group));
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("skipped: needs root to drop privileges\n");
		skip();
	}
	if (!have_user("nobody", "nogroup")) {
		print_message("skipped: no user 'nobody' or group 'nogroup' here\n");
		skip();
	}
}

static void fill_status(struct report *rep)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	gid_t groups[8];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "CapInh: %" SCNx64, &rep->cap_inh);
		sscanf(line, "CapPrm: %" SCNx64, &rep->cap_prm);
		sscanf(line, "CapEff: %" SCNx64, &rep->cap_eff);
		sscanf(line, "CapBnd: %" SCNx64, &rep->cap_bnd);
		sscanf(line, "CapAmb: %" SCNx64, &rep->cap_amb);
		sscanf(line, "NoNewPrivs: %u", &rep->nnp);
		sscanf(line, "Uid: %lu %lu %lu %lu", &rep->uid[0], &rep->uid[1], &rep->uid[2],
		       &rep->uid[3]);
		sscanf(line, "Gid: %lu %lu %lu %lu", &rep->gid[0], &rep->gid[1], &rep->gid[2],
		       &rep->gid[3]);
	}
	fclose(f);
	rep->groups = getgroups(ARRAY_SIZE(groups), groups);
	rep->group0 = rep->groups > 0 ? groups[0] : (gid_t)-1;
}

static int add_entropy(int fd)
{
	struct rand_pool_info *info = malloc(sizeof(*info) + 64);
	int r = 0;

	if (!info)
		return -ENOMEM;
	/* The kernel's own output: fed back with no credit, only to test the permission. */
	info->entropy_count = 0;
	info->buf_size = 64;
	if (getrandom(info->buf, 64, 0) != 64)
		r = -EIO;
	else if (ioctl(fd, RNDADDENTROPY, info) < 0)
		r = -errno;
	free(info);
	return r;
}

/* Become uid/gid of nobody holding CAP_SYS_ADMIN (and CAP_SYS_RAWIO) in all sets. */
static int become_systemd_user(void)
{
	struct passwd *pw = getpwnam("nobody");
	gid_t gid = pw->pw_gid;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(1, &gid) < 0 ||
	    setresgid(gid, gid, gid) < 0 || setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		return -errno;
	{
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2] = { 0 };
		uint32_t m = (1u << CAP_SYS_ADMIN) | (1u << CAP_SYS_RAWIO);

		d[0].effective = d[0].permitted = d[0].inheritable = m;
		if (syscall(SYS_capset, &h, d) < 0)
			return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0) < 0)
		return -errno;
	return 0;
}

/* What systemd does for a root service with CapabilityBoundingSet=CAP_SYS_ADMIN. */
static int become_limited_root(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };

	for (int cap = 0; cap < 64; cap++) {
		if (cap == CAP_SYS_ADMIN)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	}
	d[0].effective = d[0].permitted = 1u << CAP_SYS_ADMIN;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

/*
 * The child's RNDADDENTROPY succeeded. Under qemu-user (a cross build, scripts/cross) the
 * ioctl is not translated and answers ENOSYS: that part is not checked there, saying so.
 */
static void assert_fed(int r)
{
	const char *emu = getenv("RNGD_EMU");

	if (emu && r == -ENOSYS) {
		print_message("SKIP RNDADDENTROPY after the drop: under emulation (%s), "
			      "which answers it with ENOSYS\n", emu);
		return;
	}
	assert_int_equal(r, 0);
}

static void run_child(enum pre pre, const char *user, const char *group, struct report *rep)
{
	int p[2];
	pid_t pid;
	int status;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct report r = { 0 };
		int fd = open("/dev/random", O_WRONLY | O_CLOEXEC);

		close(p[0]);
		r.drop_r = -ENOTRECOVERABLE;
		if (pre == PRE_SYSTEMD && become_systemd_user() < 0)
			goto out;
		if (pre == PRE_ROOT_LIMITED && become_limited_root() < 0)
			goto out;
		r.drop_r = privs_drop(user, group);
		if (r.drop_r == 0)
			r.verify_r = privs_verify();
		fill_status(&r);
		r.ioctl_r = fd < 0 ? -errno : add_entropy(fd);
out:
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read_full(p[0], rep, sizeof(*rep)), sizeof(*rep));
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void assert_caps_reduced(const struct report *rep)
{
	assert_true(rep->cap_eff == PRIVS_KEPT_CAPS);
	assert_true(rep->cap_prm == PRIVS_KEPT_CAPS);
	assert_true(rep->cap_inh == 0);
	assert_true(rep->cap_amb == 0);
	assert_int_equal(rep->nnp, 1);
}

static void test_drop_to_nobody(void **state)
{
	struct report rep;
	struct passwd *pw;
	struct group *gr;

	need_root();
	pw = getpwnam("nobody");
	gr = getgrnam("nogroup");
	run_child(PRE_ROOT, "nobody", "nogroup", &rep);
	assert_int_equal(rep.drop_r, 0);
	assert_int_equal(rep.verify_r, 0);
	assert_caps_reduced(&rep);
	assert_true(PRIVS_KEPT_CAPS == 0x0000000000200000);
	assert_true(rep.cap_bnd == PRIVS_KEPT_CAPS);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rep.uid[i], pw->pw_uid);
		assert_int_equal(rep.gid[i], gr->gr_gid);
	}
	assert_int_equal(rep.groups, 1);
	assert_int_equal(rep.group0, gr->gr_gid);
	/* The point of keeping CAP_SYS_ADMIN: feeding the kernel still works. */
	assert_fed(rep.ioctl_r);
}

static void test_drop_primary_group(void **state)
{
	struct report rep;
	struct passwd *pw;

	need_root();
	pw = getpwnam("nobody");
	run_child(PRE_ROOT, "nobody", NULL, &rep);
	assert_int_equal(rep.drop_r, 0);
	assert_int_equal(rep.verify_r, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rep.gid[i], pw->pw_gid);
}

static void test_stay_root(void **state)
{
	struct report rep;

	need_root();
	run_child(PRE_ROOT, NULL, NULL, &rep);
	assert_int_equal(rep.drop_r, 0);
	assert_int_equal(rep.verify_r, 0);
	assert_caps_reduced(&rep);
	assert_true(rep.cap_bnd == PRIVS_KEPT_CAPS);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rep.uid[i], 0);
	assert_fed(rep.ioctl_r);
}

static void test_limited_root(void **state)
{
	struct report rep;

	need_root();
	/* Nothing left to drop, and no CAP_SETPCAP to drop it with: still a success. */
	run_child(PRE_ROOT_LIMITED, NULL, NULL, &rep);
	assert_int_equal(rep.drop_r, 0);
	assert_int_equal(rep.verify_r, 0);
	assert_caps_reduced(&rep);
	assert_true(rep.cap_bnd == PRIVS_KEPT_CAPS);
	assert_int_equal(rep.uid[0], 0);
	assert_fed(rep.ioctl_r);
}

static void test_already_unprivileged(void **state)
{
	struct report rep;
	struct passwd *pw;
	uid_t nobody;

	need_root();
	pw = getpwnam("nobody");
	assert_non_null(pw);
	nobody = pw->pw_uid; /* getpwnam()'s buffer is reused by have_user() */
	/* Started by systemd as User=nobody AmbientCapabilities=CAP_SYS_ADMIN: no switch. */
	run_child(PRE_SYSTEMD, NULL, NULL, &rep);
	assert_int_equal(rep.drop_r, 0);
	assert_int_equal(rep.verify_r, 0);
	assert_caps_reduced(&rep);
	assert_int_equal(rep.uid[0], nobody);
	assert_fed(rep.ioctl_r);
	/* Naming the user it already is, is fine too. */
	run_child(PRE_SYSTEMD, "nobody", NULL, &rep);
	assert_int_equal(rep.drop_r, 0);
	assert_int_equal(rep.verify_r, 0);
	/*
	 * Another user cannot be reached without CAP_SETUID: rng-tools' -D daemon:daemon
	 * under the unit's User= is moot (a warning), and the daemon stays who it is.
	 */
	if (have_user("daemon", NULL)) {
		run_child(PRE_SYSTEMD, "daemon", NULL, &rep);
		assert_int_equal(rep.drop_r, 0);
		assert_int_equal(rep.verify_r, 0);
		assert_caps_reduced(&rep);
		assert_int_equal(rep.uid[0], nobody);
	}
}

static void test_unknown_names(void **state)
{
	struct report rep;

	need_root();
	run_child(PRE_ROOT, "rngd-no-such-user", NULL, &rep);
	assert_int_equal(rep.drop_r, -ENOENT);
	/* Nothing was dropped on the way to the error. */
	assert_true(rep.cap_eff != PRIVS_KEPT_CAPS);
	run_child(PRE_ROOT, "nobody", "rngd-no-such-group", &rep);
	assert_int_equal(rep.drop_r, -ENOENT);
	run_child(PRE_ROOT, "root", NULL, &rep);
	assert_int_equal(rep.drop_r, -EINVAL);
}

static void test_lookup(void **state)
{
	uid_t uid = 7, nobody_uid;
	gid_t gid = 7, nobody_gid, nogroup_gid;

	need_root();
	/* getpwnam() returns static storage that the next lookup overwrites: copy. */
	nobody_uid = getpwnam("nobody")->pw_uid;
	nobody_gid = getpwnam("nobody")->pw_gid;
	nogroup_gid = getgrnam("nogroup")->gr_gid;
	assert_int_equal(privs_lookup("nobody", "nogroup", &uid, &gid), 0);
	assert_int_equal(uid, nobody_uid);
	assert_int_equal(gid, nogroup_gid);
	assert_int_equal(privs_lookup("nobody", NULL, &uid, &gid), 0);
	assert_int_equal(gid, nobody_gid);
	assert_int_equal(privs_lookup("rngd-no-such-user", NULL, &uid, &gid), -ENOENT);
	assert_int_equal(privs_lookup("root", NULL, &uid, &gid), -EINVAL);
	assert_int_equal(uid, nobody_uid);
}

static void test_verify_catches_root(void **state)
{
	int p[2], r = 0;
	pid_t pid;

	need_root();
	/* Without a drop, a root process can raise anything: verify must say so. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		r = privs_verify();
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read_full(p[0], &r, sizeof(r)), sizeof(r));
	close(p[0]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(r, -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_to_nobody),
		cmocka_unit_test(test_drop_primary_group),
		cmocka_unit_test(test_stay_root),
		cmocka_unit_test(test_limited_root),
		cmocka_unit_test(test_already_unprivileged),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_verify_catches_root),
	};

	if (geteuid() != 0) {
		printf("SKIP: test_privs needs root to drop privileges\n");
		return 77;
	}
	log_setup(LOG_CRIT, LOG_TARGET_STDERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
