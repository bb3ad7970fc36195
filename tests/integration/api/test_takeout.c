/*
 * Taking data out and bringing it in (docs/takeout.md) over real HTTP as
 * a signed-in browser: the session is a web_sessions row the test writes,
 * its cookie sent as the sign-in page would have set it.
 *
 * Exports: each CSV compared byte for byte with what Mastodon's Export
 * writes (headers, columns, order, quoting) with Rails' Content-Disposition,
 * and the export page's counts. Imports: following (merge with a local and
 * a remote account on b.test, whose Accept comes back over HTTP, then
 * overwrite), blocks, mutes, domain blocks, bookmarks and lists, each
 * awaited until the job says finished, garbage rows counted as failures.
 * Each upload waits unconfirmed, its page showing what it will do, until
 * confirmed (or cancelled) with the session's CSRF token; an import whose
 * job died shows as failed; a domain blocking import ends the follows
 * with that domain both ways as the API's block does.
 * Bad uploads (unknown type, no CSRF token, too many rows, broken CSV, the
 * wrong columns) are refused with 422 and leave nothing behind. The decoy
 * tenant in the same placement: its session is no session here, its
 * import is not found here, and its users are never touched.
 *
 * Archive: asked for once (a second time within 7 days is refused), built
 * by the job, downloaded by its owner only, unzipped here with libzip: its
 * outbox holds the public and unlisted posts as Create activities with the
 * media file beside it, and the actor, likes and bookmarks files are
 * there. Past 7 days it is not served, and the removal job deletes it.
 */
#include "world.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define TIMEOUT 240
#define WAIT_MS 30000
#define HOST "a.test"
#define DECOY "d.test"
#define CSRF "csrf-token-of-the-test"
#define FED_TOML                                                                                   \
    "[federation]\nallow_http = true\nallow_private_addresses = true\n"                            \
    "[workers]\nqueue_idle_poll_seconds = 1\n"

/* alice moves her data; amy and ann live beside her, bob and carl on
 * b.test; the decoy has its own alice and amy. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .tenants = {"b.test"},
    .extra_toml = FED_TOML,
    .users = {{"alice"},
              {"amy"},
              {"ann"},
              {"bob", "b.test"},
              {"carl", "b.test"},
              {"dalice", DECOY, "alice"},
              {"damy", DECOY, "amy"}},
};

/* Signs user (an account id) of tenant tid in: a session row whose cookie
 * is cookie. */
static void
sign_in(struct world *w, const char *tid, const char *account_id, const char *cookie)
{
    free(eu_it_world_sql(w,
                         "INSERT INTO web_sessions (tenant_id, user_id, session_hash, csrf_token,"
                         " expires_at) SELECT %s, u.id, encode(sha256('%s'::bytea), 'hex'),"
                         " '" CSRF "', now() + interval '1 day' FROM users u"
                         " WHERE u.tenant_id = %s AND u.account_id = %s",
                         tid, cookie, tid, account_id));
}

/* GET path on host with the session cookie (NULL: none). */
static void
get(struct world *w, struct eu_it_resp *r, const char *host, const char *cookie, const char *path)
{
    char c[256];
    snprintf(c, sizeof c, "Cookie: _eunha_session=%s", cookie ? cookie : "");
    const char *h[] = {c, NULL};
    ck_assert_int_eq(
        eu_it_http_raw(r, "GET", w->s->public_port, host, path, cookie ? h : NULL, NULL), 0);
}

/* POSTs an import upload on host; csrf NULL leaves the token out. */
static void
upload(struct world *w, struct eu_it_resp *r, const char *host, const char *cookie,
       const char *csrf, const char *type, const char *mode, const char *filename, const char *csv)
{
    size_t n = strlen(csv) + 2048;
    char *body = malloc(n);
    size_t o = 0;
    if (csrf)
        o += (size_t)snprintf(body + o, n - o,
                              "--XyZ\r\nContent-Disposition: form-data; "
                              "name=\"authenticity_token\"\r\n\r\n%s\r\n",
                              csrf);
    o += (size_t)snprintf(body + o, n - o,
                          "--XyZ\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\n%s\r\n"
                          "--XyZ\r\nContent-Disposition: form-data; name=\"mode\"\r\n\r\n%s\r\n"
                          "--XyZ\r\nContent-Disposition: form-data; name=\"data\"; "
                          "filename=\"%s\"\r\nContent-Type: text/csv\r\n\r\n%s\r\n--XyZ--\r\n",
                          type, mode, filename, csv);
    char c[256];
    snprintf(c, sizeof c, "Cookie: _eunha_session=%s", cookie);
    const char *h[] = {c, "Content-Type: multipart/form-data; boundary=XyZ", NULL};
    ck_assert_int_eq(
        eu_it_http_raw(r, "POST", w->s->public_port, host, "/settings/imports", h, body), 0);
    free(body);
}

/* POSTs a form (csrf NULL: no token) to path on host with the session
 * cookie. */
static void
post_form(struct world *w, struct eu_it_resp *r, const char *host, const char *cookie,
          const char *csrf, const char *path)
{
    char c[256], body[256];
    snprintf(c, sizeof c, "Cookie: _eunha_session=%s", cookie);
    snprintf(body, sizeof body, "authenticity_token=%s", csrf ? csrf : "");
    const char *h[] = {c, "Content-Type: application/x-www-form-urlencoded", NULL};
    ck_assert_int_eq(eu_it_http_raw(r, "POST", w->s->public_port, host, path, h, body), 0);
}

