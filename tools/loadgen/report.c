/*
 * The load generator's report: a short text summary for people and the same
 * figures as one JSON object for the benchmark scripts, which read it with jq.
 * Latencies are percentiles from the histogram, never an average alone, and
 * the report always carries our own CPU time and dispatch lag, because a load
 * generator short of CPU makes any server look slow.
 */
#include "loadgen.h"

#include <jansson.h>
#include <stdio.h>

static double
ms(uint64_t us)
{
    return (double)us / 1000.0;
}

static double
rate_of(const struct eu_lg_stats *st)
{
    return st->measured_seconds > 0 ? (double)st->completed / st->measured_seconds : 0.0;
}

static double
cpu_percent(const struct eu_lg_stats *st)
{
    return st->wall_seconds > 0 ? 100.0 * (st->cpu_user + st->cpu_sys) / st->wall_seconds : 0.0;
}

void
eu_lg_report_text(const struct eu_lg_config *cfg, const struct eu_lg_stats *st)
{
    FILE *o = stdout;
    if (cfg->label)
        fprintf(o, "run           %s\n", cfg->label);
    if (cfg->rate > 0)
        fprintf(o, "load          open loop, %.1f req/s%s, up to %u connections\n", cfg->rate,
                cfg->poisson ? " (Poisson)" : "", cfg->concurrency);
    else
        fprintf(o, "load          closed loop, %u clients\n", cfg->concurrency);
    fprintf(o, "target        %s:%u, %zu host%s\n", cfg->addr, cfg->port, cfg->nhosts,
            cfg->nhosts == 1 ? "" : "s");
    fprintf(o, "window        %.2f s measured (%.2f s warm-up, %.2f s wall)\n",
            st->measured_seconds, cfg->warmup, st->wall_seconds);
    fprintf(o, "requests      %llu, %.2f req/s\n", (unsigned long long)st->completed, rate_of(st));

    uint64_t errors = eu_lg_stats_errors(st);
    fprintf(o, "errors        %llu", (unsigned long long)errors);
    bool any = false;
    for (int i = 0; i < EU_LG_ERR_COUNT; i++) {
        if (st->err[i]) {
            fprintf(o, "%s%s=%llu", any ? " " : " (", eu_lg_err_names[i],
                    (unsigned long long)st->err[i]);
            any = true;
        }
    }
    for (int s = 400; s < 600; s++) {
        if (st->status[s]) {
            fprintf(o, "%shttp_%d=%llu", any ? " " : " (", s, (unsigned long long)st->status[s]);
            any = true;
        }
    }
    fprintf(o, "%s\n", any ? ")" : "");
    if (st->unsent || st->inflight_left)
        fprintf(o, "unfinished    %llu still queued, %llu unanswered at the end\n",
                (unsigned long long)st->unsent, (unsigned long long)st->inflight_left);
    if (cfg->retry_503 > 0)
        fprintf(o, "retried       %llu 503s asked again (up to %.0f s after due)\n",
                (unsigned long long)st->retries, cfg->retry_503);
    fprintf(o, "latency       p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  max %.2f ms  mean %.2f ms\n",
            ms(eu_lg_hist_percentile(&st->all, 50)), ms(eu_lg_hist_percentile(&st->all, 95)),
            ms(eu_lg_hist_percentile(&st->all, 99)), ms(st->all.max),
            eu_lg_hist_mean(&st->all) / 1000.0);
    for (int k = 0; k < EU_LG_KIND_COUNT; k++) {
        const struct eu_lg_kind_stats *ks = &st->kinds[k];
        if (!ks->sent)
            continue;
        fprintf(o, "  %-13s %8llu sent %8llu errors  p50 %7.2f  p95 %7.2f  p99 %7.2f ms\n",
                eu_lg_kinds[k].name, (unsigned long long)ks->sent, (unsigned long long)ks->errors,
                ms(eu_lg_hist_percentile(&ks->hist, 50)), ms(eu_lg_hist_percentile(&ks->hist, 95)),
                ms(eu_lg_hist_percentile(&ks->hist, 99)));
    }
    fprintf(o, "loadgen       cpu %.2f s user + %.2f s sys = %.1f%% of one core, %llu connections",
            st->cpu_user, st->cpu_sys, cpu_percent(st), (unsigned long long)st->connections);
    if (cfg->rate > 0)
        fprintf(o, ", send lag p99 %.2f ms max %.2f ms", ms(eu_lg_hist_percentile(&st->lag, 99)),
                ms(st->lag.max));
    fprintf(o, "\n");
    /* Past about two thirds of a core the loop itself starts to queue
     * callbacks, and its delays are indistinguishable from the server's. */
    if (cpu_percent(st) > 70.0)
        fprintf(o,
                "warning       the load generator used %.0f%% of a core: latencies may "
                "include its own queueing\n",
                cpu_percent(st));
}

