/*
 * Statuses as ActivityPub objects: the Note (a Question with a poll), the
 * Create or Announce activity that carries it, and the two addresses that
 * serve them to anyone (BASE/users/NAME/statuses/ID[/activity], and
 * BASE/@NAME/ID for ActivityPub clients). Addressing follows Mastodon's
 * TagManager exactly, since peers decide from to/cc who may see a status.
 *
 * Only public and unlisted statuses are served to an unsigned GET; a
 * private or direct one is 404 as if it did not exist, until authorized
 * fetch can tell who asks. The renderer itself does not filter: delivery
 * builds activities of every visibility with it.
 */
#include "eunha/ap.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "objects_internal.h"

/* The fields of EU_AP_NOTE_COLUMNS. */
enum {
    C_ID,
    C_USERNAME,
    C_VISIBILITY,
    C_REBLOG_OF,
    C_PUBLISHED,
    C_UPDATED,
    C_SENSITIVE,
    C_SPOILER,
    C_CONTENT,
    C_LANGUAGE,
    C_IN_REPLY_TO,
    C_CONVERSATION,
    C_MENTIONS,
    C_TAGS,
    C_POLL,
    C_ORIGINAL, /* a reblog's [object URI, its author's actor URI] */
    C_MEDIA,    /* eunha_media_json() objects of its ready media, in order */
    C_EMOJIS,   /* eunha_emojis_in(): the custom emoji its text uses, or NULL */
    C_QUOTE_POLICY,
    C_QUOTE, /* {"state", "uri", "approval"} of its quote, or NULL */
    C_NFIELDS
};

/* Their names, which EU_AP_NOTE_COLUMNS gives them. */
static const char *const note_fields[C_NFIELDS] = {
    [C_ID] = "id",
    [C_USERNAME] = "username",
    [C_VISIBILITY] = "visibility",
    [C_REBLOG_OF] = "reblog_of_id",
    [C_PUBLISHED] = "published",
    [C_UPDATED] = "updated",
    [C_SENSITIVE] = "sensitive",
    [C_SPOILER] = "spoiler_text",
    [C_CONTENT] = "content",
    [C_LANGUAGE] = "language",
    [C_IN_REPLY_TO] = "in_reply_to",
    [C_CONVERSATION] = "conversation_id",
    [C_MENTIONS] = "mentions",
    [C_TAGS] = "tags",
    [C_POLL] = "poll",
    [C_ORIGINAL] = "original",
    [C_MEDIA] = "media",
    [C_EMOJIS] = "emojis",
    [C_QUOTE_POLICY] = "quote_policy",
    [C_QUOTE] = "quote",
};

/* The column of field f in r. Found by name for each use: a Note is
 * rendered a row at a time by callers in three files, a few at once, and
 * a name is a handful of comparisons. */
static int
col(const PGresult *r, int f)
{
    return PQfnumber(r, note_fields[f]);
}

enum {
    OBJECTS_NOTES,
    OBJECTS_SHOW,
    OBJECTS_BY_IDS,
};

