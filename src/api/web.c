/*
 * The public HTML pages: a local account's profile (/@username) with its
 * pinned and latest public and unlisted posts, paged by max_id; one post
 * with its thread (/@username/:id) and alone for other sites' iframes
 * (/@username/:id/embed); a hashtag's public posts (/tags/:name),
 * local and remote, as the tag timeline API shows them to a visitor (its
 * own statement, so the two cannot disagree); and /users/:username sending
 * browsers to the profile. They exist so links opened from clients and shared in
 * chats land on something readable, with OpenGraph and Twitter-card tags
 * for previews; Mastodon's web app is not reproduced.
 *
 * A page is made from the API's own entities: the Account entity of the
 * profile's owner and the Status entities eu_statuses_render() gives an
 * anonymous viewer, so what a visitor may see is decided where the API
 * decides it, and content is the API's (sanitized) HTML. Custom emoji
 * shortcodes become images, content warnings and sensitive media are
 * collapsed behind a <details>, media carry their descriptions as alt text.
 *
 * The same addresses serve ActivityPub clients their actor and Note
 * documents (src/ap/), chosen by the Accept header, so every answer says
 * Vary: Accept.
 *
 * The router has no "@" prefix syntax, so "/:acct" and "/:acct/:id" catch
 * every one- and two-segment path no other route claims; anything not
 * starting with "@" gets the usual JSON 404.
 */
#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/ap.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "oauth_internal.h"
#include "web_internal.h"
#include "web_text.h"

/* Posts on a profile page, and the most of a thread shown each way. */
#define PROFILE_POSTS 20
#define THREAD_MAX 40

enum {
    WEB_PROFILE,
    WEB_STATUS,
};

const struct eu_sql eu_web_sql[] = {
    /* The account, its pins and a page of its own public and unlisted
     * posts (one more than shown, to know whether there are older ones);
     * $3 the max_id, 0 for the newest. Visibility is checked again when
     * the statuses are rendered for the anonymous viewer. */
    [WEB_PROFILE] = {"web.profile",
                     "SELECT (eunha_account(a)).*,"
                     " (SELECT coalesce(json_agg(p.status_id::text ORDER BY p.id DESC), '[]')"
                     "  FROM status_pins p WHERE p.tenant_id = $1 AND p.account_id = a.id)::text"
                     "  AS web_pins,"
                     " (SELECT coalesce(json_agg(x.id::text ORDER BY x.id DESC), '[]') FROM"
                     "  (SELECT s.id FROM statuses s WHERE s.tenant_id = $1"
                     "   AND s.account_id = a.id AND s.deleted_at IS NULL AND s.visibility <= 1"
                     "   AND s.reblog_of_id IS NULL AND ($3::bigint = 0 OR s.id < $3::bigint)"
                     "   ORDER BY s.id DESC LIMIT 21) x)::text AS web_posts"
                     " FROM accounts a WHERE a.tenant_id = $1 AND lower(a.username) = lower($2)"
                     " AND a.domain IS NULL AND a.suspended_at IS NULL"},
    /* The thread around post $3 of account $2: its ancestors (up the
     * in_reply_to chain) and descendants (breadth first), at most
     * THREAD_MAX each way. */
    [WEB_STATUS] = {"web.status",
                    "WITH RECURSIVE up AS ("
                    "  SELECT s.in_reply_to_id AS id, 1 AS depth FROM statuses s"
                    "  WHERE s.tenant_id = $1 AND s.id = $3::bigint"
                    "  UNION ALL SELECT p.in_reply_to_id, up.depth + 1 FROM up"
                    "  JOIN statuses p ON p.tenant_id = $1 AND p.id = up.id"
                    "  WHERE up.depth < 40),"
                    " down AS ("
                    "  SELECT c.id, 1 AS depth FROM statuses c"
                    "  WHERE c.tenant_id = $1 AND c.in_reply_to_id = $3::bigint"
                    "  UNION ALL SELECT c.id, down.depth + 1 FROM down"
                    "  JOIN statuses c ON c.tenant_id = $1 AND c.in_reply_to_id = down.id"
                    "  WHERE down.depth < 40)"
                    " SELECT (SELECT coalesce(json_agg(up.id::text ORDER BY up.depth DESC), '[]')"
                    "  FROM up WHERE up.id IS NOT NULL)::text AS web_ancestors,"
                    " (SELECT coalesce(json_agg(d.id::text ORDER BY d.depth, d.id), '[]')"
                    "  FROM (SELECT * FROM down ORDER BY depth, id LIMIT 40) d)::text"
                    "  AS web_descendants"
                    " FROM accounts a JOIN statuses s ON s.tenant_id = $1 AND s.account_id = a.id"
                    " AND s.id = $3::bigint AND s.deleted_at IS NULL AND s.visibility <= 1"
                    " AND s.reblog_of_id IS NULL"
                    " WHERE a.tenant_id = $1 AND lower(a.username) = lower($2)"
                    " AND a.domain IS NULL AND a.suspended_at IS NULL"},
    {0},
};

