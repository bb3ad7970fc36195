/*
 * The inboxes (include/eunha/apinbox.h). Everything that can refuse a
 * delivery cheaply runs first, on the loop: the signature's form, freshness
 * and digest (eu_httpsig_parse), the JSON, the recipient. Only then is the
 * key looked up (cache, rows, or a signed fetch) and the signature checked;
 * a failure refetches the key once, for a sender that rotated it. What is
 * accepted is queued for the inbox-processing job and answered 202, so the
 * sender never waits on processing.
 *
 * Linked-data signatures (a relayed activity signed by its author inside
 * the body) are not checked: an activity whose actor is not the signer is
 * refused (401), as Mastodon does when the LD signature is absent.
 */
#include "eunha/apinbox.h"

#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <hiredis/hiredis.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "eunha/ap.h"
#include "eunha/app.h"
#include "eunha/approcess.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/error.h"
#include "eunha/fetch.h"
#include "eunha/http.h"
#include "eunha/httpsig.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/redis.h"
#include "eunha/tenant.h"

enum {
    INBOX_RECIPIENT,
    INBOX_HOST_QUEUED,
};

const struct eu_sql eu_ap_inbox_sql[] = {
    /* $2 the username of an account inbox. */
    [INBOX_RECIPIENT] = {"ap_inbox.recipient",
                         "SELECT id, suspended_at IS NOT NULL FROM accounts"
                         " WHERE tenant_id = $1 AND lower(username) = lower($2)"
                         " AND coalesce(lower(domain), '') = ''"
                         " AND username <> 'instance.actor'"},
    /* $2 a sending host, $3 the cap: whether its ap_inbox jobs still
     * waiting reach the cap (counted no further than it; jobs_inbox_host). */
    [INBOX_HOST_QUEUED] = {"ap_inbox.host_queued",
                           "SELECT count(*) >= $3::int FROM (SELECT 1 FROM jobs"
                           " WHERE tenant_id = $1 AND kind = 'ap_inbox' AND state = 'ready'"
                           " AND payload ->> 'host' = $2 LIMIT $3::int) q"},
    {0},
};

/* ------------------------------------------------ per-tenant pending count */

#define PENDING_BUCKETS 256

/*
 * Deliveries of one tenant between their first check and their answer,
 * counted under a name: "" for those whose key is known
 * (EU_AP_INBOX_MAX_PENDING), "k" for those whose key is fetched, and
 * "k HOST" for those among them whose key is on HOST
 * (EU_AP_INBOX_MAX_KEY_FETCHES, _PER_HOST). A space is in no host.
 */
struct pending {
    int64_t tenant_id;
    int n;
    struct pending *next;
    char name[];
};

/* What a request took, given back when it ends. */
struct pending_hold {
    int64_t tenant_id;
    const char *name; /* in the request's arena */
};

static struct pending *pending[PENDING_BUCKETS];

static struct pending **
pending_slot(int64_t tenant_id, const char *name)
{
    uint32_t h = 2166136261u ^ (uint32_t)tenant_id; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    struct pending **p = &pending[h % PENDING_BUCKETS];
    while (*p && ((*p)->tenant_id != tenant_id || strcmp((*p)->name, name) != 0))
        p = &(*p)->next;
    return p;
}

/* Runs when the request ends, however it ended. */
static void
pending_release(void *arg)
{
    struct pending_hold *h = arg;
    struct pending **p = pending_slot(h->tenant_id, h->name);
    if (*p && --(*p)->n == 0) {
        struct pending *dead = *p;
        *p = dead->next;
        free(dead);
    }
}

/* Counts req against its tenant's count called name; false when that is
 * at cap. */
static bool
pending_take(struct eu_req *req, const char *name, int cap)
{
    struct pending **p = pending_slot(req->tenant->id, name);
    if (*p && (*p)->n >= cap)
        return false;
    if (!*p) {
        size_t len = strlen(name) + 1;
        *p = eu_xcalloc(1, sizeof(**p) + len);
        (*p)->tenant_id = req->tenant->id;
        memcpy((*p)->name, name, len);
    }
    (*p)->n++;
    struct pending_hold *h = eu_arena_alloc(req->arena, sizeof(*h));
    h->tenant_id = req->tenant->id;
    h->name = eu_arena_strdup(req->arena, name);
    eu_arena_on_free(req->arena, pending_release, h);
    return true;
}

/*
 * Takes the room a delivery signed with key_id needs while it is checked.
 * A key in the process's cache needs no fetch (a tenant that has no row
 * for its owner yet makes one from the cached document). Any other, even
 * one the tenant's rows hold, is counted as a fetch: telling the two apart
 * costs a query, and a known key is cached by its first delivery.
 */
