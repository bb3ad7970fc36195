/*
 * Account migration from the client API. Mastodon keeps it in its settings
 * pages, so this follows GoToSocial's documented routes, which clients
 * that offer migration call:
 *
 *   POST /api/v1/accounts/alias  also_known_as_uris[]: the account's
 *        alsoKnownAs, replaced whole (at most EU_MIGRATION_ALIASES_MAX;
 *        none clears it). Each must be an actor that resolves; it is kept
 *        as the id the actor gives itself. Answers the CredentialAccount
 *        and sends an Update of the actor to its followers.
 *   POST /api/v1/accounts/move  password, moved_to_uri: the password is
 *        checked (argon2id on the CPU pool), the target fetched afresh and
 *        required to name this account in its alsoKnownAs; then the account
 *        points at it (moved_to_account_id, Mastodon's `moved`), and its
 *        followers' inboxes get Move{actor, object: the account, target}
 *        and an Update of the actor, which now carries movedTo. As
 *        Mastodon's MoveWorker does, its followers on this tenant follow
 *        the target (a Follow goes to a remote one) and its places in
 *        their lists go to it, and accounts here blocking or muting it
 *        block (a Block goes to a remote target) or mute the target.
 *        Answers 202 as GoToSocial does. One move per
 *        EU_MIGRATION_COOLDOWN_S, as Mastodon's
 *        AccountMigration::COOLDOWN_PERIOD.
 *
 * Both only read and write the signed-in account's rows; resolving goes
 * through src/ap/resolve.c (signed fetches, never on the loop's time).
 */
#include "accounts_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

/* Longest alias or target URI taken: far past any real actor id, and the
 * bound on what a client can make us fetch. */
#define URI_MAX 2048

enum {
    MIGRATION_SET_ALIASES,
    MIGRATION_ME,
    MIGRATION_TARGET,
    MIGRATION_MOVE,
    MIGRATION_LOCAL_FOLLOWERS,
};