static void
reply_not_found(struct eu_req *req)
{
    eu_web_reply_page(req, 404, eu_web_t(req, "Not found"),
                      eu_arena_sprintf(req->arena, "<div class=\"card\"><h1>%s</h1><p>%s</p></div>",
                                       eu_web_th(req, "Not found"),
                                       eu_web_th(req, "The page you are looking for isn't here.")));
}

/* The username of "@name" on this instance, or NULL (not an "@" path, or
 * a remote "@name@domain" which is not served yet). Arena-owned. */
static const char *
local_username(struct eu_req *req)
{
    const char *acct = eu_req_param(req, "acct");
    if (!acct || acct[0] != '@' || !acct[1] || strlen(acct) > 64)
        return NULL;
    for (const char *c = acct + 1; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return NULL;
    return acct + 1;
}

/* ------------------------------------------------------------ rendering */

static const char *
jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* html (already HTML) with each ":shortcode:" of emojis (CustomEmoji
 * entities) as an image. Arena-owned. */
static const char *
with_emojis(struct eu_req *req, const char *html, json_t *emojis)
{
    size_t i;
    json_t *e;
    json_array_foreach(emojis, i, e)
    {
        const char *code = jstr(e, "shortcode");
        if (!*code)
            continue;
        const char *tag = eu_arena_sprintf(req->arena, ":%s:", code);
        const char *img =
            eu_arena_sprintf(req->arena, "<img class=\"emojo\" src=\"%s\" alt=\"%s\" title=\"%s\">",
                             eu_html_escape(req, jstr(e, "url")), eu_html_escape(req, tag),
                             eu_html_escape(req, tag));
        const char *out = "", *p = html, *hit;
        size_t tlen = strlen(tag);
        while ((hit = strstr(p, tag))) {
            out = eu_arena_sprintf(req->arena, "%s%.*s%s", out, (int)(hit - p), p, img);
            p = hit + tlen;
        }
        html = eu_arena_sprintf(req->arena, "%s%s", out, p);
    }
    return html;
}

/* Plain text of HTML (tags dropped, the common entities read), for meta
 * descriptions; at most max bytes, cut at a character. Arena-owned. */
static const char *
plain_text(struct eu_req *req, const char *html, size_t max)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'},  {"&lt;", '<'},    {"&gt;", '>'},  {"&quot;", '"'},
                {"&#39;", '\''}, {"&#x27;", '\''}, {"&nbsp;", ' '}};
    char *out = eu_arena_alloc(req->arena, strlen(html) + 1), *o = out;
    bool in_tag = false;
    for (const char *p = html; *p && (size_t)(o - out) < max; p++) {
        if (*p == '<') {
            /* A paragraph or line break is a space between words. */
            if (o > out && o[-1] != ' ')
                *o++ = ' ';
            in_tag = true;
        } else if (*p == '>') {
            in_tag = false;
        } else if (!in_tag) {
            bool ent = false;
            for (size_t k = 0; *p == '&' && k < sizeof(ents) / sizeof(ents[0]); k++)
                if (strncmp(p, ents[k].ent, strlen(ents[k].ent)) == 0) {
                    *o++ = ents[k].c;
                    p += strlen(ents[k].ent) - 1;
                    ent = true;
                    break;
                }
            if (!ent)
                *o++ = *p;
        }
    }
    /* Not in the middle of a UTF-8 sequence. */
    while (o > out && ((unsigned char)o[-1] & 0xC0) == 0x80 && (size_t)(o - out) >= max)
        o--;
    while (o > out && o[-1] == ' ')
        o--;
    *o = '\0';
    return out;
}

/* "2026-12-06 11:35 UTC" of an ISO timestamp. Arena-owned. */
static const char *
when(struct eu_req *req, const char *iso)
{
    if (strlen(iso) < 16)
        return eu_html_escape(req, iso);
    return eu_arena_sprintf(req->arena, "%.10s %.5s UTC", iso, iso + 11);
}

