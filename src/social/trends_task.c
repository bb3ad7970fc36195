/*
 * The trends task: a tenant's tags, statuses and links scored the way
 * Mastodon's Trends::Tags, ::Statuses and ::Links score them, into
 * trend_scores (tenant migration 0069), so the trends endpoints
 * (src/api/trends.c) read a few indexed rows instead of a week of
 * activity. docs/trends.md describes the scores.
 *
 * A tag or link is scored by the distinct accounts whose public statuses
 * used it today (observed) against yesterday's (expected, at least one):
 * (observed - expected)^2 / expected once observed reaches [workers]
 * trends_min_accounts and passes expected. Its highest score of the last
 * two days is kept with the time it was reached and halves every 4 hours
 * (a link's every 8). A status is scored by the distinct accounts that
 * favourited or reblogged it, (observed - 1)^2, halving every 2 hours
 * from its creation. Rows whose decayed score fell under Mastodon's
 * threshold are dropped.
 *
 * The task runs only when woken: eu_trends_touch(), called where new
 * public activity is stored, marks the tenant and arms the task
 * trends_refresh_seconds ahead (an armed task is left as it is, so a busy
 * tenant is rescored at most once per period). Nothing polls for it, and
 * a run woken otherwise finds no mark and runs nothing, so an idle tenant
 * costs no timer and no statement; as the scores decay by a rank the readers compare with
 * the time they read, its trends fade without another run. A wake lost
 * to a restart is made again by the next activity. A run first reads the
 * tenant's trends switch and scores nothing when it is off.
 *
 * The same runs recompute the follow suggestions' global sources
 * (most_followed, most_interactions; src/api/suggestions.c), at most once
 * an hour per tenant, whether or not its trends are on.
 */
#include "eunha/trends.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/tenant.h"

enum {
    TASK_ENABLED,
    TASK_SUGGESTIONS,
    TASK_TAGS,
    TASK_LINKS,
    TASK_STATUSES,
    TASK_DONE,
};

/*
 * A tag's or link's scoring: USES lists (id, day, account_id) for the
 * public statuses of yesterday and today (b.today) that used it; $2 is
 * the least observed accounts. The row's highest score is replaced when
 * today's passes it or when it is older than two days (Mastodon's
 * max_score_cooldown); every row of the kind not kept is deleted, so
 * what no longer trends leaves the table.
 */
#define DAY_SCORES(KIND, HALFLIFE, FLOOR, USES)                                                    \
    "WITH b AS (SELECT (now() AT TIME ZONE 'UTC')::date AS today, now() AS at),"                   \
    " u AS MATERIALIZED (" USES "),"                                                               \
    " c AS (SELECT u.id, (count(DISTINCT u.account_id) FILTER (WHERE u.day = b.today))::float8"    \
    "  AS observed, greatest(1, count(DISTINCT u.account_id) FILTER (WHERE u.day < b.today))"      \
    "  ::float8 AS expected FROM u, b GROUP BY u.id),"                                             \
    " p AS (SELECT r.target_id AS id, r.score, r.scored_at FROM trend_scores r"                    \
    "  WHERE r.tenant_id = $1 AND r.kind = " KIND "),"                                             \
    " m AS (SELECT coalesce(c.id, p.id) AS id, CASE WHEN c.observed IS NULL"                       \
    "  OR c.observed < $2::int OR c.observed <= c.expected THEN 0"                                 \
    "  ELSE (c.observed - c.expected) ^ 2 / c.expected END AS score,"                              \
    "  CASE WHEN p.scored_at >= b.at - interval '2 days' THEN p.score ELSE 0 END AS high,"         \
    "  p.scored_at FROM c FULL JOIN p ON p.id = c.id, b),"                                         \
    " n AS (SELECT m.id, CASE WHEN m.score > m.high THEN m.score ELSE m.high END AS score,"        \
    "  CASE WHEN m.score > m.high THEN b.at ELSE m.scored_at END AS scored_at FROM m, b),"         \
    " k AS (SELECT n.id, n.score, n.scored_at, ln(n.score) / ln(2)"                                \
    "  + extract(epoch FROM n.scored_at)::float8 / " HALFLIFE                                      \
    " AS rank FROM n WHERE n.score > 0),"                                                          \
    " kept AS (SELECT k.* FROM k, b"                                                               \
    "  WHERE k.rank >= " FLOOR " + extract(epoch FROM b.at)::float8 / " HALFLIFE "),"              \
    " d AS (DELETE FROM trend_scores r WHERE r.tenant_id = $1 AND r.kind = " KIND                  \
    "  AND NOT EXISTS (SELECT 1 FROM kept WHERE kept.id = r.target_id)),"                          \
    " i AS (INSERT INTO trend_scores (tenant_id, kind, target_id, score, scored_at, rank)"         \
    "  SELECT $1, " KIND ", kept.id, kept.score, kept.scored_at, kept.rank FROM kept"              \
    "  ON CONFLICT (tenant_id, kind, target_id) DO UPDATE SET score = excluded.score,"             \
    "  scored_at = excluded.scored_at, rank = excluded.rank)"                                      \
    " SELECT count(*) FROM kept"

