/*
 * Direct-message conversations (/api/v1/conversations). The rows of
 * account_conversations are kept by database triggers as direct statuses
 * and their mentions are written (migrations/tenant/0006_social.sql), so
 * this file only reads, marks read and removes them.
 *
 * A page is three steps: the conversations (with each one's newest direct
 * status the viewer can still see, so a deleted last message shows the one
 * before it), their participants' accounts, then the statuses through
 * eu_statuses_render(). Pages follow the last status id, as Mastodon's do.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "social_internal.h"

#define CONVERSATIONS_LIMIT 20
#define CONVERSATIONS_LIMIT_MAX 40

/*
 * The columns of a conversation ac, read by name: id, unread, page_key
 * (last_status_id), participants (their ids as JSON, the viewer alone for
 * a note to self), status_id (the newest visible status's, or NULL). $2
 * is the viewer ($1 the tenant).
 */
#define CONVERSATION_COLUMNS                                                                       \
    "ac.id::text AS id, ac.unread, ac.last_status_id::text AS page_key,"                           \
    " (SELECT coalesce(json_agg(x::text), json_build_array($2::text)) FROM"                        \
    "  unnest(ac.participant_ids) x)::text AS participants,"                                       \
    " (SELECT max(s.id) FROM statuses s"                                                           \
    "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility, s.deleted_at,"    \
    "  $2::bigint) vis WHERE s.tenant_id = $1 AND s.conversation_id = ac.conversation_id"          \
    "  AND s.visibility = 3 AND s.reblog_of_id IS NULL AND vis.ok)::text AS status_id"

enum {
    CONVERSATIONS_INDEX,
    CONVERSATIONS_ACCOUNTS,
    CONVERSATIONS_READ,
    CONVERSATIONS_DESTROY,
    CONVERSATIONS_STREAM,
    CONVERSATIONS_UNREAD,
};

const struct eu_sql eu_conversations_sql[] = {
    [CONVERSATIONS_INDEX] = {"conversations.index",
                             "SELECT " CONVERSATION_COLUMNS " FROM account_conversations ac"
                             " WHERE ac.tenant_id = $1 AND ac.account_id = $2::bigint"
                             " AND ac.last_status_id IS NOT NULL",
                             "ac.last_status_id", 3},
    /* $2: the participants' ids, a JSON array of strings. */
    [CONVERSATIONS_ACCOUNTS] =
        {"conversations.accounts",
         "SELECT (eunha_account(a)).* FROM accounts a WHERE a.tenant_id = $1 AND a.id IN"
         " (SELECT x::bigint FROM json_array_elements_text($2::json) x)"},
    [CONVERSATIONS_READ] =
        {"conversations.read",
         "UPDATE account_conversations ac SET unread = false"
         " WHERE ac.tenant_id = $1 AND ac.account_id = $2::bigint AND ac.id = $3::bigint"
         " RETURNING " CONVERSATION_COLUMNS},
    [CONVERSATIONS_DESTROY] =
        {"conversations.destroy",
         "DELETE FROM account_conversations WHERE tenant_id = $1 AND account_id = $2::bigint"
         " AND id = $3::bigint RETURNING id"},
    /* $3: a direct status just stored. The viewer's conversation holding it,
     * when the viewer may see it and would be notified of it: Mastodon adds
     * a recipient's conversation through the mention's notification, so a
     * block, a mute of notifications or a muted conversation keeps it quiet
     * (the rule of src/social/notify.c). */
    [CONVERSATIONS_STREAM] =
        {"conversations.stream",
         "SELECT " CONVERSATION_COLUMNS " FROM account_conversations ac"
         " JOIN statuses ds ON ds.tenant_id = $1 AND ds.id = $3::bigint"
         " CROSS JOIN LATERAL eunha_is_visible($1, ds.id, ds.account_id, ds.visibility,"
         " ds.deleted_at, $2::bigint) dvis"
         " WHERE ac.tenant_id = $1 AND ac.account_id = $2::bigint"
         " AND ac.conversation_id = coalesce(ds.conversation_id, ds.id)"
         " AND ds.visibility = 3 AND ds.reblog_of_id IS NULL"
         " AND dvis.ok AND (ds.account_id = $2::bigint OR (NOT EXISTS (SELECT 1"
         " FROM blocks db"
         "  WHERE db.tenant_id = $1 AND db.account_id = $2::bigint"
         "  AND db.target_account_id = ds.account_id)"
         " AND NOT EXISTS (SELECT 1 FROM mutes dmu WHERE dmu.tenant_id = $1"
         "  AND dmu.account_id = $2::bigint AND dmu.target_account_id = ds.account_id"
         "  AND dmu.hide_notifications AND (dmu.expires_at IS NULL OR dmu.expires_at > now()))"
         " AND NOT EXISTS (SELECT 1 FROM conversation_mutes dcm WHERE dcm.tenant_id = $1"
         "  AND dcm.account_id = $2::bigint AND dcm.conversation_id = ds.conversation_id)))"},
    [CONVERSATIONS_UNREAD] =
        {"conversations.unread",
         "UPDATE account_conversations ac SET unread = true"
         " WHERE ac.tenant_id = $1 AND ac.account_id = $2::bigint AND ac.id = $3::bigint"
         " RETURNING " CONVERSATION_COLUMNS},
    {0},
};