static const char *
display_name(struct eu_req *req, json_t *account)
{
    const char *dn = jstr(account, "display_name");
    return with_emojis(req, eu_html_escape(req, *dn ? dn : jstr(account, "username")),
                       json_object_get(account, "emojis"));
}

/* Where an account's name links: a local one's page here, a remote one's
 * page on its own server. */
static const char *
account_href(struct eu_req *req, json_t *account)
{
    const char *acct = jstr(account, "acct");
    if (!strchr(acct, '@'))
        return eu_arena_sprintf(req->arena, "/@%s", eu_html_escape(req, acct));
    return eu_html_escape(req, jstr(account, "url"));
}

static const char *
media_html(struct eu_req *req, json_t *status)
{
    json_t *list = json_object_get(status, "media_attachments");
    if (json_array_size(list) == 0)
        return "";
    const char *items = "";
    size_t i;
    json_t *m;
    json_array_foreach(list, i, m)
    {
        const char *type = jstr(m, "type"), *alt = jstr(m, "description");
        const char *url = jstr(m, "url"), *preview = jstr(m, "preview_url");
        if (!*url)
            continue; /* still processing */
        const char *item;
        if (strcmp(type, "video") == 0 || strcmp(type, "gifv") == 0)
            item = eu_arena_sprintf(req->arena,
                                    "<video controls preload=\"none\" src=\"%s\" poster=\"%s\" "
                                    "aria-label=\"%s\"></video>",
                                    eu_html_escape(req, url), eu_html_escape(req, preview),
                                    *alt ? eu_html_escape(req, alt) : eu_web_th(req, "Video"));
        else if (strcmp(type, "audio") == 0)
            item = eu_arena_sprintf(req->arena,
                                    "<audio controls preload=\"none\" src=\"%s\" "
                                    "aria-label=\"%s\"></audio>",
                                    eu_html_escape(req, url),
                                    *alt ? eu_html_escape(req, alt) : eu_web_th(req, "Audio"));
        else
            item = eu_arena_sprintf(req->arena,
                                    "<a href=\"%s\"><img src=\"%s\" alt=\"%s\" "
                                    "loading=\"lazy\"></a>",
                                    eu_html_escape(req, url),
                                    eu_html_escape(req, *preview ? preview : url),
                                    eu_html_escape(req, alt));
        items = eu_arena_sprintf(req->arena, "%s%s", items, item);
    }
    if (!*items)
        return "";
    const char *grid = eu_arena_sprintf(req->arena, "<div class=\"media\">%s</div>", items);
    if (!json_is_true(json_object_get(status, "sensitive")))
        return grid;
    /* Sensitive: each image's blurhash, decoded here, until the visitor
     * opens the details; the media themselves load only then. */
    const char *blurs = "";
    json_array_foreach(list, i, m)
    {
        const char *img = eu_web_blurhash_data_url(req, jstr(m, "blurhash"));
        if (img)
            blurs = eu_arena_sprintf(req->arena, "%s<img class=\"blurhash\" src=\"%s\" alt=\"\">",
                                     blurs, img);
    }
    return eu_arena_sprintf(
        req->arena, "<details class=\"sensitive\"><summary><span>%s</span>%s</summary>%s</details>",
        eu_web_th(req, "Sensitive media (show)"),
        *blurs ? eu_arena_sprintf(req->arena, "<span class=\"blurs\">%s</span>", blurs) : "", grid);
}

/* One post as HTML; main marks the post a status page is about. */
static const char *
status_html(struct eu_req *req, json_t *s, bool main)
{
    json_t *account = json_object_get(s, "account");
    const char *body = eu_arena_sprintf(
        req->arena, "<div class=\"content\">%s</div>%s",
        with_emojis(req, jstr(s, "content"), json_object_get(s, "emojis")), media_html(req, s));
    const char *cw = jstr(s, "spoiler_text");
    if (*cw)
        body =
            eu_arena_sprintf(req->arena, "<details class=\"cw\"><summary>%s</summary>%s</details>",
                             eu_html_escape(req, cw), body);
    const char *link = jstr(s, "url");
    return eu_arena_sprintf(
        req->arena,
        "<article class=\"status\"%s><div class=\"who\"><img class=\"avatar small\" src=\"%s\" "
        "alt=\"\"><div><a class=\"name\" href=\"%s\">%s</a><span class=\"acct\">@%s</span>"
        "</div></div>%s<p class=\"meta\"><a href=\"%s\"><time datetime=\"%s\">%s</time></a> · "
        "%s</p></article>",
        main ? " aria-current=\"page\"" : "", eu_html_escape(req, jstr(account, "avatar_static")),
        account_href(req, account), display_name(req, account),
        eu_html_escape(req, jstr(account, "acct")), body, eu_html_escape(req, *link ? link : "#"),
        eu_html_escape(req, jstr(s, "created_at")), when(req, jstr(s, "created_at")),
        eu_arena_sprintf(req->arena, eu_web_th(req, "%lld replies · %lld boosts · %lld favourites"),
                         (long long)json_integer_value(json_object_get(s, "replies_count")),
                         (long long)json_integer_value(json_object_get(s, "reblogs_count")),
                         (long long)json_integer_value(json_object_get(s, "favourites_count"))));
}

