/*
 * Polls: the poll[...] parameters of a new status, GET /api/v1/polls/:id,
 * POST /api/v1/polls/:id/votes, and the timed task that closes polls when
 * they expire.
 *
 * A poll row is written by the statement that inserts its status
 * (statuses.c, INSERT_SQL), and the Poll entity is built in SQL
 * (eunha_poll_json(), migration 0031) so the status renderer carries it in
 * its one query.
 * A vote is one poll_votes row per voter holding all their choices, so "one
 * vote per account" is the primary key and holds however requests race.
 *
 * Closing is the task's job, not a minute tick: every new poll wakes it for
 * its expiry (statuses.c), it closes what is due in one statement that also
 * says when the next poll expires, and it sleeps until then. Closing sends
 * "poll" notifications to the author and to every voter, as Mastodon does.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/notify.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"
#include "statuses_internal.h"

/* Mastodon's instance configuration (configuration.polls). */
#define MAX_OPTIONS 4
#define MAX_OPTION_CHARS 50
#define MAX_EXPIRATION 2629746
/* Polls closed per task run; more due ones make the task run again at once. */
#define CLOSE_BATCH "50"

enum {
    POLLS_SHOW,
    POLLS_VOTE,
    POLLS_CLOSE,
};

const struct eu_sql eu_polls_sql[] = {
    /* $2 poll id, $3 viewer: the entity, when the viewer may see the status. */
    [POLLS_SHOW] = {"polls.show", "SELECT eunha_poll_json($1, p.status_id, $3::bigint) FROM polls p"
                                  " JOIN statuses s ON s.tenant_id = $1 AND s.id = p.status_id"
                                  " CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id,"
                                  " s.visibility, s.deleted_at, $3::bigint) vis"
                                  " WHERE p.tenant_id = $1 AND p.id = $2::bigint AND vis.ok"},
    /*
     * $2 poll id, $3 voter, $4 choices (int[]). Inserts the vote when every
     * rule holds and returns what the handler needs to say which rule failed,
     * in Mastodon's order: expired, invalid choice, own poll, already voted;
     * then whether the poll is remote (its author hears of the vote). A
     * remote poll's cached counts take the vote at once, as Mastodon's do,
     * until its origin's next Update.
     * No row: the poll does not exist or its status is hidden from the voter.
     */
    [POLLS_VOTE] =
        {"polls.vote",
         "WITH p AS (SELECT p.id, p.account_id, p.multiple, cardinality(p.options) AS n,"
         "  p.expires_at <= now() AS expired, NOT s.local AS remote FROM polls p"
         "  JOIN statuses s ON s.tenant_id = $1 AND s.id = p.status_id"
         "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
         "  s.deleted_at, $3::bigint) vis"
         "  WHERE p.tenant_id = $1 AND p.id = $2::bigint AND vis.ok),"
         " bad AS (SELECT p.id FROM p WHERE EXISTS (SELECT 1 FROM unnest($4::int[]) c"
         "  WHERE c < 0 OR c >= p.n)),"
         " v AS (INSERT INTO poll_votes (tenant_id, poll_id, account_id, choices)"
         "  SELECT $1, p.id, $3::bigint, $4::int[] FROM p WHERE NOT p.expired"
         "  AND p.account_id <> $3::bigint AND (p.multiple OR cardinality($4::int[]) = 1)"
         "  AND NOT EXISTS (SELECT 1 FROM bad)"
         "  ON CONFLICT DO NOTHING RETURNING 1),"
         " c AS (UPDATE polls q SET cached_tallies = ARRAY(SELECT u.t + CASE WHEN (u.i - 1)::int"
         "  = ANY ($4::int[]) THEN 1 ELSE 0 END FROM unnest(q.cached_tallies) WITH ORDINALITY"
         "  u(t, i) ORDER BY u.i), cached_voters = coalesce(q.cached_voters, 0) + 1 FROM p"
         "  WHERE q.tenant_id = $1 AND q.id = p.id AND q.cached_tallies IS NOT NULL"
         "  AND EXISTS (SELECT 1 FROM v))"
         " SELECT p.expired, EXISTS (SELECT 1 FROM bad), p.account_id = $3::bigint,"
         "  (SELECT count(*) FROM v), p.remote FROM p"},
    /*
     * Closes the due polls (closed_at, so a poll is closed once however many
     * processes run this) and returns, per closed poll of a live status, the
     * status, its author, the local voters and whether the author is local: remote
     * polls close here too, for their local voters, and remote accounts
     * get no notifications. Then one row (kind 1) with the milliseconds
     * until the next open poll expires (NULL: none; a remote poll without
     * an end is 'infinity' and never due).
     */
    [POLLS_CLOSE] =
        {"polls.close",
         "WITH due AS (UPDATE polls SET closed_at = now() WHERE tenant_id = $1 AND id IN (SELECT id"
         "  FROM polls WHERE tenant_id = $1 AND closed_at IS NULL AND expires_at <= now()"
         "  ORDER BY expires_at LIMIT " CLOSE_BATCH " FOR UPDATE SKIP LOCKED)"
         "  RETURNING id, status_id, account_id)"
         " SELECT 0, due.status_id::text, due.account_id::text, (SELECT"
         "  coalesce(array_agg(pv.account_id), '{}') FROM poll_votes pv JOIN accounts va"
         "  ON va.tenant_id = $1 AND va.id = pv.account_id AND va.domain IS NULL"
         "  WHERE pv.tenant_id = $1"
         "  AND pv.poll_id = due.id AND pv.account_id <> due.account_id)::text, s.local FROM due"
         "  JOIN statuses s ON s.tenant_id = $1 AND s.id = due.status_id AND s.deleted_at IS NULL"
         " UNION ALL SELECT 1, (SELECT ceil(extract(epoch FROM min(expires_at) - now()) * 1000)"
         "  ::bigint FROM polls WHERE tenant_id = $1 AND closed_at IS NULL"
         "  AND expires_at < 'infinity' AND id NOT IN (SELECT id FROM due))::text,"
         "  NULL, NULL, NULL"},
    {0},
};

