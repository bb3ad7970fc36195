/*
 * The public HTML pages through HTTP: a profile lists public and unlisted
 * posts only, a post page shows one of them and 404s for the rest, every
 * user-supplied value is escaped, /users/:name sends browsers to the
 * profile, and paths that are not "@" pages keep the JSON 404; and the
 * frame every page shares (test_frame), and the instance's own pages
 * (test_about_pages).
 */
#include "harness.h"
#include "webform.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define DOMAIN "web.example"

static void
page(struct eu_it_server *s, struct eu_it_resp *r, const char *path, const char *accept)
{
    char line[128];
    snprintf(line, sizeof(line), "Accept: %s", accept);
    const char *h[] = {line, NULL};
    int rc = eu_it_http_raw(r, "GET", s->public_port, DOMAIN, path, h, NULL);
    ck_assert_msg(rc == 0, "GET %s: %s", path, r->error);
}

/* POST /api/v1/statuses with a JSON body; returns the new id (caller frees). */
static char *
post_json(struct eu_it_server *s, const char *token, const char *json)
{
    struct eu_it_resp r = {0};
    eu_it_http(&r, "POST", s->public_port, DOMAIN, "/api/v1/statuses", token, json);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
    return id;
}

static char *
post(struct eu_it_server *s, const char *token, const char *text, const char *visibility)
{
    json_t *body = json_pack("{s:s, s:s}", "status", text, "visibility", visibility);
    char *json = json_dumps(body, JSON_COMPACT);
    char *id = post_json(s, token, json);
    free(json);
    json_decref(body);
    return id;
}

