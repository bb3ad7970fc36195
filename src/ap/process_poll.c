/*
 * Polls over federation, as Mastodon has them.
 *
 * Received: a remote Question keeps its poll row beside its status, with
 * the counts its origin reports (cached_tallies, cached_voters), written on
 * Create and on every Update whether or not the text changed, so the counts
 * follow the origin. A vote on a local poll arrives as a Create of a Note
 * whose name is an option's title, replying to the Question, addressed to
 * no public: it becomes a poll_votes row (one per voter, its choices
 * growing for a multiple-choice poll), never a status. Its content does not
 * matter, as in Mastodon (snac2 sends "<br>"). A vote that does not fit
 * (expired, unknown option, second vote on a single-choice poll, own poll)
 * is dropped.
 *
 * Sent: the counts of a local poll that got remote votes go out as an
 * Update of its Question ("ap_poll_update" job), to the author's
 * followers, the accounts it mentions and the remote voters, as Mastodon's
 * DistributePollUpdateWorker does. The job waits [federation]
 * poll_update_delay_seconds and is deduplicated per poll, so a burst of
 * votes makes one Update; a vote that lands while the Update is being built
 * waits for the next vote's Update (Mastodon's unique job has the same
 * window). Polls that hide their totals send none.
 */
#include "process_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/ap.h"
#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/page.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"

enum {
    POLL_STORE,
    POLL_VOTE,
    POLL_UPDATE_CONTEXT,
};

const struct eu_sql eu_ap_process_poll_sql[] = {
    /*
     * The poll of remote status $2 by $3: $4 option titles (JSON), $5
     * multiple, $6 end (NULL: none), $7 counts per option (JSON), $8
     * votersCount (NULL: not given). Changed options void the votes cast
     * on the old ones, as Mastodon resets them.
     */
    [POLL_STORE] =
        {"ap_poll.store",
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
     * Remote account $3 votes $4 (an option's title) on the poll of local
     * status $2: its row takes the choice, a new one or (multiple choice)
     * one more. Returns (poll, option known, recorded, hide_totals); no
     * row when there is no open poll there the voter may see and vote on.
     */
    [POLL_VOTE] =
        {"ap_poll.vote",
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
    /* Local poll $2: its status, author and whether it hides its totals. */
    [POLL_UPDATE_CONTEXT] =
        {"ap_poll.update_context",
         "SELECT s.id::text, s.account_id::text, s.visibility, p.hide_totals FROM polls p"
         " JOIN statuses s ON s.tenant_id = $1 AND s.id = p.status_id AND s.local"
         " AND s.deleted_at IS NULL WHERE p.tenant_id = $1 AND p.id = $2::bigint"},
    {0},
};

/* ----------------------------------------------------- remote polls */

/* p->parsed holds what runs next: parsing is over when a poll is stored. */
static void
on_poll_stored(struct eu_proc *p, PGresult *res)
{
    (void)res;
    p->parsed(p);
}

void
eu_proc_poll_store(struct eu_proc *p, const char *status_id, void (*then)(struct eu_proc *p))
{
    if (p->note.n_options == 0) {
        then(p);
        return;
    }
    json_t *titles = json_array(), *tallies = json_array();
    for (size_t i = 0; i < p->note.n_options; i++) {
        json_array_append_new(titles, json_string(p->note.options[i].name));
        json_array_append_new(tallies, json_integer(p->note.options[i].votes));
    }
    char *t = json_dumps(titles, JSON_COMPACT), *c = json_dumps(tallies, JSON_COMPACT);
    json_decref(titles);
    json_decref(tallies);
    char voters[24];
    snprintf(voters, sizeof(voters), "%lld", (long long)p->note.voters_count);
    const char *params[] = {status_id,
                            p->actor_id,
                            eu_arena_strdup(p->arena, t),
                            p->note.multiple ? "true" : "false",
                            p->note.end_time,
                            eu_arena_strdup(p->arena, c),
                            p->note.voters_count >= 0 ? voters : NULL};
    free(t);
    free(c);
    p->parsed = then;
    eu_proc_stmt(p, &eu_ap_process_poll_sql[POLL_STORE], 7, params, on_poll_stored);
}

/* ------------------------------------------------------ votes received */

/* Whether the Public collection is in the audience v (a string or an
 * array, looked at no further than EU_AP_MAX_RECIPIENTS entries). */
static bool
names_public(json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        return strcmp(s, EU_AP_PUBLIC) == 0 || strcmp(s, "as:Public") == 0 ||
               strcmp(s, "Public") == 0;
    }
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        if (i >= EU_AP_MAX_RECIPIENTS)
            break;
        if (json_is_string(e) && names_public(e))
            return true;
    }
    return false;
}

bool
eu_proc_is_vote(struct eu_proc *p)
{
    json_t *o = p->object;
    if (!json_is_object(o) || !p->object_type || strcmp(p->object_type, "Note") != 0 ||
        !json_is_string(json_object_get(o, "name")))
        return false;
    /* Content is no test: servers put something in it ("<br>" from
     * snac2) and Mastodon ignores it. A public reply that happens to carry
     * a name stays a reply. */
    if (names_public(json_object_get(o, "to")) || names_public(json_object_get(o, "cc")))
        return false;
    return eu_proc_local_status_id(p, eu_proc_json_id(json_object_get(o, "inReplyTo"))) != NULL;
}

static void
on_voted(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) == 0) {
        eu_proc_skip(p, "a vote on no open poll here");
        return;
    }
    if (PQgetvalue(res, 0, 1)[0] != 't') {
        eu_proc_skip(p, "a vote for no option of the poll");
        return;
    }
    if (PQgetvalue(res, 0, 2)[0] != 't') {
        eu_proc_skip(p, "already voted so");
        return;
    }
    if (PQgetvalue(res, 0, 3)[0] != 't')
        eu_ap_poll_update_later(p->app, p->t, PQgetvalue(res, 0, 0));
    eu_proc_finish(p, NULL);
}

