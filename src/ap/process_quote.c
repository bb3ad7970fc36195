/*
 * Quotes that arrive (FEP-044f, as Mastodon 4.5 takes them; docs/quotes.md):
 * a QuoteRequest for a local post, answered by its policy with an Accept
 * carrying a QuoteAuthorization (served at its address) or a Reject; the
 * Accept or Reject of our own QuoteRequest; the Delete of an authorization
 * (a revoke); and a Note that quotes something (quote, quoteUri, quoteUrl
 * or _misskey_quote), whose quote is kept pending until approved.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/ap.h"
#include "eunha/apdeliver.h"
#include "eunha/app.h"
#include "eunha/apresolve.h"
#include "eunha/arena.h"
#include "eunha/db.h"
#include "eunha/http.h"
#include "eunha/mem.h"
#include "eunha/notify.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "objects_internal.h"
#include "process_internal.h"
#include "quotes_internal.h"

json_t *
eu_ap_quote_context(void)
{
    return json_pack("[s, {s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}]",
                     "https://www.w3.org/ns/activitystreams", "QuoteRequest",
                     "https://w3id.org/fep/044f#QuoteRequest", "QuoteAuthorization",
                     "https://w3id.org/fep/044f#QuoteAuthorization", "gts",
                     "https://gotosocial.org/ns#", "quote", "https://w3id.org/fep/044f#quote",
                     "toot", "http://joinmastodon.org/ns#", "interactingObject", "@id",
                     "gts:interactingObject", "@type", "@id", "interactionTarget", "@id",
                     "gts:interactionTarget", "@type", "@id", "quoteAuthorization", "@id",
                     "https://w3id.org/fep/044f#quoteAuthorization", "@type", "@id");
}

char *
eu_ap_quote_authorization_uri(const char *base, const char *username, const char *quote_id)
{
    return eu_xasprintf("%s/users/%s/quote_authorizations/%s", base, username, quote_id);
}

enum {
    QIN_AUTHORIZATION,
    QIN_REQUEST,
    QIN_ANSWER,
    QIN_REVOKE,
    QIN_NOTE,
    QIN_LINK,
    QIN_VERIFIED,
    QIN_LINK_STATUS,
    QIN_FOLLOWERS,
    QIN_REMOVE,
};

/* Whether account $3 may quote status t (a CTE of it): Mastodon's policy
 * for local posts, as src/api/quotes.c applies it to local quoters. */
#define QUOTE_ALLOWED(t)                                                                           \
    "(" t ".visibility < 2 AND (" t ".quote_policy = 0 OR (" t ".quote_policy = 1"                 \
    " AND EXISTS (SELECT 1 FROM follows qf WHERE qf.tenant_id = $1 AND qf.account_id = $3::bigint" \
    " AND qf.target_account_id = " t ".account_id))) AND NOT EXISTS (SELECT 1 FROM blocks qb"      \
    " WHERE qb.tenant_id = $1 AND qb.account_id = " t ".account_id"                                \
    " AND qb.target_account_id = $3::bigint))"
#define QUOTE_ALLOWED_T QUOTE_ALLOWED("t")
#define QUOTE_ALLOWED_QS QUOTE_ALLOWED("qs")

