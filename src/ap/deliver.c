/*
 * Delivery of activities to remote inboxes: the "ap_deliver" job and the
 * statement that fans an activity out into one such job per inbox (the
 * contract is in include/eunha/apdeliver.h).
 *
 * A run: read the signer's key and the tenant's word on the inbox's host
 * (one statement on the job's connection: a suspended domain is dropped,
 * a host that refused the tenant recently is held back), sign on the CPU
 * pool, POST through the fetch client, then finish the job by what the
 * answer means. The job's tenant turn holds the tenant and its
 * connection until the job ends, so nothing here outlives them; a run
 * lives in one heap struct freed just before the job ends.
 *
 * What one activity to many inboxes shares is done once (issue 33): the
 * signer's key is parsed from its PEM once and kept (OpenSSL 3's decoder
 * costs more than the signature), and the body's digest is computed once
 * per activity; each (activity, inbox) still gets its own signature, since
 * the signed string names the inbox.
 *
 * Which signature form a host takes is remembered for the whole process
 * (sigform_internal.h): draft-cavage unless the host is known to take RFC
 * 9421; a 401 or 400 to RFC 9421 signs draft-cavage at once, and a 401 to
 * draft-cavage tries RFC 9421 once.
 */
#include "eunha/apdeliver.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/db.h"
#include "eunha/domainblock.h"
#include "eunha/fetch.h"
#include "eunha/httpsig.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "followers_sync_internal.h"
#include "sigform_internal.h"

/* Answers read from an inbox: a status is all that matters. */
#define RESPONSE_MAX 16384
/* When the signer has no key yet (the account_keys job makes it). */
#define NO_KEY_RETRY_S 60
/* Signers whose parsed key is kept, and activities whose digest is: slots
 * of a direct-mapped table (a collision replaces), enough for the signers
 * and activities in flight at once. */
#define KEY_SLOTS 256
#define DIGEST_SLOTS 64
/* The signer statement's answer, kept per signer and per inbox host for
 * this long (direct-mapped tables, as above): a burst to many inboxes asks
 * once per signer and host. A domain block or allow changed in this
 * process drops the hosts' at once (eu_domain_policy_generation()); one
 * changed by another process, or limited-federation mode switched,
 * counts after at most this. Keys are only ever set where there was none
 * (account_keys.c), so a kept key never goes stale. */
#define SIGNER_KEEP_MS 3000
#define SIGNER_SLOTS 256
#define HOST_SLOTS 1024

enum {
    DELIVER_ENQUEUE,
    DELIVER_SIGNER,
    DELIVER_REFUSED,
    DELIVER_HELD,
    DELIVER_FORGIVEN,
};

/* Whether the tenant refuses the inbox host $3 (include/eunha/domainblock.h). */
#define HOST_REFUSED EU_DOMAIN_REFUSED("$3")

