/*
 * The Account entity, and the small text helpers entities share.
 */
#include "eunha/entities.h"

#include <assert.h>
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
    return eu_html_escape_in(req->arena, text);
}

const char *
eu_html_escape_in(struct eu_arena *a, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        const char *rep = eu_html_entity(*p);
        n += rep ? strlen(rep) : 1;
    }
    char *out = eu_arena_alloc(a, n + 1), *o = out;
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

/* The fields of eunha_account_entity (tenant migration 0041). */
enum {
    A_ID,
    A_USERNAME,
    A_DOMAIN,
    A_DISPLAY_NAME,
    A_NOTE,
    A_URL,
    A_URI,
    A_AVATAR,
    A_HEADER,
    A_LOCKED,
    A_BOT,
    A_DISCOVERABLE,
    A_FIELDS,
    A_CREATED_AT,
    A_FOLLOWERS,
    A_FOLLOWING,
    A_STATUSES,
    A_LAST_STATUS_AT,
    A_SUSPENDED,
    A_ROLES,
    A_EMOJIS,
    A_NFIELDS
};
_Static_assert(A_NFIELDS == EU_ACCOUNT_NFIELDS, "one column a field");

static const char *const account_fields[A_NFIELDS] = {
    [A_ID] = "account_id",
    [A_USERNAME] = "account_username",
    [A_DOMAIN] = "account_domain",
    [A_DISPLAY_NAME] = "account_display_name",
    [A_NOTE] = "account_note",
    [A_URL] = "account_url",
    [A_URI] = "account_uri",
    [A_AVATAR] = "account_avatar",
    [A_HEADER] = "account_header",
    [A_LOCKED] = "account_locked",
    [A_BOT] = "account_bot",
    [A_DISCOVERABLE] = "account_discoverable",
    [A_FIELDS] = "account_fields",
    [A_CREATED_AT] = "account_created_at",
    [A_FOLLOWERS] = "account_followers_count",
    [A_FOLLOWING] = "account_following_count",
    [A_STATUSES] = "account_statuses_count",
    [A_LAST_STATUS_AT] = "account_last_status_at",
    [A_SUSPENDED] = "account_suspended",
    [A_ROLES] = "account_roles",
    [A_EMOJIS] = "account_emojis",
};

void
eu_account_cols_find(struct eu_account_cols *ac, const PGresult *res)
{
    for (int i = 0; i < A_NFIELDS; i++) {
        ac->col[i] = PQfnumber(res, account_fields[i]);
        assert(ac->col[i] >= 0);
    }
}

json_t *
eu_account_json(struct eu_req *req, const PGresult *r, int row, const struct eu_account_cols *ac)
{
    const int *c = ac->col;
    const char *id = PQgetvalue(r, row, c[A_ID]);
    const char *username = PQgetvalue(r, row, c[A_USERNAME]);
    const char *domain = col_str(r, row, c[A_DOMAIN]);
    const char *base = eu_req_base_url(req);
    const char *acct = domain ? eu_arena_sprintf(req->arena, "%s@%s", username, domain) : username;
    const char *url = col_str(r, row, c[A_URL]);
    const char *uri = col_str(r, row, c[A_URI]);
    if (!domain) {
        url = eu_arena_sprintf(req->arena, "%s/@%s", base, username);
        uri = eu_arena_sprintf(req->arena, "%s/users/%s", base, username);
    }
    /* A remote actor without a profile page: Mastodon shows its id. */
    if (!url)
        url = uri ? uri : "";
    if (!uri)
        uri = "";
    const char *note = domain ? PQgetvalue(r, row, c[A_NOTE])
                              : eu_text_to_simple_html(req, PQgetvalue(r, row, c[A_NOTE]));
    const char *avatar = col_str(r, row, c[A_AVATAR]);
    const char *header = col_str(r, row, c[A_HEADER]);
    if (avatar)
        avatar = profile_image(req, avatar);
    if (header)
        header = profile_image(req, header);
    if (!avatar)
        avatar = eu_arena_sprintf(req->arena, "%s/avatars/original/missing.png", base);
    if (!header)
        header = eu_arena_sprintf(req->arena, "%s/headers/original/missing.png", base);
    json_t *fields = json_loads(PQgetvalue(r, row, c[A_FIELDS]), 0, NULL);
    if (!json_is_array(fields)) {
        json_decref(fields);
        fields = json_array();
    }
    const char *last = col_str(r, row, c[A_LAST_STATUS_AT]);
    /* A local user's highlighted role (migration 0045), else none. */
    json_t *roles = PQgetisnull(r, row, c[A_ROLES])
                        ? NULL
                        : json_loads(PQgetvalue(r, row, c[A_ROLES]), 0, NULL);
    if (!json_is_array(roles)) {
        json_decref(roles);
        roles = json_array();
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s,"
        " s:I, s:I, s:I, s:o, s:o, s:o, s:b, s:b}",
        "id", id, "username", username, "acct", acct, "display_name",
        PQgetvalue(r, row, c[A_DISPLAY_NAME]), "locked", col_bool(r, row, c[A_LOCKED]), "bot",
        col_bool(r, row, c[A_BOT]), "discoverable", col_bool(r, row, c[A_DISCOVERABLE]),
        "indexable", col_bool(r, row, c[A_DISCOVERABLE]), "group", 0, "created_at",
        PQgetvalue(r, row, c[A_CREATED_AT]), "note", note, "url", url, "uri", uri, "avatar", avatar,
        "avatar_static", avatar, "header", header, "header_static", header, "followers_count",
        col_int(r, row, c[A_FOLLOWERS]), "following_count", col_int(r, row, c[A_FOLLOWING]),
        "statuses_count", col_int(r, row, c[A_STATUSES]), "emojis",
        eu_custom_emojis_json(req, col_str(r, row, c[A_EMOJIS])), "fields", fields, "roles", roles,
        "hide_collections", 0, "noindex", 0);
    json_object_set_new(o, "last_status_at", last ? json_string(last) : json_null());
    if (col_bool(r, row, c[A_SUSPENDED]))
        json_object_set_new(o, "suspended", json_true());
    return o;
}
