/*
 * Storing what ingest.c parsed: a remote account upserted by its URI, a
 * remote status inserted or edited by its URI, a remote status deleted.
 * Each is one statement (data-modifying CTEs), so it is atomic without a
 * transaction held across callbacks, and a job that runs again after a
 * crash finds the row and changes nothing twice. The counters move through
 * the triggers (0013 for inserts and deletions, 0020 for a reply linked to
 * a parent that arrived after it).
 *
 * Local accounts and statuses have no uri: a mention of a local account
 * and a reply to a local status are recognised by the tenant's own URL
 * shapes (BASE/users/NAME, BASE/@NAME, BASE/users/NAME/statuses/ID).
 */
#include "eunha/apingest.h"

#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/mediaclean.h"
#include "eunha/mem.h"
#include "eunha/sql.h"

enum { INGEST_ACCOUNT_UPSERT, INGEST_STATUS_STORE, INGEST_STATUS_DELETE };

/*
 * The end of the em CTE that keeps a remote author's emoji: one row per
 * shortcode and domain, whose changed image URL replaces the kept one,
 * and the emoji_fetch job of each it added or changed
 * (src/media/emoji_fetch.c). One whose image is cached (store keys, no
 * "://") keeps its files until the job replaces them and deletes the old
 * ones; one never cached takes the new URL at once.
 */
#define EMOJI_KEPT                                                                                 \
    "  ON CONFLICT (tenant_id, coalesce(domain, ''), shortcode) DO UPDATE SET"                     \
    "  image = CASE WHEN strpos(custom_emojis.image, '://') > 0 THEN excluded.image"               \
    "  ELSE custom_emojis.image END,"                                                              \
    "  static_image = CASE WHEN strpos(custom_emojis.static_image, '://') > 0"                     \
    "  THEN excluded.static_image ELSE custom_emojis.static_image END,"                            \
    "  uri = excluded.uri, image_remote_url = excluded.image_remote_url, updated_at = now()"       \
    "  WHERE custom_emojis.image_remote_url IS DISTINCT FROM excluded.image_remote_url"            \
    "  RETURNING id, image_remote_url),"                                                           \
    " ej AS (INSERT INTO jobs (tenant_id, queue, kind, payload) SELECT $1, 'media',"               \
    "  'emoji_fetch', jsonb_build_object('id', em.id::text, 'url', em.image_remote_url)"           \
    "  FROM em)"