/* How many global suggestions a tenant keeps, and how often at most they
 * are recomputed (Mastodon's scheduler runs daily; a run of this task
 * comes at most once a trends period, which would be too often for a
 * month of activity). */
#define SUGGESTIONS_KEPT "100"
#define SUGGESTIONS_EVERY_MS (3600 * 1000)

const struct eu_sql eu_trends_task_sql[] = {
    /* The tenant's trends switch (Mastodon's Setting.trends, on unless
     * its instance settings say false, docs/instance.md): a tenant that
     * switched them off is not scored. One row, "t" or "f". */
    [TASK_ENABLED] = {"trends_task.enabled",
                      "SELECT coalesce((SELECT (s.value ->> 'trends')::bool FROM settings s"
                      " WHERE s.tenant_id = $1 AND s.key = 'instance'), true)::text AS enabled"},
    /*
     * The follow suggestions' global sources (tenant migration 0071), as
     * Mastodon's global_follow_recommendations: accounts followed by at
     * least five of the users who signed in within 30 days
     * ("most_followed"), and accounts whose statuses of the last 30 days
     * drew at least five favourites and reblogs ("most_interactions");
     * each source ranks n / (1 + n), summed over both. Candidates are as
     * Mastodon's account_summaries: discoverable, not locked, silenced,
     * suspended or moved, and their latest 20 statuses mostly not
     * sensitive. The best SUGGESTIONS_KEPT are kept, as Mastodon's
     * scheduler keeps a set of 100 (the API pages 80 at most).
     */
    [TASK_SUGGESTIONS] =
        {"trends_task.suggestions",
         "WITH active AS (SELECT u.account_id FROM users u WHERE u.tenant_id = $1"
         "  AND u.last_sign_in_at >= now() - interval '30 days'),"
         " mf AS (SELECT f.target_account_id AS id, count(*)::float8 AS n FROM active"
         "  JOIN follows f ON f.tenant_id = $1 AND f.account_id = active.account_id"
         "  GROUP BY f.target_account_id HAVING count(*) >= 5),"
         " mi AS (SELECT s.account_id AS id, sum(s.reblogs_count + s.favourites_count)::float8"
         "  AS n FROM statuses s WHERE s.tenant_id = $1 AND s.id >= eunha_day_first_id("
         "  ((now() - interval '30 days') AT TIME ZONE 'UTC')::date) AND s.deleted_at IS NULL"
         "  AND s.reblog_of_id IS NULL GROUP BY s.account_id"
         "  HAVING sum(s.reblogs_count + s.favourites_count) >= 5),"
         " r AS (SELECT mf.id, mf.n / (1 + mf.n) AS rank, 'most_followed' AS reason FROM mf"
         "  UNION ALL SELECT mi.id, mi.n / (1 + mi.n), 'most_interactions' FROM mi),"
         " k AS (SELECT r.id, sum(r.rank) AS rank, array_agg(r.reason ORDER BY r.reason)"
         "  AS reason FROM r JOIN accounts a ON a.tenant_id = $1 AND a.id = r.id"
         "  WHERE a.discoverable AND NOT a.locked AND a.suspended_at IS NULL"
         "  AND a.silenced_at IS NULL AND a.moved_to_account_id IS NULL"
         "  AND (SELECT count(*) > 0 AND 2 * count(*) FILTER (WHERE x.sensitive) <= count(*)"
         "  FROM (SELECT s.sensitive FROM statuses s WHERE s.tenant_id = $1"
         "  AND s.account_id = a.id AND s.deleted_at IS NULL AND s.reblog_of_id IS NULL"
         "  ORDER BY s.id DESC LIMIT 20) x)"
         "  GROUP BY r.id ORDER BY sum(r.rank) DESC, r.id DESC LIMIT " SUGGESTIONS_KEPT "),"
         " d AS (DELETE FROM follow_recommendations x WHERE x.tenant_id = $1"
         "  AND NOT EXISTS (SELECT 1 FROM k WHERE k.id = x.account_id)),"
         " i AS (INSERT INTO follow_recommendations (tenant_id, account_id, rank, reason)"
         "  SELECT $1, k.id, k.rank, k.reason FROM k ON CONFLICT (tenant_id, account_id)"
         "  DO UPDATE SET rank = excluded.rank, reason = excluded.reason)"
         " SELECT count(*) FROM k"},
    /* Public statuses, not reblogs, of accounts not silenced, by tag. */
    [TASK_TAGS] = {"trends_task.tags",
                   DAY_SCORES("0", EU_TREND_TAG_HALFLIFE, EU_TREND_TAG_FLOOR,
                              "SELECT t.tag_id AS id, eunha_id_day(t.status_id) AS day,"
                              " s.account_id FROM b, statuses_tags t JOIN statuses s"
                              " ON s.tenant_id = t.tenant_id AND s.id = t.status_id"
                              " JOIN accounts a ON a.tenant_id = s.tenant_id"
                              " AND a.id = s.account_id WHERE t.tenant_id = $1"
                              " AND t.status_id >= eunha_day_first_id(b.today - 1)"
                              " AND s.deleted_at IS NULL AND s.visibility = 0"
                              " AND s.reblog_of_id IS NULL AND a.silenced_at IS NULL")},
    /* Likewise by preview card, leaving out sensitive statuses and those
     * behind a content warning, as Mastodon's Trends::Links#register. */
    [TASK_LINKS] = {"trends_task.links",
                    DAY_SCORES("2", EU_TREND_LINK_HALFLIFE, EU_TREND_LINK_FLOOR,
                               "SELECT t.preview_card_id AS id, eunha_id_day(t.status_id) AS day,"
                               " s.account_id FROM b, preview_cards_statuses t JOIN statuses s"
                               " ON s.tenant_id = t.tenant_id AND s.id = t.status_id"
                               " JOIN accounts a ON a.tenant_id = s.tenant_id"
                               " AND a.id = s.account_id WHERE t.tenant_id = $1"
                               " AND t.status_id >= eunha_day_first_id(b.today - 1)"
                               " AND s.deleted_at IS NULL AND s.visibility = 0"
                               " AND NOT s.sensitive AND s.spoiler_text = ''"
                               " AND s.reblog_of_id IS NULL AND a.silenced_at IS NULL")},
    /*
     * The statuses favourited or reblogged since yesterday began, and
     * those trending already, each scored by the distinct accounts that
     * favourited or reblogged it; eligible as Mastodon's: public, not a
     * reply nor a reblog, not sensitive, no content warning, its author
     * discoverable and neither silenced nor suspended. $2 as above.
     */
    [TASK_STATUSES] =
        {"trends_task.statuses",
         "WITH b AS (SELECT now() AS at,"
         "  eunha_day_first_id((now() AT TIME ZONE 'UTC')::date - 1) AS since),"
         " cand AS (SELECT f.status_id AS id FROM b, favourites f WHERE f.tenant_id = $1"
         "  AND f.id >= b.since UNION SELECT r.reblog_of_id FROM b, statuses r"
         "  WHERE r.tenant_id = $1 AND r.id >= b.since AND r.reblog_of_id IS NOT NULL"
         "  UNION SELECT x.target_id FROM trend_scores x WHERE x.tenant_id = $1 AND x.kind = 1),"
         " c AS (SELECT s.id, s.created_at, (SELECT count(*) FROM (SELECT f.account_id"
         "  FROM favourites f WHERE f.tenant_id = $1 AND f.status_id = s.id UNION"
         "  SELECT r.account_id FROM statuses r WHERE r.tenant_id = $1 AND r.reblog_of_id = s.id"
         "  AND r.deleted_at IS NULL) x)::float8 AS observed"
         "  FROM cand JOIN statuses s ON s.tenant_id = $1 AND s.id = cand.id"
         "  JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"
         "  WHERE s.visibility = 0 AND s.deleted_at IS NULL AND s.reblog_of_id IS NULL"
         "  AND s.in_reply_to_id IS NULL AND NOT s.sensitive AND s.spoiler_text = ''"
         "  AND a.discoverable AND a.silenced_at IS NULL AND a.suspended_at IS NULL),"
         " k AS (SELECT c.id, (c.observed - 1) ^ 2 AS score, c.created_at AS scored_at,"
         "  ln((c.observed - 1) ^ 2) / ln(2) + extract(epoch FROM c.created_at)::float8"
         "  / " EU_TREND_STATUS_HALFLIFE " AS rank FROM c"
         "  WHERE c.observed >= $2::int AND c.observed > 1),"
         " kept AS (SELECT k.* FROM k, b WHERE k.rank >= " EU_TREND_STATUS_FLOOR
         "  + extract(epoch FROM b.at)::float8 / " EU_TREND_STATUS_HALFLIFE "),"
         " d AS (DELETE FROM trend_scores r WHERE r.tenant_id = $1 AND r.kind = 1"
         "  AND NOT EXISTS (SELECT 1 FROM kept WHERE kept.id = r.target_id)),"
         " i AS (INSERT INTO trend_scores (tenant_id, kind, target_id, score, scored_at, rank)"
         "  SELECT $1, 1, kept.id, kept.score, kept.scored_at, kept.rank FROM kept"
         "  ON CONFLICT (tenant_id, kind, target_id) DO UPDATE SET score = excluded.score,"
         "  scored_at = excluded.scored_at, rank = excluded.rank)"
         " SELECT count(*) FROM kept"},
    {0},
};

