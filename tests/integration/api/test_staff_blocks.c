/*
 * What a tenant's staff block (issue 28), through Mastodon's admin API:
 * domain blocks (shared with the operator's API) taking effect on the
 * domain's known accounts and on a signed delivery from it; domain allows
 * and limited-federation mode; e-mail domain, canonical e-mail and IP
 * blocks refusing sign-ups (an IP block also sign-ins, or sending sign-ups
 * to approval). Each endpoint: its entity, its audit row, Link paging, bad
 * input, a role without the permission and a token without the scope; and
 * a decoy tenant in the same placement that sees none of it.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "eunha/httpsig.h"

#define TIMEOUT 240
#define HOST "blocks.example"
#define DECOY "decoy.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

/* olga the owner; mick a role with manage_reports only; flo a role with
 * manage_federation only; ursula a user whose token asked for the admin
 * scopes; adam an admin whose token did not; dora owns the decoy. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"mick", NULL, NULL, ADMIN_SCOPES},
              {"flo", NULL, NULL, ADMIN_SCOPES},
              {"ursula", NULL, NULL, ADMIN_SCOPES},
              {"adam", NULL, NULL, "read write follow"},
              {"dora", DECOY, NULL, ADMIN_SCOPES}},
};

/* A request on host as the world's user who (NULL: nobody). */
#define call_on(w, r, host, method, who, json, ...)                                                \
    eu_it_callf((w)->s, r, host, method, eu_it_tok(w, who), json, __VA_ARGS__)

#define call(w, r, method, who, json, ...) call_on(w, r, HOST, method, who, json, __VA_ARGS__)

static void
start(struct world *w)
{
    eu_it_world_start(w, &world);
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(w, "olga"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", DECOY,
             eu_it_id(w, "dora"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    /* manage_reports (16) and manage_federation (32) alone. */
    free(eu_it_world_sql(w,
                         "INSERT INTO user_roles (tenant_id, id, name, position, permissions,"
                         " highlighted) VALUES (%s, 77, 'Reports', 5, 16, false),"
                         " (%s, 78, 'Federation', 6, 32, false)",
                         w->tid, w->tid));
    free(eu_it_world_sql(w,
                         "UPDATE users SET role_id = 77 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mick")));
    free(eu_it_world_sql(w,
                         "UPDATE users SET role_id = 78 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "flo")));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 2 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "adam")));
}

static long
audit_rows(struct world *w, const char *action, const char *type, const char *target)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM admin_action_logs WHERE tenant_id = %s"
                                " AND action = '%s' AND target_type = '%s' AND target_id = %s",
                                w->tid, action, type, target);
}

/* The refusals every staff route shares: a role without the permission
 * (mick), a user (ursula), each 403; an admin's token without the admin
 * scopes (adam) 403 too, from the scope check. */
static void
expect_refusals(struct world *w, const char *method, const char *json, const char *path,
                bool flo_may)
{
    struct eu_it_resp r = {0};
    const char *who[] = {"mick", "ursula", "adam", flo_may ? NULL : "flo"};
    for (size_t i = 0; i < sizeof(who) / sizeof(who[0]); i++) {
        if (!who[i])
            continue;
        call(w, &r, method, who[i], json, "%s", path);
        ck_assert_msg(r.status == 403, "%s %s by %s: %ld %s", method, path, who[i], r.status,
                      r.body);
    }
    call(w, &r, method, NULL, json, "%s", path);
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_resp_free(&r);
}

/* The id of a fresh row in the last answer (caller frees). */
static char *
id_of(const struct eu_it_resp *r)
{
    const char *id = eu_it_json_str(r, "id");
    ck_assert_msg(id && *id, "no id in %.500s", r->body);
    return strdup(id);
}

/* A delivery to HOST's (or host's) shared inbox signed with a key of
 * key_host: the domain check comes before any key is fetched. */
static long
signed_delivery(struct world *w, const char *host, const char *key_host)
{
    char *pem = eu_it_world_sql(w,
                                "SELECT private_key FROM accounts WHERE tenant_id = %s"
                                " AND id = %s",
                                w->tid, eu_it_id(w, "olga"));
    char url[256], key_id[320], actor[256], body[1024];
    snprintf(url, sizeof(url), "http://%s/inbox", host);
    snprintf(actor, sizeof(actor), "http://%s/users/x", key_host);
    snprintf(key_id, sizeof(key_id), "%s#main-key", actor);
    snprintf(body, sizeof(body),
             "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"%s/likes/1\","
             "\"type\":\"Like\",\"actor\":\"%s\",\"object\":\"http://%s/users/olga\"}",
             actor, actor, host);
    struct eu_httpsig_sign_args a = {.method = "POST",
                                     .url = url,
                                     .body = body,
                                     .body_len = strlen(body),
                                     .key_id = key_id,
                                     .key_pem = pem,
                                     .now = time(NULL)};
    struct eu_httpsig_signed sg = {0};
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &sg), 0);
    char *lines[EU_HTTPSIG_SIGNED_MAX + 1];
    const char *headers[EU_HTTPSIG_SIGNED_MAX + 2];
    int n = 0;
    for (int i = 0; i < sg.n; i++) {
        if (strcasecmp(sg.headers[i].name, "Host") == 0)
            continue;
        ck_assert_int_ge(asprintf(&lines[n], "%s: %s", sg.headers[i].name, sg.headers[i].value), 0);
        headers[n] = lines[n];
        n++;
    }
    headers[n] = "Content-Type: application/activity+json";
    headers[n + 1] = NULL;
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w->s->public_port, host, "/inbox", headers, body),
                     0);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    eu_httpsig_signed_release(&sg);
    free(pem);
    long status = r.status;
    eu_it_resp_free(&r);
    return status;
}