const struct eu_sql eu_ap_quotes_sql[] = {
    /* $2 the quote, $3 the base URL, $4 the quoted author's username
     * (any case): an approval we gave, while it holds. */
    [QIN_AUTHORIZATION] =
        {"ap_quotes.authorization",
         "SELECT coalesce(eunha_status_uri(qs.local, qs.id, qs.uri, qa.username, $3),"
         " q.status_uri), $3 || '/users/' || a.username || '/statuses/' || q.quoted_status_id,"
         " a.username"
         " FROM quotes q JOIN statuses t ON t.tenant_id = $1 AND t.id = q.quoted_status_id"
         "  AND t.local AND t.deleted_at IS NULL"
         " JOIN accounts a ON a.tenant_id = $1 AND a.id = t.account_id"
         "  AND lower(a.username) = lower($4)"
         " LEFT JOIN statuses qs ON qs.tenant_id = $1 AND qs.id = q.status_id"
         " LEFT JOIN accounts qa ON qa.tenant_id = $1 AND qa.id = qs.account_id"
         " WHERE q.tenant_id = $1 AND q.id = $2::bigint AND q.state = 'accepted'"},
    /* A QuoteRequest of remote account $3 for local status $2: $4 the
     * quoting post's URI, $5 the request's id. The quote is kept (by the
     * request's id, so a repeat is the same one) accepted or rejected by
     * the policy. Answers its id, state, the quoted author's username and
     * id. */
    [QIN_REQUEST] =
        {"ap_quotes.request",
         "WITH t AS (SELECT s.id, s.account_id, s.visibility, s.quote_policy, a.username"
         "  FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         "  AND a.domain IS NULL WHERE s.tenant_id = $1 AND s.id = $2::bigint AND s.local"
         "  AND s.deleted_at IS NULL AND s.reblog_of_id IS NULL),"
         " prev AS (SELECT id, state FROM quotes WHERE tenant_id = $1 AND activity_uri = $5"
         "  AND account_id = $3::bigint),"
         " known AS (SELECT ks.id FROM statuses ks WHERE ks.tenant_id = $1 AND ks.uri = $4"
         "  AND ks.account_id = $3::bigint),"
         " ins AS (INSERT INTO quotes (tenant_id, status_id, status_uri, account_id,"
         "  quoted_status_id, quoted_account_id, state, activity_uri)"
         "  SELECT $1, (SELECT id FROM known), $4, $3::bigint, t.id, t.account_id,"
         "  CASE WHEN " QUOTE_ALLOWED_T " THEN 'accepted' ELSE 'rejected' END, $5 FROM t"
         "  WHERE NOT EXISTS (SELECT 1 FROM prev)"
         "  ON CONFLICT (tenant_id, status_id) DO UPDATE SET state = EXCLUDED.state,"
         "  activity_uri = EXCLUDED.activity_uri, updated_at = now() RETURNING id, state)"
         " SELECT r.id::text, r.state, t.username, t.account_id::text,"
         " NOT EXISTS (SELECT 1 FROM known) AS unknown"
         " FROM (SELECT id, state FROM ins UNION ALL SELECT id, state FROM prev) r, t"},
    /* The Accept ($4 'accepted', $5 its result) or Reject ($4 'rejected')
     * by quoted author $3 of our QuoteRequest $2. Answers the quoting
     * status and its author. */
    [QIN_ANSWER] = {"ap_quotes.answer",
                    "UPDATE quotes SET state = $4, approval_uri = CASE WHEN $4 = 'accepted' THEN $5"
                    " ELSE approval_uri END, updated_at = now()"
                    " WHERE tenant_id = $1 AND activity_uri = $2 AND quoted_account_id = $3::bigint"
                    " AND state IN ('pending', 'accepted') AND status_id IS NOT NULL"
                    " RETURNING status_id::text, account_id::text"},
    /* A Delete of authorization $2 by its author $3: the quotes it
     * approved are revoked. Answers the local quoting statuses and their
     * authors. */
    [QIN_REVOKE] =
        {"ap_quotes.revoke",
         "UPDATE quotes q SET state = 'revoked', updated_at = now() FROM accounts a"
         " WHERE q.tenant_id = $1 AND q.approval_uri = $2 AND q.quoted_account_id = $3::bigint"
         " AND a.tenant_id = $1 AND a.id = q.account_id"
         " RETURNING q.status_id::text, q.account_id::text, a.domain IS NULL"},
    /*
     * The quote of remote status $2 by $3, as its Note says: $4 the quoted
     * URI, $5 its id when it is ours, $6 the authorization it names, $7 its
     * quote policy (NULL: it said none), $8 its URI. A quote answered
     * before its Note came (ap_quotes.request) gets the status; else a
     * quote is kept: accepted when the quoter quotes itself or a local post
     * whose policy lets it, pending otherwise (a remote approval is
     * verified apart). Answers the state, quoted status and author,
     * whether that is local, the quote's id and its authorization.
     */
    [QIN_NOTE] =
        {"ap_quotes.note",
         "WITH pol AS (UPDATE statuses SET quote_policy = $7::smallint WHERE tenant_id = $1"
         "  AND id = $2::bigint AND $7::smallint IS NOT NULL RETURNING id),"
         " qs AS (SELECT x.id, x.account_id, x.local, x.quote_policy, x.visibility FROM statuses x"
         "  WHERE x.tenant_id = $1 AND x.id = coalesce($5::bigint, (SELECT y.id FROM statuses y"
         "  WHERE y.tenant_id = $1 AND y.uri = $4)) AND x.deleted_at IS NULL),"
         " link AS (UPDATE quotes l SET status_id = $2::bigint, quoted_uri = $4,"
         "  approval_uri = coalesce(l.approval_uri, $6), updated_at = now()"
         "  WHERE l.tenant_id = $1 AND l.status_uri = $8 AND l.status_id IS NULL"
         "  AND l.account_id = $3::bigint"
         "  RETURNING l.id, l.state, l.quoted_status_id, l.quoted_account_id, l.approval_uri),"
         " ins AS (INSERT INTO quotes (tenant_id, status_id, status_uri, account_id,"
         "  quoted_status_id, quoted_account_id, quoted_uri, approval_uri, state)"
         "  SELECT $1, $2::bigint, $8, $3::bigint, qs.id, qs.account_id, $4, $6,"
         "  CASE WHEN qs.account_id = $3::bigint THEN 'accepted'"
         "  WHEN qs.local AND " QUOTE_ALLOWED_QS " THEN 'accepted' ELSE 'pending' END"
         "  FROM (SELECT 1) one LEFT JOIN qs ON true"
         "  WHERE $4::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM link)"
         /* Known already (an Update, a second delivery): the same quoted
          * post keeps what was learnt of it and gains an authorization;
          * another quoted post starts over, as Mastodon 4.5 makes a new
          * quote when an Update names another. */
         "  ON CONFLICT (tenant_id, status_id) DO UPDATE SET"
         "  quoted_uri = EXCLUDED.quoted_uri,"
         "  approval_uri = CASE WHEN quotes.quoted_uri IS DISTINCT FROM EXCLUDED.quoted_uri"
         "  THEN EXCLUDED.approval_uri ELSE coalesce(EXCLUDED.approval_uri, quotes.approval_uri)"
         "  END,"
         "  quoted_status_id = CASE WHEN quotes.quoted_uri IS DISTINCT FROM EXCLUDED.quoted_uri"
         "  THEN EXCLUDED.quoted_status_id"
         "  ELSE coalesce(EXCLUDED.quoted_status_id, quotes.quoted_status_id) END,"
         "  quoted_account_id = CASE WHEN quotes.quoted_uri IS DISTINCT FROM EXCLUDED.quoted_uri"
         "  THEN EXCLUDED.quoted_account_id"
         "  ELSE coalesce(EXCLUDED.quoted_account_id, quotes.quoted_account_id) END,"
         "  state = CASE WHEN quotes.quoted_uri IS DISTINCT FROM EXCLUDED.quoted_uri"
         "  OR quotes.state = 'pending' THEN EXCLUDED.state ELSE quotes.state END,"
         "  updated_at = now()"
         "  RETURNING id, state, quoted_status_id, quoted_account_id, approval_uri),"
         " r AS (SELECT * FROM ins UNION ALL SELECT * FROM link)"
         " SELECT r.state, r.quoted_status_id::text, r.quoted_account_id::text,"
         " (SELECT qa.domain IS NULL FROM accounts qa WHERE qa.tenant_id = $1"
         "  AND qa.id = r.quoted_account_id), r.id::text, r.approval_uri FROM r"},
    /* The quoted post $3 of quote $2, fetched since: its row, and whether
     * the quote still waits for its authorization to be verified. */
    [QIN_LINK] = {"ap_quotes.link",
                  "UPDATE quotes q SET quoted_status_id = x.id, quoted_account_id = x.account_id,"
                  " state = CASE WHEN x.account_id = q.account_id THEN 'accepted' ELSE q.state END,"
                  " updated_at = now() FROM statuses x"
                  " WHERE q.tenant_id = $1 AND q.id = $2::bigint AND q.quoted_status_id IS NULL"
                  " AND x.tenant_id = $1 AND x.id = $3::bigint"
                  " RETURNING q.state, q.approval_uri"},
    /* Quote $2's authorization $3, fetched: accepted when attributed to
     * the quoted author ($4), for this quote ($5 the quoting post, $6 the
     * quoted one). Answers the quoting status. */
    [QIN_VERIFIED] = {"ap_quotes.verified",
                      "UPDATE quotes q SET state = 'accepted', updated_at = now() FROM accounts a"
                      " WHERE q.tenant_id = $1 AND q.id = $2::bigint AND q.state = 'pending'"
                      " AND q.approval_uri = $3 AND a.tenant_id = $1 AND a.id = q.quoted_account_id"
                      " AND a.uri = $4 AND q.status_uri = $5 AND q.quoted_uri = $6"
                      " RETURNING q.status_id::text"},
    /* The quoting post $3 of quote $2 (answered by its QuoteRequest),
     * fetched since. Answers the quoted author when the quote is approved
     * (to be told), the quoting author and the status. */
    [QIN_LINK_STATUS] =
        {"ap_quotes.link_status",
         "UPDATE quotes q SET status_id = x.id, updated_at = now() FROM statuses x"
         " WHERE q.tenant_id = $1 AND q.id = $2::bigint AND q.status_id IS NULL"
         " AND x.tenant_id = $1 AND x.id = $3::bigint AND x.account_id = q.account_id"
         " AND NOT EXISTS (SELECT 1 FROM quotes o WHERE o.tenant_id = $1 AND o.status_id = x.id)"
         " RETURNING CASE WHEN q.state = 'accepted' THEN q.quoted_account_id::text END,"
         " q.account_id::text, x.id::text"},
    /* $2 a remote author: their followers collection, which a fetched
     * Note's canQuote may name. */
    [QIN_FOLLOWERS] =
        {"ap_quotes.followers",
         "SELECT followers_url FROM accounts WHERE tenant_id = $1 AND id = $2::bigint"},
    /* Remote status $2 of $3 edited to quote nothing: its quote goes, as
     * Mastodon 4.5's ProcessStatusUpdateService#update_quote! destroys it,
     * only for an explicit edit ($4 the Note's updated, newer than its
     * last edit: ingest.status_store's rule for an edit). */
    [QIN_REMOVE] = {"ap_quotes.remove",
                    "DELETE FROM quotes q USING statuses s WHERE q.tenant_id = $1"
                    " AND q.status_id = $2::bigint AND s.tenant_id = $1 AND s.id = q.status_id"
                    " AND s.account_id = $3::bigint"
                    " AND $4::timestamptz > coalesce(s.edited_at, '-infinity')"
                    " RETURNING q.id::text"},
    {0},
};

