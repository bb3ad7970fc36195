/*
 * Preview cards and trending links (issue 32, src/social/cards.c,
 * src/api/cards.c, src/api/trends.c) against a page server on loopback
 * (card_pages.py beside this file), reached as pages.test through
 * [federation] hosts with the private-address guard on: OpenGraph and
 * oEmbed cards with their exact bodies, the card endpoint, a noindex page,
 * a redirect to a private address, a page that never finishes and one
 * past the size limit (no card, and the jobs end), trending links before
 * and after the staff's review with its refusals and audit rows, and a
 * decoy tenant of the same placement that sees none of it.
 */
#include "world.h"

#include <arpa/inet.h>
#include <check.h>
#include <libgen.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define TIMEOUT 240
#define HOST "cards.example"
#define DECOY "decoy.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

/* olga the owner, mick a role without manage_taxonomies, adam an admin
 * whose token lacks the admin scopes, dora the decoy's owner. */
static struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"mick", NULL, NULL, ADMIN_SCOPES},
              {"adam", NULL, NULL, "read write follow"},
              {"alice"},
              {"bob"},
              {"dora", DECOY, NULL, ADMIN_SCOPES}},
};

#define call_on(w, r, host, method, who, json, ...)                                                \
    eu_it_callf((w)->s, r, host, method, eu_it_tok(w, who), json, __VA_ARGS__)

struct pages {
    int port;
    char dir[256];
    pid_t pid;
};

static int
free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void
pages_start(struct pages *p)
{
    p->port = free_port();
    snprintf(p->dir, sizeof p->dir, "/tmp/eunha-cards-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(p->dir));
    char ready[300], script[512], here[512], port[16];
    snprintf(ready, sizeof ready, "%s/ready", p->dir);
    snprintf(here, sizeof here, "%s", __FILE__);
    snprintf(script, sizeof script, "%s/card_pages.py", dirname(here));
    snprintf(port, sizeof port, "%d", p->port);
    p->pid = fork();
    ck_assert_int_ge(p->pid, 0);
    if (p->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl("/usr/bin/python3", "python3", script, port, p->dir, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        if (access(ready, F_OK) == 0)
            return;
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("the page server did not start");
}

static void
pages_stop(struct pages *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
    }
    eu_it_remove_tree(p->dir);
}

/* Whether the page server was asked for path. */
static bool
pages_asked(const struct pages *p, const char *path)
{
    char file[300], line[512];
    snprintf(file, sizeof file, "%s/log", p->dir);
    FILE *f = fopen(file, "r");
    bool found = false;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, path, strlen(path)) == 0 && line[strlen(path)] == '\n')
            found = true;
    if (f)
        fclose(f);
    return found;
}

static char *
post(struct world *w, const char *host, const char *who, const char *body)
{
    struct eu_it_resp r = {0};
    call_on(w, &r, host, "POST", who, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_null(json_object_get(r.json, "card")), "a new status has no card yet");
    char *id = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    return id;
}

static bool
has_card(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_is_object(json_object_get(r->json, "card"));
}

/* A 200 with a non-empty array: the trends task has scored. */
static bool
listed(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 && json_array_size(r->json) > 0;
}

/* A 200 whose card's url is arg, or whose card is null when arg is NULL. */
static bool
card_is(const struct eu_it_resp *r, const void *arg)
{
    if (r->status != 200)
        return false;
    json_t *c = json_object_get(r->json, "card");
    if (!arg)
        return json_is_null(c);
    const char *url = json_string_value(json_object_get(c, "url"));
    return url && strcmp(url, arg) == 0;
}

/* Waits until the tenant has no preview_card job left (done ones are
 * deleted; a dead one would stay and fail this). */
static void
wait_jobs(struct world *w)
{
    for (int i = 0; i < 400; i++) {
        if (eu_it_world_sql_long(w,
                                 "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                 " AND kind = 'preview_card'",
                                 w->tid) == 0)
            return;
        eu_it_sleep_ms(100);
    }
    ck_abort_msg("preview_card jobs did not end");
}

