/*
 * The statement registry's lookups (see sql.h). The tables themselves are
 * static data beside their handlers; what is built here is the text of
 * paged statements, whose ORDER BY direction a request chooses.
 */
#include "eunha/sql.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/mem.h"

/* Composed texts of paged statements, by statement and variant: few (one
 * per paged statement and page shape in use), so a list is enough. */
struct composed {
    const struct eu_sql *s;
    unsigned variant;
    char *text;
    uint64_t hash;
    struct composed *next;
};
static struct composed *composed;

/*
 * The page's conditions for s in one variant: returns text owned by the
 * caller (free()). A bound the page has becomes a plain comparison an index
 * can use; one it lacks becomes "$n IS NULL", true for the NULL the caller
 * sends, which keeps the parameter's type and costs one check per
 * execution. So a generic plan is as good as a custom one and nothing is
 * planned per request.
 */
static char *
compose(const struct eu_sql *s, unsigned variant)
{
    int n = s->page_param;
    const char *c = s->page_col;
    char cond[3][160];
    static const char *const ops[3] = {"<", ">", ">"};
    for (int i = 0; i < 3; i++) {
        if (variant & (1u << i))
            snprintf(cond[i], sizeof(cond[i]), " AND %s %s $%d::bigint", c, ops[i], n + i);
        else
            snprintf(cond[i], sizeof(cond[i]), " AND $%d::bigint IS NULL", n + i);
    }
    const char *dir = (variant & EU_SQL_PAGE_MIN) ? "ASC" : "DESC";
    const char *fmt = "%s%s%s%s ORDER BY %s %s LIMIT $%d::int";
    int len = snprintf(NULL, 0, fmt, s->text, cond[0], cond[1], cond[2], c, dir, n + 3);
    char *out = eu_xmalloc((size_t)len + 1);
    snprintf(out, (size_t)len + 1, fmt, s->text, cond[0], cond[1], cond[2], c, dir, n + 3);
    return out;
}

/* The composed variant of paged statement s, made on first use. */
static const struct composed *
composed_of(const struct eu_sql *s, unsigned variant)
{
    variant &= EU_SQL_PAGE_VARIANTS - 1;
    for (struct composed *c = composed; c; c = c->next)
        if (c->s == s && c->variant == variant)
            return c;
    struct composed *c = eu_xmalloc(sizeof(*c));
    c->s = s;
    c->variant = variant;
    c->text = compose(s, variant);
    c->hash = eu_db_sql_hash(c->text);
    c->next = composed;
    composed = c;
    return c;
}

const char *
eu_sql_text(const struct eu_sql *s, unsigned variant)
{
    return s->page_col ? composed_of(s, variant)->text : s->text;
}

/* Hashes of registered texts, by address: the texts live as long as the
 * process (or until eu_sql_free()), so each is hashed once rather than at
 * every execution. Open addressing; when full, texts are hashed each time. */
#define HASHES_MAX 1024
static struct {
    const char *text;
    uint64_t hash;
} hashes[HASHES_MAX];

static uint64_t
text_hash(const char *text)
{
    size_t i = ((uintptr_t)text >> 4) % HASHES_MAX;
    for (size_t n = 0; n < HASHES_MAX; n++, i = (i + 1) % HASHES_MAX) {
        if (hashes[i].text == text)
            return hashes[i].hash;
        if (!hashes[i].text) {
            hashes[i].text = text;
            hashes[i].hash = eu_db_sql_hash(text);
            return hashes[i].hash;
        }
    }
    return eu_db_sql_hash(text);
}

const char *
eu_sql_text_hashed(const struct eu_sql *s, unsigned variant, uint64_t *hash)
{
    if (!s->page_col) {
        *hash = text_hash(s->text);
        return s->text;
    }
    const struct composed *c = composed_of(s, variant);
    *hash = c->hash;
    return c->text;
}

const struct eu_sql *
eu_sql_find(const char *name)
{
    for (size_t t = 0; eu_sql_tables[t]; t++)
        for (const struct eu_sql *s = eu_sql_tables[t]; s->name; s++)
            if (strcmp(s->name, name) == 0)
                return s;
    return NULL;
}

void
eu_sql_free(void)
{
    memset(hashes, 0, sizeof(hashes));
    while (composed) {
        struct composed *next = composed->next;
        free(composed->text);
        free(composed);
        composed = next;
    }
}

void
eu_db_conn_stmt(struct eu_db_conn *conn, const struct eu_sql *s, int nparams,
                const char *const *params, eu_db_result_cb cb, void *arg)
{
    uint64_t h;
    const char *text = eu_sql_text_hashed(s, 0, &h);
    eu_db_conn_query_kept(conn, text, h, nparams, params, cb, arg);
}

void
eu_db_pool_stmt(struct eu_db_pool *pool, const struct eu_sql *s, int nparams,
                const char *const *params, eu_db_result_cb cb, void *arg)
{
    uint64_t h;
    const char *text = eu_sql_text_hashed(s, 0, &h);
    eu_db_pool_query_kept(pool, text, h, nparams, params, cb, arg);
}
