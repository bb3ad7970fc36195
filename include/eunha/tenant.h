/*
 * The tenant registry: an in-memory hash from domain to tenant, loaded from
 * the control database's tenants table (joined to its placement) with one
 * query and changed by the admin API without a restart. A tenant's pool is
 * created on its first request, so a tenant nobody visits costs its registry
 * entry alone.
 */
#ifndef EUNHA_TENANT_H
#define EUNHA_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/config.h"
#include "eunha/db.h"

/* Bytes of a tenant's Redis key prefix with its NUL: the longest [redis]
 * prefix, ":{t", a 19-digit id and "}:". Key buffers built from it are
 * sized from this so none can cut a key. */
#define EU_TENANT_KEY_PREFIX_SIZE (EU_REDIS_PREFIX_MAX + 3 + 19 + 2 + 1)

struct event_base;
struct eu_app;
struct eu_config;
struct eu_placement;
struct eu_redis;

/* DELETING: its rows are being removed in the background; it answers 404
 * to everyone and 'deleting' with progress to the admin API. */
enum eu_tenant_state { EU_TENANT_ACTIVE, EU_TENANT_SUSPENDED, EU_TENANT_DELETING };

/*
 * Runtime state other subsystems keep per tenant (a token cache, queue
 * workers) hangs off the tenant in slots. Whoever puts data in a slot says
 * how to free it, and whether it may go while the tenant sleeps, so the
 * registry frees what it does not know. A slot is made on first use and
 * released when the tenant goes dormant or is freed; its owner makes it
 * again on the next use.
 */
enum eu_tenant_slot {
    EU_SLOT_AUTH,   /* src/http/auth.c: the token cache */
    EU_SLOT_QUEUE,  /* src/queue/: job workers and timed tasks */
    EU_SLOT_TRENDS, /* src/social/trends_task.c: new activity to score */
    EU_SLOT_MAX
};

struct eu_tenant_slot_ops {
    void (*dispose)(void *data);       /* frees data */
    bool (*is_idle)(const void *data); /* may data go now? NULL: always */
};

/* Per-tenant overrides of [database_pool]; 0 means "use the config". */
struct eu_tenant_limits {
    int max_connections;
    int min_connections; /* -1 means unset, since 0 is a real value */
    int acquire_timeout_s;
    int idle_timeout_s;
    /* [media] storage quota in bytes: -1 follows the config's
     * default_quota_bytes, 0 is unlimited (control migration 0002). */
    long long media_quota_bytes;
};

struct eu_tenant {
    int refs;
    int64_t id;
    char *domain;
    char *title;
    char *placement; /* name of the placement holding its rows */
    bool dedicated;  /* the placement holds this tenant alone */
    /* GETs of its ActivityPub documents need a valid signature (Mastodon's
     * "secure mode"; src/ap/authfetch.c). */
    bool authorized_fetch;
    char *database;     /* the placement's database name */
    char *database_url; /* NULL: the control database's server */
    char *redis_url;    /* its placement's Redis; NULL: the main [redis] (eu_tenant_redis()) */
    enum eu_tenant_state state;
    struct eu_tenant_limits limits;
    char *created_at;
    char *updated_at;
    char key_prefix[EU_TENANT_KEY_PREFIX_SIZE]; /* "<prefix>:{t<ID>}:" */
    bool removed; /* deleted from the registry; dies with its last ref */
    bool marked;  /* for reload: not seen in the control table yet */
    /* In the write pause of a live move (src/admin/lifecycle_move.c, the
     * copy before it runs while the tenant serves) or while restored from an
     * archive (lifecycle.c): public requests answer 503, admin writes 409.
     * In memory only, in the process doing it; the source's triggers refuse
     * other processes' writes meanwhile. A process that stops mid-move
     * leaves the control row naming one complete copy. */
    bool moving;
    /* Deleted ('deleting'), and in the grace before its rows go, while the
     * Delete of its actors goes out (src/admin/purge.c): its job queues run
     * (not its timed tasks). In memory only, in the process purging it.
     * (Its actor URLs answer 410 and the rest 404 in every process while
     * it is 'deleting', src/http/server.c.) */
    bool farewell;
    int cpu_jobs;            /* its password checks on the CPU pool (eu_cpupool_try_submit) */
    struct eu_db_pool *pool; /* NULL until first use; borrows from its placement's */
    struct eu_placement *placement_ref; /* whose connections pool borrows */
    struct {
        void *data; /* NULL: nothing made yet */
        const struct eu_tenant_slot_ops *ops;
    } slots[EU_SLOT_MAX];
    int64_t last_used_ms;        /* monotonic: the last request, for dormancy */
    bool dormant;                /* its slots and pool were released for idleness */
    struct eu_tenant *hash_next; /* by domain */
    struct eu_tenant *id_next;   /* by id */
};

struct eu_registry;

/* Returns an empty registry freed with eu_registry_free(). */
struct eu_registry *eu_registry_new(struct event_base *base, const struct eu_config *cfg);
void eu_registry_free(struct eu_registry *reg);

/* Tenants not yet freed: after eu_registry_free(), those a statement
 * under way still holds (shutdown waits for them a moment). */
int eu_registry_tenants_alive(void);
/* The config used for new pools and key prefixes; borrowed, must outlive the
 * registry (changed on SIGHUP). */