/* A tenant's mark of new activity (its EU_SLOT_TRENDS slot): set by
 * eu_trends_touch(), cleared when a run begins. A run woken by anything
 * else (a tenant's move wakes every task) finds it clear and runs no
 * statement; a marked tenant keeps its slot while it sleeps. */
struct trends_mark {
    bool dirty;
    int64_t suggested_ms; /* monotonic: the last refresh of the suggestions, 0 never */
};

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
mark_dispose(void *data)
{
    free(data);
}

static bool
mark_idle(const void *data)
{
    return !((const struct trends_mark *)data)->dirty;
}

static const struct eu_tenant_slot_ops mark_ops = {mark_dispose, mark_idle};

void
eu_trends_touch(struct eu_app *app, struct eu_tenant *t)
{
    if (!app || !t || t->removed)
        return;
    struct trends_mark *m = eu_tenant_slot(t, EU_SLOT_TRENDS);
    if (!m) {
        m = eu_xcalloc(1, sizeof(*m));
        eu_tenant_slot_set(t, EU_SLOT_TRENDS, m, &mark_ops);
    }
    m->dirty = true;
    eu_queue_task_wake(t, EU_TASK_TRENDS, (int64_t)app->cfg->trends_refresh_s * 1000);
}

/* One run walks the statements in order on the run's connection. */
struct trends_run {
    struct eu_task_run *run;
    int step;
    int kept[TASK_DONE]; /* rows kept by each statement */
    bool off;            /* the tenant switched its trends off */
    bool suggest;        /* the suggestions are due */
    char min_accounts[16];
};