/* ------------------------------------------------- the authorization */

struct auth_show {
    const char *username, *id;
};

static void
on_authorization(struct eu_req *req, PGresult *res, void *arg)
{
    struct auth_show *as = arg;
    if (PQntuples(res) != 1) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    const char *base = eu_req_base_url(req);
    char *id = eu_ap_quote_authorization_uri(base, PQgetvalue(res, 0, 2), as->id);
    char *actor = eu_xasprintf("%s/users/%s", base, PQgetvalue(res, 0, 2));
    json_t *doc =
        json_pack("{s:o, s:s, s:s, s:s, s:s, s:s}", "@context", eu_ap_quote_context(), "id", id,
                  "type", "QuoteAuthorization", "attributedTo", actor, "interactingObject",
                  PQgetvalue(res, 0, 0), "interactionTarget", PQgetvalue(res, 0, 1));
    free(id);
    free(actor);
    eu_ap_reply(req, 200, doc);
}

static void
authorization_resume(struct eu_req *req, void *arg)
{
    struct auth_show *as = arg;
    const char *params[] = {as->id, eu_req_base_url(req), as->username};
    eu_req_stmt(req, &eu_ap_quotes_sql[QIN_AUTHORIZATION], 3, params, on_authorization, as);
}

/* GET BASE/users/NAME/quote_authorizations/ID: the approval a quoting
 * server shows its readers, as Mastodon serves it, while it holds. */
