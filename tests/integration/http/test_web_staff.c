/*
 * The staff's moderation pages and the settings pages over plain HTTP with
 * cookies and CSRF tokens (webform.h): a moderator approves and rejects
 * sign-ups, assigns, resolves and reopens a report and acts on the
 * reported account, each leaving the rows and audit rows the admin API
 * leaves; a role with manage_reports only sees the reports and gets 403 on
 * the sign-ups; a plain user gets 403 everywhere; a post without the CSRF
 * token changes nothing; and the decoy tenant in the same placement, whose
 * report and pending sign-up sit beside the tenant's, is neither shown nor
 * reachable by id. Rules, custom emoji and domain blocks are changed from
 * their pages. Then the settings pages: authorized apps and sessions,
 * each revoked.
 */
#include "harness.h"
#include "webform.h"
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 180
#define HOST "webstaff.example"
#define DECOY "decoy.example"
#define PW "correct+horse+battery+staple"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"olga"},
              {"mona"},
              {"mick"},
              {"alice"},
              {"bob"},
              {"pete"},
              {"rex"},
              {"dora", DECOY},
              {"dan", DECOY},
              {"dpete", DECOY, "pete"}},
};

/* Signs b in as login, coming back to path. */
static void
sign_in(struct eu_it_webform *b, const char *login, const char *path)
{
    struct eu_it_resp r = {0};
    char url[512], fields[512];
    snprintf(url, sizeof(url), "/auth/sign_in?return_to=%s", path);
    eu_it_webform_send(b, &r, "GET", url, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(fields, sizeof(fields), "email=%s&password=" PW "&return_to=%s", login, path);
    eu_it_webform_post(b, &r, "/auth/sign_in", fields);
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_resp_free(&r);
}

static long
count(struct world *w, const char *fmt, const char *a, const char *b)
{
    char sql[1024];
    snprintf(sql, sizeof(sql), fmt, a, b);
    return eu_it_world_sql_long(w, "%s", sql);
}

/* Roles, pending sign-ups and reports on both tenants. Returns the
 * tenant's report id and the decoy's (caller frees). */
static void
seed(struct world *w, char **report, char **decoy_report)
{
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 1 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mona")));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 3 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "olga")));
    free(eu_it_world_sql(w,
                         "INSERT INTO user_roles (tenant_id, id, name, position, permissions,"
                         " highlighted) VALUES (%s, 77, 'Reports desk', 5, 16, false)",
                         w->tid));
    free(eu_it_world_sql(w,
                         "UPDATE users SET role_id = 77 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mick")));
    free(eu_it_world_sql(w,
                         "UPDATE users SET approved = false, reason = 'I like pages'"
                         " WHERE tenant_id = %s AND account_id IN (%s, %s)",
                         w->tid, eu_it_id(w, "pete"), eu_it_id(w, "rex")));
    free(eu_it_world_sql(w,
                         "UPDATE users SET approved = false, reason = 'decoy reason'"
                         " WHERE tenant_id = %s AND account_id = %s",
                         w->decoy_tid, eu_it_id(w, "dpete")));
    struct eu_it_resp r = {0};
    char body[256];
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"comment\":\"spam from bob\"}",
             eu_it_id(w, "bob"));
    eu_it_callf(w->s, &r, HOST, "POST", eu_it_tok(w, "alice"), body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    *report = strdup(eu_it_json_str(&r, "id"));
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"comment\":\"decoy comment\"}",
             eu_it_id(w, "dan"));
    eu_it_callf(w->s, &r, DECOY, "POST", eu_it_tok(w, "dora"), body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    *decoy_report = strdup(eu_it_json_str(&r, "id"));
    eu_it_resp_free(&r);
}

