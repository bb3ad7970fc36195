/*
 * Helpers for Eunha's integration tests: start a real `eunha serve` on port 0
 * against the PostgreSQL and Redis named by EUNHA_TEST_PG_URL and
 * EUNHA_TEST_REDIS_URL, talk to it over HTTP (libcurl) and look at its
 * databases directly (libpq).
 *
 * Everything here blocks and is meant to be called from a Check test running
 * in fork mode. Functions whose name does not say "try" assert with Check
 * (ck_assert_*) and so end the test on failure; they must be called from the
 * test's main thread. eu_it_http() does not assert and may be called from any
 * thread.
 *
 * Every server gets a unique name "eunha_it_<pid>_<n>" that is its control
 * database; its template is the run's migrated one (EUNHA_TEST_PG_GOLDEN),
 * else "<name>_tpl"; its default pooled placement "<name>_main" and
 * dedicated placements "<name>_p<ID>".
 * eu_it_server_free() drops them all. A test that ends early
 * still cleans up: servers die with their test process (PR_SET_PDEATHSIG),
 * and since Check ends a failed test with _exit(), skipping atexit handlers,
 * eu_it_after_test() runs in the runner after each TCase to restart any
 * service the test stopped with eu_it_sh("..._STOP"), print the orphaned
 * server's log and drop the databases, so runs do not pile up. An atexit
 * handler does the same for tests that exit() normally or run without fork.
 */
#ifndef EUNHA_TESTS_INTEGRATION_HARNESS_H
#define EUNHA_TESTS_INTEGRATION_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <check.h>
#include <jansson.h>
#include <libpq-fe.h>

#define EU_IT_ADMIN_TOKEN "test-admin-token"
#define EU_IT_CPU_THREADS 2
/* Every test account's password. */
#define EU_IT_PASSWORD "correct horse battery staple"

/*
 * Options for eu_it_server_start_opts(). Zero-initialise and set what you
 * need; zero (or NULL) means "use the default".
 */
struct eu_it_opts {
    /* Reuse this name (and so these databases) instead of making a new one. */
    const char *name;
    /* Appended verbatim to the generated config. It may hold whole extra
     * tables, but must not repeat a table the harness writes ([server],
     * [admin], [database], [redis], [log], and [database_pool] when any pool_*
     * field below is set): the server rejects duplicate keys and tables. */
    const char *extra_toml;
    /* [server] cpu_threads; default EU_IT_CPU_THREADS. */
    int cpu_threads;
    /* Appended verbatim inside [server] (e.g. trusted_proxies). */
    const char *server_toml;
    /* [database_pool] keys; when all are zero no [database_pool] table is
     * written and the server's defaults apply. min_connections is written as
     * given whenever the table is written. */
    int pool_max;
    int pool_min;
    int acquire_timeout;
    int idle_timeout;
    /* [database] placement_connections; 0: the server's default. */
    int placement_connections;
    /* Appended verbatim inside [database] (e.g. statement_timeout_ms). */
    const char *database_toml;
};

struct eu_it_server {
    char name[64]; /* control database name, unique per server */
    char dir[256]; /* temp dir holding config, ready file and log */
    char config_path[300];
    char ready_path[300];
    char log_path[300];
    pid_t pid; /* the server process (from fork, checked against the ready file) */
    int public_port;
    int admin_port;
    bool running;
    /* Set to keep the databases when the server is freed, so a later
     * eu_it_server_start_opts() with .name = this name finds them. */
    bool keep_databases;
};

/*
 * Starts `$EUNHA_BIN serve -c CONFIG --ready-file READY` with a fresh unique
 * name and waits up to 60 s for the ready file. extra_toml may be NULL; see
 * struct eu_it_opts for what it may contain. Asserts on failure (printing the
 * server's log). The caller frees the result with eu_it_server_free().
 */
struct eu_it_server *eu_it_server_start(const char *extra_toml);

/* Same with options; opts may be NULL. */
struct eu_it_server *eu_it_server_start_opts(const struct eu_it_opts *opts);