/* "<strong>n</strong> posts" of the catalogue's text (a key with one %s). */
static const char *
count(struct eu_req *req, const char *text, json_t *n)
{
    return eu_arena_sprintf(
        req->arena, eu_web_th(req, text),
        eu_arena_sprintf(req->arena, "<strong>%lld</strong>", (long long)json_integer_value(n)));
}

/* The profile's card: header, avatar, names, bio, fields, counts. */
static const char *
profile_card(struct eu_req *req, json_t *a)
{
    const char *fields = "";
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(a, "fields"), i, f)
    {
        bool verified = json_is_string(json_object_get(f, "verified_at"));
        fields = eu_arena_sprintf(
            req->arena, "%s<dt>%s</dt><dd%s>%s%s</dd>", fields,
            with_emojis(req, eu_html_escape(req, jstr(f, "name")), json_object_get(a, "emojis")),
            verified ? " class=\"verified\"" : "",
            with_emojis(req, jstr(f, "value"), json_object_get(a, "emojis")),
            verified
                ? eu_arena_sprintf(req->arena, " <span>(%s)</span>", eu_web_th(req, "verified"))
                : "");
    }
    const char *header = jstr(a, "header_static");
    /* A header that is the default image says nothing; skip it. */
    bool has_header = *header && !strstr(header, "missing");
    return eu_arena_sprintf(
        req->arena,
        "<div class=\"card profile-header\">%s<div class=\"who\"><img class=\"avatar\" src=\"%s\" "
        "alt=\"\"><div><h1 class=\"name\">%s</h1><span class=\"acct\">@%s@%s</span></div></div>"
        "<div class=\"note\">%s</div>%s<p class=\"counts\"><span>%s</span><span>%s</span>"
        "<span>%s</span></p></div>",
        has_header ? eu_arena_sprintf(req->arena, "<img class=\"header\" src=\"%s\" alt=\"\">",
                                      eu_html_escape(req, header))
                   : "",
        eu_html_escape(req, jstr(a, "avatar_static")), display_name(req, a),
        eu_html_escape(req, jstr(a, "username")), eu_html_escape(req, req->tenant->domain),
        with_emojis(req, jstr(a, "note"), json_object_get(a, "emojis")),
        *fields ? eu_arena_sprintf(req->arena, "<dl class=\"fields\">%s</dl>", fields) : "",
        count(req, "%s posts", json_object_get(a, "statuses_count")),
        count(req, "%s following", json_object_get(a, "following_count")),
        count(req, "%s followers", json_object_get(a, "followers_count")));
}

/* OpenGraph and Twitter-card tags, the ActivityPub alternate, and the
 * page's canonical URL. */
static const char *
meta_tags(struct eu_req *req, const char *type, const char *title, const char *desc,
          const char *image, const char *url, const char *ap_id)
{
    return eu_arena_sprintf(
        req->arena,
        "<meta name=\"description\" content=\"%s\"><meta property=\"og:site_name\" content=\"%s\">"
        "<meta property=\"og:type\" content=\"%s\"><meta property=\"og:title\" content=\"%s\">"
        "<meta property=\"og:description\" content=\"%s\"><meta property=\"og:url\" content=\"%s\">"
        "%s<meta name=\"twitter:card\" content=\"summary\"><link rel=\"canonical\" href=\"%s\">"
        "<link rel=\"alternate\" type=\"application/activity+json\" href=\"%s\">",
        eu_html_escape(req, desc), eu_html_escape(req, req->tenant->title), type,
        eu_html_escape(req, title), eu_html_escape(req, desc), eu_html_escape(req, url),
        *image ? eu_arena_sprintf(req->arena, "<meta property=\"og:image\" content=\"%s\">",
                                  eu_html_escape(req, image))
               : "",
        eu_html_escape(req, url), eu_html_escape(req, ap_id));
}