START_TEST(test_domain_blocks)
{
    struct world w;
    struct eu_it_resp r = {0};
    start(&w);
    char *evil = eu_it_remote_account(w.db, w.tid, "http://evil.example/users/e", true);
    char *sub = eu_it_remote_account(w.db, w.tid, "http://sub.evil.example/users/s", true);

    /* Before: a delivery signed by evil.example is not refused for its
     * domain (it fails later, on its key). */
    ck_assert_int_ne(signed_delivery(&w, HOST, "evil.example"), 403);

    /* Refusals, bad input. */
    expect_refusals(&w, "GET", NULL, "/api/v1/admin/domain_blocks", true);
    expect_refusals(&w, "POST", "{\"domain\":\"x.example\"}", "/api/v1/admin/domain_blocks", true);
    call(&w, &r, "POST", "olga", "{\"domain\":\"x.example\",\"severity\":\"ban\"}",
         "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{\"domain\":\"not valid\"}", "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{\"domain\":\"x.example\",\"reject_media\":\"maybe\"}",
         "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(eu_it_world_sql_long(&w, "SELECT count(*) FROM domain_blocks"), 0);

    /* flo (manage_federation only) suspends evil.example. */
    call(&w, &r, "POST", "flo",
         "{\"domain\":\"Evil.Example\",\"severity\":\"suspend\",\"private_comment\":\"spam\","
         "\"public_comment\":\"Spam source\"}",
         "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "domain", "evil.example");
    EU_IT_EXPECT_JSTR(&r, "severity", "suspend");
    EU_IT_EXPECT_JSTR(&r, "private_comment", "spam");
    EU_IT_EXPECT_JSTR(&r, "public_comment", "Spam source");
    ck_assert(json_is_false(json_object_get(r.json, "reject_media")));
    ck_assert(json_is_false(json_object_get(r.json, "obfuscate")));
    ck_assert_int_eq(strlen(eu_it_json_str(&r, "digest")), 64);
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "created_at"));
    char *block = id_of(&r);
    ck_assert_int_eq(audit_rows(&w, "create", "DomainBlock", block), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                          " AND id IN (%s, %s) AND suspended_at IS NOT NULL",
                                          w.tid, evil, sub),
                     2);
    /* Takes effect on a delivery from there, on HOST only. */
    ck_assert_int_eq(signed_delivery(&w, HOST, "evil.example"), 403);
    ck_assert_int_eq(signed_delivery(&w, HOST, "sub.evil.example"), 403);
    ck_assert_int_ne(signed_delivery(&w, DECOY, "evil.example"), 403);

    /* The same domain again, or a subdomain not stricter: 422 naming it. */
    call(&w, &r, "POST", "olga", "{\"domain\":\"evil.example\"}", "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "existing_domain_block.id", block);
    EU_IT_EXPECT_JSTR(&r, "error", "You have already imposed stricter limits on evil.example.");
    call(&w, &r, "POST", "olga", "{\"domain\":\"sub.evil.example\",\"severity\":\"silence\"}",
         "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "existing_domain_block.domain", "evil.example");

    /* A second block, then the list: newest first, paged with Link. */
    call(&w, &r, "POST", "olga", "{\"domain\":\"noisy.example\",\"reject_reports\":true}",
         "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "severity", "silence");
    char *noisy = id_of(&r);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/domain_blocks?limit=1");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", noisy);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_msg(link && strstr(link, "max_id=") && strstr(link, "rel=\"next\""), "Link: %s",
                  link ? link : "(none)");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/domain_blocks?max_id=%s", noisy);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", block);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "domain", "evil.example");

    /* PUT: suspend becomes silence; the marks follow. */
    call(&w, &r, "PUT", "olga", "{\"severity\":\"bad\"}", "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "PUT", "olga", "{\"severity\":\"silence\",\"public_comment\":\"\"}",
         "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "severity", "silence");
    EU_IT_EXPECT_JSTR(&r, "private_comment", "spam");
    ck_assert(json_is_null(json_object_get(r.json, "public_comment")));
    ck_assert_int_eq(audit_rows(&w, "update", "DomainBlock", block), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                          " AND id IN (%s, %s) AND suspended_at IS NULL"
                                          " AND silenced_at IS NOT NULL",
                                          w.tid, evil, sub),
                     2);
    ck_assert_int_ne(signed_delivery(&w, HOST, "evil.example"), 403);

    /* The decoy's staff see none of it, and cannot reach it. */
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, DECOY, "DELETE", "dora", NULL, "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, DECOY, "GET", "olga", NULL, "/api/v1/admin/domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 401);

    /* The operator sees the staff's block, and edits it the same way. */
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/domain_blocks/%s", HOST, block);
    eu_it_admin(w.s, "PUT", path, "{\"reject_media\":true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "reject_media")));
    EU_IT_EXPECT_JSTR(&r, "severity", "silence");

    /* DELETE: {}, the marks go, the audit row stays. */
    expect_refusals(&w, "DELETE", NULL, "/api/v1/admin/domain_blocks/1", true);
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/domain_blocks/%s", block);
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(audit_rows(&w, "destroy", "DomainBlock", block), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM accounts WHERE tenant_id = %s"
                                          " AND id IN (%s, %s) AND suspended_at IS NULL"
                                          " AND silenced_at IS NULL",
                                          w.tid, evil, sub),
                     2);

    eu_it_resp_free(&r);
    free(block);
    free(noisy);
    free(evil);
    free(sub);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_domain_allows)
{
    struct world w;
    struct eu_it_resp r = {0};
    start(&w);

    expect_refusals(&w, "GET", NULL, "/api/v1/admin/domain_allows", true);
    expect_refusals(&w, "POST", "{\"domain\":\"x.example\"}", "/api/v1/admin/domain_allows", true);
    call(&w, &r, "POST", "olga", "{\"domain\":\"no way\"}", "/api/v1/admin/domain_allows");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{}", "/api/v1/admin/domain_allows");
    EU_IT_EXPECT_ERROR(&r, 422);

    call(&w, &r, "POST", "flo", "{\"domain\":\"friend.example\"}", "/api/v1/admin/domain_allows");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "domain", "friend.example");
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "created_at"));
    char *allow = id_of(&r);
    ck_assert_int_eq(audit_rows(&w, "create", "DomainAllow", allow), 1);
    /* Again: the same allow, as Mastodon answers, and no second row. */
    call(&w, &r, "POST", "olga", "{\"domain\":\"friend.example\"}", "/api/v1/admin/domain_allows");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", allow);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/domain_allows");
    ck_assert_int_eq(json_array_size(r.json), 1);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/domain_allows/%s", allow);
    EU_IT_EXPECT_JSTR(&r, "domain", "friend.example");

    /* Limited-federation mode: only allowed domains (and their
     * subdomains) get past the domain check. */
    ck_assert_int_ne(signed_delivery(&w, HOST, "stranger.example"), 403);
    eu_it_admin(w.s, "PATCH", "/admin/v1/tenants/" HOST "/instance",
                "{\"limited_federation_mode\":true}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(signed_delivery(&w, HOST, "stranger.example"), 403);
    ck_assert_int_ne(signed_delivery(&w, HOST, "friend.example"), 403);
    ck_assert_int_ne(signed_delivery(&w, HOST, "a.friend.example"), 403);
    ck_assert_int_ne(signed_delivery(&w, DECOY, "stranger.example"), 403);

    /* The decoy sees none of it. */
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/domain_allows");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "DELETE", "dora", NULL, "/api/v1/admin/domain_allows/%s", allow);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* DELETE answers the allow; friend.example is refused from then on. */
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/domain_allows/%s", allow);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "domain", "friend.example");
    ck_assert_int_eq(audit_rows(&w, "destroy", "DomainAllow", allow), 1);
    ck_assert_int_eq(signed_delivery(&w, HOST, "friend.example"), 403);

    eu_it_resp_free(&r);
    free(allow);
    eu_it_world_stop(&w);
}
END_TEST