/* ------------------------------------------------------------- creation */

int
eu_poll_params_read(struct eu_req *req, json_t *poll, const char **draft)
{
    *draft = NULL;
    if (!poll)
        return 0;
    json_t *options = eu_param_array(poll, "options");
    size_t n = json_array_size(options);
    const char *why = NULL;
    if (n < 2)
        why = "Poll options must have more than one item";
    else if (n > MAX_OPTIONS)
        why = "Poll options can't contain more than 4 items";
    for (size_t i = 0; !why && i < n; i++) {
        const char *o = json_string_value(json_array_get(options, i));
        if (!o || !*o)
            why = "Poll options can't be blank";
        else if (eu_utf8_chars(o) > MAX_OPTION_CHARS)
            why = "Poll options cannot be longer than 50 characters each";
        for (size_t j = 0; !why && j < i; j++)
            if (strcmp(o, json_string_value(json_array_get(options, j))) == 0)
                why = "Poll options contain duplicate items";
    }
    long long expires_in = 0;
    bool multiple = false, hide_totals = false;
    if (!why && eu_param_int(poll, "expires_in", &expires_in) <= 0)
        why = "Poll expires at can't be blank";
    else if (!why && expires_in > MAX_EXPIRATION)
        why = "Poll expires at is too far into the future";
    else if (!why && expires_in < req->app->cfg->poll_min_expires_s)
        why = "Poll expires at is too soon";
    if (!why && (eu_param_bool(poll, "multiple", &multiple) < 0 ||
                 eu_param_bool(poll, "hide_totals", &hide_totals) < 0))
        why = "Poll multiple and hide_totals must be booleans";
    if (why) {
        json_decref(options);
        eu_req_reply_error(req, 422, "Validation failed: %s", why);
        return -1;
    }
    json_t *o = json_pack("{s:o, s:I, s:b, s:b}", "options", options, "expires_in",
                          (json_int_t)expires_in, "multiple", multiple, "hide_totals", hide_totals);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    *draft = eu_arena_strdup(req->arena, text);
    free(text);
    return 0;
}

/* ------------------------------------------------------------ the entity */

/* eu_poll_json_finish(), the Poll entity for a viewer, is the social core's
 * (src/social/status_render.c): every status render uses it. */

static void
on_poll_shown(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *poll = PQntuples(res) ? eu_poll_json_finish(req, PQgetvalue(res, 0, 0)) : NULL;
    if (!poll) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, poll);
}

static void
reply_poll(struct eu_req *req, const char *id)
{
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_polls_sql[POLLS_SHOW], 2, params, on_poll_shown, NULL);
}

void
eu_polls_show(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    reply_poll(req, id);
}

/* ----------------------------------------------------------------- votes */

struct vote {
    const char *id;
};

