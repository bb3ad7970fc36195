/*
 * Discovery and actors through HTTP: WebFinger by acct (any case), actor
 * URI and profile URL, 404 for unknown users and for a decoy tenant's
 * users in the same database (asked either way round), 400 for a missing
 * or malformed resource; NodeInfo 2.1 beside 2.0; actor documents with
 * both ActivityPub Accept forms, HTML still for browsers, flagged for a
 * suspended account; the instance actor made once under concurrent first
 * requests and kept out of the user count and search.
 */
#include "world.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define HOST "ap.example"
#define DECOY "decoy.example"
#define AS_JSON "application/activity+json"
#define LD_JSON "application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\""

/* dave lives on the decoy tenant. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"alice"}, {"bob"}, {"dave", DECOY}},
};

static void
get(struct world *w, struct eu_it_resp *r, const char *host, const char *path, const char *accept)
{
    char line[160];
    snprintf(line, sizeof(line), "Accept: %s", accept);
    const char *h[] = {line, NULL};
    int rc = eu_it_http_raw(r, "GET", w->s->public_port, host, path, h, NULL);
    ck_assert_msg(rc == 0, "GET %s: %s", path, r->error);
}

static void
webfinger(struct world *w, struct eu_it_resp *r, const char *host, const char *resource)
{
    char path[512];
    if (resource) {
        char *enc = eu_it_urlencode(resource);
        snprintf(path, sizeof(path), "/.well-known/webfinger?resource=%s", enc);
        free(enc);
    } else {
        snprintf(path, sizeof(path), "/.well-known/webfinger");
    }
    get(w, r, host, path, "application/jrd+json");
}

/* The link of r's JRD with rel. */
static json_t *
jrd_link(const struct eu_it_resp *r, const char *rel)
{
    json_t *l;
    size_t i;
    json_array_foreach(json_object_get(r->json, "links"), i, l)
    {
        if (strcmp(json_string_value(json_object_get(l, "rel")), rel) == 0)
            return l;
    }
    return NULL;
}

START_TEST(test_webfinger)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    const char *found[] = {"acct:alice@ap.example",    "acct:ALICE@AP.example",
                           "alice@ap.example",         "http://ap.example/users/alice",
                           "http://ap.example/@Alice", NULL};
    for (int i = 0; found[i]; i++) {
        webfinger(&w, &r, HOST, found[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_ptr_nonnull(
            strstr(eu_it_resp_header(&r, "Content-Type"), "application/jrd+json"));
        EU_IT_EXPECT_JSTR(&r, "subject", "acct:alice@ap.example");
        EU_IT_EXPECT_JSTR(&r, "aliases.0", "http://ap.example/@alice");
        EU_IT_EXPECT_JSTR(&r, "aliases.1", "http://ap.example/users/alice");
        json_t *self = jrd_link(&r, "self");
        ck_assert_ptr_nonnull(self);
        ck_assert_str_eq(json_string_value(json_object_get(self, "type")), AS_JSON);
        ck_assert_str_eq(json_string_value(json_object_get(self, "href")),
                         "http://ap.example/users/alice");
        json_t *prof = jrd_link(&r, "http://webfinger.net/rel/profile-page");
        ck_assert_str_eq(json_string_value(json_object_get(prof, "href")),
                         "http://ap.example/@alice");
        ck_assert_str_eq(json_string_value(json_object_get(prof, "type")), "text/html");
        json_t *sub = jrd_link(&r, "http://ostatus.org/schema/1.0/subscribe");
        ck_assert_str_eq(json_string_value(json_object_get(sub, "template")),
                         "http://ap.example/authorize_interaction?uri={uri}");
    }

    /* Unknown users, other hosts and the decoy tenant's users, both ways. */
    const char *missing[] = {"acct:nobody@ap.example",
                             "acct:dave@ap.example",
                             "acct:dave@decoy.example",
                             "acct:alice@elsewhere.example",
                             "http://elsewhere.example/users/alice",
                             "http://ap.example/users/dave",
                             "http://ap.example/about",
                             NULL};
    for (int i = 0; missing[i]; i++) {
        webfinger(&w, &r, HOST, missing[i]);
        EU_IT_EXPECT_ERROR(&r, 404);
    }
    webfinger(&w, &r, DECOY, "acct:alice@ap.example");
    EU_IT_EXPECT_ERROR(&r, 404);
    webfinger(&w, &r, DECOY, "acct:alice@decoy.example");
    EU_IT_EXPECT_ERROR(&r, 404);
    webfinger(&w, &r, DECOY, "acct:dave@decoy.example");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "subject", "acct:dave@decoy.example");

    /* Missing or malformed. */
    webfinger(&w, &r, HOST, NULL);
    EU_IT_EXPECT_ERROR(&r, 400);
    webfinger(&w, &r, HOST, "");
    EU_IT_EXPECT_ERROR(&r, 400);
    webfinger(&w, &r, HOST, "alice");
    EU_IT_EXPECT_ERROR(&r, 400);

    /* host-meta points here; NodeInfo 2.1 beside 2.0. */
    get(&w, &r, HOST, "/.well-known/host-meta", "*/*");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(
        strstr(r.body, "template=\"http://ap.example/.well-known/webfinger?resource={uri}\""));
    get(&w, &r, HOST, "/.well-known/nodeinfo", "application/json");
    EU_IT_EXPECT_JSTR(&r, "links.0.href", "http://ap.example/nodeinfo/2.0");
    EU_IT_EXPECT_JSTR(&r, "links.1.rel", "http://nodeinfo.diaspora.software/ns/schema/2.1");
    EU_IT_EXPECT_JSTR(&r, "links.1.href", "http://ap.example/nodeinfo/2.1");
    get(&w, &r, HOST, "/nodeinfo/2.1", "application/json");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "version", "2.1");
    EU_IT_EXPECT_JSTR(&r, "software.name", "mastodon");
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "schema/2.1#"));

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