static void
quote_authorization_show(struct eu_req *req)
{
    struct auth_show *as = eu_arena_calloc(req->arena, sizeof(*as));
    as->username = eu_req_param(req, "username");
    as->id = eu_req_param(req, "id");
    if (!eu_ap_username_is_valid(as->username) || !eu_id_is_valid(as->id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (eu_ap_fetch_allowed(req, authorization_resume, as))
        authorization_resume(req, as);
}

/* ------------------------------------------------------- QuoteRequest */

static void
done(struct eu_proc *p)
{
    eu_proc_finish(p, NULL);
}

/* A quoting post a QuoteRequest named and we did not have: fetched apart
 * from the job, so that its author's quotes list and notification have
 * it, as Mastodon fetches it. */
struct fetch_quoting {
    struct eu_app *app;
    struct eu_tenant *t; /* a reference */
    char *quote_id;
};

static void
fetch_quoting_free(struct fetch_quoting *f)
{
    eu_tenant_unref(f->t);
    free(f->quote_id);
    free(f);
}

static void
on_quoting_linked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct fetch_quoting *f = arg;
    if (st == EU_DB_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
        eu_notify(f->app->registry, f->t, strtoll(PQgetvalue(res, 0, 0), NULL, 10),
                  strtoll(PQgetvalue(res, 0, 1), NULL, 10), "quote",
                  strtoll(PQgetvalue(res, 0, 2), NULL, 10));
    fetch_quoting_free(f);
}

static void
on_quoting_resolved(const char *id, const struct eu_error *err, void *arg)
{
    struct fetch_quoting *f = arg;
    if (!id || err) {
        fetch_quoting_free(f);
        return;
    }
    const char *params[] = {f->quote_id, id};
    eu_db_pool_stmt(eu_tenant_pool(f->app->registry, f->t), &eu_ap_quotes_sql[QIN_LINK_STATUS], 2,
                    params, on_quoting_linked, f);
}

static void
on_request_kept(struct eu_proc *p, PGresult *res)
{
    if (PQntuples(res) != 1) {
        eu_proc_skip(p, "asks to quote nothing of ours");
        return;
    }
    bool accepted = strcmp(PQgetvalue(res, 0, 1), "accepted") == 0;
    const char *username = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 2));
    const char *local_id = eu_arena_strdup(p->arena, PQgetvalue(res, 0, 3));
    const char *actor = eu_proc_local_uri(p, username);
    const char *id = eu_arena_sprintf(p->arena, "%s#quote_requests/%s/%s", actor,
                                      PQgetvalue(res, 0, 0), accepted ? "accept" : "reject");
    json_t *request = json_pack("{s:s, s:s, s:s, s:s}", "type", "QuoteRequest", "id", p->id,
                                "actor", p->actor_uri, "object", p->object_id);
    json_object_set_new(request, "instrument", json_string(p->s1));
    json_t *act = json_pack("{s:o, s:s, s:s, s:s, s:o, s:[s]}", "@context", eu_ap_quote_context(),
                            "id", id, "type", accepted ? "Accept" : "Reject", "actor", actor,
                            "object", request, "to", p->actor_uri);
    if (accepted) {
        char *auth = eu_ap_quote_authorization_uri(p->base, username, PQgetvalue(res, 0, 0));
        json_object_set_new(act, "result", json_string(auth));
        free(auth);
    }
    if (PQgetvalue(res, 0, 4)[0] == 't') {
        struct fetch_quoting *f = eu_xcalloc(1, sizeof(*f));
        f->app = p->app;
        f->t = p->t;
        eu_tenant_ref(p->t);
        f->quote_id = eu_xstrdup(PQgetvalue(res, 0, 0));
        eu_ap_resolve_status(p->app, p->t, p->s1, on_quoting_resolved, f);
    }
    eu_ap_process_send(p, p->actor_inbox, act, local_id, id, done);
}

