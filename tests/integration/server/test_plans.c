/*
 * Every registered statement's plan, as eunha's connections make it: on a
 * placement seeded with a subject tenant used through the API and two decoy
 * tenants with thousands of rows each (analyzed), each statement and paged
 * variant is prepared on a connection opened with eu_db_conn_options() and
 * its generic plan explained. No plan may be estimated above PLAN_COST_MAX
 * (PostgreSQL's default jit_above_cost, so it would not be compiled even
 * on a server where JIT is on) nor carry a JIT section.
 *
 * Nor may a plan still call one of the SQL functions written to be inlined
 * (the shared rules and helpers of migrations 0040 and 0042): one left as
 * a call runs as a query of its own for every row. PostgreSQL gives up
 * inlining without a word (a subquery in a scalar function's body, a
 * volatile call in a STABLE one, an argument used twice that costs more
 * than a column, a SET clause), so only the plan can tell.
 *
 * This is what a session-wide planner override breaks: with seq scans
 * switched off, a statement whose only way is a scan of a small table (the
 * control database's placements, a table with no usable index) is costed
 * at 10^10, passes jit_above_cost and compiles for hundreds of milliseconds
 * at every call. The connection's own settings are checked too.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/sql.h"

#define TIMEOUT 240
#define PLAN_COST_MAX 1e5

/* A connection to db with eunha's own options. */
static PGconn *
eunha_like_connect(const char *db)
{
    char options[256];
    eu_db_conn_options(options, sizeof(options));
    char *url = eu_it_pg_url(db);
    const char *keys[] = {"dbname", "options", NULL};
    const char *vals[] = {url, options, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    ck_assert_msg(PQstatus(pg) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(pg));
    free(url);
    return pg;
}

static void
expect_setting(PGconn *pg, const char *name, const char *want)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT current_setting('%s')", name);
    char *got = eu_it_pg_query(pg, sql);
    ck_assert_msg(got && strcmp(got, want) == 0, "%s is '%s', not '%s'", name, got ? got : "",
                  want);
    free(got);
}

/* Rows for two decoy tenants that never answer through the API: enough
 * that a table's statistics are a shared placement's, not an empty one's. */
