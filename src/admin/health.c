/*
 * /healthz and Prometheus /metrics on the admin listener. Process figures are
 * read from /proc/self/status (a small procfs read, which does not block).
 */
#include "eunha/admin.h"

#include <event2/buffer.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_internal.h"
#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/audience.h"
#include "eunha/db.h"
#include "eunha/fetch.h"
#include "eunha/filters.h"
#include "eunha/http.h"
#include "eunha/statuses.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"

void
eu_admin_health(struct eu_req *req)
{
    eu_req_reply_json(req, 200, json_pack("{s:s}", "status", "ok"));
}

/* Reads "Key:   value" from /proc/self/status; returns -1 when absent. */
static long
proc_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(key);
    long v = -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

struct buf {
    char *s;
    size_t len, cap;
};

static void __attribute__((format(printf, 2, 3))) bprintf(struct buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = b->cap * 2 + (size_t)n + 64;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            abort();
    }
}

struct pool_lines {
    struct buf *b;
    const char *metric;
    int which;
};

static void
pool_line(struct eu_tenant *t, void *arg)
{
    struct pool_lines *p = arg;
    struct eu_db_pool_stats st = {0};
    if (t->pool)
        eu_db_pool_stats(t->pool, &st);
    int v = p->which == 0 ? st.open : p->which == 1 ? st.busy : st.waiting;
    bprintf(p->b, "%s{tenant=\"%s\"} %d\n", p->metric, t->domain, v);
}