void
eu_proc_quote_request(struct eu_proc *p)
{
    const char *status_id = eu_proc_local_status_id(p, p->object_id);
    const char *instrument = eu_proc_json_id(json_object_get(p->activity, "instrument"));
    if (!status_id || !instrument || !p->id) {
        eu_proc_skip(p, "not a request to quote a local post");
        return;
    }
    /* The quoting post must be the requester's own. */
    if (json_is_object(json_object_get(p->activity, "instrument"))) {
        const char *by = eu_proc_json_id(
            json_object_get(json_object_get(p->activity, "instrument"), "attributedTo"));
        if (by && strcmp(by, p->actor_uri) != 0) {
            eu_proc_skip(p, "asks for someone else's post");
            return;
        }
    }
    p->s1 = eu_arena_strdup(p->arena, instrument);
    const char *params[] = {status_id, p->actor_id, p->s1, p->id};
    eu_proc_stmt(p, &eu_ap_quotes_sql[QIN_REQUEST], 4, params, on_request_kept);
}

/* ------------------------------------------------------ Accept, Reject */

bool
eu_proc_is_quote_answer(struct eu_proc *p)
{
    if (p->object_type)
        return strcmp(p->object_type, "QuoteRequest") == 0;
    size_t n = strlen(p->base);
    return p->object_id && strncmp(p->object_id, p->base, n) == 0 &&
           strstr(p->object_id + n, "/quote_requests/") != NULL;
}

static void
on_answered(struct eu_proc *p, PGresult *res)
{
    /* The quoting Note learns its authorization (or loses its quote):
     * an Update to its audience, as Mastodon sends one. */
    for (int i = 0; i < PQntuples(res); i++)
        eu_ap_outbox_status(p->app, p->t, strtoll(PQgetvalue(res, i, 1), NULL, 10),
                            PQgetvalue(res, i, 0), EU_AP_STATUS_UPDATE, NULL);
    eu_proc_finish(p, NULL);
}

void
eu_proc_quote_answer(struct eu_proc *p, bool accepted)
{
    const char *result = eu_proc_json_id(json_object_get(p->activity, "result"));
    if (!p->object_id) {
        eu_proc_skip(p, "answers no request");
        return;
    }
    if (accepted) {
        /* The authorization must be the quoted author's server's. */
        size_t hn = p->actor_host ? strlen(p->actor_host) : 0;
        const char *after = result ? strstr(result, "://") : NULL;
        if (!after || !hn || strncmp(after + 3, p->actor_host, hn) != 0 ||
            (after[3 + hn] != '/' && after[3 + hn] != ':')) {
            eu_proc_skip(p, "accepts with no authorization of its own");
            return;
        }
    }
    const char *params[] = {p->object_id, p->actor_id, accepted ? "accepted" : "rejected", result};
    eu_proc_stmt(p, &eu_ap_quotes_sql[QIN_ANSWER], 4, params, on_answered);
}

/* ------------------------------------------------------------ revoke */

bool
eu_proc_is_quote_revoke(struct eu_proc *p)
{
    if (p->object_type)
        return strcmp(p->object_type, "QuoteAuthorization") == 0;
    return p->object_id && strstr(p->object_id, "/quote_authorizations/") != NULL;
}

