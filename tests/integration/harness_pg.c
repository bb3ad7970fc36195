/*
 * The integration harness's side of PostgreSQL: its own connections to
 * the test server's databases (kept open per database, as every test asks
 * dozens of questions), dropping what a test made, and seeding accounts
 * and tokens by SQL where going through the API would only be slower.
 * Apart from harness.c, which starts the server and speaks HTTP to it.
 */
#include "harness.h"
#include "harness_internal.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_PG_URL "postgresql://postgres@127.0.0.1:5432/postgres"

/* ------------------------------------------------------------- PostgreSQL */

char *
eu_it_pg_url(const char *dbname)
{
    const char *url = it_env_or("EUNHA_TEST_PG_URL", DEFAULT_PG_URL);
    const char *p = strstr(url, "://");
    const char *slash, *query;

    p = p ? p + 3 : url;
    query = strchr(p, '?');
    slash = strchr(p, '/');
    if (slash && query && slash > query)
        slash = NULL;
    if (!slash)
        slash = query ? query : p + strlen(p);
    return it_xasprintf("%.*s/%s%s", (int)(slash - url), url, dbname, query ? query : "");
}

PGconn *
eu_it_pg_try_connect(const char *dbname)
{
    /* With expand_dbname the first "dbname" is the whole URL and the later
     * one overrides its database, so no URL surgery is needed here. */
    const char *keys[] = {"dbname", "dbname", "connect_timeout", NULL};
    const char *vals[] = {it_env_or("EUNHA_TEST_PG_URL", DEFAULT_PG_URL), dbname, "10", NULL};
    PGconn *conn = PQconnectdbParams(keys, vals, 1);

    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "harness: cannot connect to database '%s': %s", dbname,
                PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    return conn;
}

PGconn *
eu_it_pg_connect(const char *dbname)
{
    PGconn *conn = eu_it_pg_try_connect(dbname);

    ck_assert_msg(conn != NULL, "cannot connect to database '%s'", dbname);
    return conn;
}

/* The first column of res's first row (caller frees; NULL for no row or
 * a NULL), after failing the test if sql failed. Clears res. */
static char *
first_value(PGresult *res, const char *sql)
{
    ExecStatusType st = PQresultStatus(res);
    char *out = NULL;

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(res));
        PQclear(res);
        ck_abort_msg("query failed: %s: %s", sql, msg);
    }
    if (st == PGRES_TUPLES_OK && PQntuples(res) > 0 && PQnfields(res) > 0 &&
        !PQgetisnull(res, 0, 0))
        out = it_xstrdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    return out;
}

char *
eu_it_pg_query(PGconn *conn, const char *sql)
{
    return first_value(PQexec(conn, sql), sql);
}

/* ---------------------------------------------------- kept connections */

/*
 * The harness's own statements (tokens, seeded rows, counts, checks) go
 * through one kept connection per database rather than a new one each: a
 * PostgreSQL connection costs its backend about 30 ms of CPU on the test
 * machines, and a test made ten or twenty. A kept connection belongs to
 * the process that opened it (a forked test forgets its parent's) and to
 * one caller at a time; application_name marks it so that backend counts
 * leave it out. It is closed when it breaks (a stopped server, a dropped
 * database: the statement then runs once more on a new one) or when a
 * statement leaves it inside a transaction. Dedicated placements
 * ("<server>_p<ID>") are never kept: the server drops them while the test
 * runs, and a connection would stop it.
 */
#define KEPT_MAX 8
#define KEPT_APP "eunha_it_harness"

static struct kept {
    pid_t pid;
    char db[128];
    PGconn *conn;
    long long used;
    bool busy;
} kept[KEPT_MAX];
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static bool
keepable(const char *db)
{
    const char *p = strrchr(db, '_');
    if (strlen(db) >= sizeof(kept[0].db))
        return false;
    if (!p || p[1] != 'p' || !isdigit((unsigned char)p[2]))
        return true;
    for (p += 2; *p; p++)
        if (!isdigit((unsigned char)*p))
            return true;
    return false;
}

/* A kept connection to dbname; NULL when it cannot be made and the caller
 * only tries (try), else the test fails. */