void eu_registry_set_config(struct eu_registry *reg, const struct eu_config *cfg);
/* The connection budget every tenant pool shares. Borrowed. */
struct eu_db_budget *eu_registry_budget(struct eu_registry *reg);

/* Looks a normalised domain up. Borrowed: take a ref to keep it across
 * callbacks. */
struct eu_tenant *eu_registry_find(struct eu_registry *reg, const char *domain);
/* Finds by id, or NULL. Borrowed. */
struct eu_tenant *eu_registry_find_id(struct eu_registry *reg, int64_t id);
/*
 * Inserts or updates a tenant from a row's values (the registry copies
 * them). An existing tenant with the same id keeps its pool; new limits are
 * applied to it. Returns the tenant (borrowed).
 */
struct eu_tenant *eu_registry_upsert(struct eu_registry *reg, const struct eu_tenant *row);
/* Removes the tenant from lookup and closes its pool once idle. */
void eu_registry_remove(struct eu_registry *reg, struct eu_tenant *t);
/* Marks every tenant; eu_registry_sweep() then removes those not upserted
 * since (for reloads). */
void eu_registry_mark_all(struct eu_registry *reg);
void eu_registry_sweep(struct eu_registry *reg);
size_t eu_registry_count(const struct eu_registry *reg);
/* Calls fn for every tenant, in no particular order. */
void eu_registry_each(struct eu_registry *reg, void (*fn)(struct eu_tenant *t, void *arg),
                      void *arg);

/* Opens the connections of every pooled placement that holds a tenant, so
 * the first requests after a start need no connect. Call once the registry
 * is loaded; the connections stay open. */
void eu_registry_warm(struct eu_registry *reg);
/* The pool of t's placement itself: it binds no tenant, so a statement on it
 * may read every tenant's rows (the queue's placement poll). Borrowed; lives
 * as long as the registry. */
struct eu_db_pool *eu_tenant_placement_pool(struct eu_registry *reg, struct eu_tenant *t);
/* Returns the tenant's pool, creating it on first use: a child of its
 * placement's pool, limited to the tenant's max_connections, whose
 * statements get the tenant id as $1 (see eu_db_pool_set_tenant()). */
struct eu_db_pool *eu_tenant_pool(struct eu_registry *reg, struct eu_tenant *t);
/* The effective pool limits (tenant override over config). */
void eu_tenant_effective_limits(const struct eu_registry *reg, const struct eu_tenant *t,
                                struct eu_db_pool_limits *out);

/* The data in slot s, or NULL. Borrowed. */
void *eu_tenant_slot(const struct eu_tenant *t, enum eu_tenant_slot s);
/* Puts data in slot s (the tenant owns it from now, and frees it with
 * ops->dispose); data already there is disposed of first. ops must be
 * static. */
void eu_tenant_slot_set(struct eu_tenant *t, enum eu_tenant_slot s, void *data,
                        const struct eu_tenant_slot_ops *ops);
/* Frees what slot s holds, if anything. */
void eu_tenant_slot_release(struct eu_tenant *t, enum eu_tenant_slot s);
/* A request for t arrived: it is not idle (and no longer dormant). */
void eu_tenant_touch(struct eu_tenant *t);
/* Tenants whose runtime state was released for idleness. */
size_t eu_registry_dormant_count(const struct eu_registry *reg);

void eu_tenant_ref(struct eu_tenant *t);
void eu_tenant_unref(struct eu_tenant *t);

/*
 * The Redis that holds t's keys and carries its channels: its placement's
 * redis_url, or app->redis when the placement names none (or the main
 * one). One eu_redis per distinct URL, made when a tenant first needs it
 * and shared by every placement naming that URL; it lives as long as the
 * registry. A URL it cannot use gives a Redis that is never up, so its
 * tenants see "Redis down" rather than another server's keys. Borrowed.
 */
struct eu_redis *eu_tenant_redis(struct eu_app *app, const struct eu_tenant *t);
/* fn(r, arg) runs for each Redis eu_tenant_redis() makes from now on (not
 * for app->redis), as it is made: whoever listens on the main Redis
 * listens on r too. At most four hooks. */
void eu_registry_on_redis(struct eu_registry *reg, void (*fn)(struct eu_redis *r, void *arg),
                          void *arg);

#endif

/* The select list that eu_tenant_from_row() reads, in this order, over
 * EU_TENANT_FROM (tenants t joined to their placements p). */
#define EU_TENANT_COLUMNS                                                                          \
    "t.id, t.domain, t.title, p.database, p.database_url, t.state, "                               \
    "coalesce(t.max_connections, 0), coalesce(t.min_connections, -1), "                            \
    "coalesce(t.acquire_timeout_seconds, 0), coalesce(t.idle_timeout_seconds, 0), "                \
    "to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "              \
    "to_char(t.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "              \
    "p.name, p.kind = 'dedicated', t.authorized_fetch, coalesce(t.media_quota_bytes, -1), "        \
    "nullif(p.redis_url, '')"
#define EU_TENANT_FROM "tenants t JOIN placements p ON p.id = t.placement_id"

/* Fills out from row of res (selected with EU_TENANT_COLUMNS). The strings
 * are borrowed from res: pass out to eu_registry_upsert() before clearing. */
void eu_tenant_from_row(const struct pg_result *res, int row, struct eu_tenant *out);
