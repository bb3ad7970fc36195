/*
 * The tenant registry. A chained hash keyed by domain, grown by doubling.
 * Tenants are reference-counted because a request or a pool callback may
 * still hold one when the admin API deletes it; the pool is closed at removal
 * and the struct freed with its last reference.
 *
 * Dormancy: a tenant nobody has asked for in [tenants] dormant_after_seconds
 * gives back its runtime state, its slots (token cache, idle queue workers)
 * and its pool, and is made again on its next request. A sweep every quarter
 * of that time (at most a minute) looks; it costs a walk over the tenants, no
 * database work.
 *
 * It also keeps the placements' connection pools: one per database that
 * tenants live in, made when its first tenant needs it, holding
 * [database] placement_connections connections that every tenant of the
 * placement borrows through its own child pool. A placement's pool lives as
 * long as a tenant's pool refers to it, so a dropped dedicated placement's
 * connections go with its tenant.
 */
#include "eunha/tenant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <malloc.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/migrate.h"
#include "eunha/redis.h"

#include <libpq-fe.h>

/* The shared connections of one placement database. */
struct eu_placement {
    struct eu_registry *reg;
    char *url; /* server conninfo */
    char *database;
    struct eu_db_pool *pool;
    int users;   /* tenant pools borrowing from it, and 1 while pinned */
    bool pinned; /* a pooled placement: kept open with no tenant pool */
    struct eu_placement *next;
};

/* A Redis server some placement names (other than the main one). */
struct redis_server {
    char *url;
    struct eu_redis *r;
    struct redis_server *next;
};

#define REDIS_HOOKS_MAX 4

struct eu_registry {
    struct event_base *base;
    char *main_redis_url; /* [redis] url at start: reloads do not change app->redis */
    struct redis_server *redises;
    struct {
        void (*fn)(struct eu_redis *r, void *arg);
        void *arg;
    } redis_hooks[REDIS_HOOKS_MAX];
    int n_redis_hooks;
    struct eu_placement *placements;
    struct event *sweep; /* dormancy */
    const struct eu_config *cfg;
    struct eu_db_budget *budget;   /* shared by every tenant pool */
    struct eu_tenant **buckets;    /* by domain */
    struct eu_tenant **id_buckets; /* by id: the placement poll and upserts look ids up */
    size_t nbuckets;
    size_t count;
};

static uint64_t
hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static const struct eu_db_budget_limits *
budget_limits(const struct eu_config *cfg, struct eu_db_budget_limits *out)
{
    out->max_open = cfg->pool_max_total;
    out->max_connecting = cfg->pool_max_connecting;
    return out;
}

static void tenant_pool_close(struct eu_tenant *t);

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- slots ---- */

void *
eu_tenant_slot(const struct eu_tenant *t, enum eu_tenant_slot s)
{
    return t->slots[s].data;
}

void
eu_tenant_slot_release(struct eu_tenant *t, enum eu_tenant_slot s)
{
    void *data = t->slots[s].data;
    const struct eu_tenant_slot_ops *ops = t->slots[s].ops;
    t->slots[s].data = NULL;
    t->slots[s].ops = NULL;
    if (data)
        ops->dispose(data);
}

void
eu_tenant_slot_set(struct eu_tenant *t, enum eu_tenant_slot s, void *data,
                   const struct eu_tenant_slot_ops *ops)
{
    eu_tenant_slot_release(t, s);
    t->slots[s].data = data;
    t->slots[s].ops = ops;
}

/* ---- dormancy ---- */

void
eu_tenant_touch(struct eu_tenant *t)
{
    t->last_used_ms = now_ms();
    t->dormant = false;
}

/* Releases what t holds if all of it may go; returns true when it did. */
static bool
put_to_sleep(struct eu_tenant *t)
{
    for (int s = 0; s < EU_SLOT_MAX; s++) {
        const struct eu_tenant_slot_ops *ops = t->slots[s].ops;
        if (t->slots[s].data && ops->is_idle && !ops->is_idle(t->slots[s].data))
            return false; /* e.g. a worker armed for a scheduled status */
    }
    if (t->pool) {
        struct eu_db_pool_stats st;
        eu_db_pool_stats(t->pool, &st);
        if (st.busy || st.waiting)
            return false;
    }
    for (int s = 0; s < EU_SLOT_MAX; s++)
        eu_tenant_slot_release(t, s);
    tenant_pool_close(t);
    return true;
}