static void
expect_actor(struct eu_it_resp *r, const char *type)
{
    EU_IT_EXPECT_STATUS(r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(r, "Content-Type"), AS_JSON));
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(r, "Vary"), "Accept"));
    EU_IT_EXPECT_JSTR(r, "@context.0", "https://www.w3.org/ns/activitystreams");
    EU_IT_EXPECT_JSTR(r, "@context.1", "https://w3id.org/security/v1");
    EU_IT_EXPECT_JSTR(r, "@context.2.manuallyApprovesFollowers", "as:manuallyApprovesFollowers");
    EU_IT_EXPECT_JSTR(r, "id", "http://ap.example/users/alice");
    EU_IT_EXPECT_JSTR(r, "type", type);
    EU_IT_EXPECT_JSTR(r, "preferredUsername", "alice");
    EU_IT_EXPECT_JSTR(r, "url", "http://ap.example/@alice");
    EU_IT_EXPECT_JSTR(r, "inbox", "http://ap.example/users/alice/inbox");
    EU_IT_EXPECT_JSTR(r, "outbox", "http://ap.example/users/alice/outbox");
    EU_IT_EXPECT_JSTR(r, "followers", "http://ap.example/users/alice/followers");
    EU_IT_EXPECT_JSTR(r, "following", "http://ap.example/users/alice/following");
    EU_IT_EXPECT_JSTR(r, "featured", "http://ap.example/users/alice/collections/featured");
    EU_IT_EXPECT_JSTR(r, "endpoints.sharedInbox", "http://ap.example/inbox");
    ck_assert_ptr_nonnull(eu_it_jpath(r->json, "published"));
}