/* Uploads; returns the id of the unconfirmed import, whose page asks for
 * the confirmation and for which no job waits yet. */
static char *
upload_unconfirmed(struct world *w, const char *type, const char *mode, const char *csv)
{
    struct eu_it_resp r = {0};
    upload(w, &r, HOST, "alice-cookie", CSRF, type, mode, "data.csv", csv);
    EU_IT_EXPECT_STATUS(&r, 302);
    const char *loc = eu_it_resp_header(&r, "Location");
    ck_assert_msg(loc && strncmp(loc, "/settings/imports/", 18) == 0, "Location %s", loc);
    char *id = strdup(loc + 18);
    char path[128];
    snprintf(path, sizeof path, "/settings/imports/%s", id);
    get(w, &r, HOST, "alice-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "data-state=\"unconfirmed\""), "%s", r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "/confirm\"><input type=\"hidden\""
                                         " name=\"authenticity_token\" value=\"" CSRF "\""));
    ck_assert_int_eq(eu_it_world_sql_long(w,
                                          "SELECT count(*) FROM jobs WHERE kind = 'bulk_import'"
                                          " AND payload ->> 'import_id' = '%s'",
                                          id),
                     0);
    eu_it_resp_free(&r);
    return id;
}

/* Confirms import id as its page's button does. */
static void
confirm(struct world *w, const char *id)
{
    struct eu_it_resp r = {0};
    char path[128];
    snprintf(path, sizeof path, "/settings/imports/%s/confirm", id);
    post_form(w, &r, HOST, "alice-cookie", CSRF, path);
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_resp_free(&r);
}

/* Uploads, confirms and waits until the import is finished; returns its
 * id. */
static char *
import(struct world *w, const char *type, const char *mode, const char *csv)
{
    char *id = upload_unconfirmed(w, type, mode, csv);
    confirm(w, id);
    long long until = eu_it_now_ms() + WAIT_MS;
    for (;;) {
        char *st = eu_it_world_sql(w, "SELECT state FROM bulk_imports WHERE id = %s", id);
        bool done = st && strcmp(st, "finished") == 0;
        free(st);
        if (done)
            break;
        ck_assert_msg(eu_it_now_ms() < until, "import %s of %s not finished", id, type);
        eu_it_sleep_ms(100);
    }
    return id;
}

/* The import's page shows state and progress: processed, imported,
 * failures. */
static void
expect_progress(struct world *w, const char *id, long total, long imported)
{
    struct eu_it_resp r = {0};
    char path[128], want[256];
    snprintf(path, sizeof path, "/settings/imports/%s", id);
    get(w, &r, HOST, "alice-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(want, sizeof want,
             "data-state=\"finished\" data-total=\"%ld\" data-processed=\"%ld\""
             " data-imported=\"%ld\" data-failures=\"%ld\"",
             total, total, imported, total - imported);
    ck_assert_msg(strstr(r.body, want), "want %s in %s", want, r.body);
    eu_it_resp_free(&r);
}

static long
count(struct world *w, const char *what)
{
    return eu_it_world_sql_long(w, "%s", what);
}

/* Waits until the count what is want (what another server does). */
static void
wait_count(struct world *w, const char *what, long want, const char *label)
{
    long long until = eu_it_now_ms() + WAIT_MS;
    while (count(w, what) != want) {
        ck_assert_msg(eu_it_now_ms() < until, "%s never came", label);
        eu_it_sleep_ms(100);
    }
}

/* ------------------------------------------------------------------ exports */

