/*
 * The social graph as one account sees it: the Relationship entity, follows
 * (and follow requests for locked accounts), blocks, mutes, private notes,
 * and the lists of blocked and muted accounts and pending requests. Every
 * action is: load the target (404 if unknown), apply the change in one
 * statement, then answer with the Relationship as it now stands. Home feeds
 * that the change alters are dropped so they rebuild from the database.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts_internal.h"
#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/feeds.h"
#include "eunha/http.h"
#include "eunha/notify.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"

#define NOTE_COMMENT_MAX 2000

enum {
    RELATIONSHIPS_OF_ACCOUNTS,
    RELATIONSHIPS_TARGET,
    RELATIONSHIPS_REQUEST_FOLLOW,
    RELATIONSHIPS_FOLLOW,
    RELATIONSHIPS_UNFOLLOW,
    RELATIONSHIPS_REMOVE_FROM_FOLLOWERS,
    RELATIONSHIPS_BLOCK,
    RELATIONSHIPS_UNBLOCK,
    RELATIONSHIPS_MUTE,
    RELATIONSHIPS_UNMUTE,
    RELATIONSHIPS_NOTE,
    RELATIONSHIPS_REQUEST_PENDING,
    RELATIONSHIPS_AUTHORIZE,
    RELATIONSHIPS_REJECT,
    RELATIONSHIPS_REQUESTS,
    RELATIONSHIPS_BLOCKS,
    RELATIONSHIPS_MUTES,
    RELATIONSHIPS_ENDORSE,
    RELATIONSHIPS_UNENDORSE,
};

const struct eu_sql eu_relationships_sql[] = {
    /* $2 the viewer, $3 the other accounts as an array, $4 whether suspended
     * accounts are included ($1 is the tenant). A follow request stands in
     * for the follow's options while it is pending, as Mastodon's
     * RelationshipFilter does. */
    [RELATIONSHIPS_OF_ACCOUNTS] =
        {"relationships.of_accounts",
         "SELECT a.id::text, f.id IS NOT NULL,"
         " coalesce(f.show_reblogs, r.show_reblogs, false), coalesce(f.notify, r.notify, false),"
         " array_to_json(coalesce(f.languages, r.languages))::text,"
         " EXISTS (SELECT 1 FROM follows fb WHERE fb.tenant_id = $1 AND fb.account_id = a.id"
         "  AND fb.target_account_id = $2::bigint),"
         " EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1 AND b.account_id = $2::bigint"
         "  AND b.target_account_id = a.id),"
         " EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1 AND b.account_id = a.id"
         "  AND b.target_account_id = $2::bigint),"
         " m.account_id IS NOT NULL, coalesce(m.hide_notifications, false), r.id IS NOT NULL,"
         " EXISTS (SELECT 1 FROM follow_requests rb WHERE rb.tenant_id = $1"
         " AND rb.account_id = a.id"
         "  AND rb.target_account_id = $2::bigint),"
         " coalesce(n.comment, ''),"
         " a.domain IS NOT NULL AND EXISTS (SELECT 1 FROM account_domain_blocks d"
         "  WHERE d.tenant_id = $1 AND d.account_id = $2::bigint AND d.domain = a.domain),"
         " EXISTS (SELECT 1 FROM account_pins p WHERE p.tenant_id = $1"
         "  AND p.account_id = $2::bigint AND p.target_account_id = a.id)"
         " FROM (SELECT id, min(ord) AS ord FROM unnest($3::bigint[]) WITH ORDINALITY AS u(id, ord)"
         "  GROUP BY id) x"
         " JOIN accounts a ON a.tenant_id = $1 AND a.id = x.id"
         " LEFT JOIN follows f ON f.tenant_id = $1 AND f.account_id = $2::bigint"
         "  AND f.target_account_id = a.id"
         " LEFT JOIN follow_requests r ON r.tenant_id = $1 AND r.account_id = $2::bigint"
         "  AND r.target_account_id = a.id"
         " LEFT JOIN mutes m ON m.tenant_id = $1 AND m.account_id = $2::bigint"
         "  AND m.target_account_id = a.id AND (m.expires_at IS NULL OR m.expires_at > now())"
         " LEFT JOIN account_notes n ON n.tenant_id = $1 AND n.account_id = $2::bigint"
         "  AND n.target_account_id = a.id"
         " WHERE $4::boolean OR a.suspended_at IS NULL"
         " ORDER BY x.ord"},
    [RELATIONSHIPS_TARGET] = {"relationships.target",
                              "SELECT a.locked, a.suspended_at IS NOT NULL,"
                              " EXISTS (SELECT 1 FROM blocks b WHERE b.tenant_id = $1"
                              "  AND ((b.account_id = $2::bigint AND b.target_account_id = a.id)"
                              "  OR (b.account_id = a.id AND b.target_account_id = $2::bigint)))"
                              /* Mastodon's following_not_allowed? counts a
                               * blocked domain as a block. */
                              " OR (a.domain IS NOT NULL AND EXISTS (SELECT 1"
                              "  FROM account_domain_blocks d WHERE d.tenant_id = $1"
                              "  AND d.account_id = $2::bigint AND d.domain = a.domain)),"
                              " EXISTS (SELECT 1 FROM follows f WHERE f.tenant_id = $1"
                              "  AND f.account_id = $2::bigint AND f.target_account_id = a.id),"
                              " a.domain IS NOT NULL,"
                              " coalesce((SELECT r.uri FROM follow_requests r"
                              "  WHERE r.tenant_id = $1 AND r.account_id = $2::bigint"
                              "  AND r.target_account_id = a.id), (SELECT f.uri FROM follows f"
                              "  WHERE f.tenant_id = $1 AND f.account_id = $2::bigint"
                              "  AND f.target_account_id = a.id))"
                              " FROM accounts a WHERE a.tenant_id = $1 AND a.id = $3::bigint"},
    [RELATIONSHIPS_REQUEST_FOLLOW] =
        {"relationships.request_follow",
         "INSERT INTO follow_requests (tenant_id, account_id, target_account_id,"
         " show_reblogs, notify, languages) VALUES ($1, $2::bigint, $3::bigint,"
         " coalesce($4::boolean, true), coalesce($5::boolean, false),"
         " nullif(ARRAY(SELECT json_array_elements_text(coalesce($6::json, '[]'))),"
         " '{}')) ON CONFLICT (tenant_id, account_id, target_account_id) DO UPDATE SET"
         " show_reblogs = coalesce($4::boolean, follow_requests.show_reblogs),"
         " notify = coalesce($5::boolean, follow_requests.notify),"
         " languages = CASE WHEN $6::json IS NULL THEN follow_requests.languages"
         " ELSE EXCLUDED.languages END RETURNING xmax = 0"},
    [RELATIONSHIPS_FOLLOW] =
        {"relationships.follow",
         "WITH dr AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         " AND account_id = $2::bigint AND target_account_id = $3::bigint)"
         " INSERT INTO follows (tenant_id, account_id, target_account_id,"
         " show_reblogs, notify, languages) VALUES ($1, $2::bigint, $3::bigint,"
         " coalesce($4::boolean, true), coalesce($5::boolean, false),"
         " nullif(ARRAY(SELECT json_array_elements_text(coalesce($6::json, '[]'))),"
         " '{}')) ON CONFLICT (tenant_id, account_id, target_account_id) DO UPDATE SET"
         " show_reblogs = coalesce($4::boolean, follows.show_reblogs),"
         " notify = coalesce($5::boolean, follows.notify),"
         " languages = CASE WHEN $6::json IS NULL THEN follows.languages"
         " ELSE EXCLUDED.languages END RETURNING xmax = 0"},
    /* Unfollowing ($2 unfollows $3) also withdraws a pending request and
     * takes the account out of the follower's lists (list members must be
     * followed). The statement says whether there was a follow or a
     * request to end (an Undo is sent then). */
    [RELATIONSHIPS_UNFOLLOW] =
        {"relationships.unfollow",
         "WITH df AS (DELETE FROM follows WHERE tenant_id = $1"
         " AND account_id = $2::bigint AND target_account_id = $3::bigint"
         " RETURNING 1),"
         " dr AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         " AND account_id = $2::bigint AND target_account_id = $3::bigint"
         " RETURNING 1),"
         " dl AS (DELETE FROM list_accounts la USING lists l"
         " WHERE la.tenant_id = $1 AND l.tenant_id = $1 AND la.list_id = l.id"
         " AND l.account_id = $2::bigint AND la.account_id = $3::bigint),"
         /* an endorsement needs the follow, as Mastodon's Follow drops it */
         " de AS (DELETE FROM account_pins WHERE tenant_id = $1 AND account_id = $2::bigint"
         " AND target_account_id = $3::bigint)"
         " SELECT EXISTS (SELECT 1 FROM df) OR EXISTS (SELECT 1 FROM dr)"},
    /* The same with the roles swapped: $3 stops following $2. */
    [RELATIONSHIPS_REMOVE_FROM_FOLLOWERS] =
        {"relationships.remove_from_followers",
         "WITH df AS (DELETE FROM follows WHERE tenant_id = $1"
         " AND account_id = $3::bigint AND target_account_id = $2::bigint"
         " RETURNING 1),"
         " dr AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         " AND account_id = $3::bigint AND target_account_id = $2::bigint"
         " RETURNING 1),"
         " dl AS (DELETE FROM list_accounts la USING lists l"
         " WHERE la.tenant_id = $1 AND l.tenant_id = $1 AND la.list_id = l.id"
         " AND l.account_id = $3::bigint AND la.account_id = $2::bigint)"
         " SELECT EXISTS (SELECT 1 FROM df) OR EXISTS (SELECT 1 FROM dr)"},
    /* A block ends every follow and request between the two, both ways. */
    [RELATIONSHIPS_BLOCK] =
        {"relationships.block",
         "WITH df AS (DELETE FROM follows WHERE tenant_id = $1 AND ((account_id = $2::bigint"
         "  AND target_account_id = $3::bigint) OR (account_id = $3::bigint"
         "  AND target_account_id = $2::bigint))),"
         " dr AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         "  AND ((account_id = $2::bigint AND target_account_id = $3::bigint)"
         "  OR (account_id = $3::bigint AND target_account_id = $2::bigint))),"
         " dl AS (DELETE FROM list_accounts la USING lists l WHERE la.tenant_id = $1"
         "  AND l.tenant_id = $1 AND la.list_id = l.id"
         "  AND ((l.account_id = $2::bigint AND la.account_id = $3::bigint)"
         "  OR (l.account_id = $3::bigint AND la.account_id = $2::bigint))),"
         /* the follows end, and the endorsements with them */
         " de AS (DELETE FROM account_pins WHERE tenant_id = $1 AND ((account_id = $2::bigint"
         "  AND target_account_id = $3::bigint) OR (account_id = $3::bigint"
         "  AND target_account_id = $2::bigint)))"
         " INSERT INTO blocks (tenant_id, account_id, target_account_id)"
         " VALUES ($1, $2::bigint, $3::bigint) ON CONFLICT DO NOTHING RETURNING true"},
    [RELATIONSHIPS_UNBLOCK] = {"relationships.unblock",
                               "DELETE FROM blocks WHERE tenant_id = $1 AND account_id = $2::bigint"
                               " AND target_account_id = $3::bigint RETURNING true"},
    [RELATIONSHIPS_MUTE] =
        {"relationships.mute",
         "INSERT INTO mutes (tenant_id, account_id, target_account_id, hide_notifications,"
         " expires_at) VALUES ($1, $2::bigint, $3::bigint, $4::boolean,"
         " CASE WHEN $5::bigint > 0 THEN now() + $5::bigint * interval '1 second' END)"
         " ON CONFLICT (tenant_id, account_id, target_account_id) DO UPDATE SET"
         " hide_notifications = EXCLUDED.hide_notifications,"
         " expires_at = EXCLUDED.expires_at RETURNING xmax = 0"},
    [RELATIONSHIPS_UNMUTE] = {"relationships.unmute",
                              "DELETE FROM mutes WHERE tenant_id = $1 AND account_id = $2::bigint"
                              " AND target_account_id = $3::bigint RETURNING false"},
    /* An empty comment removes the note. */
    [RELATIONSHIPS_NOTE] =
        {"relationships.note",
         "WITH d AS (DELETE FROM account_notes WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND target_account_id = $3::bigint AND $4 = '')"
         " INSERT INTO account_notes (tenant_id, account_id, target_account_id, comment)"
         " SELECT $1, $2::bigint, $3::bigint, $4 WHERE $4 <> ''"
         " ON CONFLICT (tenant_id, account_id, target_account_id) DO UPDATE SET comment = $4"
         " RETURNING false"},
    [RELATIONSHIPS_REQUEST_PENDING] =
        {"relationships.request_pending",
         "SELECT 1, uri FROM follow_requests WHERE tenant_id = $1"
         " AND account_id = $3::bigint AND target_account_id = $2::bigint"},
    /* The request becomes a follow of me by them; its notification goes
     * with it, as Mastodon destroys a request's notification. $2 is me (the
     * target of the request), $3 the requester. */
    [RELATIONSHIPS_AUTHORIZE] =
        {"relationships.authorize",
         "WITH rq AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         "  AND account_id = $3::bigint AND target_account_id = $2::bigint RETURNING *),"
         " dn AS (DELETE FROM notifications WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND from_account_id = $3::bigint AND type = 'follow_request'),"
         " f AS (INSERT INTO follows (tenant_id, account_id, target_account_id, show_reblogs,"
         "  notify, languages) SELECT $1, account_id, target_account_id, show_reblogs, notify,"
         "  languages FROM rq ON CONFLICT DO NOTHING RETURNING 1)"
         " SELECT EXISTS (SELECT 1 FROM rq)"},
    [RELATIONSHIPS_REJECT] =
        {"relationships.reject",
         "WITH rq AS (DELETE FROM follow_requests WHERE tenant_id = $1"
         "  AND account_id = $3::bigint AND target_account_id = $2::bigint RETURNING 1),"
         " dn AS (DELETE FROM notifications WHERE tenant_id = $1 AND account_id = $2::bigint"
         "  AND from_account_id = $3::bigint AND type = 'follow_request')"
         " SELECT EXISTS (SELECT 1 FROM rq)"},
    /* The pages (reply_own_page()): a table aliased x, paged by x.id,
     * joined to the accounts a; $2 is the viewer. */
    [RELATIONSHIPS_REQUESTS] =
        {"relationships.requests",
         "SELECT x.id, (eunha_account(a)).* FROM follow_requests x JOIN accounts a"
         " ON a.tenant_id = $1 AND a.id = x.account_id"
         " WHERE x.tenant_id = $1"
         " AND x.target_account_id = $2::bigint",
         "x.id", 3},
    [RELATIONSHIPS_BLOCKS] = {"relationships.blocks",
                              "SELECT x.id, (eunha_account(a)).* FROM blocks x JOIN accounts a"
                              " ON a.tenant_id = $1 AND a.id = x.target_account_id"
                              " WHERE x.tenant_id = $1 AND x.account_id = $2::bigint",
                              "x.id", 3},
    [RELATIONSHIPS_MUTES] =
        {"relationships.mutes",
         "SELECT x.id, (eunha_account(a)).*, CASE WHEN x.expires_at IS NULL THEN NULL"
         " ELSE eunha_ts(x.expires_at) END AS mute_expires_at"
         " FROM mutes x JOIN accounts a"
         " ON a.tenant_id = $1"
         " AND a.id = x.target_account_id"
         " WHERE x.tenant_id = $1"
         " AND x.account_id = $2::bigint"
         " AND (x.expires_at IS NULL"
         " OR x.expires_at > now())",
         "x.id", 3},
    /* Mastodon's AccountPin: an account followed, featured on my profile. */
    [RELATIONSHIPS_ENDORSE] = {"relationships.endorse",
                               "INSERT INTO account_pins (tenant_id, account_id, target_account_id)"
                               " VALUES ($1, $2::bigint, $3::bigint) ON CONFLICT DO NOTHING"
                               " RETURNING true"},
    [RELATIONSHIPS_UNENDORSE] = {"relationships.unendorse",
                                 "DELETE FROM account_pins WHERE tenant_id = $1"
                                 " AND account_id = $2::bigint AND target_account_id = $3::bigint"
                                 " RETURNING false"},
    {0},
};

