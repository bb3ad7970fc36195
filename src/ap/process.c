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
#include "eunha/fetch.h"
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

static void
proc_free(struct eu_proc *p)
{
    if (p->conn)
        eu_db_conn_release(p->conn);
    if (p->rows)
        PQclear(p->rows);
    eu_arena_free(p->arena);
    free(p);
}

void
eu_proc_finish(struct eu_proc *p, const char *error)
{
    struct eu_job *job = p->job;
    if (!error)
        eu_ap_inbox_job_ended(eu_job_payload(job));
    else if (eu_job_attempt(job) >= p->app->cfg->job_max_attempts)
        eu_ap_inbox_job_dead(p->app, p->t, eu_job_payload(job));
    proc_free(p);
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

struct eu_db_conn *
eu_proc_conn(struct eu_proc *p)
{
    return p->conn ? p->conn : eu_job_conn(p->job);
}

static void
on_proc_conn(struct eu_db_conn *conn, enum eu_db_status st, void *arg)
{
    struct eu_proc *p = arg;
    if (!conn) {
        eu_proc_finish(p, st == EU_DB_TIMEOUT ? "no connection: timeout"
                                              : "no connection: database unavailable");
        return;
    }
    p->conn = conn;
    void (*then)(struct eu_proc *) = p->wait_then;
    p->wait_then = NULL;
    then(p);
}

void
eu_proc_with_conn(struct eu_proc *p, void (*then)(struct eu_proc *p))
{
    if (eu_proc_conn(p)) {
        then(p);
        return;
    }
    p->wait_then = then;
    eu_db_pool_acquire(eu_tenant_pool(p->app->registry, p->t), on_proc_conn, p);
}

static void
run_waiting_stmt(struct eu_proc *p)
{
    const struct eu_sql *s = p->wait_sql;
    p->wait_sql = NULL;
    eu_db_conn_stmt(p->conn, s, p->wait_n, p->wait_params, on_stmt, p);
}

void
eu_proc_stmt(struct eu_proc *p, const struct eu_sql *s, int n, const char *const *params,
             eu_proc_step_cb step)
{
    p->step = step;
    struct eu_db_conn *conn = eu_proc_conn(p);
    if (conn) {
        eu_db_conn_stmt(conn, s, n, params, on_stmt, p);
        return;
    }
    /* Detached: the parameters (often the caller's locals) outlive this
     * call while a connection is found. */
    p->wait_sql = s;
    p->wait_n = n;
    p->wait_params = eu_arena_alloc(p->arena, sizeof(*p->wait_params) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        p->wait_params[i] = params[i] ? eu_arena_strdup(p->arena, params[i]) : NULL;
    eu_proc_with_conn(p, run_waiting_stmt);
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

/* ------------------------------------------------------ remote waits */

/*
 * Jobs of each tenant waiting on each remote host, in this process
 * (EU_PROC_MAX_WAITS_PER_HOST). In memory: a wait lives no longer than
 * the process, and the count must cost nothing to check.
 */
#define WAIT_BUCKETS 256

struct host_wait {
    struct host_wait *next;
    int64_t tenant_id;
    int n;
    char host[];
};

static struct host_wait *host_waits[WAIT_BUCKETS];

static struct host_wait **
wait_slot(int64_t tenant_id, const char *host)
{
    uint32_t h = 2166136261u ^ (uint32_t)tenant_id; /* FNV-1a */
    for (const char *c = host; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    struct host_wait **w = &host_waits[h % WAIT_BUCKETS];
    while (*w && ((*w)->tenant_id != tenant_id || strcmp((*w)->host, host) != 0))
        w = &(*w)->next;
    return w;
}

static int
wait_count(int64_t tenant_id, const char *host)
{
    struct host_wait *w = *wait_slot(tenant_id, host);
    return w ? w->n : 0;
}

static void
wait_add(int64_t tenant_id, const char *host)
{
    struct host_wait **w = wait_slot(tenant_id, host);
    if (!*w) {
        size_t len = strlen(host) + 1;
        *w = eu_xcalloc(1, sizeof(**w) + len);
        (*w)->tenant_id = tenant_id;
        memcpy((*w)->host, host, len);
    }
    (*w)->n++;
}

static void
wait_drop(int64_t tenant_id, const char *host)
{
    struct host_wait **w = wait_slot(tenant_id, host);
    if (*w && --(*w)->n == 0) {
        struct host_wait *dead = *w;
        *w = dead->next;
        free(dead);
    }
}

/* Runs the job again later: no room to wait now. Frees p. */
static void
proc_defer(struct eu_proc *p, const char *why)
{
    struct eu_job *job = p->job;
    eu_log_debug("ap", "putting off %s '%s': %s", p->type, p->id ? p->id : "", why);
    proc_free(p);
    eu_job_retry_in(job, why, EU_PROC_DEFER_S, false);
}

/* Takes p off its turn and its connection before a wait on url's host;
 * false when p was put off (and freed) instead. */
static bool
wait_begin(struct eu_proc *p, const char *url)
{
    if (eu_fetch_host_of(url, p->wait_host, sizeof(p->wait_host)) < 0)
        p->wait_host[0] = '\0'; /* the fetch refuses it at once */
    if (p->wait_host[0]) {
        if (wait_count(p->t->id, p->wait_host) >= EU_PROC_MAX_WAITS_PER_HOST) {
            proc_defer(p, "too many fetches from this host in progress");
            return false;
        }
        /* Counted before detaching: eu_job_detach() runs the turn's next
         * jobs, which check the same count. */
        wait_add(p->t->id, p->wait_host);
    }
    if (!eu_job_detach(p->job)) {
        if (p->wait_host[0])
            wait_drop(p->t->id, p->wait_host);
        proc_defer(p, "too many jobs waiting on remote servers");
        return false;
    }
    if (p->conn) {
        /* Between steps, outside any transaction: taken again afterwards. */
        eu_db_conn_release(p->conn);
        p->conn = NULL;
    }
    return true;
}

static void
wait_end(struct eu_proc *p)
{
    if (p->wait_host[0])
        wait_drop(p->t->id, p->wait_host);
    p->wait_host[0] = '\0';
}

static void
on_proc_fetched(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct eu_proc *p = arg;
    wait_end(p);
    p->fetched(doc, final_url, err, p);
}

void
eu_proc_fetch_signed(struct eu_proc *p, const char *url, eu_ap_fetch_cb cb)
{
    if (!wait_begin(p, url))
        return;
    p->fetched = cb;
    /* One request's time for the whole, redirects and retries included:
     * a host that answers slowly holds its per-host room no longer. */
    eu_ap_fetch_signed_within(p->app, p->t, url, p->app->cfg->fed_request_timeout_s,
                              on_proc_fetched, p);
}

static void
on_proc_resolved(const struct eu_ap_resolved *r, const struct eu_error *err, void *arg)
{
    struct eu_proc *p = arg;
    wait_end(p);
    p->resolved(r, err, p);
}

void
eu_proc_resolve_actor(struct eu_proc *p, const char *uri, bool refresh, eu_ap_actor_cb cb)
{
    if (!wait_begin(p, uri))
        return;
    p->resolved = cb;
    if (refresh)
        eu_ap_resolve_actor_refresh(p->app, p->t, uri, on_proc_resolved, p);
    else
        eu_ap_resolve_actor(p->app, p->t, uri, on_proc_resolved, p);
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
    else if (is_type(p, "QuoteRequest"))
        eu_proc_quote_request(p);
    else if (is_type(p, "Accept") && eu_proc_is_quote_answer(p))
        eu_proc_quote_answer(p, true);
    else if (is_type(p, "Reject") && eu_proc_is_quote_answer(p))
        eu_proc_quote_answer(p, false);
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
    else if (is_type(p, "Delete") && eu_proc_is_quote_revoke(p))
        eu_proc_quote_revoke(p);
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