START_TEST(test_exports)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    const char *alice = eu_it_id(&w, "alice"), *amy = eu_it_id(&w, "amy");
    const char *ann = eu_it_id(&w, "ann");
    char *zed = eu_it_remote_account(w.db, w.tid, "http://remote.example/users/zed", false);
    char *yan = eu_it_remote_account(w.db, w.tid, "http://other.example/users/yan", false);
    sign_in(&w, w.tid, alice, "alice-cookie");
    sign_in(&w, w.decoy_tid, eu_it_id(&w, "dalice"), "decoy-cookie");

    /* What alice has, oldest first. */
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id,"
                         " show_reblogs, notify, languages) VALUES (%s, %s, %s, true, false, NULL),"
                         " (%s, %s, %s, false, true, '{en,de}')",
                         w.tid, alice, amy, w.tid, alice, zed));
    free(eu_it_world_sql(&w,
                         "INSERT INTO blocks (tenant_id, account_id, target_account_id)"
                         " VALUES (%s, %s, %s), (%s, %s, %s)",
                         w.tid, alice, ann, w.tid, alice, yan));
    free(eu_it_world_sql(&w,
                         "INSERT INTO mutes (tenant_id, account_id, target_account_id,"
                         " hide_notifications) VALUES (%s, %s, %s, false)",
                         w.tid, alice, zed));
    free(eu_it_world_sql(&w,
                         "INSERT INTO account_domain_blocks (tenant_id, account_id, domain)"
                         " VALUES (%s, %s, 'spam.example'), (%s, %s, 'worse.example')",
                         w.tid, alice, w.tid, alice));
    free(eu_it_world_sql(&w,
                         "INSERT INTO lists (tenant_id, account_id, title) VALUES"
                         " (%s, %s, 'Friends, \"close\"'), (%s, %s, 'Far')",
                         w.tid, alice, w.tid, alice));
    free(eu_it_world_sql(&w,
                         "INSERT INTO list_accounts (tenant_id, list_id, account_id)"
                         " SELECT %s, l.id, x.id FROM lists l, (VALUES (%s::bigint), (%s))"
                         " x(id) WHERE l.tenant_id = %s AND l.account_id = %s"
                         " AND l.title LIKE 'Friends%%'",
                         w.tid, amy, zed, w.tid, alice));
    free(eu_it_world_sql(&w,
                         "INSERT INTO list_accounts (tenant_id, list_id, account_id)"
                         " SELECT %s, l.id, %s FROM lists l WHERE l.tenant_id = %s"
                         " AND l.account_id = %s AND l.title = 'Far'",
                         w.tid, zed, w.tid, alice));
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "amy"), "{\"status\":\"mine\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *sid = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/bookmark",
                sid);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* No session, or the decoy's session, is sent to sign in. */
    get(&w, &r, HOST, NULL, "/settings/exports/follows.csv");
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"),
                     "/auth/sign_in?return_to=%2Fsettings%2Fexports%2Ffollows.csv");
    get(&w, &r, HOST, "decoy-cookie", "/settings/export");
    EU_IT_EXPECT_STATUS(&r, 302);

    get(&w, &r, HOST, "alice-cookie", "/settings/exports/follows.csv");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "text/csv");
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Disposition"),
                     "attachment; filename=\"following_accounts.csv\";"
                     " filename*=UTF-8''following_accounts.csv");
    ck_assert_str_eq(r.body, "Account address,Show boosts,Notify on new posts,Languages\n"
                             "zed@remote.example,false,true,\"en, de\"\n"
                             "amy@a.test,true,false,\n");
    get(&w, &r, HOST, "alice-cookie", "/settings/exports/blocks.csv");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Disposition"),
                     "attachment; filename=\"blocked_accounts.csv\";"
                     " filename*=UTF-8''blocked_accounts.csv");
    ck_assert_str_eq(r.body, "yan@other.example\nann@a.test\n");
    get(&w, &r, HOST, "alice-cookie", "/settings/exports/mutes.csv");
    ck_assert_str_eq(r.body, "Account address,Hide notifications\nzed@remote.example,false\n");
    get(&w, &r, HOST, "alice-cookie", "/settings/exports/domain_blocks.csv");
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Disposition"),
                     "attachment; filename=\"blocked_domains.csv\";"
                     " filename*=UTF-8''blocked_domains.csv");
    ck_assert_str_eq(r.body, "spam.example\nworse.example\n");
    get(&w, &r, HOST, "alice-cookie", "/settings/exports/lists.csv");
    char want[512];
    ck_assert_int_lt(atoll(amy), atoll(zed));
    ck_assert_str_eq(r.body, "\"Friends, \"\"close\"\"\",amy@a.test\n"
                             "\"Friends, \"\"close\"\"\",zed@remote.example\n"
                             "Far,zed@remote.example\n");
    get(&w, &r, HOST, "alice-cookie", "/settings/exports/bookmarks.csv");
    snprintf(want, sizeof want, "http://a.test/users/amy/statuses/%s\n", sid);
    ck_assert_str_eq(r.body, want);

    get(&w, &r, HOST, "alice-cookie", "/settings/export");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"count-follows\">2<"));
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"count-lists\">2<"));
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"count-blocks\">2<"));
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"count-mutes\">1<"));
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"count-domain_blocks\">2<"));
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"count-bookmarks\">1<"));
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"/settings/exports/follows.csv\""));

    /* The decoy's alice, on her own host, has nothing. */
    get(&w, &r, DECOY, "decoy-cookie", "/settings/exports/follows.csv");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "Account address,Show boosts,Notify on new posts,Languages\n");
    get(&w, &r, DECOY, "alice-cookie", "/settings/exports/blocks.csv");
    EU_IT_EXPECT_STATUS(&r, 302);

    free(sid);
    free(zed);
    free(yan);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------------ imports */