/* ------------------------------------------------------ the Relationship */

static bool
col_bool(const PGresult *r, int row, int col)
{
    return PQgetvalue(r, row, col)[0] == 't';
}

static json_t *
relationship_json(const PGresult *r, int row)
{
    json_t *langs =
        PQgetisnull(r, row, 4) ? json_null() : json_loads(PQgetvalue(r, row, 4), 0, NULL);
    return json_pack("{s:s, s:b, s:b, s:b, s:o, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b,"
                     " s:s}",
                     "id", PQgetvalue(r, row, 0), "following", col_bool(r, row, 1),
                     "showing_reblogs", col_bool(r, row, 2), "notifying", col_bool(r, row, 3),
                     "languages", langs ? langs : json_null(), "followed_by", col_bool(r, row, 5),
                     "blocking", col_bool(r, row, 6), "blocked_by", col_bool(r, row, 7), "muting",
                     col_bool(r, row, 8), "muting_notifications", col_bool(r, row, 9), "requested",
                     col_bool(r, row, 10), "requested_by", col_bool(r, row, 11), "domain_blocking",
                     col_bool(r, row, 13), "endorsed", col_bool(r, row, 14), "note",
                     PQgetvalue(r, row, 12));
}

struct rel_render {
    bool single;
};

static void
on_relationships(struct eu_req *req, PGresult *res, void *arg)
{
    struct rel_render *rr = arg;
    if (rr->single) {
        if (PQntuples(res) == 0)
            eu_req_reply_error(req, 404, "Record not found");
        else
            eu_req_reply_json(req, 200, relationship_json(res, 0));
        return;
    }
    json_t *out = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(out, relationship_json(res, i));
    eu_req_reply_json(req, 200, out);
}