static PGconn *
connect_as_harness(const char *dbname, bool try)
{
    const char *keys[] = {"dbname", "dbname", "connect_timeout", "application_name", NULL};
    const char *vals[] = {it_env_or("EUNHA_TEST_PG_URL", DEFAULT_PG_URL), dbname, "10", KEPT_APP,
                          NULL};
    PGconn *conn = PQconnectdbParams(keys, vals, 1);
    if (try && PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "harness: cannot connect to database '%s': %s", dbname,
                PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    ck_assert_msg(PQstatus(conn) == CONNECTION_OK, "cannot connect to database '%s': %s", dbname,
                  PQerrorMessage(conn));
    return conn;
}

/* Closes the kept connections to db and to the databases named db_*,
 * before they are dropped. */
static void
kept_forget(const char *db)
{
    size_t n = strlen(db);
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < KEPT_MAX; i++) {
        struct kept *k = &kept[i];
        /* A parent's stays reachable in its slot (see pg_run_ex); the drop's
         * FORCE ends its backend. */
        if (!k->conn || k->busy || k->pid != getpid() || strncmp(k->db, db, n) != 0 ||
            (k->db[n] && k->db[n] != '_'))
            continue;
        PQfinish(k->conn);
        k->conn = NULL;
    }
    pthread_mutex_unlock(&kept_lock);
}

/*
 * Runs sql with params on db through its kept connection and returns the
 * result (the caller PQclears it). A connection found broken is replaced
 * and the statement run once more.
 */
static PGresult *
pg_run_ex(const char *db, const char *sql, int nparams, const char *const *params, bool try)
{
    struct kept *k = NULL;
    if (keepable(db)) {
        pthread_mutex_lock(&kept_lock);
        struct kept *oldest = NULL;
        for (int i = 0; i < KEPT_MAX; i++) {
            struct kept *c = &kept[i];
            /* The parent's: its socket is not ours to use or close, and
             * the slot keeps it reachable (LeakSanitizer would report it
             * at this process's exit). */
            if (c->conn && c->pid != getpid())
                continue;
            if (c->conn && !c->busy && strcmp(c->db, db) == 0)
                k = c;
            if (!c->busy && (!oldest || !c->conn || (oldest->conn && c->used < oldest->used)))
                oldest = c;
        }
        if (!k && oldest) {
            k = oldest;
            if (k->conn)
                PQfinish(k->conn);
            k->conn = NULL;
            snprintf(k->db, sizeof(k->db), "%s", db);
            k->pid = getpid();
        }
        if (k)
            k->busy = true;
        pthread_mutex_unlock(&kept_lock);
    }
    if (!k) {
        /* Not to be kept, or every slot in use by another thread. */
        PGconn *conn = eu_it_pg_connect(db);
        PGresult *res = nparams ? PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0)
                                : PQexec(conn, sql);
        PQfinish(conn);
        return res;
    }
    PGresult *res = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!k->conn)
            k->conn = connect_as_harness(db, try);
        if (!k->conn)
            break;
        /* Without parameters, the simple protocol: a test may send several
         * statements in one string. */
        res = nparams ? PQexecParams(k->conn, sql, nparams, NULL, params, NULL, NULL, 0)
                      : PQexec(k->conn, sql);
        if (PQstatus(k->conn) == CONNECTION_OK)
            break;
        PQfinish(k->conn);
        k->conn = NULL;
        if (attempt == 0)
            PQclear(res);
    }
    if (k->conn && PQtransactionStatus(k->conn) != PQTRANS_IDLE) {
        PQfinish(k->conn);
        k->conn = NULL;
    }
    pthread_mutex_lock(&kept_lock);
    k->used = eu_it_now_ms();
    k->busy = false;
    pthread_mutex_unlock(&kept_lock);
    return res;
}

static PGresult *
pg_run(const char *db, const char *sql, int nparams, const char *const *params)
{
    return pg_run_ex(db, sql, nparams, params, false);
}

/* pg_run for the harness's own housekeeping, which a stopped server must
 * not fail: NULL when "postgres" cannot be reached. */
