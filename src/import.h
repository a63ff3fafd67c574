/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rngd --import-rng-tools [FILE] (import.c, built into rngd with the command line): print
 * the rngd.conf equivalent of an rng-tools environment file.
 */
#ifndef RNGD_IMPORT_H
#define RNGD_IMPORT_H

#include <stdio.h>

/*
 * Read path (NULL: the first of /etc/default/rng-tools-debian, /etc/default/rng-tools,
 * /etc/sysconfig/rngd, /etc/conf.d/rngd, /etc/default/rngd that exists) as data and write
 * the equivalent rngd.conf to out, with a comment for each thing dropped and why. The exit
 * code: 0, or 1 with the reason logged (no such file, not a regular file, larger than 64
 * KiB, binary).
 */
int import_rng_tools(const char *path, FILE *out);

#endif