START_TEST(test_imports)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    const char *alice = eu_it_id(&w, "alice"), *amy = eu_it_id(&w, "amy");
    const char *ann = eu_it_id(&w, "ann");
    sign_in(&w, w.tid, alice, "alice-cookie");
    sign_in(&w, w.decoy_tid, eu_it_id(&w, "dalice"), "decoy-cookie");
    char q[1024];

    /* Following, merged: a local account (with the local domain), a remote
     * one on b.test, and rows that name nobody. */
    char *id = import(&w, "following", "merge",
                      "Account address,Show boosts,Notify on new posts,Languages\n"
                      "amy@a.test,false,true,\"en, fr\"\n"
                      "@bob@b.test,true,false,\n"
                      "nobody@a.test,true,false,\n"
                      "not an account!!,true,false,\n");
    expect_progress(&w, id, 4, 2);
    free(id);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM follows WHERE tenant_id = %s AND account_id = %s"
             " AND target_account_id = %s AND NOT show_reblogs AND notify"
             " AND languages = '{en,fr}'",
             w.tid, alice, amy);
    ck_assert_int_eq(count(&w, q), 1);
    /* bob's server accepts alice's Follow. */
    long long until = eu_it_now_ms() + WAIT_MS;
    for (;;) {
        snprintf(q, sizeof q,
                 "SELECT count(*) FROM follows f JOIN accounts a ON a.tenant_id = f.tenant_id"
                 " AND a.id = f.target_account_id WHERE f.tenant_id = %s AND f.account_id = %s"
                 " AND a.username = 'bob' AND a.domain = 'b.test'",
                 w.tid, alice);
        if (count(&w, q) == 1)
            break;
        ck_assert_msg(eu_it_now_ms() < until, "bob@b.test never accepted");
        eu_it_sleep_ms(200);
    }
    snprintf(q, sizeof q,
             "SELECT count(*) FROM follows f JOIN accounts a ON a.tenant_id = f.tenant_id"
             " AND a.id = f.account_id WHERE f.tenant_id = %s AND f.target_account_id = %s"
             " AND a.username = 'alice' AND a.domain = 'a.test'",
             eu_it_world_tid(&w, "b.test"), eu_it_id(&w, "bob"));
    ck_assert_int_eq(count(&w, q), 1);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM notifications WHERE tenant_id = %s AND account_id = %s"
             " AND type = 'follow'",
             w.tid, amy);
    ck_assert_int_eq(count(&w, q), 1);

    /* Overwrite: only bob stays followed. */
    id = import(&w, "following", "overwrite", "bob@b.test\n");
    expect_progress(&w, id, 1, 1);
    free(id);
    snprintf(q, sizeof q,
             "SELECT string_agg(a.username, ',' ORDER BY a.username) FROM follows f"
             " JOIN accounts a ON a.tenant_id = f.tenant_id AND a.id = f.target_account_id"
             " WHERE f.tenant_id = %s AND f.account_id = %s",
             w.tid, alice);
    char *s = eu_it_world_sql(&w, "%s", q);
    ck_assert_str_eq(s, "bob");
    free(s);

    /* Blocks, mutes, domain blocks. */
    id = import(&w, "blocking", "merge", "ann@a.test\ncarl@b.test\n");
    expect_progress(&w, id, 2, 2);
    free(id);
    snprintf(q, sizeof q, "SELECT count(*) FROM blocks WHERE tenant_id = %s AND account_id = %s",
             w.tid, alice);
    ck_assert_int_eq(count(&w, q), 2);
    /* carl's server hears of the block, then of its undoing. */
    char carl_blocked[512];
    snprintf(carl_blocked, sizeof carl_blocked,
             "SELECT count(*) FROM blocks b JOIN accounts a ON a.tenant_id = b.tenant_id"
             " AND a.id = b.account_id WHERE b.tenant_id = %s AND b.target_account_id = %s"
             " AND a.username = 'alice' AND a.domain = 'a.test'",
             eu_it_world_tid(&w, "b.test"), eu_it_id(&w, "carl"));
    wait_count(&w, carl_blocked, 1, "the Block on b.test");
    id = import(&w, "blocking", "overwrite", "Account address\nann\n");
    expect_progress(&w, id, 1, 1);
    free(id);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM blocks WHERE tenant_id = %s AND account_id = %s"
             " AND target_account_id = %s",
             w.tid, alice, ann);
    ck_assert_int_eq(count(&w, q), 1);
    snprintf(q, sizeof q, "SELECT count(*) FROM blocks WHERE tenant_id = %s AND account_id = %s",
             w.tid, alice);
    ck_assert_int_eq(count(&w, q), 1);
    wait_count(&w, carl_blocked, 0, "the Undo of the Block on b.test");
    id = import(&w, "muting", "merge", "Account address,Hide notifications\namy,false\n");
    expect_progress(&w, id, 1, 1);
    free(id);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM mutes WHERE tenant_id = %s AND account_id = %s"
             " AND target_account_id = %s AND NOT hide_notifications",
             w.tid, alice, amy);
    ck_assert_int_eq(count(&w, q), 1);
    id = import(&w, "domain_blocking", "merge", "Spam.Example\nworse.example\n");
    expect_progress(&w, id, 2, 2);
    free(id);
    id = import(&w, "domain_blocking", "overwrite", "#domain\nworse.example\n");
    free(id);
    snprintf(q, sizeof q,
             "SELECT string_agg(domain, ',') FROM account_domain_blocks WHERE tenant_id = %s"
             " AND account_id = %s",
             w.tid, alice);
    s = eu_it_world_sql(&w, "%s", q);
    ck_assert_str_eq(s, "worse.example");
    free(s);

    /* Bookmarks: a local status by its URI, and garbage. */
    struct eu_it_resp r = {0};
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "amy"), "{\"status\":\"keep me\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char csv[512];
    snprintf(csv, sizeof csv, "http://a.test/users/amy/statuses/%s\nhttp://a.test/nothing\n",
             eu_it_json_str(&r, "id"));
    id = import(&w, "bookmarks", "merge", csv);
    expect_progress(&w, id, 2, 1);
    free(id);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM bookmarks WHERE tenant_id = %s AND account_id = %s"
             " AND status_id = %s",
             w.tid, alice, eu_it_json_str(&r, "id"));
    ck_assert_int_eq(count(&w, q), 1);

    /* Lists: made, members followed and added. */
    id = import(&w, "lists", "merge", "Close,amy@a.test\nClose,bob@b.test\nWork,amy\n");
    expect_progress(&w, id, 3, 3);
    free(id);
    snprintf(q, sizeof q,
             "SELECT string_agg(l.title || ':' || a.username, ',' ORDER BY l.title, a.username)"
             " FROM lists l JOIN list_accounts la ON la.tenant_id = l.tenant_id"
             " AND la.list_id = l.id JOIN accounts a ON a.tenant_id = l.tenant_id"
             " AND a.id = la.account_id WHERE l.tenant_id = %s AND l.account_id = %s",
             w.tid, alice);
    s = eu_it_world_sql(&w, "%s", q);
    ck_assert_str_eq(s, "Close:amy,Close:bob,Work:amy");
    free(s);
    id = import(&w, "lists", "overwrite", "List name,Account address\nWork,bob@b.test\n");
    free(id);
    s = eu_it_world_sql(&w, "%s", q);
    ck_assert_str_eq(s, "Work:bob");
    free(s);

    /* The page lists them all. */
    get(&w, &r, HOST, "alice-cookie", "/settings/imports");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"authenticity_token\" value=\"" CSRF "\""));
    snprintf(q, sizeof q,
             "SELECT count(*) FROM bulk_imports WHERE tenant_id = %s AND state = 'finished'",
             w.tid);
    ck_assert_int_eq(count(&w, q), 10);

    /* The decoy: its import is not found here, and nothing touched its
     * users. */
    upload(&w, &r, DECOY, "decoy-cookie", CSRF, "following", "merge", "f.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 302);
    char *decoy_import = strdup(eu_it_resp_header(&r, "Location"));
    get(&w, &r, HOST, "alice-cookie", decoy_import);
    EU_IT_EXPECT_STATUS(&r, 404);
    /* Nor can it be confirmed or cancelled from here. */
    snprintf(q, sizeof q, "%s/confirm", decoy_import);
    post_form(&w, &r, HOST, "alice-cookie", CSRF, q);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(q, sizeof q, "%s/cancel", decoy_import);
    post_form(&w, &r, HOST, "alice-cookie", CSRF, q);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(q, sizeof q, "%s/confirm", decoy_import);
    post_form(&w, &r, DECOY, "decoy-cookie", CSRF, q);
    EU_IT_EXPECT_STATUS(&r, 302);
    free(decoy_import);
    upload(&w, &r, HOST, "decoy-cookie", CSRF, "following", "merge", "f.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Location"), "/auth/sign_in"));
    snprintf(q, sizeof q,
             "SELECT count(*) FROM follows WHERE tenant_id = %s AND target_account_id = %s",
             w.decoy_tid, eu_it_id(&w, "damy"));
    until = eu_it_now_ms() + WAIT_MS;
    while (count(&w, q) != 1) {
        ck_assert_msg(eu_it_now_ms() < until, "the decoy's own import never ran");
        eu_it_sleep_ms(100);
    }
    snprintf(q, sizeof q,
             "SELECT (SELECT count(*) FROM follows WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM blocks WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM mutes WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM lists WHERE tenant_id = %s)"
             " + (SELECT count(*) FROM bookmarks WHERE tenant_id = %s)",
             w.decoy_tid, w.decoy_tid, w.decoy_tid, w.decoy_tid, w.decoy_tid);
    ck_assert_int_eq(count(&w, q), 1);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Mastodon 4.2's confirmation: an upload does nothing until confirmed on
 * its page (what it will do shown first), can be cancelled, is confirmed
 * once; an import whose job died shows as failed with the rows done; a
 * domain blocking import ends the follows both ways as the API's block. */