static bool
pending_take_for_key(struct eu_req *req, const char *key_id)
{
    char host[300], name[310];
    if (eu_ap_key_is_cached(key_id) || eu_fetch_host_of(key_id, host, sizeof(host)) != 0 ||
        strcasecmp(host, req->tenant->domain) == 0)
        return pending_take(req, "", EU_AP_INBOX_MAX_PENDING);
    snprintf(name, sizeof(name), "k %s", host);
    /* The host's cap first: what it refuses takes nothing from the total. */
    return pending_take(req, name, EU_AP_INBOX_MAX_KEY_FETCHES_PER_HOST) &&
           pending_take(req, "k", EU_AP_INBOX_MAX_KEY_FETCHES);
}

/* ----------------------------------------- per-host count, whole process */

/*
 * The process-wide cap ([federation] inbox_max_queued_per_host_process):
 * activities from each sending host this process accepted, for any tenant,
 * and has not seen processed. Kept in memory so the check costs no query
 * across placements. Each job carries the window it was counted in ("cw")
 * and this process's run ("cr"); its end here, done for good, takes it off
 * that window (eu_ap_inbox_job_ended). An end never seen here (a crash or
 * restart, another process sharing the placement took the job, retries
 * ran out) stays counted only until its window passes the horizon, so the
 * count heals by itself, erring toward accepting. The per-tenant cap,
 * counted in the database, holds meanwhile.
 */
#define HOST_WINDOW_S 600 /* ten minutes a window */
#define HOST_WINDOWS 6    /* an hour remembered */
#define HOST_BUCKETS 1024

struct host_count {
    struct host_count *next;
    int64_t window[HOST_WINDOWS]; /* the window number each slot counts */
    int n[HOST_WINDOWS];
    char host[];
};

static struct host_count *host_counts[HOST_BUCKETS];
static int64_t run_id;

static int64_t
window_now(void)
{
    return (int64_t)(time(NULL) / HOST_WINDOW_S);
}

/* Jobs of an earlier run of the process must not take from this run's
 * counts: the run is when it started and its pid. */
static int64_t
this_run(void)
{
    if (!run_id)
        run_id = ((int64_t)time(NULL) << 22) ^ (int64_t)getpid();
    return run_id;
}

static struct host_count **
host_slot(const char *host)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = host; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    struct host_count **p = &host_counts[h % HOST_BUCKETS];
    while (*p && strcmp((*p)->host, host) != 0)
        p = &(*p)->next;
    return p;
}

static int
host_total(const struct host_count *hc, int64_t now)
{
    int total = 0;
    for (int i = 0; i < HOST_WINDOWS; i++)
        if (hc->window[i] > now - HOST_WINDOWS)
            total += hc->n[i];
    return total;
}

/* The count of host, freeing its entry once nothing is counted. */
static int
host_count_of(const char *host)
{
    struct host_count **p = host_slot(host);
    if (!*p)
        return 0;
    int total = host_total(*p, window_now());
    if (total == 0) {
        struct host_count *dead = *p;
        *p = dead->next;
        free(dead);
    }
    return total;
}

/* Counts one more job from host; returns the window it went into. */
static int64_t
host_count_add(const char *host)
{
    int64_t now = window_now();
    struct host_count **p = host_slot(host);
    if (!*p) {
        size_t len = strlen(host) + 1;
        *p = eu_xcalloc(1, sizeof(**p) + len);
        memcpy((*p)->host, host, len);
    }
    int slot = (int)(now % HOST_WINDOWS);
    if ((*p)->window[slot] != now) {
        (*p)->window[slot] = now;
        (*p)->n[slot] = 0;
    }
    (*p)->n[slot]++;
    return now;
}

/* Takes one job off window w of host, if that window is still counted. */
static void
host_count_drop(const char *host, int64_t w)
{
    struct host_count **p = host_slot(host);
    if (!*p || w < 0)
        return;
    int slot = (int)(w % HOST_WINDOWS);
    if ((*p)->window[slot] == w && (*p)->n[slot] > 0)
        (*p)->n[slot]--;
    host_count_of(host);
}

void
eu_ap_inbox_job_ended(json_t *payload)
{
    const char *host = json_string_value(json_object_get(payload, "host"));
    json_t *run = json_object_get(payload, "cr");
    if (!host || !json_is_integer(run) || json_integer_value(run) != this_run())
        return;
    host_count_drop(host, json_integer_value(json_object_get(payload, "cw")));
}