void
eu_proc_poll_vote(struct eu_proc *p)
{
    json_t *o = p->object;
    const char *by = eu_proc_json_id(json_object_get(o, "attributedTo"));
    if (by && strcmp(by, p->actor_uri) != 0) {
        eu_proc_skip(p, "the vote is not the actor's");
        return;
    }
    const char *name = json_string_value(json_object_get(o, "name"));
    if (strlen(name) > EU_AP_MAX_NAME) {
        eu_proc_skip(p, "a vote for no option of the poll");
        return;
    }
    const char *params[] = {
        eu_proc_local_status_id(p, eu_proc_json_id(json_object_get(o, "inReplyTo"))), p->actor_id,
        name};
    eu_proc_stmt(p, &eu_ap_process_poll_sql[POLL_VOTE], 3, params, on_voted);
}

/* ------------------------------------------------- the Update we send */

void
eu_ap_poll_update_later(struct eu_app *app, struct eu_tenant *t, const char *poll_id)
{
    char payload[64], key[64];
    snprintf(payload, sizeof(payload), "{\"poll_id\":\"%s\"}", poll_id);
    snprintf(key, sizeof(key), "poll_update:%s", poll_id);
    eu_queue_enqueue(app, t, "ap_poll_update", payload, app->cfg->fed_poll_update_delay_s, key,
                     NULL, NULL);
}

/* One run of the job, until its two statements return. */
struct poll_update {
    struct eu_job *job;
    char *base, *status_id, *poll_id;
    int64_t author;
};

static void
poll_update_end(struct poll_update *u, const char *why)
{
    /* Always done: a dead job would keep its dedupe key and stop every
     * later Update of this poll; the next vote tries again anyway. */
    if (why)
        eu_log_warn("ap", "cannot send the Update of poll %s: %s", u->poll_id, why);
    struct eu_job *job = u->job;
    free(u->base);
    free(u->status_id);
    free(u->poll_id);
    free(u);
    eu_job_done(job, NULL);
}

static void
on_update_note(PGresult *res, enum eu_db_status st, void *arg)
{
    struct poll_update *u = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1) {
        poll_update_end(u, st != EU_DB_OK ? "database unavailable" : NULL);
        return;
    }
    struct eu_app *app = eu_job_app(u->job);
    struct eu_tenant *t = eu_job_tenant(u->job);
    int vis = eu_ap_note_row_visibility(res, 0);
    json_t *note = eu_ap_note_json(app, u->base, t->domain, res, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char *id = eu_xasprintf("%s#updates/%lld%03ld", json_string_value(json_object_get(note, "id")),
                            (long long)ts.tv_sec, ts.tv_nsec / 1000000);
    json_t *a = json_pack("{s:s, s:s}", "id", id, "type", "Update");
    free(id);
    json_object_set(a, "actor", json_object_get(note, "attributedTo"));
    json_object_set(a, "to", json_object_get(note, "to"));
    json_object_set(a, "cc", json_object_get(note, "cc"));
    json_object_set_new(a, "object", note);
    struct eu_ap_audience to = {
        .followers = vis < 3, .mentioned_in = u->status_id, .voters_of = u->poll_id};
    eu_ap_deliver(app, t, NULL, u->author, eu_ap_note_with_context(a), &to);
    poll_update_end(u, NULL);
}

static void
on_update_context(PGresult *res, enum eu_db_status st, void *arg)
{
    struct poll_update *u = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1 || PQgetvalue(res, 0, 3)[0] == 't') {
        poll_update_end(u, st != EU_DB_OK ? "database unavailable" : NULL);
        return;
    }
    u->status_id = eu_xstrdup(PQgetvalue(res, 0, 0));
    u->author = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    char ids[32];
    snprintf(ids, sizeof(ids), "{%s}", u->status_id);
    const char *params[] = {ids, u->base};
    eu_job_stmt(u->job, eu_ap_note_stmt(), 2, params, on_update_note, u);
}

void
eu_ap_poll_update_run(struct eu_job *job)
{
    const char *poll_id = json_string_value(json_object_get(eu_job_payload(job), "poll_id"));
    if (!poll_id || !eu_id_is_valid(poll_id)) {
        eu_job_done(job, NULL);
        return;
    }
    struct poll_update *u = eu_xcalloc(1, sizeof(*u));
    u->job = job;
    u->poll_id = eu_xstrdup(poll_id);
    u->base = eu_xasprintf("%s://%s", eu_job_app(job)->cfg->scheme, eu_job_tenant(job)->domain);
    const char *params[] = {poll_id};
    eu_job_stmt(job, &eu_ap_process_poll_sql[POLL_UPDATE_CONTEXT], 1, params, on_update_context, u);
}
