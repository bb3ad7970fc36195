/*
 * In-flight counts of password checks per tenant and per client address,
 * for pwgate_internal.h. Only checks in flight have entries, and they are
 * bounded by the CPU pool's own cap, so two short arrays searched in line
 * are enough; an entry goes when its count falls to zero, so the tables
 * hold nothing for idle tenants or clients.
 */
#include "pwgate_internal.h"

#include <stdlib.h>
#include <string.h>

#include "eunha/mem.h"

struct slot {
    int64_t tenant_id; /* the tenants' table */
    char *client;      /* the clients' table (heap) */
    int n;
};

struct table {
    struct slot *v;
    size_t len, cap;
};

static struct table tenants, clients;

static struct slot *
find(struct table *t, int64_t tenant_id, const char *client)
{
    for (size_t i = 0; i < t->len; i++) {
        struct slot *s = &t->v[i];
        if (client ? strcmp(s->client, client) == 0 : s->tenant_id == tenant_id)
            return s;
    }
    return NULL;
}

static struct slot *
find_or_add(struct table *t, int64_t tenant_id, const char *client)
{
    struct slot *s = find(t, tenant_id, client);
    if (s)
        return s;
    if (t->len == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->v = eu_xrealloc(t->v, t->cap * sizeof(*t->v));
    }
    s = &t->v[t->len++];
    *s = (struct slot){.tenant_id = tenant_id, .client = client ? eu_xstrdup(client) : NULL};
    return s;
}

/* Drops one from s, removing it from t at zero (the last entry fills its
 * place: order does not matter). */
static void
drop(struct table *t, struct slot *s)
{
    if (!s || --s->n > 0)
        return;
    free(s->client);
    *s = t->v[--t->len];
    if (t->len == 0) {
        free(t->v);
        *t = (struct table){0};
    }
}

bool
eu_pwgate_enter(int64_t tenant_id, const char *client, int tenant_share, int client_share)
{
    struct slot *ts = find(&tenants, tenant_id, NULL);
    struct slot *cs = find(&clients, 0, client);
    if ((ts && ts->n >= tenant_share) || (cs && cs->n >= client_share))
        return false;
    find_or_add(&tenants, tenant_id, NULL)->n++;
    find_or_add(&clients, 0, client)->n++;
    return true;
}

void
eu_pwgate_leave(int64_t tenant_id, const char *client)
{
    drop(&tenants, find(&tenants, tenant_id, NULL));
    drop(&clients, find(&clients, 0, client));
}