static void
on_voted(struct eu_req *req, PGresult *res, void *arg)
{
    struct vote *v = arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *why = PQgetvalue(res, 0, 0)[0] == 't'   ? "The poll has already ended"
                      : PQgetvalue(res, 0, 1)[0] == 't' ? "The chosen vote option does not exist"
                      : PQgetvalue(res, 0, 2)[0] == 't' ? "You cannot vote in your own polls"
                      : strcmp(PQgetvalue(res, 0, 3), "0") == 0
                          /* a second vote, or several choices on a single-choice poll,
                           * which Mastodon answers the same way */
                          ? "You have already voted on this poll"
                          : NULL;
    if (why) {
        eu_req_reply_error(req, 422, "Validation failed: %s", why);
        return;
    }
    /* A vote on a remote poll goes to its author; one on a local poll
     * changes counts its remote audience sees (Mastodon's VoteService). */
    if (PQgetvalue(res, 0, 4)[0] == 't')
        eu_ap_outbox_poll_vote(req->app, req->tenant, req->auth.account_id, v->id);
    else
        eu_ap_poll_update_later(req->app, req->tenant, v->id);
    reply_poll(req, v->id);
}

void
eu_polls_vote(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *choices = eu_param_array(p, "choices");
    size_t n = json_array_size(choices);
    if (n == 0 || n > MAX_OPTIONS) {
        json_decref(choices);
        eu_req_reply_error(req, 422, "Validation failed: The chosen vote option does not exist");
        return;
    }
    /* "{0,2}": each choice read as a small integer; anything else is not an
     * option. Repeating a choice is voting for it twice. */
    char *list = eu_arena_alloc(req->arena, n * 12 + 3), *o = list;
    int seen[MAX_OPTIONS];
    const char *why = NULL;
    *o++ = '{';
    for (size_t i = 0; i < n && !why; i++) {
        json_t *c = json_array_get(choices, i);
        const char *s = json_string_value(c);
        char *end = NULL;
        long v = json_is_integer(c) ? (long)json_integer_value(c)
                 : s && *s          ? strtol(s, &end, 10)
                                    : -1;
        if ((end && *end) || v < 0 || v >= MAX_OPTIONS) {
            why = "The chosen vote option does not exist";
            break;
        }
        seen[i] = (int)v;
        for (size_t j = 0; j < i; j++)
            if (seen[j] == seen[i])
                why = "You have already voted on this poll";
        o += sprintf(o, "%s%ld", i ? "," : "", v);
    }
    *o++ = '}';
    *o = '\0';
    json_decref(choices);
    if (why) {
        eu_req_reply_error(req, 422, "Validation failed: %s", why);
        return;
    }
    struct vote *vt = eu_arena_calloc(req->arena, sizeof(*vt));
    vt->id = id;
    const char *params[] = {id, eu_req_viewer(req), list};
    eu_req_stmt(req, &eu_polls_sql[POLLS_VOTE], 3, params, on_voted, vt);
}

/* ---------------------------------------------------------- closing task */

static void
on_closed(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_task_run *run = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("polls", "cannot close expired polls: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        eu_task_run_fail(run);
        return;
    }
    struct eu_app *app = eu_task_run_app(run);
    struct eu_tenant *t = eu_task_run_tenant(run);
    int64_t next = -1; /* no open poll: sleep the idle poll */
    int closed = 0;
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        if (strcmp(PQgetvalue(res, i, 0), "1") == 0) {
            if (!PQgetisnull(res, i, 1)) {
                next = strtoll(PQgetvalue(res, i, 1), NULL, 10);
                if (next < 0)
                    next = 0; /* due already (more than a batch): again at once */
            }
            continue;
        }
        closed++;
        int64_t sid = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        int64_t author = strtoll(PQgetvalue(res, i, 2), NULL, 10);
        if (PQgetvalue(res, i, 4)[0] == 't')
            eu_notify(app->registry, t, author, author, "poll", sid);
        size_t nvoters;
        int64_t *voters = eu_db_bigint_array(PQgetvalue(res, i, 3), &nvoters);
        for (size_t v = 0; v < nvoters; v++)
            eu_notify(app->registry, t, voters[v], author, "poll", sid);
        free(voters);
    }
    if (closed)
        eu_log_info("polls", "closed %d expired polls", closed);
    eu_task_run_done(run, next);
}

void
eu_polls_task_run(struct eu_task_run *run)
{
    eu_db_conn_stmt(eu_task_run_conn(run), &eu_polls_sql[POLLS_CLOSE], 0, NULL, on_closed, run);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_polls_routes[] = {
    {EU_HTTP_GET, "/api/v1/polls/:id", eu_polls_show, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/polls/:id/votes", eu_polls_vote, "write:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