static void
render_relationships(struct eu_req *req, const char *ids, bool single, bool with_suspended)
{
    struct rel_render *rr = eu_arena_calloc(req->arena, sizeof(*rr));
    rr->single = single;
    const char *params[] = {eu_req_viewer(req), ids, with_suspended ? "true" : "false"};
    eu_req_stmt(req, &eu_relationships_sql[RELATIONSHIPS_OF_ACCOUNTS], 3, params, on_relationships,
                rr);
}

void
eu_relationships_index(struct eu_req *req)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    bool with_suspended = false;
    if (eu_param_bool(params, "with_suspended", &with_suspended) < 0)
        with_suspended = false;
    const char *ids = eu_accounts_ids_param(req, params, "id");
    if (ids)
        render_relationships(req, ids, false, with_suspended);
}

/* -------------------------------------------------------------- actions */

struct rel;
typedef void (*rel_step_cb)(struct rel *r);

/* One action on one target account. */
struct rel {
    struct eu_req *req;
    const char *me, *target; /* decimal ids */
    int64_t me_id, target_id;
    json_t *params;
    /* the target as loaded */
    bool locked, suspended, blocked, following;
    bool remote;            /* on another server: actions federate */
    const char *follow_uri; /* a pending request's Follow id, when known */
    /* set by the action's statement */
    bool created;
    rel_step_cb loaded;  /* runs once the target is known */
    rel_step_cb applied; /* runs after the statement, before the answer */
};