START_TEST(test_public_pages)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Web <Test>"));
    free(eu_it_account_seed(s, DOMAIN, "alice"));
    free(eu_it_account_seed(s, DOMAIN, "bob"));
    char *db = eu_it_tenant_database(s, DOMAIN);
    /* The placement database is shared: say whose accounts. */
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char sql[256];
    snprintf(sql, sizeof(sql),
             "UPDATE accounts SET display_name = '<i>Alice</i>',"
             " note = 'bio <img src=x onerror=alert(1)>'"
             " WHERE tenant_id = %s AND username = 'alice'",
             tid);
    free(eu_it_pg_exec(db, sql));
    char *tok = eu_it_user_token(s, DOMAIN, "alice", "read write");
    char *btok = eu_it_user_token(s, DOMAIN, "bob", "read write");
    char *pub = post(s, tok, "<script>alert(1)</script> public & loud", "public");
    char *unl = post(s, tok, "quiet unlisted post", "unlisted");
    char *priv = post(s, tok, "followers only secret", "private");
    char *dm = post(s, tok, "direct secret @bob", "direct");
    char *bobs = post(s, btok, "bob speaks", "public");
    struct eu_it_resp r = {0};

    page(s, &r, "/@alice", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "text/html"));
    ck_assert_ptr_nonnull(
        strstr(eu_it_resp_header(&r, "Content-Security-Policy"), "default-src 'none'"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "&lt;script&gt;alert(1)&lt;/script&gt; public &amp; loud"));
    ck_assert_ptr_nonnull(strstr(r.body, "quiet unlisted post"));
    ck_assert_ptr_null(strstr(r.body, "secret"));
    ck_assert_ptr_null(strstr(r.body, "<script"));
    ck_assert_ptr_null(strstr(r.body, "<img src=x"));
    ck_assert_ptr_null(strstr(r.body, "<i>"));
    ck_assert_ptr_nonnull(strstr(r.body, "&lt;i&gt;Alice&lt;/i&gt;"));
    ck_assert_ptr_nonnull(strstr(r.body, "Web &lt;Test&gt;"));
    ck_assert_ptr_nonnull(strstr(r.body, "@alice@" DOMAIN));
    ck_assert_ptr_null(strstr(r.body, "bob speaks"));
    char link[128];
    snprintf(link, sizeof(link), "/@alice/%s\"", pub);
    ck_assert_msg(strstr(r.body, link), "no link %s in %s", link, r.body);

    /* Case-insensitive, like Mastodon's lookups. */
    page(s, &r, "/@ALICE", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);

    char path[128];
    snprintf(path, sizeof(path), "/@alice/%s", pub);
    page(s, &r, path, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "public &amp; loud"));
    snprintf(path, sizeof(path), "/@alice/%s", unl);
    page(s, &r, path, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *const hidden[] = {priv, dm, bobs, "123", "abc", NULL};
    for (int i = 0; hidden[i]; i++) {
        snprintf(path, sizeof(path), "/@alice/%s", hidden[i]);
        page(s, &r, path, "text/html");
        EU_IT_EXPECT_STATUS(&r, 404);
        ck_assert_ptr_nonnull(strstr(r.body, "isn&#39;t here"));
        ck_assert_ptr_null(strstr(r.body, "secret"));
    }
    page(s, &r, "/@nobody", "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(sql, sizeof(sql),
             "UPDATE accounts SET suspended_at = now() WHERE tenant_id = %s AND username = 'bob'",
             tid);
    free(eu_it_pg_exec(db, sql));
    page(s, &r, "/@bob", "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);

    /* /users/:name sends browsers to the profile. */
    page(s, &r, "/users/alice", "text/html");
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/@alice");
    /* ActivityPub clients get the actor (tests/integration/ap/test_ap_discovery.c). */
    page(s, &r, "/users/alice", "application/activity+json");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", "http://" DOMAIN "/users/alice");

    /* Other one- and two-segment paths keep the API's JSON 404. */
    page(s, &r, "/nothing", "application/json");
    EU_IT_EXPECT_ERROR(&r, 404);
    page(s, &r, "/api/v9", "application/json");
    EU_IT_EXPECT_ERROR(&r, 404);

    free(db);
    free(tid);
    free(tok);
    free(btok);
    free(pub);
    free(unl);
    free(priv);
    free(dm);
    free(bobs);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/* The value of attribute attr of the first element whose text starts with
 * prefix (e.g. "<link rel=\"stylesheet\" href=\""), or NULL; the caller
 * frees it. */
static char *
attr_after(const char *body, const char *prefix)
{
    const char *p = strstr(body, prefix);
    if (!p)
        return NULL;
    p += strlen(prefix);
    return strndup(p, strcspn(p, "\""));
}

/*
 * The frame every page shares (src/api/web_page.c): one stylesheet under a
 * content-hashed name, cached for a year; the tenant's accent colour as a
 * second stylesheet whose colours stay readable; its first language as
 * lang; its thumbnail; a policy with no script and no inline style; the
 * same frame on a decoy tenant shows none of the first's settings.
 */
START_TEST(test_frame)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Web Test"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    free(eu_it_account_seed(s, DOMAIN, "alice"));
    free(eu_it_account_seed(s, "decoy.example", "dora"));
    struct eu_it_resp r = {0};

    page(s, &r, "/@alice", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *csp = eu_it_resp_header(&r, "Content-Security-Policy");
    ck_assert_ptr_nonnull(strstr(csp, "default-src 'none'"));
    ck_assert_ptr_nonnull(strstr(csp, "style-src 'self'"));
    ck_assert_ptr_null(strstr(csp, "unsafe-inline"));
    ck_assert_ptr_null(strstr(csp, "script-src"));
    ck_assert_ptr_null(strstr(r.body, "<script"));
    ck_assert_ptr_null(strstr(r.body, "<style"));
    ck_assert_ptr_null(strstr(r.body, " style=\""));
    ck_assert_ptr_nonnull(strstr(r.body, "<html lang=\"en\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "<main id=\"main\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"#main\">Skip to content</a>"));
    ck_assert_ptr_null(strstr(r.body, "/assets/accent-"));
    char *css = attr_after(r.body, "<link rel=\"stylesheet\" href=\"");
    ck_assert_ptr_nonnull(css);
    ck_assert_msg(strncmp(css, "/assets/eunha-", 14) == 0 && strlen(css) == 14 + 16 + 4, "%s", css);

    /* The stylesheet: long-lived under its name, 404 under any other. */
    page(s, &r, css, "text/css");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Type"), "text/css"));
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Cache-Control"), "immutable"));
    ck_assert_ptr_nonnull(strstr(r.body, "prefers-color-scheme: dark"));
    page(s, &r, "/assets/eunha-0000000000000000.css", "text/css");
    EU_IT_EXPECT_ERROR(&r, 404);
    page(s, &r, "/assets/accent-12345g.css", "text/css");
    EU_IT_EXPECT_ERROR(&r, 404);
    page(s, &r, "/assets/accent-123456.cssx", "text/css");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* The picture every entity names for an account without one is there
     * (clients and the pages showed a broken image). */
    const char *const missing[] = {"/avatars/original/missing.png",
                                   "/headers/original/missing.png"};
    for (int i = 0; i < 2; i++) {
        page(s, &r, missing[i], "image/png");
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "image/png");
        ck_assert_uint_gt(r.body_len, 8);
        ck_assert_int_eq(memcmp(r.body, "\x89PNG\r\n\x1a\n", 8), 0);
    }

    /* A pale accent: buttons get dark text, links a darker shade on the
     * light background and the colour itself on the dark one. */
    page(s, &r, "/assets/accent-ffe14d.css", "text/css");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Cache-Control"), "immutable"));
    ck_assert_msg(strstr(r.body, "--accent:#ffe14d;--on-accent:#000000;--link:#"), "%s", r.body);
    ck_assert_msg(!strstr(r.body, "--on-accent:#000000;--link:#ffe14d"), "%s", r.body);
    ck_assert_msg(strstr(r.body, "{:root{--link:#ffe14d}}"), "%s", r.body);
    /* A dark one: white text on buttons, lightened links on dark. */
    page(s, &r, "/assets/accent-1a237e.css", "text/css");
    ck_assert_msg(strstr(r.body, "--on-accent:#ffffff;--link:#1a237e}"), "%s", r.body);
    ck_assert_msg(!strstr(r.body, "{:root{--link:#1a237e}}"), "%s", r.body);

    /* The tenant's settings reach its frame, and only its own. */
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/" DOMAIN "/instance", "{\"accent_color\":\"red\"}",
                &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/" DOMAIN "/instance",
                "{\"accent_color\":\"#7a1f5c\",\"languages\":[\"ko\",\"en\"],"
                "\"thumbnail_url\":\"https://cdn.example/thumb.png\"}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    page(s, &r, "/@alice", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<html lang=\"ko\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"/assets/accent-7a1f5c.css\""));
    ck_assert_ptr_nonnull(strstr(r.body, "<meta name=\"theme-color\" content=\"#7a1f5c\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "<img src=\"https://cdn.example/thumb.png\" alt=\"\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "<span>Web Test</span>"));
    /* The pages' texts follow the language: the sign-in page in Korean. */
    page(s, &r, "/auth/sign_in", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<html lang=\"ko\">"));
    ck_assert_msg(strstr(r.body, "<h1>로그인</h1>") && strstr(r.body, ">비밀번호</label>") &&
                      strstr(r.body, "본문으로 건너뛰기"),
                  "%s", r.body);
    ck_assert_ptr_null(strstr(r.body, "Forgot your password?"));
    {
        const char *h[] = {"Accept: text/html", NULL};
        ck_assert_int_eq(
            eu_it_http_raw(&r, "GET", s->public_port, "decoy.example", "/@dora", h, NULL), 0);
    }
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<html lang=\"en\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "<span>Decoy</span>"));
    ck_assert_ptr_null(strstr(r.body, "7a1f5c"));
    ck_assert_ptr_null(strstr(r.body, "thumb.png"));
    ck_assert_ptr_null(strstr(r.body, "Web Test"));

    /* Error pages wear the frame too. */
    page(s, &r, "/@nobody", "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_ptr_nonnull(strstr(r.body, "/assets/accent-7a1f5c.css"));

    free(css);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

static void
admin_ok(struct eu_it_server *s, const char *method, const char *path, const char *body, long want)
{
    struct eu_it_resp r = {0};
    eu_it_admin(s, method, path, body, &r);
    EU_IT_EXPECT_STATUS(&r, want);
    eu_it_resp_free(&r);
}

/*
 * /about, /privacy-policy and /terms-of-service from the tenant's own rows:
 * description, contact, sign-ups, rules, the staff's HTML sanitized, the
 * moderated servers only when the staff show them to everyone, reasons
 * only when those are shown too; the decoy tenant's pages show none of it.
 */
START_TEST(test_about_pages)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Web Test"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    free(eu_it_account_seed(s, DOMAIN, "alice"));
    struct eu_it_resp r = {0};

    /* Nothing written yet: the pages still stand. */
    page(s, &r, "/about", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<h1>About Web Test</h1>"));
    ck_assert_ptr_nonnull(strstr(r.body, "<dt>Sign-ups</dt><dd>Open</dd>"));
    ck_assert_ptr_null(strstr(r.body, "Rules"));
    page(s, &r, "/privacy-policy", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "has not published a privacy policy"));
    page(s, &r, "/terms-of-service", "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_ptr_nonnull(strstr(r.body, "has not published terms of service"));

    admin_ok(s, "PATCH", "/admin/v1/tenants/" DOMAIN "/instance",
             "{\"description\":\"A <small> place\",\"contact_email\":\"staff@web.example\","
             "\"contact_username\":\"alice\",\"extended_description\":\"<p>Long <b>story</b>"
             "<script>alert(1)</script></p>\",\"privacy_policy\":\"<h2>We keep</h2><p "
             "onclick=\\\"x()\\\">little</p>\",\"show_domain_blocks\":\"all\"}",
             200);
    admin_ok(s, "POST", "/admin/v1/tenants/" DOMAIN "/rules",
             "{\"text\":\"Be kind\",\"hint\":\"No <harassment>\",\"priority\":1}", 200);
    admin_ok(s, "POST", "/admin/v1/tenants/" DOMAIN "/rules",
             "{\"text\":\"No spam\",\"priority\":2}", 200);
    admin_ok(s, "POST", "/admin/v1/tenants/" DOMAIN "/terms_of_service",
             "{\"effective_date\":\"2020-01-01\",\"text\":\"Be nice on %{domain}.\\n\\nThanks.\"}",
             201);
    admin_ok(s, "POST", "/admin/v1/tenants/" DOMAIN "/domain_blocks",
             "{\"domain\":\"gone.example\",\"severity\":\"suspend\",\"public_comment\":\"spam\"}",
             200);
    admin_ok(s, "POST", "/admin/v1/tenants/" DOMAIN "/domain_blocks",
             "{\"domain\":\"loudmouth.example\",\"severity\":\"silence\",\"obfuscate\":true}", 200);
    admin_ok(s, "PATCH", "/admin/v1/tenants/" DOMAIN, "{\"registrations\":\"approval\"}", 200);

    page(s, &r, "/about", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "A &lt;small&gt; place"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "<dt>Administered by</dt><dd><a href=\"/@alice\">@alice@" DOMAIN "</a>"));
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"mailto:staff@web.example\""));
    ck_assert_msg(strstr(r.body, "<dd>Open, with approval by the staff</dd>"), "%s", r.body);
    const char *kind =
        strstr(r.body, "<li>Be kind<p class=\"hint\">No &lt;harassment&gt;</p></li>");
    const char *spam = strstr(r.body, "<li>No spam</li>");
    ck_assert_msg(kind && spam && kind < spam, "rules: %s", r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "<b>story</b>"));
    ck_assert_ptr_null(strstr(r.body, "<script"));
    ck_assert_ptr_nonnull(strstr(r.body, "<td>gone.example</td><td>Suspended</td>"));
    ck_assert_ptr_null(strstr(r.body, "loudmouth.example"));
    ck_assert_ptr_nonnull(strstr(r.body, "<td>Limited</td>"));
    ck_assert_ptr_null(strstr(r.body, "spam</td>")); /* reasons not shown */

    admin_ok(s, "PATCH", "/admin/v1/tenants/" DOMAIN "/instance",
             "{\"show_domain_blocks_rationale\":\"all\"}", 200);
    page(s, &r, "/about", "text/html");
    ck_assert_ptr_nonnull(strstr(r.body, "<td>Suspended</td><td>spam</td>"));
    admin_ok(s, "PATCH", "/admin/v1/tenants/" DOMAIN "/instance",
             "{\"show_domain_blocks\":\"users\"}", 200);
    page(s, &r, "/about", "text/html");
    ck_assert_ptr_null(strstr(r.body, "gone.example"));

    page(s, &r, "/privacy-policy", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "little"));
    ck_assert_ptr_null(strstr(r.body, "onclick"));
    page(s, &r, "/terms-of-service", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "Be nice on " DOMAIN "."));
    ck_assert_ptr_nonnull(strstr(r.body, "<time datetime=\"2020-01-01\">"));

    /* The decoy's pages know nothing of it. */
    const char *h[] = {"Accept: text/html", NULL};
    static const char *const paths[] = {"/about", "/privacy-policy", "/terms-of-service"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(
            eu_it_http_raw(&r, "GET", s->public_port, "decoy.example", paths[i], h, NULL), 0);
        ck_assert_ptr_null(strstr(r.body, "Be kind"));
        ck_assert_ptr_null(strstr(r.body, "gone.example"));
        ck_assert_ptr_null(strstr(r.body, "little"));
        ck_assert_ptr_null(strstr(r.body, "Be nice"));
        ck_assert_ptr_null(strstr(r.body, "staff@web.example"));
        ck_assert_ptr_null(strstr(r.body, "Web Test"));
    }

    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * The profile and post pages from the API's entities: pins, paging by
 * max_id, content warnings collapsed, the thread around a post with what
 * an anonymous visitor may see and nothing else, and the tags link
 * previews read.
 */