static void
seed_decoys(PGconn *pg)
{
    /* Triggers keep counters and feeds, which the statistics do not need. */
    free(eu_it_pg_query(pg, "SET session_replication_role = replica"));
    for (int t = 900001; t <= 900002; t++) {
        char sql[1024];
        snprintf(sql, sizeof(sql),
                 "INSERT INTO accounts (tenant_id, username) SELECT %d, 'u' || g"
                 " FROM generate_series(1, 1000) g",
                 t);
        free(eu_it_pg_query(pg, sql));
        snprintf(sql, sizeof(sql),
                 "INSERT INTO statuses (tenant_id, account_id, text, content)"
                 " SELECT %d, a.id, 'seed', '<p>seed</p>' FROM accounts a,"
                 " generate_series(1, 4) g WHERE a.tenant_id = %d",
                 t, t);
        free(eu_it_pg_query(pg, sql));
        snprintf(sql, sizeof(sql),
                 "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                 " SELECT %d, a.id, b.id FROM accounts a CROSS JOIN LATERAL (SELECT x.id"
                 " FROM accounts x WHERE x.tenant_id = %d AND x.id > a.id ORDER BY x.id"
                 " LIMIT 5) b WHERE a.tenant_id = %d",
                 t, t, t);
        free(eu_it_pg_query(pg, sql));
        snprintf(sql, sizeof(sql),
                 "INSERT INTO favourites (tenant_id, account_id, status_id)"
                 " SELECT %d, s.account_id, s.id FROM statuses s WHERE s.tenant_id = %d"
                 " AND s.id %% 3 = 0",
                 t, t);
        free(eu_it_pg_query(pg, sql));
    }
    free(eu_it_pg_query(pg, "SET session_replication_role = DEFAULT"));
    free(eu_it_pg_query(pg, "ANALYZE"));
}

/* Some of the subject tenant's own rows, made the way a user makes them. */
static void
use_subject(struct eu_it_server *s, const char *host)
{
    free(eu_it_account_seed(s, host, "alice"));
    free(eu_it_account_seed(s, host, "bob"));
    char *alice = eu_it_user_token(s, host, "alice", "read write follow");
    char *bob = eu_it_user_token(s, host, "bob", "read write follow");
    struct eu_it_resp r = {0};
    for (int i = 0; i < 3; i++) {
        eu_it_callf(s, &r, host, "POST", alice, "{\"status\":\"hello #plans\"}",
                    "/api/v1/statuses");
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    eu_it_callf(s, &r, host, "GET", bob, NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    free(alice);
    free(bob);
}

/* The generic plan of the statement prepared as "s": its total cost,
 * whether it would be compiled, and (*text, the caller frees) the plan
 * with every node's expressions. */
static double
explain(PGconn *pg, const char *name, bool *jit, char **text_out)
{
    PGresult *d = PQdescribePrepared(pg, "s");
    ck_assert_int_eq(PQresultStatus(d), PGRES_COMMAND_OK);
    int n = PQnparams(d);
    PQclear(d);
    char sql[1024];
    int len = snprintf(sql, sizeof(sql), "EXPLAIN (FORMAT JSON, VERBOSE) EXECUTE s");
    for (int i = 0; i < n && len < (int)sizeof(sql) - 8; i++)
        len += snprintf(sql + len, sizeof(sql) - (size_t)len, "%sNULL", i ? "," : "(");
    if (n > 0)
        snprintf(sql + len, sizeof(sql) - (size_t)len, ")");
    char *text = eu_it_pg_query(pg, sql);
    ck_assert_msg(text != NULL, "%s: no plan", name);
    json_t *plan = json_loads(text, 0, NULL);
    ck_assert_msg(json_is_array(plan), "%s: plan is not JSON: %s", name, text);
    json_t *top = json_array_get(plan, 0);
    double cost = json_number_value(eu_it_jpath(top, "Plan.Total Cost"));
    *jit = json_object_get(top, "JIT") != NULL;
    json_decref(plan);
    *text_out = text;
    return cost;
}

/* What the plans of one run came to. */
struct tally {
    int n;
    const char *inlined; /* names of the functions no plan may call, comma-separated, or NULL */
    char calls[2048];    /* the plans that call one */
    char dear[2048];     /* the plans past PLAN_COST_MAX */
    double top[5];       /* the five dearest, printed to show the margin */
    const char *top_name[5];
};

/* Notes in t each function of t->inlined that plan (EXPLAIN VERBOSE text)
 * calls: a call prints as the name and a parenthesis. */
static void
note_calls(struct tally *t, const char *name, unsigned v, const char *plan)
{
    for (const char *f = t->inlined; f && *f;) {
        size_t len = strcspn(f, ",");
        char call[80];
        snprintf(call, sizeof(call), "%.*s(", (int)len, f);
        size_t used = strlen(t->calls);
        if (strstr(plan, call) && used < sizeof(t->calls) - 128)
            snprintf(t->calls + used, sizeof(t->calls) - used, " %s/%u calls %.*s();", name, v,
                     (int)len, f);
        f += len + (f[len] == ',');
    }
}

/* Prepares st's variant v on pg as "s", explains it and counts it in t. */
static void
check_plan(PGconn *pg, const struct eu_sql *st, unsigned v, int nparams, struct tally *t)
{
    const Oid int8 = 20;
    PGresult *r = PQprepare(pg, "s", eu_sql_text(st, v), nparams, &int8);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s does not prepare: %s", st->name,
                  PQresultErrorMessage(r));
    PQclear(r);
    bool jit = false;
    char *text = NULL;
    double cost = explain(pg, st->name, &jit, &text);
    ck_assert_msg(!jit, "%s (variant %u) would be JIT-compiled", st->name, v);
    note_calls(t, st->name, v, text);
    free(text);
    size_t used = strlen(t->dear);
    if (cost >= PLAN_COST_MAX && used < sizeof(t->dear) - 128)
        snprintf(t->dear + used, sizeof(t->dear) - used, " %s/%u at %.0f;", st->name, v, cost);
    for (int k = 0; k < 5; k++) {
        if (cost > t->top[k]) {
            memmove(t->top + k + 1, t->top + k, (4 - (size_t)k) * sizeof(*t->top));
            memmove(t->top_name + k + 1, t->top_name + k, (4 - (size_t)k) * sizeof(*t->top_name));
            t->top[k] = cost;
            t->top_name[k] = st->name;
            break;
        }
    }
    free(eu_it_pg_query(pg, "DEALLOCATE s"));
    t->n++;
}

static void
report(const char *what, const struct tally *t)
{
    fprintf(stderr, "test_plans: %s: %d plans; the dearest:", what, t->n);
    for (int k = 0; k < 5 && t->top_name[k]; k++)
        fprintf(stderr, " %s %.0f", t->top_name[k], t->top[k]);
    fprintf(stderr, "\n");
    ck_assert_msg(!t->dear[0], "%s: plans costed past %.0f:%s", what, PLAN_COST_MAX, t->dear);
    ck_assert_msg(!t->calls[0], "%s: plans calling a function meant to be inlined:%s", what,
                  t->calls);
}

/* The control database as a host of thousands sees it: a few placements
 * and 5,000 tenants rows (never loaded by the running server). */
static void
seed_control(PGconn *pg)
{
    free(eu_it_pg_query(pg, "INSERT INTO placements (name, kind, database)"
                            " SELECT 'seed' || g, 'pooled', 'seed_db' || g"
                            " FROM generate_series(1, 3) g"));
    free(eu_it_pg_query(pg, "INSERT INTO tenants (domain, placement_id)"
                            " SELECT 'seed' || g || '.example', (SELECT min(id) FROM placements)"
                            " FROM generate_series(1, 5000) g"));
    free(eu_it_pg_query(pg, "ANALYZE"));
}

/* The placement's SQL functions written to be inlined: LANGUAGE sql, not
 * volatile, not strict (eunha_next_id() and the STRICT helpers are called
 * as functions on purpose). The caller frees the list. */
static char *
inlined_functions(PGconn *pg)
{
    char *names = eu_it_pg_query(
        pg, "SELECT string_agg(p.proname, ',' ORDER BY p.proname) FROM pg_proc p"
            " JOIN pg_language l ON l.oid = p.prolang WHERE p.proname LIKE 'eunha\\_%'"
            " AND l.lanname = 'sql' AND p.provolatile <> 'v' AND NOT p.proisstrict");
    ck_assert_msg(names && strstr(names, "eunha_is_visible"), "inlined functions: %s",
                  names ? names : "none");
    return names;
}

START_TEST(test_no_plan_is_costed_for_jit)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, "plans.example", "Plans"));
    use_subject(s, "plans.example");
    char *db = eu_it_tenant_database(s, "plans.example");
    PGconn *pg = eunha_like_connect(db);
    expect_setting(pg, "jit", "off");
    expect_setting(pg, "enable_seqscan", "on");
    expect_setting(pg, "plan_cache_mode", "force_generic_plan");
    seed_decoys(pg);

    char *inlined = inlined_functions(pg);
    struct tally placement = {.inlined = inlined};
    for (size_t i = 0; eu_sql_tables[i]; i++)
        for (const struct eu_sql *st = eu_sql_tables[i]; st->name; st++)
            for (unsigned v = 0; v < (st->page_col ? EU_SQL_PAGE_VARIANTS : 1); v++)
                check_plan(pg, st, v, st->cross_tenant ? 0 : 1, &placement);
    report("placement", &placement);
    ck_assert_int_gt(placement.n, 100);
    free(inlined);
    PQfinish(pg);

    /* The tenant insert scans placements, which has no other way: with seq
     * scans switched off it was costed at 10^10 and compiled at every call. */
    PGconn *ctl = eunha_like_connect(s->name);
    seed_control(ctl);
    struct tally control = {0};
    for (const struct eu_sql *st = eu_admin_control_sql; st->name; st++)
        check_plan(ctl, st, 0, 0, &control);
    for (const struct eu_sql *st = eu_admin_move_control_sql; st->name; st++)
        check_plan(ctl, st, 0, 0, &control);
    for (const struct eu_sql *st = eu_admin_placements_sql; st->name; st++)
        check_plan(ctl, st, 0, 0, &control);
    report("control", &control);
    ck_assert_int_ge(control.n, 6);
    PQfinish(ctl);

    eu_sql_free();
    free(db);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("plans");
    EU_IT_ADD_TCASE(s, test_no_plan_is_costed_for_jit, TIMEOUT);
    return eu_it_run_suite(s);
}
