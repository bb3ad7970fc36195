/*
 * The user's side of moderation and the staff's tools around it (issue
 * 28): reports citing the instance's rules and the staff editing them; a
 * strike told to its user as a moderation_warning notification, appealed,
 * and the appeal approved (undoing the action) or rejected; custom roles
 * edited by a tenant's staff within their own role's reach and by the
 * operator; the audit log; and clearing notifications lowering the
 * notification requests' counts. Each endpoint is tried from the decoy
 * tenant in the same placement too: its owner's token on its own host with
 * this tenant's ids, and on this tenant's host.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "appeals.example"
#define DECOY "decoy.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

/* olga the owner, alan an admin, mona a moderator, ursula a user whose
 * token asked for the admin scopes, bob and rita ordinary users; dora owns
 * the decoy. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"alan", NULL, NULL, ADMIN_SCOPES},
              {"mona", NULL, NULL, ADMIN_SCOPES},
              {"ursula", NULL, NULL, ADMIN_SCOPES},
              {"bob"},
              {"rita"},
              {"dora", DECOY, NULL, ADMIN_SCOPES}},
};

/* A request on host as the world's user who (NULL: nobody). */
#define call_on(w, r, host, method, who, json, ...)                                                \
    eu_it_callf((w)->s, r, host, method, eu_it_tok(w, who), json, __VA_ARGS__)

#define call(w, r, method, who, json, ...) call_on(w, r, HOST, method, who, json, __VA_ARGS__)
#define decoy(w, r, method, json, ...) call_on(w, r, DECOY, method, "dora", json, __VA_ARGS__)

static void
expect_error_text(const struct eu_it_resp *r, long status, const char *text)
{
    EU_IT_EXPECT_ERROR(r, status);
    EU_IT_EXPECT_JSTR(r, "error", text);
}

static void
operator(struct world *w, struct eu_it_resp *r, const char *method, const char *json,
         const char *fmt, const char *arg)
{
    char path[512];
    snprintf(path, sizeof(path), fmt, HOST, arg);
    eu_it_admin(w->s, method, path, json, r);
}

/* olga the owner through the operator's API; the others in the database
 * before their tokens are first used. */
static void
appoint(struct world *w)
{
    struct eu_it_resp r = {0};
    operator(w, &r, "PUT", "{\"role\":\"owner\"}", "/admin/v1/tenants/%s/accounts/%s/role",
             eu_it_id(w, "olga"));
    EU_IT_EXPECT_STATUS(&r, 200);
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", DECOY,
             eu_it_id(w, "dora"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 2 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "alan")));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 1 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mona")));
}

static long
audit_rows(struct world *w, const char *action, const char *type, const char *target)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM admin_action_logs WHERE tenant_id = %s"
                                " AND action = '%s' AND target_type = '%s' AND target_id = %s",
                                w->tid, action, type, target);
}

/* A copy of a string member of r (freed by the caller). */
static char *
dup_str(const struct eu_it_resp *r, const char *path)
{
    json_t *v = eu_it_jpath(r->json, path);
    ck_assert_msg(json_is_string(v), "%s is not a string in %.800s", path, r->body);
    return strdup(json_string_value(v));
}

