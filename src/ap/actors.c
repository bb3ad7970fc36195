/*
 * Actor documents of local accounts (BASE/users/NAME, and BASE/@NAME when
 * the client asks for ActivityPub), shaped as Mastodon's so its peers read
 * every field they know, and the route table of the documents src/ap/
 * serves. An account that cannot be shown (unknown, a sign-up still
 * pending or unconfirmed) is 404. A suspended one is still there (until the
 * purge after [workers] suspended_retention_seconds removes its row, and
 * an unsuspension may bring it back), so it answers as Mastodon answers
 * for a suspension that is not yet a deletion: its actor, flagged
 * `suspended` and with the profile blanked, keeping its key so peers can
 * still check what it signed.
 */
#include "eunha/ap.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "objects_internal.h"

enum {
    C_ID = EU_AP_ACTOR_ID,
    C_USERNAME = EU_AP_ACTOR_USERNAME,
    C_SUSPENDED = EU_AP_ACTOR_SUSPENDED,
    C_USABLE = EU_AP_ACTOR_USABLE,
    C_STATUSES = EU_AP_ACTOR_STATUSES,
    C_FOLLOWERS = EU_AP_ACTOR_FOLLOWERS,
    C_FOLLOWING = EU_AP_ACTOR_FOLLOWING,
    C_DISPLAY_NAME,
    C_NOTE,
    C_LOCKED,
    C_BOT,
    C_DISCOVERABLE,
    C_INDEXABLE,
    C_PUBLISHED,
    C_AVATAR,
    C_HEADER,
    C_FIELDS,
    C_PUBLIC_KEY,
    C_ALSO_KNOWN_AS,
    C_MOVED_TO,
};

enum {
    ACTORS_BY_USERNAME,
};

const struct eu_sql eu_ap_actors_sql[] = {
    /* $2 username (any case), $3 base URL. */
    [ACTORS_BY_USERNAME] =
        {"ap_actors.by_username",
         "SELECT a.id, a.username, a.suspended_at IS NOT NULL,"
         " coalesce(u.approved AND u.confirmed_at IS NOT NULL, false),"
         " a.statuses_count, a.followers_count, a.following_count,"
         " a.display_name, a.note, a.locked, a.bot, a.discoverable, a.indexable,"
         " eunha_ap_ts(date_trunc('day', a.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),"
         " a.avatar_url, a.header_url, a.fields::text, a.public_key,"
         " array_to_json(a.also_known_as)::text,"
         " (SELECT eunha_actor_uri(m.domain, m.username, m.uri, $3) FROM accounts m WHERE"
         " m.tenant_id = $1"
         "  AND m.id = a.moved_to_account_id)"
         " FROM accounts a LEFT JOIN users u ON u.tenant_id = $1 AND u.account_id = a.id"
         " WHERE a.tenant_id = $1 AND a.domain IS NULL AND lower(a.username) = lower($2)"
         " AND a.username <> 'instance.actor'"},
    {0},
};

const struct eu_sql *const eu_ap_actor_stmt = &eu_ap_actors_sql[ACTORS_BY_USERNAME];

bool
eu_ap_username_is_valid(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

bool
eu_ap_accept_is_activity(const struct eu_req *req)
{
    const char *accept = eu_req_header(req, "Accept");
    /* Mastodon answers JSON to either type whatever its profile says;
     * browsers never name them. */
    return accept && (strcasestr(accept, "application/activity+json") ||
                      strcasestr(accept, "application/ld+json"));
}

void
eu_ap_reply(struct eu_req *req, int status, json_t *doc)
{
    eu_req_add_header(req, "Vary", "Accept");
    eu_req_reply_json_typed(req, status, EU_AP_CONTENT_TYPE, doc);
}

const char *
eu_ap_actor_uri(struct eu_req *req, const char *username)
{
    return eu_arena_sprintf(req->arena, "%s/users/%s", eu_req_base_url(req), username);
}

static const char *
col_str(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static bool
col_bool(const PGresult *r, int row, int col)
{
    return !PQgetisnull(r, row, col) && PQgetvalue(r, row, col)[0] == 't';
}

/* The context of an actor: Mastodon's terms for what actors carry. */
static json_t *
actor_context(void)
{
    return json_pack(
        "[s, s, {s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:s, s:s,"
        " s:s, s:s, s:s, s:s, s:s}]",
        "https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1",
        "manuallyApprovesFollowers", "as:manuallyApprovesFollowers", "toot",
        "http://joinmastodon.org/ns#", "featured", "@id", "toot:featured", "@type", "@id",
        "featuredTags", "@id", "toot:featuredTags", "@type", "@id", "alsoKnownAs", "@id",
        "as:alsoKnownAs", "@type", "@id", "movedTo", "@id", "as:movedTo", "@type", "@id", "schema",
        "http://schema.org#", "PropertyValue", "schema:PropertyValue", "value", "schema:value",
        "discoverable", "toot:discoverable", "suspended", "toot:suspended", "memorial",
        "toot:memorial", "indexable", "toot:indexable");
}

static json_t *
image(const char *url)
{
    return json_pack("{s:s, s:s}", "type", "Image", "url", url);
}

/* The profile fields as PropertyValue attachments; fields holds them
 * rendered (value as HTML), as the API shows them. */
static json_t *
attachments(const char *fields_text)
{
    json_t *fields = json_loads(fields_text, 0, NULL), *out = json_array(), *f;
    size_t i;
    json_array_foreach(fields, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *value = json_string_value(json_object_get(f, "value"));
        if (name && value)
            json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "type", "PropertyValue", "name",
                                                 name, "value", value));
    }
    json_decref(fields);
    return out;
}