/* ------------------------------------------------------------ delivery */

struct delivery {
    struct eu_req *req;
    struct eu_httpsig *sig;
    json_t *activity;  /* the body, owned by the request */
    const char *actor; /* the activity's actor URI */
    const char *recipient;
    /* The activity's name for dedupe (see seen_key), or NULL when it has
     * no id: "ap_inbox:" and a hash of actor and id. */
    const char *dedupe;
    const char *host; /* counted for the process-wide cap, or NULL */
    int64_t window;   /* the window it was counted in */
};

static void
decref_json(void *p)
{
    json_decref(p);
}

static void
free_sig(void *p)
{
    eu_httpsig_free(p);
}

/* ------------------------------------------------------------ dedupe */

/*
 * One post or boost often arrives many times at one tenant: a sender delivers a
 * Create or an Announce to the personal inbox of each of its local recipients
 * that shares no inbox, or to the shared inbox and to personal ones, and
 * retries what timed out. Processing never depended on which inbox took
 * it, so only the first is worth a job: the rest would each refetch what
 * the first fetched and fan out again. An activity is known by its actor
 * and its id (an id alone could be claimed by another actor to have the
 * real one dropped); while its job waits or runs, the job's dedupe key
 * stops a second one, and for SEEN_TTL_S after it was queued a Redis mark
 * answers a repeat 202 before its signature is even checked. A repeat that
 * forges the sender gains nothing: it is answered and dropped, and the
 * real activity was already taken. Without Redis every delivery is
 * checked and queued as before, deduped only against jobs still queued.
 */
#define SEEN_TTL_S "21600" /* six hours: past a sender's quick retries */

/* Tenant t's Redis key for the activity whose dedupe_hash() is hex, in buf. */
static void
seen_key_of(const struct eu_tenant *t, const char *hex, char *buf, size_t len)
{
    snprintf(buf, len, "%sap:seen:%s", t->key_prefix, hex);
}

/* The key of d's activity, in buf. */
static void
seen_key(const struct delivery *d, char *buf, size_t len)
{
    seen_key_of(d->req->tenant, d->dedupe + sizeof("ap_inbox:") - 1, buf, len);
}

/* The hex SHA-256 of actor, a newline and id, in hex (65 bytes with its
 * NUL); false when the activity has no id or is not a Create or an
 * Announce. Only those two: they are what a big account sends to many
 * inboxes at once, and the same id means the same post or boost for good.
 * Other ids may come back meaning something new: eunha's own Follow and
 * Like ids are the actor's and the target's, so a follow, unfollow and
 * follow again within the hours of the mark sends one id twice, with an
 * Undo between that must not leave the second one dropped. */