static void
on_target(struct eu_req *req, PGresult *res, void *arg)
{
    struct rel *r = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    r->locked = col_bool(res, 0, 0);
    r->suspended = col_bool(res, 0, 1);
    r->blocked = col_bool(res, 0, 2);
    r->following = col_bool(res, 0, 3);
    r->remote = col_bool(res, 0, 4);
    /* My Follow's id, for the Undo after the row is gone. */
    if (!PQgetisnull(res, 0, 5))
        r->follow_uri = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 5));
    r->loaded(r);
}

/* Starts an action on the account named by path parameter key: parses the
 * parameters, loads the target and calls loaded. */
static void
rel_start(struct eu_req *req, const char *key, rel_step_cb loaded)
{
    const char *id = eu_req_param(req, key);
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct rel *r = eu_arena_calloc(req->arena, sizeof(*r));
    r->req = req;
    r->me = eu_req_viewer(req);
    r->me_id = req->auth.account_id;
    r->target = id;
    r->target_id = strtoll(id, NULL, 10);
    r->params = params;
    r->loaded = loaded;
    const char *p[] = {r->me, r->target};
    eu_req_stmt(req, &eu_relationships_sql[RELATIONSHIPS_TARGET], 2, p, on_target, r);
}

static void
on_applied(struct eu_req *req, PGresult *res, void *arg)
{
    struct rel *r = arg;
    /* Statements that can create something return one row saying so. */
    r->created = PQntuples(res) > 0 && PQnfields(res) > 0 && col_bool(res, 0, 0);
    if (r->applied)
        r->applied(r);
    render_relationships(req, eu_arena_sprintf(req->arena, "{%s}", r->target), true, true);
}