/*
 * Sends SIGTERM and waits up to 30 s. Returns the exit status (128 + signal
 * if it died from a signal) or -1 if it had to be killed with SIGKILL. Prints
 * the tail of the server's log unless it exited 0. The databases stay.
 */
int eu_it_server_stop(struct eu_it_server *s);

/* Sends sig (SIGHUP, ...) to the running server; asserts it was delivered. */
void eu_it_server_signal(struct eu_it_server *s, int sig);

/*
 * Stops the server (asserting exit status 0) and starts it again with the
 * same config and databases; the ports change. Asserts on failure.
 */
void eu_it_server_restart(struct eu_it_server *s);

/* True while the server process has not exited (reaps it if it has). */
bool eu_it_server_is_alive(struct eu_it_server *s);

/*
 * Kills the server if it still runs (printing its log), drops its databases
 * unless keep_databases is set, removes its temp dir and frees s. NULL is
 * ignored.
 */
void eu_it_server_free(struct eu_it_server *s);

/* Drops database "name", "name_tpl" and every "name_t*". Does not assert. */
void eu_it_drop_databases(const char *name);

/* Prints the last bytes of the server's log to stderr. */
void eu_it_server_print_log(const struct eu_it_server *s);

/* Removes dir and everything under it (a test's own mkdtemp() folder).
 * Does not assert. */
void eu_it_remove_tree(const char *dir);

/* ------------------------------------------------------------------ HTTP */

struct eu_it_header {
    char *name;
    char *value;
};

struct eu_it_resp {
    long status; /* 0 when no response arrived; see error */
    char *body;  /* NUL-terminated, "" when empty */
    size_t body_len;
    json_t *json;    /* the body parsed as JSON, or NULL */
    char *headers;   /* raw header block of the final response */
    double seconds;  /* wall time of the exchange */
    char error[256]; /* libcurl's message when status == 0 */
    struct eu_it_header *hdrs;
    size_t nhdrs;
};

/*
 * Sends METHOD http://127.0.0.1:PORT PATH with "Host: host_header" (when not
 * NULL), "Authorization: Bearer bearer" (when not NULL) and json_body as an
 * application/json body (when not NULL). 30 s timeout. r must be zeroed
 * before its first use; what a previous call left in it is freed. Returns 0
 * when a response arrived, -1 otherwise. Thread-safe; does not assert.
 */
int eu_it_http(struct eu_it_resp *r, const char *method, int port, const char *host_header,
               const char *path, const char *bearer, const char *json_body);

/*
 * eu_it_http() on s's public listener with the path made from fmt and its
 * arguments (at most 1023 bytes); asserts that a response arrived.
 */
