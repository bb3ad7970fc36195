/*
 * Declarations shared by the load generator's files: the run configuration
 * that main.c builds from the command line, the statistics run.c collects,
 * and report.c's printers. The load generator is its own program; it shares
 * nothing with the server but libevent, so that a bug in one cannot hide in
 * the other's measurements.
 */
#ifndef EU_LOADGEN_H
#define EU_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"

/* What a request asks for. The order is the order of the report. */
enum eu_lg_kind {
    EU_LG_HOME,          /* GET /api/v1/timelines/home */
    EU_LG_PUBLIC,        /* GET /api/v1/timelines/public */
    EU_LG_NOTIFICATIONS, /* GET /api/v1/notifications */
    EU_LG_VERIFY,        /* GET /api/v1/accounts/verify_credentials */
    EU_LG_ACCOUNT,       /* GET /api/v1/accounts/:id, id from the tokens file */
    EU_LG_STATUS,        /* POST /api/v1/statuses */
    EU_LG_INSTANCE,      /* GET /api/v1/instance, no token */
    EU_LG_TENANT,        /* POST /admin/v1/tenants for the Host name, admin token */
    EU_LG_KIND_COUNT
};

struct eu_lg_kind_info {
    const char *name; /* as written in --mix */
    const char *path; /* NULL for EU_LG_ACCOUNT, whose path has an id */
    bool post;
    bool needs_token; /* cannot be sent without a bearer token */
    bool needs_account;
    /* Sent to the admin listener with --admin-token-file's token: the body
     * creates a tenant whose domain is the request's Host name. */
    bool admin;
};

extern const struct eu_lg_kind_info eu_lg_kinds[EU_LG_KIND_COUNT];

/* Errors that are not an HTTP status. */
enum eu_lg_err {
    EU_LG_ERR_CONNECT,  /* connection refused or failed before a response */
    EU_LG_ERR_TIMEOUT,  /* no progress for --timeout seconds */
    EU_LG_ERR_CLOSED,   /* server closed the connection mid-request */
    EU_LG_ERR_PROTOCOL, /* malformed or oversized response */
    EU_LG_ERR_OTHER,
    EU_LG_ERR_BACKLOG, /* open loop: too many arrivals waiting for a connection */
    EU_LG_ERR_COUNT
};

extern const char *const eu_lg_err_names[EU_LG_ERR_COUNT];

/* One Host name and the credentials for it. */
struct eu_lg_host {
    char *name;
    char **tokens;      /* bearer tokens of this host's users */
    char **account_ids; /* ids for GET /api/v1/accounts/:id */
    size_t ntokens, naccounts;
    size_t next_token; /* round robin over tokens */
};

struct eu_lg_config {
    char *addr; /* numeric IPv4/IPv6 address of the server */
    unsigned port;
    struct eu_lg_host *hosts;
    size_t nhosts;
    unsigned weights[EU_LG_KIND_COUNT];
    unsigned weight_total;
    /* Closed loop when rate == 0: `concurrency` clients, each sending its next
     * request as soon as the last one is answered. Open loop when rate > 0:
     * arrivals at `rate` per second whatever the responses do, on up to
     * `concurrency` keep-alive connections; arrivals that find every
     * connection busy wait in a queue and that wait counts as latency. */
    unsigned concurrency;
    double rate;
    bool poisson; /* exponential inter-arrival times instead of even spacing */
    double duration, warmup, timeout;
    uint64_t max_requests; /* stop after this many sent (0: no limit) */
    /* A 503 is asked again after its Retry-After until this many seconds
     * after the request was due (0: a 503 is an answer). The request's
     * latency runs from its first due time, so it reads as "time until the
     * tenant answered". */
    double retry_503;
    size_t max_backlog; /* open loop: arrivals waiting beyond this fail */
    bool post_form;     /* statuses as form bodies instead of JSON */
    const char *visibility;
    char *admin_token;    /* --admin-token-file, for admin kinds */
    const char *json_out; /* write the report as JSON here too */
    /* --log: a line per measured request, for figures the summary cannot
     * give (latency per second, answers per host, the ids of created
     * statuses). NULL when not asked for. */
    FILE *log;
    const char *label;
    bool quiet;
    uint64_t seed;
};

/* What one kind of request did during the measured window. */
struct eu_lg_kind_stats {
    struct eu_lg_hist hist; /* latency of answered requests, microseconds */
    uint64_t sent, ok, errors;
};

struct eu_lg_stats {
    struct eu_lg_kind_stats kinds[EU_LG_KIND_COUNT];
    struct eu_lg_hist all; /* every answered request, whatever its status */
    struct eu_lg_hist lag; /* open loop: how late each send was, microseconds */
    uint64_t status[600];  /* responses by HTTP status */
    uint64_t err[EU_LG_ERR_COUNT];
    uint64_t completed;       /* answered or failed, in the window */
    uint64_t unsent;          /* arrivals still queued when the run ended */
    uint64_t inflight_left;   /* requests still unanswered after the drain */
    uint64_t connections;     /* connections opened */
    uint64_t retries;         /* 503s asked again (--retry-503) */
    double measured_seconds;  /* the window requests/s is computed over */
    double wall_seconds;      /* whole run, warm-up and drain included */
    double cpu_user, cpu_sys; /* our own CPU time over the whole run */
};

/* Runs the load described by cfg and fills st. Returns 0, or -1 with a
 * message on stderr when the run could not start. */
int eu_lg_run(struct eu_lg_config *cfg, struct eu_lg_stats *st);

/* Error count: transport errors plus every response with status >= 400. */
uint64_t eu_lg_stats_errors(const struct eu_lg_stats *st);

void eu_lg_report_text(const struct eu_lg_config *cfg, const struct eu_lg_stats *st);
/* Writes the report as one JSON object to path. Returns 0 or -1. */
int eu_lg_report_json(const struct eu_lg_config *cfg, const struct eu_lg_stats *st,
                      const char *path);

#endif