START_TEST(test_confirmation)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    const char *alice = eu_it_id(&w, "alice");
    sign_in(&w, w.tid, alice, "alice-cookie");
    struct eu_it_resp r = {0};
    char q[1024], path[128];

    /* What the page says it will do. */
    char *id = upload_unconfirmed(&w, "following", "overwrite",
                                  "Account address,Show boosts,Notify on new posts,Languages\n"
                                  "amy@a.test,false,true,\"en, fr\"\nann,true,false,\n"
                                  "<b>x</b>,true,false,\n");
    snprintf(path, sizeof path, "/settings/imports/%s", id);
    get(&w, &r, HOST, "alice-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<dd id=\"import-type\">Following list</dd>"));
    ck_assert_ptr_nonnull(strstr(r.body, "<dd id=\"import-mode\">Overwrite</dd>"));
    ck_assert_ptr_nonnull(strstr(r.body, "<dd id=\"import-rows\">3</dd>"));
    ck_assert_ptr_nonnull(strstr(r.body, "<td>amy</td><td>false</td><td>true</td>"
                                         "<td>en, fr</td>"));
    ck_assert_ptr_nonnull(strstr(r.body, "&lt;b&gt;x&lt;/b&gt;"));
    ck_assert_ptr_null(strstr(r.body, "<b>x</b>"));
    ck_assert_ptr_nonnull(strstr(r.body, "<h1>"));
    /* A confirmation without the session's token does nothing. */
    snprintf(path, sizeof path, "/settings/imports/%s/confirm", id);
    post_form(&w, &r, HOST, "alice-cookie", "wrong", path);
    EU_IT_EXPECT_STATUS(&r, 422);
    post_form(&w, &r, HOST, "alice-cookie", NULL, path);
    EU_IT_EXPECT_STATUS(&r, 422);
    snprintf(q, sizeof q, "SELECT state FROM bulk_imports WHERE id = %s", id);
    char *st = eu_it_world_sql(&w, "%s", q);
    ck_assert_str_eq(st, "unconfirmed");
    free(st);
    /* Cancelled: gone with its rows, nothing followed, and no longer
     * confirmable. */
    snprintf(path, sizeof path, "/settings/imports/%s/cancel", id);
    post_form(&w, &r, HOST, "alice-cookie", CSRF, path);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/settings/imports");
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM bulk_imports"), 0);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM bulk_import_rows"), 0);
    snprintf(path, sizeof path, "/settings/imports/%s/confirm", id);
    post_form(&w, &r, HOST, "alice-cookie", CSRF, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_sleep_ms(1500); /* a queue poll: still nothing followed */
    snprintf(q, sizeof q, "SELECT count(*) FROM follows WHERE tenant_id = %s", w.tid);
    ck_assert_int_eq(count(&w, q), 0);
    free(id);

    /* Confirmed once; a second confirmation finds nothing to confirm. */
    id = import(&w, "following", "merge", "bob@b.test\n");
    snprintf(path, sizeof path, "/settings/imports/%s/confirm", id);
    post_form(&w, &r, HOST, "alice-cookie", CSRF, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    snprintf(path, sizeof path, "/settings/imports/%s/cancel", id);
    post_form(&w, &r, HOST, "alice-cookie", CSRF, path);
    EU_IT_EXPECT_STATUS(&r, 404);
    free(id);

    /* A domain block by import ends alice's follow of bob@b.test (whose
     * server accepted it) and bob's follow of her, as the API's would. */
    char alice_follows_bob[512], bob_follows_alice[512], remote_side[512];
    snprintf(alice_follows_bob, sizeof alice_follows_bob,
             "SELECT count(*) FROM follows f JOIN accounts a ON a.tenant_id = f.tenant_id"
             " AND a.id = f.target_account_id WHERE f.tenant_id = %s AND f.account_id = %s"
             " AND a.domain = 'b.test'",
             w.tid, alice);
    wait_count(&w, alice_follows_bob, 1, "bob's Accept");
    free(eu_it_world_sql(&w,
                         "INSERT INTO follows (tenant_id, account_id, target_account_id)"
                         " SELECT %s, a.id, %s FROM accounts a WHERE a.tenant_id = %s"
                         " AND a.username = 'bob' AND a.domain = 'b.test'",
                         w.tid, alice, w.tid));
    snprintf(bob_follows_alice, sizeof bob_follows_alice,
             "SELECT count(*) FROM follows f JOIN accounts a ON a.tenant_id = f.tenant_id"
             " AND a.id = f.account_id WHERE f.tenant_id = %s AND f.target_account_id = %s"
             " AND a.domain = 'b.test'",
             w.tid, alice);
    ck_assert_int_eq(count(&w, bob_follows_alice), 1);
    snprintf(remote_side, sizeof remote_side,
             "SELECT count(*) FROM follows f JOIN accounts a ON a.tenant_id = f.tenant_id"
             " AND a.id = f.account_id WHERE f.tenant_id = %s AND f.target_account_id = %s"
             " AND a.username = 'alice' AND a.domain = 'a.test'",
             eu_it_world_tid(&w, "b.test"), eu_it_id(&w, "bob"));
    ck_assert_int_eq(count(&w, remote_side), 1);
    id = import(&w, "domain_blocking", "merge", "B.test\nnot a domain!\n");
    expect_progress(&w, id, 2, 1);
    free(id);
    ck_assert_int_eq(count(&w, alice_follows_bob), 0);
    ck_assert_int_eq(count(&w, bob_follows_alice), 0);
    /* b.test hears the Undo of alice's Follow. */
    wait_count(&w, remote_side, 0, "the Undo of the Follow on b.test");

    /* A job the queue gave up on: the import shows as failed with the
     * row it got through, not as under way. */
    id = upload_unconfirmed(&w, "blocking", "merge", "ann\namy\n");
    free(eu_it_world_sql(&w,
                         "WITH d AS (DELETE FROM bulk_import_rows WHERE id = (SELECT min(id)"
                         " FROM bulk_import_rows WHERE bulk_import_id = %s))"
                         " UPDATE bulk_imports SET state = 'in_progress', processed_items = 1,"
                         " imported_items = 1 WHERE id = %s",
                         id, id));
    free(eu_it_world_sql(&w,
                         "INSERT INTO jobs (tenant_id, kind, payload, state, attempts,"
                         " last_error) VALUES (%s, 'bulk_import', '{\"import_id\": \"%s\"}',"
                         " 'dead', 25, 'bulk import: reading rows failed')",
                         w.tid, id));
    snprintf(path, sizeof path, "/settings/imports/%s", id);
    get(&w, &r, HOST, "alice-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(strstr(r.body, "data-state=\"failed\" data-total=\"2\" data-processed=\"1\""
                                 " data-imported=\"1\""),
                  "%s", r.body);
    ck_assert_ptr_nonnull(strstr(r.body, "id=\"import-failed\""));
    get(&w, &r, HOST, "alice-cookie", "/settings/imports");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(q, sizeof q, "id=\"import-%s\" data-state=\"failed\"", id);
    ck_assert_ptr_nonnull(strstr(r.body, q));
    free(id);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ------------------------------------------------------------------ archive */

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return sz * n;
}

