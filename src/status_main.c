// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngd-status: the reader behind `rngd --status`, which runs it with the status file's
 * path resolved from the configuration. A program of its own so that the daemon does not
 * link jansson (bench/README.md, footprint): the daemon writes the document (stats.c),
 * this reads it back (stats_read.c). Not for people to run; installed in
 * $(pkglibexecdir).
 *
 * Usage: rngd-status table|json|openmetrics PATH
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "cmdline.h"
#include "log.h"
#include "metrics.h"
#include "stats.h"

int main(int argc, char **argv)
{
	struct status_loaded s;
	const char *format, *path;
	int r;

	log_set_ident("rngd");
	log_setup(LOG_INFO, LOG_TARGET_STDERR);
	if (argc != 3 || !*argv[2]) {
		log_error("rngd-status: usage: rngd-status table|json|openmetrics PATH "
			  "(run by rngd --status)");
		return EXIT_USAGE;
	}
	format = argv[1];
	path = argv[2];
	if (strcmp(format, "table") == 0 || strcmp(format, "json") == 0) {
		r = stats_print_status(path, strcmp(format, "json") == 0, stdout);
	} else if (strcmp(format, "openmetrics") == 0) {
		r = stats_load_status(path, &s);
		if (r == 0) {
			r = metrics_format(&s.doc, stdout);
			stats_status_free(&s);
		}
	} else {
		log_error("rngd-status: unknown format '%s' (table, json, openmetrics)", format);
		return EXIT_USAGE;
	}
	return r < 0 || fflush(stdout) != 0 ? EXIT_RUNTIME : 0;
}