/* Runs the statement s with $2 = me, $3 = target and the extra parameters
 * ($4...; $1 is the tenant), then calls applied and answers with the
 * Relationship. */
static void
rel_apply(struct rel *r, const struct eu_sql *s, int nextra, const char *const *extra,
          rel_step_cb applied)
{
    const char *p[8] = {r->me, r->target};
    for (int i = 0; i < nextra && i < 6; i++)
        p[2 + i] = extra[i];
    r->applied = applied;
    eu_req_stmt(r->req, s, 2 + nextra, p, on_applied, r);
}

static void
invalidate_me(struct rel *r)
{
    eu_feed_home_invalidate(r->req->app, r->req->tenant, r->me_id);
}

static void
invalidate_target(struct rel *r)
{
    eu_feed_home_invalidate(r->req->app, r->req->tenant, r->target_id);
}

static void
invalidate_both(struct rel *r)
{
    invalidate_me(r);
    invalidate_target(r);
}

/* Answers 403 for actions Mastodon does not allow on oneself. */
static bool
refuse_self(struct rel *r)
{
    if (r->me_id != r->target_id)
        return false;
    eu_req_reply_error(r->req, 403, "This action is not allowed");
    return true;
}

/* --------------------------------------------------------------- follow */

static void
followed(struct rel *r)
{
    invalidate_me(r);
    if (r->created)
        eu_notify(r->req->app->registry, r->req->tenant, r->target_id, r->me_id, "follow", 0);
}

