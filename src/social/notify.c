/*
 * eu_notify(): one INSERT ... SELECT that applies the recipient's blocks,
 * domain blocks, mutes and notification policy (accept, filter into a
 * request, or drop) in the database, so the caller needs no extra round
 * trip.
 *
 * It also gives favourites, reblogs and follows Mastodon 4.3's group_key,
 * "<type>[-<status id>]-<hour bucket>": a notification joins the latest
 * group of its kind while that group is less than 12 hours old, so
 * grouped notifications (/api/v2/notifications) gather "5 people
 * favourited your post" without a group spanning days. Mastodon keeps the
 * current bucket in Redis; here it is read from the latest such row.
 *
 * The same statement queues the notification's Web Push jobs (one per
 * subscription of the recipient that wants it, src/social/push.c).
 */
#include "eunha/notify.h"

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"
#include "eunha/stream.h"
#include "eunha/tenant.h"

/* Mastodon's MAXIMUM_GROUP_SPAN_HOURS. */
#define GROUP_SPAN_HOURS "12"

enum {
    NOTIFY_INSERT,
};

/*
 * $2 the recipients (a bigint[] literal), $3 sender, $4 type, $5 status
 * id or NULL, $6 whether notifications are mailed: one statement for all of a post's mentioned or
 * subscribed recipients, so a post to 1,000 of them is one statement and not 1,000 racing for the
 * tenant's connections. The latest group is looked up inside the CASE so that the types without one
 * (a mention, a new status) never run it: joined in, it walked the recipient's notifications from
 * the newest looking for a prefix that cannot match, 15 ms per mention for a recipient with 20,000
 * favourites.
 *
 * The sender's row is read once, for the domain-block probe and for the
 * recipient's notification policy (eunha_notification_verdict, migration
 * 0053), whose common case costs one more primary-key probe, the policy
 * row. A dropped notification is not written; a filtered one is written
 * with filtered set and, for a mention, opens or bumps the sender's
 * notification request in the same statement.
 */