static void
on_revoked(struct eu_proc *p, PGresult *res)
{
    for (int i = 0; i < PQntuples(res); i++)
        if (!PQgetisnull(res, i, 0) && PQgetvalue(res, i, 2)[0] == 't')
            eu_ap_outbox_status(p->app, p->t, strtoll(PQgetvalue(res, i, 1), NULL, 10),
                                PQgetvalue(res, i, 0), EU_AP_STATUS_UPDATE, NULL);
    eu_proc_finish(p, NULL);
}

void
eu_proc_quote_revoke(struct eu_proc *p)
{
    const char *params[] = {p->object_id, p->actor_id};
    eu_proc_stmt(p, &eu_ap_quotes_sql[QIN_REVOKE], 2, params, on_revoked);
}

/* ------------------------------------------------------- quoting Notes */

/* What a Note quotes: FEP-044f's quote, then the older forms. Borrowed. */
static const char *
note_quote_uri(json_t *note)
{
    static const char *const keys[] = {"quote", "quoteUri", "quoteUrl", "_misskey_quote"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *u = eu_proc_json_id(json_object_get(note, keys[i]));
        if (u && (strncmp(u, "https://", 8) == 0 || strncmp(u, "http://", 7) == 0))
            return u;
    }
    return NULL;
}

/* Whether a Note says anything of a quote, even one note_quote_uri()
 * cannot take (a Tombstone without an id): only one that says nothing
 * has its quote removed by an Update. */
static bool
note_names_quote(json_t *note)
{
    static const char *const keys[] = {"quote", "quoteUri", "quoteUrl", "_misskey_quote"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(note, keys[i]);
        if (v && !json_is_null(v))
            return true;
    }
    return false;
}

bool
eu_proc_quotes_local(struct eu_proc *p)
{
    return json_is_object(p->object) && eu_proc_local_status_id(p, note_quote_uri(p->object));
}

/* The policy a Note's interactionPolicy.canQuote says (EU_QUOTE_POLICY_*),
 * or -1 when it says none; followers is its author's followers collection
 * (NULL: unknown, so a followers policy reads as nobody). */
static int
policy_code(json_t *note, const char *followers)
{
    json_t *ip = json_object_get(note, "interactionPolicy");
    json_t *cq = json_object_get(ip, "canQuote");
    if (!json_is_object(cq))
        return -1;
    json_t *auto_ = json_object_get(cq, "automaticApproval"), *e;
    json_t *one = json_is_string(auto_) ? json_pack("[O]", auto_) : json_incref(auto_);
    int policy = EU_QUOTE_POLICY_NOBODY;
    size_t i;
    json_array_foreach(one, i, e)
    {
        const char *v = json_string_value(e);
        if (!v)
            continue;
        if (strcmp(v, EU_AP_PUBLIC) == 0 || strcmp(v, "as:Public") == 0 || strcmp(v, "Public") == 0)
            policy = EU_QUOTE_POLICY_PUBLIC;
        else if (policy != EU_QUOTE_POLICY_PUBLIC && followers && strcmp(v, followers) == 0)
            policy = EU_QUOTE_POLICY_FOLLOWERS;
    }
    json_decref(one);
    return policy;
}

/* The policy a Note's interactionPolicy.canQuote says, as text, or NULL
 * when it says none. */
static const char *
note_policy(struct eu_proc *p)
{
    int policy = policy_code(p->object, p->actor_followers);
    return policy < 0 ? NULL : eu_arena_sprintf(p->arena, "%d", policy);
}

/* A quote of a post we do not have, or approved by a remote author:
 * looked after apart from the job (the quoted post resolved, the
 * authorization fetched and checked, as Mastodon's VerifyQuoteService),
 * so that no remote server holds the job's turn. */
struct verify {
    struct eu_app *app;
    struct eu_tenant *t; /* a reference */
    char *quote_id, *approval;
};

/* What a stored Note's quote row asks for next (the ap_quotes.note row of
 * res): the quoted local author told of an accepted quote, or a pending
 * remote one verified apart. author_id is the quoting author, status_id
 * the quoting status, quoted_uri what it quotes. resolve: an unknown
 * quoted post may be fetched (not for a post itself fetched as a quoted
 * one, so a chain of quotes costs one fetch, not one per link). */
static void quote_follow_up(struct eu_app *app, struct eu_tenant *t, PGresult *res,
                            const char *author_id, const char *status_id, const char *quoted_uri,
                            bool resolve);

static void
verify_free(struct verify *v)
{
    eu_tenant_unref(v->t);
    free(v->quote_id);
    free(v->approval);
    free(v);
}

static void
on_verified(PGresult *res, enum eu_db_status st, void *arg)
{
    (void)res;
    (void)st;
    verify_free(arg);
}