const struct eu_sql eu_ap_deliver_sql[] = {
    /*
     * The fan-out: $2 the signing actor, $3 the activity, $4 to its
     * followers, $5 a status whose mentioned accounts get it, $6 one account
     * (its own inbox), $7 one inbox URL, $8 a poll whose remote voters get
     * it, $9 the followers' inboxes when the caller knows them (a post's
     * kept audience, include/eunha/audience.h). A follower's shared inbox
     * stands for its own, and UNION merges
     * duplicates, so a server with thousands of followers gets one job.
     * Only remote followers' rows are read (follows.local, migration
     * 0074): local ones, however many, cost the fan-out nothing here.
     * Returns how many jobs were made.
     */
    [DELIVER_ENQUEUE] =
        {"ap_deliver.enqueue",
         "WITH i AS ("
         " SELECT coalesce(a.shared_inbox_url, a.inbox_url) AS inbox FROM follows f"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = f.account_id"
         "  WHERE f.tenant_id = $1 AND f.target_account_id = $2::bigint AND $4::bool"
         "  AND NOT f.local AND a.domain IS NOT NULL AND a.suspended_at IS NULL"
         " UNION SELECT coalesce(a.shared_inbox_url, a.inbox_url) FROM mentions m"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = m.account_id"
         "  WHERE m.tenant_id = $1 AND m.status_id = $5::bigint"
         "  AND a.domain IS NOT NULL AND a.suspended_at IS NULL"
         " UNION SELECT a.inbox_url FROM accounts a WHERE a.tenant_id = $1"
         "  AND a.id = $6::bigint AND a.domain IS NOT NULL"
         " UNION SELECT $7::text WHERE $7::text IS NOT NULL"
         " UNION SELECT unnest($9::text[])"
         " UNION SELECT coalesce(a.shared_inbox_url, a.inbox_url) FROM poll_votes pv"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = pv.account_id"
         "  WHERE pv.tenant_id = $1 AND pv.poll_id = $8::bigint"
         "  AND a.domain IS NOT NULL AND a.suspended_at IS NULL),"
         " j AS (INSERT INTO jobs (tenant_id, queue, kind, payload)"
         "  SELECT $1, 'deliver', 'ap_deliver', jsonb_build_object('inbox', i.inbox,"
         "  'actor_id', $2::text, 'activity', $3::jsonb) FROM i"
         "  WHERE i.inbox IS NOT NULL AND i.inbox <> '' RETURNING 1)"
         " SELECT count(*) FROM j"},
    /* The signer: a local account with its key; and what the tenant knows
     * of the inbox's host $3: whether it refuses it (suspended it or a
     * domain above it, or did not allow it in limited-federation mode:
     * EU_DOMAIN_REFUSED), and whether the host refused it recently
     * (true), long ago (false: worth a try) or never (NULL). */
    [DELIVER_SIGNER] = {"ap_deliver.signer",
                        "SELECT a.username, a.private_key,"
                        " " HOST_REFUSED ","
                        " (SELECT r.last_at > now() - eunha_refusal_hold()"
                        "  FROM delivery_refusals r WHERE r.tenant_id = $1 AND r.host = $3)"
                        " FROM accounts a WHERE a.tenant_id = $1 AND a.id = $2::bigint"
                        " AND a.domain IS NULL"},
    /* $2 host, $3 status. */
    [DELIVER_REFUSED] = {"ap_deliver.refused",
                         "INSERT INTO delivery_refusals AS r (tenant_id, host, status)"
                         " VALUES ($1, $2, $3::smallint)"
                         " ON CONFLICT (tenant_id, host) DO UPDATE SET status = EXCLUDED.status,"
                         " refusals = r.refusals + 1, last_at = now()"},
    /* $2 host: a delivery held back by a recent refusal. */
    [DELIVER_HELD] = {"ap_deliver.held",
                      "UPDATE delivery_refusals SET skipped = skipped + 1, last_skipped_at = now()"
                      " WHERE tenant_id = $1 AND host = $2"},
    /* $2 host: it took a delivery again, so its refusal is over. */
    [DELIVER_FORGIVEN] = {"ap_deliver.forgiven",
                          "DELETE FROM delivery_refusals WHERE tenant_id = $1 AND host = $2"},
    {0},
};

/* ---------------------------------------------------------- enqueueing */

struct enqueue {
    struct eu_tenant *t; /* a reference */
};

static void
on_enqueued(PGresult *res, enum eu_db_status st, void *arg)
{
    struct enqueue *e = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("ap", "cannot queue deliveries: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
    } else if (PQntuples(res) == 1 && atoll(PQgetvalue(res, 0, 0)) > 0 && !e->t->removed) {
        eu_log_debug("ap", "queued %s deliveries", PQgetvalue(res, 0, 0));
        eu_queue_wake(e->t, EU_QUEUE_DELIVER, 0);
    }
    eu_tenant_unref(e->t);
    free(e);
}

int
eu_ap_deliver(struct eu_app *app, struct eu_tenant *t, struct eu_db_conn *conn, int64_t actor_id,
              json_t *activity, const struct eu_ap_audience *to)
{
    if (actor_id <= 0 || !json_is_object(activity)) {
        json_decref(activity);
        return -1;
    }
    char *text = json_dumps(activity, JSON_COMPACT);
    json_decref(activity);
    char actor[24];
    snprintf(actor, sizeof(actor), "%lld", (long long)actor_id);
    const char *params[] = {actor,
                            text,
                            to->followers ? "true" : "false",
                            to->mentioned_in,
                            to->account,
                            to->inbox,
                            to->voters_of,
                            to->follower_inboxes};
    struct enqueue *e = eu_xcalloc(1, sizeof(*e));
    eu_tenant_ref(t);
    e->t = t;
    const struct eu_sql *s = &eu_ap_deliver_sql[DELIVER_ENQUEUE];
    if (conn)
        eu_db_conn_stmt(conn, s, 8, params, on_enqueued, e);
    else
        eu_db_pool_stmt(eu_tenant_pool(app->registry, t), s, 8, params, on_enqueued, e);
    free(text);
    return 0;
}