static void step(struct trends_run *tr);

/* The step after tr's: the suggestions only when due, the scores only
 * when trends are on. */
static int
next_step(const struct trends_run *tr)
{
    int n = tr->step + 1;
    if (n == TASK_SUGGESTIONS && !tr->suggest)
        n++;
    if (n == TASK_TAGS && tr->off)
        n = TASK_DONE;
    return n;
}

static void
on_step(PGresult *res, enum eu_db_status st, void *arg)
{
    struct trends_run *tr = arg;
    if (st != EU_DB_OK) {
        eu_log_warn("trends", "cannot score trends (%s): %s", eu_trends_task_sql[tr->step].name,
                    res ? PQresultErrorMessage(res) : "database unavailable");
        struct eu_task_run *run = tr->run;
        /* Still to score: the retry must not find the mark clear. */
        struct trends_mark *m = eu_tenant_slot(eu_task_run_tenant(run), EU_SLOT_TRENDS);
        if (m)
            m->dirty = true;
        free(tr);
        eu_task_run_fail(run);
        return;
    }
    /* Switched off: the scores stay as they were (the public lists are
     * empty meanwhile), and the next activity after the switch is
     * turned on again scores afresh. The suggestions are not trends. */
    if (tr->step == TASK_ENABLED)
        tr->off = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 'f';
    else
        tr->kept[tr->step] = PQntuples(res) ? atoi(PQgetvalue(res, 0, 0)) : 0;
    if (tr->step == TASK_SUGGESTIONS) {
        struct trends_mark *m = eu_tenant_slot(eu_task_run_tenant(tr->run), EU_SLOT_TRENDS);
        if (m)
            m->suggested_ms = now_ms();
    }
    tr->step = next_step(tr);
    step(tr);
}