const struct eu_sql eu_ap_objects_sql[] = {
    /* The outbox's: no row when nobody remote would receive the status
     * (the audience ap_deliver.enqueue would find: remote followers unless
     * direct, remote mentions, a reblogged remote author), so a tenant
     * without remote contacts renders no Note for each post. */
    [OBJECTS_NOTES] =
        {"ap_objects.notes",
         "SELECT " EU_AP_NOTE_COLUMNS EU_AP_NOTE_FROM
         " WHERE s.tenant_id = $1 AND s.id = ANY($2::bigint[]) AND s.local"
         " AND s.deleted_at IS NULL"
         /* The author's remote followers first (follows_remote_followers,
          * 0074; OFFSET 0 keeps them a subquery), each then one probe of
          * its account: joined freely, the planner read the tenant's
          * accounts in turn to probe the follows of each. */
         " AND ((s.visibility < 3 AND EXISTS (SELECT 1 FROM (SELECT rf.account_id FROM follows"
         "  rf WHERE rf.tenant_id = $1 AND rf.target_account_id = s.account_id AND NOT rf.local"
         "  OFFSET 0) fr JOIN accounts ra ON ra.tenant_id = $1 AND ra.id = fr.account_id"
         "  AND ra.domain IS NOT NULL AND ra.suspended_at IS NULL))"
         " OR (s.reblog_of_id IS NULL AND EXISTS (SELECT 1 FROM mentions rm JOIN accounts ra"
         "  ON ra.tenant_id = $1 AND ra.id = rm.account_id AND ra.domain IS NOT NULL"
         "  AND ra.suspended_at IS NULL WHERE rm.tenant_id = $1 AND rm.status_id = s.id))"
         " OR EXISTS (SELECT 1 FROM statuses ro JOIN accounts ra ON ra.tenant_id = $1"
         "  AND ra.id = ro.account_id AND ra.domain IS NOT NULL WHERE ro.tenant_id = $1"
         "  AND ro.id = s.reblog_of_id))"},
    /* $2 id, $3 base URL, $4 the username the address names (any case):
     * a status under another account's address is not found. */
    [OBJECTS_SHOW] = {"ap_objects.show", "SELECT " EU_AP_NOTE_COLUMNS
                                         ", a.suspended_at IS NOT NULL AS suspended" EU_AP_NOTE_FROM
                                         " AND lower(a.username) = lower($4)"
                                         " WHERE s.tenant_id = $1 AND s.id = $2::bigint AND s.local"
                                         " AND s.deleted_at IS NULL AND s.visibility <= 1"},
    /* $2 the ids, $3 base URL: every live local one, whoever would receive
     * it (a user's archive). */
    [OBJECTS_BY_IDS] = {"ap_objects.by_ids", "SELECT " EU_AP_NOTE_COLUMNS EU_AP_NOTE_FROM
                                             " WHERE s.tenant_id = $1 AND s.id = ANY($2::bigint[])"
                                             " AND s.local AND s.deleted_at IS NULL"},
    {0},
};

const struct eu_sql *
eu_ap_note_stmt(void)
{
    return &eu_ap_objects_sql[OBJECTS_NOTES];
}

const struct eu_sql *
eu_ap_notes_by_ids_stmt(void)
{
    return &eu_ap_objects_sql[OBJECTS_BY_IDS];
}

const char *
eu_ap_note_row_id(const PGresult *res, int row)
{
    return PQgetvalue(res, row, col(res, C_ID));
}

int
eu_ap_note_row_visibility(const PGresult *res, int row)
{
    return atoi(PQgetvalue(res, row, col(res, C_VISIBILITY)));
}

bool
eu_ap_note_row_is_reblog(const PGresult *res, int row)
{
    return !PQgetisnull(res, row, col(res, C_REBLOG_OF));
}

static const char *
col_str(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static void
set_fmt(json_t *o, const char *key, char *s)
{
    json_object_set_new(o, key, s ? json_string(s) : json_null());
    free(s);
}

static json_t *
parse_array(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_array(v)) {
        json_decref(v);
        v = json_array();
    }
    return v;
}

/* Mastodon's TagManager#to and #cc for a row: who a status is addressed
 * to first and who else may see it. Mentioned accounts are in cc for
 * public, unlisted and private statuses and are the whole audience of a
 * direct one; a reblog also copies the boosted status's author. */