const struct eu_sql eu_ingest_sql[] = {
    /* $2 uri, $3 username, $4 domain, $5 display name, $6 note, $7 url,
     * $8-$13 inbox, shared inbox, outbox, followers, following, featured,
     * $14 key, $15 key id, $16 avatar, $17 header, $18 fields, $19 locked,
     * $20 bot, $21 discoverable, $22 indexable, $23 aliases (JSON), $24
     * movedTo, $25 type, $26 published, $27 custom emoji of its tag (JSON,
     * kept per its domain as ingest.status_store keeps a note's). A local
     * account (domain NULL) is left alone: no row comes back. */
    [INGEST_ACCOUNT_UPSERT] =
        {"ingest.account_upsert",
         "WITH up AS (INSERT INTO accounts AS a (tenant_id, uri, username, domain, display_name, "
         "note, url,"
         " inbox_url, shared_inbox_url, outbox_url, followers_url, following_url, featured_url,"
         " public_key, public_key_id, avatar_url, header_url, fields, locked, bot, discoverable,"
         " indexable, also_known_as, moved_to_uri, actor_type, created_at, last_fetched_at)"
         " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
         " $18::jsonb, $19::bool, $20::bool, $21::bool, $22::bool,"
         " ARRAY(SELECT jsonb_array_elements_text($23::jsonb)), $24, $25,"
         " coalesce(least($26::timestamptz, now()), now()), now())"
         " ON CONFLICT (tenant_id, uri) WHERE uri IS NOT NULL DO UPDATE SET"
         " username = excluded.username, domain = excluded.domain,"
         " display_name = excluded.display_name, note = excluded.note, url = excluded.url,"
         " inbox_url = excluded.inbox_url, shared_inbox_url = excluded.shared_inbox_url,"
         " outbox_url = excluded.outbox_url, followers_url = excluded.followers_url,"
         " following_url = excluded.following_url, featured_url = excluded.featured_url,"
         " public_key = coalesce(excluded.public_key, a.public_key),"
         " public_key_id = coalesce(excluded.public_key_id, a.public_key_id),"
         " avatar_url = excluded.avatar_url, header_url = excluded.header_url,"
         " fields = excluded.fields, locked = excluded.locked, bot = excluded.bot,"
         " discoverable = excluded.discoverable, indexable = excluded.indexable,"
         " also_known_as = excluded.also_known_as, moved_to_uri = excluded.moved_to_uri,"
         " actor_type = excluded.actor_type, last_fetched_at = now(), updated_at = now()"
         " WHERE a.tenant_id = $1 AND a.domain IS NOT NULL"
         " RETURNING id),"
         " em AS (INSERT INTO custom_emojis (tenant_id, shortcode, domain, image, static_image,"
         "  uri, image_remote_url) SELECT DISTINCT ON (x.o ->> 'shortcode') $1,"
         "  x.o ->> 'shortcode', $4, x.o ->> 'url', x.o ->> 'url', x.o ->> 'uri', x.o ->> 'url'"
         "  FROM jsonb_array_elements($27::jsonb) x(o)"
         "  WHERE EXISTS (SELECT 1 FROM up) AND NOT eunha_domain_rejects_media($1, $4)" EMOJI_KEPT
         " SELECT id FROM up"},
    /*
     * $2 uri, $3 author, $4 url, $5 content, $6 spoiler, $7 sensitive,
     * $8 visibility, $9 language, $10 parent uri, $11 parent's local id,
     * $12 published, $13 updated, $14 mention hrefs (JSON), $15 local
     * usernames mentioned (JSON), $16 hashtags (JSON), $17 attachments
     * (JSON, at most 4: url, type, name, blurhash, fx, fy, width, height,
     * mime), $18 custom emoji of its tag (JSON: shortcode, url, uri).
     * An existing status is edited only by its author, only when
     * updated is newer than its last edit and only when something changed
     * (attachments included); replies that arrived before it are linked to
     * it. Attachments are rows with remote_url and no file of ours (not
     * cached); an edit replaces them, the old ones kept at position -1 for
     * the edit history, as local edits do. The emoji are kept per the
     * author's domain (a changed image replaces the old), as Mastodon's
     * ProcessEmojis does, unless the tenant rejects that domain's media:
     * then, as Mastodon skips them, none is kept. Their image is the
     * remote URL, which the renderer shows as url and static_url, until
     * the emoji_fetch job each new or changed one is given has cached it
     * (src/media/emoji_fetch.c); the caller wakes the media queue.
     */
    [INGEST_STATUS_STORE] =
        {"ingest.status_store",
         "WITH par AS (SELECT p.id, p.account_id, coalesce(p.conversation_id, p.id) AS conv"
         "  FROM statuses p WHERE p.tenant_id = $1 AND p.deleted_at IS NULL"
         "  AND (p.uri = $10 OR (p.local AND p.id = $11::bigint)) LIMIT 1),"
         " cur AS (SELECT c.id, c.account_id FROM statuses c WHERE c.tenant_id = $1"
         "  AND c.uri = $2 FOR UPDATE),"
         " ins AS (INSERT INTO statuses (tenant_id, account_id, uri, url, local, content,"
         "  spoiler_text, sensitive, visibility, language, in_reply_to_id,"
         "  in_reply_to_account_id, in_reply_to_uri, conversation_id, created_at)"
         "  SELECT $1, $3::bigint, $2, $4, false, $5, $6, $7::bool, $8::smallint, $9,"
         "  (SELECT id FROM par), (SELECT account_id FROM par), $10,"
         "  coalesce((SELECT conv FROM par), nextval('conversations_id_seq')),"
         "  coalesce(least($12::timestamptz, now()), now())"
         "  WHERE NOT EXISTS (SELECT 1 FROM cur)"
         "  ON CONFLICT (tenant_id, uri) WHERE uri IS NOT NULL DO NOTHING RETURNING id),"
         " ok AS (SELECT s.id FROM statuses s JOIN cur ON cur.id = s.id WHERE s.tenant_id = $1"
         "  AND s.account_id = $3::bigint AND s.deleted_at IS NULL"
         "  AND $13::timestamptz > coalesce(s.edited_at, '-infinity')"
         "  AND (s.content IS DISTINCT FROM $5 OR s.spoiler_text IS DISTINCT FROM $6"
         "  OR s.sensitive IS DISTINCT FROM $7::bool"
         "  OR (SELECT coalesce(jsonb_agg(jsonb_build_array(om.remote_url, om.description)"
         "  ORDER BY om.position), '[]') FROM media_attachments om WHERE om.tenant_id = $1"
         "  AND om.status_id = s.id AND om.position >= 0) IS DISTINCT FROM"
         "  (SELECT coalesce(jsonb_agg(jsonb_build_array(x.o ->> 'url', x.o ->> 'name')"
         "  ORDER BY x.i), '[]') FROM jsonb_array_elements($17::jsonb) WITH ORDINALITY x(o, i)))),"
         " cm AS (SELECT coalesce(array_agg(m.id ORDER BY m.position), '{}') AS ids,"
         "  coalesce(array_agg(coalesce(m.description, '') ORDER BY m.position), '{}') AS descs"
         "  FROM media_attachments m WHERE m.tenant_id = $1 AND m.status_id IN (SELECT id FROM ok)"
         "  AND m.position >= 0),"
         " orig AS (INSERT INTO status_edits (tenant_id, status_id, account_id, text, content,"
         "  spoiler_text, sensitive, created_at, media_ids, media_descriptions)"
         "  SELECT $1, s.id, s.account_id, s.text,"
         "  s.content, s.spoiler_text, s.sensitive, s.created_at, cm.ids, cm.descs"
         "  FROM statuses s JOIN ok ON ok.id = s.id CROSS JOIN cm"
         "  WHERE s.tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM status_edits e"
         "  WHERE e.tenant_id = $1 AND e.status_id = s.id)),"
         " upd AS (UPDATE statuses s SET content = $5, spoiler_text = $6, sensitive = $7::bool,"
         "  language = coalesce($9, s.language), url = coalesce($4, s.url),"
         "  edited_at = least($13::timestamptz, now()), updated_at = now() FROM ok"
         "  WHERE s.tenant_id = $1 AND s.id = ok.id RETURNING s.id),"
         " st AS (SELECT id FROM ins UNION ALL SELECT id FROM upd),"
         " mold AS (UPDATE media_attachments SET position = -1 WHERE tenant_id = $1"
         "  AND status_id IN (SELECT id FROM upd) AND position >= 0),"
         " mnew AS (INSERT INTO media_attachments (tenant_id, account_id, status_id, position,"
         "  type, state, description, blurhash, focus_x, focus_y, meta, remote_url,"
         "  file_content_type) SELECT $1, $3::bigint, st.id, x.i - 1, x.o ->> 'type', 'ready',"
         "  x.o ->> 'name', x.o ->> 'blurhash', (x.o ->> 'fx')::real, (x.o ->> 'fy')::real,"
         "  CASE WHEN (x.o ->> 'width')::int > 0 AND (x.o ->> 'height')::int > 0"
         "  THEN jsonb_build_object('original', jsonb_build_object('width', (x.o ->> 'width')::int,"
         "  'height', (x.o ->> 'height')::int, 'size', (x.o ->> 'width') || 'x' || (x.o ->> "
         "'height'),"
         "  'aspect', (x.o ->> 'width')::float8 / (x.o ->> 'height')::float8)) ELSE '{}' END,"
         "  x.o ->> 'url', x.o ->> 'mime'"
         "  FROM st, jsonb_array_elements($17::jsonb) WITH ORDINALITY x(o, i)"
         "  RETURNING id, position, description),"
         " ed AS (INSERT INTO status_edits (tenant_id, status_id, account_id, text, content,"
         "  spoiler_text, sensitive, created_at, media_ids, media_descriptions)"
         "  SELECT $1, ok.id, $3::bigint, '', $5, $6, $7::bool, least($13::timestamptz, now()),"
         "  coalesce((SELECT array_agg(id ORDER BY position) FROM mnew), '{}'),"
         "  coalesce((SELECT array_agg(coalesce(description, '') ORDER BY position) FROM mnew),"
         "  '{}') FROM ok),"
         " ment AS (SELECT a.id FROM accounts a WHERE a.tenant_id = $1"
         "  AND (a.uri IN (SELECT jsonb_array_elements_text($14::jsonb))"
         "  OR (a.domain IS NULL AND lower(a.username) IN"
         "  (SELECT lower(u) FROM jsonb_array_elements_text($15::jsonb) u)))),"
         " m AS (INSERT INTO mentions (tenant_id, status_id, account_id)"
         "  SELECT $1, st.id, ment.id FROM st, ment ON CONFLICT DO NOTHING),"
         " tn AS (SELECT DISTINCT lower(n) AS n FROM jsonb_array_elements_text($16::jsonb) n),"
         " dt AS (DELETE FROM statuses_tags WHERE tenant_id = $1"
         "  AND status_id IN (SELECT id FROM upd) AND tag_id NOT IN (SELECT id FROM tags"
         "  WHERE tenant_id = $1 AND lower(name) IN (SELECT n FROM tn))),"
         " nt AS (INSERT INTO tags (tenant_id, name) SELECT DISTINCT ON (lower(n)) $1, n"
         "  FROM jsonb_array_elements_text($16::jsonb) n WHERE EXISTS (SELECT 1 FROM st)"
         "  ON CONFLICT (tenant_id, lower(name)) DO NOTHING RETURNING id),"
         " stt AS (INSERT INTO statuses_tags (tenant_id, status_id, tag_id) SELECT $1, st.id, t.id"
         "  FROM st, (SELECT id FROM nt UNION SELECT id FROM tags WHERE tenant_id = $1"
         "  AND lower(name) IN (SELECT n FROM tn)) t ON CONFLICT DO NOTHING),"
         " em AS (INSERT INTO custom_emojis (tenant_id, shortcode, domain, image, static_image,"
         "  uri, image_remote_url) SELECT DISTINCT ON (x.o ->> 'shortcode') $1,"
         "  x.o ->> 'shortcode', ea.domain, x.o ->> 'url', x.o ->> 'url', x.o ->> 'uri',"
         "  x.o ->> 'url' FROM jsonb_array_elements($18::jsonb) x(o)"
         "  JOIN accounts ea ON ea.tenant_id = $1 AND ea.id = $3::bigint AND ea.domain IS NOT NULL"
         "  WHERE EXISTS (SELECT 1 FROM st) AND NOT eunha_domain_rejects_media($1, "
         "ea.domain)" EMOJI_KEPT ","
         " kids AS (UPDATE statuses k SET in_reply_to_id = ins.id,"
         "  in_reply_to_account_id = $3::bigint FROM ins WHERE k.tenant_id = $1"
         "  AND k.in_reply_to_uri = $2 AND k.in_reply_to_id IS NULL)"
         " SELECT (SELECT id FROM st)"},
    /* $2 uri, $3 the author's uri. Boosts of it go with it, and its
     * attachments' rows (remote: no files of ours; md and mj are
     * EU_MEDIA_DELETE_CTES of eunha/mediaclean.h written out). */
    [INGEST_STATUS_DELETE] =
        {"ingest.status_delete",
         "WITH d AS (UPDATE statuses s SET deleted_at = now() FROM accounts a"
         "  WHERE s.tenant_id = $1 AND a.tenant_id = $1 AND a.id = s.account_id AND a.uri = $3"
         "  AND s.uri = $2 AND NOT s.local AND s.deleted_at IS NULL RETURNING s.id),"
         " r AS (UPDATE statuses SET deleted_at = now() WHERE tenant_id = $1"
         "  AND reblog_of_id IN (SELECT id FROM d) AND deleted_at IS NULL),"
         " md AS (DELETE FROM media_attachments WHERE tenant_id = $1"
         "  AND status_id IN (SELECT id FROM d) RETURNING file_key, preview_key),"
         " mj AS (INSERT INTO jobs (tenant_id, queue, kind, payload) SELECT $1, 'default',"
         "  'media_files_delete', jsonb_build_object('keys', jsonb_agg(k.key))"
         "  FROM (SELECT unnest(ARRAY[md.file_key, md.preview_key]) FROM md) k(key)"
         "  WHERE k.key IS NOT NULL AND k.key NOT LIKE '%://%' HAVING count(*) > 0"
         "  RETURNING id)"
         " SELECT (SELECT id FROM d)"},
    {0},
};

