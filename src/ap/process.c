/*
 * The "ap_inbox" job: one received activity, already verified by the inbox
 * (its signature is the actor's, and the actor has a row), done as
 * Mastodon's ActivityPub::Activity classes do it. This file takes the job
 * apart, loads the actor, picks the handler by type, and holds what the
 * handlers share: statement steps, parsing on the CPU pool, and sending.
 *
 * Nothing here trusts the activity beyond its actor: each handler checks
 * that the actor owns what it acts on (its notes, its follows, itself), and
 * an activity that does not fit is dropped, not retried (a retry would not
 * change the answer). Only database failures retry the job. Work is bounded
 * by the parser's caps and by explicit caps here; no loop runs over
 * remote-controlled data without one.
 */
#include "process_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apinbox.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum { PROCESS_ACTOR, PROCESS_SEND };

const struct eu_sql eu_ap_process_sql[] = {
    /* The remote actor that sent the activity. */
    [PROCESS_ACTOR] = {"ap_process.actor",
                       "SELECT id::text, followers_url, coalesce(inbox_url, shared_inbox_url),"
                       " featured_url, suspended_at IS NOT NULL FROM accounts"
                       " WHERE tenant_id = $1 AND uri = $2 AND domain IS NOT NULL"},
    /* $2 payload, $3 dedupe key. The delivery helper's enqueue replaces it. */
    [PROCESS_SEND] = {"ap_process.send",
                      "INSERT INTO jobs (tenant_id, queue, kind, payload, dedupe_key)"
                      " VALUES ($1, 'deliver', 'ap_deliver', $2::jsonb, $3)"
                      " ON CONFLICT (tenant_id, dedupe_key) DO NOTHING"},
    {0},
};

/* ------------------------------------------------------------ the job */

void
eu_proc_finish(struct eu_proc *p, const char *error)
{
    struct eu_job *job = p->job;
    if (!error)
        eu_ap_inbox_job_ended(eu_job_payload(job));
    if (p->rows)
        PQclear(p->rows);
    eu_arena_free(p->arena);
    free(p);
    eu_job_done(job, error);
}

void
eu_proc_skip(struct eu_proc *p, const char *why)
{
    eu_log_debug("ap", "ignoring %s '%s' from '%s': %s", p->type ? p->type : "activity",
                 p->id ? p->id : "", p->actor_uri ? p->actor_uri : "", why);
    eu_proc_finish(p, NULL);
}

static void
on_stmt(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_proc *p = arg;
    if (st != EU_DB_OK) {
        char msg[400];
        snprintf(msg, sizeof(msg), "cannot process %s: %s", p->type,
                 res ? PQresultErrorMessage(res) : "database unavailable");
        eu_proc_finish(p, msg);
        return;
    }
    eu_proc_step_cb step = p->step;
    p->step = NULL;
    step(p, res);
}

void
eu_proc_stmt(struct eu_proc *p, const struct eu_sql *s, int n, const char *const *params,
             eu_proc_step_cb step)
{
    p->step = step;
    eu_db_conn_stmt(eu_job_conn(p->job), s, n, params, on_stmt, p);
}

void
eu_proc_keep(struct eu_proc *p, PGresult *res)
{
    if (p->rows)
        PQclear(p->rows);
    p->rows = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    p->row = 0;
    p->nrows = p->rows ? PQntuples(p->rows) : 0;
}

/* ------------------------------------------------------------ helpers */

const char *
eu_proc_json_id(json_t *v)
{
    if (json_is_object(v))
        v = json_object_get(v, "id");
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > EU_AP_MAX_URI ||
        strlen(json_string_value(v)) != json_string_length(v))
        return NULL;
    return json_string_value(v);
}