static PGresult *
pg_try_admin(const char *sql, int nparams, const char *const *params)
{
    return pg_run_ex("postgres", sql, nparams, params, true);
}

char *
eu_it_pg_exec(const char *dbname, const char *sql)
{
    return first_value(pg_run(dbname, sql, 0, NULL), sql);
}

long
eu_it_pg_exec_long(const char *dbname, const char *sql)
{
    char *v = eu_it_pg_exec(dbname, sql);
    long n;

    ck_assert_msg(v != NULL, "query returned no row: %s", sql);
    n = strtol(v, NULL, 10);
    free(v);
    return n;
}

/* Runs a one-parameter query on the "postgres" database, returning a count. */
static long
count_on_postgres(const char *sql, const char *param)
{
    const char *params[] = {param};
    PGresult *res = pg_run("postgres", sql, 1, params);
    long n;

    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", PQresultErrorMessage(res));
        PQclear(res);
        ck_abort_msg("query failed: %s: %s", sql, msg);
    }
    n = strtol(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return n;
}

long
eu_it_pg_count_backends(const char *dbname)
{
    return count_on_postgres("SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
                             " AND backend_type = 'client backend'"
                             " AND application_name <> '" KEPT_APP "'",
                             dbname);
}

long
eu_it_pg_count_lock_waiters(const char *dbname)
{
    return count_on_postgres("SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
                             " AND wait_event_type = 'Lock'",
                             dbname);
}

bool
eu_it_pg_db_exists(const char *name)
{
    return count_on_postgres("SELECT count(*) FROM pg_database WHERE datname = $1", name) > 0;
}

char *
eu_it_pg_ident(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(2 * n + 3), *p = out;

    if (!out)
        abort();
    *p++ = '"';
    for (; *name; name++) {
        if (*name == '"')
            *p++ = '"';
        *p++ = *name;
    }
    *p++ = '"';
    *p = '\0';
    return out;
}

/* The statements below run on the kept connection to "postgres" (pg_run):
 * a backend for each drop and each sweep was a fifth of a short test's
 * PostgreSQL time. */
static void
drop_one(const char *db)
{
    char *ident = eu_it_pg_ident(db);
    char *sql;
    PGresult *res;

    /* A template database cannot be dropped; the server may have marked it. */
    sql = it_xasprintf("ALTER DATABASE %s IS_TEMPLATE false", ident);
    PQclear(pg_try_admin(sql, 0, NULL));
    free(sql);
    sql = it_xasprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", ident);
    res = pg_try_admin(sql, 0, NULL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        fprintf(stderr, "harness: cannot drop database '%s': %s", db, PQresultErrorMessage(res));
    PQclear(res);
    free(sql);
    free(ident);
}

/* Drops databases matching a LIKE pattern (escape '\'), plus the exact name. */
static void
drop_matching(const char *exact, const char *like)
{
    const char *params[] = {exact, like};
    PGresult *res = pg_try_admin("SELECT datname FROM pg_database WHERE datname = $1"
                                 " OR datname LIKE $2 ORDER BY length(datname) DESC",
                                 2, params);

    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        fprintf(stderr, "harness: cannot list databases: %s", PQresultErrorMessage(res));
        PQclear(res);
        return;
    }
    /* Longest names first, so tenants go before the template and control db. */
    for (int i = 0; i < PQntuples(res); i++)
        drop_one(PQgetvalue(res, i, 0));
    PQclear(res);
}

static char *
like_prefix(const char *name)
{
    char *out = malloc(2 * strlen(name) + 4), *p = out;

    if (!out)
        abort();
    for (; *name; name++) {
        if (*name == '_' || *name == '%' || *name == '\\')
            *p++ = '\\';
        *p++ = *name;
    }
    strcpy(p, "\\_%");
    return out;
}

void
eu_it_drop_databases(const char *name)
{
    char *like;

    kept_forget(name);
    like = like_prefix(name);
    drop_matching(name, like);
    free(like);
}

/*
 * Drops databases left by test processes that died without cleaning up (a
 * Check timeout kills with SIGKILL, so the exit handler never ran). The pid
 * in the name tells whether the owner is gone.
 */