const struct eu_sql eu_migration_sql[] = {
    /* $2 the account, $3 its aliases as a JSON array of strings. */
    [MIGRATION_SET_ALIASES] = {"migration.set_aliases",
                               "UPDATE accounts SET also_known_as = ARRAY(SELECT"
                               " json_array_elements_text($3::json)), updated_at = now()"
                               " WHERE tenant_id = $1 AND id = $2::bigint AND domain IS NULL"},
    /* $2 the signed-in account: its password hash, username, and whether
     * it moved within the cooldown ($3 seconds). */
    [MIGRATION_ME] = {"migration.me",
                      "SELECT u.encrypted_password, a.username,"
                      " coalesce(a.moved_at > now() - make_interval(secs => $3::float8), false)"
                      " FROM accounts a JOIN users u ON u.tenant_id = $1 AND u.account_id = a.id"
                      " WHERE a.tenant_id = $1 AND a.id = $2::bigint AND a.domain IS NULL"},
    /* $2 the target's row, $3 the mover's actor URI: does it name the
     * mover, has it moved itself, is it suspended. */
    [MIGRATION_TARGET] = {"migration.target",
                          "SELECT $3 = ANY (also_known_as),"
                          " moved_to_account_id IS NOT NULL OR moved_to_uri IS NOT NULL,"
                          " suspended_at IS NOT NULL"
                          " FROM accounts WHERE tenant_id = $1 AND id = $2::bigint"},
    /* $2 the mover, $3 the target's row, $4 its URI, $5 the cooldown in
     * seconds, checked again here so two moves at once make one. */
    [MIGRATION_MOVE] = {"migration.move",
                        "UPDATE accounts SET moved_to_account_id = $3::bigint, moved_to_uri = $4,"
                        " moved_at = now(), updated_at = now()"
                        " WHERE tenant_id = $1 AND id = $2::bigint AND domain IS NULL"
                        " AND (moved_at IS NULL"
                        "  OR moved_at <= now() - make_interval(secs => $5::float8))"
                        " RETURNING id"},
    /*
     * What Mastodon's MoveWorker carries from the mover ($2) to the target
     * ($3; $4 BASE) on this tenant, in one statement, as ap_process.move
     * does for a Move received:
     *
     * - The mover's followers follow the target instead. A local target
     *   gets the follow itself (Mastodon rewrites the row); a remote one a
     *   request whose Follow id it keeps, for the Follow to be sent. Those
     *   who follow the target already, or block it or are blocked by it,
     *   keep their follow of the mover.
     * - The mover's places in the lists of those followers go to the
     *   target; those who follow both keep the mover and add the target,
     *   as Mastodon's rewrite_follows does.
     * - Accounts blocking the mover block the target (follows and requests
     *   between them end, and their places in each other's lists), and
     *   those muting it mute the target with the same hide_notifications,
     *   for good (Mastodon's MuteService gets no duration), unless they
     *   already do or follow it; nobody is notified.
     *
     * Returns (what, local account, Follow id): 'request' for a Follow to
     * send, 'block' for a Block a remote target must hear of, and
     * 'follow', 'mute' and 'list' for home feeds that changed.
     */
    [MIGRATION_LOCAL_FOLLOWERS] =
        {"migration.local_followers",
         "WITH tg AS (SELECT domain IS NULL AS local FROM accounts WHERE tenant_id = $1"
         "  AND id = $3::bigint),"
         " lf AS (DELETE FROM follows f USING accounts la WHERE f.tenant_id = $1"
         "  AND la.tenant_id = $1 AND la.id = f.account_id AND la.domain IS NULL"
         "  AND f.target_account_id = $2::bigint AND f.account_id <> $3::bigint"
         "  AND NOT EXISTS (SELECT 1 FROM follows x WHERE x.tenant_id = $1"
         "  AND x.account_id = f.account_id AND x.target_account_id = $3::bigint)"
         "  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1"
         "  AND ((b.account_id = f.account_id AND b.target_account_id IN ($2::bigint, $3::bigint))"
         "  OR (b.account_id = $3::bigint AND b.target_account_id = f.account_id)))"
         "  RETURNING f.account_id, la.username, f.show_reblogs, f.notify, f.languages),"
         " nf AS (INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs,"
         "  notify, languages) SELECT $1, account_id, $3::bigint, show_reblogs, notify,"
         "  languages FROM lf WHERE (SELECT local FROM tg) ON CONFLICT DO NOTHING"
         "  RETURNING account_id),"
         " nr AS (INSERT INTO follow_requests (tenant_id, id, account_id, target_account_id,"
         "  show_reblogs, notify, languages, uri) SELECT $1, n.nid, n.account_id, $3::bigint,"
         "  n.show_reblogs, n.notify, n.languages,"
         "  $4::text || '/users/' || n.username || '#follows/' || n.nid"
         "  FROM (SELECT lf.*, eunha_next_id() AS nid FROM lf) n"
         "  WHERE NOT (SELECT local FROM tg)"
         "  ON CONFLICT (tenant_id, account_id, target_account_id) DO NOTHING"
         "  RETURNING account_id, uri),"
         " li AS (INSERT INTO list_accounts (tenant_id, list_id, account_id)"
         "  SELECT $1, m.list_id, $3::bigint FROM list_accounts m JOIN lists l"
         "  ON l.tenant_id = $1 AND l.id = m.list_id WHERE m.tenant_id = $1"
         "  AND m.account_id = $2::bigint AND (l.account_id IN (SELECT account_id FROM lf)"
         "  OR EXISTS (SELECT 1 FROM follows x WHERE x.tenant_id = $1"
         "  AND x.account_id = l.account_id AND x.target_account_id = $3::bigint))"
         "  ON CONFLICT DO NOTHING RETURNING list_id),"
         " lo AS (DELETE FROM list_accounts m USING lists l WHERE m.tenant_id = $1"
         "  AND l.tenant_id = $1 AND l.id = m.list_id AND m.account_id = $2::bigint"
         "  AND l.account_id IN (SELECT account_id FROM lf))," EU_MOVE_CARRY_SQL
         " SELECT 'follow', account_id::text, NULL FROM nf"
         " UNION ALL SELECT 'request', account_id::text, uri FROM nr"
         " UNION ALL SELECT 'block', account_id::text, NULL FROM nb"
         " UNION ALL SELECT 'mute', account_id::text, NULL FROM nm"
         " UNION ALL SELECT 'list', l.account_id::text, NULL FROM li JOIN lists l"
         " ON l.tenant_id = $1 AND l.id = li.list_id"},
    {0},
};

/* One alias or move request in progress, on the request's arena; the
 * password is wiped once checked, or when the request goes (a failed
 * statement finishes it without calling back). */
struct migration {
    struct eu_req *req;
    /* alias */
    const char **asked; /* distinct URIs, in the order given */
    size_t nasked, next;
    json_t *resolved; /* the actor ids found, as stored */
    /* move */
    char *password;
    const char *stored_hash;
    int verify_rc;
    const char *me_uri, *target_uri, *target_id;
    /* The settings page's end (accounts_internal.h); NULL for the API. */
    eu_migration_done_cb done;
    void *done_arg;
};