static bool
dedupe_hash(const char *actor, json_t *activity, char hex[65])
{
    const char *id = json_string_value(json_object_get(activity, "id"));
    const char *type = json_string_value(json_object_get(activity, "type"));
    if (!actor || !id || !*id || !type ||
        (strcmp(type, "Create") != 0 && strcmp(type, "Announce") != 0))
        return false;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned char md[32];
    unsigned int n = 0;
    bool ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 &&
              EVP_DigestUpdate(c, actor, strlen(actor)) == 1 && EVP_DigestUpdate(c, "\n", 1) == 1 &&
              EVP_DigestUpdate(c, id, strlen(id)) == 1 && EVP_DigestFinal_ex(c, md, &n) == 1 &&
              n == sizeof(md);
    EVP_MD_CTX_free(c);
    if (!ok)
        return false;
    for (size_t i = 0; i < sizeof(md); i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return true;
}

/* "ap_inbox:" and dedupe_hash(), in the request's arena; NULL when there
 * is none. */
static const char *
dedupe_name(struct eu_req *req, const char *actor, json_t *activity)
{
    char hex[65];
    if (!dedupe_hash(actor, activity, hex))
        return NULL;
    return eu_arena_sprintf(req->arena, "ap_inbox:%s", hex);
}

void
eu_ap_inbox_job_dead(struct eu_app *app, struct eu_tenant *t, json_t *payload)
{
    char hex[65];
    if (!dedupe_hash(json_string_value(json_object_get(payload, "actor")),
                     json_object_get(payload, "activity"), hex))
        return;
    char key[EU_TENANT_KEY_PREFIX_SIZE + 96];
    seen_key_of(t, hex, key, sizeof(key));
    const char *argv[] = {"DEL", key};
    eu_redis_command(eu_tenant_redis(app, t), NULL, NULL, 2, argv, NULL);
}

/* Marks the activity taken for SEEN_TTL_S; nobody waits for the answer. */
static void
mark_seen(struct delivery *d)
{
    char key[EU_TENANT_KEY_PREFIX_SIZE + 96];
    seen_key(d, key, sizeof(key));
    const char *argv[] = {"SET", key, "1", "EX", SEEN_TTL_S};
    eu_redis_command(eu_tenant_redis(d->req->app, d->req->tenant), NULL, NULL, 5, argv, NULL);
}

static void
on_enqueued(const char *job_id, int status, void *arg)
{
    struct delivery *d = arg;
    struct eu_req *req = d->req;
    eu_req_enter(req);
    if (!job_id || status != EU_DB_OK) {
        if (d->host)
            host_count_drop(d->host, d->window);
        eu_req_reply_db_error(req, status != EU_DB_OK ? (enum eu_db_status)status : EU_DB_ERROR);
        return;
    }
    /* "": the same activity's job is still waiting or running, so this
     * one is not counted against its host either. */
    if (!job_id[0] && d->host)
        host_count_drop(d->host, d->window);
    if (d->dedupe)
        mark_seen(d);
    eu_req_reply_raw(req, 202, "text/plain", "", 0);
}

static void
accept_delivery(struct delivery *d, const char *owner)
{
    struct eu_req *req = d->req;
    char host[300];
    if (eu_fetch_host_of(owner, host, sizeof(host)) == 0)
        eu_fetch_host_seen(req->app->fetch, host);
    else
        host[0] = '\0';
    /* "host" is what the per-host caps count (on_host_queued); "cw" and
     * "cr" say where the process-wide count has it. */
    if (host[0]) {
        d->host = eu_arena_strdup(req->arena, host);
        d->window = host_count_add(host);
    }
    json_t *payload = json_pack("{s:O, s:s, s:s?, s:s, s:I, s:I}", "activity", d->activity, "actor",
                                owner, "recipient", d->recipient, "host", host, "cw",
                                (json_int_t)d->window, "cr", (json_int_t)this_run());
    char *text = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    eu_queue_enqueue(req->app, req->tenant, "ap_inbox", text, 0, d->dedupe, on_enqueued, d);
    free(text);
    /* FEP-8fcf: its own job, checked after the activity (followers_sync.c). */
    eu_ap_followers_sync_received(req->app, req->tenant, owner,
                                  eu_req_header(req, "Collection-Synchronization"));
}

static void
on_verified(struct eu_req *req, const char *owner, void *arg)
{
    struct delivery *d = arg;
    if (strcmp(owner, d->actor) != 0) {
        eu_req_reply_error(req, 401, "The signature's key does not belong to the activity's actor");
        return;
    }
    accept_delivery(d, owner);
}

/*
 * The per-sending-host cap: one peer's backlog of unprocessed activities
 * for this tenant is bounded ([federation] inbox_max_queued_per_host), so a
 * noisy peer cannot fill the queue the others share. Checked before the
 * signature (no RSA spent on what would be refused) on the actor's host,
 * which verification then holds to the key's owner; past the cap 429 with
 * Retry-After, which Mastodon-shaped peers retry, and nothing stored. Two
 * deliveries racing past the check may go one over; the cap is a bound on
 * the backlog, not an exact count.
 */
static void
on_host_queued(struct eu_req *req, PGresult *res, void *arg)
{
    struct delivery *d = arg;
    if (PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't') {
        /* debug: a flooding peer would otherwise flood the log as well */
        eu_log_debug("ap", "inbox backlog of '%s' at its cap: refused", d->actor);
        eu_req_add_header(req, "Retry-After", "60");
        eu_req_reply_error(req, 429, "Too many activities from your server are waiting here");
        return;
    }
    eu_ap_verify_signature(req, d->sig, on_verified, d);
}

static void
verify(struct delivery *d)
{
    char host[300], cap[16];
    if (eu_fetch_host_of(d->actor, host, sizeof(host)) != 0) {
        eu_req_reply_error(d->req, 400, "The actor is not a URL");
        return;
    }
    /* The process-wide cap first: it costs no query. */
    if (host_count_of(host) >= d->req->app->cfg->fed_inbox_max_queued_per_host_process) {
        eu_log_debug("ap", "inbox backlog of '%s' at the process's cap: refused", host);
        eu_req_add_header(d->req, "Retry-After", "60");
        eu_req_reply_error(d->req, 429, "Too many activities from your server are waiting here");
        return;
    }
    snprintf(cap, sizeof(cap), "%d", d->req->app->cfg->fed_inbox_max_queued_per_host);
    const char *p[] = {eu_arena_strdup(d->req->arena, host), cap};
    eu_req_stmt(d->req, &eu_ap_inbox_sql[INBOX_HOST_QUEUED], 2, p, on_host_queued, d);
}

static void
on_seen(struct redisReply *reply, void *arg)
{
    struct delivery *d = arg;
    eu_req_enter(d->req);
    if (reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1) {
        eu_log_debug("ap", "activity from '%s' already taken: not queued again", d->actor);
        eu_req_reply_raw(d->req, 202, "text/plain", "", 0);
        return;
    }
    verify(d);
}

/* A repeat of an activity already taken is answered without its
 * signature's check; anything else goes on to verify(). */
static void
check_seen(struct delivery *d)
{
    d->dedupe = dedupe_name(d->req, d->actor, d->activity);
    if (!d->dedupe) {
        verify(d);
        return;
    }
    char key[EU_TENANT_KEY_PREFIX_SIZE + 96];
    seen_key(d, key, sizeof(key));
    const char *argv[] = {"EXISTS", key};
    eu_redis_command(eu_tenant_redis(d->req->app, d->req->tenant), on_seen, d, 2, argv, NULL);
}

static void
on_recipient(struct eu_req *req, PGresult *res, void *arg)
{
    struct delivery *d = arg;
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    /* A suspended account still takes deliveries, as Mastodon's inbox does
     * until the account is deleted: an Undo or a Delete must still land
     * if the suspension is lifted. What it may not receive (a Follow) the
     * processing refuses. */
    d->recipient = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 0));
    check_seen(d);
}