START_TEST(test_moderation_pages)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    char *report, *decoy_report;
    seed(&w, &report, &decoy_report);
    struct eu_it_resp r = {0};
    char path[256], fields[512];

    /* Signed out: to the sign-in page. */
    struct eu_it_webform mona = {.s = w.s, .host = HOST};
    eu_it_webform_send(&mona, &r, "GET", "/admin/reports", NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    sign_in(&mona, "mona", "%2Fadmin%2Freports");

    /* The queue: the tenant's report, not the decoy's. */
    eu_it_webform_send(&mona, &r, "GET", "/admin/reports", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "spam from bob"));
    ck_assert_ptr_null(strstr(r.body, "decoy comment"));
    ck_assert_ptr_nonnull(strstr(r.body, "aria-current=\"page\""));
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"/admin/accounts\""));
    snprintf(path, sizeof(path), "/admin/reports/%s", decoy_report);
    eu_it_webform_send(&mona, &r, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_ptr_null(strstr(r.body, "decoy comment"));

    /* The report: assign to me, resolve, reopen, each audited. */
    snprintf(path, sizeof(path), "/admin/reports/%s", report);
    eu_it_webform_send(&mona, &r, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "Assign to me"));
    /* Without the token: nothing. */
    eu_it_webform_send(&mona, &r, "POST", path, "do=assign");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", report,
                           "assigned_account_id IS NOT NULL"),
                     0);
    eu_it_webform_post(&mona, &r, path, "do=assign");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), path);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", report,
                           "assigned_account_id IS NOT NULL"),
                     1);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM admin_action_logs WHERE target_id = %s"
                           " AND action = '%s'",
                           report, "assigned_to_self"),
                     1);
    eu_it_webform_send(&mona, &r, "GET", path, NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "Unassign"));
    eu_it_webform_post(&mona, &r, path, "do=resolve");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", report,
                           "action_taken_at IS NOT NULL"),
                     1);
    eu_it_webform_send(&mona, &r, "GET", "/admin/reports?resolved=1", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "spam from bob"));
    eu_it_webform_post(&mona, &r, path, "do=reopen");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", report,
                           "action_taken_at IS NULL"),
                     1);
    /* The decoy's report cannot be changed through the tenant's host. */
    snprintf(path, sizeof(path), "/admin/reports/%s", decoy_report);
    eu_it_webform_post(&mona, &r, path, "do=resolve");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", decoy_report,
                           "action_taken_at IS NULL"),
                     1);

    /* Acting on the reported account from the report: a limit with a
     * text, which resolves the report and writes a strike. */
    snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "bob"));
    snprintf(fields, sizeof(fields), "do=silence&text=Please+stop&report_id=%s", report);
    eu_it_webform_post(&mona, &r, path, fields);
    EU_IT_EXPECT_STATUS(&r, 303);
    snprintf(path, sizeof(path), "/admin/reports/%s", report);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), path);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM accounts WHERE id = %s AND %s",
                           eu_it_id(&w, "bob"), "silenced_at IS NOT NULL"),
                     1);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM account_warnings WHERE target_account_id = %s"
                           " AND text = '%s'",
                           eu_it_id(&w, "bob"), "Please stop"),
                     1);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", report,
                           "action_taken_at IS NOT NULL"),
                     1);
    /* A text longer than the API takes: refused, nothing written (the
     * form built here: webform's post holds 4 KiB). */
    {
        size_t cap = 5200 + strlen(mona.csrf);
        char *big = malloc(cap);
        int n = snprintf(big, cap, "authenticity_token=%s&do=silence&text=", mona.csrf);
        memset(big + n, 'x', 5001);
        big[n + 5001] = '\0';
        snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "bob"));
        eu_it_webform_send(&mona, &r, "POST", path, big);
        EU_IT_EXPECT_STATUS(&r, 422);
        ck_assert_ptr_nonnull(strstr(r.body, "too long"));
        free(big);
        ck_assert_int_eq(count(&w, "SELECT count(*) FROM account_warnings WHERE %s = %s",
                               "target_account_id", eu_it_id(&w, "bob")),
                         1);
    }
    /* The account's page shows the limit and undoes it. */
    snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "bob"));
    eu_it_webform_send(&mona, &r, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "Limited"));
    eu_it_webform_post(&mona, &r, path, "do=unsilence");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM accounts WHERE id = %s AND %s",
                           eu_it_id(&w, "bob"), "silenced_at IS NULL"),
                     1);
    /* The decoy's accounts are not there. */
    snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "dan"));
    eu_it_webform_send(&mona, &r, "GET", path, NULL);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_webform_post(&mona, &r, path, "do=suspend&text=x");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM accounts WHERE id = %s AND %s",
                           eu_it_id(&w, "dan"), "suspended_at IS NULL"),
                     1);

    /* Pending sign-ups: the tenant's two, not the decoy's. */
    eu_it_webform_send(&mona, &r, "GET", "/admin/accounts", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "I like pages"));
    ck_assert_ptr_null(strstr(r.body, "decoy reason"));
    snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "pete"));
    eu_it_webform_post(&mona, &r, path, "do=approve");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/admin/accounts");
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM users WHERE account_id = %s AND %s",
                           eu_it_id(&w, "pete"), "approved"),
                     1);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM admin_action_logs WHERE action = 'approve'"
                           " AND human_identifier = '%s' AND tenant_id = %s",
                           "pete", w.tid),
                     1);
    snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "rex"));
    eu_it_webform_post(&mona, &r, path, "do=reject");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(
        count(&w, "SELECT count(*) FROM accounts WHERE id = %s%s", eu_it_id(&w, "rex"), ""), 0);
    /* The decoy's pending pete is untouched by an approval of its id. */
    snprintf(path, sizeof(path), "/admin/accounts/%s", eu_it_id(&w, "dpete"));
    eu_it_webform_post(&mona, &r, path, "do=approve");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM users WHERE account_id = %s AND %s",
                           eu_it_id(&w, "dpete"), "NOT approved"),
                     1);

    /* The session's cookie means nothing on the decoy's host. */
    struct eu_it_webform cross = {.s = w.s, .host = DECOY, .cookie = strdup(mona.cookie)};
    eu_it_webform_send(&cross, &r, "GET", "/admin/reports", NULL);
    EU_IT_EXPECT_STATUS(&r, 302);

    /* A role with manage_reports only: the reports, not the sign-ups. */
    struct eu_it_webform mick = {.s = w.s, .host = HOST};
    sign_in(&mick, "mick", "%2Fadmin%2Freports");
    eu_it_webform_send(&mick, &r, "GET", "/admin/reports", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(strstr(r.body, "href=\"/admin/accounts\""));
    eu_it_webform_send(&mick, &r, "GET", "/admin/accounts", NULL);
    EU_IT_EXPECT_STATUS(&r, 403);

    /* A plain user: 403 with a page everywhere, nothing changed. */
    struct eu_it_webform alice = {.s = w.s, .host = HOST};
    sign_in(&alice, "alice", "%2Fadmin");
    const char *const pages[] = {"/admin", "/admin/reports", "/admin/accounts"};
    for (size_t i = 0; i < 3; i++) {
        eu_it_webform_send(&alice, &r, "GET", pages[i], NULL);
        EU_IT_EXPECT_STATUS(&r, 403);
        ck_assert_ptr_nonnull(strstr(r.body, "<h1>"));
    }
    eu_it_webform_send(&alice, &r, "GET", "/settings/sessions", NULL);
    snprintf(path, sizeof(path), "/admin/reports/%s", report);
    eu_it_webform_post(&alice, &r, path, "do=reopen");
    EU_IT_EXPECT_STATUS(&r, 403);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM reports WHERE id = %s AND %s", report,
                           "action_taken_at IS NOT NULL"),
                     1);

    eu_it_webform_free(&mona);
    eu_it_webform_free(&mick);
    eu_it_webform_free(&alice);
    eu_it_webform_free(&cross);
    eu_it_resp_free(&r);
    free(report);
    free(decoy_report);
    eu_it_world_stop(&w);
}
END_TEST