static void
on_authorization_fetched(json_t *doc, const char *final_url, const struct eu_error *err, void *arg)
{
    struct verify *v = arg;
    (void)final_url;
    const char *type = json_string_value(json_object_get(doc, "type"));
    const char *by = eu_proc_json_id(json_object_get(doc, "attributedTo"));
    const char *obj = eu_proc_json_id(json_object_get(doc, "interactingObject"));
    const char *target = eu_proc_json_id(json_object_get(doc, "interactionTarget"));
    if (err || !type || strcmp(type, "QuoteAuthorization") != 0 || !by || !obj || !target) {
        verify_free(v);
        return;
    }
    const char *params[] = {v->quote_id, v->approval, by, obj, target};
    eu_db_pool_stmt(eu_tenant_pool(v->app->registry, v->t), &eu_ap_quotes_sql[QIN_VERIFIED], 5,
                    params, on_verified, v);
}

static void
verify_approval(struct verify *v)
{
    if (!v->approval) {
        verify_free(v);
        return;
    }
    eu_ap_fetch_signed(v->app, v->t, v->approval, on_authorization_fetched, v);
}

static void
on_linked(PGresult *res, enum eu_db_status st, void *arg)
{
    struct verify *v = arg;
    if (st != EU_DB_OK || PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), "pending") != 0) {
        verify_free(v);
        return;
    }
    verify_approval(v);
}

static void
on_quoted_resolved(const char *id, const struct eu_error *err, void *arg)
{
    struct verify *v = arg;
    if (!id || err) {
        verify_free(v);
        return;
    }
    const char *params[] = {v->quote_id, id};
    eu_db_pool_stmt(eu_tenant_pool(v->app->registry, v->t), &eu_ap_quotes_sql[QIN_LINK], 2, params,
                    on_linked, v);
}

static void
quote_follow_up(struct eu_app *app, struct eu_tenant *t, PGresult *res, const char *author_id,
                const char *status_id, const char *quoted_uri, bool resolve)
{
    if (PQntuples(res) != 1)
        return;
    const char *state = PQgetvalue(res, 0, 0);
    bool known = !PQgetisnull(res, 0, 1);
    bool local = !PQgetisnull(res, 0, 3) && PQgetvalue(res, 0, 3)[0] == 't';
    const char *approval = PQgetisnull(res, 0, 5) ? NULL : PQgetvalue(res, 0, 5);
    if (strcmp(state, "accepted") == 0 && local && strcmp(PQgetvalue(res, 0, 2), author_id) != 0)
        eu_notify(app->registry, t, strtoll(PQgetvalue(res, 0, 2), NULL, 10),
                  strtoll(author_id, NULL, 10), "quote", strtoll(status_id, NULL, 10));
    if (strcmp(state, "pending") == 0 && !local && (!known || approval) &&
        (known || (resolve && quoted_uri))) {
        struct verify *v = eu_xcalloc(1, sizeof(*v));
        v->app = app;
        v->t = t;
        eu_tenant_ref(t);
        v->quote_id = eu_xstrdup(PQgetvalue(res, 0, 4));
        v->approval = approval ? eu_xstrdup(approval) : NULL;
        if (known)
            verify_approval(v);
        else
            eu_ap_resolve_status_shallow(app, t, quoted_uri, on_quoted_resolved, v);
    }
}

static void
on_note_quote(struct eu_proc *p, PGresult *res)
{
    /* p->parsed is free once the note is parsed: it holds what comes next. */
    void (*then)(struct eu_proc *) = p->parsed;
    quote_follow_up(p->app, p->t, res, p->actor_id, p->s2, p->s3, true);
    then(p);
}

void
eu_proc_quote_note(struct eu_proc *p, const char *status_id, void (*then)(struct eu_proc *p))
{
    const char *quoted = json_is_object(p->object) ? note_quote_uri(p->object) : NULL;
    const char *policy = json_is_object(p->object) ? note_policy(p) : NULL;
    if (!quoted && !policy) {
        then(p);
        return;
    }
    p->parsed = then;
    p->s2 = eu_arena_strdup(p->arena, status_id);
    p->s3 = quoted ? eu_arena_strdup(p->arena, quoted) : NULL;
    const char *approval = eu_proc_json_id(json_object_get(p->object, "quoteAuthorization"));
    const char *note_id = eu_proc_json_id(p->object);
    const char *params[] = {p->s2,
                            p->actor_id,
                            p->s3,
                            eu_proc_local_status_id(p, quoted),
                            approval ? eu_arena_strdup(p->arena, approval) : NULL,
                            policy,
                            note_id ? eu_arena_strdup(p->arena, note_id) : NULL};
    eu_proc_stmt(p, &eu_ap_quotes_sql[QIN_NOTE], 7, params, on_note_quote);
}

static void
on_quote_removed(struct eu_proc *p, PGresult *res)
{
    (void)res; /* a quote removed or none there: the same from here */
    eu_proc_quote_note(p, p->s2, p->parsed);
}