int
eu_ap_deliver_to_followers(struct eu_app *app, struct eu_tenant *t, int64_t actor_id,
                           json_t *activity, const char *mentioned_in)
{
    struct eu_ap_audience to = {.followers = true, .mentioned_in = mentioned_in};
    return eu_ap_deliver(app, t, NULL, actor_id, activity, &to);
}

int
eu_ap_deliver_to_inbox(struct eu_app *app, struct eu_tenant *t, int64_t actor_id, json_t *activity,
                       const char *inbox)
{
    struct eu_ap_audience to = {.inbox = inbox};
    return eu_ap_deliver(app, t, NULL, actor_id, activity, &to);
}

/* ------------------------------------------------- what runs share */

/* Touched on the event loop only; a key lent to a signing on the pool is
 * its own reference (EVP_PKEY_up_ref), so eviction never frees it there. */
static struct eu_ap_deliver_stats stats;

struct run;

/* A signer's parsed key, found by tenant and account and valid while the
 * PEM read from its row hashes the same (a rotated key parses again). While
 * one run parses it on the pool, the signer's other runs wait here for it
 * rather than parse it again. */
struct key_slot {
    int64_t tenant;
    char actor[24];
    unsigned char pem_hash[16];
    EVP_PKEY *key;
    bool parsing;        /* a run is parsing it (run.parser) */
    struct run *waiters; /* runs of the same signer waiting for that, oldest first */
    struct run *waiters_tail;
};
static struct key_slot keys[KEY_SLOTS];

/* A signer's username and PEM, as the signer statement answered. */
struct signer_slot {
    int64_t tenant;
    char actor[24];
    char *username, *pem; /* NULL: empty slot */
    int64_t until_ms;
};
static struct signer_slot signers[SIGNER_SLOTS];

/* What the signer statement said of an inbox host for a tenant. */
enum host_refusal { HR_NEVER, HR_LONG_AGO, HR_RECENT };
struct host_slot {
    int64_t tenant; /* 0: empty slot */
    char host[300];
    bool refused; /* EU_DOMAIN_REFUSED */
    enum host_refusal refusal;
    unsigned generation; /* eu_domain_policy_generation() when read */
    int64_t until_ms;
};
static struct host_slot hosts[HOST_SLOTS];

/* One activity's body and its two digest header values. */
struct digest_slot {
    char *body;
    size_t len;
    char *digest;         /* "SHA-256=...", draft-cavage's Digest */
    char *content_digest; /* "sha-256=:...:", RFC 9421's Content-Digest */
};
static struct digest_slot digests[DIGEST_SLOTS];

void
eu_ap_deliver_stats(struct eu_ap_deliver_stats *out)
{
    *out = stats;
}

static uint64_t
fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int64_t
mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t
slot_hash(int64_t tenant, const char *name)
{
    uint64_t h = fnv1a(&tenant, sizeof(tenant), 14695981039346656037ull);
    return fnv1a(name, strlen(name), h);
}

static struct signer_slot *
signer_kept(int64_t tenant, const char *actor, int64_t now)
{
    struct signer_slot *g = &signers[slot_hash(tenant, actor) % SIGNER_SLOTS];
    if (g->pem && g->tenant == tenant && strcmp(g->actor, actor) == 0 && now < g->until_ms)
        return g;
    return NULL;
}

static void
signer_keep(int64_t tenant, const char *actor, const char *username, const char *pem, int64_t now)
{
    struct signer_slot *g = &signers[slot_hash(tenant, actor) % SIGNER_SLOTS];
    if (g->pem)
        sodium_memzero(g->pem, strlen(g->pem));
    free(g->pem);
    free(g->username);
    g->tenant = tenant;
    snprintf(g->actor, sizeof(g->actor), "%s", actor);
    g->username = eu_xstrdup(username);
    g->pem = eu_xstrdup(pem);
    g->until_ms = now + SIGNER_KEEP_MS;
}

static struct host_slot *
host_slot_of(int64_t tenant, const char *host)
{
    return &hosts[slot_hash(tenant, host) % HOST_SLOTS];
}

static struct host_slot *
host_kept(int64_t tenant, const char *host, int64_t now)
{
    struct host_slot *h = host_slot_of(tenant, host);
    if (h->tenant == tenant && strcmp(h->host, host) == 0 && now < h->until_ms &&
        h->generation == eu_domain_policy_generation())
        return h;
    return NULL;
}

/* This process changed the host's refusal row: the next delivery reads it. */
static void
host_forget(int64_t tenant, const char *host)
{
    struct host_slot *h = host_slot_of(tenant, host);
    if (h->tenant == tenant && strcmp(h->host, host) == 0)
        h->tenant = 0;
}