/* Rules and custom emoji: an owner adds, edits and removes a rule, each audited as the API
 * audits it; a moderator without manage_rules gets 403; the decoy's rule
 * is neither shown nor changed. */
START_TEST(test_rules_page)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    char *report, *decoy_report;
    seed(&w, &report, &decoy_report);
    char *decoy_rule =
        eu_it_world_sql(&w,
                        "INSERT INTO instance_rules (tenant_id, text, hint, priority)"
                        " VALUES (%s, 'Decoy rule', '', 0) RETURNING id",
                        w.decoy_tid);
    struct eu_it_resp r = {0};
    struct eu_it_webform olga = {.s = w.s, .host = HOST};
    sign_in(&olga, "olga", "%2Fadmin%2Frules");
    eu_it_webform_send(&olga, &r, "GET", "/admin/rules", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_null(strstr(r.body, "Decoy rule"));
    eu_it_webform_post(&olga, &r, "/admin/rules", "text=");
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_webform_send(&olga, &r, "GET", "/admin/rules", NULL);
    eu_it_webform_post(&olga, &r, "/admin/rules", "text=Be+kind&hint=No+harassment");
    EU_IT_EXPECT_STATUS(&r, 303);
    char *id = eu_it_world_sql(&w,
                               "SELECT id FROM instance_rules WHERE tenant_id = %s AND text = "
                               "'Be kind' AND deleted_at IS NULL",
                               w.tid);
    ck_assert_ptr_nonnull(id);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM admin_action_logs WHERE target_id = %s"
                           " AND action = '%s' AND target_type = 'Rule'",
                           id, "create"),
                     1);
    char path[128];
    snprintf(path, sizeof(path), "/admin/rules/%s", id);
    eu_it_webform_send(&olga, &r, "GET", "/admin/rules", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "No harassment"));
    eu_it_webform_post(&olga, &r, path, "do=update&text=Be+very+kind&hint=");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM instance_rules WHERE id = %s AND %s", id,
                           "text = 'Be very kind'"),
                     1);
    eu_it_webform_post(&olga, &r, path, "do=destroy");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM instance_rules WHERE id = %s AND %s", id,
                           "deleted_at IS NOT NULL"),
                     1);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM admin_action_logs WHERE target_id = %s"
                           " AND action = '%s'",
                           id, "destroy"),
                     1);
    /* The decoy's rule by id: not found, unchanged. */
    snprintf(path, sizeof(path), "/admin/rules/%s", decoy_rule);
    eu_it_webform_post(&olga, &r, path, "do=destroy");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM instance_rules WHERE id = %s AND %s",
                           decoy_rule, "deleted_at IS NULL"),
                     1);
    /* Custom emoji: disabled and enabled again, audited; the decoy's
     * neither shown nor changed. */
    char *emoji = eu_it_world_sql(&w,
                                  "INSERT INTO custom_emojis (tenant_id, shortcode, image,"
                                  " static_image) VALUES (%s, 'blobcat', 'e/blobcat.png',"
                                  " 'e/blobcat_static.png') RETURNING id",
                                  w.tid);
    char *decoy_emoji = eu_it_world_sql(&w,
                                        "INSERT INTO custom_emojis (tenant_id, shortcode, image,"
                                        " static_image) VALUES (%s, 'decoycat', 'e/d.png',"
                                        " 'e/d.png') RETURNING id",
                                        w.decoy_tid);
    eu_it_webform_send(&olga, &r, "GET", "/admin/custom_emojis", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, ":blobcat:"));
    ck_assert_ptr_null(strstr(r.body, "decoycat"));
    snprintf(path, sizeof(path), "/admin/custom_emojis/%s", emoji);
    eu_it_webform_post(&olga, &r, path, "do=disable");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(
        count(&w, "SELECT count(*) FROM custom_emojis WHERE id = %s AND %s", emoji, "disabled"), 1);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM admin_action_logs WHERE target_id = %s"
                           " AND action = '%s'",
                           emoji, "disable"),
                     1);
    eu_it_webform_post(&olga, &r, path, "do=enable");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(
        count(&w, "SELECT count(*) FROM custom_emojis WHERE id = %s AND %s", emoji, "NOT disabled"),
        1);
    snprintf(path, sizeof(path), "/admin/custom_emojis/%s", decoy_emoji);
    eu_it_webform_post(&olga, &r, path, "do=disable");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM custom_emojis WHERE id = %s AND %s",
                           decoy_emoji, "NOT disabled"),
                     1);
    /* An upload from the page's multipart form, refused with the API's
     * text: a text file is no image, and no row is made. */
    eu_it_webform_send(&olga, &r, "GET", "/admin/custom_emojis", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "enctype=\"multipart/form-data\""));
    char form[1024];
    snprintf(form, sizeof(form),
             "--XyZ\r\nContent-Disposition: form-data; name=\"authenticity_token\"\r\n\r\n%s"
             "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"shortcode\"\r\n\r\nnotcat"
             "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\""
             "\r\nContent-Type: image/png\r\n\r\nthis is text\r\n--XyZ--\r\n",
             olga.csrf);
    eu_it_webform_send_as(&olga, &r, "POST", "/admin/custom_emojis",
                          "multipart/form-data; boundary=XyZ", form);
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Image content type is invalid"));
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM custom_emojis WHERE tenant_id = %s AND %s",
                           w.tid, "shortcode = 'notcat'"),
                     0);
    free(emoji);
    free(decoy_emoji);

    /* Domain blocks: one made from the form (marked and audited), a
     * second on the same domain refused with Mastodon's text, a bad domain
     * refused, one lifted; the decoy's block neither shown nor lifted. */
    char *decoy_block = eu_it_world_sql(&w,
                                        "INSERT INTO domain_blocks (tenant_id, domain, severity)"
                                        " VALUES (%s, 'decoyblocked.example', 'suspend')"
                                        " RETURNING id",
                                        w.decoy_tid);
    eu_it_webform_send(&olga, &r, "GET", "/admin/domain_blocks", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "No server is blocked."));
    ck_assert_ptr_null(strstr(r.body, "decoyblocked"));
    eu_it_webform_post(&olga, &r, "/admin/domain_blocks",
                       "domain=Spam.Example&severity=suspend&reject_media=true"
                       "&public_comment=spam+wave&private_comment=");
    EU_IT_EXPECT_STATUS(&r, 303);
    char *block = eu_it_world_sql(&w,
                                  "SELECT id FROM domain_blocks WHERE tenant_id = %s AND domain ="
                                  " 'spam.example' AND severity = 'suspend' AND reject_media"
                                  " AND public_comment = 'spam wave' AND private_comment IS NULL",
                                  w.tid);
    ck_assert_ptr_nonnull(block);
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM admin_action_logs WHERE target_id = %s"
                           " AND action = '%s' AND target_type = 'DomainBlock'",
                           block, "create"),
                     1);
    eu_it_webform_send(&olga, &r, "GET", "/admin/domain_blocks", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "spam.example"));
    ck_assert_ptr_nonnull(strstr(r.body, "spam wave"));
    eu_it_webform_post(&olga, &r, "/admin/domain_blocks", "domain=spam.example&severity=silence");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(
        strstr(r.body, "You have already imposed stricter limits on spam.example."));
    eu_it_webform_send(&olga, &r, "GET", "/admin/domain_blocks", NULL);
    eu_it_webform_post(&olga, &r, "/admin/domain_blocks", "domain=not+a+domain");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_msg(strstr(r.body, "domain must be a valid domain name"), "%s", r.body);
    ck_assert_int_eq(
        count(&w, "SELECT count(*) FROM domain_blocks WHERE tenant_id = %s%s", w.tid, ""), 1);
    snprintf(path, sizeof(path), "/admin/domain_blocks/%s", decoy_block);
    eu_it_webform_send(&olga, &r, "GET", "/admin/domain_blocks", NULL);
    eu_it_webform_post(&olga, &r, path, "do=destroy");
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(
        count(&w, "SELECT count(*) FROM domain_blocks WHERE id = %s%s", decoy_block, ""), 1);
    snprintf(path, sizeof(path), "/admin/domain_blocks/%s", block);
    eu_it_webform_post(&olga, &r, path, "do=destroy");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM domain_blocks WHERE id = %s%s", block, ""), 0);
    free(block);
    free(decoy_block);

    /* A moderator's role has no manage_rules nor manage_custom_emojis. */
    struct eu_it_webform mona = {.s = w.s, .host = HOST};
    sign_in(&mona, "mona", "%2Fadmin%2Frules");
    eu_it_webform_send(&mona, &r, "GET", "/admin/rules", NULL);
    EU_IT_EXPECT_STATUS(&r, 403);
    eu_it_webform_send(&mona, &r, "GET", "/admin/custom_emojis", NULL);
    EU_IT_EXPECT_STATUS(&r, 403);
    eu_it_webform_send(&mona, &r, "GET", "/admin/domain_blocks", NULL);
    EU_IT_EXPECT_STATUS(&r, 403);
    eu_it_webform_send(&mona, &r, "GET", "/admin/reports", NULL);
    ck_assert_ptr_null(strstr(r.body, "href=\"/admin/rules\""));

    eu_it_webform_free(&olga);
    eu_it_webform_free(&mona);
    eu_it_resp_free(&r);
    free(id);
    free(decoy_rule);
    free(report);
    free(decoy_report);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_settings_pages)
{
    struct world w = {0};
    eu_it_world_start(&w, &world);
    struct eu_it_resp r = {0};
    struct eu_it_webform a = {.s = w.s, .host = HOST};
    struct eu_it_webform other = {.s = w.s, .host = HOST};
    sign_in(&other, "alice", "%2Fsettings");
    sign_in(&a, "alice", "%2Fsettings");

    /* The world's token for alice is an application's. */
    eu_it_webform_send(&a, &r, "GET", "/settings/applications", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "href=\"/settings/applications\" aria-current=\"page\""));
    char *app = eu_it_form_value(&r, "application_id");
    ck_assert_ptr_nonnull(app);
    char fields[256];
    snprintf(fields, sizeof(fields), "application_id=%s", app);
    eu_it_webform_send(&a, &r, "POST", "/settings/applications", fields);
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_webform_send(&a, &r, "GET", "/settings/applications", NULL);
    eu_it_webform_post(&a, &r, "/settings/applications", fields);
    EU_IT_EXPECT_STATUS(&r, 303);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 401);
    /* bob's token stays. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* The profile, through update_credentials' own code. */
    eu_it_webform_send(&a, &r, "GET", "/settings/profile", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"display_name\""));
    eu_it_webform_post(&a, &r, "/settings/profile",
                       "display_name=Alice+A&note=Hello+there&locked=0&locked=1&bot=0"
                       "&discoverable=0&fields_attributes%5B0%5D%5Bname%5D=Site"
                       "&fields_attributes%5B0%5D%5Bvalue%5D=https%3A%2F%2Fexample.com"
                       "&fields_attributes%5B1%5D%5Bname%5D=&fields_attributes%5B1%5D%5Bvalue%5D=");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/settings/profile?saved=1");
    ck_assert_int_eq(count(&w,
                           "SELECT count(*) FROM accounts WHERE id = %s AND display_name = "
                           "'Alice A' AND note LIKE '%%Hello there%%' AND locked AND NOT bot"
                           " AND %s",
                           eu_it_id(&w, "alice"), "fields::text LIKE '%Site%'"),
                     1);
    eu_it_webform_send(&a, &r, "GET", "/settings/profile?saved=1", NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "value=\"Alice A\""));
    ck_assert_ptr_nonnull(strstr(r.body, "value=\"https://example.com\""));
    /* An unchecked box says false. */
    eu_it_webform_post(&a, &r, "/settings/profile", "locked=0");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM accounts WHERE id = %s AND %s",
                           eu_it_id(&w, "alice"), "NOT locked AND display_name = 'Alice A'"),
                     1);
    /* The API's validation, shown on the form. */
    eu_it_webform_post(&a, &r, "/settings/profile",
                       "display_name=0123456789012345678901234567890123456789");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "Display name is too long"));

    /* Migration, through migration.c's own checks: a bad alias and a
     * wrong password shown on the page, an emptied list saved. */
    eu_it_webform_send(&a, &r, "GET", "/settings/migration", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "/users/alice</code>"));
    eu_it_webform_send(&a, &r, "POST", "/settings/migration", "do=alias&also_known_as_uris%5B%5D=");
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_webform_send(&a, &r, "GET", "/settings/migration", NULL);
    eu_it_webform_post(&a, &r, "/settings/migration",
                       "do=alias&also_known_as_uris%5B%5D=ftp%3A%2F%2Fold.example%2Fx");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "invalid also_known_as_uri"));
    eu_it_webform_post(&a, &r, "/settings/migration", "do=alias&also_known_as_uris%5B%5D=");
    EU_IT_EXPECT_STATUS(&r, 303);
    ck_assert_str_eq(eu_it_resp_header(&r, "Location"), "/settings/migration?done=aliases");
    eu_it_webform_send(&a, &r, "GET", "/settings/migration", NULL);
    eu_it_webform_post(&a, &r, "/settings/migration",
                       "do=move&moved_to_uri=https%3A%2F%2Fnew.example%2Fusers%2Falice"
                       "&password=wrong");
    EU_IT_EXPECT_STATUS(&r, 422);
    ck_assert_ptr_nonnull(strstr(r.body, "invalid password"));
    ck_assert_int_eq(count(&w, "SELECT count(*) FROM accounts WHERE id = %s AND %s",
                           eu_it_id(&w, "alice"), "moved_to_account_id IS NULL"),
                     1);

    /* Sessions: two, this one marked; the other signed out. */
    eu_it_webform_send(&a, &r, "GET", "/settings/sessions", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "This browser"));
    char *sid = eu_it_form_value(&r, "session_id");
    ck_assert_ptr_nonnull(sid);
    snprintf(fields, sizeof(fields), "session_id=%s", sid);
    eu_it_webform_post(&a, &r, "/settings/sessions", fields);
    EU_IT_EXPECT_STATUS(&r, 303);
    eu_it_webform_send(&other, &r, "GET", "/settings/sessions", NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_webform_send(&a, &r, "GET", "/settings/sessions", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);

    free(app);
    free(sid);
    eu_it_webform_free(&a);
    eu_it_webform_free(&other);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *suite = suite_create("web_staff");
    EU_IT_ADD_TCASE(suite, test_moderation_pages, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_rules_page, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_settings_pages, TIMEOUT);
    return eu_it_run_suite(suite);
}