/* Sends what a remote target must hear of the action, when it changed
 * something. */
static void
federate(struct rel *r, enum eu_ap_outbox_kind kind)
{
    if (r->remote && r->created)
        eu_ap_outbox_account(r->req->app, r->req->tenant, r->me_id, r->target, kind, r->follow_uri);
}

static void
requested(struct rel *r)
{
    if (r->remote) {
        /* Pending until their Accept arrives (the inbox makes it a follow). */
        federate(r, EU_AP_FOLLOW);
        return;
    }
    if (r->created)
        eu_notify(r->req->app->registry, r->req->tenant, r->target_id, r->me_id, "follow_request",
                  0);
}

static void
follow_loaded(struct rel *r)
{
    struct eu_req *req = r->req;
    if (refuse_self(r))
        return;
    if (r->suspended) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (r->blocked) {
        eu_req_reply_error(req, 403, "This action is not allowed");
        return;
    }
    bool reblogs = true, notify = false;
    int has_reblogs = eu_param_bool(r->params, "reblogs", &reblogs);
    int has_notify = eu_param_bool(r->params, "notify", &notify);
    if (has_reblogs < 0 || has_notify < 0) {
        eu_req_reply_error(req, 422, "Validation failed: reblogs and notify must be booleans");
        return;
    }
    const char *languages = NULL;
    json_t *langs = eu_param_array(r->params, "languages");
    if (langs) {
        size_t i;
        json_t *v;
        json_array_foreach(langs, i, v)
        {
            if (!json_is_string(v) || json_string_length(v) > 16) {
                json_decref(langs);
                eu_req_reply_error(req, 422, "Validation failed: Languages is invalid");
                return;
            }
        }
        char *s = json_dumps(langs, JSON_COMPACT);
        languages = eu_arena_strdup(req->arena, s);
        free(s);
        json_decref(langs);
    }
    const char *extra[] = {has_reblogs ? (reblogs ? "true" : "false") : NULL,
                           has_notify ? (notify ? "true" : "false") : NULL, languages};
    /* Following again only changes the options, as Mastodon does; an
     * account already followed stays followed even if it became locked. */
    if (!r->following && (r->locked || r->remote)) {
        rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_REQUEST_FOLLOW], 3, extra, requested);
        return;
    }
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_FOLLOW], 3, extra, followed);
}

