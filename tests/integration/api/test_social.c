/*
 * The social group's other endpoints end to end: filters v1 and v2 (CRUD,
 * keywords and statuses subresources) and how they apply to timelines
 * (whole words, contexts, hide vs warn, expiry); markers and their
 * versions; preferences; favourites and bookmarks with Link paging;
 * conversations (who sees them, read, remove, a deleted last message);
 * /api/v2/search; hashtags and followed tags; the list timeline; and the
 * endpoints answered with empty lists.
 */
#include "world.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 120
#define HOST "so.example"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .users = {{"alice"}, {"bob"}, {"carol"}},
};

static void
api(struct world *w, struct eu_it_resp *r, const char *method, const char *path, const char *token,
    const char *body)
{
    ck_assert_int_eq(eu_it_http(r, method, w->s->public_port, HOST, path, token, body), 0);
}

static char *
post(struct world *w, const char *token, const char *body)
{
    struct eu_it_resp r = {0};
    api(w, &r, "POST", "/api/v1/statuses", token, body);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

static void
follow(struct world *w, const char *token, const char *target_id)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "POST", token, NULL, "/api/v1/accounts/%s/follow", target_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* The "id" of every element of r's array joined by ','; caller frees. */
static char *
ids_of(const struct eu_it_resp *r, const char *member)
{
    ck_assert_msg(json_is_array(r->json), "not an array: %.500s", r->body);
    size_t cap = 4096, len = 0;
    char *buf = calloc(1, cap);
    size_t i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        const char *id = json_string_value(json_object_get(v, member));
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? "," : "", id ? id : "?");
    }
    return buf;
}

#define EXPECT_IDS(r, member, want)                                                                \
    do {                                                                                           \
        char *ids_ = ids_of(r, member);                                                            \
        ck_assert_str_eq(ids_, (want));                                                            \
        free(ids_);                                                                                \
    } while (0)

static char *
join2(const char *a, const char *b)
{
    char *out = malloc(strlen(a) + strlen(b) + 2);
    sprintf(out, "%s%s%s", a, *a && *b ? "," : "", b);
    return out;
}

/* ------------------------------------------------------------ filters */