static struct key_slot *
key_slot_of(int64_t tenant, const char *actor)
{
    uint64_t h = fnv1a(&tenant, sizeof(tenant), 14695981039346656037ull);
    return &keys[fnv1a(actor, strlen(actor), h) % KEY_SLOTS];
}

static void
pem_hash(const char *pem, unsigned char out[16])
{
    crypto_generichash(out, 16, (const unsigned char *)pem, strlen(pem), NULL, 0);
}

static bool
key_slot_is(const struct key_slot *k, int64_t tenant, const char *actor, const unsigned char h[16])
{
    return k->tenant == tenant && strcmp(k->actor, actor) == 0 &&
           sodium_memcmp(h, k->pem_hash, 16) == 0;
}

/*
 * The digests of body, from the cache when the activity's body was seen
 * (compared byte for byte, so two activities that share an id but not a
 * body never share a digest). Computed here on the loop: SHA-256 of an
 * activity (a few KB) is microseconds, less than handing it to the pool.
 * Returns the slot, valid until the next call.
 */
static const struct digest_slot *
digest_of(const char *id, const char *body, size_t len)
{
    uint64_t h = id ? fnv1a(id, strlen(id), 14695981039346656037ull)
                    : fnv1a(body, len, 14695981039346656037ull);
    struct digest_slot *d = &digests[h % DIGEST_SLOTS];
    if (d->body && d->len == len && memcmp(d->body, body, len) == 0)
        return d;
    free(d->body);
    free(d->digest);
    free(d->content_digest);
    unsigned char sum[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(sum, (const unsigned char *)body, len);
    char b64[sodium_base64_ENCODED_LEN(sizeof(sum), sodium_base64_VARIANT_ORIGINAL)];
    sodium_bin2base64(b64, sizeof(b64), sum, sizeof(sum), sodium_base64_VARIANT_ORIGINAL);
    d->body = eu_xmalloc(len);
    memcpy(d->body, body, len);
    d->len = len;
    d->digest = eu_xasprintf("SHA-256=%s", b64);
    d->content_digest = eu_xasprintf("sha-256=:%s:", b64);
    stats.digests++;
    return d;
}

/* ------------------------------------------------------------ the job */

struct run {
    struct eu_job *job;
    struct eu_app *app;
    char domain[256];  /* for log lines, whatever happens to the tenant */
    const char *inbox; /* borrowed from the payload */
    char host[300];
    char *body;
    size_t body_len;
    char *key_id, *key_pem;
    EVP_PKEY *key;           /* parsed: from the cache, or by sign_work() */
    struct key_slot *parser; /* the slot this run parses the key for */
    struct run *wait_next;   /* on a key slot's waiters */
    char *digest;            /* the body's, for draft-cavage */
    char *content_digest;    /* the body's, for RFC 9421 */
    bool refused_before;     /* the host refused this tenant, long enough ago to try */
    bool rfc9421;            /* the form of the signature being sent */
    bool tried_both;         /* a refusal already made us switch forms */
    unsigned generation;     /* eu_domain_policy_generation() when the signer was asked */
    /* the signing, on the pool */
    struct eu_httpsig_signed sig;
    int sign_rc;
    time_t now;
    bool detached;      /* from the tenant's turn (eu_job_detach()) */
    bool signing;       /* on the CPU pool: sign_done() will run */
    bool abandoned;     /* its job was let go at shutdown: sign_done() only frees */
    struct eu_fetch *f; /* the POST in flight */
    /* FEP-8fcf (followers_sync.c): a followers-only activity carries the
     * digest of the signer's followers on the inbox's server. */
    json_t *activity;   /* borrowed from the payload */
    const char *signer; /* its actor id, borrowed from the payload */
    char *sync_uris;    /* those followers' URIs, newline-separated */
    char *sync_header;  /* the Collection-Synchronization value, or NULL */
    char *followers;    /* the signer's followers collection */
};

static void
run_free(struct run *r)
{
    eu_httpsig_signed_release(&r->sig);
    free(r->body);
    free(r->sync_uris);
    free(r->sync_header);
    free(r->followers);
    free(r->key_id);
    free(r->digest);
    free(r->content_digest);
    EVP_PKEY_free(r->key);
    if (r->key_pem)
        sodium_memzero(r->key_pem, strlen(r->key_pem));
    free(r->key_pem);
    free(r);
}

static void
context(const struct run *r)
{
    eu_log_set_context(r->domain, NULL);
}

static void
done(struct run *r)
{
    struct eu_job *job = r->job;
    run_free(r);
    eu_job_done(job, NULL);
}

/* Dropped for good, as done: retrying cannot help. */
static void
drop(struct run *r, const char *why)
{
    context(r);
    eu_log_info("ap", "delivery to '%s' dropped: %s", r->inbox, why);
    done(r);
}

/* Mastodon's backoff: attempt^4 + 15 + rand(10 * (attempt + 1)) seconds,
 * about a week over EU_AP_DELIVER_ATTEMPTS attempts. */
static void
retry(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    int n = eu_job_attempt(job);
    long long delay = (long long)n * n * n * n + 15 + randombytes_uniform(10u * (unsigned)(n + 1));
    char msg[1024];
    snprintf(msg, sizeof(msg), "delivery to '%.400s' failed: %s", r->inbox, error);
    run_free(r);
    eu_job_retry_in(job, msg, (int)(delay > 86400 * 7 ? 86400 * 7 : delay),
                    n >= EU_AP_DELIVER_ATTEMPTS);
}

/* Ends dead at once: a job that can never work, kept for an operator. */
static void
fail(struct run *r, const char *error)
{
    struct eu_job *job = r->job;
    char msg[1024];
    snprintf(msg, sizeof(msg), "delivery to '%.400s' failed: %s", r->inbox ? r->inbox : "?", error);
    run_free(r);
    eu_job_retry_in(job, msg, 0, true);
}

static void sign(struct run *r);
static void detach(struct run *r);

static void
on_refusal_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    context(r);
    if (st != EU_DB_OK)
        eu_log_warn("ap", "cannot record a refusal by '%s': %s", r->host,
                    res ? PQresultErrorMessage(res) : "database unavailable");
    done(r);
}