/* obj's member as a string, "" for a missing one, "null" for null. */
static const char *
sget(json_t *obj, const char *k)
{
    json_t *v = json_object_get(obj, k);
    return json_is_null(v) ? "null" : json_string_value(v) ? json_string_value(v) : "";
}

static void
appoint(struct world *w)
{
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
    /* A role with manage_reports only (16). */
    free(eu_it_world_sql(w,
                         "INSERT INTO user_roles (tenant_id, id, name, position, permissions,"
                         " highlighted) VALUES (%s, 77, 'Reports desk', 5, 16, false)",
                         w->tid));
    free(eu_it_world_sql(w,
                         "UPDATE users SET role_id = 77 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mick")));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 2 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "adam")));
}

START_TEST(test_cards)
{
    struct pages pg = {0};
    pages_start(&pg);
    char toml[512];
    snprintf(toml, sizeof toml,
             "[federation]\nallow_http = true\nallow_private_addresses = false\n"
             "request_timeout_seconds = 3\nhosts = [\"pages.test=127.0.0.1:%d\"]\n"
             "[workers]\ntrends_refresh_seconds = 1\ntrends_min_accounts = 2\n",
             pg.port);
    world.extra_toml = toml;
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);

    /* OpenGraph, with an image through the media pipeline. */
    char *og = post(&w, HOST, "alice", "{\"status\":\"Read http://pages.test/og now\"}");
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "alice"), 30000, has_card, NULL, "the og card",
                   "/api/v1/statuses/%s", og);
    json_t *c = json_object_get(r.json, "card");
    ck_assert_str_eq(sget(c, "url"), "http://pages.test/og");
    ck_assert_str_eq(sget(c, "title"), "An article");
    ck_assert_str_eq(sget(c, "description"), "About things & stuff");
    ck_assert_str_eq(sget(c, "type"), "link");
    ck_assert_str_eq(sget(c, "author_name"), "Ann Author");
    ck_assert_str_eq(sget(c, "author_url"), "");
    ck_assert_str_eq(sget(c, "provider_name"), "Pages");
    ck_assert_str_eq(sget(c, "provider_url"), "");
    ck_assert_str_eq(sget(c, "html"), "");
    ck_assert_str_eq(sget(c, "embed_url"), "");
    ck_assert_str_eq(sget(c, "language"), "en");
    ck_assert_str_eq(sget(c, "published_at"), "2026-01-02T02:04:05.000Z");
    ck_assert_str_eq(sget(c, "image_description"), "");
    ck_assert_int_eq(json_integer_value(json_object_get(c, "width")), 32);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "height")), 16);
    const char *image = json_string_value(json_object_get(c, "image"));
    ck_assert_ptr_nonnull(image);
    ck_assert_msg(strstr(image, "/preview_cards/") && strstr(image, ".webp"), "image %s", image);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(c, "blurhash")));
    json_t *authors = json_object_get(c, "authors");
    ck_assert_int_eq(json_array_size(authors), 1);
    ck_assert_str_eq(sget(json_array_get(authors, 0), "name"), "Ann Author");
    ck_assert(json_is_null(json_object_get(json_array_get(authors, 0), "account")));
    ck_assert_int_eq(json_object_size(c), 18);
    /* The image is served, and charged to the tenant. */
    ck_assert_int_gt(eu_it_world_sql_long(&w,
                                          "SELECT media_bytes FROM instance_counters"
                                          " WHERE tenant_id = %s",
                                          w.tid),
                     0);
    json_t *card = json_incref(c);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/statuses/%s/card", og);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_equal(r.json, card));
    json_decref(card);

    /* oEmbed video: only the iframe, with Mastodon's attributes. */
    char *vid = post(&w, HOST, "alice", "{\"status\":\"http://pages.test/oembed\"}");
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "alice"), 30000, has_card, NULL, "the oembed card",
                   "/api/v1/statuses/%s", vid);
    c = json_object_get(r.json, "card");
    ck_assert_str_eq(sget(c, "type"), "video");
    ck_assert_str_eq(sget(c, "title"), "A video");
    ck_assert_str_eq(sget(c, "author_name"), "Vid Maker");
    ck_assert_str_eq(sget(c, "author_url"), "http://pages.test/maker");
    ck_assert_str_eq(sget(c, "provider_name"), "Vids");
    ck_assert_str_eq(sget(c, "provider_url"), "http://pages.test/");
    ck_assert_str_eq(sget(c, "html"),
                     "<iframe src=\"http://pages.test/embed/1\" width=\"480\" height=\"270\""
                     " allowfullscreen=\"\" sandbox=\"allow-scripts allow-same-origin"
                     " allow-popups allow-popups-to-escape-sandbox allow-forms\"></iframe>");
    ck_assert_int_eq(json_integer_value(json_object_get(c, "width")), 480);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "height")), 270);
    ck_assert_str_eq(sget(c, "image"), "null");

    /* No card: noindex, no title, a redirect to a private address, a page
     * that never finishes, one past the size limit; a mention and a
     * hashtag are no links. Each job ends. */
    const char *none[] = {"http://pages.test/noindex",  "http://pages.test/notitle",
                          "http://pages.test/redirect", "http://pages.test/slow",
                          "http://pages.test/huge",     "#tagged @bob"};
    char *ids[6];
    for (int i = 0; i < 6; i++) {
        char body[200];
        snprintf(body, sizeof body, "{\"status\":\"%s\"}", none[i]);
        ids[i] = post(&w, HOST, "alice", body);
    }
    wait_jobs(&w);
    for (int i = 0; i < 6; i++) {
        call_on(&w, &r, HOST, "GET", "alice", NULL, "/api/v1/statuses/%s/card", ids[i]);
        EU_IT_EXPECT_STATUS(&r, 200);
        ck_assert_msg(json_object_size(r.json) == 0, "%s: %s", none[i], r.body);
        call_on(&w, &r, HOST, "GET", "alice", NULL, "/api/v1/statuses/%s", ids[i]);
        ck_assert(json_is_null(json_object_get(r.json, "card")));
        free(ids[i]);
    }
    ck_assert(pages_asked(&pg, "/redirect"));
    ck_assert(pages_asked(&pg, "/slow"));
    ck_assert_msg(!pages_asked(&pg, "/og-private"), "the guard let a private address through");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                          " AND kind = 'preview_card'",
                                          w.tid),
                     0);

    /* The card endpoint follows the status's visibility. */
    char *dm = post(&w, HOST, "alice",
                    "{\"status\":\"http://pages.test/og\","
                    "\"visibility\":\"direct\"}");
    call_on(&w, &r, HOST, "GET", "bob", NULL, "/api/v1/statuses/%s/card", dm);
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/statuses/99999/card");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Trending links: bob and olga share the same page (the card is
     * reused, not fetched again), three accounts today (this world lowers
     * the threshold to two; a card used by two against an expected one
     * scores exactly Mastodon's floor, gone as soon as it decays). Scored
     * by the trends task a second after; not public before review. */
    char *bob = post(&w, HOST, "bob", "{\"status\":\"also http://pages.test/og\"}");
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "bob"), 30000, has_card, NULL, "bob's card",
                   "/api/v1/statuses/%s", bob);
    char *olgas = post(&w, HOST, "olga", "{\"status\":\"and http://pages.test/og\"}");
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "olga"), 30000, has_card, NULL, "olga's card",
                   "/api/v1/statuses/%s", olgas);
    free(olgas);
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "olga"), 30000, listed, NULL, "a trending link",
                   "/api/v1/admin/trends/links");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM preview_cards"
                                          " WHERE tenant_id = %s AND url = 'http://pages.test/og'",
                                          w.tid),
                     1);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/links");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/links");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    json_t *l = json_array_get(r.json, 0);
    ck_assert_str_eq(sget(l, "url"), "http://pages.test/og");
    ck_assert(json_is_true(json_object_get(l, "requires_review")));
    char *link_id = strdup(sget(l, "id"));
    /* Refusals: no manage_taxonomies, no admin scope, the decoy's staff. */
    call_on(&w, &r, HOST, "GET", "mick", NULL, "/api/v1/admin/trends/links");
    EU_IT_EXPECT_ERROR(&r, 403);
    call_on(&w, &r, HOST, "POST", "mick", NULL, "/api/v1/admin/trends/links/%s/approve", link_id);
    EU_IT_EXPECT_ERROR(&r, 403);
    call_on(&w, &r, HOST, "POST", "adam", NULL, "/api/v1/admin/trends/links/%s/approve", link_id);
    EU_IT_EXPECT_ERROR(&r, 403);
    call_on(&w, &r, HOST, "GET", "adam", NULL, "/api/v1/admin/trends/links/publishers");
    EU_IT_EXPECT_ERROR(&r, 403);
    call_on(&w, &r, DECOY, "POST", "dora", NULL, "/api/v1/admin/trends/links/%s/approve", link_id);
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/trends/links");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "GET", "dora", NULL, "/api/v1/admin/trends/links/publishers");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "GET", NULL, NULL, "/api/v1/statuses/%s/card", og);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Approved: public, with its history. */
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/links/%s/approve", link_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(json_object_get(r.json, "requires_review")));
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/links");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    l = json_array_get(r.json, 0);
    ck_assert_str_eq(sget(l, "url"), "http://pages.test/og");
    ck_assert_str_eq(sget(l, "title"), "An article");
    ck_assert_ptr_null(json_object_get(l, "id"));
    json_t *h = json_array_get(json_object_get(l, "history"), 0);
    ck_assert_str_eq(sget(h, "accounts"), "3");
    ck_assert_str_eq(sget(h, "uses"), "3");
    ck_assert_int_eq(json_array_size(json_object_get(l, "history")), 7);
    call_on(&w, &r, DECOY, "GET", NULL, NULL, "/api/v1/trends/links");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);

    /* Publishers. */
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/links/publishers");
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *pub = eu_it_find(r.json, "domain", "pages.test");
    ck_assert_ptr_nonnull(pub);
    ck_assert(json_is_true(json_object_get(pub, "requires_review")));
    char *pub_id = strdup(sget(pub, "id"));
    call_on(&w, &r, DECOY, "POST", "dora", NULL, "/api/v1/admin/trends/links/publishers/%s/approve",
            pub_id);
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/links/publishers/%s/reject",
            pub_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(json_object_get(r.json, "trendable")));
    ck_assert(json_is_false(json_object_get(r.json, "requires_review")));
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs"
                                          " WHERE tenant_id = %s AND target_type IN"
                                          " ('PreviewCard', 'PreviewCardProvider')",
                                          w.tid),
                     2);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs"
                                          " WHERE tenant_id = %s",
                                          w.decoy_tid),
                     0);

    /* An edit moves the card to the new first link, and one with no link
     * left loses it (Mastodon fetches the card again). */
    call_on(&w, &r, HOST, "PUT", "alice", "{\"status\":\"now http://pages.test/og\"}",
            "/api/v1/statuses/%s", vid);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "alice"), 30000, card_is, "http://pages.test/og",
                   "the edited status's new card", "/api/v1/statuses/%s", vid);
    call_on(&w, &r, HOST, "PUT", "alice", "{\"status\":\"no link now\"}", "/api/v1/statuses/%s",
            vid);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_wait_get(w.s, &r, HOST, eu_it_tok(&w, "alice"), 30000, card_is, NULL,
                   "the edited status without a card", "/api/v1/statuses/%s", vid);
    call_on(&w, &r, HOST, "GET", "alice", NULL, "/api/v1/statuses/%s/card", vid);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);

    free(link_id);
    free(pub_id);
    free(bob);
    free(dm);
    free(og);
    free(vid);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
    pages_stop(&pg);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("cards");
    EU_IT_ADD_TCASE(s, test_cards, TIMEOUT);
    return eu_it_run_suite(s);
}
