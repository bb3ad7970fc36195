/*
 * Trends scored by the timed task (src/social/trends_task.c, issue 32
 * item 4) and follow suggestions (src/api/suggestions.c), against a
 * server whose task runs one second after new activity.
 *
 * Scoring: tags used today by six, five and four accounts (Mastodon's
 * threshold is five), one used as much yesterday as today, statuses
 * favourited by six and five accounts and one as liked but ten hours
 * old; the lists come in score order, the old status decayed below the
 * fresh ones, one a day old gone. A tag whose best score is pushed twelve
 * hours back (three half-lives) falls behind the one it led. Nothing is
 * public before the staff approve it. The decoy tenant in the same
 * placement sees none of it, and its task never ran: an idle tenant runs
 * no statement (each run logs one line, which this counts), and the busy tenant
 * runs none either once its activity stops.
 *
 * Suggestions: friends of friends by how many of the viewer's follows
 * follow them, staff-featured accounts first, and none of the viewer,
 * followed, blocked, muted, suspended or dismissed accounts; the decoy
 * neither sees nor touches the host's. The global sources (most followed,
 * most interactions) are computed by the same task.
 *
 * The tenant's trends switches (trendable_by_default, trends) change the
 * public lists and the task, and not the decoy's.
 */
#include "world.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMEOUT 120
#define HOST "trends.example"
#define DECOY "decoy.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .extra_toml = "[workers]\ntrends_refresh_seconds = 1\n",
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"u1"},
              {"u2"},
              {"u3"},
              {"u4"},
              {"u5"},
              {"u6"},
              {"u7"},
              {"dora", DECOY, NULL, ADMIN_SCOPES},
              {"dan", DECOY}},
};

#define call_on(w, r, host, method, who, json, ...)                                                \
    eu_it_callf((w)->s, r, host, method, eu_it_tok(w, who), json, __VA_ARGS__)