/* Answers a refusal: the API's error, or the page's callback with the
 * same text. */
static void __attribute__((format(printf, 3, 4)))
fail(struct migration *m, int status, const char *fmt, ...)
{
    struct eu_error err;
    va_list ap;
    va_start(ap, fmt);
    char msg[sizeof(err.message)];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (m->done)
        m->done(m->req, status, eu_arena_strdup(m->req->arena, msg), m->done_arg);
    else
        eu_req_reply_error(m->req, status, "%s", msg);
}

static void
on_cleanup_json(void *arg)
{
    json_decref(arg);
}

static void
wipe_password(void *arg)
{
    struct migration *m = arg;
    if (m->password) {
        sodium_memzero(m->password, strlen(m->password));
        m->password = NULL;
    }
}

/* An http(s) URI we may fetch, as [federation] allow_http says. */
static bool
uri_is_fetchable(struct eu_req *req, const char *uri)
{
    if (!uri || strlen(uri) > URI_MAX || strpbrk(uri, " \t\r\n"))
        return false;
    if (strncmp(uri, "https://", 8) == 0)
        return uri[8] != '\0';
    return req->app->cfg->fed_allow_http && strncmp(uri, "http://", 7) == 0 && uri[7] != '\0';
}

/* Whether uri names an account of this tenant (BASE/users/...): those are
 * rows here, and a fetch of our own host is refused by design. */
static bool
uri_is_local(struct eu_req *req, const char *uri)
{
    const char *base = eu_req_base_url(req);
    size_t n = strlen(base);
    return strncasecmp(uri, base, n) == 0 && strncmp(uri + n, "/users/", 7) == 0;
}

/* ------------------------------------------------------------- aliases */

static void resolve_next_alias(struct migration *m);

static void
on_aliases_set(struct eu_req *req, PGresult *res, void *arg)
{
    (void)res;
    struct migration *m = arg;
    /* Peers read alsoKnownAs from the actor when a Move comes. */
    eu_ap_outbox_profile(req->app, req->tenant, req->auth.account_id);
    if (m->done)
        m->done(req, 200, NULL, m->done_arg);
    else
        eu_accounts_reply_credentials(req);
}

static void
on_alias_resolved(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct migration *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    const char *asked = m->asked[m->next - 1];
    if (!r) {
        fail(m, 422, "error dereferencing also_known_as_uri (%s) account: %s", asked,
             err ? err->message : "not found");
        return;
    }
    if (strcmp(r->account_id, eu_req_viewer(req)) != 0)
        json_array_append_new(m->resolved, json_string(r->uri));
    resolve_next_alias(m);
}

static void
resolve_next_alias(struct migration *m)
{
    struct eu_req *req = m->req;
    if (m->next < m->nasked) {
        eu_ap_resolve_actor(req->app, req->tenant, m->asked[m->next++], on_alias_resolved, m);
        return;
    }
    char *text = json_dumps(m->resolved, JSON_COMPACT);
    const char *p[] = {eu_req_viewer(req), eu_arena_strdup(req->arena, text)};
    free(text);
    eu_req_stmt(req, &eu_migration_sql[MIGRATION_SET_ALIASES], 2, p, on_aliases_set, m);
}

void
eu_migration_alias_run(struct eu_req *req, json_t *params, eu_migration_done_cb done, void *arg)
{
    struct migration *m = eu_arena_calloc(req->arena, sizeof(*m));
    m->req = req;
    m->done = done;
    m->done_arg = arg;
    json_t *uris = eu_param_array(params, "also_known_as_uris");
    if (!uris) {
        fail(m, 400, "param is missing or the value is empty: also_known_as_uris");
        return;
    }
    m->asked = eu_arena_calloc(req->arena, (EU_MIGRATION_ALIASES_MAX + 1) * sizeof(*m->asked));
    m->resolved = json_array();
    eu_arena_on_free(req->arena, on_cleanup_json, m->resolved);
    size_t i;
    json_t *v;
    json_array_foreach(uris, i, v)
    {
        const char *uri = json_string_value(v);
        if (uri && !*uri)
            continue; /* "also_known_as_uris[]=" from a form: the list emptied */
        if (!uri_is_fetchable(req, uri)) {
            fail(m, 400,
                 "invalid also_known_as_uri (%s) provided in account alias request:"
                 " it must be an %s URI",
                 uri ? uri : "not a string",
                 req->app->cfg->fed_allow_http ? "http or https" : "https");
            json_decref(uris);
            return;
        }
        bool seen = false;
        for (size_t k = 0; k < m->nasked && !seen; k++)
            seen = strcmp(m->asked[k], uri) == 0;
        if (seen)
            continue;
        if (m->nasked == EU_MIGRATION_ALIASES_MAX) {
            fail(m, 422, "too many also_known_as_uris: at most %d", EU_MIGRATION_ALIASES_MAX);
            json_decref(uris);
            return;
        }
        m->asked[m->nasked++] = eu_arena_strdup(req->arena, uri);
    }
    json_decref(uris);
    resolve_next_alias(m);
}