void
eu_proc_quote_update(struct eu_proc *p, const char *status_id, void (*then)(struct eu_proc *p))
{
    /* Mastodon 4.5 removes the quote of an explicit edit only (the Note's
     * updated newer than the last edit): an Update without updated (a
     * changed policy, a poll's counts) is an implicit one, which keeps
     * it, as its specs "removes a verified quote through an implicit
     * update" / "... explicit update" say. A Note that still quotes
     * something is eu_proc_quote_note()'s: the same quoted post keeps
     * its state, another starts over. */
    if (!json_is_object(p->object) || note_names_quote(p->object) || !p->note.updated) {
        eu_proc_quote_note(p, status_id, then);
        return;
    }
    p->parsed = then;
    p->s2 = eu_arena_strdup(p->arena, status_id);
    const char *params[] = {p->s2, p->actor_id, p->note.updated};
    eu_proc_stmt(p, &eu_ap_quotes_sql[QIN_REMOVE], 3, params, on_quote_removed);
}

/* ------------------------------------------------ fetched quoting Notes */

struct fetched {
    struct eu_app *app;
    struct eu_tenant *t; /* borrowed: the caller holds one until done */
    struct eu_db_conn *conn;
    json_t *note; /* a reference */
    char *base, *author_id, *status_id, *quoted;
    bool resolve;
    void (*then)(void *arg);
    void *arg;
};

static void
on_fetched_quote(PGresult *res, enum eu_db_status st, void *arg)
{
    struct fetched *f = arg;
    if (st == EU_DB_OK)
        quote_follow_up(f->app, f->t, res, f->author_id, f->status_id, f->quoted, f->resolve);
    void (*then)(void *) = f->then;
    void *then_arg = f->arg;
    json_decref(f->note);
    free(f->base);
    free(f->author_id);
    free(f->status_id);
    free(f->quoted);
    free(f);
    then(then_arg);
}

/* The quote kept, once the author's followers collection is known. */
static void
on_fetched_followers(PGresult *res, enum eu_db_status st, void *arg)
{
    struct fetched *f = arg;
    const char *followers = st == EU_DB_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)
                                ? PQgetvalue(res, 0, 0)
                                : NULL;
    int policy = policy_code(f->note, followers);
    /* A quoted post of ours, BASE/users/NAME/statuses/ID. */
    char local[24] = "";
    size_t n = strlen(f->base);
    const char *quoted = f->quoted;
    if (quoted && strncmp(quoted, f->base, n) == 0 && strncmp(quoted + n, "/users/", 7) == 0) {
        const char *sid = strstr(quoted + n + 7, "/statuses/");
        size_t len = sid ? strspn(sid + 10, "0123456789") : 0;
        if (len > 0 && len <= 18 && sid[10 + len] == '\0')
            snprintf(local, sizeof(local), "%.*s", (int)len, sid + 10);
    }
    char pol[8];
    snprintf(pol, sizeof(pol), "%d", policy);
    const char *approval = eu_proc_json_id(json_object_get(f->note, "quoteAuthorization"));
    const char *params[] = {f->status_id,
                            f->author_id,
                            quoted,
                            local[0] ? local : NULL,
                            approval,
                            policy < 0 ? NULL : pol,
                            eu_proc_json_id(f->note)};
    eu_db_conn_stmt(f->conn, &eu_ap_quotes_sql[QIN_NOTE], 7, params, on_fetched_quote, f);
}

/* quotes_internal.h */
void
eu_ap_quote_fetched_note(struct eu_app *app, struct eu_tenant *t, struct eu_db_conn *conn,
                         const char *base, json_t *note, const char *status_id,
                         const char *author_id, bool resolve, void (*then)(void *arg), void *arg)
{
    const char *quoted = note_quote_uri(note);
    if (!quoted &&
        !json_is_object(json_object_get(json_object_get(note, "interactionPolicy"), "canQuote"))) {
        then(arg);
        return;
    }
    struct fetched *f = eu_xcalloc(1, sizeof(*f));
    f->app = app;
    f->t = t;
    f->conn = conn;
    f->note = json_incref(note);
    f->base = eu_xstrdup(base);
    f->author_id = eu_xstrdup(author_id);
    f->status_id = eu_xstrdup(status_id);
    f->quoted = quoted ? eu_xstrdup(quoted) : NULL;
    f->resolve = resolve;
    f->then = then;
    f->arg = arg;
    const char *params[] = {author_id};
    eu_db_conn_stmt(conn, &eu_ap_quotes_sql[QIN_FOLLOWERS], 1, params, on_fetched_followers, f);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_ap_quotes_routes[] = {
    {EU_HTTP_GET, "/users/:username/quote_authorizations/:id", quote_authorization_show, NULL, 0},
    {0},
};