void
it_drop_stale_databases(void)
{
    /* Once per process (each forked test is one): what died before it
     * started is found the first time. */
    static pid_t swept;
    PGresult *res;

    if (swept == getpid())
        return;
    swept = getpid();
    res = pg_try_admin("SELECT datname FROM pg_database WHERE datname LIKE 'eunha\\_it\\_%'", 0,
                       NULL);
    if (PQresultStatus(res) == PGRES_TUPLES_OK) {
        for (int i = 0; i < PQntuples(res); i++) {
            const char *db = PQgetvalue(res, i, 0);
            long pid = strtol(db + strlen("eunha_it_"), NULL, 10);
            if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
                drop_one(db);
        }
    }
    PQclear(res);
}

/* ------------------------------------------------- statuses: user tokens */

#include "eunha/auth.h"

struct eu_it_app
eu_it_app_create(struct eu_it_server *s, const char *host, const char *json_body)
{
    struct eu_it_resp r = {0};
    struct eu_it_app a;
    eu_it_callf(s, &r, host, "POST", NULL, json_body, "/api/v1/apps");
    ck_assert_msg(r.status == 200, "POST /api/v1/apps on %s: %ld %s", host, r.status, r.body);
    const char *id = eu_it_json_str(&r, "client_id"), *secret = eu_it_json_str(&r, "client_secret");
    ck_assert_msg(id && secret, "app without client_id or client_secret: %s", r.body);
    snprintf(a.id, sizeof(a.id), "%s", id);
    snprintf(a.secret, sizeof(a.secret), "%s", secret);
    eu_it_resp_free(&r);
    return a;
}

char *
eu_it_app_token(struct eu_it_server *s, const char *host, const char *scope)
{
    struct eu_it_app a = eu_it_app_create(
        s, host,
        "{\"client_name\":\"Test app\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\","
        "\"scopes\":\"read write follow\"}");
    char body[512];
    snprintf(body, sizeof(body),
             "{\"grant_type\":\"client_credentials\",\"client_id\":\"%s\",\"client_secret\":"
             "\"%s\",\"scope\":\"%s\"}",
             a.id, a.secret, scope);
    struct eu_it_resp r = {0};
    eu_it_callf(s, &r, host, "POST", NULL, body, "/oauth/token");
    ck_assert_msg(r.status == 200, "client_credentials on %s: %ld %s", host, r.status, r.body);
    char *tok = it_xstrdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return tok;
}

char *
eu_it_token_in(const char *db, const char *tid, const char *username, const char *scopes)
{
    char token[EU_AUTH_TOKEN_LEN], hash[65];
    eu_auth_token_new(token);
    eu_auth_token_hash(token, hash);
    const char *params[] = {hash, scopes, username, tid};
    PGresult *r = pg_run(
        db,
        "WITH app AS (INSERT INTO oauth_applications (tenant_id, name, redirect_uri, scopes,"
        "  client_id, client_secret_hash) VALUES ($4, 'it', 'urn:ietf:wg:oauth:2.0:oob', $2,"
        "  'it-' || eunha_next_id(), 'secret') RETURNING id)"
        " INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash, scopes)"
        " SELECT $4, app.id, u.id, $1, $2 FROM app, users u JOIN accounts a"
        " ON a.tenant_id = u.tenant_id AND a.id = u.account_id"
        " WHERE u.tenant_id = $4 AND lower(a.username) = lower($3) AND a.domain IS NULL"
        " RETURNING id",
        4, params);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1,
                  "cannot make a token for %s in tenant %s: %s", username, tid,
                  PQresultErrorMessage(r));
    PQclear(r);
    return it_xstrdup(token);
}

char *
eu_it_user_token(struct eu_it_server *s, const char *domain, const char *username,
                 const char *scopes)
{
    char *db = eu_it_tenant_database(s, domain);
    char *tid = eu_it_tenant_id(s, domain);
    char *token = eu_it_token_in(db, tid, username, scopes);
    free(db);
    free(tid);
    return token;
}