const struct eu_sql eu_notify_sql[] = {
    [NOTIFY_INSERT] =
        {"notify.insert",
         "WITH p AS (SELECT CASE WHEN $4 IN ('favourite', 'reblog') THEN $4 || '-' || $5"
         "   WHEN $4 = 'follow' THEN $4 END AS prefix,"
         "  floor(extract(epoch FROM now()) / 3600)::bigint AS hour),"
         /* The recipients, each once; one's own action notifies nobody
          * but a poll's author. */
         " rc AS (SELECT DISTINCT r.id FROM unnest($2::bigint[]) r(id)"
         "  WHERE r.id <> $3::bigint OR $4 = 'poll'),"
         " ins AS (INSERT INTO notifications (tenant_id, account_id, from_account_id, type,"
         "  status_id, group_key, filtered)"
         " SELECT $1::bigint, rc.id, $3::bigint, $4, $5::bigint,"
         "  CASE WHEN p.prefix IS NOT NULL THEN p.prefix || '-' || coalesce(("
         "   SELECT CASE WHEN p.hour < prev.hour + " GROUP_SPAN_HOURS " THEN prev.hour END"
         "   FROM (SELECT substring(n.group_key FROM '[0-9]+$')::bigint AS hour"
         "    FROM notifications n WHERE n.tenant_id = $1 AND n.account_id = rc.id"
         "    AND n.group_key LIKE p.prefix || '-%' AND n.group_key ~ '-[0-9]+$'"
         "    ORDER BY n.id DESC LIMIT 1) prev), p.hour) END,"
         "  v.verdict = 'filter'"
         " FROM p CROSS JOIN rc JOIN accounts fa ON fa.tenant_id = $1 AND fa.id = $3::bigint"
         " CROSS JOIN LATERAL (SELECT eunha_notification_verdict($1, rc.id, $3::bigint, $4,"
         "   $5::bigint, fa.created_at, fa.silenced_at) AS verdict) v"
         " WHERE v.verdict <> 'drop'"
         /* A remote account hears of it through delivery; a row here would
          * be read by nobody (mentions of remote accounts reach this). */
         " AND EXISTS (SELECT 1 FROM accounts r WHERE r.tenant_id = $1 AND r.id = rc.id"
         "   AND r.domain IS NULL)"
         " AND NOT EXISTS (SELECT 1 FROM blocks WHERE tenant_id = $1 AND account_id = rc.id"
         "   AND target_account_id = $3::bigint)"
         /* Nothing from a domain the recipient blocks (Mastodon's
          * NotifyService blocked_domain?): one primary-key probe. */
         " AND NOT EXISTS (SELECT 1 FROM account_domain_blocks fd WHERE fd.tenant_id = $1"
         "   AND fd.account_id = rc.id AND fd.domain = fa.domain)"
         " AND ($4 = 'poll' OR NOT EXISTS (SELECT 1 FROM mutes WHERE tenant_id = $1"
         "   AND account_id = rc.id"
         "   AND target_account_id = $3::bigint AND hide_notifications"
         "   AND (expires_at IS NULL OR expires_at > now())))"
         " AND ($5::bigint IS NULL OR NOT EXISTS (SELECT 1 FROM conversation_mutes cm"
         "   JOIN statuses s ON s.tenant_id = $1 AND s.conversation_id = cm.conversation_id"
         "   WHERE cm.tenant_id = $1 AND cm.account_id = rc.id AND s.id = $5::bigint))"
         " RETURNING id, account_id, filtered),"
         /* Mastodon keeps a request's count of mentions up to 100, the
          * most a client needs to show. */
         " rq AS (INSERT INTO notification_requests (tenant_id, account_id, from_account_id,"
         "  last_status_id) SELECT $1::bigint, ins.account_id, $3::bigint, $5::bigint FROM ins"
         "  WHERE ins.filtered AND $4 = 'mention'"
         "  ON CONFLICT (tenant_id, account_id, from_account_id) DO UPDATE"
         "  SET last_status_id = excluded.last_status_id, updated_at = now(),"
         "  notifications_count = least(notification_requests.notifications_count + 1, 100)),"
         /* Web Push (src/social/push.c): a job for each of the recipient's
          * subscriptions whose alert for the type is on and whose policy
          * admits the sender, as Mastodon's pushable?; a filtered
          * notification pushes nothing. One index probe when the
          * recipient has no subscription. */
         " wp AS (INSERT INTO jobs (tenant_id, queue, kind, payload)"
         "  SELECT $1::bigint, 'deliver', 'web_push', jsonb_build_object('subscription_id',"
         "   w.id::text, 'notification_id', ins.id::text)"
         "  FROM ins JOIN web_push_subscriptions w ON w.tenant_id = $1"
         "   AND w.account_id = ins.account_id"
         "  WHERE NOT ins.filtered AND (w.alerts ->> $4) = 'true'"
         "  AND (w.policy = 'all'"
         "   OR (w.policy = 'followed' AND EXISTS (SELECT 1 FROM follows pf"
         "    WHERE pf.tenant_id = $1 AND pf.account_id = ins.account_id"
         "    AND pf.target_account_id = $3::bigint))"
         "   OR (w.policy = 'follower' AND EXISTS (SELECT 1 FROM follows pr"
         "    WHERE pr.tenant_id = $1 AND pr.account_id = $3::bigint"
         "    AND pr.target_account_id = ins.account_id)))"
         "  RETURNING 1),"
         /* E-mail (src/social/notification_mail.c), when [mail] is set
          * ($6): for a confirmed user who wants this kind by mail
          * (tenant migration 0062), as Mastodon's NotifyService's
          * send_email_if_needed; the job checks again when it runs. */
         " nm AS (INSERT INTO jobs (tenant_id, queue, kind, payload)"
         "  SELECT $1::bigint, 'default', 'notification_mail',"
         "   jsonb_build_object('notification_id', ins.id::text)"
         "  FROM ins JOIN users u ON u.tenant_id = $1 AND u.account_id = ins.account_id"
         "  WHERE $6::boolean AND NOT ins.filtered AND u.confirmed_at IS NOT NULL"
         "  AND (u.notification_emails ->> $4) = 'true'"
         "  RETURNING 1)"
         " SELECT id, account_id, filtered, (SELECT count(*) FROM wp) AS pushes,"
         " (SELECT count(*) FROM nm) AS mails FROM ins"},
    {0},
};