const char *
eu_proc_local_name(struct eu_proc *p, const char *uri)
{
    size_t n = strlen(p->base);
    if (!uri || strncmp(uri, p->base, n) != 0)
        return NULL;
    const char *s = uri + n;
    if (strncmp(s, "/users/", 7) == 0)
        s += 7;
    else if (strncmp(s, "/@", 2) == 0)
        s += 2;
    else
        return NULL;
    size_t len = strcspn(s, "/?#");
    if (len == 0 || len > 64 || s[len] != '\0')
        return NULL;
    return eu_arena_strndup(p->arena, s, len);
}

const char *
eu_proc_local_status_id(struct eu_proc *p, const char *uri)
{
    size_t n = strlen(p->base);
    if (!uri || strncmp(uri, p->base, n) != 0 || strncmp(uri + n, "/users/", 7) != 0)
        return NULL;
    const char *s = strstr(uri + n + 7, "/statuses/");
    if (!s)
        return NULL;
    s += strlen("/statuses/");
    size_t len = strspn(s, "0123456789");
    if (len == 0 || len > 18 || s[len] != '\0')
        return NULL;
    return eu_arena_strndup(p->arena, s, len);
}

const char *
eu_proc_local_uri(struct eu_proc *p, const char *name)
{
    return eu_arena_sprintf(p->arena, "%s/users/%s", p->base, name);
}

/* ------------------------------------------------------------ parsing */

/* The parsers sanitize HTML, up to ~200 ms on hostile input: they run on
 * the CPU pool. Only that thread touches p (its arena, the borrowed JSON)
 * until the done callback. */
static void
parse_note_work(void *arg)
{
    struct eu_proc *p = arg;
    p->parse_rc = eu_ap_note_parse(p->arena, p->object, p->actor_host, p->actor_followers, NULL,
                                   &p->note, &p->err);
}

static void
parse_actor_work(void *arg)
{
    struct eu_proc *p = arg;
    p->parse_rc =
        eu_ap_actor_parse(p->arena, p->object, p->actor_host, NULL, &p->parsed_actor, &p->err);
}

static void
parse_done(void *arg)
{
    struct eu_proc *p = arg;
    p->parsed(p);
}

void
eu_proc_parse_note(struct eu_proc *p, void (*then)(struct eu_proc *p))
{
    p->parsed = then;
    eu_cpupool_submit(p->app->cpu, parse_note_work, parse_done, p);
}

void
eu_proc_parse_actor(struct eu_proc *p, void (*then)(struct eu_proc *p))
{
    p->parsed = then;
    eu_cpupool_submit(p->app->cpu, parse_actor_work, parse_done, p);
}

/* ------------------------------------------------------------ sending */

static void
on_sent(struct eu_proc *p, PGresult *res)
{
    (void)res;
    /* The job is committed (one statement): the worker may take it now. */
    eu_queue_wake(p->t, EU_QUEUE_DELIVER, 0);
    void (*then)(struct eu_proc *) = p->sent;
    p->sent = NULL;
    then(p);
}

/*
 * Queues one "ap_deliver" job (src/ap/deliver.c) for a reply the inbox owes
 * (Accept, Reject, the Follows of a Move). Not eu_ap_deliver(): this one
 * keys the job by the activity's id, so a redelivered Follow queues no
 * second Accept, and continues the activity's processing once the row is
 * in.
 */
void
eu_ap_process_send(struct eu_proc *p, const char *inbox, json_t *activity, const char *actor_id,
                   const char *dedupe, void (*then)(struct eu_proc *p))
{
    if (!inbox) {
        json_decref(activity);
        then(p);
        return;
    }
    if (!json_object_get(activity, "@context"))
        json_object_set_new(activity, "@context",
                            json_string("https://www.w3.org/ns/activitystreams"));
    json_t *payload =
        json_pack("{s:s, s:o, s:s}", "inbox", inbox, "activity", activity, "actor_id", actor_id);
    char *text = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    const char *params[] = {eu_arena_strdup(p->arena, text), dedupe};
    free(text);
    p->sent = then;
    eu_proc_stmt(p, &eu_ap_process_sql[PROCESS_SEND], 2, params, on_sent);
}

