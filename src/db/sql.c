/*
 * The statement registry's lookups (see sql.h). The tables themselves are
 * static data beside their handlers; what is built here is the text of
 * paged statements, whose ORDER BY direction a request chooses.
 */
#include "eunha/sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/mem.h"

/* Composed texts of paged statements, by statement: few (one per paged
 * statement and direction), so a list is enough. */
struct composed {
    const struct eu_sql *s;
    bool ascending;
    char *text;
    struct composed *next;
};
static struct composed *composed;

/* The page's conditions for s: returns text owned by the caller (free()). */
static char *
compose(const struct eu_sql *s, bool ascending)
{
    int n = s->page_param;
    const char *c = s->page_col;
    const char *fmt = "%s AND ($%d::bigint IS NULL OR %s < $%d::bigint)"
                      " AND ($%d::bigint IS NULL OR %s > $%d::bigint)"
                      " AND ($%d::bigint IS NULL OR %s > $%d::bigint)"
                      " ORDER BY %s %s LIMIT $%d::int";
    int len = snprintf(NULL, 0, fmt, s->text, n, c, n, n + 1, c, n + 1, n + 2, c, n + 2, c,
                       ascending ? "ASC" : "DESC", n + 3);
    char *out = eu_xmalloc((size_t)len + 1);
    snprintf(out, (size_t)len + 1, fmt, s->text, n, c, n, n + 1, c, n + 1, n + 2, c, n + 2, c,
             ascending ? "ASC" : "DESC", n + 3);
    return out;
}

const char *
eu_sql_text(const struct eu_sql *s, bool ascending)
{
    if (!s->page_col)
        return s->text;
    for (struct composed *c = composed; c; c = c->next)
        if (c->s == s && c->ascending == ascending)
            return c->text;
    struct composed *c = eu_xmalloc(sizeof(*c));
    c->s = s;
    c->ascending = ascending;
    c->text = compose(s, ascending);
    c->next = composed;
    composed = c;
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
    eu_db_conn_query(conn, eu_sql_text(s, false), nparams, params, cb, arg);
}

void
eu_db_pool_stmt(struct eu_db_pool *pool, const struct eu_sql *s, int nparams,
                const char *const *params, eu_db_result_cb cb, void *arg)
{
    eu_db_pool_query(pool, eu_sql_text(s, false), nparams, params, cb, arg);
}
