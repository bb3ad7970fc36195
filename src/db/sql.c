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

/* Composed texts of paged statements, by statement and variant: few (one
 * per paged statement and page shape in use), so a list is enough. */
struct composed {
    const struct eu_sql *s;
    unsigned variant;
    char *text;
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

const char *
eu_sql_text(const struct eu_sql *s, unsigned variant)
{
    if (!s->page_col)
        return s->text;
    variant &= EU_SQL_PAGE_VARIANTS - 1;
    for (struct composed *c = composed; c; c = c->next)
        if (c->s == s && c->variant == variant)
            return c->text;
    struct composed *c = eu_xmalloc(sizeof(*c));
    c->s = s;
    c->variant = variant;
    c->text = compose(s, variant);
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
    eu_db_conn_query(conn, eu_sql_text(s, 0), nparams, params, cb, arg);
}

void
eu_db_pool_stmt(struct eu_db_pool *pool, const struct eu_sql *s, int nparams,
                const char *const *params, eu_db_result_cb cb, void *arg)
{
    eu_db_pool_query(pool, eu_sql_text(s, 0), nparams, params, cb, arg);
}