START_TEST(test_actor)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    get(&w, &r, HOST, "/users/alice", AS_JSON);
    expect_actor(&r, "Person");
    ck_assert(json_is_false(eu_it_jpath(r.json, "manuallyApprovesFollowers")));
    /* A new account has its key from the start. */
    EU_IT_EXPECT_JSTR(&r, "publicKey.id", "http://ap.example/users/alice#main-key");
    ck_assert_ptr_nonnull(strstr(json_string_value(eu_it_jpath(r.json, "publicKey.publicKeyPem")),
                                 "BEGIN PUBLIC KEY"));
    /* Without a key (an account from before keys, until the backfill job
     * runs), nothing is said about one. */
    free(eu_it_pg_execf(
        w.db, "UPDATE accounts SET public_key = NULL WHERE tenant_id = %s AND username = 'alice'",
        w.tid));
    get(&w, &r, HOST, "/users/alice", AS_JSON);
    ck_assert_ptr_null(eu_it_jpath(r.json, "publicKey"));
    ck_assert_ptr_null(eu_it_jpath(r.json, "icon"));
    get(&w, &r, HOST, "/@alice", LD_JSON);
    expect_actor(&r, "Person");
    get(&w, &r, HOST, "/users/ALICE", "application/ld+json");
    expect_actor(&r, "Person");

    free(eu_it_pg_execf(w.db,
                        "UPDATE accounts SET public_key = E'-----BEGIN PUBLIC KEY-----\\nAAA\\n"
                        "-----END PUBLIC KEY-----\\n', avatar_url = 'http://ap.example/a.png'"
                        " WHERE tenant_id = %s AND username = 'alice'",
                        w.tid));
    char *tok = eu_it_user_token(w.s, HOST, "alice", "read write");
    eu_it_callf(w.s, &r, HOST, "PATCH", tok,
                "{\"locked\":true,\"bot\":true,\"fields_attributes\":"
                "[{\"name\":\"Site\",\"value\":\"https://alice.example/x\"}]}",
                "/api/v1/accounts/update_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    get(&w, &r, HOST, "/users/alice", AS_JSON);
    expect_actor(&r, "Service");
    EU_IT_EXPECT_JSTR(&r, "publicKey.id", "http://ap.example/users/alice#main-key");
    EU_IT_EXPECT_JSTR(&r, "publicKey.owner", "http://ap.example/users/alice");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "publicKey.publicKeyPem")), "BEGIN PUBLIC"));
    ck_assert(json_is_true(eu_it_jpath(r.json, "manuallyApprovesFollowers")));
    EU_IT_EXPECT_JSTR(&r, "attachment.0.type", "PropertyValue");
    EU_IT_EXPECT_JSTR(&r, "attachment.0.name", "Site");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(eu_it_jpath(r.json, "attachment.0.value")), "alice.example"));
    EU_IT_EXPECT_JSTR(&r, "icon.type", "Image");
    EU_IT_EXPECT_JSTR(&r, "icon.url", "http://ap.example/a.png");

    /* Browsers keep the HTML page. */
    get(&w, &r, HOST, "/@alice", "text/html,application/xhtml+xml,*/*;q=0.8");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "text/html"));
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Vary"), "Accept"));
    get(&w, &r, HOST, "/users/alice", "text/html");
    EU_IT_EXPECT_STATUS(&r, 302);

    /* Suspended (not yet purged): still the actor, flagged, as Mastodon
     * serves it (test_ap_move.c has the rest). Unknown and the decoy's:
     * not found. */
    free(eu_it_pg_execf(
        w.db, "UPDATE accounts SET suspended_at = now() WHERE tenant_id = %s AND username = 'bob'",
        w.tid));
    get(&w, &r, HOST, "/users/bob", AS_JSON);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "suspended")));
    get(&w, &r, HOST, "/users/nobody", AS_JSON);
    EU_IT_EXPECT_ERROR(&r, 404);
    get(&w, &r, HOST, "/users/dave", AS_JSON);
    EU_IT_EXPECT_ERROR(&r, 404);
    get(&w, &r, HOST, "/users/instance.actor", AS_JSON);
    EU_IT_EXPECT_STATUS(&r, 404);
    get(&w, &r, DECOY, "/users/alice", AS_JSON);
    EU_IT_EXPECT_ERROR(&r, 404);

    free(tok);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

struct fetch {
    int port;
    struct eu_it_resp r;
};

static void *
fetch_actor(void *arg)
{
    struct fetch *f = arg;
    const char *h[] = {"Accept: " AS_JSON, NULL};
    eu_it_http_raw(&f->r, "GET", f->port, HOST, "/actor", h, NULL);
    return NULL;
}