struct store {
    eu_ingest_stored_cb cb;
    void *arg;
};

static void
on_stored(PGresult *res, enum eu_db_status st, void *arg)
{
    struct store s = *(struct store *)arg;
    free(arg);
    const char *id = NULL;
    if (st == EU_DB_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        id = PQgetvalue(res, 0, 0);
    s.cb(id, st, s.arg);
}

static void
run(struct eu_db_conn *conn, int which, int n, const char *const *params, eu_ingest_stored_cb cb,
    void *arg)
{
    struct store *s = eu_xmalloc(sizeof(*s));
    s->cb = cb;
    s->arg = arg;
    eu_db_conn_stmt(conn, &eu_ingest_sql[which], n, params, on_stored, s);
}

/* JSON text of a list of strings; caller frees. */
static char *
json_list(const char *const *items, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        if (items[i])
            json_array_append_new(arr, json_string(items[i]));
    char *s = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return s;
}

/* Custom emoji of a tag, as the JSON the store statements take (shortcode,
 * url, uri); caller frees. */
static char *
emojis_json(const struct eu_ap_emoji *list, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_pack("{s:s, s:s}", "shortcode", list[i].shortcode, "url", list[i].url);
        if (list[i].uri)
            json_object_set_new(o, "uri", json_string(list[i].uri));
        json_array_append_new(arr, o);
    }
    char *s = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return s;
}