struct conv {
    const char *id, *status_id;
    bool unread;
    json_t *parts; /* participant id strings */
};

struct conv_page {
    struct eu_page page;
    struct conv *convs;
    size_t n;
    bool single;
    const char *first_key, *last_key;
    json_t *accounts; /* id -> Account */
    json_t *statuses; /* id -> Status */
};

static void
decref_json(void *p)
{
    json_decref(p);
}

static json_t *
arena_json(struct eu_req *req, json_t *v)
{
    eu_arena_on_free(req->arena, decref_json, v);
    return v;
}

static void
on_conv_statuses(struct eu_req *req, json_t *array, void *arg)
{
    struct conv_page *cp = arg;
    eu_req_enter(req);
    arena_json(req, array);
    size_t i;
    json_t *st;
    json_array_foreach(array, i, st)
    {
        const char *id = json_string_value(json_object_get(st, "id"));
        if (id)
            json_object_set(cp->statuses, id, st);
    }
    json_t *out = json_array();
    for (size_t k = 0; k < cp->n; k++) {
        struct conv *c = &cp->convs[k];
        json_t *last = c->status_id ? json_object_get(cp->statuses, c->status_id) : NULL;
        if (!last && !cp->single)
            continue; /* nothing of it left to show */
        json_t *accts = json_array();
        json_t *v;
        json_array_foreach(c->parts, i, v)
        {
            json_t *a = json_object_get(cp->accounts, json_string_value(v));
            if (a)
                json_array_append(accts, a);
        }
        json_array_append_new(out, json_pack("{s:s, s:b, s:o, s:O}", "id", c->id, "unread",
                                             c->unread, "accounts", accts, "last_status",
                                             last ? last : json_null()));
    }
    if (cp->single) {
        eu_req_reply_json(req, 200, json_incref(json_array_get(out, 0)));
        json_decref(out);
        return;
    }
    eu_page_link(req, cp->first_key, cp->last_key);
    eu_req_reply_json(req, 200, out);
}

static void
on_conv_accounts(struct eu_req *req, PGresult *res, void *arg)
{
    struct conv_page *cp = arg;
    struct eu_account_cols ac;
    eu_account_cols_find(&ac, res);
    for (int i = 0; i < PQntuples(res); i++)
        json_object_set_new(cp->accounts, PQgetvalue(res, i, ac.col[0]),
                            eu_account_json(req, res, i, &ac));
    const char **ids = eu_arena_alloc(req->arena, sizeof(char *) * (cp->n ? cp->n : 1));
    size_t k = 0;
    for (size_t i = 0; i < cp->n; i++)
        if (cp->convs[i].status_id)
            ids[k++] = cp->convs[i].status_id;
    /* eu_statuses_render with no ids still answers through its callback. */
    eu_statuses_render(req, ids, k, on_conv_statuses, cp);
}