/* ---------------------------------------------------------------- move */

static void
reply_cooldown(struct migration *m)
{
    fail(m, 422, "this account moved less than 30 days ago: you are on cooldown");
}

static void
on_local_followers_moved(struct eu_req *req, PGresult *res, void *arg)
{
    struct migration *m = arg;
    bool blocks = false, remote = !uri_is_local(req, m->target_uri);
    for (int i = 0; i < PQntuples(res); i++) {
        const char *what = PQgetvalue(res, i, 0);
        int64_t who = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        eu_feed_home_invalidate(req->app, req->tenant, who);
        if (strcmp(what, "request") == 0) {
            eu_ap_outbox_account(req->app, req->tenant, who, m->target_id, EU_AP_FOLLOW,
                                 PQgetvalue(res, i, 2));
        } else if (strcmp(what, "block") == 0) {
            /* A remote target hears of it, as Mastodon's BlockService
             * sends it. */
            if (remote)
                eu_ap_outbox_account(req->app, req->tenant, who, m->target_id, EU_AP_BLOCK, NULL);
            blocks = true;
        }
    }
    /* A local target that followed a blocker follows it no more. */
    if (blocks && !remote)
        eu_feed_home_invalidate(req->app, req->tenant, strtoll(m->target_id, NULL, 10));
    int64_t me = req->auth.account_id;
    /* Its tokens are refused from now on, in every process. */
    eu_auth_cache_clear(req->app, req->tenant);
    /* The actor first, so a peer that refetches it on the Move already
     * sees movedTo; both are deliveries of their own and never fail this. */
    eu_ap_outbox_profile(req->app, req->tenant, me);
    eu_ap_outbox_move(req->app, req->tenant, me, m->target_uri);
    if (m->done)
        m->done(req, 202, NULL, m->done_arg);
    else
        eu_req_reply_json(req, 202, json_pack("{s:s}", "message", "accepted"));
}

static void
on_moved(struct eu_req *req, PGresult *res, void *arg)
{
    struct migration *m = arg;
    if (PQntuples(res) == 0) {
        reply_cooldown(m);
        return;
    }
    const char *p[] = {eu_req_viewer(req), m->target_id, eu_req_base_url(req)};
    eu_req_stmt(req, &eu_migration_sql[MIGRATION_LOCAL_FOLLOWERS], 3, p, on_local_followers_moved,
                m);
}

static void
on_target_row(struct eu_req *req, PGresult *res, void *arg)
{
    struct migration *m = arg;
    if (PQntuples(res) != 1) {
        fail(m, 422, "error dereferencing moved_to_uri account: not found");
        return;
    }
    if (PQgetvalue(res, 0, 2)[0] == 't') {
        fail(m, 422,
             "target account %s is suspended from this instance; you will not be"
             " able to Move to that account",
             m->target_uri);
        return;
    }
    if (PQgetvalue(res, 0, 0)[0] != 't') {
        fail(m, 422,
             "target account %s is not aliased to this account via alsoKnownAs; to"
             " Move to the target account from this one, you must log in to the"
             " target account and set alsoKnownAs to %s",
             m->target_uri, m->me_uri);
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] == 't') {
        fail(m, 422,
             "target account %s has already Moved somewhere else; you will not be"
             " able to Move to that account",
             m->target_uri);
        return;
    }
    const char *cooldown = eu_arena_sprintf(req->arena, "%d", EU_MIGRATION_COOLDOWN_S);
    const char *p[] = {eu_req_viewer(req), m->target_id, m->target_uri, cooldown};
    eu_req_stmt(req, &eu_migration_sql[MIGRATION_MOVE], 4, p, on_moved, m);
}