/* Uploads a PNG as tok's media on host; returns its id (caller frees). */
static char *
upload_png(struct world *w, const char *tok)
{
    size_t len;
    unsigned char *png = eu_it_make_png(20, 10, &len);
    CURL *c = curl_easy_init();
    char url[256], auth[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/v1/media", w->s->public_port);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
    struct curl_slist *hl = curl_slist_append(NULL, auth);
    hl = curl_slist_append(hl, "Host: " HOST);
    hl = curl_slist_append(hl, "Expect:");
    curl_mime *mime = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "file");
    curl_mime_data(part, (const char *)png, len);
    curl_mime_filename(part, "p.png");
    curl_mime_type(part, "image/png");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    ck_assert_int_eq(status, 200);
    curl_mime_free(mime);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    free(png);
    return eu_it_world_sql(w,
                           "SELECT id FROM media_attachments WHERE tenant_id = %s"
                           " ORDER BY id DESC LIMIT 1",
                           w->tid);
}

/* The entry name of zip z as parsed JSON (caller decrefs). */
static json_t *
zip_json(zip_t *z, const char *name)
{
    zip_stat_t st;
    ck_assert_msg(zip_stat(z, name, 0, &st) == 0, "%s not in the archive", name);
    char *buf = malloc(st.size + 1);
    zip_file_t *f = zip_fopen(z, name, 0);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(zip_fread(f, buf, st.size), (zip_int64_t)st.size);
    zip_fclose(f);
    json_t *j = json_loadb(buf, st.size, 0, NULL);
    free(buf);
    ck_assert_msg(j != NULL, "%s is not JSON", name);
    return j;
}