/* The statuses of array with this id, or NULL. */
static json_t *
find_status(json_t *array, const char *id)
{
    size_t i;
    json_t *s;
    json_array_foreach(array, i, s)
    {
        if (strcmp(jstr(s, "id"), id) == 0)
            return s;
    }
    return NULL;
}

/* Fills ids (arena) with the strings of the JSON array text; returns how
 * many, at most max. */
static size_t
id_list(struct eu_req *req, const char *text, const char **ids, size_t max)
{
    json_t *a = json_loads(text, 0, NULL);
    size_t n = 0, i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (n < max && json_is_string(v))
            ids[n++] = eu_arena_strdup(req->arena, json_string_value(v));
    }
    json_decref(a);
    return n;
}

/* --------------------------------------------------------- the profile */

static void
release_json(void *data)
{
    json_decref(data);
}

struct profile {
    json_t *account;
    const char *username;
    size_t npins, nposts;
    bool more; /* older posts past this page */
    const char *ids[PROFILE_POSTS + 1 + 10];
};

static void
on_profile_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct profile *p = arg;
    json_t *a = p->account;
    const char *pins = "", *posts = "", *last = NULL;
    for (size_t i = 0; i < p->npins; i++) {
        json_t *s = find_status(array, p->ids[i]);
        if (s)
            pins = eu_arena_sprintf(req->arena, "%s%s", pins, status_html(req, s, false));
    }
    for (size_t i = p->npins; i < p->npins + p->nposts; i++) {
        json_t *s = find_status(array, p->ids[i]);
        if (s)
            posts = eu_arena_sprintf(req->arena, "%s%s", posts, status_html(req, s, false));
        last = p->ids[i];
    }
    if (!*posts)
        posts = eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                 eu_web_th(req, "No posts yet."));
    const char *base = eu_req_base_url(req);
    const char *pager =
        p->more && last
            ? eu_arena_sprintf(req->arena,
                               "<nav class=\"pager\" aria-label=\"%s"
                               "\"><span></span><a href=\"/@%s?max_id=%s"
                               "\">%s</a></nav>",
                               eu_web_th(req, "Pages"), eu_html_escape(req, p->username), last,
                               eu_web_th(req, "Older posts"))
            : "";
    const char *body = eu_arena_sprintf(
        req->arena,
        "%s%s<section class=\"card\" aria-labelledby=\"posts\"><h2 id=\"posts\">%s"
        "</h2>%s%s</section>",
        profile_card(req, a),
        *pins ? eu_arena_sprintf(req->arena,
                                 "<section class=\"card\" aria-labelledby=\"pinned\"><h2 "
                                 "id=\"pinned\">%s</h2>%s</section>",
                                 eu_web_th(req, "Pinned"), pins)
              : "",
        eu_web_th(req, "Posts"), posts, pager);
    const char *dn = jstr(a, "display_name");
    const char *title = eu_arena_sprintf(req->arena, "%s (@%s@%s)", *dn ? dn : p->username,
                                         p->username, req->tenant->domain);
    const char *url = eu_arena_sprintf(req->arena, "%s/@%s", base, p->username);
    const char *head = meta_tags(req, "profile", title, plain_text(req, jstr(a, "note"), 300),
                                 jstr(a, "avatar_static"), url,
                                 eu_arena_sprintf(req->arena, "%s/users/%s", base, p->username));
    json_decref(array);
    eu_web_reply_page_head(req, 200, title, head, body);
}

/* arg: non-NULL on a later page, which shows no pins. */
static void
on_profile(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) < 1) {
        reply_not_found(req);
        return;
    }
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    struct profile *p = eu_arena_alloc(req->arena, sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->account = eu_account_json(req, res, 0, &ac);
    /* Freed with the request: eu_statuses_render() answers a database
     * failure itself, and then on_profile_rendered() never runs. */
    eu_arena_on_free(req->arena, release_json, p->account);
    p->username = eu_arena_strdup(req->arena, jstr(p->account, "username"));
    p->npins = arg ? 0 : id_list(req, PQgetvalue(res, 0, PQfnumber(res, "web_pins")), p->ids, 10);
    p->nposts = id_list(req, PQgetvalue(res, 0, PQfnumber(res, "web_posts")), p->ids + p->npins,
                        PROFILE_POSTS + 1);
    if (p->nposts > PROFILE_POSTS) {
        p->more = true;
        p->nposts = PROFILE_POSTS;
    }
    eu_statuses_render(req, p->ids, p->npins + p->nposts, on_profile_rendered, p);
}

