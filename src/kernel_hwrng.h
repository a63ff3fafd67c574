/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's own hwrng thread and its trust (kernel-hwrng = take-over | leave | watch):
 * since 3.17 the hw_random core credits its current backend by rng_quality, untested
 * (kernel-interfaces.md §1.7, §2.2). take-over writes 0 there while rngd reads that
 * backend and credits it through its FIPS gate at the quality it found; watch lowers it to
 * 0 when rngd's tests fail the device. Main thread only, except where said.
 */
#ifndef RNGD_KERNEL_HWRNG_H
#define RNGD_KERNEL_HWRNG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "source_set.h"

/* MESSAGE_ID= of the watch mode's demotion (RNGD_EVENT=hwrng-demoted). */
#define KERNEL_HWRNG_MESSAGE_DEMOTED "041e15bca06b48729b59622941762d79"

enum kernel_hwrng_mode {
	KERNEL_HWRNG_TAKE_OVER,
	KERNEL_HWRNG_LEAVE,
	KERNEL_HWRNG_WATCH,
};

/* Backends this process wrote 0 to and still owes their quality (give-back failed or pending). */
#define KERNEL_HWRNG_OWED_MAX 8

struct kernel_hwrng_owed {
	char backend[128];
	unsigned int quality; /* rng_quality found before this process wrote 0 */
};

struct kernel_hwrng {
	enum kernel_hwrng_mode mode;
	int fd;		      /* rng_quality for writing, kept across the drop; -1 */
	int cur_fd;	      /* rng_current for writing (root at start, kept across the drop); -1 */
	int cur_rfd;	      /* rng_current for reading (the crash handler's check, the tick); -1 */
	int q_rfd;	      /* rng_quality for reading, re-read with pread() each tick; -1 */
	int sel_rfd;	      /* rng_selected for reading (6.x; absent before): -1 */
	char *dir;	      /* the hw_random sysfs directory (malloc); NULL when not acting */
	char *state;	      /* the state file (malloc); NULL when disabled */
	bool taken;	      /* this process wrote 0 to backend's rng_quality, backend current */
	bool refused;	      /* take-over of backend refused (logged); not retried */
	bool demoted;	      /* watch: 0 written once */
	bool no_access;	      /* rng_quality could not be opened for writing: acts as leave */
	bool not_needed;      /* refused because rng_quality was 0 already (retried if raised) */
	bool lost;	      /* taken earlier in this run, given back while rngd runs */
	bool locked;	      /* holds the flock on rng_quality: the one daemon that takes over */
	bool busy;	      /* another process holds that lock: refused, retried each tick */
	pid_t holder;	      /* ... its pid (/proc/locks), 0 when unknown */
	bool deferred;	      /* left to the kernel for now (selection, other backends): retried */
	char told[128];	      /* the backend the reason for deferring was logged for */
	bool open_tried;      /* rng_quality opened or tried after start (logged once) */
	bool disabled;	      /* this run never acts (not feeding the kernel, no state path) */
	char backend[128];    /* taken over or refused */
	unsigned int quality; /* rng_quality found before the take-over */
	struct kernel_hwrng_owed owed[KERNEL_HWRNG_OWED_MAX];
	size_t n_owed;	      /* every backend this process set to 0 and has not given back */
	uint64_t trips;	      /* watch: failure-window trips seen (UINT64_MAX: take the count) */
	const void *watched;  /* ... of this source */
};

/* "take-over", "leave", "watch" to a mode. 0 or -EINVAL. */
int kernel_hwrng_mode_parse(const char *s, enum kernel_hwrng_mode *ret);

/* Nothing taken, no descriptor; kernel_hwrng_stop() is then a no-op. Cannot fail. */
void kernel_hwrng_init(struct kernel_hwrng *kh);

/* Whether it acts on a hw_random directory (rng_quality opened there once). */
bool kernel_hwrng_acting(const struct kernel_hwrng *kh);

/* Seconds between two looks (kernel_hwrng_update()) while it holds the backend, steady. */
#define KERNEL_HWRNG_LOOK_HELD 5