static void
step(struct trends_run *tr)
{
    if (tr->step == TASK_DONE) {
        struct eu_task_run *run = tr->run;
        /* One line a run, which the tests count: a tenant without new
         * activity has none. */
        if (tr->off)
            eu_log_info("trends", "trends of %s are switched off: not scored (%d suggestions)",
                        eu_task_run_tenant(run)->domain, tr->kept[TASK_SUGGESTIONS]);
        else
            eu_log_info("trends",
                        "trends of %s scored: %d tags, %d links, %d statuses, %d suggestions",
                        eu_task_run_tenant(run)->domain, tr->kept[TASK_TAGS], tr->kept[TASK_LINKS],
                        tr->kept[TASK_STATUSES], tr->kept[TASK_SUGGESTIONS]);
        free(tr);
        /* Asleep until the next activity wakes it. */
        eu_task_run_done(run, -1);
        return;
    }
    const char *params[] = {tr->min_accounts};
    eu_db_conn_stmt(eu_task_run_conn(tr->run), &eu_trends_task_sql[tr->step],
                    tr->step == TASK_ENABLED || tr->step == TASK_SUGGESTIONS ? 0 : 1, params,
                    on_step, tr);
}

void
eu_trends_task_run(struct eu_task_run *run)
{
    struct trends_mark *m = eu_tenant_slot(eu_task_run_tenant(run), EU_SLOT_TRENDS);
    if (!m || !m->dirty) {
        eu_task_run_done(run, -1); /* nothing new: not one statement */
        return;
    }
    m->dirty = false;
    struct trends_run *tr = eu_xcalloc(1, sizeof(*tr));
    tr->run = run;
    tr->suggest = m->suggested_ms == 0 || now_ms() - m->suggested_ms >= SUGGESTIONS_EVERY_MS;
    snprintf(tr->min_accounts, sizeof(tr->min_accounts), "%d",
             eu_task_run_app(run)->cfg->trends_min_accounts);
    step(tr);
}