/* ------------------------------------------------------------ dispatch */

static bool
is_type(const struct eu_proc *p, const char *t)
{
    return strcmp(p->type, t) == 0;
}

static void
dispatch(struct eu_proc *p)
{
    if (p->actor_suspended && !is_type(p, "Delete") && !is_type(p, "Undo")) {
        eu_proc_skip(p, "the actor is suspended");
        return;
    }
    if (is_type(p, "Follow"))
        eu_proc_follow(p);
    else if (is_type(p, "Accept"))
        eu_proc_accept(p);
    else if (is_type(p, "Reject"))
        eu_proc_reject(p);
    else if (is_type(p, "Undo"))
        eu_proc_undo(p);
    else if (is_type(p, "Block"))
        eu_proc_block(p);
    else if (is_type(p, "Move"))
        eu_proc_move(p);
    else if (is_type(p, "Create"))
        eu_proc_create(p);
    else if (is_type(p, "Update"))
        eu_proc_update(p);
    else if (is_type(p, "Delete"))
        eu_proc_delete(p);
    else if (is_type(p, "Like"))
        eu_proc_like(p);
    else if (is_type(p, "Announce"))
        eu_proc_announce(p);
    else if (is_type(p, "Flag"))
        eu_proc_flag(p);
    else if (is_type(p, "Add"))
        eu_proc_featured(p, true);
    else if (is_type(p, "Remove"))
        eu_proc_featured(p, false);
    else
        eu_proc_skip(p, "unknown type");
}

static const char *
col(struct eu_proc *p, PGresult *res, int c)
{
    return PQgetisnull(res, 0, c) ? NULL : eu_arena_strdup(p->arena, PQgetvalue(res, 0, c));
}

static void
on_actor(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) == 0) {
        eu_proc_skip(p, "unknown actor");
        return;
    }
    p->actor_id = col(p, res, 0);
    p->actor_followers = col(p, res, 1);
    p->actor_inbox = col(p, res, 2);
    p->actor_featured = col(p, res, 3);
    p->actor_suspended = PQgetvalue(res, 0, 4)[0] == 't';
    dispatch(p);
}

void
eu_ap_process_run(struct eu_job *job)
{
    struct eu_proc *p = eu_xcalloc(1, sizeof(*p));
    p->job = job;
    p->app = eu_job_app(job);
    p->t = eu_job_tenant(job);
    p->arena = eu_arena_new();
    p->base = eu_arena_sprintf(p->arena, "%s://%s", p->app->cfg->scheme, p->t->domain);

    json_t *payload = eu_job_payload(job);
    p->activity = json_object_get(payload, "activity");
    p->actor_uri = eu_proc_json_id(json_object_get(payload, "actor"));
    p->type = json_string_value(json_object_get(p->activity, "type"));
    if (!json_is_object(p->activity) || !p->type || !p->actor_uri) {
        eu_proc_skip(p, "not an activity with a type and an actor");
        return;
    }
    p->id = eu_proc_json_id(json_object_get(p->activity, "id"));
    /* The inbox verified who signed; the activity must claim the same. */
    const char *claimed = eu_proc_json_id(json_object_get(p->activity, "actor"));
    if (!claimed || strcmp(claimed, p->actor_uri) != 0) {
        eu_proc_skip(p, "its actor is not the signer");
        return;
    }
    p->actor_host = eu_ap_uri_host(p->arena, p->actor_uri);
    if (!p->actor_host) {
        eu_proc_skip(p, "the actor is not an http(s) URI");
        return;
    }
    p->object = json_object_get(p->activity, "object");
    p->object_id = eu_proc_json_id(p->object);
    if (json_is_object(p->object))
        p->object_type = json_string_value(json_object_get(p->object, "type"));
    const char *params[] = {p->actor_uri};
    eu_proc_stmt(p, &eu_ap_process_sql[PROCESS_ACTOR], 1, params, on_actor);
}