static void
appoint(struct world *w)
{
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(w, "olga"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", DECOY,
             eu_it_id(w, "dora"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* Posts text (public) as who on HOST; returns its id (caller frees). */
static char *
post(struct world *w, const char *who, const char *text)
{
    struct eu_it_resp r = {0};
    char body[256];
    snprintf(body, sizeof(body), "{\"status\":\"%s\"}", text);
    call_on(w, &r, HOST, "POST", who, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(json_string_value(json_object_get(r.json, "id")));
    eu_it_resp_free(&r);
    return id;
}

static void
favourite(struct world *w, const char *who, const char *id)
{
    struct eu_it_resp r = {0};
    call_on(w, &r, HOST, "POST", who, NULL, "/api/v1/statuses/%s/favourite", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* The trends task's runs for tenant host so far: one log line each. */
static long
runs(struct world *w, const char *host)
{
    char want[128];
    snprintf(want, sizeof(want), "trends of %s scored", host);
    FILE *f = fopen(w->s->log_path, "r");
    ck_assert_ptr_nonnull(f);
    long n = 0;
    char line[4096];
    while (fgets(line, sizeof(line), f))
        n += strstr(line, want) != NULL;
    fclose(f);
    return n;
}

/* Waits until the host's task has scored everything done so far: past
 * the period after the last activity (its run is due by then), then until
 * no run came for more than a period (a run under way when the last
 * activity came is followed by another). At least one run must have come
 * since before. */
static void
settle(struct world *w, long before)
{
    usleep(1200 * 1000);
    for (long n = -1; n != runs(w, HOST);) {
        n = runs(w, HOST);
        usleep(1500 * 1000);
    }
    ck_assert_int_gt(runs(w, HOST), before);
}

/* The ids (or names, for tags) of the list at path as who, joined by
 * commas, into out. */
static void
list_ids(struct world *w, const char *host, const char *who, const char *path, const char *key,
         char *out, size_t len)
{
    struct eu_it_resp r = {0};
    call_on(w, &r, host, "GET", who, NULL, "%s", path);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_is_array(r.json), "%s: %s", path, r.body);
    out[0] = '\0';
    size_t i;
    json_t *e;
    json_array_foreach(r.json, i, e)
    {
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s", i ? "," : "",
                 json_string_value(json_object_get(e, key)));
    }
    eu_it_resp_free(&r);
}

START_TEST(test_scoring)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *users[] = {"u1", "u2", "u3", "u4", "u5", "u6"};
    char buf[512], want[512];

    /* #alpha by six accounts today, #beta by five, #gamma by four (under
     * the threshold), #delta by five today and five yesterday (as many
     * as expected: not trending). */
    /* Yesterday's #delta first: a run of the task while today's posts
     * go in must already see it (a tag keeps its best score). */
    free(eu_it_world_sql(&w, "INSERT INTO tags (tenant_id, name) VALUES (%s, 'delta')", w.tid));
    free(eu_it_world_sql(
        &w,
        "WITH a AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM accounts"
        "  WHERE tenant_id = %s AND username IN ('u1','u2','u3','u4','u5')),"
        " s AS (INSERT INTO statuses (tenant_id, id, account_id, text, content)"
        "  SELECT %s, eunha_day_first_id((now() AT TIME ZONE 'UTC')::date - 1) + a.n, a.id,"
        "  '#delta', '#delta' FROM a RETURNING id)"
        " INSERT INTO statuses_tags (tenant_id, status_id, tag_id) SELECT %s, s.id, t.id"
        " FROM s, tags t WHERE t.tenant_id = %s AND t.name = 'delta'",
        w.tid, w.tid, w.tid, w.tid));
    for (int i = 0; i < 6; i++) {
        free(post(&w, users[i], "about #alpha"));
        if (i < 5)
            free(post(&w, users[i], "about #beta and #delta"));
        if (i < 4)
            free(post(&w, users[i], "about #gamma"));
    }

    /* Statuses: hot by six accounts, warm by five, old as hot but ten
     * hours old (five half-lives), stale a day old. */
    char *hot = post(&w, "u1", "hot"), *warm = post(&w, "u2", "warm");
    char *old = post(&w, "u3", "old"), *stale = post(&w, "u4", "stale");
    const char *fans[] = {"u2", "u3", "u4", "u5", "u6", "olga"};
    for (int i = 0; i < 6; i++) {
        if (strcmp(fans[i], "u2") != 0)
            favourite(&w, fans[i], hot);
        if (i < 5 && strcmp(fans[i], "u2") != 0)
            favourite(&w, fans[i], warm);
        if (strcmp(fans[i], "u3") != 0)
            favourite(&w, fans[i], old);
        if (strcmp(fans[i], "u4") != 0)
            favourite(&w, fans[i], stale);
    }
    /* hot has five fans without u2: u1 reblogs it for the sixth. */
    call_on(&w, &r, HOST, "POST", "u1", NULL, "/api/v1/statuses/%s/reblog", hot);
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "POST", "u1", NULL, "/api/v1/statuses/%s/favourite", warm);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(eu_it_world_sql(&w,
                         "UPDATE statuses SET created_at = now() - interval '10 hours'"
                         " WHERE tenant_id = %s AND id = %s",
                         w.tid, old));
    free(eu_it_world_sql(&w,
                         "UPDATE statuses SET created_at = now() - interval '24 hours'"
                         " WHERE tenant_id = %s AND id = %s",
                         w.tid, stale));
    /* u1 favourites old now, so the task runs after the dates moved. */
    favourite(&w, "u1", old);
    settle(&w, 0);

    /* Nothing public before review; the staff see the candidates in
     * score order. */
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, NULL, "/api/v1/trends/statuses", "id", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, "olga", "/api/v1/admin/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha,beta");
    list_ids(&w, HOST, "olga", "/api/v1/admin/trends/statuses", "id", buf, sizeof(buf));
    snprintf(want, sizeof(want), "%s,%s,%s", hot, warm, old);
    ck_assert_str_eq(buf, want);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.requires_review")));
    EU_IT_EXPECT_JSTR(&r, "0.history.0.accounts", "6");
    EU_IT_EXPECT_JSTR(&r, "1.history.0.uses", "5");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.history")), 7);

    /* Approved one by one: shown in order, the rejected never. */
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    char *alpha = strdup(json_string_value(eu_it_jpath(r.json, "0.id")));
    char *beta = strdup(json_string_value(eu_it_jpath(r.json, "1.id")));
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/%s/approve", beta);
    EU_IT_EXPECT_STATUS(&r, 200);
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "beta");
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/%s/approve", alpha);
    list_ids(&w, HOST, "u5", "/api/v1/trends", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha,beta");
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/approve", old);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/approve", hot);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/reject", warm);
    EU_IT_EXPECT_STATUS(&r, 200);
    list_ids(&w, HOST, NULL, "/api/v1/trends/statuses", "id", buf, sizeof(buf));
    snprintf(want, sizeof(want), "%s,%s", hot, old);
    ck_assert_str_eq(buf, want);

    /* The decoy sees none of it, and its task never ran. */
    list_ids(&w, DECOY, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, DECOY, "dora", "/api/v1/admin/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, DECOY, "dora", "/api/v1/admin/trends/statuses", "id", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(runs(&w, DECOY), 0);

    /* Idle: three periods without activity, not one run more. */
    long before = runs(&w, HOST);
    ck_assert_int_gt(before, 0);
    sleep(3);
    ck_assert_int_eq(runs(&w, HOST), before);
    ck_assert_int_eq(runs(&w, DECOY), 0);

    /* Decay: alpha's best score reached twelve hours ago (three
     * half-lives) is kept, as today's is no higher, and now trails beta. */
    free(eu_it_world_sql(&w,
                         "UPDATE trend_scores SET scored_at = scored_at - interval '12 hours',"
                         " rank = rank - 3 WHERE tenant_id = %s AND kind = 0 AND target_id = %s",
                         w.tid, alpha));
    free(post(&w, "u1", "something #else"));
    settle(&w, before);
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "beta,alpha");

    free(alpha);
    free(beta);
    free(hot);
    free(warm);
    free(old);
    free(stale);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* The runs of host's task that found its trends switched off. */
static long
runs_off(struct world *w, const char *host)
{
    char want[128];
    snprintf(want, sizeof(want), "trends of %s are switched off", host);
    FILE *f = fopen(w->s->log_path, "r");
    ck_assert_ptr_nonnull(f);
    long n = 0;
    char line[4096];
    while (fgets(line, sizeof(line), f))
        n += strstr(line, want) != NULL;
    fclose(f);
    return n;
}

/* PATCHes the instance settings of host as who with body; expects want. */
static void
set_instance(struct world *w, const char *host, const char *who, const char *body, int want)
{
    struct eu_it_resp r = {0};
    call_on(w, &r, host, "PATCH", who, body, "/api/v1/admin/instance");
    if (want == 200)
        EU_IT_EXPECT_STATUS(&r, 200);
    else
        EU_IT_EXPECT_ERROR(&r, want);
    eu_it_resp_free(&r);
}

/*
 * The tenant's switches, Mastodon's Setting.trendable_by_default and
 * Setting.trends, in its instance settings: by default a tag or status
 * shows without review until the staff reject it; trends switched off
 * empty the public lists (the staff still see the candidates) and the
 * task scores nothing. The decoy in the same placement, with a trending
 * tag of its own and other switches, is unaffected either way.
 */
START_TEST(test_switches)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *users[] = {"u1", "u2", "u3", "u4", "u5", "u6"};
    char buf[512];

    /* The decoy's own trending tag, scored as the task would (score
     * 100 now), not reviewed. */
    free(eu_it_world_sql(&w,
                         "WITH g AS (INSERT INTO tags (tenant_id, name) VALUES (%s, 'zeta')"
                         " RETURNING id) INSERT INTO trend_scores (tenant_id, kind, target_id,"
                         " score, scored_at, rank) SELECT %s, 0, g.id, 100, now(),"
                         " ln(100) / ln(2) + extract(epoch FROM now())::float8 / 14400 FROM g",
                         w.decoy_tid, w.decoy_tid));

    /* #alpha by six accounts; hot favourited by five. */
    for (int i = 0; i < 6; i++)
        free(post(&w, users[i], "about #alpha"));
    char *hot = post(&w, "u1", "hot");
    for (int i = 1; i < 6; i++)
        favourite(&w, users[i], hot);
    settle(&w, 0);

    /* Review required (the default): nothing public, here or there. */
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, NULL, "/api/v1/trends/statuses", "id", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, DECOY, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    EU_IT_EXPECT_JSTR(&r, "0.name", "alpha");
    ck_assert(json_is_false(eu_it_jpath(r.json, "0.trendable")));
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.requires_review")));
    char *alpha = strdup(json_string_value(eu_it_jpath(r.json, "0.id")));

    /* A bad value is refused and changes nothing; a user may not. */
    set_instance(&w, HOST, "olga", "{\"trendable_by_default\":\"yes\"}", 422);
    set_instance(&w, HOST, "olga", "{\"trends\":1}", 422);
    set_instance(&w, HOST, "u1", "{\"trendable_by_default\":true}", 403);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/instance");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(json_object_get(r.json, "trendable_by_default"));
    ck_assert_ptr_null(json_object_get(r.json, "trends"));
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");

    /* Trendable by default: shown unreviewed, the staff's list says so
     * (still to review); the decoy still requires review. */
    set_instance(&w, HOST, "olga", "{\"trendable_by_default\":true}", 200);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/instance");
    ck_assert(json_is_true(json_object_get(r.json, "trendable_by_default")));
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha");
    list_ids(&w, HOST, "u2", "/api/v1/trends", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha");
    list_ids(&w, HOST, NULL, "/api/v1/trends/statuses", "id", buf, sizeof(buf));
    ck_assert_str_eq(buf, hot);
    call_on(&w, &r, HOST, "GET", NULL, NULL, "/api/v1/trends/statuses");
    EU_IT_EXPECT_JSTR(&r, "0.content", "<p>hot</p>");
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/trends/tags");
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.trendable")));
    ck_assert(json_is_true(eu_it_jpath(r.json, "0.requires_review")));
    list_ids(&w, DECOY, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");

    /* What the staff reject stays hidden. */
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/%s/reject", alpha);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_false(eu_it_jpath(r.json, "trendable")));
    ck_assert(json_is_false(eu_it_jpath(r.json, "requires_review")));
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/statuses/%s/reject", hot);
    EU_IT_EXPECT_STATUS(&r, 200);
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, NULL, "/api/v1/trends/statuses", "id", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/trends/tags/%s/approve", alpha);
    EU_IT_EXPECT_STATUS(&r, 200);
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha");

    /* Trends off: every public list is empty, the staff's are not; the
     * decoy, trendable by default now, shows its own tag. */
    set_instance(&w, HOST, "olga", "{\"trends\":false}", 200);
    set_instance(&w, DECOY, "dora", "{\"trendable_by_default\":true}", 200);
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, "u2", "/api/v1/trends", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, NULL, "/api/v1/trends/links", "url", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    list_ids(&w, HOST, "olga", "/api/v1/admin/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha");
    list_ids(&w, DECOY, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "zeta");
    list_ids(&w, HOST, NULL, "/api/v1/trends/statuses", "id", buf, sizeof(buf));
    ck_assert_str_eq(buf, "");

    /* New activity while off: the task runs, reads the switch and
     * scores nothing. */
    long scored = runs(&w, HOST);
    free(post(&w, "u1", "more #alpha"));
    for (int i = 0; i < 40 && runs_off(&w, HOST) == 0; i++)
        usleep(250 * 1000);
    ck_assert_int_eq(runs_off(&w, HOST), 1);
    ck_assert_int_eq(runs(&w, HOST), scored);
    ck_assert_int_eq(runs(&w, DECOY), 0);
    ck_assert_int_eq(runs_off(&w, DECOY), 0);

    /* Removed (null), the switch is on again, as Mastodon's default. */
    set_instance(&w, HOST, "olga", "{\"trends\":null}", 200);
    list_ids(&w, HOST, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "alpha");
    list_ids(&w, DECOY, NULL, "/api/v1/trends/tags", "name", buf, sizeof(buf));
    ck_assert_str_eq(buf, "zeta");

    free(alpha);
    free(hot);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

static void
follow(struct world *w, const char *who, const char *whom)
{
    struct eu_it_resp r = {0};
    call_on(w, &r, HOST, "POST", who, NULL, "/api/v1/accounts/%s/follow", eu_it_id(w, whom));
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
}

/* The v2 suggestions' account ids as u1 sees them. */
static void
suggested(struct world *w, char *out, size_t len)
{
    struct eu_it_resp r = {0};
    call_on(w, &r, HOST, "GET", "u1", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_STATUS(&r, 200);
    out[0] = '\0';
    size_t i;
    json_t *e;
    json_array_foreach(r.json, i, e)
    {
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s", i ? "," : "",
                 json_string_value(eu_it_jpath(e, "account.username")));
    }
    eu_it_resp_free(&r);
}

START_TEST(test_suggestions)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    char buf[512];

    /* Nothing to suggest yet. */
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "");

    /* u1 follows u2 and u3; u2 follows u4 and u5, u3 follows u4, u6 and
     * u1 (the viewer is never suggested to themself). */
    follow(&w, "u1", "u2");
    follow(&w, "u1", "u3");
    follow(&w, "u2", "u4");
    follow(&w, "u2", "u5");
    follow(&w, "u3", "u4");
    follow(&w, "u3", "u6");
    follow(&w, "u3", "u1");
    suggested(&w, buf, sizeof(buf));
    /* u4 by two follows first, then the others newest first. */
    ck_assert_str_eq(buf, "u4,u6,u5");
    call_on(&w, &r, HOST, "GET", "u1", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_JSTR(&r, "0.source", "past_interactions");
    EU_IT_EXPECT_JSTR(&r, "0.sources.0", "friends_of_friends");
    EU_IT_EXPECT_JSTR(&r, "0.account.id", eu_it_id(&w, "u4"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.sources")), 1);

    /* The staff feature u7 and u4: featured first (among them, by
     * friends of friends). A user may not. */
    call_on(&w, &r, HOST, "POST", "u2", NULL, "/api/v1/admin/suggestions/%s", eu_it_id(&w, "u7"));
    EU_IT_EXPECT_ERROR(&r, 403);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/suggestions/%s", eu_it_id(&w, "u7"));
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "username", "u7");
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/suggestions/%s", eu_it_id(&w, "u4"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/suggestions/999999");
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs"
                                          " WHERE tenant_id = %s AND action = 'feature'",
                                          w.tid),
                     2);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/suggestions");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "u4,u7,u6,u5");
    call_on(&w, &r, HOST, "GET", "u1", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_JSTR(&r, "0.source", "staff");
    EU_IT_EXPECT_JSTR(&r, "0.sources.0", "featured");
    EU_IT_EXPECT_JSTR(&r, "0.sources.1", "friends_of_friends");
    EU_IT_EXPECT_JSTR(&r, "1.sources.0", "featured");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "1.sources")), 1);
    call_on(&w, &r, HOST, "GET", "u1", NULL, "/api/v1/suggestions?limit=2");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.username", "u4");

    /* The decoy: no suggestion of the host's, no way to touch them. */
    call_on(&w, &r, DECOY, "GET", "dan", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    call_on(&w, &r, DECOY, "POST", "dora", NULL, "/api/v1/admin/suggestions/%s",
            eu_it_id(&w, "u5"));
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, DECOY, "DELETE", "dora", NULL, "/api/v1/admin/suggestions/%s",
            eu_it_id(&w, "u7"));
    EU_IT_EXPECT_ERROR(&r, 404);
    call_on(&w, &r, DECOY, "DELETE", "dan", NULL, "/api/v1/suggestions/%s", eu_it_id(&w, "u7"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, DECOY, "GET", "u1", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM suggestion_dismissals"
                                          " WHERE tenant_id = %s",
                                          w.decoy_tid),
                     0);
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "u4,u7,u6,u5");

    /* Blocked, muted, suspended and dismissed accounts drop out, the
     * dismissal for good. */
    call_on(&w, &r, HOST, "POST", "u1", NULL, "/api/v1/accounts/%s/block", eu_it_id(&w, "u6"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "POST", "u1", NULL, "/api/v1/accounts/%s/mute", eu_it_id(&w, "u5"));
    EU_IT_EXPECT_STATUS(&r, 200);
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "u4,u7");
    call_on(&w, &r, HOST, "DELETE", "u1", NULL, "/api/v1/suggestions/%s", eu_it_id(&w, "u4"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "u7");
    /* Dismissed by u1 only: u5 (who follows nobody) still has u4. */
    call_on(&w, &r, HOST, "GET", "u5", NULL, "/api/v2/suggestions");
    ck_assert_ptr_nonnull(eu_it_find(r.json, "account.username", "u4"));
    free(eu_it_world_sql(&w,
                         "UPDATE accounts SET suspended_at = now() WHERE tenant_id = %s"
                         " AND id = %s",
                         w.tid, eu_it_id(&w, "u7")));
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "");

    /* Unfeatured: gone from the staff's list, with its audit row. */
    call_on(&w, &r, HOST, "DELETE", "olga", NULL, "/api/v1/admin/suggestions/%s",
            eu_it_id(&w, "u4"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v1/admin/suggestions");
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs"
                                          " WHERE tenant_id = %s AND action = 'unfeature'",
                                          w.tid),
                     1);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* A public status of who, written as a received one would be (no wake of
 * the trends task), favourited by each of fans; sensitive when asked. */