static void
address(const char *base, const PGresult *r, int row, json_t *mentions, json_t **to_out,
        json_t **cc_out)
{
    const char *user = PQgetvalue(r, row, col(r, C_USERNAME));
    char *followers = eu_xasprintf("%s/users/%s/followers", base, user);
    int vis = atoi(PQgetvalue(r, row, col(r, C_VISIBILITY)));
    json_t *to = json_array(), *cc = json_array(), *m;
    size_t i;
    if (!PQgetisnull(r, row, col(r, C_REBLOG_OF))) {
        json_t *orig = parse_array(col_str(r, row, col(r, C_ORIGINAL)));
        json_t *author = json_array_get(orig, 1);
        if (json_is_string(author))
            json_array_append(cc, author);
        json_decref(orig);
    }
    switch (vis) {
    case 0:
        json_array_append_new(to, json_string(EU_AP_PUBLIC));
        json_array_append_new(cc, json_string(followers));
        break;
    case 1:
        json_array_append_new(to, json_string(followers));
        json_array_append_new(cc, json_string(EU_AP_PUBLIC));
        break;
    case 2:
        json_array_append_new(to, json_string(followers));
        break;
    default:
        break;
    }
    json_array_foreach(mentions, i, m)
    {
        json_t *href = json_array_get(m, 0);
        if (json_is_string(href))
            json_array_append(vis == 3 ? to : cc, href);
    }
    free(followers);
    *to_out = to;
    *cc_out = cc;
}

/* The custom emoji the text uses as Mastodon's Emoji tags, appended to
 * out: an id under the tenant's base, ":shortcode:" and the image. */
static void
emoji_tags(struct eu_app *app, const char *base, const char *rows_text, json_t *out)
{
    json_t *rows = rows_text ? json_loads(rows_text, 0, NULL) : NULL, *e;
    size_t i;
    json_array_foreach(rows, i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        const char *code = json_string_value(json_object_get(e, "shortcode"));
        const char *image = json_string_value(json_object_get(e, "image"));
        const char *mime = json_string_value(json_object_get(e, "content_type"));
        const char *updated = json_string_value(json_object_get(e, "updated_at"));
        if (!id || !code || !image)
            continue;
        json_t *icon = json_pack("{s:s}", "type", "Image");
        if (mime)
            json_object_set_new(icon, "mediaType", json_string(mime));
        set_fmt(icon, "url", eu_profile_image_url(app, base, image));
        json_t *t = json_pack("{s:s, s:o}", "type", "Emoji", "icon", icon);
        set_fmt(t, "id", eu_xasprintf("%s/emojis/%s", base, id));
        set_fmt(t, "name", eu_xasprintf(":%s:", code));
        if (updated)
            json_object_set_new(t, "updated", json_string(updated));
        json_array_append_new(out, t);
    }
    json_decref(rows);
}

/* Mention tags ("@user@domain", the actor as href), then hashtags. */
static json_t *
tags(const char *base, const char *domain, const PGresult *r, int row, json_t *mentions)
{
    json_t *out = json_array(), *m;
    size_t i;
    json_array_foreach(mentions, i, m)
    {
        const char *href = json_string_value(json_array_get(m, 0));
        const char *user = json_string_value(json_array_get(m, 1));
        const char *mdomain = json_string_value(json_array_get(m, 2));
        if (!href || !user)
            continue;
        json_t *t = json_pack("{s:s, s:s}", "type", "Mention", "href", href);
        set_fmt(t, "name", eu_xasprintf("@%s@%s", user, mdomain ? mdomain : domain));
        json_array_append_new(out, t);
    }
    json_t *names = parse_array(col_str(r, row, col(r, C_TAGS))), *n;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        if (!name)
            continue;
        char *lower = eu_xstrdup(name);
        for (char *c = lower; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        json_t *t = json_pack("{s:s}", "type", "Hashtag");
        set_fmt(t, "href", eu_xasprintf("%s/tags/%s", base, lower));
        set_fmt(t, "name", eu_xasprintf("#%s", name));
        json_array_append_new(out, t);
        free(lower);
    }
    json_decref(names);
    return out;
}

/* A poll's members of a Question: its options with their vote counts
 * (0 while the author hides them), endTime, closed once expired, and
 * votersCount. */
