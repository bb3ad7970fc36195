/*
 * The integration tests' shared world (world.h): a server, its tenants and
 * seeded users, made the same way for every suite so that a test says what
 * it checks rather than how its users came to be.
 */
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SCOPES "read write follow"

static void
add_tenant(struct world *w, const char *host, size_t i)
{
    json_decref(eu_it_tenant_create(w->s, host, host));
    w->tenant_hosts[i] = host;
    w->tenant_ids[i] = eu_it_tenant_id(w->s, host);
}

const char *
eu_it_world_tid(const struct world *w, const char *host)
{
    for (size_t i = 0; i < EU_IT_WORLD_MAX_TENANTS && w->tenant_hosts[i]; i++)
        if (strcmp(w->tenant_hosts[i], host) == 0)
            return w->tenant_ids[i];
    ck_abort_msg("no tenant %s in this world", host);
    return NULL;
}

/* The options of the running world, for the scopes of users added later. */
static const struct eu_it_world_opts *current_opts;

const struct eu_it_world_user *
eu_it_world_add_user(struct world *w, const char *name, const char *host, const char *username,
                     const char *scopes)
{
    ck_assert_msg(w->nusers < EU_IT_WORLD_MAX_USERS, "more than %d users in a world",
                  EU_IT_WORLD_MAX_USERS);
    struct eu_it_world_user *u = &w->users[w->nusers++];
    u->name = name;
    u->host = host ? host : w->host;
    u->username = username ? username : name;
    if (!scopes)
        scopes = current_opts && current_opts->scopes ? current_opts->scopes : DEFAULT_SCOPES;
    const char *tid = eu_it_world_tid(w, u->host);
    for (size_t i = 0; i + 1 < w->nusers && !u->id; i++)
        if (strcmp(w->users[i].host, u->host) == 0 &&
            strcmp(w->users[i].username, u->username) == 0)
            u->id = strdup(w->users[i].id);
    if (!u->id)
        u->id = eu_it_account_seed_in(w->db, tid, u->host, u->username);
    u->tok = eu_it_token_in(w->db, tid, u->username, scopes);
    return u;
}

void
eu_it_world_start(struct world *w, const struct eu_it_world_opts *o)
{
    memset(w, 0, sizeof(*w));
    ck_assert_msg(o->host != NULL, "a world needs a host");
    current_opts = o;
    struct eu_it_opts so = o->server;
    if (o->extra_toml)
        so.extra_toml = o->extra_toml;
    w->s = eu_it_server_start_opts(&so);
    w->host = o->host;
    w->decoy = o->decoy;
    size_t n = 0;
    add_tenant(w, o->host, n++);
    if (o->decoy)
        add_tenant(w, o->decoy, n++);
    for (size_t i = 0; i < sizeof(o->tenants) / sizeof(o->tenants[0]) && o->tenants[i]; i++)
        add_tenant(w, o->tenants[i], n++);
    /* One placement holds them all (the pooled default), so the decoy's
     * rows sit beside the tenant's: what leaks between them shows. */
    w->db = eu_it_tenant_database(w->s, o->host);
    for (size_t i = 1; i < n; i++) {
        char *db = eu_it_tenant_database(w->s, w->tenant_hosts[i]);
        ck_assert_str_eq(db, w->db);
        free(db);
    }
    w->tid = w->tenant_ids[0];
    w->decoy_tid = o->decoy ? w->tenant_ids[1] : NULL;
    for (size_t i = 0; i < EU_IT_WORLD_MAX_USERS && o->users[i].name; i++)
        eu_it_world_add_user(w, o->users[i].name, o->users[i].host, o->users[i].username,
                             o->users[i].scopes);
}

void
eu_it_world_free(struct world *w)
{
    eu_it_server_free(w->s);
    w->s = NULL;
    for (size_t i = 0; i < w->nusers; i++) {
        free(w->users[i].tok);
        free(w->users[i].id);
    }
    for (size_t i = 0; i < EU_IT_WORLD_MAX_TENANTS; i++)
        free(w->tenant_ids[i]);
    free(w->db);
    memset(w, 0, sizeof(*w));
    current_opts = NULL;
}

void
eu_it_world_stop(struct world *w)
{
    ck_assert_int_eq(eu_it_server_stop(w->s), 0);
    eu_it_world_free(w);
}

static const struct eu_it_world_user *
user(const struct world *w, const char *name)
{
    for (size_t i = 0; i < w->nusers; i++)
        if (strcmp(w->users[i].name, name) == 0)
            return &w->users[i];
    ck_abort_msg("no user %s in this world", name);
    return NULL;
}

const char *
eu_it_tok(const struct world *w, const char *name)
{
    return name ? user(w, name)->tok : NULL;
}

const char *
eu_it_id(const struct world *w, const char *name)
{
    return user(w, name)->id;
}

char *
eu_it_world_sql(const struct world *w, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0 && (size_t)n < sizeof(q), "statement too long: %.200s", q);
    return eu_it_pg_exec(w->db, q);
}

long
eu_it_world_sql_long(const struct world *w, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0 && (size_t)n < sizeof(q), "statement too long: %.200s", q);
    return eu_it_pg_exec_long(w->db, q);
}
