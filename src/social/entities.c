/*
 * The Account entity, and the small text helpers entities share.
 */
#include "eunha/entities.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/text.h"

const char *
eu_html_escape(struct eu_req *req, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        const char *rep = eu_html_entity(*p);
        n += rep ? strlen(rep) : 1;
    }
    char *out = eu_arena_alloc(req->arena, n + 1), *o = out;
    for (const char *p = text; *p; p++) {
        const char *rep = eu_html_entity(*p);
        if (rep) {
            size_t l = strlen(rep);
            memcpy(o, rep, l);
            o += l;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

const char *
eu_text_to_simple_html(struct eu_req *req, const char *text)
{
    if (!text || !*text)
        return "";
    const char *esc = eu_html_escape(req, text);
    size_t n = strlen(esc);
    /* Worst case every char is a newline that becomes "</p><p>". */
    char *out = eu_arena_alloc(req->arena, n * 7 + 8), *o = out;
    memcpy(o, "<p>", 3);
    o += 3;
    for (const char *p = esc; *p; p++) {
        if (*p == '\r')
            continue;
        if (p[0] == '\n' && p[1] == '\n') {
            while (p[1] == '\n' || p[1] == '\r')
                p++;
            memcpy(o, "</p><p>", 7);
            o += 7;
        } else if (*p == '\n') {
            memcpy(o, "<br />", 6);
            o += 6;
        } else {
            *o++ = *p;
        }
    }
    memcpy(o, "</p>", 5);
    return out;
}

static const char *
col_str(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static json_int_t
col_int(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static bool
col_bool(const PGresult *r, int row, int col)
{
    return !PQgetisnull(r, row, col) && PQgetvalue(r, row, col)[0] == 't';
}

/* An avatar or header URL from its column (a local account's store key,
 * a remote one's URL). Arena-owned. */
static const char *
profile_image(struct eu_req *req, const char *stored)
{
    char *url = eu_profile_image_url(req->app, eu_req_base_url(req), stored);
    const char *out = eu_arena_strdup(req->arena, url);
    free(url);
    return out;
}

json_t *
eu_account_json(struct eu_req *req, const PGresult *r, int row, int c)
{
    const char *id = PQgetvalue(r, row, c + 0);
    const char *username = PQgetvalue(r, row, c + 1);
    const char *domain = col_str(r, row, c + 2);
    const char *base = eu_req_base_url(req);
    const char *acct = domain ? eu_arena_sprintf(req->arena, "%s@%s", username, domain) : username;
    const char *url = col_str(r, row, c + 5);
    const char *uri = col_str(r, row, c + 6);
    if (!domain) {
        url = eu_arena_sprintf(req->arena, "%s/@%s", base, username);
        uri = eu_arena_sprintf(req->arena, "%s/users/%s", base, username);
    }
    /* A remote actor without a profile page: Mastodon shows its id. */
    if (!url)
        url = uri ? uri : "";
    if (!uri)
        uri = "";
    const char *note =
        domain ? PQgetvalue(r, row, c + 4) : eu_text_to_simple_html(req, PQgetvalue(r, row, c + 4));
    const char *avatar = col_str(r, row, c + 7);
    const char *header = col_str(r, row, c + 8);
    if (avatar)
        avatar = profile_image(req, avatar);
    if (header)
        header = profile_image(req, header);
    if (!avatar)
        avatar = eu_arena_sprintf(req->arena, "%s/avatars/original/missing.png", base);
    if (!header)
        header = eu_arena_sprintf(req->arena, "%s/headers/original/missing.png", base);
    json_t *fields = json_loads(PQgetvalue(r, row, c + 12), 0, NULL);
    if (!json_is_array(fields)) {
        json_decref(fields);
        fields = json_array();
    }
    const char *last = col_str(r, row, c + 17);
    /* A local user's highlighted role (migration 0045), else none. */
    json_t *roles =
        PQgetisnull(r, row, c + 19) ? NULL : json_loads(PQgetvalue(r, row, c + 19), 0, NULL);
    if (!json_is_array(roles)) {
        json_decref(roles);
        roles = json_array();
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s,"
        " s:I, s:I, s:I, s:[], s:o, s:o, s:b, s:b}",
        "id", id, "username", username, "acct", acct, "display_name", PQgetvalue(r, row, c + 3),
        "locked", col_bool(r, row, c + 9), "bot", col_bool(r, row, c + 10), "discoverable",
        col_bool(r, row, c + 11), "indexable", col_bool(r, row, c + 11), "group", 0, "created_at",
        PQgetvalue(r, row, c + 13), "note", note, "url", url, "uri", uri, "avatar", avatar,
        "avatar_static", avatar, "header", header, "header_static", header, "followers_count",
        col_int(r, row, c + 14), "following_count", col_int(r, row, c + 15), "statuses_count",
        col_int(r, row, c + 16), "emojis", "fields", fields, "roles", roles, "hide_collections", 0,
        "noindex", 0);
    json_object_set_new(o, "last_status_at", last ? json_string(last) : json_null());
    if (col_bool(r, row, c + 18))
        json_object_set_new(o, "suspended", json_true());
    return o;
}
