// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#ifdef HAVE_SYSTEMD
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "sdlib.h"
#include "util.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sdlib lib;
static bool loaded;
static char error[256];

/* Each symbol and where its address goes. */
static const struct {
	const char *name;
	void **addr;
} symbols[] = {
	/* POSIX's sanctioned way to fill a function pointer from dlsym() (dlsym(3)). */
	{ "sd_notify", (void **)&lib.notify },
	{ "sd_notify_barrier", (void **)&lib.notify_barrier },
	{ "sd_watchdog_enabled", (void **)&lib.watchdog_enabled },
	{ "sd_journal_send", (void **)&lib.journal_send },
};

static void load(void)
{
	/* RTLD_NOW: what the library itself lacks is an error here, not at the first call. */
	void *h = dlopen(LIBSYSTEMD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(error, sizeof(error), "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(symbols); i++) {
		*symbols[i].addr = dlsym(h, symbols[i].name);
		if (!*symbols[i].addr) {
			snprintf(error, sizeof(error), "%s", dlerror());
			dlclose(h);
			return;
		}
	}
	loaded = true;
}

const struct sdlib *sdlib_get(const char **why)
{
	pthread_once(&once, load);
	if (!loaded && why)
		*why = error;
	return loaded ? &lib : NULL;
}
#endif