void
eu_ingest_account_upsert(struct eu_db_conn *conn, const struct eu_ap_actor *ac,
                         eu_ingest_stored_cb cb, void *arg)
{
    json_t *fields = json_array();
    for (size_t i = 0; i < ac->n_fields; i++)
        json_array_append_new(fields, json_pack("{s:s, s:s, s:n}", "name", ac->fields[i].name,
                                                "value", ac->fields[i].value, "verified_at"));
    char *fields_json = json_dumps(fields, JSON_COMPACT);
    json_decref(fields);
    char *aliases = json_list(ac->also_known_as, ac->n_also_known_as);
    char *emoji_json = emojis_json(ac->emojis, ac->n_emojis);
    const char *params[] = {
        ac->id,
        ac->username,
        ac->domain,
        ac->display_name,
        ac->note,
        ac->url,
        ac->inbox,
        ac->shared_inbox,
        ac->outbox,
        ac->followers,
        ac->following,
        ac->featured,
        ac->public_key_pem,
        ac->key_id,
        ac->avatar_url,
        ac->header_url,
        fields_json,
        ac->locked ? "true" : "false",
        ac->bot ? "true" : "false",
        ac->discoverable ? "true" : "false",
        ac->indexable ? "true" : "false",
        aliases,
        ac->moved_to,
        ac->type,
        ac->published,
        emoji_json,
    };
    run(conn, INGEST_ACCOUNT_UPSERT, (int)(sizeof(params) / sizeof(*params)), params, cb, arg);
    free(fields_json);
    free(aliases);
    free(emoji_json);
}