void
eu_relationships_follow(struct eu_req *req)
{
    rel_start(req, "id", follow_loaded);
}

static void
unfollowed(struct rel *r)
{
    invalidate_me(r);
    federate(r, EU_AP_UNFOLLOW);
}

static void
unfollow_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_UNFOLLOW], 0, NULL, unfollowed);
}

void
eu_relationships_unfollow(struct eu_req *req)
{
    rel_start(req, "id", unfollow_loaded);
}

/* A remote follower removed hears its Follow rejected, as Mastodon does. */
static void
follower_removed(struct rel *r)
{
    invalidate_target(r);
    federate(r, EU_AP_REJECT);
}

static void
remove_follower_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_REMOVE_FROM_FOLLOWERS], 0, NULL,
              follower_removed);
}

void
eu_relationships_remove_from_followers(struct eu_req *req)
{
    rel_start(req, "id", remove_follower_loaded);
}

/* ---------------------------------------------------------------- block */

static void
blocked(struct rel *r)
{
    invalidate_both(r);
    federate(r, EU_AP_BLOCK);
}

static void
block_loaded(struct rel *r)
{
    if (refuse_self(r))
        return;
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_BLOCK], 0, NULL, blocked);
}

void
eu_relationships_block(struct eu_req *req)
{
    rel_start(req, "id", block_loaded);
}

static void
unblocked(struct rel *r)
{
    invalidate_both(r);
    federate(r, EU_AP_UNBLOCK);
}

static void
unblock_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_UNBLOCK], 0, NULL, unblocked);
}

void
eu_relationships_unblock(struct eu_req *req)
{
    rel_start(req, "id", unblock_loaded);
}

/* ----------------------------------------------------------------- mute */

static void
mute_loaded(struct rel *r)
{
    struct eu_req *req = r->req;
    if (refuse_self(r))
        return;
    bool notifications = true;
    long long duration = 0;
    if (eu_param_bool(r->params, "notifications", &notifications) < 0 ||
        eu_param_int(r->params, "duration", &duration) < 0 || duration < 0 ||
        duration > 100LL * 365 * 86400) {
        eu_req_reply_error(req, 422,
                           "Validation failed: notifications must be a boolean and "
                           "duration a number of seconds");
        return;
    }
    const char *extra[] = {notifications ? "true" : "false",
                           eu_arena_sprintf(req->arena, "%lld", duration)};
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_MUTE], 2, extra, invalidate_me);
}

void
eu_relationships_mute(struct eu_req *req)
{
    rel_start(req, "id", mute_loaded);
}

static void
unmute_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_UNMUTE], 0, NULL, invalidate_me);
}

void
eu_relationships_unmute(struct eu_req *req)
{
    rel_start(req, "id", unmute_loaded);
}

/* ----------------------------------------------------------------- note */

static void
note_loaded(struct rel *r)
{
    const char *comment = eu_param_str(r->params, "comment");
    comment = comment ? comment : "";
    if (eu_utf8_chars(comment) > NOTE_COMMENT_MAX) {
        eu_req_reply_error(r->req, 422,
                           "Validation failed: Comment is too long (maximum is %d "
                           "characters)",
                           NOTE_COMMENT_MAX);
        return;
    }
    const char *extra[] = {comment};
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_NOTE], 1, extra, NULL);
}

void
eu_relationships_note(struct eu_req *req)
{
    rel_start(req, "id", note_loaded);
}

/* ------------------------------------------------------ follow requests */

static void
authorized(struct rel *r)
{
    invalidate_target(r);
    federate(r, EU_AP_ACCEPT);
}

static void
rejected(struct rel *r)
{
    federate(r, EU_AP_REJECT);
}

static void
authorize_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_AUTHORIZE], 0, NULL, authorized);
}

static void
reject_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_REJECT], 0, NULL, rejected);
}

/* Mastodon answers 404 when there is no pending request from the account. */
static void
on_request_found(struct eu_req *req, PGresult *res, void *arg)
{
    struct rel *r = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* Their Follow's id, as the inbox kept it, for the Accept or Reject. */
    r->follow_uri =
        PQgetisnull(res, 0, 1) ? NULL : eu_arena_strdup(req->arena, PQgetvalue(res, 0, 1));
    r->loaded(r);
}