/*
 * How often kernel_hwrng_update() should run, in seconds; 0 when not acting. Each second
 * while something waits for it: a take-over not done yet, refused or deferred (retried),
 * watch's failing device. Every KERNEL_HWRNG_LOOK_HELD seconds while it holds the current
 * backend with nothing to retry: what such a look finds (a switch, a quality raised by a
 * driver that registered again or by hand) the kernel's thread acts on by its own clock
 * either way (on 6.1 and later at once after a switch, else at its next read, one a reseed
 * interval: kernel-interfaces.md §1.7), and what rngd credits follows the backend its reader
 * reads.
 */
unsigned int kernel_hwrng_look_seconds(const struct kernel_hwrng *kh);

/*
 * At start, while rng_quality can still be opened (before the privilege drop): for mode
 * take-over or watch, open rng_quality of dir for writing and keep it (rng_current too when
 * this process may write it: root); take-over then takes the current backend over if the
 * set reads it (kernel_hwrng_update()). dir NULL (no source reads the kernel's hwrng yet):
 * the mode is kept and a later update opens them. Never fatal: what cannot be done is
 * logged once and the mode acts as leave.
 */
void kernel_hwrng_start(struct kernel_hwrng *kh, enum kernel_hwrng_mode mode, const char *dir,
			const char *state_path, struct source_set *set);

/*
 * The set's hwrng-family source that reads the misc hwrng (char 10:183) and has not
 * ended, or NULL; *dir_ret gets its sysfs directory. set may be NULL.
 */
struct source *kernel_hwrng_reader(struct source_set *set, const char **dir_ret);

/*
 * Each tick and after a reload: open rng_quality when a source reads the kernel's hwrng
 * for the first time (rng-core loaded after start); take the current backend over when set
 * reads it (again after a backend switch, a re-registration, which resets rng_quality, an
 * administrator raising a 0, or another daemon letting it go), give it back when set no
 * longer reads it, and in watch mode demote a backend whose failure window tripped. Keeps
 * the reading source's credit for the held backend at the remembered quality.
 */
void kernel_hwrng_update(struct kernel_hwrng *kh, struct source_set *set);

/*
 * After a reload: the new mode (text of the key) and set. A changed mode gives back every
 * backend owed and forgets the remembered quality; a mode that needs rng_quality, which
 * cannot be opened any more, says to restart rngd.
 */
void kernel_hwrng_reload(struct kernel_hwrng *kh, const char *mode, struct source_set *set);

/*
 * Take over dir's current backend: the lock on rng_quality (another daemon holds it: 0,
 * said once with its pid, retried), the state file with every backend owed, then "0\n",
 * then rng_current re-read (a write to rng_quality re-runs the kernel's choice of the best
 * backend); the administrator's selection set again. Without rng_current, a selected backend
 * or one with others registered is left to the kernel (said once, retried). 1 when taken,
 * 0 when refused or not possible (logged), -errno on an error (logged).
 */
int kernel_hwrng_take(struct kernel_hwrng *kh);

/*
 * Give back every backend owed (rng_quality restored, a backend not current made current
 * for it when rng_current is writable, the selection put back); what cannot be given back
 * stays in the state file for root's restore. One line each.
 */
void kernel_hwrng_give_back(struct kernel_hwrng *kh, const char *why);

/*
 * The same ("rngd stops") when the process's exit follows at once (a stop by signal): the
 * lock, the descriptors and the memory go with the process, without kernel_hwrng_stop()'s
 * unlock and five close() calls on the stop's path.
 */
void kernel_hwrng_give_back_at_exit(struct kernel_hwrng *kh);

/*
 * For the status document: what the take-over (or watch) holds now. "held": this process
 * wrote 0 to the current backend's rng_quality; "refused": the mode wants to act but the
 * kernel still credits the backend untested (rng_quality could not be opened, read or
 * written, or the write made the kernel switch; another rngd holds it; or, without
 * rng_current, the administrator's selection or another registered backend); "lost": held earlier in this run, given
 * back while rngd runs (no source reads it any more, or the kernel switched backends and the
 * new one was not taken); "not-needed": rng_quality was 0 already; "demoted": watch lowered
 * it to 0; "none": leave, or no source reads the kernel's hwrng. *backend gets the backend
 * concerned, "" when none. Pure.
 */
const char *kernel_hwrng_takeover_state(const struct kernel_hwrng *kh, const char **backend);

/* At every exit: kernel_hwrng_give_back() and close. Accepts an initialised, unused kh. */
void kernel_hwrng_stop(struct kernel_hwrng *kh);

#endif
