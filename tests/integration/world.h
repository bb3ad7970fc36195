/*
 * The integration tests' world: one running server with a tenant, usually a
 * decoy tenant in the same placement (whatever the test does must not reach
 * it), and named users with bearer tokens and account ids. Suites start one
 * per test case and read as behaviour ("alice posts, bob sees it") instead
 * of repeating how tenants and users are made.
 *
 * Users are seeded straight into the tenant's database (eu_it_account_seed:
 * a fixed RSA key pair and a pre-computed argon2id hash of the harness's
 * password), not made through the admin API, which hashes and makes a key
 * pair on the server: a few hundred milliseconds per user under load. A
 * suite that tests account creation itself calls eu_it_account_create().
 *
 * Like the harness, everything here asserts with Check and must run on the
 * test's main thread.
 */
#ifndef EUNHA_TESTS_INTEGRATION_WORLD_H
#define EUNHA_TESTS_INTEGRATION_WORLD_H

#include <stddef.h>

#include "harness.h"

#define EU_IT_WORLD_MAX_USERS 16
#define EU_IT_WORLD_MAX_TENANTS 4

/* One user of a world: name is how the test calls it (alice, dora, ...);
 * username its local username (name when NULL) on host (the world's host
 * when NULL); scopes its token's (the world's when NULL). A second entry
 * for the same account (say "alice_ro" with scopes "read") only adds a
 * token. */
struct eu_it_world_user_spec {
    const char *name;
    const char *host;
    const char *username;
    const char *scopes;
};

/*
 * What a world holds; zero-initialise and set what you need. host is
 * required. users ends with an entry whose name is NULL.
 */
struct eu_it_world_opts {
    const char *host;         /* the tenant under test */
    const char *decoy;        /* a second tenant in the same placement, or NULL */
    const char *tenants[3];   /* more tenants (federation between them), NULL-ended */
    const char *scopes;       /* the users' tokens; default "read write follow" */
    const char *extra_toml;   /* appended to the server's config */
    struct eu_it_opts server; /* further server options; extra_toml above wins */
    struct eu_it_world_user_spec users[EU_IT_WORLD_MAX_USERS];
};

struct eu_it_world_user {
    const char *name, *host, *username; /* borrowed from the options */
    char *tok;                          /* bearer token with the world's scopes */
    char *id;                           /* account id */
};

struct world {
    struct eu_it_server *s;
    const char *host, *decoy;
    char *db;        /* the placement database, shared by host and decoy */
    char *tid;       /* host's tenant id */
    char *decoy_tid; /* decoy's, or NULL */
    const char *tenant_hosts[EU_IT_WORLD_MAX_TENANTS];
    char *tenant_ids[EU_IT_WORLD_MAX_TENANTS];
    struct eu_it_world_user users[EU_IT_WORLD_MAX_USERS];
    size_t nusers;
};

/* Starts the server, makes the tenants and the users. o must outlive w. */
void eu_it_world_start(struct world *w, const struct eu_it_world_opts *o);

/* Stops the server (asserting a clean exit) and frees everything. */
void eu_it_world_stop(struct world *w);

/* Frees everything, killing the server if it still runs; no assertion (a
 * test that has stopped or crashed the server itself). */
void eu_it_world_free(struct world *w);

/* User name's token and account id (borrowed); assert the user exists.
 * eu_it_tok(w, NULL) is NULL: no token, for a call as nobody. */
const char *eu_it_tok(const struct world *w, const char *name);
const char *eu_it_id(const struct world *w, const char *name);

/* The tenant id of tenant host of the world (borrowed). */
const char *eu_it_world_tid(const struct world *w, const char *host);

/* Adds user name (username on host, NULL: the world's host) while the
 * world runs, seeded like the others, with a token of scopes (NULL: the
 * world's). Returns it (borrowed). */
const struct eu_it_world_user *eu_it_world_add_user(struct world *w, const char *name,
                                                    const char *host, const char *username,
                                                    const char *scopes);

/* Runs the statement made from fmt on the world's placement database;
 * returns its first cell (caller frees) or NULL. */
char *eu_it_world_sql(const struct world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Same for a single integer result. */
long eu_it_world_sql_long(const struct world *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* EUNHA_TESTS_INTEGRATION_WORLD_H */