static void
add_poll(json_t *o, const char *poll_text)
{
    json_t *poll = json_loads(poll_text, 0, NULL);
    if (!json_is_object(poll)) {
        json_decref(poll);
        return;
    }
    bool hidden = json_is_true(json_object_get(poll, "hidden"));
    json_t *options = json_array(), *opt;
    size_t i;
    json_array_foreach(json_object_get(poll, "options"), i, opt)
    {
        const char *title = json_string_value(json_array_get(opt, 0));
        json_int_t votes = json_integer_value(json_array_get(opt, 1));
        json_array_append_new(options,
                              json_pack("{s:s, s:s, s:{s:s, s:I}}", "type", "Note", "name",
                                        title ? title : "", "replies", "type", "Collection",
                                        "totalItems", hidden ? (json_int_t)0 : votes));
    }
    bool multiple = json_is_true(json_object_get(poll, "multiple"));
    json_object_set_new(o, multiple ? "anyOf" : "oneOf", options);
    json_t *end = json_object_get(poll, "end");
    json_object_set(o, "endTime", end);
    if (json_is_true(json_object_get(poll, "expired")))
        json_object_set(o, "closed", end);
    json_object_set(o, "votersCount", json_object_get(poll, "voters"));
    json_decref(poll);
}

/* Mastodon's tag URI of a conversation. Conversations here are numbers
 * without a row of their own, so the date part is a fixed one: what makes
 * the URI the conversation's is that it is the same on every status of it. */
static char *
conversation_uri(const char *domain, const char *id)
{
    return eu_xasprintf("tag:%s,2022-01-01:objectId=%s:objectType=Conversation", domain, id);
}

/* Mastodon's attachment of a Note for each medium: a Document with the
 * original file's URL, its type, the description as name, the blurhash,
 * focalPoint and the original's size. */
static json_t *
attachments(struct eu_app *app, const char *base, const char *text)
{
    json_t *rows = parse_array(text), *m, *out = json_array();
    size_t i;
    json_array_foreach(rows, i, m)
    {
        json_t *e = eu_media_attachment_json(app, base, m);
        const char *url = json_string_value(json_object_get(e, "url"));
        if (url) {
            const char *mime = json_string_value(json_object_get(m, "mime"));
            json_t *d = json_pack("{s:s, s:s, s:s}", "type", "Document", "mediaType",
                                  mime ? mime : "application/octet-stream", "url", url);
            json_object_set(d, "name", json_object_get(e, "description"));
            json_object_set(d, "blurhash", json_object_get(e, "blurhash"));
            json_t *meta = json_object_get(e, "meta");
            json_t *focus = json_object_get(meta, "focus");
            if (focus)
                json_object_set_new(d, "focalPoint",
                                    json_pack("[f, f]",
                                              json_number_value(json_object_get(focus, "x")),
                                              json_number_value(json_object_get(focus, "y"))));
            json_t *orig = json_object_get(meta, "original");
            json_t *w = json_object_get(orig, "width"), *h = json_object_get(orig, "height");
            if (json_is_integer(w) && json_is_integer(h)) {
                json_object_set(d, "width", w);
                json_object_set(d, "height", h);
            }
            json_array_append_new(out, d);
        }
        json_decref(e);
    }
    json_decref(rows);
    return out;
}

/*
 * The quote members of a Note, as Mastodon 4.5 writes them: who may quote
 * it (interactionPolicy.canQuote: the public, the author's followers, and
 * always the author), and what it quotes under FEP-044f's quote and the
 * older quoteUri and _misskey_quote, with quoteAuthorization once the
 * quoted author approved. A quote refused or taken back names nothing.
 */