static int
sweep_interval_s(const struct eu_config *cfg)
{
    int s = cfg->dormant_after_s / 4;
    return s < 1 ? 1 : s > 60 ? 60 : s;
}

static void
on_sweep(evutil_socket_t fd, short what, void *arg)
{
    struct eu_registry *reg = arg;
    int after = reg->cfg->dormant_after_s;
    size_t slept = 0;
    if (after > 0) {
        int64_t cutoff = now_ms() - (int64_t)after * 1000;
        for (size_t i = 0; i < reg->nbuckets; i++)
            for (struct eu_tenant *t = reg->buckets[i]; t; t = t->hash_next)
                /* refs == 1: only the registry's, so no request is under way. */
                if (!t->dormant && t->refs == 1 && t->last_used_ms < cutoff && put_to_sleep(t)) {
                    t->dormant = true;
                    slept++;
                }
    }
    /* The allocator keeps what was freed for reuse; hand whole free pages
     * back, so a host's memory shows what its awake tenants cost. */
    if (slept)
        malloc_trim(0);
    struct timeval tv = {sweep_interval_s(reg->cfg), 0};
    evtimer_add(reg->sweep, &tv);
}

size_t
eu_registry_dormant_count(const struct eu_registry *reg)
{
    size_t n = 0;
    for (size_t i = 0; i < reg->nbuckets; i++)
        for (const struct eu_tenant *t = reg->buckets[i]; t; t = t->hash_next)
            n += t->dormant;
    return n;
}

struct eu_registry *
eu_registry_new(struct event_base *base, const struct eu_config *cfg)
{
    struct eu_registry *reg = eu_xcalloc(1, sizeof(*reg));
    reg->base = base;
    reg->cfg = cfg;
    reg->main_redis_url = cfg->redis_url ? eu_xstrdup(cfg->redis_url) : NULL;
    struct eu_db_budget_limits bl;
    reg->budget = eu_db_budget_new(budget_limits(cfg, &bl));
    reg->nbuckets = 64;
    reg->buckets = eu_xcalloc(reg->nbuckets, sizeof(*reg->buckets));
    reg->id_buckets = eu_xcalloc(reg->nbuckets, sizeof(*reg->id_buckets));
    if (base) {
        reg->sweep = evtimer_new(base, on_sweep, reg);
        struct timeval tv = {sweep_interval_s(cfg), 0};
        evtimer_add(reg->sweep, &tv);
    }
    return reg;
}

void
eu_registry_set_config(struct eu_registry *reg, const struct eu_config *cfg)
{
    reg->cfg = cfg;
    struct eu_db_budget_limits bl;
    eu_db_budget_set_limits(reg->budget, budget_limits(cfg, &bl));
}

struct eu_db_budget *
eu_registry_budget(struct eu_registry *reg)
{
    return reg->budget;
}

static void placement_unuse(struct eu_placement *p);

/* Tenant structs not yet freed, in this process (the loop's thread only). */
static int tenants_alive;

int
eu_registry_tenants_alive(void)
{
    return tenants_alive;
}

static void
tenant_free(struct eu_tenant *t)
{
    tenants_alive--;
    /* Requests hold refs, so by now no connection of this pool is lent. */
    /* Idle by now: a queue turn or a request under way holds a ref. */
    for (int s = 0; s < EU_SLOT_MAX; s++)
        eu_tenant_slot_release(t, s);
    tenant_pool_close(t);
    free(t->domain);
    free(t->title);
    free(t->placement);
    free(t->database);
    free(t->database_url);
    free(t->redis_url);
    free(t->created_at);
    free(t->updated_at);
    free(t);
}

void
eu_tenant_ref(struct eu_tenant *t)
{
    t->refs++;
}

void
eu_tenant_unref(struct eu_tenant *t)
{
    if (--t->refs == 0)
        tenant_free(t);
}

/* Ids are the control table's bigserial: consecutive, so the remainder
 * spreads them evenly. */
static size_t
id_slot(int64_t id, size_t n)
{
    return (size_t)((uint64_t)id % n);
}