START_TEST(test_filters_crud)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};

    /* Validation. */
    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"), "{\"context\":[\"home\"]}");
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"), "{\"title\":\"x\"}");
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"),
        "{\"title\":\"x\",\"context\":[\"nowhere\"]}");
    EU_IT_EXPECT_ERROR(&r, 422);
    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"),
        "{\"title\":\"x\",\"context\":[\"home\"],\"filter_action\":\"explode\"}");
    EU_IT_EXPECT_ERROR(&r, 422);

    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"),
        "{\"title\":\"Spoilers\",\"context\":[\"home\",\"public\"],\"filter_action\":\"hide\","
        "\"expires_in\":3600,\"keywords_attributes\":[{\"keyword\":\"dune\"},"
        "{\"keyword\":\"arrakis\",\"whole_word\":false}]}");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Spoilers");
    EU_IT_EXPECT_JSTR(&r, "filter_action", "hide");
    EU_IT_EXPECT_JSTR(&r, "context.1", "public");
    EU_IT_EXPECT_JSTR(&r, "keywords.0.keyword", "dune");
    ck_assert(json_is_true(eu_it_jpath(r.json, "keywords.0.whole_word")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "keywords.1.whole_word")));
    ck_assert(json_is_string(eu_it_jpath(r.json, "expires_at")));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 0);
    char *fid = strdup(eu_it_json_str(&r, "id"));
    char *kid = strdup(json_string_value(eu_it_jpath(r.json, "keywords.0.id")));
    char *kid2 = strdup(json_string_value(eu_it_jpath(r.json, "keywords.1.id")));

    /* Someone else's is 404. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", "/api/v2/filters", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Update: title, no expiry, keywords changed, removed and added. */
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"title\":\"Dune\",\"expires_in\":\"\",\"context\":[\"thread\"],"
             "\"keywords_attributes\":[{\"id\":\"%s\",\"keyword\":\"sandworm\"},"
             "{\"id\":\"%s\",\"_destroy\":true},{\"keyword\":\"spice\",\"whole_word\":false}]}",
             kid, kid2);
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), body, "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "title", "Dune");
    ck_assert(json_is_null(eu_it_jpath(r.json, "expires_at")));
    EU_IT_EXPECT_JSTR(&r, "context.0", "thread");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "context")), 1);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "keywords")), 2);
    EU_IT_EXPECT_JSTR(&r, "keywords.0.keyword", "sandworm");
    EU_IT_EXPECT_JSTR(&r, "keywords.1.keyword", "spice");
    EU_IT_EXPECT_JSTR(&r, "filter_action", "hide");

    /* Keywords subresource. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"keyword\":\"melange\",\"whole_word\":false}", "/api/v2/filters/%s/keywords",
                fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "keyword", "melange");
    char *kid3 = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), "{\"keyword\":\"\"}",
                "/api/v2/filters/%s/keywords", fid);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), "{\"keyword\":\"x\"}",
                "/api/v2/filters/%s/keywords", fid);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/%s/keywords",
                fid);
    EXPECT_IDS(&r, "keyword", "sandworm,spice,melange");
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), "{\"whole_word\":true}",
                "/api/v2/filters/keywords/%s", kid3);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(eu_it_jpath(r.json, "whole_word")));
    EU_IT_EXPECT_JSTR(&r, "keyword", "melange");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/keywords/%s",
                kid3);
    EU_IT_EXPECT_JSTR(&r, "keyword", "melange");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v2/filters/keywords/%s",
                kid3);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL,
                "/api/v2/filters/keywords/%s", kid3);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/keywords/%s",
                kid3);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Statuses subresource. */
    char *sid = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"just a status\"}");
    snprintf(body, sizeof(body), "{\"status_id\":\"%s\"}", sid);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v2/filters/%s/statuses",
                fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "status_id", sid);
    char *fsid = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), "{\"status_id\":\"1\"}",
                "/api/v2/filters/%s/statuses", fid);
    EU_IT_EXPECT_ERROR(&r, 404);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/%s/statuses",
                fid);
    EXPECT_IDS(&r, "status_id", sid);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/statuses/%s",
                fsid);
    EU_IT_EXPECT_JSTR(&r, "status_id", sid);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.status_id", sid);
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL,
                "/api/v2/filters/statuses/%s", fsid);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/%s/statuses",
                fid);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* v1 sees each keyword as a filter. */
    api(&w, &r, "GET", "/api/v1/filters", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_IDS(&r, "phrase", "spice,sandworm");
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.irreversible")));
    api(&w, &r, "POST", "/api/v1/filters", eu_it_tok(&w, "alice"),
        "{\"phrase\":\"harkonnen\",\"context\":[\"home\"],\"whole_word\":false}");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "phrase", "harkonnen");
    ck_assert(json_is_false(eu_it_jpath(r.json, "whole_word")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "irreversible")));
    char *v1id = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"),
                "{\"phrase\":\"atreides\",\"irreversible\":true}", "/api/v1/filters/%s", v1id);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "phrase", "atreides");
    ck_assert(json_is_true(eu_it_jpath(r.json, "irreversible")));
    EU_IT_EXPECT_JSTR(&r, "context.0", "home");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/filters/%s", v1id);
    EU_IT_EXPECT_JSTR(&r, "phrase", "atreides");
    api(&w, &r, "GET", "/api/v2/filters", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "title", "harkonnen,Dune");
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/filters/%s", v1id);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Its filter went with its only keyword. */
    api(&w, &r, "GET", "/api/v2/filters", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "title", "Dune");

    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_ERROR(&r, 404);
    char kq[128];
    snprintf(kq, sizeof(kq), "SELECT count(*) FROM filter_keywords WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(eu_it_pg_exec_long(w.db, kq), 0);

    /* Scopes. */
    char *ro = eu_it_user_token(w.s, HOST, "alice", "read:filters");
    api(&w, &r, "GET", "/api/v2/filters", ro, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "POST", "/api/v2/filters", ro, "{\"title\":\"x\",\"context\":[\"home\"]}");
    EU_IT_EXPECT_ERROR(&r, 403);

    eu_it_resp_free(&r);
    free(ro);
    free(fid);
    free(kid);
    free(kid2);
    free(kid3);
    free(sid);
    free(fsid);
    free(v1id);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_filters_apply)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    follow(&w, eu_it_tok(&w, "alice"), eu_it_id(&w, "bob"));
    char *a = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"I love cats\"}");
    char *b = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"concatenate strings\"}");
    char *c =
        post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"nothing here\",\"spoiler_text\":\"CATS!\"}");
    char *d = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"a plain one\"}");

    /* Whole word: "cats" matches "cats" and "CATS!", not "concatenate". */
    api(&w, &r, "POST", "/api/v2/filters", eu_it_tok(&w, "alice"),
        "{\"title\":\"felines\",\"context\":[\"home\"],\"filter_action\":\"warn\","
        "\"keywords_attributes\":[{\"keyword\":\"cats\",\"whole_word\":true}]}");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *fid = strdup(eu_it_json_str(&r, "id"));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *want = malloc(256);
    snprintf(want, 256, "%s,%s,%s,%s", d, c, b, a);
    EXPECT_IDS(&r, "id", want);
    EU_IT_EXPECT_JSTR(&r, "1.filtered.0.filter.title", "felines");
    EU_IT_EXPECT_JSTR(&r, "1.filtered.0.filter.filter_action", "warn");
    EU_IT_EXPECT_JSTR(&r, "1.filtered.0.keyword_matches.0", "cats");
    ck_assert(json_is_null(eu_it_jpath(r.json, "1.filtered.0.status_matches")));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "2.filtered")), 0);
    EU_IT_EXPECT_JSTR(&r, "3.filtered.0.filter.title", "felines");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.filtered")), 0);

    /* Not whole word: "cat" inside "concatenate" too. */
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"),
                "{\"keywords_attributes\":[{\"keyword\":\"cat\",\"whole_word\":false}]}",
                "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "2.filtered.0.keyword_matches.0", "cat");

    /* Hide drops them; another context leaves home alone. */
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), "{\"filter_action\":\"hide\"}",
                "/api/v2/filters/%s", fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "id", d);
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), "{\"context\":[\"public\"]}",
                "/api/v2/filters/%s", fid);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "id", want);
    api(&w, &r, "GET", "/api/v1/timelines/public", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "id", d);
    /* Only the owner's filters apply. */
    api(&w, &r, "GET", "/api/v1/timelines/public", eu_it_tok(&w, "carol"), NULL);
    EXPECT_IDS(&r, "id", want);

    /* A filtered status by id, in the home context. */
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"),
                "{\"context\":[\"home\"],\"filter_action\":\"warn\"}", "/api/v2/filters/%s", fid);
    char body[128];
    snprintf(body, sizeof(body), "{\"status_id\":\"%s\"}", d);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v2/filters/%s/statuses",
                fid);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/timelines/home?limit=1", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "0.filtered.0.status_matches.0", d);
    ck_assert(json_is_null(eu_it_jpath(r.json, "0.filtered.0.keyword_matches")));

    /* Expired filters apply no more. */
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), "{\"filter_action\":\"hide\"}",
                "/api/v2/filters/%s", fid);
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 0);
    char q[256];
    snprintf(q, sizeof(q),
             "UPDATE filters SET expires_at = now() - interval '1 minute'"
             " WHERE tenant_id = %s AND id = %s RETURNING 1",
             w.tid, fid);
    free(eu_it_pg_exec(w.db, q));
    api(&w, &r, "GET", "/api/v1/timelines/home", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "id", want);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.filtered")), 0);

    eu_it_resp_free(&r);
    free(want);
    free(fid);
    free(a);
    free(b);
    free(c);
    free(d);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------- markers, preferences, lists */