static void
on_target_resolved(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct migration *m = arg;
    struct eu_req *req = m->req;
    eu_req_enter(req);
    if (!r) {
        fail(m, 422, "error dereferencing moved_to_uri account: %s",
             err ? err->message : "not found");
        return;
    }
    if (strcmp(r->account_id, eu_req_viewer(req)) == 0) {
        fail(m, 422, "moved_to_uri cannot be this account");
        return;
    }
    m->target_id = eu_arena_strdup(req->arena, r->account_id);
    m->target_uri = eu_arena_strdup(req->arena, r->uri);
    const char *p[] = {m->target_id, m->me_uri};
    eu_req_stmt(req, &eu_migration_sql[MIGRATION_TARGET], 2, p, on_target_row, m);
}

static void
verify_work(void *arg)
{
    struct migration *m = arg;
    m->verify_rc = crypto_pwhash_str_verify(m->stored_hash, m->password, strlen(m->password));
}

static void
on_verified(void *arg)
{
    struct migration *m = arg;
    struct eu_req *req = m->req;
    wipe_password(m);
    eu_req_enter(req);
    if (m->verify_rc != 0) {
        fail(m, 400, "invalid password provided in account Move request");
        return;
    }
    /* Fetched afresh whatever the row's age: the alias is usually minutes
     * old. A local target is its row. */
    if (uri_is_local(req, m->target_uri))
        eu_ap_resolve_actor(req->app, req->tenant, m->target_uri, on_target_resolved, m);
    else
        eu_ap_resolve_actor_refresh(req->app, req->tenant, m->target_uri, on_target_resolved, m);
}

static void
on_me(struct eu_req *req, PGresult *res, void *arg)
{
    struct migration *m = arg;
    if (PQntuples(res) != 1) {
        fail(m, 404, "Record not found");
        return;
    }
    if (PQgetvalue(res, 0, 2)[0] == 't') {
        reply_cooldown(m);
        return;
    }
    m->me_uri =
        eu_arena_sprintf(req->arena, "%s/users/%s", eu_req_base_url(req), PQgetvalue(res, 0, 1));
    m->stored_hash = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    const struct eu_config *cfg = req->app->cfg;
    if (eu_cpupool_try_submit(req->app->cpu, req->tenant->id, &req->tenant->cpu_jobs,
                              cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max, verify_work,
                              on_verified, m) < 0) {
        eu_req_add_header(req, "Retry-After", "1");
        fail(m, 503, "Too many password checks are waiting; try again shortly");
    }
}

void
eu_migration_move_run(struct eu_req *req, json_t *params, eu_migration_done_cb done, void *arg)
{
    struct migration *m = eu_arena_calloc(req->arena, sizeof(*m));
    m->req = req;
    m->done = done;
    m->done_arg = arg;
    const char *target = eu_param_str(params, "moved_to_uri");
    const char *password = eu_param_str(params, "password");
    if (!target || !*target) {
        fail(m, 400, "no moved_to_uri provided in account Move request");
        return;
    }
    if (!uri_is_fetchable(req, target)) {
        fail(m, 400,
             "invalid moved_to_uri provided in account Move request: it must be"
             " an %s URI",
             req->app->cfg->fed_allow_http ? "http or https" : "https");
        return;
    }
    if (!password || !*password) {
        fail(m, 400, "no password provided in account Move request");
        return;
    }
    m->target_uri = eu_arena_strdup(req->arena, target);
    m->password = eu_arena_strdup(req->arena, password);
    eu_arena_on_free(req->arena, wipe_password, m);
    const char *cooldown = eu_arena_sprintf(req->arena, "%d", EU_MIGRATION_COOLDOWN_S);
    const char *p[] = {eu_req_viewer(req), cooldown};
    eu_req_stmt(req, &eu_migration_sql[MIGRATION_ME], 2, p, on_me, m);
}

void
eu_migration_alias(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params)
        eu_req_reply_eu_error(req, &err);
    else
        eu_migration_alias_run(req, params, NULL, NULL);
}

void
eu_migration_move(struct eu_req *req)
{
    struct eu_error err;
    json_t *params = eu_req_params(req, &err);
    if (!params)
        eu_req_reply_eu_error(req, &err);
    else
        eu_migration_move_run(req, params, NULL, NULL);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. These are
 * GoToSocial's routes: Mastodon has them as web pages. */
const struct eu_route eu_migration_routes[] = {
    {EU_HTTP_POST, "/api/v1/accounts/alias", eu_migration_alias, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_MOVED_OK | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/move", eu_migration_move, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_MOVED_OK | EU_ROUTE_API},
    {0},
};