static void
unlink_id(struct eu_registry *reg, struct eu_tenant *t)
{
    struct eu_tenant **pp = &reg->id_buckets[id_slot(t->id, reg->nbuckets)];
    for (; *pp; pp = &(*pp)->id_next)
        if (*pp == t) {
            *pp = t->id_next;
            return;
        }
}

static void
unlink_tenant(struct eu_registry *reg, struct eu_tenant *t)
{
    struct eu_tenant **pp = &reg->buckets[hash_str(t->domain) % reg->nbuckets];
    for (; *pp; pp = &(*pp)->hash_next) {
        if (*pp == t) {
            *pp = t->hash_next;
            reg->count--;
            return;
        }
    }
}

void
eu_registry_remove(struct eu_registry *reg, struct eu_tenant *t)
{
    /* Twice is once: a purge and the notification of its row's removal
     * (another process's, or this one's) may both get here. */
    if (t->removed)
        return;
    unlink_tenant(reg, t);
    unlink_id(reg, t);
    t->removed = true;
    eu_tenant_unref(t); /* the pool closes with the last request's ref */
}

void
eu_registry_free(struct eu_registry *reg)
{
    if (!reg)
        return;
    if (reg->sweep)
        event_free(reg->sweep);
    for (size_t i = 0; i < reg->nbuckets; i++) {
        while (reg->buckets[i])
            eu_registry_remove(reg, reg->buckets[i]);
    }
    /* Tenants still held elsewhere keep their placement until they go. */
    struct eu_placement *p = reg->placements, *next;
    for (; p; p = next) {
        next = p->next;
        if (p->pinned) {
            p->pinned = false;
            placement_unuse(p);
        } else if (p->users == 0) {
            /* Made by eu_tenant_placement_pool() alone (the admin API's
             * media usage): nothing else would free it. */
            p->users = 1;
            placement_unuse(p);
        }
    }
    /* What is left belongs to tenants a statement under way still holds
     * (a delivery being queued at shutdown): they free it after the
     * registry is gone, so it must not point back at it. */
    for (p = reg->placements; p; p = next) {
        next = p->next;
        p->reg = NULL;
        p->next = NULL;
    }
    reg->placements = NULL;
    /* Last: freeing the tenants above touched no Redis, and the hub and
     * the caches that listen on these are gone before the registry. */
    while (reg->redises) {
        struct redis_server *rs = reg->redises;
        reg->redises = rs->next;
        eu_redis_free(rs->r);
        free(rs->url);
        free(rs);
    }
    free(reg->main_redis_url);
    free(reg->buckets);
    free(reg->id_buckets);
    eu_db_budget_unref(reg->budget);
    free(reg);
}

struct eu_tenant *
eu_registry_find(struct eu_registry *reg, const char *domain)
{
    struct eu_tenant *t = reg->buckets[hash_str(domain) % reg->nbuckets];
    for (; t; t = t->hash_next)
        if (strcmp(t->domain, domain) == 0)
            return t;
    return NULL;
}

struct eu_tenant *
eu_registry_find_id(struct eu_registry *reg, int64_t id)
{
    struct eu_tenant *t = reg->id_buckets[id_slot(id, reg->nbuckets)];
    for (; t; t = t->id_next)
        if (t->id == id)
            return t;
    return NULL;
}

static void
grow(struct eu_registry *reg)
{
    size_t n = reg->nbuckets * 2;
    struct eu_tenant **b = eu_xcalloc(n, sizeof(*b));
    struct eu_tenant **ib = eu_xcalloc(n, sizeof(*ib));
    for (size_t i = 0; i < reg->nbuckets; i++) {
        struct eu_tenant *t = reg->buckets[i], *next;
        for (; t; t = next) {
            next = t->hash_next;
            size_t h = hash_str(t->domain) % n;
            t->hash_next = b[h];
            b[h] = t;
            size_t k = id_slot(t->id, n);
            t->id_next = ib[k];
            ib[k] = t;
        }
    }
    free(reg->buckets);
    free(reg->id_buckets);
    reg->buckets = b;
    reg->id_buckets = ib;
    reg->nbuckets = n;
}

static void
replace_str(char **dst, const char *src)
{
    if (*dst && src && strcmp(*dst, src) == 0)
        return;
    free(*dst);
    *dst = eu_xstrdup(src);
}