START_TEST(test_markers_preferences)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    api(&w, &r, "GET", "/api/v1/markers?timeline[]=home&timeline[]=notifications",
        eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);

    api(&w, &r, "POST", "/api/v1/markers", eu_it_tok(&w, "alice"),
        "{\"home\":{\"last_read_id\":\"103\"}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "home.last_read_id", "103");
    EU_IT_EXPECT_JINT(&r, "home.version", 1);
    ck_assert(json_is_string(eu_it_jpath(r.json, "home.updated_at")));
    api(&w, &r, "POST", "/api/v1/markers", eu_it_tok(&w, "alice"),
        "{\"home\":{\"last_read_id\":\"105\"},\"notifications\":{\"last_read_id\":\"7\"}}");
    EU_IT_EXPECT_JINT(&r, "home.version", 2);
    EU_IT_EXPECT_JINT(&r, "notifications.version", 1);
    api(&w, &r, "GET", "/api/v1/markers?timeline[]=home", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "home.last_read_id", "105");
    ck_assert_ptr_null(eu_it_jpath(r.json, "notifications"));
    api(&w, &r, "GET", "/api/v1/markers?timeline[]=home", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_object_size(r.json), 0);
    api(&w, &r, "POST", "/api/v1/markers", eu_it_tok(&w, "alice"),
        "{\"home\":{\"last_read_id\":\"x\"}}");
    EU_IT_EXPECT_ERROR(&r, 422);

    api(&w, &r, "GET", "/api/v1/preferences", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "posting:default:visibility", "public");
    ck_assert(json_is_false(eu_it_jpath(r.json, "posting:default:sensitive")));
    ck_assert(json_is_null(eu_it_jpath(r.json, "posting:default:language")));
    EU_IT_EXPECT_JSTR(&r, "reading:expand:media", "default");
    char q[256];
    snprintf(q, sizeof(q),
             "UPDATE users SET default_privacy = 'private', default_language = 'ko'"
             " WHERE tenant_id = %s RETURNING 1",
             w.tid);
    free(eu_it_pg_exec(w.db, q));
    api(&w, &r, "GET", "/api/v1/preferences", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "posting:default:visibility", "private");
    EU_IT_EXPECT_JSTR(&r, "posting:default:language", "ko");

    /* Start-up endpoints answered with empty lists. */
    const char *empties[] = {"/api/v1/custom_emojis",
                             "/api/v1/trends",
                             "/api/v1/trends/tags",
                             "/api/v1/trends/statuses",
                             "/api/v1/trends/links",
                             "/api/v1/announcements",
                             "/api/v1/notifications/requests",
                             "/api/v1/suggestions",
                             "/api/v2/suggestions",
                             "/api/v1/featured_tags",
                             "/api/v1/scheduled_statuses"};
    for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
        api(&w, &r, "GET", empties[i], eu_it_tok(&w, "alice"), NULL);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_msg(json_is_array(r.json) && json_array_size(r.json) == 0, "%s: %s", empties[i],
                      r.body);
    }
    api(&w, &r, "GET", "/api/v1/custom_emojis", NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v2/notifications/policy", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "for_not_following", "accept");
    EU_IT_EXPECT_JINT(&r, "summary.pending_requests_count", 0);
    api(&w, &r, "GET", "/api/v1/notifications/policy", eu_it_tok(&w, "alice"), NULL);
    ck_assert(json_is_false(eu_it_jpath(r.json, "filter_not_following")));
    api(&w, &r, "GET", "/api/v1/announcements", NULL, NULL);
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_favourites_bookmarks)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *s1 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"one\"}");
    char *s2 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"two\"}");
    char *s3 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"three\"}");
    char *priv =
        post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"private\",\"visibility\":\"private\"}");
    /* Favourited out of order: the list follows when, not which. */
    const char *order[] = {s2, s1, s3};
    for (int i = 0; i < 3; i++) {
        eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                    "/api/v1/statuses/%s/favourite", order[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
        eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                    "/api/v1/statuses/%s/bookmark", order[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
    }
    char want[256];
    snprintf(want, sizeof(want), "%s,%s,%s", s3, s1, s2);
    api(&w, &r, "GET", "/api/v1/favourites", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_IDS(&r, "id", want);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.favourited")));
    api(&w, &r, "GET", "/api/v1/bookmarks", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "id", want);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.bookmarked")));
    api(&w, &r, "GET", "/api/v1/favourites", eu_it_tok(&w, "bob"), NULL);
    EXPECT_IDS(&r, "id", "");

    /* Paging by the favourite's id, with Link. */
    api(&w, &r, "GET", "/api/v1/favourites?limit=2", eu_it_tok(&w, "alice"), NULL);
    snprintf(want, sizeof(want), "%s,%s", s3, s1);
    EXPECT_IDS(&r, "id", want);
    const char *link = eu_it_resp_header(&r, "Link");
    ck_assert_ptr_nonnull(link);
    const char *mx = strstr(link, "max_id=");
    ck_assert_ptr_nonnull(mx);
    char max_id[32];
    sscanf(mx + 7, "%31[0-9]", max_id);
    ck_assert_str_ne(max_id, s1); /* the favourite's id, not the status's */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/favourites?limit=2&max_id=%s", max_id);
    EXPECT_IDS(&r, "id", s2);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/bookmarks?limit=2&max_id=%s", max_id);
    ck_assert_int_le(json_array_size(r.json), 1);

    /* A favourite the viewer can no longer see is left out. */
    char q[256];
    snprintf(q, sizeof(q),
             "UPDATE statuses SET deleted_at = now() WHERE tenant_id = %s AND text = 'three'"
             " RETURNING 1",
             w.tid);
    free(eu_it_pg_exec(w.db, q));
    api(&w, &r, "GET", "/api/v1/favourites", eu_it_tok(&w, "alice"), NULL);
    snprintf(want, sizeof(want), "%s,%s", s1, s2);
    EXPECT_IDS(&r, "id", want);

    char *ro = eu_it_user_token(w.s, HOST, "alice", "read:bookmarks");
    api(&w, &r, "GET", "/api/v1/bookmarks", ro, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/favourites", ro, NULL);
    EU_IT_EXPECT_ERROR(&r, 403);

    eu_it_resp_free(&r);
    free(ro);
    free(s1);
    free(s2);
    free(s3);
    free(priv);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------- conversations */

START_TEST(test_conversations)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *d1 =
        post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"@bob secret\",\"visibility\":\"direct\"}");
    char body[256];
    snprintf(body, sizeof(body),
             "{\"status\":\"@alice reply\",\"visibility\":\"direct\",\"in_reply_to_id\":\"%s\"}",
             d1);
    char *d2 = post(&w, eu_it_tok(&w, "bob"), body);
    char *pub = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"@bob public mention\"}");

    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.last_status.id", d2);
    EU_IT_EXPECT_JSTR(&r, "0.accounts.0.username", "bob");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.accounts")), 1);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.unread")));
    char *conv = strdup(json_string_value(eu_it_jpath(r.json, "0.id")));

    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.accounts.0.username", "alice");
    /* Bob wrote last: his copy is read. */
    ck_assert(json_is_false(eu_it_jpath(r.json, "0.unread")));
    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "carol"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 0);

    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/conversations/%s/read", conv);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(eu_it_jpath(r.json, "unread")));
    EU_IT_EXPECT_JSTR(&r, "last_status.id", d2);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "carol"), NULL,
                "/api/v1/conversations/%s/read", conv);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* The last message deleted: the one before it shows. */
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s", d2);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "0.last_status.id", d1);

    /* Removed, then back with the next message, unread again. */
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/conversations/%s",
                conv);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 0);
    eu_it_callf(w.s, &r, HOST, "DELETE", eu_it_tok(&w, "alice"), NULL, "/api/v1/conversations/%s",
                conv);
    EU_IT_EXPECT_ERROR(&r, 404);
    snprintf(body, sizeof(body),
             "{\"status\":\"@alice again @carol\",\"visibility\":\"direct\","
             "\"in_reply_to_id\":\"%s\"}",
             d1);
    char *d3 = post(&w, eu_it_tok(&w, "bob"), body);
    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.last_status.id", d3);
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.unread")));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.accounts")), 2);
    api(&w, &r, "GET", "/api/v1/conversations", eu_it_tok(&w, "carol"), NULL);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.last_status.id", d3);

    /* A second conversation pages before the first. */
    char *d4 = post(&w, eu_it_tok(&w, "carol"),
                    "{\"status\":\"@alice new thread\",\"visibility\":\"direct\"}");
    api(&w, &r, "GET", "/api/v1/conversations?limit=1", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_JSTR(&r, "0.last_status.id", d4);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/conversations?max_id=%s", d4);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.last_status.id", d3);

    eu_it_resp_free(&r);
    free(conv);
    free(d1);
    free(d2);
    free(d3);
    free(d4);
    free(pub);
    eu_it_world_stop(&w);
}
END_TEST