/* The NAME of base/users/NAME or base/@NAME (up to the next '/'), copied
 * into buf; NULL when uri is not one of the tenant's actor URLs. */
static const char *
local_username(const char *uri, const char *base, char *buf, size_t size)
{
    size_t n = strlen(base);
    if (!base[0] || strncmp(uri, base, n) != 0)
        return NULL;
    const char *p = uri + n;
    if (strncmp(p, "/users/", 7) == 0)
        p += 7;
    else if (strncmp(p, "/@", 2) == 0)
        p += 2;
    else
        return NULL;
    size_t len = strcspn(p, "/?#");
    if (len == 0 || len >= size || p[len] == '/')
        return NULL;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* The ID of base/users/NAME/statuses/ID into buf, or NULL. */
static const char *
local_status_id(const char *uri, const char *base, char *buf, size_t size)
{
    size_t n = strlen(base);
    if (!uri || !base[0] || strncmp(uri, base, n) != 0 || strncmp(uri + n, "/users/", 7) != 0)
        return NULL;
    const char *p = strstr(uri + n + 7, "/statuses/");
    if (!p)
        return NULL;
    p += strlen("/statuses/");
    size_t len = strspn(p, "0123456789");
    if (len == 0 || len > 19 || len >= size || p[len] != '\0')
        return NULL;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* Mastodon's attachment type for a remote file: by its media type, else by
 * the object's type. */
static const char *
attachment_type(const struct eu_ap_attachment *at)
{
    const char *mt = at->media_type ? at->media_type : "";
    if (strncmp(mt, "image/", 6) == 0)
        return "image";
    if (strncmp(mt, "video/", 6) == 0)
        return "video";
    if (strncmp(mt, "audio/", 6) == 0)
        return "audio";
    if (!*mt && strcmp(at->type, "Image") == 0)
        return "image";
    if (!*mt && strcmp(at->type, "Video") == 0)
        return "video";
    if (!*mt && strcmp(at->type, "Audio") == 0)
        return "audio";
    return "unknown";
}

/* The first 4 attachments (Mastodon's limit) as $17 of status_store;
 * caller frees. */
static char *
attachments_json(const struct eu_ap_note *note)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < note->n_attachments && i < EU_MEDIA_MAX_PER_STATUS; i++) {
        const struct eu_ap_attachment *at = &note->attachments[i];
        json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:i, s:i}", "url", at->url, "type",
                              attachment_type(at), "fx", at->focus_x, "fy", at->focus_y, "width",
                              at->width, "height", at->height);
        if (at->name)
            json_object_set_new(o, "name", json_string(at->name));
        if (at->blurhash)
            json_object_set_new(o, "blurhash", json_string(at->blurhash));
        if (at->media_type)
            json_object_set_new(o, "mime", json_string(at->media_type));
        json_array_append_new(arr, o);
    }
    char *s = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return s;
}