void
eu_tenant_effective_limits(const struct eu_registry *reg, const struct eu_tenant *t,
                           struct eu_db_pool_limits *out)
{
    const struct eu_config *c = reg->cfg;
    out->max_connections =
        t->limits.max_connections > 0 ? t->limits.max_connections : c->pool_max_connections;
    out->min_connections =
        t->limits.min_connections >= 0 ? t->limits.min_connections : c->pool_min_connections;
    out->acquire_timeout_s =
        t->limits.acquire_timeout_s > 0 ? t->limits.acquire_timeout_s : c->pool_acquire_timeout_s;
    out->idle_timeout_s =
        t->limits.idle_timeout_s > 0 ? t->limits.idle_timeout_s : c->pool_idle_timeout_s;
    if (out->min_connections > out->max_connections)
        out->min_connections = out->max_connections;
}

struct eu_tenant *
eu_registry_upsert(struct eu_registry *reg, const struct eu_tenant *row)
{
    struct eu_tenant *t = eu_registry_find_id(reg, row->id);
    bool renamed = t && strcmp(t->domain, row->domain) != 0;
    if (renamed) {
        /* The pool's hook borrows the old domain: close it first. */
        tenant_pool_close(t);
        unlink_tenant(reg, t); /* domain changed: rehash under the new one */
        replace_str(&t->domain, row->domain);
        size_t h = hash_str(t->domain) % reg->nbuckets;
        t->hash_next = reg->buckets[h];
        reg->buckets[h] = t;
        reg->count++;
    }
    bool db_changed = false;
    if (!t) {
        if (reg->count + 1 > reg->nbuckets)
            grow(reg);
        t = eu_xcalloc(1, sizeof(*t));
        tenants_alive++;
        t->refs = 1; /* the registry's */
        t->last_used_ms = now_ms();
        t->id = row->id;
        t->domain = eu_xstrdup(row->domain);
        size_t h = hash_str(t->domain) % reg->nbuckets;
        t->hash_next = reg->buckets[h];
        reg->buckets[h] = t;
        size_t k = id_slot(t->id, reg->nbuckets);
        t->id_next = reg->id_buckets[k];
        reg->id_buckets[k] = t;
        reg->count++;
    } else {
        db_changed = strcmp(t->database, row->database) != 0 ||
                     (t->database_url == NULL) != (row->database_url == NULL) ||
                     (t->database_url && strcmp(t->database_url, row->database_url) != 0);
    }
    replace_str(&t->title, row->title);
    replace_str(&t->placement, row->placement);
    t->dedicated = row->dedicated;
    t->authorized_fetch = row->authorized_fetch;
    replace_str(&t->database, row->database);
    replace_str(&t->database_url, row->database_url);
    replace_str(&t->redis_url, row->redis_url);
    replace_str(&t->created_at, row->created_at);
    replace_str(&t->updated_at, row->updated_at);
    t->state = row->state;
    t->limits = row->limits;
    t->marked = false;
    /* Config refuses a prefix that would not fit, so a cut key here is a
     * programmer error, and a shared namespace the cost of ignoring it. */
    int n = snprintf(t->key_prefix, sizeof(t->key_prefix), "%s:{t%lld}:", reg->cfg->redis_prefix,
                     (long long)t->id);
    if (n < 0 || (size_t)n >= sizeof(t->key_prefix)) {
        eu_log_error("tenant", "redis prefix '%s' does not fit a key", reg->cfg->redis_prefix);
        abort();
    }
    if (t->pool && db_changed) {
        tenant_pool_close(t);
    } else if (t->pool) {
        struct eu_db_pool_limits lim;
        eu_tenant_effective_limits(reg, t, &lim);
        eu_db_pool_set_limits(t->pool, &lim);
    }
    return t;
}

void
eu_registry_mark_all(struct eu_registry *reg)
{
    for (size_t i = 0; i < reg->nbuckets; i++)
        for (struct eu_tenant *t = reg->buckets[i]; t; t = t->hash_next)
            t->marked = true;
}

void
eu_registry_sweep(struct eu_registry *reg)
{
    for (size_t i = 0; i < reg->nbuckets; i++) {
        struct eu_tenant *t = reg->buckets[i], *next;
        for (; t; t = next) {
            next = t->hash_next;
            if (t->marked) {
                eu_log_info("tenant", "'%s' is gone from the control table", t->domain);
                eu_registry_remove(reg, t);
            }
        }
    }
}