static void
add_quote(json_t *o, const char *base, const char *user, const PGresult *r, int row)
{
    int pc = col(r, C_QUOTE_POLICY), qc = col(r, C_QUOTE);
    if (pc < 0 || qc < 0)
        return;
    int vis = atoi(PQgetvalue(r, row, col(r, C_VISIBILITY)));
    int policy = PQgetisnull(r, row, pc) ? 2 : atoi(PQgetvalue(r, row, pc));
    json_t *automatic = json_array();
    if (vis < 2 && policy == 0) {
        json_array_append_new(automatic, json_string(EU_AP_PUBLIC));
    } else if (vis < 2 && policy == 1) {
        char *followers = eu_xasprintf("%s/users/%s/followers", base, user);
        json_array_append_new(automatic, json_string(followers));
        free(followers);
    }
    char *me = eu_xasprintf("%s/users/%s", base, user);
    json_array_append_new(automatic, json_string(me));
    free(me);
    json_object_set_new(
        o, "interactionPolicy",
        json_pack("{s:{s:o, s:[]}}", "canQuote", "automaticApproval", automatic, "manualApproval"));
    json_t *q = PQgetisnull(r, row, qc) ? NULL : json_loads(PQgetvalue(r, row, qc), 0, NULL);
    const char *state = json_string_value(json_object_get(q, "state"));
    json_t *uri = json_object_get(q, "uri");
    if (state && json_is_string(uri) && strcmp(state, "rejected") != 0 &&
        strcmp(state, "revoked") != 0) {
        json_object_set(o, "quote", uri);
        json_object_set(o, "quoteUri", uri);
        json_object_set(o, "_misskey_quote", uri);
        json_t *approval = json_object_get(q, "approval");
        if (strcmp(state, "accepted") == 0 && json_is_string(approval))
            json_object_set(o, "quoteAuthorization", approval);
    }
    json_decref(q);
}

json_t *
eu_ap_note_json(struct eu_app *app, const char *base, const char *domain, const PGresult *r,
                int row)
{
    if (!PQgetisnull(r, row, col(r, C_REBLOG_OF)))
        return NULL;
    const char *id = PQgetvalue(r, row, col(r, C_ID)),
               *user = PQgetvalue(r, row, col(r, C_USERNAME));
    const char *spoiler = PQgetvalue(r, row, col(r, C_SPOILER)),
               *lang = col_str(r, row, col(r, C_LANGUAGE));
    const char *content = PQgetvalue(r, row, col(r, C_CONTENT));
    json_t *mentions = parse_array(col_str(r, row, col(r, C_MENTIONS))), *to, *cc;
    address(base, r, row, mentions, &to, &cc);
    bool question = !PQgetisnull(r, row, col(r, C_POLL));
    json_t *o = json_object();
    set_fmt(o, "id", eu_xasprintf("%s/users/%s/statuses/%s", base, user, id));
    json_object_set_new(o, "type", json_string(question ? "Question" : "Note"));
    json_object_set_new(o, "summary", *spoiler ? json_string(spoiler) : json_null());
    const char *parent = col_str(r, row, col(r, C_IN_REPLY_TO));
    json_object_set_new(o, "inReplyTo", parent ? json_string(parent) : json_null());
    json_object_set_new(o, "published", json_string(PQgetvalue(r, row, col(r, C_PUBLISHED))));
    if (!PQgetisnull(r, row, col(r, C_UPDATED)))
        json_object_set_new(o, "updated", json_string(PQgetvalue(r, row, col(r, C_UPDATED))));
    set_fmt(o, "url", eu_xasprintf("%s/@%s/%s", base, user, id));
    set_fmt(o, "attributedTo", eu_xasprintf("%s/users/%s", base, user));
    json_object_set_new(o, "to", to);
    json_object_set_new(o, "cc", cc);
    json_object_set_new(o, "sensitive",
                        json_boolean(PQgetvalue(r, row, col(r, C_SENSITIVE))[0] == 't'));
    const char *conv = col_str(r, row, col(r, C_CONVERSATION));
    if (conv)
        set_fmt(o, "conversation", conversation_uri(domain, conv));
    json_object_set_new(o, "content", json_string(content));
    if (lang && *lang)
        json_object_set_new(o, "contentMap", json_pack("{s:s}", lang, content));
    json_object_set_new(o, "attachment", attachments(app, base, col_str(r, row, col(r, C_MEDIA))));
    json_t *tag = tags(base, domain, r, row, mentions);
    emoji_tags(app, base, col_str(r, row, col(r, C_EMOJIS)), tag);
    json_object_set_new(o, "tag", tag);
    if (question)
        add_poll(o, PQgetvalue(r, row, col(r, C_POLL)));
    add_quote(o, base, user, r, row);
    /* Its collections (note_collections.c), named by address. */
    set_fmt(o, "replies", eu_xasprintf("%s/users/%s/statuses/%s/replies", base, user, id));
    set_fmt(o, "likes", eu_xasprintf("%s/users/%s/statuses/%s/likes", base, user, id));
    set_fmt(o, "shares", eu_xasprintf("%s/users/%s/statuses/%s/shares", base, user, id));
    json_decref(mentions);
    return o;
}

