// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metrics for Prometheus from the status snapshot (metrics.h). Names follow Prometheus'
 * conventions: the rngd_ prefix, base units (_bytes, _bits, _seconds), _total on counters,
 * _timestamp_seconds on points in time, one family per meaning with labels for its
 * dimensions (source, test, check), and enumerations as one 0/1 gauge per possible value
 * (an OpenMetrics "stateset"), so that an alert can select the state it means.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "util.h"

const char *const metrics_source_states[] = {
	"starting", "running", "backoff", "waiting", "failed", "absent",
};
const size_t metrics_n_source_states = ARRAY_SIZE(metrics_source_states);

static const char *const kernel_hwrng_modes[] = { "take-over", "leave", "watch" };
static const char *const takeover_states[] = {
	"held", "refused", "lost", "not-needed", "demoted", "none",
};

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value, escaped as the text format wants (backslash, double quote, newline). */
static void label_value(FILE *f, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* The labels of a sample: {k1="v1",k2="v2"}; a NULL key ends them. */
static void labels(FILE *f, const char *k1, const char *v1, const char *k2, const char *v2)
{
	if (k1) {
		fprintf(f, "{%s=\"", k1);
		label_value(f, v1);
		if (k2) {
			fprintf(f, "\",%s=\"", k2);
			label_value(f, v2);
		}
		fputs("\"}", f);
	}
}

/* name{labels} value */
static void sample(FILE *f, const char *name, const char *k1, const char *v1, const char *k2,
		   const char *v2, uint64_t value)
{
	fputs(name, f);
	labels(f, k1, v1, k2, v2);
	fprintf(f, " %" PRIu64 "\n", value);
}

/*
 * The same for a number of bits, shown in bytes: Prometheus' base unit for bits is the byte
 * (promtool says "use base unit bytes"). Eighths are exact in decimal (".125").
 */
static void sample_bits(FILE *f, const char *name, const char *k1, const char *v1, uint64_t bits)
{
	fputs(name, f);
	labels(f, k1, v1, NULL, NULL);
	fprintf(f, " %" PRIu64, bits / 8);
	if (bits % 8)
		fprintf(f, ".%03u", (unsigned int)(bits % 8) * 125);
	fputc('\n', f);
}

static uint64_t seconds(uint64_t ns)
{
	return ns / NSEC_PER_SEC;
}

static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* One 0/1 series per value of names[], label key, plus extra labels k2=v2 on each. */
static void stateset(FILE *f, const char *name, const char *key, const char *const *names, size_t n,
		     const char *now, const char *k2, const char *v2)
{
	bool known = false;

	for (size_t i = 0; i < n; i++) {
		known = known || same(names[i], now);
		if (k2)
			sample(f, name, k2, v2, key, names[i], same(names[i], now));
		else
			sample(f, name, key, names[i], NULL, NULL, same(names[i], now));
	}
	/* A value this rngd does not know (a newer writer of the status file): shown too. */
	if (!known && now && k2)
		sample(f, name, k2, v2, key, now, 1);
	else if (!known && now)
		sample(f, name, key, now, NULL, NULL, 1);
}

static void global_metrics(const struct status_doc *d, FILE *f)
{
	const char *backend = d->kernel_hwrng_backend ? d->kernel_hwrng_backend : "";

	family(f, "rngd_build_info", "gauge", "The rngd version that wrote these metrics.");
	sample(f, "rngd_build_info", "version", d->rngd_version ? d->rngd_version : "?", NULL, NULL,
	       1);
	family(f, "rngd_start_time_seconds", "gauge",
	       "When the daemon started, seconds since the Unix epoch.");
	sample(f, "rngd_start_time_seconds", NULL, NULL, NULL, NULL, seconds(d->started));
	family(f, "rngd_last_update_timestamp_seconds", "gauge",
	       "When the snapshot these metrics show was taken, seconds since the Unix epoch.");
	sample(f, "rngd_last_update_timestamp_seconds", NULL, NULL, NULL, NULL,
	       seconds(d->updated ? d->updated : realtime_ns()));
	family(f, "rngd_crng_ready", "gauge",
	       "Whether the kernel's CRNG was initialised (1) or not yet (0).");
	sample(f, "rngd_crng_ready", NULL, NULL, NULL, NULL, d->crng_ready);
	family(f, "rngd_feeds_total", "counter",
	       "Successful injections into the kernel (RNDADDENTROPY); none with an output.");
	sample(f, "rngd_feeds_total", NULL, NULL, NULL, NULL, d->feeds);
	family(f, "rngd_fed_bytes_total", "counter",
	       "Tested bytes fed to the kernel (or written to the output).");
	sample(f, "rngd_fed_bytes_total", NULL, NULL, NULL, NULL, d->bytes_fed);
	family(f, "rngd_credited_entropy_bytes_total", "counter",
	       "Entropy credited to the kernel with the fed bytes, in bytes (bits / 8).");
	sample_bits(f, "rngd_credited_entropy_bytes_total", NULL, NULL, d->bits_credited);
	family(f, "rngd_reseeds_total", "counter", "Successful RNDRESEEDCRNG calls.");
	sample(f, "rngd_reseeds_total", NULL, NULL, NULL, NULL, d->reseeds);
	family(f, "rngd_last_feed_timestamp_seconds", "gauge",
	       "When the last injection into the kernel succeeded, seconds since the Unix epoch; 0: never.");
	sample(f, "rngd_last_feed_timestamp_seconds", NULL, NULL, NULL, NULL,
	       seconds(d->last_feed));
	family(f, "rngd_feed_interval_seconds", "gauge",
	       "The feed-interval setting: seconds between feeds once the CRNG is ready.");
	sample(f, "rngd_feed_interval_seconds", NULL, NULL, NULL, NULL, d->feed_interval);
	family(f, "rngd_kernel_hwrng_mode", "gauge",
	       "The kernel-hwrng setting: 1 for the mode in force, 0 for the others.");
	stateset(f, "rngd_kernel_hwrng_mode", "mode", kernel_hwrng_modes,
		 ARRAY_SIZE(kernel_hwrng_modes), d->kernel_hwrng_mode, NULL, NULL);
	family(f, "rngd_kernel_hwrng_takeover", "gauge",
	       "What kernel-hwrng holds over the backend: 1 for its state, 0 for the others.");
	stateset(f, "rngd_kernel_hwrng_takeover", "state", takeover_states,
		 ARRAY_SIZE(takeover_states), d->kernel_hwrng_takeover, "backend", backend);
}

/* The per-source counters that are a field of struct status_source each. */
static const struct {
	const char *name, *help;
	size_t off;
} source_counters[] = {
	{ "rngd_source_read_bytes_total", "Bytes read from the source.",
	  offsetof(struct status_source, bytes_read) },
	{ "rngd_source_tested_blocks_total",
	  "2500-byte blocks put to the FIPS 140-2 tests (after the replay and SP 800-90B checks).",
	  offsetof(struct status_source, blocks_tested) },
	{ "rngd_source_passed_blocks_total", "Blocks that passed every test; only these are fed.",
	  offsetof(struct status_source, blocks_passed) },
	{ "rngd_source_fed_bytes_total", "Bytes of the source fed to the kernel or the output.",
	  offsetof(struct status_source, bytes_fed) },
};

static uint64_t field(const struct status_source *s, size_t off)
{
	return *(const uint64_t *)((const char *)s + off);
}

static void source_metrics(const struct status_doc *d, FILE *f)
{
	const char *name;

	family(f, "rngd_source_state", "gauge",
	       "The source's state: 1 for the state it is in, 0 for the others.");
	for (size_t i = 0; i < d->n_sources; i++)
		stateset(f, "rngd_source_state", "state", metrics_source_states,
			 metrics_n_source_states, d->sources[i].state, "source",
			 d->sources[i].name);
	for (size_t c = 0; c < ARRAY_SIZE(source_counters); c++) {
		family(f, source_counters[c].name, "counter", source_counters[c].help);
		for (size_t i = 0; i < d->n_sources; i++)
			sample(f, source_counters[c].name, "source", d->sources[i].name, NULL, NULL,
			       field(&d->sources[i], source_counters[c].off));
	}
	name = "rngd_source_credited_entropy_bytes_total";
	family(f, name, "counter",
	       "Entropy credited to the kernel for the source's bytes, in bytes (bits / 8).");
	for (size_t i = 0; i < d->n_sources; i++)
		sample_bits(f, name, "source", d->sources[i].name, d->sources[i].bits_credited);
	name = "rngd_source_fips_failures_total";
	family(f, name, "counter",
	       "Blocks that failed a FIPS 140-2 test, by test (a block may fail several).");
	for (size_t i = 0; i < d->n_sources; i++)
		for (size_t t = 0; t < FIPS_N_TESTS; t++)
			sample(f, name, "source", d->sources[i].name, "test", stats_fips_keys[t],
			       d->sources[i].fips_failures[t]);
	name = "rngd_source_rejected_blocks_total";
	family(f, name, "counter",
	       "Blocks rejected before the FIPS tests: seen before (check replay), or stuck "
	       "or biased (check sp800-90b, repetition count or adaptive proportion).");
	for (size_t i = 0; i < d->n_sources; i++) {
		sample(f, name, "source", d->sources[i].name, "check", "replay",
		       d->sources[i].blocks_replayed);
		sample(f, name, "source", d->sources[i].name, "check", "sp800-90b",
		       d->sources[i].health_failures);
	}
	name = "rngd_source_last_good_block_timestamp_seconds";
	family(f, name, "gauge",
	       "When the last block that passed the tests was read, seconds since the Unix "
	       "epoch; 0: none yet.");
	for (size_t i = 0; i < d->n_sources; i++)
		sample(f, name, "source", d->sources[i].name, NULL, NULL,
		       seconds(d->sources[i].last_passed));
}

int metrics_format(const struct status_doc *doc, FILE *out)
{
	global_metrics(doc, out);
	source_metrics(doc, out);
	return ferror(out) ? -EIO : 0;
}

int metrics_write(const char *path, const struct status_doc *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return -ENOMEM;
	r = metrics_format(doc, f);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = stats_write_file(path, text, len);
	free(text);
	return r;
}