static void
inbox_post(struct eu_req *req, const char *username)
{
    size_t len = 0;
    eu_req_body(req, &len);
    if (len > EU_AP_INBOX_MAX_BODY) {
        eu_req_reply_error(req, 413, "The request body is larger than %d bytes",
                           EU_AP_INBOX_MAX_BODY);
        return;
    }
    struct eu_httpsig_request hr;
    if (!eu_ap_request_for_signature(req, "POST", &hr)) {
        eu_req_reply_error(req, 401, "Request not signed");
        return;
    }
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result r = eu_httpsig_parse(&hr, time(NULL), &sig);
    if (r != EU_HTTPSIG_OK) {
        eu_req_reply_error(req, 401, "%s",
                           r == EU_HTTPSIG_NONE ? "Request not signed" : eu_httpsig_result_str(r));
        return;
    }
    eu_arena_on_free(req->arena, free_sig, sig);
    /* Not eu_req_json(): its caps are for API parameters, and a Note
     * addressed to many or carrying many tags is a legitimate activity. */
    const char *body = eu_req_body(req, &len);
    json_t *activity = json_loadb(body, len, 0, NULL);
    if (!json_is_object(activity)) {
        json_decref(activity);
        eu_req_reply_error(req, 400, "The body is not a JSON object");
        return;
    }
    eu_arena_on_free(req->arena, decref_json, activity);
    json_t *actor = json_object_get(activity, "actor");
    if (json_is_object(actor))
        actor = json_object_get(actor, "id");
    if (!json_is_string(json_object_get(activity, "type")) || !json_is_string(actor)) {
        eu_req_reply_error(req, 400, "An activity needs a type and an actor");
        return;
    }
    if (!pending_take_for_key(req, eu_httpsig_key_id(sig))) {
        eu_req_add_header(req, "Retry-After", "10");
        eu_req_reply_error(req, 503, "Too many deliveries in progress; try again shortly");
        return;
    }
    struct delivery *d = eu_arena_calloc(req->arena, sizeof(*d));
    d->req = req;
    d->sig = sig;
    d->activity = activity;
    d->actor = json_string_value(actor);
    if (!username) {
        check_seen(d);
        return;
    }
    const char *p[] = {username};
    eu_req_stmt(req, &eu_ap_inbox_sql[INBOX_RECIPIENT], 1, p, on_recipient, d);
}

static void
shared_inbox(struct eu_req *req)
{
    inbox_post(req, NULL);
}

static void
account_inbox(struct eu_req *req)
{
    inbox_post(req, eu_req_param(req, "username"));
}

const struct eu_route eu_ap_inbox_routes[] = {
    {EU_HTTP_POST, "/inbox", shared_inbox, NULL, 0},
    {EU_HTTP_POST, "/users/:username/inbox", account_inbox, NULL, 0},
    /* The instance actor's inbox is the shared inbox by another name. */
    {EU_HTTP_POST, "/actor/inbox", shared_inbox, NULL, 0},
    {0},
};