json_t *
eu_ap_activity_json(struct eu_app *app, const char *base, const char *domain, const PGresult *r,
                    int row)
{
    const char *id = PQgetvalue(r, row, col(r, C_ID)),
               *user = PQgetvalue(r, row, col(r, C_USERNAME));
    bool reblog = !PQgetisnull(r, row, col(r, C_REBLOG_OF));
    json_t *o = json_object();
    set_fmt(o, "id", eu_xasprintf("%s/users/%s/statuses/%s/activity", base, user, id));
    json_object_set_new(o, "type", json_string(reblog ? "Announce" : "Create"));
    set_fmt(o, "actor", eu_xasprintf("%s/users/%s", base, user));
    json_object_set_new(o, "published", json_string(PQgetvalue(r, row, col(r, C_PUBLISHED))));
    if (reblog) {
        json_t *mentions = json_array(), *to, *cc;
        address(base, r, row, mentions, &to, &cc);
        json_decref(mentions);
        json_object_set_new(o, "to", to);
        json_object_set_new(o, "cc", cc);
        json_t *orig = parse_array(col_str(r, row, col(r, C_ORIGINAL)));
        json_t *uri = json_array_get(orig, 0);
        json_object_set(o, "object", json_is_string(uri) ? uri : json_null());
        json_decref(orig);
        return o;
    }
    json_t *note = eu_ap_note_json(app, base, domain, r, row);
    json_object_set(o, "to", json_object_get(note, "to"));
    json_object_set(o, "cc", json_object_get(note, "cc"));
    json_object_set_new(o, "object", note);
    return o;
}

json_t *
eu_ap_note_context(void)
{
    json_t *c = json_pack(
        "[s, {s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}]",
        "https://www.w3.org/ns/activitystreams", "ostatus", "http://ostatus.org#", "atomUri",
        "ostatus:atomUri", "inReplyToAtomUri", "ostatus:inReplyToAtomUri", "conversation",
        "ostatus:conversation", "sensitive", "as:sensitive", "toot", "http://joinmastodon.org/ns#",
        "votersCount", "toot:votersCount", "Hashtag", "as:Hashtag", "Emoji", "toot:Emoji");
    /* The quote terms (FEP-044f, Fedibird's, Misskey's, GoToSocial's
     * interaction policy), as Mastodon 4.5 names them. */
    json_t *terms = json_array_get(c, 1);
    json_object_set_new(terms, "quote", json_string("https://w3id.org/fep/044f#quote"));
    json_object_set_new(terms, "quoteUri", json_string("http://fedibird.com/ns#quoteUri"));
    json_object_set_new(terms, "_misskey_quote",
                        json_string("https://misskey-hub.net/ns#_misskey_quote"));
    json_object_set_new(terms, "quoteAuthorization",
                        json_pack("{s:s, s:s}", "@id",
                                  "https://w3id.org/fep/044f#quoteAuthorization", "@type", "@id"));
    json_object_set_new(terms, "gts", json_string("https://gotosocial.org/ns#"));
    json_object_set_new(terms, "interactionPolicy",
                        json_pack("{s:s, s:s}", "@id", "gts:interactionPolicy", "@type", "@id"));
    json_object_set_new(terms, "canQuote",
                        json_pack("{s:s, s:s}", "@id", "gts:canQuote", "@type", "@id"));
    json_object_set_new(terms, "automaticApproval",
                        json_pack("{s:s, s:s}", "@id", "gts:automaticApproval", "@type", "@id"));
    json_object_set_new(terms, "manualApproval",
                        json_pack("{s:s, s:s}", "@id", "gts:manualApproval", "@type", "@id"));
    return c;
}