START_TEST(test_profile_and_thread)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Web Test"));
    free(eu_it_account_seed(s, DOMAIN, "alice"));
    free(eu_it_account_seed(s, DOMAIN, "bob"));
    char *tok = eu_it_user_token(s, DOMAIN, "alice", "read write");
    char *btok = eu_it_user_token(s, DOMAIN, "bob", "read write");
    struct eu_it_resp r = {0};
    char json[512], path[128];

    char *root = post_json(s, tok, "{\"status\":\"The root & all\"}");
    snprintf(json, sizeof(json), "{\"status\":\"@alice a public reply\",\"in_reply_to_id\":\"%s\"}",
             root);
    char *reply = post_json(s, btok, json);
    snprintf(json, sizeof(json),
             "{\"status\":\"@alice a private reply\",\"in_reply_to_id\":\"%s\","
             "\"visibility\":\"private\"}",
             root);
    free(post_json(s, btok, json));
    snprintf(json, sizeof(json), "{\"status\":\"deeper\",\"in_reply_to_id\":\"%s\"}", reply);
    char *deeper = post_json(s, tok, json);
    char *warned =
        post_json(s, tok, "{\"status\":\"behind the warning\",\"spoiler_text\":\"spoilers!\"}");
    snprintf(path, sizeof(path), "/api/v1/statuses/%s/pin", root);
    eu_it_http(&r, "POST", s->public_port, DOMAIN, path, tok, "{}");
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Enough posts for a second page. */
    char *oldest = NULL;
    for (int i = 0; i < 20; i++) {
        snprintf(json, sizeof(json), "{\"status\":\"filler %d\"}", i);
        char *id = post_json(s, tok, json);
        if (i == 0)
            oldest = id;
        else
            free(id);
    }

    page(s, &r, "/@alice", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *pinned = strstr(r.body, "<h2 id=\"pinned\">Pinned</h2>");
    ck_assert_msg(pinned && strstr(pinned, "The root &amp; all"), "%s", r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "filler 19"));
    ck_assert_ptr_nonnull(strstr(r.body, "<meta property=\"og:type\" content=\"profile\">"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "<meta property=\"og:title\" content=\"alice (@alice@" DOMAIN ")\">"));
    ck_assert_ptr_nonnull(strstr(r.body,
                                 "<link rel=\"alternate\" type=\"application/activity+json\""
                                 " href=\"http://" DOMAIN "/users/alice\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "class=\"avatar\""));
    ck_assert_ptr_null(strstr(r.body, "a private reply"));
    /* The second page: older posts, none of the first's. */
    const char *older = strstr(r.body, "href=\"/@alice?max_id=");
    ck_assert_msg(older != NULL, "no link to older posts: %s", r.body);
    older += strlen("href=\"");
    char next[128];
    snprintf(next, sizeof(next), "%.*s", (int)strcspn(older, "\""), older);
    page(s, &r, next, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(strstr(r.body, "filler 19"));
    ck_assert_ptr_null(strstr(r.body, "id=\"pinned\""));
    ck_assert_ptr_nonnull(strstr(r.body, "spoilers!"));
    ck_assert_ptr_null(strstr(r.body, "Older posts"));
    snprintf(path, sizeof(path), "/@alice/%s\"", root);
    ck_assert_ptr_nonnull(strstr(r.body, path));
    snprintf(path, sizeof(path), "/@alice/%s\"", oldest);
    ck_assert_ptr_null(strstr(r.body, path));
    page(s, &r, "/@alice?max_id=x", "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);

    /* A warned post: collapsed, and its preview says only the warning. */
    snprintf(path, sizeof(path), "/@alice/%s", warned);
    page(s, &r, path, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<details class=\"cw\"><summary>spoilers!</summary>"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "<meta property=\"og:description\" content=\"spoilers!\">"));
    ck_assert_ptr_null(strstr(r.body, "content=\"behind the warning"));

    /* The thread: the root, bob's public reply and its own reply; not the
     * private one. From the middle, the root is earlier in the thread. */
    snprintf(path, sizeof(path), "/@alice/%s", root);
    page(s, &r, path, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *replies = strstr(r.body, "<h2 id=\"replies\">Replies</h2>");
    ck_assert_msg(replies && strstr(replies, "a public reply") && strstr(replies, "deeper"), "%s",
                  r.body);
    ck_assert_ptr_null(strstr(r.body, "a private reply"));
    ck_assert_ptr_nonnull(strstr(r.body, "aria-current=\"page\""));
    ck_assert_ptr_nonnull(strstr(r.body, "<meta property=\"og:type\" content=\"article\">"));
    ck_assert_ptr_nonnull(
        strstr(r.body, "<meta property=\"og:description\" content=\"The root &amp; all\">"));
    snprintf(path, sizeof(path), "/@alice/%s", deeper);
    page(s, &r, path, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *earlier = strstr(r.body, "aria-label=\"Earlier in the thread\"");
    const char *current = strstr(r.body, "aria-current=\"page\"");
    ck_assert_msg(earlier && current && earlier < current && strstr(earlier, "The root"), "%s",
                  r.body);
    /* bob's post is not alice's: its address under alice is no page. */
    snprintf(path, sizeof(path), "/@alice/%s", reply);
    page(s, &r, path, "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);

    free(root);
    free(reply);
    free(deeper);
    free(warned);
    free(oldest);
    free(tok);
    free(btok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * The sign-up page: linked from the sign-in page while sign-ups are open,
 * the tenant's rules and (in approval mode) a reason asked, the API's
 * checks answered beside the fields, a CSRF token bound to the browser's
 * session, the account made unapproved, and nothing but a notice once
 * sign-ups are closed; the decoy's page shows none of it.
 */
START_TEST(test_sign_up_page)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Web Test"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    free(eu_it_account_seed(s, DOMAIN, "alice"));
    admin_ok(s, "POST", "/admin/v1/tenants/" DOMAIN "/rules", "{\"text\":\"Be kind\"}", 200);
    eu_it_tenant_patch(s, DOMAIN, "{\"registrations\":\"approval\"}");
    struct eu_it_resp r = {0};

    page(s, &r, "/auth/sign_in", "text/html");
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"/auth/sign_up\""));

    struct eu_it_webform b = {.s = s, .host = DOMAIN};
    eu_it_webform_send(&b, &r, "GET", "/auth/sign_up", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(b.cookie);
    ck_assert_ptr_nonnull(b.csrf);
    ck_assert_ptr_nonnull(strstr(r.body, "Be kind"));
    ck_assert_ptr_nonnull(strstr(r.body, "<textarea id=\"reason\""));
    ck_assert_ptr_null(strstr(r.body, "date_of_birth"));

    /* Everything wrong at once: each field says what. */
    eu_it_webform_post(&b, &r, "/auth/sign_up",
                       "username=alice&email=new%40mail.example&password=correct-horse"
                       "&password_confirmation=other-horse");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_msg(strstr(r.body, "id=\"username-error\">Username is already taken<") &&
                      strstr(r.body, "id=\"password_confirmation-error\">") &&
                      strstr(r.body, "id=\"agreement-error\">Agreement must be accepted<") &&
                      strstr(r.body, "aria-describedby=\"username-error\""),
                  "%s", r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "value=\"new@mail.example\""));
    ck_assert_ptr_null(strstr(r.body, "correct-horse"));
    ck_assert_ptr_null(strstr(r.body, "email-error"));

    /* Another browser's form (no session of its own) is refused. */
    {
        const char *h[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
        const char *body = "authenticity_token=x&username=carol&email=carol%40mail.example"
                           "&password=correct-horse&password_confirmation=correct-horse"
                           "&agreement=1";
        ck_assert_int_eq(
            eu_it_http_raw(&r, "POST", s->public_port, DOMAIN, "/auth/sign_up", h, body), 0);
        EU_IT_EXPECT_STATUS(&r, 422);
        ck_assert_ptr_nonnull(strstr(r.body, "The form has expired"));
    }

    eu_it_webform_post(&b, &r, "/auth/sign_up",
                       "username=carol&email=carol%40mail.example&password=correct-horse"
                       "&password_confirmation=correct-horse&agreement=1"
                       "&reason=I%20like%20pages");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "Awaiting approval"), "%s", r.body);
    char *db = eu_it_tenant_database(s, DOMAIN);
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char *row = eu_it_pg_execf(db,
                               "SELECT u.approved::text || ',' || u.reason || ',' ||"
                               " (SELECT count(*) FROM oauth_access_tokens t WHERE t.tenant_id = %s"
                               "  AND t.user_id = u.id) FROM users u JOIN accounts a"
                               " ON a.tenant_id = u.tenant_id AND a.id = u.account_id"
                               " WHERE u.tenant_id = %s AND a.username = 'carol'",
                               tid, tid);
    ck_assert_str_eq(row, "false,I like pages,0");
    free(row);

    /* Closed: a notice, no form, and no link from the sign-in page. */
    eu_it_tenant_patch(s, DOMAIN, "{\"registrations\":\"closed\"}");
    page(s, &r, "/auth/sign_up", "text/html");
    EU_IT_EXPECT_STATUS(&r, 403);
    ck_assert_ptr_nonnull(strstr(r.body, "Registrations are closed"));
    ck_assert_ptr_null(strstr(r.body, "<form"));
    page(s, &r, "/auth/sign_in", "text/html");
    ck_assert_ptr_null(strstr(r.body, "/auth/sign_up"));
    eu_it_webform_post(&b, &r, "/auth/sign_up",
                       "username=dave&email=dave%40mail.example&password=correct-horse"
                       "&password_confirmation=correct-horse&agreement=1");
    EU_IT_EXPECT_STATUS(&r, 403);

    /* The decoy's page is its own. */
    {
        const char *h[] = {"Accept: text/html", NULL};
        ck_assert_int_eq(
            eu_it_http_raw(&r, "GET", s->public_port, "decoy.example", "/auth/sign_up", h, NULL),
            0);
    }
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(strstr(r.body, "Be kind"));
    ck_assert_ptr_null(strstr(r.body, "Web Test"));

    free(db);
    free(tid);
    eu_it_webform_free(&b);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

/*
 * /tags/:name: the tag's public posts as the tag timeline shows them to a
 * visitor (not the unlisted ones), OpenGraph for previews, paging by
 * max_id; the decoy's page of the same tag shows none of them.
 */
START_TEST(test_tag_page)
{
    struct eu_it_server *s = eu_it_server_start(NULL);
    json_decref(eu_it_tenant_create(s, DOMAIN, "Web Test"));
    json_decref(eu_it_tenant_create(s, "decoy.example", "Decoy"));
    char *alice = NULL;
    char *tok = eu_it_user_new(s, DOMAIN, "alice", "read write", &alice);
    char *first = post(s, tok, "The first of #Pages", "public");
    free(post(s, tok, "Quietly about #pages", "unlisted"));
    for (int i = 0; i < 20; i++) {
        char text[64];
        snprintf(text, sizeof(text), "Number %d on #pages", i);
        free(post(s, tok, text, "public"));
    }
    struct eu_it_resp r = {0};
    page(s, &r, "/tags/pages", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<h1>#pages</h1>"));
    ck_assert_ptr_nonnull(strstr(r.body, "Number 19 on"));
    ck_assert_ptr_nonnull(strstr(r.body, "<meta property=\"og:title\" content=\"#pages\">"));
    ck_assert_ptr_nonnull(strstr(r.body, "<meta name=\"robots\" content=\"noindex\">"));
    ck_assert_ptr_null(strstr(r.body, "Quietly"));
    ck_assert_ptr_null(strstr(r.body, "The first of"));
    const char *older = strstr(r.body, "href=\"/tags/pages?max_id=");
    ck_assert_ptr_nonnull(older);
    char next[128];
    snprintf(next, sizeof(next), "%.*s", (int)strcspn(older + 6, "\""), older + 6);
    page(s, &r, next, "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "The first of"), "%s", r.body);
    ck_assert_ptr_null(strstr(r.body, "max_id="));
    page(s, &r, "/tags/no-such", "text/html");
    EU_IT_EXPECT_STATUS(&r, 404);
    {
        const char *h[] = {"Accept: text/html", NULL};
        ck_assert_int_eq(
            eu_it_http_raw(&r, "GET", s->public_port, "decoy.example", "/tags/pages", h, NULL), 0);
    }
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(strstr(r.body, "on #pages"));
    ck_assert_ptr_nonnull(strstr(r.body, "No posts with this tag yet."));

    /* A sensitive picture shows its blurhash, decoded into an inline PNG,
     * until the visitor opens it. */
    char *db = eu_it_tenant_database(s, DOMAIN);
    char *tid = eu_it_tenant_id(s, DOMAIN);
    char *pic = eu_it_pg_execf(
        db,
        "WITH n AS (SELECT eunha_next_id() AS id) INSERT INTO media_attachments"
        " (tenant_id, id, account_id, type, state, description, blurhash, meta, file_key,"
        " file_content_type, file_size, preview_key, preview_size)"
        " SELECT %s, n.id, %s, 'image', 'ready', 'a cat', 'LEHV6nWB2yk8pyo0adR*.7kCMdnj',"
        " '{\"original\":{\"width\":640,\"height\":480}}',"
        " '%s/media_attachments/' || n.id || '/original.jpg', 'image/jpeg', 1000,"
        " '%s/media_attachments/' || n.id || '/small.webp', 100 FROM n RETURNING id::text",
        tid, alice, tid, tid);
    char body[256];
    snprintf(body, sizeof(body),
             "{\"status\":\"A picture #cats\",\"media_ids\":[\"%s\"],\"sensitive\":true}", pic);
    free(post_json(s, tok, body));
    page(s, &r, "/tags/cats", "text/html");
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *blur =
        strstr(r.body, "<img class=\"blurhash\" src=\"data:image/png;base64,iVBORw0KGgo");
    const char *real = strstr(r.body, "small.webp");
    ck_assert_msg(blur && real && strstr(r.body, "<details class=\"sensitive\"><summary><span>"),
                  "%s", r.body);
    ck_assert_msg(blur < strstr(r.body, "</summary>") && real > strstr(r.body, "</summary>"),
                  "the picture is not behind the details: %s", r.body);
    free(pic);
    free(db);
    free(tid);
    free(alice);
    free(first);
    free(tok);
    eu_it_resp_free(&r);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("web");
    EU_IT_ADD_TCASE(suite, test_public_pages, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_frame, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_about_pages, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_profile_and_thread, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_sign_up_page, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_tag_page, TIMEOUT);
    return eu_it_run_suite(suite);
}