/* Mastodon's ActorSerializer for an unavailable account: the name is the
 * username, and nothing the account wrote about itself is shown. */
static void
blank_suspended(json_t *o, const char *username)
{
    static const char *const gone[] = {"icon", "image", "alsoKnownAs", "movedTo"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        json_object_del(o, gone[i]);
    json_object_set_new(o, "name", json_string(username));
    json_object_set_new(o, "summary", json_string(""));
    json_object_set_new(o, "manuallyApprovesFollowers", json_false());
    json_object_set_new(o, "discoverable", json_false());
    json_object_set_new(o, "indexable", json_false());
    json_object_set_new(o, "tag", json_array());
    json_object_set_new(o, "attachment", json_array());
    json_object_set_new(o, "suspended", json_true());
}

static json_t *
actor_json(struct eu_req *req, const PGresult *r)
{
    const char *base = eu_req_base_url(req);
    const char *username = PQgetvalue(r, 0, C_USERNAME);
    const char *id = eu_ap_actor_uri(req, username);
    const char *name = PQgetvalue(r, 0, C_DISPLAY_NAME);
    json_t *o = json_object();
    json_object_set_new(o, "@context", actor_context());
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "type", json_string(col_bool(r, 0, C_BOT) ? "Service" : "Person"));
#define SET_URI(key, fmt, ...)                                                                     \
    json_object_set_new(o, key, json_string(eu_arena_sprintf(req->arena, fmt, __VA_ARGS__)))
    SET_URI("following", "%s/following", id);
    SET_URI("followers", "%s/followers", id);
    SET_URI("inbox", "%s/inbox", id);
    SET_URI("outbox", "%s/outbox", id);
    SET_URI("featured", "%s/collections/featured", id);
    SET_URI("featuredTags", "%s/collections/tags", id);
    /* Mastodon 4.4's featured profiles: the accounts this one endorses. */
    SET_URI("endorsements", "%s/collections/endorsements", id);
    json_object_set_new(json_array_get(json_object_get(o, "@context"), 2), "endorsements",
                        json_pack("{s:s, s:s}", "@id", "toot:endorsements", "@type", "@id"));
#undef SET_URI
    json_object_set_new(o, "preferredUsername", json_string(username));
    json_object_set_new(o, "name", json_string(*name ? name : username));
    json_object_set_new(o, "summary",
                        json_string(eu_text_to_simple_html(req, PQgetvalue(r, 0, C_NOTE))));
    json_object_set_new(o, "url",
                        json_string(eu_arena_sprintf(req->arena, "%s/@%s", base, username)));
    json_object_set_new(o, "manuallyApprovesFollowers", json_boolean(col_bool(r, 0, C_LOCKED)));
    json_object_set_new(o, "discoverable", json_boolean(col_bool(r, 0, C_DISCOVERABLE)));
    json_object_set_new(o, "indexable", json_boolean(col_bool(r, 0, C_INDEXABLE)));
    json_object_set_new(o, "published", json_string(PQgetvalue(r, 0, C_PUBLISHED)));
    json_object_set_new(o, "memorial", json_false());
    /* Without a key yet (made by the account-keys job) a peer cannot check
     * this actor's signatures: say nothing rather than something wrong. */
    const char *pem = col_str(r, 0, C_PUBLIC_KEY);
    if (pem)
        json_object_set_new(o, "publicKey",
                            json_pack("{s:s, s:s, s:s}", "id",
                                      eu_arena_sprintf(req->arena, "%s#main-key", id), "owner", id,
                                      "publicKeyPem", pem));
    json_object_set_new(o, "tag", json_array());
    json_object_set_new(o, "attachment", attachments(PQgetvalue(r, 0, C_FIELDS)));
    json_object_set_new(
        o, "endpoints",
        json_pack("{s:s}", "sharedInbox", eu_arena_sprintf(req->arena, "%s/inbox", base)));
    const char *avatar = col_str(r, 0, C_AVATAR), *header = col_str(r, 0, C_HEADER);
    /* A local account's images are store keys (src/api/profile_media.c). */
    if (avatar && *avatar) {
        char *url = eu_profile_image_url(req->app, base, avatar);
        json_object_set_new(o, "icon", image(url));
        free(url);
    }
    if (header && *header) {
        char *url = eu_profile_image_url(req->app, base, header);
        json_object_set_new(o, "image", image(url));
        free(url);
    }
    json_t *aka = json_loads(PQgetvalue(r, 0, C_ALSO_KNOWN_AS), 0, NULL);
    if (json_is_array(aka) && json_array_size(aka) > 0)
        json_object_set_new(o, "alsoKnownAs", aka);
    else
        json_decref(aka);
    const char *moved = col_str(r, 0, C_MOVED_TO);
    if (moved)
        json_object_set_new(o, "movedTo", json_string(moved));
    if (col_bool(r, 0, C_SUSPENDED))
        blank_suspended(o, username);
    return o;
}

static void
on_actor(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) != 1 || !col_bool(res, 0, C_USABLE)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_ap_reply(req, 200, actor_json(req, res));
}

static void
actor_show(struct eu_req *req, void *arg)
{
    const char *username = arg;
    if (!eu_ap_username_is_valid(username)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *p[] = {username, eu_req_base_url(req)};
    eu_req_stmt(req, eu_ap_actor_stmt, 2, p, on_actor, NULL);
}

void
eu_ap_actor_document(struct eu_req *req, const char *username)
{
    actor_show(req, (void *)eu_arena_strdup(req->arena, username));
}

void
eu_ap_actor_show(struct eu_req *req, const char *username)
{
    char *u = eu_arena_strdup(req->arena, username ? username : "");
    if (eu_ap_fetch_allowed(req, actor_show, u))
        actor_show(req, u);
}