size_t
eu_registry_count(const struct eu_registry *reg)
{
    return reg->count;
}

void
eu_registry_each(struct eu_registry *reg, void (*fn)(struct eu_tenant *t, void *arg), void *arg)
{
    for (size_t i = 0; i < reg->nbuckets; i++) {
        struct eu_tenant *t = reg->buckets[i], *next;
        for (; t; t = next) {
            next = t->hash_next;
            fn(t, arg);
        }
    }
}

static void
placement_limits(const struct eu_config *cfg, bool dedicated, struct eu_db_pool_limits *out)
{
    /* A pooled placement's connections are kept open, never closed for
     * idleness: a tenant's request should not pay for a connect, and many
     * tenants keep them busy. A dedicated one serves one tenant, which may
     * well be idle: its connections close like any idle ones. The acquire
     * timeout is the tenants' business (their own waiters time out); this
     * one only bounds a queue that never moves. */
    out->max_connections = cfg->placement_connections;
    out->min_connections = dedicated ? 0 : cfg->placement_connections;
    out->acquire_timeout_s = cfg->pool_acquire_timeout_s;
    out->idle_timeout_s = cfg->pool_idle_timeout_s;
}

static struct eu_placement *
placement_get(struct eu_registry *reg, const char *url, const char *database, bool dedicated)
{
    struct eu_placement *p = reg->placements;
    for (; p; p = p->next)
        if (strcmp(p->url, url) == 0 && strcmp(p->database, database) == 0)
            return p;
    p = eu_xcalloc(1, sizeof(*p));
    p->reg = reg;
    p->url = eu_xstrdup(url);
    p->database = eu_xstrdup(database);
    struct eu_db_pool_limits lim;
    placement_limits(reg->cfg, dedicated, &lim);
    p->pool = eu_db_pool_new(reg->base, p->database, url, database, &lim);
    /* Another process may have created the database since we migrated it. */
    eu_db_pool_set_ready_hook(p->pool, eu_migrate_tenant_hook, p->database);
    /* The plans are made again from statistics, which a young placement's
     * tables only have once analyzed (migrations/tenant/0014_write_path.sql). */
    eu_db_pool_set_replan(p->pool, "SELECT eunha_analyze_new_tables(); DISCARD PLANS");
    eu_db_pool_set_budget(p->pool, reg->budget);
    p->next = reg->placements;
    reg->placements = p;
    return p;
}

static void
placement_unuse(struct eu_placement *p)
{
    if (--p->users > 0)
        return;
    /* No registry when it went first (eu_registry_free()). */
    if (p->reg)
        for (struct eu_placement **pp = &p->reg->placements; *pp; pp = &(*pp)->next)
            if (*pp == p) {
                *pp = p->next;
                break;
            }
    eu_db_pool_free(p->pool);
    free(p->url);
    free(p->database);
    free(p);
}

static const char *
tenant_url(const struct eu_registry *reg, const struct eu_tenant *t)
{
    return t->database_url ? t->database_url : reg->cfg->database_url;
}

/* Closes t's pool (its borrowed connections go back as they are released)
 * and lets go of its placement. */
static void
tenant_pool_close(struct eu_tenant *t)
{
    if (!t->pool)
        return;
    eu_db_pool_free(t->pool);
    t->pool = NULL;
    placement_unuse(t->placement_ref);
    t->placement_ref = NULL;
}

struct eu_db_pool *
eu_tenant_pool(struct eu_registry *reg, struct eu_tenant *t)
{
    if (!t->pool) {
        struct eu_db_pool_limits lim;
        eu_tenant_effective_limits(reg, t, &lim);
        struct eu_placement *p = placement_get(reg, tenant_url(reg, t), t->database, t->dedicated);
        p->users++;
        t->placement_ref = p;
        t->pool = eu_db_pool_new_child(p->pool, t->domain, &lim);
        eu_db_pool_set_tenant(t->pool, t->id);
    }
    return t->pool;
}

struct eu_db_pool *
eu_tenant_placement_pool(struct eu_registry *reg, struct eu_tenant *t)
{
    /* Made if need be and kept: a placement's entry is small, and there are
     * few placements. */
    return placement_get(reg, tenant_url(reg, t), t->database, t->dedicated)->pool;
}