/*
 * Every seeded account shares this RSA-2048 pair, made once with openssl
 * for the tests: the server makes a new pair per account, which is what
 * costs (test_account_keys checks that, through the admin API). Nothing
 * here is secret; it signs only test servers' requests.
 */
static const char seed_public_pem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtaWct6l9ISeDl5RFGRBq\n"
    "+j+ZbFd7vBGuf6EqZRVi1kRkUbyUf0qjWiTV0Ya/huQBX9E+HqKSaHsHeSOOOVDK\n"
    "aDpNBXfDEXxK5X6p2hxux+axtzOj4hYIdjgKskQTAg5roK7UCkSNyx4aFjJDUoe0\n"
    "iF3orVSk1iOee/7+QIeZT8IRJD5JI4JB08WFP+dClbBCo4mEqnI8ZGkV4/hVUfv5\n"
    "3nnoyBxcZKrx0e2syVmozd6zwifeVyhTYIhx6rO6yVY4L//V8cL+cJBLpdhhDHFB\n"
    "ER7YaH1pitqzBsU1lAA2IrY1dqLVZ+d/PNSSP1vRPA/ZRKa5wAS0RBSrSTG2sid3\n"
    "dwIDAQAB\n"
    "-----END PUBLIC KEY-----\n";

static const char seed_private_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQC1pZy3qX0hJ4OX\n"
    "lEUZEGr6P5lsV3u8Ea5/oSplFWLWRGRRvJR/SqNaJNXRhr+G5AFf0T4eopJoewd5\n"
    "I445UMpoOk0Fd8MRfErlfqnaHG7H5rG3M6PiFgh2OAqyRBMCDmugrtQKRI3LHhoW\n"
    "MkNSh7SIXeitVKTWI557/v5Ah5lPwhEkPkkjgkHTxYU/50KVsEKjiYSqcjxkaRXj\n"
    "+FVR+/neeejIHFxkqvHR7azJWajN3rPCJ95XKFNgiHHqs7rJVjgv/9Xxwv5wkEul\n"
    "2GEMcUERHthofWmK2rMGxTWUADYitjV2otVn53881JI/W9E8D9lEprnABLREFKtJ\n"
    "MbayJ3d3AgMBAAECggEAGOh3b6KIy126aF6nME4ACAYQk7qrTO61GZXlVQHJu81F\n"
    "CbBCQfI01CJDmlJP5mn9hkC7CUMMWydZBFN2fTAxkSPtdoJ69+WDSlTuwD8whwOA\n"
    "pbkpunwq94sCbHoei875EzTl/pfH7xesRr7oXGN0w1OdRFIHCGt59VF8q9HsQ/NX\n"
    "t6p28GcFwcytNniP/m64zIZ4nqe9wLwb2TgV2zWMzMFCyZIW/qgicVVP6eTUJU2A\n"
    "HiXZQp2zj484HeC3yV3rAiLy2sB09MKJfACN+QRe8mmV6GCH4zOPujoVJ7IWcrx+\n"
    "TULN4tZAIMwT2+nUohUb27Xn7CH34HfbysHGUJQxgQKBgQDy1A1hQhElkeIkPkBc\n"
    "MMh146EeLYf+QJToVkjk2F5KpPCQagj4qPFvTjH5K/7QM++PAtuNLgY9WeAK3ZE6\n"
    "JAh72nJw4gQb8CNI7Kdf772UtHHnPvWkpMzXY0rn6IPmYlKj4fa/KMa+4n2gBfnp\n"
    "L9WTIu9WI62xtrgL/Ae2qqrpywKBgQC/f/yHtDmiAdta1vKHPUnkSDVvAHmdKGjc\n"
    "k1i24Ex6cJcIJPaosA0KEbe3SJhu38ZFsBZSviD/nlsBCbFOX7WuqLcvWB8QYzGo\n"
    "EEO2FypoGsycLZnXU+BZCvc02tU+JG0cUVYU3tbUW9CpEhlE1zsXnj9p7wLhDvbv\n"
    "v8mlkIfjhQKBgQDtwnVLWm4BlEKRbCaGXfmZfIUgUEKMz1091GZRNA23FqK5NCmO\n"
    "l5S2gCDsMYixAXk5VPn11S+k2KBG40U0YV2xL2XIY3TUih9yYs1LYSkGNlwkqP/J\n"
    "8tbiukT4pzCm3nS+JBz+dQWMl6Wbjt5w1TZQd+9SL2L908OHcIF4+MiaWwKBgQCO\n"
    "nhrMVgS2Cvv6YyqsXZCyWrSwvoHT8UxnObVQPSu35DIW9rBcYQDVBuzzqzUbHbzk\n"
    "GYgGh2K7/It58mYCIHWGZlBHCjHYWoeYysQi0I3ciljn125DV0w2BFynGHLHnQlF\n"
    "la2uTWdhMB/uSnRXOJPhuxEvK7nRMvvlAciDbWhGoQKBgQDLtWOvJjPBJ1pmbzsT\n"
    "jWo2YuHrXyxCbGKKDrZi7lT6p1FSnDfofCeBoGGxTBjo7frKXkTSmaywJVtoHVx3\n"
    "paH0rBF+Nx+dTZaSrmzwwSsXYKTOODM0hHASk7Y6lNewCzc5hbgbDxojXRkfrb7v\n"
    "J22jvrSw3s0c3mG0m/9PHl3+bw==\n"
    "-----END PRIVATE KEY-----\n";