static void
refused(struct run *r, long status)
{
    context(r);
    eu_log_warn("ap", "delivery to '%s' refused with %ld: dropped", r->inbox, status);
    host_forget(eu_job_tenant(r->job)->id, r->host);
    char st[8];
    snprintf(st, sizeof(st), "%ld", status);
    const char *params[] = {r->host, st};
    eu_job_stmt(r->job, &eu_ap_deliver_sql[DELIVER_REFUSED], 2, params, on_refusal_recorded, r);
}

static void
on_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    context(r);
    if (st != EU_DB_OK)
        eu_log_warn("ap", "cannot record a delivery to '%s': %s", r->host,
                    res ? PQresultErrorMessage(res) : "database unavailable");
    done(r);
}

/* The host took a delivery after refusing this tenant: send it everything
 * again. */
static void
forgive(struct run *r)
{
    eu_log_info("ap", "'%s' takes deliveries again", r->host);
    host_forget(eu_job_tenant(r->job)->id, r->host);
    const char *params[] = {r->host};
    eu_job_stmt(r->job, &eu_ap_deliver_sql[DELIVER_FORGIVEN], 1, params, on_recorded, r);
}

/*
 * The host refused this tenant (401/403) less than EU_AP_REFUSAL_HOLD_S
 * ago: drop the delivery unsent, as the refusal would have, and count it
 * on the refusal's row. The first delivery after the hold goes out and
 * either ends the refusal (2xx) or renews it.
 */
static void
hold(struct run *r)
{
    eu_log_info("ap", "delivery to '%s' dropped unsent: its host refused this tenant recently",
                r->inbox);
    const char *params[] = {r->host};
    eu_job_stmt(r->job, &eu_ap_deliver_sql[DELIVER_HELD], 1, params, on_recorded, r);
}

/* The POST waited behind its host's cap and is now on the wire. */
static void
on_active(void *arg)
{
    struct run *r = arg;
    if (r->job)
        eu_job_waiting(r->job, false);
}

