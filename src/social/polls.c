/*
 * Polls' rules (include/eunha/polls.h): the statements that record votes,
 * keep a remote poll's counts and close polls, the readers of their rows,
 * the limits of a new poll, and the timed task that closes polls when
 * they end. The REST API and the inbox both vote through here, so a rule
 * is written once whichever protocol a vote came by.
 *
 * A poll row is written by the statement that inserts its status
 * (src/api/statuses.c) or by EU_POLLS_STORE_REMOTE, and the Poll entity is
 * built in SQL (eunha_poll_json(), migration 0031) so the status renderer
 * carries it in its one query.
 *
 * Closing is the task's job, not a minute tick: every new poll wakes it for
 * its expiry (statuses.c), it closes what is due in one statement that also
 * says when the next poll expires, and it sleeps until then. Closing sends
 * "poll" notifications to the author and to every voter, as Mastodon does.
 */
#include "eunha/polls.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/notify.h"
#include "eunha/queue.h"
#include "eunha/tenant.h"
#include "eunha/utf8.h"

/* Polls closed per task run; more due ones make the task run again at once. */
#define CLOSE_BATCH "50"

const struct eu_sql eu_polls_sql[] = {
    [EU_POLLS_SHOW] = {"polls.show",
                       "SELECT eunha_poll_json($1, p.status_id, $3::bigint) FROM polls p"
                       " JOIN statuses s ON s.tenant_id = $1 AND s.id = p.status_id"
                       " CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id,"
                       " s.visibility, s.deleted_at, $3::bigint) vis"
                       " WHERE p.tenant_id = $1 AND p.id = $2::bigint AND vis.ok"},
    /*
     * Inserts the vote when every rule holds and returns what
     * eu_poll_vote_read() needs to say which rule failed: expired, invalid
     * choice, own poll, recorded (0: already voted, or several choices on a
     * single-choice poll), then whether the poll is remote. No row: the
     * poll does not exist or its status is hidden from the voter.
     */
    [EU_POLLS_VOTE] =
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
     * The voter's row takes the choice, a new one or (multiple choice) one
     * more. Returns (poll, option known, recorded, hide_totals); no row
     * when there is no open poll there the voter may see and vote in.
     */
    [EU_POLLS_VOTE_REMOTE] =
        {"polls.vote_remote",
         "WITH p AS (SELECT p.id, p.multiple, p.hide_totals,"
         "  array_position(p.options, $4) - 1 AS c FROM polls p"
         "  JOIN statuses s ON s.tenant_id = $1 AND s.id = p.status_id AND s.local"
         "  CROSS JOIN LATERAL eunha_is_visible($1, s.id, s.account_id, s.visibility,"
         "  s.deleted_at, $3::bigint) vis"
         "  WHERE p.tenant_id = $1 AND p.status_id = $2::bigint AND p.expires_at > now()"
         "  AND p.account_id <> $3::bigint AND vis.ok),"
         " v AS (INSERT INTO poll_votes AS pv (tenant_id, poll_id, account_id, choices)"
         "  SELECT $1, p.id, $3::bigint, ARRAY[p.c] FROM p WHERE p.c IS NOT NULL"
         "  ON CONFLICT (tenant_id, poll_id, account_id) DO UPDATE"
         "  SET choices = pv.choices || excluded.choices WHERE pv.tenant_id = $1"
         "  AND (SELECT multiple FROM p) AND NOT excluded.choices[1] = ANY (pv.choices)"
         "  RETURNING 1)"
         " SELECT p.id::text, p.c IS NOT NULL, (SELECT count(*) FROM v) > 0, p.hide_totals FROM p"},
    [EU_POLLS_STORE_REMOTE] =
        {"polls.store_remote",
         "WITH o AS (SELECT ARRAY(SELECT jsonb_array_elements_text($4::jsonb)) AS options),"
         " old AS (SELECT p.id FROM polls p, o WHERE p.tenant_id = $1 AND p.status_id = $2::bigint"
         "  AND p.options IS DISTINCT FROM o.options),"
         " reset AS (DELETE FROM poll_votes WHERE tenant_id = $1 AND poll_id IN (SELECT id FROM "
         "old))"
         " INSERT INTO polls AS p (tenant_id, status_id, account_id, options, multiple, expires_at,"
         "  cached_tallies, cached_voters)"
         " SELECT $1, s.id, $3::bigint, o.options, $5::bool,"
         "  coalesce($6::timestamptz, 'infinity'),"
         "  ARRAY(SELECT x::int FROM jsonb_array_elements_text($7::jsonb) x), $8::int"
         " FROM statuses s, o WHERE s.tenant_id = $1 AND s.id = $2::bigint AND NOT s.local"
         " AND s.account_id = $3::bigint"
         " ON CONFLICT (tenant_id, status_id) DO UPDATE SET options = excluded.options,"
         "  multiple = excluded.multiple, expires_at = excluded.expires_at,"
         "  cached_tallies = excluded.cached_tallies, cached_voters = excluded.cached_voters"
         " WHERE p.tenant_id = $1 AND p.account_id = $3::bigint"},
    /*
     * Closes the due polls (closed_at, so a poll is closed once however many
     * processes run this) and returns, per closed poll of a live status, the
     * status, its author, the local voters and whether the author is local: remote
     * polls close here too, for their local voters, and remote accounts
     * get no notifications. Then one row (kind 1) with the milliseconds
     * until the next open poll expires (NULL: none; a remote poll without
     * an end is 'infinity' and never due).
     */
    [EU_POLLS_CLOSE] =
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

/* ------------------------------------------------------------- a new poll */

const char *
eu_poll_options_refusal(const json_t *options)
{
    size_t n = json_array_size(options);
    if (n < 2)
        return "Poll options must have more than one item";
    if (n > EU_POLL_MAX_OPTIONS)
        return "Poll options can't contain more than 4 items";
    for (size_t i = 0; i < n; i++) {
        const char *o = json_string_value(json_array_get(options, i));
        if (!o || !*o)
            return "Poll options can't be blank";
        if (eu_utf8_chars(o) > EU_POLL_MAX_OPTION_CHARS)
            return "Poll options cannot be longer than 50 characters each";
        for (size_t j = 0; j < i; j++)
            if (strcmp(o, json_string_value(json_array_get(options, j))) == 0)
                return "Poll options contain duplicate items";
    }
    return NULL;
}

const char *
eu_poll_expiry_refusal(long long expires_in, int min_s)
{
    if (expires_in > EU_POLL_MAX_EXPIRATION)
        return "Poll expires at is too far into the future";
    if (expires_in < min_s)
        return "Poll expires at is too soon";
    return NULL;
}

/* ------------------------------------------------------------------ votes */

enum eu_poll_vote
eu_poll_choices_check(const long *choices, size_t n)
{
    if (n == 0 || n > EU_POLL_MAX_OPTIONS)
        return EU_POLL_NO_OPTION;
    for (size_t i = 0; i < n; i++) {
        if (choices[i] < 0 || choices[i] >= EU_POLL_MAX_OPTIONS)
            return EU_POLL_NO_OPTION;
        /* Repeating a choice is voting for it twice. */
        for (size_t j = 0; j < i; j++)
            if (choices[j] == choices[i])
                return EU_POLL_VOTED_BEFORE;
    }
    return EU_POLL_VOTED;
}

enum eu_poll_vote
eu_poll_vote_read(const PGresult *res, bool *remote)
{
    *remote = false;
    if (PQntuples(res) == 0)
        return EU_POLL_NOT_FOUND;
    if (PQgetvalue(res, 0, 0)[0] == 't')
        return EU_POLL_ENDED;
    if (PQgetvalue(res, 0, 1)[0] == 't')
        return EU_POLL_NO_OPTION;
    if (PQgetvalue(res, 0, 2)[0] == 't')
        return EU_POLL_OWN;
    if (strcmp(PQgetvalue(res, 0, 3), "0") == 0)
        return EU_POLL_VOTED_BEFORE;
    *remote = PQgetvalue(res, 0, 4)[0] == 't';
    return EU_POLL_VOTED;
}

enum eu_poll_vote
eu_poll_vote_remote_read(const PGresult *res, const char **poll_id, bool *hide_totals)
{
    *poll_id = NULL;
    *hide_totals = false;
    if (PQntuples(res) == 0)
        return EU_POLL_NOT_FOUND;
    if (PQgetvalue(res, 0, 1)[0] != 't')
        return EU_POLL_NO_OPTION;
    if (PQgetvalue(res, 0, 2)[0] != 't')
        return EU_POLL_VOTED_BEFORE;
    *poll_id = PQgetvalue(res, 0, 0);
    *hide_totals = PQgetvalue(res, 0, 3)[0] == 't';
    return EU_POLL_VOTED;
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
        eu_notify_many(app->registry, t, voters, nvoters, author, "poll", sid);
        free(voters);
    }
    if (closed)
        eu_log_info("polls", "closed %d expired polls", closed);
    eu_task_run_done(run, next);
}

void
eu_polls_task_run(struct eu_task_run *run)
{
    eu_db_conn_stmt(eu_task_run_conn(run), &eu_polls_sql[EU_POLLS_CLOSE], 0, NULL, on_closed, run);
}