/* -------------------------------------------------- search, tags, lists */

START_TEST(test_search)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    eu_it_account_create(w.s, HOST, "alicia");
    char *mine = post(&w, eu_it_tok(&w, "alice"), "{\"status\":\"The quick brown fox #Foxes\"}");
    char *theirs = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"another quick fox\"}");
    char *tagged = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"#foxtrot dance\"}");

    api(&w, &r, "GET", "/api/v2/search?q=ali&type=accounts", eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 2);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 0);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "hashtags")), 0);
    api(&w, &r, "GET", "/api/v2/search?q=alice&type=accounts", eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.username", "alice");
    api(&w, &r, "GET", "/api/v2/search?q=%40alice%40" HOST, eu_it_tok(&w, "bob"), NULL);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.username", "alice");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 1);
    api(&w, &r, "GET", "/api/v2/search?q=alice%40elsewhere.example", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 0);
    api(&w, &r, "GET", "/api/v2/search?q=ali&type=accounts&limit=1&offset=1", eu_it_tok(&w, "bob"),
        NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 1);
    api(&w, &r, "GET", "/api/v2/search?q=ali&following=true", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 0);

    /* Statuses: the caller's own, by words. */
    api(&w, &r, "GET", "/api/v2/search?q=quick%20fox&type=statuses", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 1);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.id", mine);
    api(&w, &r, "GET", "/api/v2/search?q=quick&type=statuses", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 1);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.id", theirs);
    /* Favouriting makes it searchable for the one who did. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/favourite",
                mine);
    api(&w, &r, "GET", "/api/v2/search?q=quick&type=statuses", eu_it_tok(&w, "bob"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 2);

    /* Hashtags by prefix, with following. */
    api(&w, &r, "GET", "/api/v2/search?q=%23fox&type=hashtags", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "hashtags")), 2);
    EU_IT_EXPECT_JSTR(&r, "hashtags.0.name", "foxes");
    EU_IT_EXPECT_JSTR(&r, "hashtags.1.name", "foxtrot");
    ck_assert(json_is_false(eu_it_jpath(r.json, "hashtags.0.following")));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "hashtags.0.history")), 0);

    /* Anonymous: no statuses, no offset; bad input refused. */
    api(&w, &r, "GET", "/api/v2/search?q=quick", NULL, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "statuses")), 0);
    api(&w, &r, "GET", "/api/v2/search?q=ali&offset=1", NULL, NULL);
    EU_IT_EXPECT_ERROR(&r, 401);
    api(&w, &r, "GET", "/api/v2/search", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 400);
    api(&w, &r, "GET", "/api/v2/search?q=x&type=planets", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 422);
    /* LIKE wildcards are literal. */
    api(&w, &r, "GET", "/api/v2/search?q=%25&type=accounts", eu_it_tok(&w, "alice"), NULL);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "accounts")), 0);

    eu_it_resp_free(&r);
    free(mine);
    free(theirs);
    free(tagged);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_tags_and_list_timeline)
{
    struct world w;
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    char *t = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"about #Eunha\"}");

    api(&w, &r, "GET", "/api/v1/tags/eunha", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "eunha");
    EU_IT_EXPECT_JSTR(&r, "url", "http://" HOST "/tags/eunha");
    ck_assert(json_is_false(eu_it_jpath(r.json, "following")));
    api(&w, &r, "GET", "/api/v1/tags/Unused", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "unused");
    api(&w, &r, "GET", "/api/v1/tags/no%20spaces", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    api(&w, &r, "POST", "/api/v1/tags/Eunha/follow", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(eu_it_jpath(r.json, "following")));
    api(&w, &r, "POST", "/api/v1/tags/eunha/follow", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    api(&w, &r, "POST", "/api/v1/tags/brandnew/follow", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "brandnew");
    api(&w, &r, "GET", "/api/v1/followed_tags", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "name", "brandnew,eunha");
    api(&w, &r, "GET", "/api/v1/followed_tags?limit=1", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "name", "brandnew");
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    api(&w, &r, "GET", "/api/v1/tags/eunha", eu_it_tok(&w, "alice"), NULL);
    ck_assert(json_is_true(eu_it_jpath(r.json, "following")));
    api(&w, &r, "POST", "/api/v1/tags/eunha/unfollow", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(eu_it_jpath(r.json, "following")));
    api(&w, &r, "GET", "/api/v1/followed_tags", eu_it_tok(&w, "alice"), NULL);
    EXPECT_IDS(&r, "name", "brandnew");
    api(&w, &r, "GET", "/api/v1/followed_tags", eu_it_tok(&w, "bob"), NULL);
    EXPECT_IDS(&r, "name", "");

    /* List timeline: bob is in it, carol is followed but not. */
    follow(&w, eu_it_tok(&w, "alice"), eu_it_id(&w, "bob"));
    follow(&w, eu_it_tok(&w, "alice"), eu_it_id(&w, "carol"));
    api(&w, &r, "POST", "/api/v1/lists", eu_it_tok(&w, "alice"), "{\"title\":\"friends\"}");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *list = strdup(eu_it_json_str(&r, "id"));
    char body[256];
    snprintf(body, sizeof(body), "{\"account_ids\":[\"%s\"]}", eu_it_id(&w, "bob"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/lists/%s/accounts",
                list);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *b2 = post(&w, eu_it_tok(&w, "bob"), "{\"status\":\"bob again\"}");
    char *c1 = post(&w, eu_it_tok(&w, "carol"), "{\"status\":\"carol here\"}");
    char *bp = post(&w, eu_it_tok(&w, "bob"),
                    "{\"status\":\"followers only\",\"visibility\":\"private\"}");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/timelines/list/%s",
                list);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *want = join2(bp, b2);
    char *want2 = join2(want, t);
    EXPECT_IDS(&r, "id", want2);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/timelines/list/%s?limit=1", list);
    EXPECT_IDS(&r, "id", bp);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/timelines/list/%s?max_id=%s", list, b2);
    EXPECT_IDS(&r, "id", t);
    /* An empty page of one's own list is not a missing list. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/timelines/list/%s?since_id=%s", list, bp);
    EU_IT_EXPECT_STATUS(&r, 200);
    EXPECT_IDS(&r, "id", "");
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL, "/api/v1/timelines/list/%s",
                list);
    EU_IT_EXPECT_ERROR(&r, 404);
    api(&w, &r, "GET", "/api/v1/timelines/list/123", eu_it_tok(&w, "alice"), NULL);
    EU_IT_EXPECT_ERROR(&r, 404);

    eu_it_resp_free(&r);
    free(want);
    free(want2);
    free(list);
    free(t);
    free(b2);
    free(c1);
    free(bp);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("social");
    EU_IT_ADD_TCASE(s, test_filters_crud, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_filters_apply, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_markers_preferences, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_favourites_bookmarks, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_conversations, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_search, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_tags_and_list_timeline, TIMEOUT);
    return eu_it_run_suite(s);
}