void
eu_registry_warm(struct eu_registry *reg)
{
    /* Every pooled placement a tenant lives in: its connections open now,
     * so the first requests after a start do not queue behind connects. */
    for (size_t i = 0; i < reg->nbuckets; i++)
        for (struct eu_tenant *t = reg->buckets[i]; t; t = t->hash_next)
            if (!t->dedicated && t->state != EU_TENANT_DELETING) {
                struct eu_placement *p = placement_get(reg, tenant_url(reg, t), t->database, false);
                if (!p->pinned) {
                    p->pinned = true;
                    p->users++;
                }
                eu_db_pool_warm(p->pool);
            }
}

void
eu_tenant_from_row(const PGresult *res, int row, struct eu_tenant *out)
{
    memset(out, 0, sizeof(*out));
    out->id = strtoll(PQgetvalue(res, row, 0), NULL, 10);
    out->domain = PQgetvalue(res, row, 1);
    out->title = PQgetvalue(res, row, 2);
    out->database = PQgetvalue(res, row, 3);
    out->database_url = PQgetisnull(res, row, 4) ? NULL : PQgetvalue(res, row, 4);
    const char *state = PQgetvalue(res, row, 5);
    out->state = strcmp(state, "suspended") == 0  ? EU_TENANT_SUSPENDED
                 : strcmp(state, "deleting") == 0 ? EU_TENANT_DELETING
                                                  : EU_TENANT_ACTIVE;
    out->limits.max_connections = atoi(PQgetvalue(res, row, 6));
    out->limits.min_connections = atoi(PQgetvalue(res, row, 7));
    out->limits.acquire_timeout_s = atoi(PQgetvalue(res, row, 8));
    out->limits.idle_timeout_s = atoi(PQgetvalue(res, row, 9));
    out->created_at = PQgetvalue(res, row, 10);
    out->updated_at = PQgetvalue(res, row, 11);
    out->placement = PQgetvalue(res, row, 12);
    out->dedicated = PQgetvalue(res, row, 13)[0] == 't';
    out->authorized_fetch = PQgetvalue(res, row, 14)[0] == 't';
    out->limits.media_quota_bytes = strtoll(PQgetvalue(res, row, 15), NULL, 10);
    out->redis_url = PQgetisnull(res, row, 16) ? NULL : PQgetvalue(res, row, 16);
}

/* ---- placements' Redis servers ---- */

void
eu_registry_on_redis(struct eu_registry *reg, void (*fn)(struct eu_redis *r, void *arg), void *arg)
{
    if (reg->n_redis_hooks == REDIS_HOOKS_MAX) {
        eu_log_error("tenant", "too many redis hooks");
        abort();
    }
    reg->redis_hooks[reg->n_redis_hooks].fn = fn;
    reg->redis_hooks[reg->n_redis_hooks].arg = arg;
    reg->n_redis_hooks++;
}

struct eu_redis *
eu_tenant_redis(struct eu_app *app, const struct eu_tenant *t)
{
    struct eu_registry *reg = app->registry;
    const char *url = t->redis_url;
    if (!reg || !url || !*url || (reg->main_redis_url && strcmp(url, reg->main_redis_url) == 0))
        return app->redis;
    for (struct redis_server *rs = reg->redises; rs; rs = rs->next)
        if (strcmp(rs->url, url) == 0)
            return rs->r;
    char err[256];
    struct eu_redis *r = eu_redis_new(reg->base, url, reg->cfg->redis_timeout_ms, err, sizeof(err));
    if (!r) {
        /* The admin API took it (rediss://, say, which is not spoken
         * here): its tenants get what a Redis that is down gives. */
        eu_log_error("tenant", "placement '%s': %s", t->placement, err);
        r = eu_redis_new_down(reg->base);
    }
    struct redis_server *rs = eu_xcalloc(1, sizeof(*rs));
    rs->url = eu_xstrdup(url);
    rs->r = r;
    rs->next = reg->redises;
    reg->redises = rs;
    for (int i = 0; i < reg->n_redis_hooks; i++)
        reg->redis_hooks[i].fn(r, reg->redis_hooks[i].arg);
    return r;
}