static void profile_page(struct eu_req *req);

void
eu_web_profile(struct eu_req *req)
{
    const char *user = local_username(req);
    if (!user) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (eu_ap_accept_is_activity(req)) {
        eu_ap_actor_show(req, user);
        return;
    }
    eu_req_add_header(req, "Vary", "Accept");
    eu_web_framed(req, profile_page);
}

/* The profile's page, its frame read. */
static void
profile_page(struct eu_req *req)
{
    const char *user = local_username(req);
    const char *max_id = eu_req_query(req, "max_id");
    if (max_id && !eu_id_is_valid(max_id)) {
        reply_not_found(req);
        return;
    }
    const char *p[] = {user, max_id ? max_id : "0"};
    eu_req_stmt(req, &eu_web_sql[WEB_PROFILE], 2, p, on_profile, (void *)max_id);
}

/* ---------------------------------------------------------- the thread */

struct thread {
    const char *id;
    size_t nup, ndown;
    const char *ids[THREAD_MAX * 2 + 1];
};

static void
on_thread_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct thread *t = arg;
    json_t *main = find_status(array, t->id);
    if (!main) {
        json_decref(array);
        reply_not_found(req);
        return;
    }
    const char *before = "", *after = "";
    for (size_t i = 0; i < t->nup; i++) {
        json_t *s = find_status(array, t->ids[i]);
        if (s)
            before = eu_arena_sprintf(req->arena, "%s%s", before, status_html(req, s, false));
    }
    for (size_t i = t->nup + 1; i < t->nup + 1 + t->ndown; i++) {
        json_t *s = find_status(array, t->ids[i]);
        if (s)
            after = eu_arena_sprintf(req->arena, "%s%s", after, status_html(req, s, false));
    }
    json_t *a = json_object_get(main, "account");
    const char *dn = jstr(a, "display_name"), *user = jstr(a, "username");
    const char *title =
        eu_arena_sprintf(req->arena, "%s (@%s@%s)", *dn ? dn : user, user, req->tenant->domain);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<h1 class=\"visually-hidden\">%s</h1>%s<section class=\"card\" aria-label=\"%s\">%s"
        "</section>%s",
        eu_html_escape(req, title),
        *before
            ? eu_arena_sprintf(req->arena, "<section class=\"card\" aria-label=\"%s\">%s</section>",
                               eu_web_th(req, "Earlier in the thread"), before)
            : "",
        eu_web_th(req, "Post"), status_html(req, main, true),
        *after ? eu_arena_sprintf(req->arena,
                                  "<section class=\"card\" aria-labelledby=\"replies\"><h2 "
                                  "id=\"replies\">%s</h2>%s</section>",
                                  eu_web_th(req, "Replies"), after)
               : "");
    /* A warned post's preview says only the warning. */
    const char *cw = jstr(main, "spoiler_text");
    const char *desc = *cw ? cw : plain_text(req, jstr(main, "content"), 300);
    const char *image = jstr(a, "avatar_static");
    json_t *media = json_object_get(main, "media_attachments");
    if (!*cw && !json_is_true(json_object_get(main, "sensitive")) && json_array_size(media) > 0)
        image = jstr(json_array_get(media, 0), "preview_url");
    const char *head =
        meta_tags(req, "article", title, desc, image, jstr(main, "url"), jstr(main, "uri"));
    /* The page's own entities go with the page's arena-built HTML. */
    eu_web_reply_page_head(req, 200, title, head, body);
    json_decref(array);
}

static void
on_status(struct eu_req *req, PGresult *res, void *arg)
{
    const char *id = arg;
    if (PQntuples(res) != 1) {
        reply_not_found(req);
        return;
    }
    struct thread *t = eu_arena_alloc(req->arena, sizeof(*t));
    memset(t, 0, sizeof(*t));
    t->id = id;
    t->nup = id_list(req, PQgetvalue(res, 0, PQfnumber(res, "web_ancestors")), t->ids, THREAD_MAX);
    t->ids[t->nup] = id;
    t->ndown = id_list(req, PQgetvalue(res, 0, PQfnumber(res, "web_descendants")),
                       t->ids + t->nup + 1, THREAD_MAX);
    eu_statuses_render(req, t->ids, t->nup + 1 + t->ndown, on_thread_rendered, t);
}

