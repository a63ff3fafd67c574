// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reload (SIGHUP) for the main loop: build and start the new set first, swap, retire the
 * old one without waiting on a blocked read; any failure keeps the old set running.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_internal.h"
#include "daemon_status.h"
#include "log.h"
#include "notify.h"
#include "util.h"

/* Both NULL, or equal strings. */
static bool str_equal(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/*
 * [rngd] keys the running daemon cannot change (the sink is open, privileges are
 * dropped): keep the running value in the new configuration and say so. 0 or -errno.
 */
static int keep_restart_keys(struct daemon *d, struct conf *conf, char *err, size_t len)
{
	char names[64] = "";
	int r;

	if (strcmp(conf->random_device, d->conf.random_device) != 0) {
		/* Through conf_set(): the default name is static and must not be freed. */
		r = conf_set(conf, "random-device", d->conf.random_device, "reload", err, len);
		if (r < 0)
			return r;
		snprintf(names, sizeof(names), "'random-device'");
	}
	if (!str_equal(conf->user, d->conf.user) || !str_equal(conf->group, d->conf.group)) {
		char *user = d->conf.user ? strdup(d->conf.user) : NULL;
		char *group = d->conf.group ? strdup(d->conf.group) : NULL;

		if ((d->conf.user && !user) || (d->conf.group && !group)) {
			free(user);
			free(group);
			snprintf(err, len, "out of memory");
			return -ENOMEM;
		}
		free(conf->user);
		free(conf->group);
		conf->user = user;
		conf->group = group;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'user', 'group'",
			 names[0] ? ", " : "");
	}
	if (names[0])
		log_warning("%s change only with a restart; the running values stay until then",
			    names);
	return 0;
}

/* A reload's old set: what does not end within RETIRE_LIMIT_NS is reaped later. */
#define RETIRE_LIMIT_NS (10 * NSEC_PER_MSEC)

static void retire(struct daemon *d, struct source_set *old)
{
	if (source_set_retire(old, RETIRE_LIMIT_NS)) {
		source_set_free(old);
		return;
	}
	if (d->n_retired < ARRAY_SIZE(d->retired)) {
		log_debug("a retired source thread is still in its driver's read; reaped later");
		d->retired[d->n_retired++] = old;
		return;
	}
	/* Too many reads that never end: leave this one to the exit (source_set_free()). */
	if (!source_set_stop_within(old, STOP_LIMIT_NS))
		log_debug("a retired source thread is still in its driver's read; the exit ends it");
	source_set_free(old);
}

/* Free the retired sets whose threads have all ended (main loop, after each wake-up). */
void daemon_reap_retired(struct daemon *d)
{
	for (size_t i = 0; i < d->n_retired;) {
		if (source_set_reap(d->retired[i])) {
			source_set_free(d->retired[i]);
			d->retired[i] = d->retired[--d->n_retired];
		} else {
			i++;
		}
	}
}

/*
 * SIGHUP: read the configuration again and apply it as one transaction. The new sources
 * are built, opened and started beside the old ones; only then are they swapped in and
 * the old set retired, without waiting for a read blocked in its driver. Any failure
 * keeps the old set running and says why. A configuration whose sources are unchanged
 * keeps the running set (nothing re-opened: after a privilege drop, a re-open may not be
 * allowed). Returns 0: a reload never stops the daemon.
 */
int daemon_reload(struct daemon *d)
{
	char err[CONF_ERR_MAX], what[160];
	uint64_t t0 = now_ns();
	struct conf conf;
	struct source_set *set = NULL, *old;
	const struct source *denied;
	struct pool *pool = NULL;
	bool same;
	int usable, r;

	if (!d->reload)
		return 0;
	notify_reloading();
	log_info("reloading the configuration");
	if (d->reload(d->reload_ctx, &conf, err, sizeof(err)) < 0) {
		log_error("%s; keeping the old configuration", err);
		goto done;
	}
	if (keep_restart_keys(d, &conf, err, sizeof(err)) < 0 ||
	    source_set_new(&set, &conf, err, sizeof(err)) < 0) {
		log_error("%s; keeping the old configuration", err);
		goto fail;
	}
	same = !source_set_differs(d->set, set, what, sizeof(what));
	if (same) {
		source_set_free(set);
		set = NULL;
		goto swap_conf;
	}
	daemon_setup_ring(d, set);
	usable = source_set_init(set);
	denied = source_set_denied(set);
	if (denied && geteuid() != 0) {
		log_error("reload refused: the change to %s needs privileges rngd no longer has "
			  "(%s: %s); restart rngd to apply it; keeping the old configuration",
			  what, source_name(denied), "permission denied");
		goto fail;
	}
	if (source_set_start_error(set) == EINVAL) { /* the source has said why */
		log_error("a source of the new configuration is misconfigured; keeping the old one");
		goto fail;
	}
	if (usable <= 0) {
		log_error("no usable source in the new configuration; keeping the old one");
		goto fail;
	}
	r = pool_new(&pool, set);
	if (r >= 0)
		r = source_set_start(set, d->wake_fd);
	if (r < 0) {
		log_error("cannot start the new sources: %s; keeping the old configuration",
			  strerror(-r));
		goto fail;
	}
	old = d->set;
	d->set = set;
	set = NULL;
	pool_free(d->pool);
	d->pool = pool;
	pool = NULL;
	retire(d, old);
swap_conf:
	conf_free(&d->conf);
	d->conf = conf;
	daemon_setup_policy(d, true);
	kernel_hwrng_reload(&d->kh, d->conf.kernel_hwrng, d->set);
	daemon_reset_tick(d);
	log_full(LOG_INFO, NULL, "reloaded", DAEMON_MESSAGE_RELOADED,
		 "configuration reloaded in %.1f ms: %zu source(s)%s",
		 (double)(now_ns() - t0) / (double)NSEC_PER_MSEC, daemon_usable_sources(d),
		 same ? ", unchanged and kept running" : "");
	goto done;
fail:
	pool_free(pool);
	source_set_abort(set); /* put back what its sources changed (rng_current) */
	if (set && !source_set_stop_within(set, STOP_LIMIT_NS))
		log_debug("a new source thread is still in its driver's read; the exit ends it");
	source_set_free(set);
	conf_free(&conf);
done:
	notify_ready();
	daemon_update_status(d, true);
	return 0;
}