START_TEST(test_archive)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    const char *alice = eu_it_id(&w, "alice");
    sign_in(&w, w.tid, alice, "alice-cookie");
    sign_in(&w, w.tid, eu_it_id(&w, "amy"), "amy-cookie");
    sign_in(&w, w.decoy_tid, eu_it_id(&w, "dalice"), "decoy-cookie");
    struct eu_it_resp r = {0};
    char body[512], path[256];

    /* alice's posts: public with a picture, unlisted, private (left out). */
    char *media = upload_png(&w, eu_it_tok(&w, "alice"));
    snprintf(body, sizeof body, "{\"status\":\"hello archive\",\"media_ids\":[\"%s\"]}", media);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"status\":\"quiet\",\"visibility\":\"unlisted\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"),
                "{\"status\":\"secret\",\"visibility\":\"private\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "amy"), "{\"status\":\"likeable\"}",
                "/api/v1/statuses");
    char *liked = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/statuses/%s/favourite", liked);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), NULL, "/api/v1/statuses/%s/bookmark",
                liked);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Asked for with the form's token; once. */
    char c[128];
    snprintf(c, sizeof c, "Cookie: _eunha_session=alice-cookie");
    const char *h[] = {c, "Content-Type: application/x-www-form-urlencoded", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w.s->public_port, HOST, "/settings/export", h,
                                    "authenticity_token=wrong"),
                     0);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM backups"), 0);
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w.s->public_port, HOST, "/settings/export", h,
                                    "authenticity_token=" CSRF),
                     0);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_int_eq(eu_it_http_raw(&r, "POST", w.s->public_port, HOST, "/settings/export", h,
                                    "authenticity_token=" CSRF),
                     0);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "once every 7 days"));
    char *id = eu_it_world_sql(&w, "SELECT id FROM backups WHERE tenant_id = %s", w.tid);
    long long until = eu_it_now_ms() + WAIT_MS;
    for (;;) {
        char *done = eu_it_world_sql(&w, "SELECT processed FROM backups WHERE id = %s", id);
        bool ok = done && strcmp(done, "t") == 0;
        free(done);
        if (ok)
            break;
        ck_assert_msg(eu_it_now_ms() < until, "archive never built");
        eu_it_sleep_ms(100);
    }
    get(&w, &r, HOST, "alice-cookie", "/settings/export");
    snprintf(path, sizeof path, "href=\"/backups/%s/download\"", id);
    ck_assert_msg(strstr(r.body, path), "no link in %s", r.body);

    /* Only alice gets it: not amy, not the decoy's session, not on the
     * decoy's host, not through /system/. */
    snprintf(path, sizeof path, "/backups/%s/download", id);
    get(&w, &r, HOST, "amy-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 404);
    get(&w, &r, HOST, "decoy-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 302);
    get(&w, &r, DECOY, "decoy-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 404);
    char *key = eu_it_world_sql(&w, "SELECT file_key FROM backups WHERE id = %s", id);
    char sys[512];
    snprintf(sys, sizeof sys, "/system/%s", key);
    get(&w, &r, HOST, NULL, sys);
    EU_IT_EXPECT_STATUS(&r, 404);

    get(&w, &r, HOST, "alice-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(eu_it_resp_header(&r, "Content-Type"), "application/zip");
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Content-Disposition"), "attachment"));
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(r.body, r.body_len, 0, &ze);
    zip_t *z = zip_open_from_source(src, ZIP_RDONLY, &ze);
    ck_assert_ptr_nonnull(z);
    json_t *outbox = zip_json(z, "outbox.json");
    ck_assert_str_eq(json_string_value(json_object_get(outbox, "type")), "OrderedCollection");
    ck_assert_int_eq(json_integer_value(json_object_get(outbox, "totalItems")), 2);
    json_t *items = json_object_get(outbox, "orderedItems");
    bool saw_hello = false, saw_quiet = false;
    const char *file = NULL;
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        ck_assert_str_eq(json_string_value(json_object_get(it, "type")), "Create");
        const char *content = json_string_value(eu_it_jpath(it, "object.content"));
        ck_assert_ptr_null(strstr(content, "secret"));
        saw_quiet |= strstr(content, "quiet") != NULL;
        if (strstr(content, "hello archive")) {
            saw_hello = true;
            file = json_string_value(eu_it_jpath(it, "object.attachment.0.url"));
        }
    }
    ck_assert(saw_hello && saw_quiet);
    ck_assert_msg(file && strncmp(file, "media_attachments/", 18) == 0, "attachment %s", file);
    zip_stat_t st;
    ck_assert_msg(zip_stat(z, file, 0, &st) == 0 && st.size > 0, "%s not in the archive", file);
    json_t *actor = zip_json(z, "actor.json");
    ck_assert_str_eq(json_string_value(json_object_get(actor, "preferredUsername")), "alice");
    ck_assert_str_eq(json_string_value(json_object_get(actor, "outbox")), "outbox.json");
    json_t *likes = zip_json(z, "likes.json");
    json_t *marks = zip_json(z, "bookmarks.json");
    snprintf(body, sizeof body, "http://a.test/users/amy/statuses/%s", liked);
    ck_assert_str_eq(json_string_value(eu_it_jpath(likes, "orderedItems.0")), body);
    ck_assert_str_eq(json_string_value(eu_it_jpath(marks, "orderedItems.0")), body);
    json_decref(outbox);
    json_decref(actor);
    json_decref(likes);
    json_decref(marks);
    zip_close(z);

    /* Past 7 days it is not served; the removal job takes row and file. */
    free(eu_it_world_sql(
        &w, "UPDATE backups SET created_at = now() - interval '8 days' WHERE id = %s", id));
    get(&w, &r, HOST, "alice-cookie", path);
    EU_IT_EXPECT_STATUS(&r, 404);
    free(eu_it_world_sql(&w,
                         "UPDATE jobs SET run_at = now() WHERE tenant_id = %s"
                         " AND kind = 'takeout_archive_remove'",
                         w.tid));
    until = eu_it_now_ms() + WAIT_MS;
    while (count(&w, "SELECT count(*) FROM backups") != 0) {
        ck_assert_msg(eu_it_now_ms() < until, "archive never removed");
        eu_it_sleep_ms(100);
    }

    free(key);
    free(id);
    free(liked);
    free(media);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* ---------------------------------------------------------------- bad input */

START_TEST(test_bad_uploads)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    sign_in(&w, w.tid, eu_it_id(&w, "alice"), "alice-cookie");
    struct eu_it_resp r = {0};

    upload(&w, &r, HOST, "alice-cookie", CSRF, "statuses", "merge", "x.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Type is not included in the list"));
    upload(&w, &r, HOST, "alice-cookie", NULL, "following", "merge", "x.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    upload(&w, &r, HOST, "alice-cookie", "wrong", "following", "merge", "x.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    upload(&w, &r, HOST, "alice-cookie", CSRF, "following", "sideways", "x.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    upload(&w, &r, HOST, "alice-cookie", CSRF, "following", "merge", "x.csv", "\"amy\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid CSV file"));
    upload(&w, &r, HOST, "alice-cookie", CSRF, "following", "merge", "x.csv", "am\"y\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    upload(&w, &r, HOST, "alice-cookie", CSRF, "following", "merge", "x.csv", "\n\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Empty CSV file"));
    upload(&w, &r, HOST, "alice-cookie", CSRF, "lists", "merge", "x.csv", "Account address\namy\n");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Incompatible with the selected import type"));
    /* One row past Mastodon's 20000. */
    size_t n = 20001 * 6 + 1;
    char *big = malloc(n);
    for (size_t i = 0; i < 20001; i++)
        memcpy(big + i * 6, "amy@x\n", 6);
    big[n - 1] = '\0';
    upload(&w, &r, HOST, "alice-cookie", CSRF, "blocking", "merge", "x.csv", big);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "more than 20000 rows"));
    free(big);
    /* No session: the sign-in page. */
    upload(&w, &r, HOST, "nobody", CSRF, "following", "merge", "x.csv", "amy\n");
    EU_IT_EXPECT_STATUS(&r, 302);
    get(&w, &r, HOST, "alice-cookie", "/settings/imports/12345");
    EU_IT_EXPECT_STATUS(&r, 404);
    get(&w, &r, HOST, "alice-cookie", "/settings/imports/abc");
    EU_IT_EXPECT_STATUS(&r, 404);

    ck_assert_int_eq(count(&w, "SELECT count(*) FROM bulk_imports"), 0);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM bulk_import_rows"), 0);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM follows"), 0);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM blocks"), 0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("takeout");
    EU_IT_ADD_TCASE(s, test_exports, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_imports, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_confirmation, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_archive, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_bad_uploads, TIMEOUT);
    return eu_it_run_suite(s);
}