static void
request_loaded(struct rel *r)
{
    const char *p[] = {r->me, r->target};
    eu_req_stmt(r->req, &eu_relationships_sql[RELATIONSHIPS_REQUEST_PENDING], 2, p,
                on_request_found, r);
}

static void
authorize_check(struct rel *r)
{
    r->loaded = authorize_loaded;
    request_loaded(r);
}

static void
reject_check(struct rel *r)
{
    r->loaded = reject_loaded;
    request_loaded(r);
}

void
eu_relationships_request_authorize(struct eu_req *req)
{
    rel_start(req, "account_id", authorize_check);
}

void
eu_relationships_request_reject(struct eu_req *req)
{
    rel_start(req, "account_id", reject_check);
}

/* ---------------------------------------------------------- endorsements */

/* Featuring an account on my profile needs a follow, as Mastodon's
 * AccountPin validates; a suspended one cannot be featured. */
static void
endorse_loaded(struct rel *r)
{
    if (r->suspended) {
        eu_req_reply_error(r->req, 404, "Record not found");
        return;
    }
    if (!r->following) {
        eu_req_reply_error(r->req, 422,
                           "Validation failed: You must be already following the person you "
                           "want to endorse");
        return;
    }
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_ENDORSE], 0, NULL, NULL);
}

/* POST /api/v1/accounts/:id/pin and 4.4's /endorse: the Relationship. */
void
eu_relationships_endorse(struct eu_req *req)
{
    rel_start(req, "id", endorse_loaded);
}

static void
unendorse_loaded(struct rel *r)
{
    rel_apply(r, &eu_relationships_sql[RELATIONSHIPS_UNENDORSE], 0, NULL, NULL);
}

/* POST /api/v1/accounts/:id/unpin and /unendorse. */
void
eu_relationships_unendorse(struct eu_req *req)
{
    rel_start(req, "id", unendorse_loaded);
}

/* --------------------------------------------------------------- pages */

/* Answers a page of accounts from the paged statement s (rows as
 * eu_accounts_reply_page() takes them), whose $2 is the viewer. */
static void
reply_own_page(struct eu_req *req, const struct eu_sql *s)
{
    struct eu_page *page = eu_arena_calloc(req->arena, sizeof(*page));
    if (eu_page_parse(req, page, 40, 80) < 0)
        return;
    const char *params[5] = {eu_req_viewer(req)};
    eu_page_params(page, params + 1);
    eu_accounts_reply_page(req, s, 5, params, page);
}

void
eu_relationships_requests_index(struct eu_req *req)
{
    reply_own_page(req, &eu_relationships_sql[RELATIONSHIPS_REQUESTS]);
}

void
eu_relationships_blocks_index(struct eu_req *req)
{
    reply_own_page(req, &eu_relationships_sql[RELATIONSHIPS_BLOCKS]);
}

void
eu_relationships_mutes_index(struct eu_req *req)
{
    reply_own_page(req, &eu_relationships_sql[RELATIONSHIPS_MUTES]);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_relationships_routes[] = {
    {EU_HTTP_GET, "/api/v1/accounts/relationships", eu_relationships_index, "read:follows",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/follow", eu_relationships_follow, "write:follows",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/unfollow", eu_relationships_unfollow, "write:follows",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/remove_from_followers",
     eu_relationships_remove_from_followers, "write:follows", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/block", eu_relationships_block, "write:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/unblock", eu_relationships_unblock, "write:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/mute", eu_relationships_mute, "write:mutes",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/unmute", eu_relationships_unmute, "write:mutes",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/note", eu_relationships_note, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/pin", eu_relationships_endorse, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/unpin", eu_relationships_unendorse, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/endorse", eu_relationships_endorse, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/accounts/:id/unendorse", eu_relationships_unendorse, "write:accounts",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/follow_requests", eu_relationships_requests_index, "read:follows",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/follow_requests/:account_id/authorize",
     eu_relationships_request_authorize, "write:follows", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/follow_requests/:account_id/reject", eu_relationships_request_reject,
     "write:follows", EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/blocks", eu_relationships_blocks_index, "read:blocks",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {EU_HTTP_GET, "/api/v1/mutes", eu_relationships_mutes_index, "read:mutes",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