void
eu_admin_metrics(struct eu_req *req)
{
    struct eu_app *app = req->app;
    struct buf b = {malloc(4096), 0, 4096};
    if (!b.s)
        abort();
    bprintf(&b,
            "# HELP eunha_process_threads Threads of the eunha process.\n"
            "# TYPE eunha_process_threads gauge\neunha_process_threads %ld\n",
            proc_status("Threads"));
    bprintf(&b,
            "# HELP eunha_process_resident_bytes Resident memory.\n"
            "# TYPE eunha_process_resident_bytes gauge\neunha_process_resident_bytes %ld\n",
            proc_status("VmRSS") * 1024);
    bprintf(&b,
            "# HELP eunha_tenants_loaded Tenants in the registry.\n"
            "# TYPE eunha_tenants_loaded gauge\neunha_tenants_loaded %zu\n",
            eu_registry_count(app->registry));
    bprintf(&b,
            "# HELP eunha_tenants_dormant Tenants whose runtime state was released for "
            "idleness.\n# TYPE eunha_tenants_dormant gauge\neunha_tenants_dormant %zu\n",
            eu_registry_dormant_count(app->registry));
    struct eu_rc_stats rs;
    eu_rc_stats(&rs);
    bprintf(&b,
            "# HELP eunha_render_cache_entries Rendered statuses and accounts kept.\n"
            "# TYPE eunha_render_cache_entries gauge\neunha_render_cache_entries %zu\n"
            "# HELP eunha_render_cache_hits_total Statuses rendered from the cache.\n"
            "# TYPE eunha_render_cache_hits_total counter\neunha_render_cache_hits_total %llu\n"
            "# HELP eunha_render_cache_misses_total Statuses rendered from their rows.\n"
            "# TYPE eunha_render_cache_misses_total counter\n"
            "eunha_render_cache_misses_total %llu\n",
            rs.entries, rs.hits, rs.misses);
    struct eu_filters_cache_stats fs;
    eu_filters_cache_stats(&fs);
    bprintf(&b,
            "# HELP eunha_filter_cache_entries Accounts whose compiled filters are kept.\n"
            "# TYPE eunha_filter_cache_entries gauge\neunha_filter_cache_entries %zu\n"
            "# HELP eunha_filter_cache_bytes Memory charged for them.\n"
            "# TYPE eunha_filter_cache_bytes gauge\neunha_filter_cache_bytes %zu\n"
            "# HELP eunha_filter_cache_hits_total Pages that used compiled filters as kept.\n"
            "# TYPE eunha_filter_cache_hits_total counter\neunha_filter_cache_hits_total %llu\n"
            "# HELP eunha_filter_compiles_total Filter sets compiled.\n"
            "# TYPE eunha_filter_compiles_total counter\neunha_filter_compiles_total %llu\n",
            fs.entries, fs.bytes, fs.hits, fs.compiles);
    struct eu_stream_stats ss;
    eu_stream_stats(&ss);
    bprintf(
        &b,
        "# HELP eunha_stream_shared_renders_total Statuses rendered once for every listener.\n"
        "# TYPE eunha_stream_shared_renders_total counter\n"
        "eunha_stream_shared_renders_total %llu\n"
        "# HELP eunha_stream_spliced_total Listeners served from a shared render.\n"
        "# TYPE eunha_stream_spliced_total counter\neunha_stream_spliced_total %llu\n"
        "# HELP eunha_stream_renders_total Events rendered for one listener.\n"
        "# TYPE eunha_stream_renders_total counter\neunha_stream_renders_total %llu\n"
        "# HELP eunha_stream_viewer_loads_total Stream viewer states loaded.\n"
        "# TYPE eunha_stream_viewer_loads_total counter\neunha_stream_viewer_loads_total %llu\n",
        ss.shared_renders, ss.spliced, ss.renders, ss.vstate_loads);
    static const char *const names[] = {"eunha_tenant_pool_open", "eunha_tenant_pool_busy",
                                        "eunha_tenant_pool_waiting"};
    static const char *const help[] = {"Open database connections", "Lent database connections",
                                       "Requests waiting for a database connection"};
    for (int i = 0; i < 3; i++) {
        bprintf(&b, "# HELP %s %s.\n# TYPE %s gauge\n", names[i], help[i], names[i]);
        struct pool_lines p = {&b, names[i], i};
        eu_registry_each(app->registry, pool_line, &p);
    }
    struct eu_db_budget_stats bs;
    eu_db_budget_stats(eu_registry_budget(app->registry), &bs);
    bprintf(&b,
            "# HELP eunha_db_connections Tenant database connections, all pools together.\n"
            "# TYPE eunha_db_connections gauge\neunha_db_connections %d\n"
            "# HELP eunha_db_connecting Tenant connect attempts in flight.\n"
            "# TYPE eunha_db_connecting gauge\neunha_db_connecting %d\n"
            "# HELP eunha_db_pools_waiting Tenant pools queued for room under the shared cap.\n"
            "# TYPE eunha_db_pools_waiting gauge\neunha_db_pools_waiting %d\n"
            "# HELP eunha_db_reclaimed_total Idle connections closed to make room for another "
            "tenant.\n"
            "# TYPE eunha_db_reclaimed_total counter\neunha_db_reclaimed_total %llu\n",
            bs.open, bs.connecting, bs.pools_waiting, bs.reclaimed);
    bprintf(&b, "# HELP eunha_http_requests_total Requests answered, by status class.\n"
                "# TYPE eunha_http_requests_total counter\n");
    for (int c = 1; c <= 5; c++)
        bprintf(&b, "eunha_http_requests_total{class=\"%dxx\"} %llu\n", c,
                (unsigned long long)app->requests_by_class[c]);
    struct eu_http_conn_stats cs;
    eu_http_server_conn_stats(app->http, &cs);
    bprintf(&b,
            "# HELP eunha_http_connections Open client connections on the public listener.\n"
            "# TYPE eunha_http_connections gauge\neunha_http_connections %d\n"
            "# HELP eunha_http_connections_max The cap on them ([limits] max_connections).\n"
            "# TYPE eunha_http_connections_max gauge\neunha_http_connections_max %d\n"
            "# HELP eunha_http_connections_refused_total Connections closed at accept, by cap.\n"
            "# TYPE eunha_http_connections_refused_total counter\n"
            "eunha_http_connections_refused_total{cap=\"total\"} %llu\n"
            "eunha_http_connections_refused_total{cap=\"per_ip\"} %llu\n"
            "# HELP eunha_http_read_timeouts_total Connections closed before their request was "
            "complete.\n"
            "# TYPE eunha_http_read_timeouts_total counter\n"
            "eunha_http_read_timeouts_total{part=\"headers\"} %llu\n"
            "eunha_http_read_timeouts_total{part=\"body\"} %llu\n"
            "# HELP eunha_http_deadline_replies_total Requests answered 503 at the request "
            "deadline.\n"
            "# TYPE eunha_http_deadline_replies_total counter\n"
            "eunha_http_deadline_replies_total %llu\n",
            cs.open, cs.max, (unsigned long long)cs.refused_total,
            (unsigned long long)cs.refused_per_ip, (unsigned long long)cs.header_timeouts,
            (unsigned long long)cs.body_timeouts, (unsigned long long)cs.deadline_replies);
    struct eu_ap_deliver_stats ds;
    eu_ap_deliver_stats(&ds);
    bprintf(&b,
            "# HELP eunha_ap_delivery_signatures_total Deliveries signed (one per activity and "
            "inbox).\n"
            "# TYPE eunha_ap_delivery_signatures_total counter\n"
            "eunha_ap_delivery_signatures_total %llu\n"
            "# HELP eunha_ap_delivery_key_parses_total Signers' private keys read from PEM.\n"
            "# TYPE eunha_ap_delivery_key_parses_total counter\n"
            "eunha_ap_delivery_key_parses_total %llu\n"
            "# HELP eunha_ap_delivery_digests_total Activity bodies digested.\n"
            "# TYPE eunha_ap_delivery_digests_total counter\n"
            "eunha_ap_delivery_digests_total %llu\n"
            "# HELP eunha_ap_delivery_signers_kept_total Deliveries that reused a kept answer "
            "about their signer and host.\n"
            "# TYPE eunha_ap_delivery_signers_kept_total counter\n"
            "eunha_ap_delivery_signers_kept_total %llu\n",
            ds.signatures, ds.key_parses, ds.digests, ds.signers_kept);
    struct eu_audience_stats au;
    eu_audience_stats(&au);
    bprintf(&b,
            "# HELP eunha_post_audiences_total Plain posts by whether their author's audience "
            "was kept from the last one or read.\n"
            "# TYPE eunha_post_audiences_total counter\n"
            "eunha_post_audiences_total{source=\"kept\"} %llu\n"
            "eunha_post_audiences_total{source=\"read\"} %llu\n",
            au.hits, au.reads);
    char *moves = eu_admin_move_metrics();
    bprintf(&b, "%s", moves);
    free(moves);
    if (app->fetch) {
        struct eu_fetch_stats fst;
        eu_fetch_client_stats(app->fetch, &fst);
        bprintf(&b,
                "# HELP eunha_fetch_requests_in_flight Outbound federation requests under way.\n"
                "# TYPE eunha_fetch_requests_in_flight gauge\neunha_fetch_requests_in_flight %d\n"
                "# HELP eunha_fetch_requests_queued Outbound requests waiting for a slot.\n"
                "# TYPE eunha_fetch_requests_queued gauge\neunha_fetch_requests_queued %d\n"
                "# HELP eunha_fetch_hosts_unavailable Remote hosts failing for longer than "
                "[federation] host_unavailable_after_seconds.\n"
                "# TYPE eunha_fetch_hosts_unavailable gauge\neunha_fetch_hosts_unavailable %zu\n"
                "# HELP eunha_fetch_requests_total Outbound requests finished.\n"
                "# TYPE eunha_fetch_requests_total counter\neunha_fetch_requests_total %llu\n"
                "# HELP eunha_fetch_failures_total Outbound requests that got no answer, by why.\n"
                "# TYPE eunha_fetch_failures_total counter\n",
                fst.in_flight, fst.queued, fst.hosts_unavailable, fst.requests_total);
        for (int e = EU_FETCH_OK + 1; e <= EU_FETCH_QUEUE_FULL; e++)
            bprintf(&b, "eunha_fetch_failures_total{error=\"%s\"} %llu\n",
                    eu_fetch_error_str((enum eu_fetch_error)e), fst.failures_total[e]);
    }
    eu_req_reply_raw(req, 200, "text/plain; version=0.0.4", b.s, b.len);
    free(b.s);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_admin_health_routes[] = {
    {EU_HTTP_GET, "/healthz", eu_admin_health, NULL, EU_ROUTE_ADMIN_OPEN | EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/metrics", eu_admin_metrics, NULL, EU_ROUTE_ADMIN | EU_ROUTE_NO_TENANT},
    {0},
};