static void
on_sent(struct eu_fetch_resp *resp, void *arg)
{
    struct run *r = arg;
    r->f = NULL;
    context(r);
    char why[300];
    if (resp->error != EU_FETCH_OK) {
        snprintf(why, sizeof(why), "%s (%s)", eu_fetch_error_str(resp->error),
                 resp->message ? resp->message : "");
        if (resp->error == EU_FETCH_BAD_URL || resp->error == EU_FETCH_REFUSED_ADDRESS)
            fail(r, why);
        else
            retry(r, why);
        return;
    }
    long status = resp->status;
    if (status >= 200 && status < 300) {
        /* A 2xx alone proves nothing (many servers accept before they
         * verify); one to RFC 9421 right after a 401 to draft-cavage does. */
        if (r->rfc9421 && r->tried_both)
            eu_ap_sigform_learn(r->host, true);
        eu_log_debug("ap", "delivered to '%s' (%ld, %s)", r->inbox, status,
                     r->rfc9421 ? "rfc9421" : "cavage");
        if (r->refused_before) {
            forgive(r);
            return;
        }
        done(r);
        return;
    }
    if (!r->tried_both && (status == 401 || (status == 400 && r->rfc9421))) {
        /* RFC 9421 refused: draft-cavage at once, and for this host from
         * now on. draft-cavage refused: perhaps it reads only RFC 9421. */
        if (r->rfc9421)
            eu_ap_sigform_learn(r->host, false);
        r->tried_both = true;
        r->rfc9421 = !r->rfc9421;
        eu_httpsig_signed_release(&r->sig);
        sign(r);
        return;
    }
    if (status == 401 || status == 403) {
        refused(r, status);
        return;
    }
    snprintf(why, sizeof(why), "HTTP %ld", status);
    if (status >= 400 && status < 500 && status != 408 && status != 429) {
        drop(r, why);
        return;
    }
    retry(r, why);
}

static void
sign_work(void *arg)
{
    struct run *r = arg;
    if (!r->key)
        r->key = eu_httpsig_private_key_parse(r->key_pem);
    struct eu_httpsig_sign_args a = {
        .method = "POST",
        .url = r->inbox,
        .body = r->body,
        .body_len = r->body_len,
        .key_id = r->key_id,
        .key_pem = r->key_pem,
        .key = r->key,
        .now = r->now,
        .digest = r->rfc9421 ? r->content_digest : r->digest,
    };
    r->sign_rc =
        r->rfc9421 ? eu_httpsig_sign_rfc9421(&a, &r->sig) : eu_httpsig_sign_cavage(&a, &r->sig);
    if (r->followers && !r->sync_header) {
        /* Hashing a big server's followers is CPU work: done here. */
        char digest[EU_AP_FOLLOWERS_DIGEST_LEN];
        eu_ap_followers_digest(r->sync_uris, digest);
        r->sync_header =
            eu_xasprintf("collectionId=\"%s\", url=\"%s_synchronization\", digest=\"%s\"",
                         r->followers, r->followers, digest);
    }
}

/* The process stops with the run detached (eu_queues_abandon()). */
static void
on_abandon(void *arg)
{
    struct run *r = arg;
    if (r->f) {
        eu_fetch_cancel(r->f);
        r->f = NULL;
    }
    r->job = NULL;
    if (r->signing)
        r->abandoned = true;
    else
        run_free(r);
}

static void sign_submit(struct run *r);

/* r parsed its signer's key for slot k (r->key NULL: it did not parse):
 * keep it, and send the runs that waited for it to sign. */
static void
key_parsed(struct run *r, struct key_slot *k)
{
    stats.key_parses++;
    k->parsing = false;
    if (r->key && EVP_PKEY_up_ref(r->key) == 1)
        k->key = r->key;
    struct run *w = k->waiters;
    k->waiters = k->waiters_tail = NULL;
    while (w) {
        struct run *next = w->wait_next;
        w->wait_next = NULL;
        if (w->abandoned) {
            run_free(w);
        } else {
            /* Without a key (a bad PEM) each parses, and fails, alone. */
            if (k->key && EVP_PKEY_up_ref(k->key) == 1)
                w->key = k->key;
            sign_submit(w);
        }
        w = next;
    }
}