/* Whether [mail] is set: without it no notification is mailed (the log
 * would hold one line per mention). Set once at start by the wiring. */
static bool mail_on;

void
eu_notify_set_mail(bool on)
{
    mail_on = on;
}

/* The named column of res's row. */
static const char *
field(const PGresult *res, int row, const char *name)
{
    return PQgetvalue(res, row, PQfnumber(res, name));
}

static void
on_inserted(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_tenant *t = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("notify", "cannot write notification: %s",
                    res ? PQresultErrorMessage(res) : "database unavailable");
        eu_tenant_unref(t);
        return;
    }
    bool pushes = false, mails = false;
    for (int i = 0; i < PQntuples(res); i++) {
        /* A filtered notification waits in its request, unseen. */
        if (strcmp(field(res, i, "filtered"), "t") == 0)
            continue;
        eu_stream_notification(t, strtoll(field(res, i, "account_id"), NULL, 10),
                               strtoll(field(res, i, "id"), NULL, 10));
        pushes = pushes || strcmp(field(res, i, "pushes"), "0") != 0;
        mails = mails || strcmp(field(res, i, "mails"), "0") != 0;
    }
    if (pushes)
        eu_queue_wake(t, EU_QUEUE_DELIVER, 0);
    if (mails)
        eu_queue_wake(t, EU_QUEUE_DEFAULT, 0);
    eu_tenant_unref(t);
}

/* Sends the statement for recipients (a bigint[] literal). */
static void
notify_send(struct eu_registry *reg, struct eu_tenant *t, const char *recipients, int64_t from_id,
            const char *type, int64_t status_id)
{
    char fid[24], sid[24];
    snprintf(fid, sizeof(fid), "%lld", (long long)from_id);
    snprintf(sid, sizeof(sid), "%lld", (long long)status_id);
    const char *params[] = {recipients, fid, type, status_id ? sid : NULL,
                            mail_on ? "true" : "false"};
    eu_tenant_ref(t);
    eu_db_pool_stmt(eu_tenant_pool(reg, t), &eu_notify_sql[NOTIFY_INSERT], 5, params, on_inserted,
                    t);
}

void
eu_notify(struct eu_registry *reg, struct eu_tenant *t, int64_t recipient_id, int64_t from_id,
          const char *type, int64_t status_id)
{
    if (recipient_id == from_id && strcmp(type, "poll") != 0)
        return;
    char rid[32];
    snprintf(rid, sizeof(rid), "{%lld}", (long long)recipient_id);
    notify_send(reg, t, rid, from_id, type, status_id);
}

void
eu_notify_many(struct eu_registry *reg, struct eu_tenant *t, const int64_t *recipients, size_t n,
               int64_t from_id, const char *type, int64_t status_id)
{
    /* 21 bytes a recipient at most: a long list goes in a few statements
     * of EU_NOTIFY_BATCH each rather than one of unbounded size. */
    char *buf = eu_xmalloc(EU_NOTIFY_BATCH * 21 + 3);
    for (size_t start = 0; start < n; start += EU_NOTIFY_BATCH) {
        size_t end = start + EU_NOTIFY_BATCH < n ? start + EU_NOTIFY_BATCH : n;
        size_t len = 0;
        buf[len++] = '{';
        for (size_t i = start; i < end; i++)
            len += (size_t)snprintf(buf + len, 22, "%s%lld", i > start ? "," : "",
                                    (long long)recipients[i]);
        buf[len++] = '}';
        buf[len] = '\0';
        notify_send(reg, t, buf, from_id, type, status_id);
    }
    free(buf);
}