static json_t *
latency_json(const struct eu_lg_hist *h)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "p50", ms(eu_lg_hist_percentile(h, 50)),
                     "p95", ms(eu_lg_hist_percentile(h, 95)), "p99",
                     ms(eu_lg_hist_percentile(h, 99)), "max", ms(h->max), "min",
                     ms(h->total ? h->min : 0), "mean", eu_lg_hist_mean(h) / 1000.0);
}

int
eu_lg_report_json(const struct eu_lg_config *cfg, const struct eu_lg_stats *st, const char *path)
{
    json_t *root = json_object();
    json_object_set_new(root, "label", cfg->label ? json_string(cfg->label) : json_null());
    json_object_set_new(root, "mode", json_string(cfg->rate > 0 ? "open" : "closed"));
    json_object_set_new(root, "rate", json_real(cfg->rate));
    json_object_set_new(root, "concurrency", json_integer(cfg->concurrency));
    json_object_set_new(root, "hosts", json_integer((json_int_t)cfg->nhosts));
    json_object_set_new(root, "warmup_s", json_real(cfg->warmup));
    json_object_set_new(root, "measured_s", json_real(st->measured_seconds));
    json_object_set_new(root, "wall_s", json_real(st->wall_seconds));
    json_object_set_new(root, "requests", json_integer((json_int_t)st->completed));
    json_object_set_new(root, "requests_per_second", json_real(rate_of(st)));
    json_object_set_new(root, "errors", json_integer((json_int_t)eu_lg_stats_errors(st)));
    json_object_set_new(root, "unsent", json_integer((json_int_t)st->unsent));
    json_object_set_new(root, "unanswered", json_integer((json_int_t)st->inflight_left));
    json_object_set_new(root, "connections", json_integer((json_int_t)st->connections));
    json_object_set_new(root, "retries", json_integer((json_int_t)st->retries));
    json_object_set_new(root, "retry_503_s", json_real(cfg->retry_503));

    json_t *errs = json_object();
    for (int i = 0; i < EU_LG_ERR_COUNT; i++)
        if (st->err[i])
            json_object_set_new(errs, eu_lg_err_names[i], json_integer((json_int_t)st->err[i]));
    for (int s = 400; s < 600; s++) {
        if (st->status[s]) {
            char name[24];
            snprintf(name, sizeof(name), "http_%d", s);
            json_object_set_new(errs, name, json_integer((json_int_t)st->status[s]));
        }
    }
    json_object_set_new(root, "errors_by_kind", errs);

    json_t *status = json_object();
    for (int s = 0; s < 600; s++) {
        if (st->status[s]) {
            char name[16];
            snprintf(name, sizeof(name), "%d", s);
            json_object_set_new(status, name, json_integer((json_int_t)st->status[s]));
        }
    }
    json_object_set_new(root, "status", status);
    json_object_set_new(root, "latency_ms", latency_json(&st->all));

    json_t *kinds = json_object();
    for (int k = 0; k < EU_LG_KIND_COUNT; k++) {
        const struct eu_lg_kind_stats *ks = &st->kinds[k];
        if (!ks->sent && !cfg->weights[k])
            continue;
        json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "weight", (json_int_t)cfg->weights[k], "sent",
                              (json_int_t)ks->sent, "ok", (json_int_t)ks->ok, "errors",
                              (json_int_t)ks->errors);
        json_object_set_new(o, "latency_ms", latency_json(&ks->hist));
        json_object_set_new(kinds, eu_lg_kinds[k].name, o);
    }
    json_object_set_new(root, "kinds", kinds);

    json_t *self = json_pack("{s:f, s:f, s:f}", "cpu_user_s", st->cpu_user, "cpu_sys_s",
                             st->cpu_sys, "cpu_percent", cpu_percent(st));
    if (cfg->rate > 0)
        json_object_set_new(self, "send_lag_ms", latency_json(&st->lag));
    json_object_set_new(root, "loadgen", self);

    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    json_decref(root);
    if (rc != 0) {
        fprintf(stderr, "eunha-loadgen: cannot write '%s'\n", path);
        return -1;
    }
    return 0;
}