void
eu_ingest_status_store(struct eu_db_conn *conn, const struct eu_ap_note *note,
                       const char *account_id, const char *base_url, eu_ingest_stored_cb cb,
                       void *arg)
{
    const char *hrefs[EU_AP_MAX_TAGS] = {0};
    const char *locals[EU_AP_MAX_TAGS] = {0};
    char names[EU_AP_MAX_TAGS][64];
    size_t n_locals = 0;
    for (size_t i = 0; i < note->n_mentions && i < EU_AP_MAX_TAGS; i++) {
        hrefs[i] = note->mentions[i].href;
        const char *u = local_username(note->mentions[i].href, base_url, names[n_locals],
                                       sizeof(names[n_locals]));
        if (u)
            locals[n_locals++] = u;
    }
    char *mention_json = json_list(hrefs, note->n_mentions);
    char *local_json = json_list(locals, n_locals);
    char *tags_json = json_list(note->tags, note->n_tags);
    char *media_json = attachments_json(note);
    char *emoji_json = emojis_json(note->emojis, note->n_emojis);
    char vis[4], parent_id[24];
    vis[0] = (char)('0' + note->visibility);
    vis[1] = '\0';
    const char *params[] = {
        note->id,
        account_id,
        note->url,
        note->content,
        note->spoiler_text,
        note->sensitive ? "true" : "false",
        vis,
        note->language,
        note->in_reply_to,
        local_status_id(note->in_reply_to, base_url, parent_id, sizeof(parent_id)),
        note->published,
        note->updated,
        mention_json,
        local_json,
        tags_json,
        media_json,
        emoji_json,
    };
    run(conn, INGEST_STATUS_STORE, (int)(sizeof(params) / sizeof(*params)), params, cb, arg);
    free(media_json);
    free(emoji_json);
    free(mention_json);
    free(local_json);
    free(tags_json);
}

void
eu_ingest_status_delete(struct eu_db_conn *conn, const char *uri, const char *actor_uri,
                        eu_ingest_stored_cb cb, void *arg)
{
    const char *params[] = {uri, actor_uri};
    run(conn, INGEST_STATUS_DELETE, 2, params, cb, arg);
}