START_TEST(test_report_rules)
{
    struct world w;
    struct eu_it_resp r = {0};
    char body[512];
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *rita = eu_it_id(&w, "rita");

    call(&w, &r, "POST", "olga", "{\"text\":\"Be kind\"}", "/api/v1/admin/rules");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *kind = dup_str(&r, "id");
    call(&w, &r, "POST", "olga", "{\"text\":\"No spam\",\"hint\":\"ads too\"}",
         "/api/v1/admin/rules");
    char *spam = dup_str(&r, "id");
    decoy(&w, &r, "POST", "{\"text\":\"Decoy rule\"}", "/api/v1/admin/rules");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *foreign = dup_str(&r, "id");

    /* Rules make it a violation report, whatever category was said. */
    snprintf(body, sizeof(body),
             "{\"account_id\":\"%s\",\"category\":\"spam\",\"rule_ids\":[\"%s\",\"%s\"]}", rita,
             spam, kind);
    call(&w, &r, "POST", "bob", body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "category", "violation");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "rule_ids")), 2);
    char *report = dup_str(&r, "id");
    /* Another tenant's rule, or no rule at all, is refused; nothing written. */
    long before =
        eu_it_world_sql_long(&w, "SELECT count(*) FROM reports WHERE tenant_id = %s", w.tid);
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"rule_ids\":[\"%s\"]}", rita, foreign);
    call(&w, &r, "POST", "bob", body, "/api/v1/reports");
    expect_error_text(&r, 422, "Validation failed: Rule ids does not reference valid rules");
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"rule_ids\":[\"x1\"]}", rita);
    call(&w, &r, "POST", "bob", body, "/api/v1/reports");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM reports WHERE tenant_id = %s", w.tid),
        before);
    /* Without rules: rule_ids null, as Mastodon shows it. */
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"category\":\"spam\"}", rita);
    call(&w, &r, "POST", "bob", body, "/api/v1/reports");
    EU_IT_EXPECT_JSTR(&r, "category", "spam");
    ck_assert(json_is_null(eu_it_jpath(r.json, "rule_ids")));

    /* The staff see the rules on the Admin::Report, in the rules' order. */
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports/%s", report);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "rules")), 2);
    EU_IT_EXPECT_JSTR(&r, "rules.0.text", "Be kind");
    EU_IT_EXPECT_JSTR(&r, "rules.1.hint", "ads too");

    /* PUT: category and rules, an 'update' audit row each time. */
    snprintf(body, sizeof(body), "{\"rule_ids\":[\"%s\"]}", kind);
    call(&w, &r, "PUT", "mona", body, "/api/v1/admin/reports/%s", report);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "rules")), 1);
    EU_IT_EXPECT_JSTR(&r, "rules.0.id", kind);
    EU_IT_EXPECT_JSTR(&r, "category", "violation");
    call(&w, &r, "PUT", "mona", "{\"category\":\"other\"}", "/api/v1/admin/reports/%s", report);
    EU_IT_EXPECT_JSTR(&r, "category", "other");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "rules")), 0);
    ck_assert_int_eq(audit_rows(&w, "update", "Report", report), 2);
    /* Bad input changes nothing. */
    call(&w, &r, "PUT", "mona", "{\"category\":\"gossip\"}", "/api/v1/admin/reports/%s", report);
    expect_error_text(&r, 422, "Validation failed: Category is not included in the list");
    snprintf(body, sizeof(body), "{\"category\":\"violation\",\"rule_ids\":[\"%s\"]}", foreign);
    call(&w, &r, "PUT", "mona", body, "/api/v1/admin/reports/%s", report);
    expect_error_text(&r, 422, "Validation failed: Rule ids does not reference valid rules");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM reports WHERE tenant_id = %s"
                                          " AND id = %s AND category = 'other'",
                                          w.tid, report),
                     1);
    ck_assert_int_eq(audit_rows(&w, "update", "Report", report), 2);
    call(&w, &r, "PUT", "mona", "{\"category\":\"spam\"}", "/api/v1/admin/reports/4242");
    expect_error_text(&r, 404, "Record not found");
    /* No manage_reports, or no scope: refused. */
    call(&w, &r, "PUT", "ursula", "{\"category\":\"spam\"}", "/api/v1/admin/reports/%s", report);
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "PUT", "bob", "{\"category\":\"spam\"}", "/api/v1/admin/reports/%s", report);
    EU_IT_EXPECT_ERROR(&r, 403);
    /* The decoy's owner: not on this host, and not this report on hers. */
    call_on(&w, &r, HOST, "PUT", "dora", "{\"category\":\"spam\"}", "/api/v1/admin/reports/%s",
            report);
    EU_IT_EXPECT_ERROR(&r, 401);
    decoy(&w, &r, "PUT", "{\"category\":\"spam\"}", "/api/v1/admin/reports/%s", report);
    expect_error_text(&r, 404, "Record not found");
    decoy(&w, &r, "GET", NULL, "/api/v1/admin/reports/%s", report);
    expect_error_text(&r, 404, "Record not found");
    EU_IT_EXPECT_JSTR(&r, "error", "Record not found");

    /*
     * Clearing notifications lowers the notification requests: two
     * private mentions from bob are filtered for rita (her default
     * policy) into one request counting 2; dismissing one leaves 1,
     * clearing all leaves no request.
     */
    call(&w, &r, "POST", "bob", "{\"status\":\"@rita one\",\"visibility\":\"direct\"}",
         "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "POST", "bob", "{\"status\":\"@rita two\",\"visibility\":\"direct\"}",
         "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    for (int i = 0; i < 100 && eu_it_world_sql_long(&w,
                                                    "SELECT coalesce(max(notifications_count), 0)"
                                                    " FROM notification_requests WHERE"
                                                    " tenant_id = %s AND account_id = %s",
                                                    w.tid, rita) < 2;
         i++)
        eu_it_sleep_ms(50);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.notifications_count", "2");
    call(&w, &r, "GET", "rita", NULL, "/api/v1/notifications?include_filtered=true");
    ck_assert_int_eq(json_array_size(r.json), 2);
    char *note = dup_str(&r, "0.id");
    call(&w, &r, "POST", "rita", NULL, "/api/v1/notifications/%s/dismiss", note);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/notifications/requests");
    EU_IT_EXPECT_JSTR(&r, "0.notifications_count", "1");
    call(&w, &r, "POST", "rita", NULL, "/api/v1/notifications/clear");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/notifications/requests");
    ck_assert_int_eq(json_array_size(r.json), 0);

    free(note);
    free(report);
    free(kind);
    free(spam);
    free(foreign);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_strikes_and_appeals)
{
    struct world w;
    struct eu_it_resp r = {0};
    char body[512];
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *bob = eu_it_id(&w, "bob");

    call(&w, &r, "POST", "bob", "{\"status\":\"buy now\"}", "/api/v1/statuses");
    char *status = dup_str(&r, "id");
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"status_ids\":[\"%s\"]}", bob, status);
    call(&w, &r, "POST", "rita", body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *report = dup_str(&r, "id");

    /* A silence with a report: bob is told, with the reported status. */
    snprintf(body, sizeof(body), "{\"type\":\"silence\",\"text\":\"no ads\",\"report_id\":\"%s\"}",
             report);
    call(&w, &r, "POST", "mona", body, "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "bob", NULL, "/api/v1/notifications?types[]=moderation_warning");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.type", "moderation_warning");
    EU_IT_EXPECT_JSTR(&r, "0.account.id", bob);
    EU_IT_EXPECT_JSTR(&r, "0.moderation_warning.action", "silence");
    EU_IT_EXPECT_JSTR(&r, "0.moderation_warning.text", "no ads");
    EU_IT_EXPECT_JSTR(&r, "0.moderation_warning.status_ids.0", status);
    EU_IT_EXPECT_JSTR(&r, "0.moderation_warning.target_account.id", bob);
    ck_assert(json_is_null(eu_it_jpath(r.json, "0.moderation_warning.appeal")));
    ck_assert(json_is_string(eu_it_jpath(r.json, "0.moderation_warning.created_at")));
    char *strike = dup_str(&r, "0.moderation_warning.id");
    call(&w, &r, "GET", "bob", NULL, "/api/v2/notifications");
    EU_IT_EXPECT_JSTR(&r, "notification_groups.0.type", "moderation_warning");
    EU_IT_EXPECT_JSTR(&r, "notification_groups.0.moderation_warning.id", strike);
    EU_IT_EXPECT_JSTR(&r, "notification_groups.0.moderation_warning.target_account.id", bob);
    /* Told nothing when the moderator says so. */
    call(&w, &r, "POST", "mona", "{\"type\":\"none\",\"send_email_notification\":false}",
         "/api/v1/admin/accounts/%s/action", eu_it_id(&w, "rita"));
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM notifications WHERE tenant_id"
                                          " = %s AND account_id = %s",
                                          w.tid, eu_it_id(&w, "rita")),
                     0);

    /* The strike is bob's to read, nobody else's. */
    call(&w, &r, "GET", "bob", NULL, "/api/v1/account_warnings/%s", strike);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "action", "silence");
    call(&w, &r, "GET", "rita", NULL, "/api/v1/account_warnings/%s", strike);
    expect_error_text(&r, 404, "Record not found");

    /* Appeals: text needed, one a strike, only bob's own. */
    call(&w, &r, "POST", "bob", "{\"text\":\"\"}", "/api/v1/account_warnings/%s/appeal", strike);
    expect_error_text(&r, 422, "Validation failed: Text can't be blank");
    call(&w, &r, "POST", "rita", "{\"text\":\"me too\"}", "/api/v1/account_warnings/%s/appeal",
         strike);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "POST", "bob", "{\"text\":\"it was a joke\"}",
         "/api/v1/account_warnings/%s/appeal", strike);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "appeal.text", "it was a joke");
    EU_IT_EXPECT_JSTR(&r, "appeal.state", "pending");
    call(&w, &r, "POST", "bob", "{\"text\":\"again\"}", "/api/v1/account_warnings/%s/appeal",
         strike);
    expect_error_text(&r, 422, "Validation failed: This strike has already been appealed");

    /* The queue: a moderator lacks manage_appeals; the owner has it. */
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/appeals");
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", "ursula", NULL, "/api/v1/admin/appeals");
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/appeals");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.state", "pending");
    EU_IT_EXPECT_JSTR(&r, "0.account.id", bob);
    EU_IT_EXPECT_JSTR(&r, "0.account_warning.id", strike);
    char *appeal = dup_str(&r, "0.id");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/appeals?status=sideways");
    EU_IT_EXPECT_ERROR(&r, 400);
    /* The decoy's owner sees none of it and cannot decide it. */
    decoy(&w, &r, "GET", NULL, "/api/v1/admin/appeals");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    decoy(&w, &r, "POST", NULL, "/api/v1/admin/appeals/%s/approve", appeal);
    expect_error_text(&r, 404, "Record not found");
    call_on(&w, &r, HOST, "POST", "dora", NULL, "/api/v1/admin/appeals/%s/approve", appeal);
    EU_IT_EXPECT_ERROR(&r, 401);
    decoy(&w, &r, "GET", NULL, "/api/v1/account_warnings/%s", strike);
    expect_error_text(&r, 404, "Record not found");

    /* Approval lifts the silence, overrules the strike, and is logged. */
    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/appeals/%s/approve", appeal);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "approved");
    EU_IT_EXPECT_JSTR(&r, "account_warning.appeal.state", "approved");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/accounts/%s", bob);
    ck_assert(json_is_false(eu_it_jpath(r.json, "silenced")));
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM account_warnings WHERE"
                                          " tenant_id = %s AND id = %s AND overruled_at IS"
                                          " NOT NULL",
                                          w.tid, strike),
                     1);
    ck_assert_int_eq(audit_rows(&w, "approve", "Appeal", appeal), 1);
    ck_assert_int_eq(audit_rows(&w, "unsilence", "Account", bob), 1);
    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/appeals/%s/reject", appeal);
    expect_error_text(&r, 422, "Validation failed: This appeal has already been decided");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/appeals?status=approved");
    ck_assert_int_eq(json_array_size(r.json), 1);

    /* A second strike, rejected: nothing undone. */
    call(&w, &r, "POST", "mona", "{\"type\":\"sensitive\",\"text\":\"nsfw\"}",
         "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *second = eu_it_world_sql(&w,
                                   "SELECT id FROM account_warnings WHERE tenant_id = %s AND"
                                   " target_account_id = %s AND action = 'sensitive'",
                                   w.tid, bob);
    call(&w, &r, "POST", "bob", "{\"text\":\"art\"}", "/api/v1/account_warnings/%s/appeal", second);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *appeal2 = eu_it_world_sql(&w,
                                    "SELECT id FROM appeals WHERE tenant_id = %s AND"
                                    " account_warning_id = %s",
                                    w.tid, second);
    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/appeals/%s/reject", appeal2);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "state", "rejected");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/accounts/%s", bob);
    ck_assert(json_is_true(eu_it_jpath(r.json, "sensitized")));
    ck_assert_int_eq(audit_rows(&w, "reject", "Appeal", appeal2), 1);
    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/appeals/4242/approve");
    expect_error_text(&r, 404, "Record not found");

    /* Twenty days is the window. */
    call(&w, &r, "POST", "mona", "{\"type\":\"none\",\"text\":\"old\"}",
         "/api/v1/admin/accounts/%s/action", bob);
    char *old = eu_it_world_sql(&w,
                                "UPDATE account_warnings SET created_at = now() - interval"
                                " '21 days' WHERE tenant_id = %s AND target_account_id = %s"
                                " AND text = 'old' RETURNING id",
                                w.tid, bob);
    call(&w, &r, "POST", "bob", "{\"text\":\"late\"}", "/api/v1/account_warnings/%s/appeal", old);
    expect_error_text(&r, 422, "Validation failed: It is too late to appeal this strike");

    free(old);
    free(second);
    free(appeal2);
    free(appeal);
    free(strike);
    free(report);
    free(status);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_roles_and_audit_log)
{
    struct world w;
    struct eu_it_resp r = {0};
    char body[512];
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *rita = eu_it_id(&w, "rita");

    /* The built-ins are listed with Mastodon's ids. */
    call(&w, &r, "GET", "alan", NULL, "/api/v1/admin/roles");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 4);
    EU_IT_EXPECT_JSTR(&r, "0.id", "-99");
    EU_IT_EXPECT_JSTR(&r, "3.name", "Owner");
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/roles");
    expect_error_text(&r, 403, "This action is not allowed");

    /* An admin makes a role below his own, with permissions he has. */
    call(&w, &r, "POST", "alan",
         "{\"name\":\"Helpers\",\"color\":\"#00ff00\",\"position\":50,"
         "\"permissions\":\"16\",\"highlighted\":true}",
         "/api/v1/admin/roles");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "Helpers");
    EU_IT_EXPECT_JSTR(&r, "color", "#00ff00");
    char *helpers = dup_str(&r, "id");
    ck_assert_int_eq(audit_rows(&w, "create", "UserRole", helpers), 1);
    /* ... but not at or above it, nor with more than he may, nor a blank. */
    call(&w, &r, "POST", "alan", "{\"name\":\"Chiefs\",\"position\":100}", "/api/v1/admin/roles");
    expect_error_text(&r, 422,
                      "Validation failed: Position cannot be higher than your current role");
    call(&w, &r, "POST", "alan", "{\"name\":\"Gods\",\"position\":1,\"permissions\":1}",
         "/api/v1/admin/roles");
    expect_error_text(&r, 422,
                      "Validation failed: Permissions cannot include permissions your"
                      " current role does not possess");
    call(&w, &r, "POST", "alan", "{\"position\":1}", "/api/v1/admin/roles");
    expect_error_text(&r, 422, "Validation failed: Name can't be blank");
    call(&w, &r, "POST", "alan", "{\"name\":\"x\",\"color\":\"green\"}", "/api/v1/admin/roles");
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "PUT", "alan", "{\"name\":\"Boss\"}", "/api/v1/admin/roles/3");
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "DELETE", "alan", NULL, "/api/v1/admin/roles/1");
    expect_error_text(&r, 403, "This action is not allowed");
    ck_assert_int_eq(
        eu_it_world_sql_long(&w, "SELECT count(*) FROM user_roles WHERE tenant_id = %s", w.tid), 1);

    /* A holder gets the permissions and the badge; an edit reaches them. */
    free(eu_it_world_sql(&w,
                         "UPDATE users SET role_id = %s WHERE tenant_id = %s AND account_id = %s",
                         helpers, w.tid, rita));
    call(&w, &r, "GET", "rita", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "role.permissions", "65552");
    EU_IT_EXPECT_JSTR(&r, "roles.0.name", "Helpers");
    call(&w, &r, "PUT", "alan", "{\"name\":\"Helpers+\",\"permissions\":\"1040\"}",
         "/api/v1/admin/roles/%s", helpers);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "name", "Helpers+");
    call(&w, &r, "GET", "rita", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "role.permissions", "66576");
    EU_IT_EXPECT_JSTR(&r, "roles.0.name", "Helpers+");
    ck_assert_int_eq(audit_rows(&w, "update", "UserRole", helpers), 1);

    /* The decoy's owner cannot see or touch it. */
    decoy(&w, &r, "GET", NULL, "/api/v1/admin/roles/%s", helpers);
    expect_error_text(&r, 404, "Record not found");
    decoy(&w, &r, "PUT", "{\"name\":\"Mine\"}", "/api/v1/admin/roles/%s", helpers);
    expect_error_text(&r, 404, "Record not found");
    decoy(&w, &r, "DELETE", NULL, "/api/v1/admin/roles/%s", helpers);
    expect_error_text(&r, 404, "Record not found");
    decoy(&w, &r, "GET", NULL, "/api/v1/admin/roles");
    ck_assert_int_eq(json_array_size(r.json), 4);
    call_on(&w, &r, HOST, "GET", "dora", NULL, "/api/v1/admin/roles");
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM user_roles WHERE tenant_id = %s"
                                          " AND name = 'Helpers+'",
                                          w.tid),
                     1);

    /* The operator: above every role, no audit row of its own. */
    operator(&w, &r, "POST", "{\"name\":\"Council\",\"position\":5000,\"permissions\":1}",
             "/admin/v1/tenants/%s/roles%s", "");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "permissions", "1048575");
    char *council = dup_str(&r, "id");
    operator(&w, &r, "GET", NULL, "/admin/v1/tenants/%s/roles/%s", council);
    EU_IT_EXPECT_JSTR(&r, "name", "Council");
    operator(&w, &r, "PUT", "{\"color\":\"#abc\"}", "/admin/v1/tenants/%s/roles/%s", council);
    EU_IT_EXPECT_JSTR(&r, "color", "#abc");
    call(&w, &r, "DELETE", "alan", NULL, "/api/v1/admin/roles/%s", council);
    expect_error_text(&r, 403, "This action is not allowed");
    operator(&w, &r, "DELETE", NULL, "/admin/v1/tenants/%s/roles/%s", council);
    EU_IT_EXPECT_STATUS(&r, 200);
    operator(&w, &r, "GET", NULL, "/admin/v1/tenants/%s/roles%s", "");
    ck_assert_int_eq(json_array_size(r.json), 5);
    eu_it_admin(w.s, "GET", "/admin/v1/tenants/nowhere.example/roles", NULL, &r);
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(audit_rows(&w, "create", "UserRole", council), 0);
    int rc = eu_it_http(&r, "GET", w.s->admin_port, NULL, "/admin/v1/tenants/" HOST "/roles",
                        eu_it_tok(&w, "olga"), NULL);
    ck_assert_int_eq(rc, 0);
    EU_IT_EXPECT_ERROR(&r, 401);

    /* Deleting a role sends its holders back to the everyone role. */
    call(&w, &r, "DELETE", "alan", NULL, "/api/v1/admin/roles/%s", helpers);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "role.id", "-99");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "roles")), 0);
    ck_assert_int_eq(audit_rows(&w, "destroy", "UserRole", helpers), 1);

    /* The audit log: newest first, with who did it, paged with Link. */
    call(&w, &r, "POST", "mona", "{\"type\":\"none\"}", "/api/v1/admin/accounts/%s/action",
         eu_it_id(&w, "bob"));
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/action_logs");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 4);
    EU_IT_EXPECT_JSTR(&r, "0.action", "warn");
    EU_IT_EXPECT_JSTR(&r, "0.target_type", "Account");
    EU_IT_EXPECT_JSTR(&r, "0.target_id", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_JSTR(&r, "0.human_identifier", "bob");
    EU_IT_EXPECT_JSTR(&r, "0.account.username", "mona");
    EU_IT_EXPECT_JSTR(&r, "3.action", "create");
    EU_IT_EXPECT_JSTR(&r, "3.account.username", "alan");
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/action_logs?limit=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    snprintf(body, sizeof(body), "/api/v1/admin/action_logs?target_type=UserRole&account_id=%s",
             eu_it_id(&w, "alan"));
    call(&w, &r, "GET", "mona", NULL, "%s", body);
    ck_assert_int_eq(json_array_size(r.json), 3);
    call(&w, &r, "GET", "ursula", NULL, "/api/v1/admin/action_logs");
    expect_error_text(&r, 403, "This action is not allowed");
    decoy(&w, &r, "GET", NULL, "/api/v1/admin/action_logs");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 0);
    operator(&w, &r, "GET", NULL, "/admin/v1/tenants/%s/action_logs%s", "?action=destroy");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.target_id", helpers);

    free(helpers);
    free(council);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("appeals");
    EU_IT_ADD_TCASE(s, test_report_rules, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_strikes_and_appeals, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_roles_and_audit_log, TIMEOUT);
    return eu_it_run_suite(s);
}