static void
sign_done(void *arg)
{
    struct run *r = arg;
    r->signing = false;
    if (r->parser) {
        struct key_slot *k = r->parser;
        r->parser = NULL;
        key_parsed(r, k);
    }
    if (r->abandoned) {
        run_free(r);
        return;
    }
    context(r);
    if (r->sign_rc < 0) {
        fail(r, "cannot sign: the inbox URL or the actor's key is unusable");
        return;
    }
    stats.signatures++;
    /* The tenant's room for detached deliveries was full when this one
     * started, perhaps only with others being signed, which have since
     * moved on to the wire or to their host's line (eu_job_waiting()):
     * ask again, so that a POST that must wait does not hold the turn. */
    detach(r);
    char *lines[EU_HTTPSIG_SIGNED_MAX + 4];
    int n = 0;
    for (int i = 0; i < r->sig.n; i++)
        lines[n++] = eu_xasprintf("%s: %s", r->sig.headers[i].name, r->sig.headers[i].value);
    lines[n++] = eu_xstrdup("Content-Type: application/activity+json");
    lines[n++] = eu_xstrdup("Accept: application/activity+json, application/ld+json");
    if (r->sync_header)
        lines[n++] = eu_xasprintf("Collection-Synchronization: %s", r->sync_header);
    lines[n] = NULL;
    struct eu_tenant *t = eu_job_tenant(r->job);
    const struct eu_config *cfg = r->app->cfg;
    char *ua = eu_xasprintf("%s://%s/", cfg->scheme, t->domain);
    struct eu_fetch_req req = {
        .method = EU_FETCH_POST,
        .url = r->inbox,
        .headers = (const char *const *)lines,
        .body = r->body,
        .body_len = r->body_len,
        .owner = (uint64_t)t->id,
        .max_redirects = 0,
        .max_bytes = RESPONSE_MAX,
        .ua_base = ua,
        .on_active = on_active,
    };
    r->f = eu_fetch_start(r->app->fetch, &req, on_sent, r);
    /* Waiting behind a busy host holds none of the tenant's room for
     * deliveries in flight; the fetch client bounds how many wait. */
    if (eu_fetch_waiting(r->f) && eu_job_waiting(r->job, true) && !r->detached) {
        r->detached = true;
        eu_job_on_abandon(r->job, on_abandon, r);
    }
    for (int i = 0; i < n; i++)
        free(lines[i]);
    free(ua);
}

static void
sign_submit(struct run *r)
{
    eu_cpupool_submit(r->app->cpu, sign_work, sign_done, r);
}

/* Signs on the pool with the signer's kept key; the first run of a signer
 * whose key is not kept parses it there for all, the others wait for it. */
static void
sign(struct run *r)
{
    r->now = time(NULL);
    r->signing = true; /* waiting for the key too: an abandon only marks it */
    if (!r->key) {
        int64_t tenant = eu_job_tenant(r->job)->id;
        unsigned char h[16];
        pem_hash(r->key_pem, h);
        struct key_slot *k = key_slot_of(tenant, r->signer);
        if (k->key && key_slot_is(k, tenant, r->signer, h) && EVP_PKEY_up_ref(k->key) == 1) {
            r->key = k->key;
        } else if (k->parsing && key_slot_is(k, tenant, r->signer, h)) {
            /* In order: a run that could not leave its turn (the tenant's
             * room was full) signs after the others it waited behind, when
             * they have made room (detach() in sign_done()). */
            r->wait_next = NULL;
            if (k->waiters_tail)
                k->waiters_tail->wait_next = r;
            else
                k->waiters = r;
            k->waiters_tail = r;
            return;
        } else if (!k->parsing) {
            EVP_PKEY_free(k->key);
            k->key = NULL;
            k->tenant = tenant;
            snprintf(k->actor, sizeof(k->actor), "%s", r->signer);
            memcpy(k->pem_hash, h, sizeof(h));
            k->parsing = true;
            r->parser = k;
        }
        /* else another signer's parse holds the slot: parse alone */
    }
    sign_submit(r);
}

/* Signing and the POST need no connection: the tenant's other deliveries
 * go on meanwhile, so a peer that hangs holds only its own (and the fetch
 * client's per-host cap bounds what it holds there). */
static void
detach(struct run *r)
{
    if (!r->detached && eu_job_detach(r->job)) {
        r->detached = true;
        eu_job_on_abandon(r->job, on_abandon, r);
    }
}

static void
go(struct run *r)
{
    detach(r);
    sign(r);
}