static void
on_convs(struct eu_req *req, PGresult *res, void *arg)
{
    struct conv_page *cp = arg;
    int n = PQntuples(res);
    if (cp->single && n == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    bool asc = !cp->single && eu_page_is_ascending(&cp->page);
    cp->convs = eu_arena_calloc(req->arena, sizeof(struct conv) * (size_t)(n ? n : 1));
    cp->accounts = arena_json(req, json_object());
    cp->statuses = arena_json(req, json_object());
    json_t *holder = arena_json(req, json_array());
    json_t *all = json_array();
    int c_id = PQfnumber(res, "id"), c_unread = PQfnumber(res, "unread");
    int c_key = PQfnumber(res, "page_key"), c_parts = PQfnumber(res, "participants");
    int c_status = PQfnumber(res, "status_id");
    for (int k = 0; k < n; k++) {
        int i = asc ? n - 1 - k : k;
        struct conv *c = &cp->convs[cp->n++];
        c->id = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_id));
        c->unread = PQgetvalue(res, i, c_unread)[0] == 't';
        c->status_id = PQgetisnull(res, i, c_status)
                           ? NULL
                           : eu_arena_strdup(req->arena, PQgetvalue(res, i, c_status));
        c->parts = json_loads(PQgetvalue(res, i, c_parts), 0, NULL);
        if (!json_is_array(c->parts)) {
            json_decref(c->parts);
            c->parts = json_array();
        }
        json_array_append_new(holder, c->parts);
        json_array_extend(all, c->parts);
        if (k == 0)
            cp->first_key = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_key));
        if (k == n - 1)
            cp->last_key = eu_arena_strdup(req->arena, PQgetvalue(res, i, c_key));
    }
    char *ids = json_dumps(all, JSON_COMPACT);
    json_decref(all);
    const char *p[] = {eu_arena_strdup(req->arena, ids)};
    free(ids);
    eu_req_stmt(req, &eu_conversations_sql[CONVERSATIONS_ACCOUNTS], 1, p, on_conv_accounts, cp);
}

void
eu_conversations_index(struct eu_req *req)
{
    struct conv_page *cp = eu_arena_calloc(req->arena, sizeof(*cp));
    eu_page_parse(req, &cp->page, CONVERSATIONS_LIMIT, CONVERSATIONS_LIMIT_MAX);
    const char *p[5] = {eu_req_viewer(req)};
    eu_page_params(&cp->page, p + 1);
    eu_req_stmt_page(req, &eu_conversations_sql[CONVERSATIONS_INDEX], &cp->page, 5, p, on_convs,
                     cp);
}

/* POST /api/v1/conversations/:id/read: the Conversation, now read. */
void
eu_conversations_read(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct conv_page *cp = eu_arena_calloc(req->arena, sizeof(*cp));
    cp->single = true;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_conversations_sql[CONVERSATIONS_READ], 2, p, on_convs, cp);
}

/* POST /api/v1/conversations/:id/unread (Mastodon 4.4): the Conversation,
 * unread again. */
static void
conversations_unread(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct conv_page *cp = eu_arena_calloc(req->arena, sizeof(*cp));
    cp->single = true;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_conversations_sql[CONVERSATIONS_UNREAD], 2, p, on_convs, cp);
}

static void
on_removed(struct eu_req *req, PGresult *res, void *arg)
{
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, json_object());
}

/* DELETE /api/v1/conversations/:id: off the viewer's list until the next
 * message in it; the statuses stay. */
void
eu_conversations_destroy(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_conversations_sql[CONVERSATIONS_DESTROY], 2, p, on_removed, NULL);
}

/* The streaming API's "conversation" event (src/social/stream_events.c): the
 * viewer's conversation holding the status of param "id", rendered as the
 * index renders it; 404 when there is none the viewer should hear of. */
void
eu_conversations_stream(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    struct conv_page *cp = eu_arena_calloc(req->arena, sizeof(*cp));
    cp->single = true;
    const char *p[] = {eu_req_viewer(req), id};
    eu_req_stmt(req, &eu_conversations_sql[CONVERSATIONS_STREAM], 2, p, on_convs, cp);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_conversations_routes[] = {
    {EU_HTTP_GET, "/api/v1/conversations", eu_conversations_index, "read:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_DELETE, "/api/v1/conversations/:id", eu_conversations_destroy, "write:conversations",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/conversations/:id/read", eu_conversations_read, "write:conversations",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/conversations/:id/unread", conversations_unread, "write:conversations",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