static void thread_page(struct eu_req *req);

void
eu_web_status(struct eu_req *req)
{
    const char *user = local_username(req);
    if (!user) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *id = eu_req_param(req, "id");
    if (eu_ap_accept_is_activity(req)) {
        eu_ap_note_show(req, user, id);
        return;
    }
    eu_req_add_header(req, "Vary", "Accept");
    eu_web_framed(req, thread_page);
}

/* The thread's page, its frame read. */
static void
thread_page(struct eu_req *req)
{
    const char *user = local_username(req);
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        reply_not_found(req);
        return;
    }
    const char *p[] = {user, id};
    eu_req_stmt(req, &eu_web_sql[WEB_STATUS], 2, p, on_status, (void *)id);
}

/* -------------------------------------------------------------- embed */

static void
on_embed_rendered(struct eu_req *req, json_t *array, void *arg)
{
    const char *user = arg;
    json_t *s = json_array_get(array, 0);
    json_t *a = json_object_get(s, "account");
    const char *vis = jstr(s, "visibility");
    /* The anonymous render already hid what a visitor may not see; the
     * embed is for public and unlisted posts of this local author only,
     * as Mastodon's, and never a boost. */
    if (!s || strcasecmp(jstr(a, "acct"), user) != 0 ||
        (strcmp(vis, "public") != 0 && strcmp(vis, "unlisted") != 0) ||
        !json_is_null(json_object_get(s, "reblog"))) {
        json_decref(array);
        reply_not_found(req);
        return;
    }
    const char *dn = jstr(a, "display_name"), *name = jstr(a, "username");
    const char *title =
        eu_arena_sprintf(req->arena, "%s (@%s@%s)", *dn ? dn : name, name, req->tenant->domain);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<article class=\"card\">%s<p><a href=\"%s\" target=\"_blank\">%s</a></p></article>",
        status_html(req, s, true), eu_html_escape(req, jstr(s, "url")),
        eu_html_escape(req, eu_arena_sprintf(req->arena, "View on %s", req->tenant->domain)));
    eu_web_reply_embed(req, title, body);
    json_decref(array);
}

/* GET /@user/:id/embed: the post alone, for the iframe that oEmbed's html
 * (src/api/oembed.c) and Mastodon's embed.js put on other sites. */
static void
eu_web_status_embed(struct eu_req *req)
{
    const char *user = local_username(req);
    const char *id = eu_req_param(req, "id");
    if (!user || !eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char **ids = eu_arena_alloc(req->arena, sizeof(*ids));
    ids[0] = id;
    eu_statuses_render(req, ids, 1, on_embed_rendered, (void *)user);
}

void
eu_web_users(struct eu_req *req)
{
    const char *user = eu_req_param(req, "username");
    if (eu_ap_accept_is_activity(req)) {
        eu_ap_actor_show(req, user);
        return;
    }
    eu_req_add_header(req, "Vary", "Accept");
    char *location = eu_arena_sprintf(req->arena, "/@%s", user);
    for (const char *c = user; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_') {
            reply_not_found(req);
            return;
        }
    eu_req_add_header(req, "Location", location);
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

/* ------------------------------------------------------------- the tag */

/* Posts on a tag's page. */
#define TAG_POSTS 20

struct tag_page {
    const char *name;
    size_t n;
    bool more;
    const char *ids[TAG_POSTS + 1];
};

static void
on_tag_rendered(struct eu_req *req, json_t *array, void *arg)
{
    struct tag_page *t = arg;
    const char *posts = "";
    for (size_t i = 0; i < t->n; i++) {
        json_t *s = find_status(array, t->ids[i]);
        if (s)
            posts = eu_arena_sprintf(req->arena, "%s%s", posts, status_html(req, s, false));
    }
    json_decref(array);
    const char *name = eu_html_escape(req, t->name);
    if (!*posts)
        posts = eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                 eu_web_th(req, "No posts with this tag yet."));
    const char *pager =
        t->more ? eu_arena_sprintf(req->arena,
                                   "<nav class=\"pager\" aria-label=\"%s\"><span></span>"
                                   "<a href=\"/tags/%s?max_id=%s\">%s</a></nav>",
                                   eu_web_th(req, "Pages"),
                                   eu_html_escape(req, eu_oauth_url_encode(req->arena, t->name)),
                                   t->ids[t->n - 1], eu_web_th(req, "Older posts"))
                : "";
    const char *title = eu_arena_sprintf(req->arena, "#%s", t->name);
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>#%s</h1><p class=\"muted\">%s</p></div>"
        "<section class=\"card\" aria-label=\"%s\">%s%s</section>",
        name,
        eu_web_th(req, "Public posts with this tag, from this server and the servers it knows."),
        eu_web_th(req, "Posts"), posts, pager);
    const char *url = eu_arena_sprintf(req->arena, "%s/tags/%s", eu_req_base_url(req),
                                       eu_oauth_url_encode(req->arena, t->name));
    const char *desc = eu_arena_sprintf(req->arena, eu_web_t(req, "Public posts with #%s on %s"),
                                        t->name, req->tenant->title);
    /* Mastodon keeps tag pages out of search engines; no feed is served
     * for them here, so no alternate names one. */
    const char *head = eu_arena_sprintf(
        req->arena,
        "<meta name=\"robots\" content=\"noindex\"><meta name=\"description\" content=\"%s\">"
        "<meta property=\"og:site_name\" content=\"%s\"><meta property=\"og:type\" "
        "content=\"website\"><meta property=\"og:title\" content=\"%s\">"
        "<meta property=\"og:description\" content=\"%s\"><meta property=\"og:url\" "
        "content=\"%s\"><meta name=\"twitter:card\" content=\"summary\">"
        "<link rel=\"canonical\" href=\"%s\">",
        eu_html_escape(req, desc), eu_html_escape(req, req->tenant->title),
        eu_html_escape(req, title), eu_html_escape(req, desc), eu_html_escape(req, url),
        eu_html_escape(req, url));
    eu_web_reply_page_head(req, 200, title, head, body);
}