static void
liked_status(struct world *w, const char *who, bool sensitive, const char *fans)
{
    free(eu_it_world_sql(w,
                         "WITH s AS (INSERT INTO statuses (tenant_id, account_id, text, content,"
                         " sensitive) VALUES (%s, %s, 'liked', '<p>liked</p>', %s) RETURNING id)"
                         " INSERT INTO favourites (tenant_id, account_id, status_id)"
                         " SELECT %s, a.id, s.id FROM s, accounts a WHERE a.tenant_id = %s"
                         " AND a.username = ANY (string_to_array('%s', ','))",
                         w->tid, eu_it_id(w, who), sensitive ? "true" : "false", w->tid, w->tid,
                         fans));
}

/*
 * The global sources (Mastodon's most_followed and most_interactions),
 * computed by the trends task's first run: u7 is followed by five users
 * who signed in lately and its status drew five favourites, u5's status
 * six, u6's as many but u6 posts sensitive media (left out, as Mastodon's
 * account summaries), u4 as many but locked. The Suggestion entities
 * carry every source, the deprecated source is "global"; a featured
 * account merges its sources. The decoy has none of it.
 */
START_TEST(test_global_suggestions)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    char buf[512];

    free(eu_it_world_sql(&w, "UPDATE users SET last_sign_in_at = now() WHERE tenant_id = %s",
                         w.tid));
    const char *fans[] = {"u2", "u3", "u4", "u5", "u6"};
    for (int i = 0; i < 5; i++)
        follow(&w, fans[i], "u7");
    liked_status(&w, "u7", false, "u1,u2,u3,u4,u5");
    liked_status(&w, "u5", false, "u1,u2,u3,u4,u6,olga");
    liked_status(&w, "u6", true, "u1,u2,u3,u4,u5,olga");
    liked_status(&w, "u4", false, "u1,u2,u3,u5,u6,olga");
    free(eu_it_world_sql(&w, "UPDATE accounts SET locked = true WHERE tenant_id = %s AND id = %s",
                         w.tid, eu_it_id(&w, "u4")));
    /* Nothing computed before the task's run. */
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "");

    free(post(&w, "olga", "wake up"));
    settle(&w, 0);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM follow_recommendations"
                                          " WHERE tenant_id = %s",
                                          w.tid),
                     2);

    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "u7,u5");
    call_on(&w, &r, HOST, "GET", "u1", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "0.source", "global");
    EU_IT_EXPECT_JSTR(&r, "0.sources.0", "most_followed");
    EU_IT_EXPECT_JSTR(&r, "0.sources.1", "most_interactions");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "0.sources")), 2);
    EU_IT_EXPECT_JSTR(&r, "1.account.username", "u5");
    EU_IT_EXPECT_JSTR(&r, "1.sources.0", "most_interactions");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "1.sources")), 1);
    call_on(&w, &r, HOST, "GET", "u1", NULL, "/api/v1/suggestions");
    EU_IT_EXPECT_JSTR(&r, "0.username", "u7");

    /* u2 follows u7: only u5 is left for u2. */
    call_on(&w, &r, HOST, "GET", "u2", NULL, "/api/v2/suggestions");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.account.username", "u5");

    /* Featured too: first, its sources merged. */
    call_on(&w, &r, HOST, "POST", "olga", NULL, "/api/v1/admin/suggestions/%s", eu_it_id(&w, "u5"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call_on(&w, &r, HOST, "GET", "u1", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_JSTR(&r, "0.account.username", "u5");
    EU_IT_EXPECT_JSTR(&r, "0.source", "staff");
    EU_IT_EXPECT_JSTR(&r, "0.sources.0", "featured");
    EU_IT_EXPECT_JSTR(&r, "0.sources.1", "most_interactions");
    EU_IT_EXPECT_JSTR(&r, "1.account.username", "u7");

    /* Dismissed: gone for u1 alone. */
    call_on(&w, &r, HOST, "DELETE", "u1", NULL, "/api/v1/suggestions/%s", eu_it_id(&w, "u7"));
    EU_IT_EXPECT_STATUS(&r, 200);
    suggested(&w, buf, sizeof(buf));
    ck_assert_str_eq(buf, "u5");
    call_on(&w, &r, HOST, "GET", "olga", NULL, "/api/v2/suggestions");
    ck_assert_ptr_nonnull(eu_it_find(r.json, "account.username", "u7"));

    /* The decoy: none of the host's, and no rows of its own. */
    call_on(&w, &r, DECOY, "GET", "dan", NULL, "/api/v2/suggestions");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM follow_recommendations"
                                          " WHERE tenant_id = %s",
                                          w.decoy_tid),
                     0);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("trends_scoring");
    EU_IT_ADD_TCASE(s, test_scoring, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_switches, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_suggestions, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_global_suggestions, TIMEOUT);
    return eu_it_run_suite(s);
}