static void
on_sync_uris(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    context(r);
    if (st != EU_DB_OK) {
        retry(r, st == EU_DB_ERROR && res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    if (PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        r->sync_uris = eu_xstrdup(PQgetvalue(res, 0, 0));
    go(r);
}

/* Goes on with what the signer statement answers, read now or kept. */
static void
signer_known(struct run *r, const char *user, const char *pem, bool host_refused,
             enum host_refusal refusal)
{
    if (host_refused) {
        drop(r, "this tenant refuses its domain (suspended, or not allowed)");
        return;
    }
    if (refusal == HR_RECENT) {
        hold(r);
        return;
    }
    r->refused_before = refusal == HR_LONG_AGO;
    struct eu_tenant *t = eu_job_tenant(r->job);
    const char *scheme = r->app->cfg->scheme;
    /* The instance actor's key lives at BASE/actor (instance_actor.c). */
    r->key_id = strcmp(user, "instance.actor") == 0
                    ? eu_xasprintf("%s://%s/actor#main-key", scheme, t->domain)
                    : eu_xasprintf("%s://%s/users/%s#main-key", scheme, t->domain, user);
    r->key_pem = eu_xstrdup(pem);
    r->rfc9421 = eu_ap_sigform_rfc9421_first(r->host);
    char base[300];
    snprintf(base, sizeof(base), "%s://%s", scheme, t->domain);
    char prefix[300];
    if (eu_ap_followers_only(r->activity, base, user) &&
        eu_ap_url_prefix(r->inbox, prefix, sizeof(prefix))) {
        r->followers = eu_xasprintf("%s/users/%s/followers", base, user);
        const char *params[] = {r->signer, prefix};
        eu_job_stmt(r->job, eu_ap_followers_sync_uris_stmt(), 2, params, on_sync_uris, r);
        return;
    }
    go(r);
}

static void
on_signer(PGresult *res, enum eu_db_status st, void *arg)
{
    struct run *r = arg;
    context(r);
    if (st != EU_DB_OK) {
        retry(r, st == EU_DB_ERROR && res ? PQresultErrorMessage(res) : "database unavailable");
        return;
    }
    if (PQntuples(res) == 0) {
        drop(r, "the signing account is gone");
        return;
    }
    if (PQgetisnull(res, 0, 1)) {
        /* Its key is being made; come back when it should exist. */
        struct eu_job *job = r->job;
        run_free(r);
        eu_job_retry_in(job, "the signing account has no key yet", NO_KEY_RETRY_S, false);
        return;
    }
    int64_t tenant = eu_job_tenant(r->job)->id, now = mono_ms();
    const char *user = PQgetvalue(res, 0, 0), *pem = PQgetvalue(res, 0, 1);
    bool host_refused = PQgetvalue(res, 0, 2)[0] == 't';
    enum host_refusal refusal = PQgetisnull(res, 0, 3)            ? HR_NEVER
                                : PQgetvalue(res, 0, 3)[0] == 't' ? HR_RECENT
                                                                  : HR_LONG_AGO;
    signer_keep(tenant, r->signer, user, pem, now);
    struct host_slot *h = host_slot_of(tenant, r->host);
    if (r->generation == eu_domain_policy_generation() && refusal != HR_RECENT) {
        /* Only an answer read after the last change this process made; and
         * not a recent refusal: a held delivery writes its row anyway, and
         * the hold's end should be seen by the first delivery after it. */
        h->tenant = tenant;
        snprintf(h->host, sizeof(h->host), "%s", r->host);
        h->refused = host_refused;
        h->refusal = refusal;
        h->generation = r->generation;
        h->until_ms = now + SIGNER_KEEP_MS;
    }
    signer_known(r, user, pem, host_refused, refusal);
}

void
eu_ap_deliver_run(struct eu_job *job)
{
    struct run *r = eu_xcalloc(1, sizeof(*r));
    r->job = job;
    r->app = eu_job_app(job);
    snprintf(r->domain, sizeof(r->domain), "%s", eu_job_tenant(job)->domain);
    json_t *p = eu_job_payload(job);
    json_t *activity = json_object_get(p, "activity");
    const char *actor = json_string_value(json_object_get(p, "actor_id"));
    r->inbox = json_string_value(json_object_get(p, "inbox"));
    r->activity = activity;
    r->signer = actor;
    if (!r->inbox || !json_is_object(activity) || !actor ||
        eu_fetch_host_of(r->inbox, r->host, sizeof(r->host)) < 0) {
        fail(r, "bad payload: needs inbox (a URL), activity (an object) and actor_id");
        return;
    }
    if (!eu_fetch_host_available(r->app->fetch, r->host)) {
        drop(r, "its host has been failing for days");
        return;
    }
    r->body = json_dumps(activity, JSON_COMPACT);
    r->body_len = strlen(r->body);
    const struct digest_slot *d =
        digest_of(json_string_value(json_object_get(activity, "id")), r->body, r->body_len);
    r->digest = eu_xstrdup(d->digest);
    r->content_digest = eu_xstrdup(d->content_digest);
    int64_t tenant = eu_job_tenant(job)->id, now = mono_ms();
    const struct signer_slot *g = signer_kept(tenant, actor, now);
    const struct host_slot *h = g ? host_kept(tenant, r->host, now) : NULL;
    if (h) {
        stats.signers_kept++;
        signer_known(r, g->username, g->pem, h->refused, h->refusal);
        return;
    }
    r->generation = eu_domain_policy_generation();
    const char *params[] = {actor, r->host};
    eu_db_conn_stmt(eu_job_conn(job), &eu_ap_deliver_sql[DELIVER_SIGNER], 2, params, on_signer, r);
}