/* argon2id (m=19456, t=2, p=1, as src/admin/accounts.c hashes) of
 * EU_IT_PASSWORD, computed once for the tests. */
static const char seed_password_hash[] = "$argon2id$v=19$m=19456,t=2,p=1$+j2Xfc7QUr6AyTD+OsdZEg$"
                                         "oSeWw1pAPZhlnj/CaBEPlAwCKIbmbsZET22at4Nwt1Y";

char *
eu_it_account_seed_in(const char *db, const char *tid, const char *domain, const char *username)
{
    char email[512];
    snprintf(email, sizeof(email), "%s@%s", username, domain);
    const char *params[] = {tid,   username,          seed_public_pem, seed_private_pem,
                            email, seed_password_hash};
    /* The statement the admin API runs (src/admin/accounts.c). */
    PGresult *r =
        pg_run(db,
               "WITH a AS (INSERT INTO accounts (tenant_id, username, public_key, private_key)"
               " VALUES ($1, $2, $3, $4) RETURNING id) INSERT INTO users (tenant_id, account_id,"
               " email, encrypted_password, confirmed_at) SELECT $1, a.id, $5, $6, now()"
               " FROM a RETURNING account_id::text",
               6, params);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1,
                  "cannot seed account %s on %s: %s", username, domain, PQresultErrorMessage(r));
    char *id = it_xstrdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return id;
}

char *
eu_it_account_seed(struct eu_it_server *s, const char *domain, const char *username)
{
    char *db = eu_it_tenant_database(s, domain);
    char *tid = eu_it_tenant_id(s, domain);
    char *id = eu_it_account_seed_in(db, tid, domain, username);
    free(db);
    free(tid);
    return id;
}

char *
eu_it_account_id(struct eu_it_server *s, const char *domain, const char *username)
{
    char *db = eu_it_tenant_database(s, domain);
    char *tid = eu_it_tenant_id(s, domain);
    const char *params[] = {username, tid};
    PGresult *r = pg_run(db,
                         "SELECT id::text FROM accounts WHERE tenant_id = $2"
                         " AND lower(username) = lower($1) AND domain IS NULL",
                         2, params);
    free(tid);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1,
                  "no account %s on %s: %s", username, domain, PQresultErrorMessage(r));
    char *id = it_xstrdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    free(db);
    return id;
}

char *
eu_it_user_new(struct eu_it_server *s, const char *domain, const char *username, const char *scopes,
               char **account_id)
{
    char *db = eu_it_tenant_database(s, domain);
    char *tid = eu_it_tenant_id(s, domain);
    char *id = eu_it_account_seed_in(db, tid, domain, username);
    char *token = eu_it_token_in(db, tid, username, scopes);
    if (account_id)
        *account_id = id;
    else
        free(id);
    free(db);
    free(tid);
    return token;
}