static void
signup(struct world *w, const char *host, const char *tok, const char *user, const char *email,
       struct eu_it_resp *r)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"username\":\"%s\",\"email\":\"%s\",\"password\":\"hunter2hunter2\","
             "\"agreement\":true,\"locale\":\"en\"}",
             user, email);
    eu_it_http(r, "POST", w->s->public_port, host, "/api/v1/accounts", tok, body);
}

static void
expect_email_error(const struct eu_it_resp *r, const char *code)
{
    EU_IT_EXPECT_ERROR(r, 422);
    EU_IT_EXPECT_JSTR(r, "details.email.0.error", code);
    ck_assert_msg(strncmp(eu_it_json_str(r, "error"), "Validation failed: Email ", 25) == 0,
                  "error: %s", r->body);
}

START_TEST(test_email_blocks)
{
    struct world w;
    struct eu_it_resp r = {0};
    start(&w);
    char *tok = eu_it_app_token(w.s, HOST, "write:accounts");
    char *dtok = eu_it_app_token(w.s, DECOY, "write:accounts");

    /* E-mail domain blocks: flo (federation only) may not. */
    expect_refusals(&w, "GET", NULL, "/api/v1/admin/email_domain_blocks", false);
    expect_refusals(&w, "POST", "{\"domain\":\"spam.example\"}",
                    "/api/v1/admin/email_domain_blocks", false);
    call(&w, &r, "POST", "olga", "{\"domain\":\"not a domain\"}",
         "/api/v1/admin/email_domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{\"domain\":\"Spam.Example\"}",
         "/api/v1/admin/email_domain_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "domain", "spam.example");
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "history")), 7);
    EU_IT_EXPECT_JSTR(&r, "history.0.uses", "0");
    char *edb = id_of(&r);
    ck_assert_int_eq(audit_rows(&w, "create", "EmailDomainBlock", edb), 1);
    call(&w, &r, "POST", "olga", "{\"domain\":\"spam.example\"}",
         "/api/v1/admin/email_domain_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/email_domain_blocks/%s", edb);
    EU_IT_EXPECT_JSTR(&r, "domain", "spam.example");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/email_domain_blocks");
    ck_assert_int_eq(json_array_size(r.json), 1);

    /* A sign-up at that domain or below is refused, elsewhere not; the
     * decoy's sign-ups at that domain still work. */
    signup(&w, HOST, tok, "sam", "sam@spam.example", &r);
    expect_email_error(&r, "ERR_BLOCKED");
    EU_IT_EXPECT_JSTR(&r, "details.email.0.description", "uses a disallowed e-mail provider");
    signup(&w, HOST, tok, "sam", "sam@mx.SPAM.example", &r);
    expect_email_error(&r, "ERR_BLOCKED");
    signup(&w, DECOY, dtok, "sam", "sam@spam.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM users WHERE tenant_id = %s"
                                          " AND email LIKE '%%spam.example'",
                                          w.tid),
                     0);

    /* Canonical e-mail blocks: by address (its canonical form) or hash. */
    expect_refusals(&w, "GET", NULL, "/api/v1/admin/canonical_email_blocks", false);
    expect_refusals(&w, "POST", "{\"email\":\"a@b.example\"}",
                    "/api/v1/admin/canonical_email_blocks", false);
    call(&w, &r, "POST", "olga", "{\"canonical_email_hash\":\"xyz\"}",
         "/api/v1/admin/canonical_email_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{}", "/api/v1/admin/canonical_email_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{\"email\":\"Bad.Guy+x@Mail.example\"}",
         "/api/v1/admin/canonical_email_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *want = eu_it_world_sql(&w, "SELECT encode(sha256('badguy@mail.example'), 'hex')");
    EU_IT_EXPECT_JSTR(&r, "canonical_email_hash", want);
    char *ceb = id_of(&r);
    ck_assert_int_eq(audit_rows(&w, "create", "CanonicalEmailBlock", ceb), 1);
    call(&w, &r, "POST", "olga", "{\"email\":\"badguy@mail.example\"}",
         "/api/v1/admin/canonical_email_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    char body[256];
    snprintf(body, sizeof(body), "{\"canonical_email_hash\":\"%064d\"}", 7);
    call(&w, &r, "POST", "olga", body, "/api/v1/admin/canonical_email_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *ceb2 = id_of(&r);
    call(&w, &r, "POST", "olga", "{\"email\":\"b.a.d.g.u.y+new@mail.example\"}",
         "/api/v1/admin/canonical_email_blocks/test");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", ceb);
    call(&w, &r, "POST", "olga", "{\"email\":\"good@mail.example\"}",
         "/api/v1/admin/canonical_email_blocks/test");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/canonical_email_blocks?limit=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", ceb2);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/canonical_email_blocks/%s", ceb);
    EU_IT_EXPECT_JSTR(&r, "canonical_email_hash", want);
    /* It reads as taken, as Mastodon answers; the decoy takes it. */
    signup(&w, HOST, tok, "badguy", "bad.guy+again@mail.example", &r);
    expect_email_error(&r, "ERR_TAKEN");
    signup(&w, DECOY, dtok, "badguy", "bad.guy+again@mail.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/canonical_email_blocks");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/email_domain_blocks/%s", edb);
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, DECOY, "DELETE", "dora", NULL, "/api/v1/admin/canonical_email_blocks/%s", ceb);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Lifting both lets the sign-ups through. */
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/email_domain_blocks/%s", edb);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);
    ck_assert_int_eq(audit_rows(&w, "destroy", "EmailDomainBlock", edb), 1);
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/canonical_email_blocks/%s", ceb);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(audit_rows(&w, "destroy", "CanonicalEmailBlock", ceb), 1);
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/canonical_email_blocks/%s", ceb);
    EU_IT_EXPECT_ERROR(&r, 404);
    signup(&w, HOST, tok, "sam", "sam@spam.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    signup(&w, HOST, tok, "badguy", "bad.guy+again@mail.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_resp_free(&r);
    free(want);
    free(ceb);
    free(ceb2);
    free(edb);
    free(tok);
    free(dtok);
    eu_it_world_stop(&w);
}
END_TEST

/* Signs user in with the password grant of a fresh app on HOST; returns
 * the status. */
static long
sign_in(struct world *w, const char *user)
{
    struct eu_it_app app = eu_it_app_create(
        w->s, HOST, "{\"client_name\":\"In\",\"redirect_uris\":\"app://cb\",\"scopes\":\"read\"}");
    static const char *const form[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    char *pw = eu_it_urlencode(EU_IT_PASSWORD);
    char body[512];
    snprintf(body, sizeof(body),
             "grant_type=password&client_id=%s&client_secret=%s&username=%s&password=%s&scope=read",
             app.id, app.secret, user, pw);
    free(pw);
    struct eu_it_resp r = {0};
    eu_it_http_raw(&r, "POST", w->s->public_port, HOST, "/oauth/token", form, body);
    long status = r.status;
    eu_it_resp_free(&r);
    return status;
}

START_TEST(test_ip_blocks)
{
    struct world w;
    struct eu_it_resp r = {0};
    start(&w);
    char *tok = eu_it_app_token(w.s, HOST, "write:accounts");
    char *dtok = eu_it_app_token(w.s, DECOY, "write:accounts");

    expect_refusals(&w, "GET", NULL, "/api/v1/admin/ip_blocks", false);
    expect_refusals(&w, "POST", "{\"ip\":\"10.0.0.0/8\",\"severity\":\"no_access\"}",
                    "/api/v1/admin/ip_blocks", false);
    static const char *const bad[] = {
        "{\"ip\":\"10.0.0.300\",\"severity\":\"no_access\"}",
        "{\"ip\":\"10.0.0.0/33\",\"severity\":\"no_access\"}",
        "{\"ip\":\"10.0.0.0/8\",\"severity\":\"ban\"}",
        "{\"severity\":\"no_access\"}",
        "{\"ip\":\"10.0.0.0/8\",\"severity\":\"no_access\",\"expires_in\":-5}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        call(&w, &r, "POST", "olga", bad[i], "/api/v1/admin/ip_blocks");
        EU_IT_EXPECT_ERROR(&r, 422);
    }
    ck_assert_int_eq(eu_it_world_sql_long(&w, "SELECT count(*) FROM ip_blocks"), 0);

    /* The harness connects from 127.0.0.1: approval first. */
    call(&w, &r, "POST", "olga",
         "{\"ip\":\"127.0.0.5/8\",\"severity\":\"sign_up_requires_approval\","
         "\"comment\":\"loopback\",\"expires_in\":3600}",
         "/api/v1/admin/ip_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "ip", "127.0.0.0/8");
    EU_IT_EXPECT_JSTR(&r, "severity", "sign_up_requires_approval");
    EU_IT_EXPECT_JSTR(&r, "comment", "loopback");
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "expires_at"));
    ck_assert_ptr_nonnull(eu_it_json_str(&r, "created_at"));
    char *ipb = id_of(&r);
    ck_assert_int_eq(audit_rows(&w, "create", "IpBlock", ipb), 1);
    call(&w, &r, "POST", "olga", "{\"ip\":\"127.0.0.0/8\",\"severity\":\"no_access\"}",
         "/api/v1/admin/ip_blocks");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "POST", "olga", "{\"ip\":\"2001:db8::1\",\"severity\":\"sign_up_block\"}",
         "/api/v1/admin/ip_blocks");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "ip", "2001:db8::1/128");
    ck_assert(json_is_null(json_object_get(r.json, "expires_at")));
    char *ipb6 = id_of(&r);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/ip_blocks?limit=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", ipb6);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/ip_blocks/%s", ipb);
    EU_IT_EXPECT_JSTR(&r, "ip", "127.0.0.0/8");

    signup(&w, HOST, tok, "newbie", "newbie@mail.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM users WHERE tenant_id = %s"
                                          " AND email = 'newbie@mail.example' AND NOT approved",
                                          w.tid),
                     1);

    /* sign_up_block: refused (403, Mastodon's allowed_registration?). */
    call(&w, &r, "PUT", "olga", "{\"severity\":\"nope\"}", "/api/v1/admin/ip_blocks/%s", ipb);
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "PUT", "olga", "{\"severity\":\"sign_up_block\"}", "/api/v1/admin/ip_blocks/%s",
         ipb);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "severity", "sign_up_block");
    EU_IT_EXPECT_JSTR(&r, "comment", "loopback");
    ck_assert_int_eq(audit_rows(&w, "update", "IpBlock", ipb), 1);
    signup(&w, HOST, tok, "second", "second@mail.example", &r);
    EU_IT_EXPECT_ERROR(&r, 403);
    signup(&w, DECOY, dtok, "second", "second@mail.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(sign_in(&w, "olga"), 200);

    /* no_access: sign-ins refused too, on HOST only. */
    call(&w, &r, "PUT", "olga", "{\"severity\":\"no_access\"}", "/api/v1/admin/ip_blocks/%s", ipb);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(sign_in(&w, "olga"), 403);
    signup(&w, HOST, tok, "third", "third@mail.example", &r);
    EU_IT_EXPECT_ERROR(&r, 403);

    /* The decoy sees none of it. */
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/ip_blocks");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "PUT", "dora", "{\"severity\":\"sign_up_block\"}",
            "/api/v1/admin/ip_blocks/%s", ipb);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Expired, or lifted: no effect. */
    free(eu_it_world_sql(&w,
                         "UPDATE ip_blocks SET expires_at = now() - interval '1 minute'"
                         " WHERE tenant_id = %s AND id = %s",
                         w.tid, ipb));
    ck_assert_int_eq(sign_in(&w, "olga"), 200);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/ip_blocks");
    ck_assert_int_eq(json_array_size(r.json), 1);
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/ip_blocks/%s", ipb);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);
    ck_assert_int_eq(audit_rows(&w, "destroy", "IpBlock", ipb), 1);
    signup(&w, HOST, tok, "third", "third@mail.example", &r);
    EU_IT_EXPECT_STATUS(&r, 200);

    eu_it_resp_free(&r);
    free(ipb);
    free(ipb6);
    free(tok);
    free(dtok);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("staff_blocks");
    EU_IT_ADD_TCASE(s, test_domain_blocks, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_domain_allows, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_email_blocks, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_ip_blocks, TIMEOUT);
    return eu_it_run_suite(s);
}