#define CONCURRENT 6

START_TEST(test_instance_actor)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char q[512];

    /* Several first requests at once make one actor. */
    struct fetch f[CONCURRENT];
    pthread_t th[CONCURRENT];
    memset(f, 0, sizeof(f));
    for (int i = 0; i < CONCURRENT; i++) {
        f[i].port = w.s->public_port;
        pthread_create(&th[i], NULL, fetch_actor, &f[i]);
    }
    for (int i = 0; i < CONCURRENT; i++)
        pthread_join(th[i], NULL);
    char *pem = NULL;
    for (int i = 0; i < CONCURRENT; i++) {
        EU_IT_EXPECT_STATUS(&f[i].r, 200);
        EU_IT_EXPECT_JSTR(&f[i].r, "id", "http://ap.example/actor");
        const char *p = json_string_value(eu_it_jpath(f[i].r.json, "publicKey.publicKeyPem"));
        ck_assert_ptr_nonnull(p);
        if (pem)
            ck_assert_str_eq(p, pem);
        else
            pem = strdup(p);
    }
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM accounts WHERE tenant_id = %s AND username = 'instance.actor'",
             w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 1);
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM settings s JOIN accounts a ON a.tenant_id = %s"
             " AND a.id = (s.value #>> '{}')::bigint"
             " WHERE s.tenant_id = %s AND s.key = 'instance_actor_id'",
             w.tid, w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, q), 1);

    get(&w, &r, HOST, "/actor", AS_JSON);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "type", "Application");
    EU_IT_EXPECT_JSTR(&r, "preferredUsername", HOST);
    EU_IT_EXPECT_JSTR(&r, "inbox", "http://ap.example/actor/inbox");
    EU_IT_EXPECT_JSTR(&r, "outbox", "http://ap.example/actor/outbox");
    EU_IT_EXPECT_JSTR(&r, "endpoints.sharedInbox", "http://ap.example/inbox");
    EU_IT_EXPECT_JSTR(&r, "publicKey.id", "http://ap.example/actor#main-key");
    EU_IT_EXPECT_JSTR(&r, "publicKey.publicKeyPem", pem);
    ck_assert(json_is_true(eu_it_jpath(r.json, "manuallyApprovesFollowers")));
    for (int i = 0; i < CONCURRENT; i++)
        eu_it_resp_free(&f[i].r);

    get(&w, &r, HOST, "/actor/outbox", AS_JSON);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JINT(&r, "totalItems", 0);

    webfinger(&w, &r, HOST, "acct:ap.example@ap.example");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "subject", "acct:ap.example@ap.example");
    ck_assert_str_eq(json_string_value(json_object_get(jrd_link(&r, "self"), "href")),
                     "http://ap.example/actor");
    webfinger(&w, &r, HOST, "http://ap.example/actor");
    EU_IT_EXPECT_STATUS(&r, 200);
    webfinger(&w, &r, HOST, "acct:instance.actor@ap.example");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Not a user: not counted, not found. */
    get(&w, &r, HOST, "/api/v1/instance", "application/json");
    EU_IT_EXPECT_JINT(&r, "stats.user_count", 2);
    char *tok = eu_it_user_token(w.s, HOST, "alice", "read");
    eu_it_callf(w.s, &r, HOST, "GET", tok, NULL, "/api/v1/accounts/search?q=instance");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, HOST, "GET", tok, NULL, "/api/v2/search?q=instance&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 0);
    eu_it_callf(w.s, &r, HOST, "GET", tok, NULL, "/api/v1/directory?local=true");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);

    /* The decoy tenant has its own, made when it is first asked. */
    get(&w, &r, DECOY, "/actor", AS_JSON);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", "http://decoy.example/actor");
    ck_assert_str_ne(json_string_value(eu_it_jpath(r.json, "publicKey.publicKeyPem")), pem);

    free(pem);
    free(tok);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("ap_discovery");
    EU_IT_ADD_TCASE(suite, test_webfinger, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_actor, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_instance_actor, TIMEOUT);
    return eu_it_run_suite(suite);
}
