/*
 * Trends scored ahead of time, Mastodon's way (src/social/trends_task.c,
 * docs/trends.md): a timed task per tenant rescores its tags, statuses
 * and links into trend_scores (tenant migration 0069), which the trends
 * endpoints (src/api/trends.c) read by an index.
 *
 * The task sleeps until something wakes it: code that stores new public
 * activity (a status, a reblog, a favourite, a link's card) calls
 * eu_trends_touch(), which arms the tenant's task [workers]
 * trends_refresh_seconds ahead unless it is armed already. A tenant with
 * no new activity is never scored: no timer, no statement.
 */
#ifndef EUNHA_TRENDS_H
#define EUNHA_TRENDS_H

#include "eunha/sql.h"

struct eu_app;
struct eu_tenant;
struct eu_task_run;

/* Kinds of trend_scores rows. */
enum eu_trend_kind {
    EU_TREND_TAG = 0,
    EU_TREND_STATUS = 1,
    EU_TREND_LINK = 2,
};

/* Mastodon's half-lives, in seconds: a tag's highest score halves in 4
 * hours, a link's in 8, a status's score from its creation in 2. */
#define EU_TREND_TAG_HALFLIFE "14400"
#define EU_TREND_STATUS_HALFLIFE "7200"
#define EU_TREND_LINK_HALFLIFE "28800"
/* log2 of Mastodon's decay thresholds: a tag or link shows while its
 * decayed score is at least 1, a status while at least 0.3. */
#define EU_TREND_TAG_FLOOR "0"
#define EU_TREND_STATUS_FLOOR "-1.7369655941662063"
#define EU_TREND_LINK_FLOOR "0"

/* Marks t as having new public activity: its trends are rescored within
 * [workers] trends_refresh_seconds. Costs no database work. NULL t is
 * ignored. */
void eu_trends_touch(struct eu_app *app, struct eu_tenant *t);

/* The timed task (EU_TASK_TRENDS): rescores t's trends, then sleeps. */
void eu_trends_task_run(struct eu_task_run *run);

extern const struct eu_sql eu_trends_task_sql[];

#endif /* EUNHA_TRENDS_H */
