/*
 * Tests for the tenant-predicate check (src/db/sqlcheck.c): statements that
 * name every tenant table's tenant_id pass; a reference without one, an
 * INSERT without the column, a reused alias covered once, or a table in a
 * comma-separated FROM list left out fail, naming the table. Also the
 * reader of a bigint[]'s text (eu_db_bigint_array()), which every fan-out
 * and notify list goes through.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"

struct row {
    const char *sql;
    bool ok;
    const char *why; /* substring of the message on failure */
};

static const struct row rows[] = {
    {"SELECT 1", true, NULL},
    {"SELECT version FROM eunha_schema", true, NULL},
    {"SELECT id FROM accounts a WHERE a.tenant_id = $1 AND a.id = $2", true, NULL},
    {"SELECT id FROM accounts a WHERE a.id = $2", false, "accounts a"},
    {"SELECT id FROM accounts WHERE tenant_id = $1", true, NULL},
    {"SELECT id FROM accounts WHERE id = $2", false, "accounts has no"},
    {"SELECT s.id FROM statuses AS s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
     " WHERE s.tenant_id = $1",
     true, NULL},
    {"SELECT s.id FROM statuses s JOIN accounts a ON a.id = s.account_id WHERE s.tenant_id = $1",
     false, "accounts a"},
    /* One alias used in two subqueries needs two predicates. */
    {"SELECT (SELECT count(*) FROM follows f WHERE f.tenant_id = $1 AND f.account_id = 1),"
     " (SELECT count(*) FROM follows f WHERE f.target_account_id = 1)",
     false, "follows f"},
    {"SELECT (SELECT count(*) FROM follows f WHERE f.tenant_id = $1 AND f.account_id = 1),"
     " (SELECT count(*) FROM follows f WHERE f.tenant_id = $1 AND f.target_account_id = 1)",
     true, NULL},
    {"SELECT 1 FROM accounts a, users u WHERE a.tenant_id = $1 AND a.id = u.account_id", false,
     "users u"},
    {"SELECT 1 FROM accounts a, users u WHERE a.tenant_id = $1 AND u.tenant_id = $1", true, NULL},
    {"INSERT INTO jobs (kind) VALUES ($2)", false, "INSERT INTO jobs"},
    {"INSERT INTO jobs (tenant_id, kind) VALUES ($1, $2)", true, NULL},
    {"INSERT INTO markers AS m (tenant_id, account_id) VALUES ($1, $2)", true, NULL},
    {"INSERT INTO markers AS m (account_id) VALUES ($2)", false, "INSERT INTO markers"},
    {"UPDATE jobs SET state = 'dead' WHERE id = $2", false, "jobs has no"},
    {"UPDATE jobs SET state = 'dead' WHERE tenant_id = $1 AND id = $2", true, NULL},
    {"DELETE FROM follows WHERE id = $2", false, "follows has no"},
    {"DELETE FROM follows f USING accounts a WHERE f.tenant_id = $1 AND a.id = f.account_id", false,
     "accounts a"},
    /* Text in literals, and function calls named like tables, are not tables. */
    {"SELECT 'FROM accounts' AS x", true, NULL},
    {"SELECT extract(epoch FROM now())", true, NULL},
    {"WITH n AS (SELECT 1) SELECT * FROM n", true, NULL},
    {"SELECT x FROM unnest($2::text[]) AS tags(x)", true, NULL},
    /* The shared rules (migrations 0040 and 0042) take the tenant first. */
    {"SELECT 1 FROM statuses s CROSS JOIN LATERAL eunha_is_not_shunned($1, s.account_id, $2) n"
     " WHERE s.tenant_id = $1 AND n.ok",
     true, NULL},
    {"SELECT 1 FROM statuses s CROSS JOIN LATERAL eunha_is_not_shunned($3, s.account_id, $2) n"
     " WHERE s.tenant_id = $1 AND n.ok",
     false, "eunha_is_not_shunned() without $1"},
    {"SELECT (SELECT ok FROM eunha_is_visible($12, 1, 2, 0::smallint, NULL, 3))", false,
     "eunha_is_visible()"},
    {"SELECT eunha_ts(now()), eunha_next_id()", true, NULL},
};

START_TEST(test_rows)
{
    const struct row *r = &rows[_i];
    char why[160] = "";
    bool ok = eu_db_sql_check_tenant(r->sql, why, sizeof(why));
    ck_assert_msg(ok == r->ok, "%s: expected %s (%s)", r->sql, r->ok ? "pass" : "fail", why);
    if (!ok)
        ck_assert_msg(strstr(why, r->why) != NULL, "%s: message '%s' lacks '%s'", r->sql, why,
                      r->why);
}
END_TEST

START_TEST(test_bigint_array)
{
    size_t n = 99;
    int64_t *v = eu_db_bigint_array(NULL, &n);
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(n, 0);
    v = eu_db_bigint_array("{}", &n);
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(n, 0);
    v = eu_db_bigint_array("{7}", &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(v[0], 7);
    free(v);
    v = eu_db_bigint_array("{1,-2,9223372036854775807,40}", &n);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(v[0], 1);
    ck_assert_int_eq(v[1], -2);
    ck_assert_int_eq(v[2], INT64_MAX);
    ck_assert_int_eq(v[3], 40);
    free(v);
    /* NULL elements and stray signs are skipped, never read past the text. */
    v = eu_db_bigint_array("{NULL,5,-,6}", &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(v[0], 5);
    ck_assert_int_eq(v[1], 6);
    free(v);
}
END_TEST

static Suite *
sqlcheck_suite(void)
{
    Suite *s = suite_create("sqlcheck");
    TCase *tc = tcase_create("statements");
    tcase_add_loop_test(tc, test_rows, 0, (int)(sizeof rows / sizeof rows[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("bigint arrays");
    tcase_add_test(tc, test_bigint_array);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(sqlcheck_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