static void
on_tag_ids(struct eu_req *req, PGresult *res, void *arg)
{
    struct tag_page *t = arg;
    int rows = PQntuples(res);
    for (int i = 0; i < rows && t->n <= TAG_POSTS; i++)
        t->ids[t->n++] = eu_arena_strdup(req->arena, PQgetvalue(res, i, 0));
    if (t->n > TAG_POSTS) {
        t->more = true;
        t->n = TAG_POSTS;
    }
    eu_statuses_render(req, t->ids, t->n, on_tag_rendered, t);
}

/* Hashtag names are word characters (any non-ASCII letter counts), as the
 * tag timeline takes them. */
static bool
is_tag_name(const char *s)
{
    if (!s || !*s || strlen(s) > 256)
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!isalnum(c) && c != '_' && c < 0x80)
            return false;
    }
    return true;
}

/* GET /tags/:name: the tag timeline's statement (timelines.c) for a viewer
 * who is nobody, newest first, paged by max_id. */
void
eu_web_tag(struct eu_req *req)
{
    const char *name = eu_req_param(req, "name");
    const char *max_id = eu_req_query(req, "max_id");
    const struct eu_sql *sql = eu_sql_find("timelines.tag");
    if (!is_tag_name(name) || (max_id && !eu_id_is_valid(max_id)) || !sql) {
        reply_not_found(req);
        return;
    }
    struct tag_page *t = eu_arena_calloc(req->arena, sizeof(*t));
    t->name = name;
    struct eu_page page = {.max_id = max_id, .limit = TAG_POSTS + 1};
    snprintf(page.limit_s, sizeof(page.limit_s), "%d", page.limit);
    /* local, remote, only_media, viewer, any (the tag), all, none. */
    const char *params[11] = {
        "false", "false", "false", NULL, eu_arena_sprintf(req->arena, "{\"%s\"}", name),
        NULL,    "{}"};
    eu_page_params(&page, params + 7);
    eu_req_stmt_page(req, sql, &page, 11, params, on_tag_ids, t);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
/* The tag page reads its frame (the tenant's language) first (web_page.c);
 * the profile and the thread, which answer ActivityPub clients at the same
 * addresses, read it once they know they make a page. */
EU_WEB_PAGE(tag_page, eu_web_tag)

const struct eu_route eu_web_routes[] = {
    {EU_HTTP_GET, "/:acct", eu_web_profile, NULL, 0},
    {EU_HTTP_GET, "/:acct/:id", eu_web_status, NULL, 0},
    {EU_HTTP_GET, "/:acct/:id/embed", eu_web_status_embed, NULL, 0},
    {EU_HTTP_GET, "/users/:username", eu_web_users, NULL, 0},
    {EU_HTTP_GET, "/tags/:name", tag_page, NULL, 0},
    {0},
};