json_t *
eu_ap_note_with_context(json_t *obj)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "@context", eu_ap_note_context());
    json_object_update(doc, obj);
    json_decref(obj);
    return doc;
}

/* ------------------------------------------------------------ handlers */

struct show {
    const char *username, *id;
    bool activity;
};

static void
redirect_to_page(struct eu_req *req, const char *username, const char *id)
{
    eu_req_add_header(
        req, "Location",
        eu_arena_sprintf(req->arena, "%s/@%s/%s", eu_req_base_url(req), username, id));
    eu_req_add_header(req, "Vary", "Accept");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
on_show(struct eu_req *req, PGresult *res, void *arg)
{
    struct show *sh = arg;
    /* A reblog has no Note of its own: its address is its activity's. */
    if (PQntuples(res) != 1 || (eu_ap_note_row_is_reblog(res, 0) && !sh->activity) ||
        (eu_ap_note_row_is_reblog(res, 0) && PQgetisnull(res, 0, col(res, C_ORIGINAL)))) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* The author is suspended but not purged: Mastodon's answer while a
     * suspension can still be lifted. */
    if (PQgetvalue(res, 0, PQfnumber(res, "suspended"))[0] == 't') {
        eu_req_reply_error(req, 403, "This account has been suspended");
        return;
    }
    const char *base = eu_req_base_url(req), *domain = req->tenant->domain;
    json_t *doc = sh->activity ? eu_ap_activity_json(req->app, base, domain, res, 0)
                               : eu_ap_note_json(req->app, base, domain, res, 0);
    eu_ap_reply(req, 200, eu_ap_note_with_context(doc));
}

static void
show_resume(struct eu_req *req, void *arg)
{
    struct show *sh = arg;
    const char *p[] = {sh->id, eu_req_base_url(req), sh->username};
    eu_req_stmt(req, &eu_ap_objects_sql[OBJECTS_SHOW], 3, p, on_show, sh);
}

static void
show(struct eu_req *req, const char *username, const char *id, bool activity)
{
    if (!eu_ap_username_is_valid(username) || !eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct show *sh = eu_arena_calloc(req->arena, sizeof(*sh));
    sh->username = username;
    sh->id = id;
    sh->activity = activity;
    if (eu_ap_fetch_allowed(req, show_resume, sh))
        show_resume(req, sh);
}

void
eu_ap_note_show(struct eu_req *req, const char *username, const char *id)
{
    show(req, username, id, false);
}

void
eu_ap_users_status(struct eu_req *req)
{
    const char *user = eu_req_param(req, "username"), *id = eu_req_param(req, "id");
    /* Mastodon sends a browser to the status's page. */
    const char *accept = eu_req_header(req, "Accept");
    if (!eu_ap_accept_is_activity(req) && accept && strstr(accept, "text/html") &&
        eu_ap_username_is_valid(user) && eu_id_is_valid(id)) {
        redirect_to_page(req, user, id);
        return;
    }
    show(req, user, id, false);
}

void
eu_ap_users_status_activity(struct eu_req *req)
{
    show(req, eu_req_param(req, "username"), eu_req_param(req, "id"), true);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_objects_routes[] = {
    {EU_HTTP_GET, "/users/:username/statuses/:id", eu_ap_users_status, NULL, 0},
    {EU_HTTP_GET, "/users/:username/statuses/:id/activity", eu_ap_users_status_activity, NULL, 0},
    {0},
};