void eu_it_callf(struct eu_it_server *s, struct eu_it_resp *r, const char *host, const char *method,
                 const char *bearer, const char *json_body, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Value of the last header called name (case-insensitive) or NULL. Owned by r. */
const char *eu_it_resp_header(const struct eu_it_resp *r, const char *name);

/* Frees r's contents and zeroes it. */
void eu_it_resp_free(struct eu_it_resp *r);

/* Admin listener with the admin token; asserts that a response arrived. */
void eu_it_admin(struct eu_it_server *s, const char *method, const char *path,
                 const char *json_body, struct eu_it_resp *r);

/* Public listener with Host: host, no token, no body; asserts a response arrived. */
void eu_it_public(struct eu_it_server *s, const char *method, const char *host, const char *path,
                  struct eu_it_resp *r);

/* String member key of r->json, or NULL when the body is not an object with it. */
const char *eu_it_json_str(const struct eu_it_resp *r, const char *key);

/*
 * POST /admin/v1/tenants {"domain","title"}; asserts 201 and returns the
 * tenant JSON (caller json_decref()s it).
 */
json_t *eu_it_tenant_create(struct eu_it_server *s, const char *domain, const char *title);

/* PATCH /admin/v1/tenants/DOMAIN with json_body; asserts 200. */
void eu_it_tenant_patch(struct eu_it_server *s, const char *domain, const char *json_body);

/* Id of tenant DOMAIN (its tenant_id in the placement's tables) as the
 * admin API reports it; caller frees. */
char *eu_it_tenant_id(struct eu_it_server *s, const char *domain);

/* Database name of tenant DOMAIN's placement as the admin API reports it
 * (shared with the other tenants of a pooled placement); caller frees. */
char *eu_it_tenant_database(struct eu_it_server *s, const char *domain);

/*
 * POST /admin/v1/tenants/DOMAIN/accounts with username, username@DOMAIN and
 * EU_IT_PASSWORD, role "user"; asserts 201. For a user a test only needs,
 * eu_it_account_seed() is much cheaper.
 */
void eu_it_account_create(struct eu_it_server *s, const char *domain, const char *username);

/*
 * Finds the sample "name value" (name may include a {label="..."} part) in
 * Prometheus text and stores its value. Returns false when absent.
 */
bool eu_it_metric_value(const char *text, const char *name, double *out);

/* The value of sample name in the server's /metrics (asserts it is there). */
double eu_it_metric(struct eu_it_server *s, const char *name);

/* "Threads:" from /proc/PID/status, or -1. */
long eu_it_proc_threads(pid_t pid);

/* Milliseconds on a monotonic clock. */
long long eu_it_now_ms(void);

/* Sleeps ms milliseconds. */
void eu_it_sleep_ms(long ms);

/*
 * Follows a dot-separated path of object keys and array indexes, e.g.
 * "stats.user_count" or "links.0.href". Returns a borrowed reference or NULL.
 */
json_t *eu_it_jpath(json_t *root, const char *path);

/* Asserts the status, showing the body when it differs. */
#define EU_IT_EXPECT_STATUS(r, want)                                                               \
    ck_assert_msg((r)->status == (want), "expected status %ld, got %ld; body: %.800s",             \
                  (long)(want), (r)->status, (r)->body ? (r)->body : "(none)")

/* Asserts the status and a Mastodon error body {"error": "<string>"}. */
#define EU_IT_EXPECT_ERROR(r, want)                                                                \
    do {                                                                                           \
        EU_IT_EXPECT_STATUS(r, want);                                                              \
        ck_assert_msg(eu_it_json_str((r), "error") != NULL,                                        \
                      "status %ld without a JSON \"error\" string: %.800s", (r)->status,           \
                      (r)->body);                                                                  \
    } while (0)

/* Asserts that the string at jpath in r's JSON equals want. */
#define EU_IT_EXPECT_JSTR(r, path, want)                                                           \
    do {                                                                                           \
        json_t *v_ = eu_it_jpath((r)->json, (path));                                               \
        ck_assert_msg(json_is_string(v_), "%s is not a string in %.800s", (path), (r)->body);      \
        ck_assert_str_eq(json_string_value(v_), (want));                                           \
    } while (0)

/* Asserts that the integer at jpath in r's JSON equals want. */
#define EU_IT_EXPECT_JINT(r, path, want)                                                           \
    do {                                                                                           \
        json_t *v_ = eu_it_jpath((r)->json, (path));                                               \
        ck_assert_msg(json_is_integer(v_), "%s is not an integer in %.800s", (path), (r)->body);   \
        ck_assert_int_eq(json_integer_value(v_), (want));                                          \
    } while (0)

/*
 * Runs in the Check runner after each TCase (an unchecked fixture): restarts
 * services a dead test process had stopped, prints and removes the temp dirs
 * and drops the databases that dead test processes left behind. A failed
 * assertion ends the forked test with _exit(), skipping its own cleanup.
 */
void eu_it_after_test(void);

/*
 * Adds a TCase named after the test, holding only that test, with a timeout
 * and eu_it_after_test() as its teardown.
 */
#define EU_IT_ADD_TCASE(suite, test, seconds)                                                      \
    do {                                                                                           \
        TCase *tc_ = tcase_create(#test);                                                          \
        tcase_set_timeout(tc_, (seconds));                                                         \
        tcase_add_unchecked_fixture(tc_, NULL, eu_it_after_test);                                  \
        tcase_add_test(tc_, test);                                                                 \
        suite_add_tcase((suite), tc_);                                                             \
    } while (0)

/*
 * Runs the suite in fork mode (a crash fails one test) and frees it.
 * Returns the process exit code: 0 when every test passed, 1 otherwise.
 */
int eu_it_run_suite(Suite *suite);

/* ------------------------------------------------------------ PostgreSQL */

/* EUNHA_TEST_PG_URL with the database part replaced by dbname; caller frees. */
char *eu_it_pg_url(const char *dbname);

/* Connects to dbname on EUNHA_TEST_PG_URL's server; asserts success. PQfinish() it. */
PGconn *eu_it_pg_connect(const char *dbname);

/* Same without asserting; NULL on failure (message to stderr). */
PGconn *eu_it_pg_try_connect(const char *dbname);

/*
 * Runs sql on conn and asserts it succeeded. Returns the first cell of the
 * first row as a new string (caller frees), or NULL when there is no row.
 */
char *eu_it_pg_query(PGconn *conn, const char *sql);

/* Connects to dbname, runs eu_it_pg_query(), disconnects. Caller frees. */
char *eu_it_pg_exec(const char *dbname, const char *sql);

/* Like eu_it_pg_exec() for a single integer result (asserts one row). */
long eu_it_pg_exec_long(const char *dbname, const char *sql);

/* Client backends connected to dbname (pg_stat_activity), this test's excluded. */
long eu_it_pg_count_backends(const char *dbname);

/* Backends connected to dbname that wait on a lock. */
long eu_it_pg_count_lock_waiters(const char *dbname);

/* Rows with tenant_id = id in every table of placement database db. */
long eu_it_tenant_rows(const char *db, const char *id);

/* Whether database name exists on the test server. */
bool eu_it_pg_db_exists(const char *name);

/* Quotes an identifier for SQL ("x" with doubled quotes); caller frees. */
char *eu_it_pg_ident(const char *name);

/* ----------------------------------------------------------- environment */

/*
 * Runs the shell command held in environment variable envvar (for example
 * EUNHA_TEST_PG_STOP) with /bin/sh -c and asserts it is set and exits 0. The
 * command runs in its own session, so a daemon it starts outlives the test
 * (Check kills the test's process group). After a "*_STOP" command, the
 * matching "*_START" (after "*_PAUSE", the "*_RESUME") runs after the test
 * unless the test ran it itself, so a failed test does not leave a service
 * down.
 */
void eu_it_sh(const char *envvar);

/* Same as eu_it_sh() but returns the exit status (-1 when unset) instead of asserting. */
int eu_it_try_sh(const char *envvar);

/* ------------------------------------------------- statuses: user tokens */

/*
 * Makes a bearer token for local user USERNAME of tenant DOMAIN by writing
 * an application and an access token (its SHA-256, as the server stores it)
 * straight into the tenant database, with the given space-separated scopes.
 * Asserts on failure. Returns the token; the caller frees it.
 */
char *eu_it_user_token(struct eu_it_server *s, const char *domain, const char *username,
                       const char *scopes);

/* eu_it_user_token() for tenant tid in placement database db, without
 * asking the admin API where they are. Caller frees. */
char *eu_it_token_in(const char *db, const char *tid, const char *username, const char *scopes);

/*
 * A confirmed local account USERNAME (e-mail username@DOMAIN, password
 * EU_IT_PASSWORD, role "user") written straight into the tenant database,
 * as the admin API would write it but with a fixed key pair and a
 * pre-computed password hash: hashing and key generation on the server are
 * what make eu_it_account_create() slow. Returns the account id; the caller
 * frees. The _in form takes the placement database and tenant id.
 */
char *eu_it_account_seed(struct eu_it_server *s, const char *domain, const char *username);
char *eu_it_account_seed_in(const char *db, const char *tid, const char *domain,
                            const char *username);

/* An OAuth application registered through the API. */
struct eu_it_app {
    char id[64], secret[128];
};

/* POST /api/v1/apps on host with json_body (client_name, redirect_uris,
 * scopes); asserts 200 and returns its client id and secret. */
struct eu_it_app eu_it_app_create(struct eu_it_server *s, const char *host, const char *json_body);

/* A token of a new app on host with no account (client_credentials) and
 * scope (e.g. "write:accounts" to sign people up); the caller frees it. */
char *eu_it_app_token(struct eu_it_server *s, const char *host, const char *scope);

/* The tenant account id of local user USERNAME, as a string the caller frees. */
char *eu_it_account_id(struct eu_it_server *s, const char *domain, const char *username);

/* A new local user USERNAME on DOMAIN (eu_it_account_seed()) and a token
 * with scopes (eu_it_user_token()), which is returned; with account_id, its
 * account id (eu_it_account_id()) too. The caller frees both. */
char *eu_it_user_new(struct eu_it_server *s, const char *domain, const char *username,
                     const char *scopes, char **account_id);

/* ------------------------------------------------ oauth: raw requests */

/*
 * Like eu_it_http() but with any request headers (NULL-terminated list of
 * "Name: value" lines, e.g. "Cookie: a=b" or "Content-Type:
 * application/x-www-form-urlencoded"; may be NULL) and a raw body (NULL for
 * none). Sends no Accept or Authorization header of its own. Redirects are
 * not followed. Returns 0 when a response arrived, -1 otherwise; does not
 * assert.
 */
int eu_it_http_raw(struct eu_it_resp *r, const char *method, int port, const char *host_header,
                   const char *path, const char *const *headers, const char *body);

/* Percent-encodes s for a form or query value; caller frees. */
char *eu_it_urlencode(const char *s);

/* ------------------------------------ federation and media: shared helpers */

/* A condition on a response, for eu_it_wait_get(). */
typedef bool (*eu_it_pred_fn)(const struct eu_it_resp *r, const void *arg);

/*
 * GETs the path made from fmt (on s's public listener, Host host, bearer
 * tok) until pred holds or ms milliseconds pass: what another server or a
 * job does is awaited, never slept for. Asserts it came, naming what and
 * showing the last answer; r holds that answer.
 */
void eu_it_wait_get(struct eu_it_server *s, struct eu_it_resp *r, const char *host, const char *tok,
                    long ms, eu_it_pred_fn pred, const void *arg, const char *what, const char *fmt,
                    ...) __attribute__((format(printf, 9, 10)));

/* The element of array arr whose string at jpath path equals want, or NULL
 * (borrowed). */
json_t *eu_it_find(json_t *arr, const char *path, const char *want);

/* An eu_it_pred_fn: a 200 array with an element whose account.acct (a
 * status, a notification) or acct (an account) is arg. */
bool eu_it_has_acct(const struct eu_it_resp *r, const void *arg);

/* eu_it_pg_exec() of the statement made from fmt (at most 4095 bytes). */
char *eu_it_pg_execf(const char *dbname, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* eu_it_pg_exec_long() of the statement made from fmt (at most 4095 bytes). */
long eu_it_pg_execf_long(const char *dbname, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Inserts into placement database db a remote account of tenant tid as the
 * inbox would have resolved it: actor uri SCHEME://HOST/users/NAME (username
 * NAME, domain HOST), its inbox uri/inbox, followers and featured
 * collections beside it, a placeholder public key and, when shared, the
 * shared inbox SCHEME://HOST/inbox. Returns its id; the caller frees.
 */
char *eu_it_remote_account(const char *db, const char *tid, const char *uri, bool shared);

/* A width x height RGBA PNG with a pixel pattern and half-transparent
 * alpha, made with libpng; *len its size. The caller frees. */
unsigned char *eu_it_make_png(int width, int height, size_t *len);

#endif /* EUNHA_TESTS_INTEGRATION_HARNESS_H */
