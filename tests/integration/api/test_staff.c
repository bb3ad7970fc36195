/*
 * A tenant's own staff through Mastodon's admin API (issue 28): roles and
 * their permissions in the credential account, the operator appointing an
 * owner, moderators acting on accounts (suspend, disable, silence,
 * sensitive and their undoing, approve and reject sign-ups) and handling
 * reports, each with its audit row; refusals for a role without the
 * permission, a user with admin scopes, a token without them; and a decoy
 * tenant in the same placement that the staff of one cannot touch.
 */
#include "world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT 240
#define HOST "staff.example"
#define DECOY "decoy.example"
#define ADMIN_SCOPES "read write follow admin:read admin:write"

/* olga the owner, mona a moderator, mick a custom role with manage_reports
 * only, ursula a user whose token asked for the admin scopes, adam an admin
 * whose token did not, bob and rita ordinary users; dora owns the decoy,
 * dan is a user there. */
static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .users = {{"olga", NULL, NULL, ADMIN_SCOPES},
              {"mona", NULL, NULL, ADMIN_SCOPES},
              {"mick", NULL, NULL, ADMIN_SCOPES},
              {"ursula", NULL, NULL, ADMIN_SCOPES},
              {"adam", NULL, NULL, "read write follow"},
              {"bob"},
              {"rita"},
              {"dora", DECOY, NULL, ADMIN_SCOPES},
              {"dan", DECOY}},
};

/* A request on the tenant's host as the world's user who (NULL: nobody). */
#define call(w, r, method, who, json, ...)                                                         \
    eu_it_callf((w)->s, r, HOST, method, eu_it_tok(w, who), json, __VA_ARGS__)

static void
expect_error_text(const struct eu_it_resp *r, long status, const char *text)
{
    EU_IT_EXPECT_ERROR(r, status);
    EU_IT_EXPECT_JSTR(r, "error", text);
}

static void
expect_bool(const struct eu_it_resp *r, const char *path, bool want)
{
    json_t *v = eu_it_jpath(r->json, path);
    ck_assert_msg(json_is_boolean(v), "%s is not a boolean in %.800s", path, r->body);
    ck_assert_msg(json_is_true(v) == want, "%s is %s in %.800s", path, want ? "false" : "true",
                  r->body);
}

/* Appoints the roles: olga through the operator's API, the others in the
 * database before their tokens are first used (so no cache holds them). */
static void
appoint(struct world *w)
{
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(w, "olga"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "role", "owner");
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", DECOY,
             eu_it_id(w, "dora"));
    eu_it_admin(w->s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    free(eu_it_world_sql(w,
                         "INSERT INTO user_roles (tenant_id, id, name, position, permissions,"
                         " highlighted) VALUES (%s, 77, 'Reports desk', 5, 16, false)",
                         w->tid));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 1 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mona")));
    free(eu_it_world_sql(w,
                         "UPDATE users SET role_id = 77 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "mick")));
    free(eu_it_world_sql(w, "UPDATE users SET role_id = 2 WHERE tenant_id = %s AND account_id = %s",
                         w->tid, eu_it_id(w, "adam")));
}

static long
audit_rows(struct world *w, const char *action, const char *target)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM admin_action_logs WHERE tenant_id = %s"
                                " AND action = '%s' AND target_id = %s",
                                w->tid, action, target);
}

START_TEST(test_roles_in_credentials)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);

    call(&w, &r, "GET", "olga", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "role.id", "3");
    EU_IT_EXPECT_JSTR(&r, "role.name", "Owner");
    EU_IT_EXPECT_JSTR(&r, "role.permissions", "1048575");
    expect_bool(&r, "role.highlighted", true);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "role.id", "1");
    EU_IT_EXPECT_JSTR(&r, "role.name", "Moderator");
    /* Mastodon's seeded moderator, with the everyone role's invite_users. */
    EU_IT_EXPECT_JSTR(&r, "role.permissions", "66844");
    call(&w, &r, "GET", "mick", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "role.id", "77");
    EU_IT_EXPECT_JSTR(&r, "role.name", "Reports desk");
    EU_IT_EXPECT_JSTR(&r, "role.permissions", "65552");
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "role.id", "-99");
    EU_IT_EXPECT_JSTR(&r, "role.permissions", "65536");
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "roles")), 0);

    /* A highlighted role is the account's badge wherever it is shown. */
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/%s", eu_it_id(&w, "olga"));
    EU_IT_EXPECT_JSTR(&r, "roles.0.id", "3");
    EU_IT_EXPECT_JSTR(&r, "roles.0.name", "Owner");
    call(&w, &r, "POST", "mona", "{\"status\":\"mod here\"}", "/api/v1/statuses");
    EU_IT_EXPECT_JSTR(&r, "account.roles.0.name", "Moderator");
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/%s", eu_it_id(&w, "mick"));
    ck_assert_int_eq(json_array_size(eu_it_jpath(r.json, "roles")), 0);
    free(eu_it_world_sql(&w,
                         "UPDATE user_roles SET highlighted = true, color = '#ff0000'"
                         " WHERE tenant_id = %s AND id = 77",
                         w.tid));
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/%s", eu_it_id(&w, "mick"));
    EU_IT_EXPECT_JSTR(&r, "roles.0.name", "Reports desk");
    EU_IT_EXPECT_JSTR(&r, "roles.0.color", "#ff0000");

    /* The operator demotes: the cached token loses the permission at once. */
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    char path[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(&w, "olga"));
    eu_it_admin(w.s, "PUT", path, "{\"role\":\"user\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/accounts");
    expect_error_text(&r, 403, "This action is not allowed");
    eu_it_admin(w.s, "PUT", path, "{\"role\":\"emperor\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 422);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/123/role", HOST);
    eu_it_admin(w.s, "PUT", path, "{\"role\":\"admin\"}", &r);
    EU_IT_EXPECT_ERROR(&r, 404);

    /* The operator's listener takes no tenant token, staff's included. */
    int rc = eu_it_http(&r, "GET", w.s->admin_port, NULL, "/admin/v1/tenants",
                        eu_it_tok(&w, "mona"), NULL);
    ck_assert_int_eq(rc, 0);
    EU_IT_EXPECT_ERROR(&r, 401);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(&w, "mona"));
    rc = eu_it_http(&r, "PUT", w.s->admin_port, NULL, path, eu_it_tok(&w, "olga"),
                    "{\"role\":\"owner\"}");
    ck_assert_int_eq(rc, 0);
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT role_id FROM users WHERE tenant_id = %s"
                                          " AND account_id = %s",
                                          w.tid, eu_it_id(&w, "mona")),
                     1);

    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_refusals)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *bob = eu_it_id(&w, "bob");

    /* A role without manage_users may not act on accounts. */
    call(&w, &r, "POST", "mick", "{\"type\":\"suspend\"}", "/api/v1/admin/accounts/%s/action", bob);
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", "mick", NULL, "/api/v1/admin/accounts");
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", "mick", NULL, "/api/v1/admin/reports");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* A user may ask for the admin scopes; they give nothing. */
    call(&w, &r, "GET", "ursula", NULL, "/api/v2/admin/accounts");
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "POST", "ursula", "{\"type\":\"suspend\"}", "/api/v1/admin/accounts/%s/action",
         bob);
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", "ursula", NULL, "/api/v1/admin/reports");
    expect_error_text(&r, 403, "This action is not allowed");

    /* An admin whose token lacks the scope is refused by the scope. */
    call(&w, &r, "GET", "adam", NULL, "/api/v1/admin/accounts");
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call(&w, &r, "POST", "adam", "{\"type\":\"suspend\"}", "/api/v1/admin/accounts/%s/action", bob);
    expect_error_text(&r, 403, "This action is outside the authorized scopes");
    call(&w, &r, "POST", "adam", NULL, "/api/v1/admin/reports/1/resolve");
    expect_error_text(&r, 403, "This action is outside the authorized scopes");

    /* A moderator does not outrank the owner. */
    call(&w, &r, "POST", "mona", "{\"type\":\"silence\"}", "/api/v1/admin/accounts/%s/action",
         eu_it_id(&w, "olga"));
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "POST", "mona", "{\"type\":\"nuke\"}", "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_ERROR(&r, 422);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts/4242");
    expect_error_text(&r, 404, "Record not found");
    /* Deleting needs delete_user_data, which a moderator lacks. */
    call(&w, &r, "DELETE", "mona", NULL, "/api/v1/admin/accounts/%s", bob);
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "GET", NULL, NULL, "/api/v1/admin/accounts");
    EU_IT_EXPECT_ERROR(&r, 401);

    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs"
                                          " WHERE tenant_id = %s",
                                          w.tid),
                     0);
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_account_actions)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *bob = eu_it_id(&w, "bob");

    /* The list: local and active by default, Admin::Account entities. */
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts?username=bo");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", bob);
    EU_IT_EXPECT_JSTR(&r, "0.username", "bob");
    EU_IT_EXPECT_JSTR(&r, "0.account.acct", "bob");
    EU_IT_EXPECT_JSTR(&r, "0.role.id", "-99");
    ck_assert(json_is_null(eu_it_jpath(r.json, "0.domain")));
    ck_assert(json_is_string(eu_it_jpath(r.json, "0.email")));
    expect_bool(&r, "0.confirmed", true);
    expect_bool(&r, "0.approved", true);
    expect_bool(&r, "0.suspended", false);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts?staff=true");
    ck_assert_int_eq(json_array_size(r.json), 4); /* olga, mona, mick, adam */
    call(&w, &r, "GET", "mona", NULL, "/api/v2/admin/accounts?role_ids[]=77");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.username", "mick");
    call(&w, &r, "GET", "mona", NULL, "/api/v2/admin/accounts?origin=remote");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", "mona", NULL, "/api/v2/admin/accounts?origin=mars");
    EU_IT_EXPECT_ERROR(&r, 400);
    /* Pages with Link, newest first; the decoy's users are not there. */
    call(&w, &r, "GET", "mona", NULL, "/api/v2/admin/accounts?limit=2");
    ck_assert_int_eq(json_array_size(r.json), 2);
    ck_assert_ptr_nonnull(eu_it_resp_header(&r, "Link"));
    ck_assert_ptr_nonnull(strstr(eu_it_resp_header(&r, "Link"), "rel=\"next\""));
    call(&w, &r, "GET", "mona", NULL, "/api/v2/admin/accounts?limit=200");
    ck_assert_int_eq(json_array_size(r.json), 7);

    /* bob posts; rita sees it. */
    call(&w, &r, "POST", "bob", "{\"status\":\"hello\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *status = strdup(eu_it_json_str(&r, "id"));
    call(&w, &r, "GET", "rita", NULL, "/api/v1/statuses/%s", status);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Suspension: a strike, an audit row, bob's token ends, his post hides. */
    call(&w, &r, "POST", "mona", "{\"type\":\"suspend\",\"text\":\"spam\"}",
         "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "{}");
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 401);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/statuses/%s", status);
    EU_IT_EXPECT_ERROR(&r, 404);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts/%s", bob);
    expect_bool(&r, "suspended", true);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts?suspended=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM account_warnings WHERE"
                                          " tenant_id = %s AND target_account_id = %s AND"
                                          " action = 'suspend' AND text = 'spam' AND"
                                          " account_id = %s",
                                          w.tid, bob, eu_it_id(&w, "mona")),
                     1);
    ck_assert_int_eq(audit_rows(&w, "suspend", bob), 1);
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/accounts/%s/unsuspend", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "suspended", false);
    ck_assert_int_eq(audit_rows(&w, "unsuspend", bob), 1);
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/statuses/%s", status);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* A disabled login is refused as Mastodon refuses it; enable undoes it. */
    call(&w, &r, "POST", "mona", "{\"type\":\"disable\"}", "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/verify_credentials");
    expect_error_text(&r, 403, "Your login is currently disabled");
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts?disabled=1");
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", bob);
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/accounts/%s/enable", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "disabled", false);
    call(&w, &r, "GET", "bob", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* Silence and sensitive, and their undoing. */
    call(&w, &r, "POST", "mona", "{\"type\":\"silence\"}", "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "POST", "mona", "{\"type\":\"sensitive\"}", "/api/v1/admin/accounts/%s/action",
         bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/accounts/%s", bob);
    expect_bool(&r, "silenced", true);
    expect_bool(&r, "sensitized", true);
    /* A silenced author leaves the public timeline of those who do not
     * follow it, as Mastodon's StatusFilter; its own view keeps it. */
    call(&w, &r, "GET", "rita", NULL, "/api/v1/timelines/public");
    ck_assert_ptr_null(eu_it_find(r.json, "id", status));
    call(&w, &r, "GET", "bob", NULL, "/api/v1/timelines/public");
    ck_assert_ptr_nonnull(eu_it_find(r.json, "id", status));
    /* A sensitized account's posts are marked sensitive. */
    call(&w, &r, "POST", "bob", "{\"status\":\"look\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "sensitive", true);
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/accounts/%s/unsilence", bob);
    expect_bool(&r, "silenced", false);
    call(&w, &r, "GET", "rita", NULL, "/api/v1/timelines/public");
    ck_assert_ptr_nonnull(eu_it_find(r.json, "id", status));
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/accounts/%s/unsensitive", bob);
    expect_bool(&r, "sensitized", false);
    call(&w, &r, "POST", "bob", "{\"status\":\"look again\"}", "/api/v1/statuses");
    expect_bool(&r, "sensitive", false);
    ck_assert_int_eq(audit_rows(&w, "unsensitive", bob), 1);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM account_warnings WHERE"
                                          " tenant_id = %s AND target_account_id = %s",
                                          w.tid, bob),
                     4);

    /* The owner deletes a suspended account's data (delete_user_data). */
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/accounts/%s", bob);
    expect_error_text(&r, 403, "This action is not allowed"); /* not suspended */
    call(&w, &r, "POST", "olga", "{\"type\":\"suspend\"}", "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "DELETE", "olga", NULL, "/api/v1/admin/accounts/%s", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(audit_rows(&w, "destroy", bob), 1);
    free(status);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_signup_approval)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    /* Two sign-ups waiting for approval, each with a token. */
    eu_it_world_add_user(&w, "pete", NULL, NULL, NULL);
    eu_it_world_add_user(&w, "rex", NULL, NULL, NULL);
    const char *pete = eu_it_id(&w, "pete"), *rex = eu_it_id(&w, "rex");
    free(eu_it_world_sql(&w,
                         "UPDATE users SET approved = false, reason = 'let me in'"
                         " WHERE tenant_id = %s AND account_id IN (%s, %s)",
                         w.tid, pete, rex));
    call(&w, &r, "GET", "pete", NULL, "/api/v1/accounts/verify_credentials");
    expect_error_text(&r, 403, "Your login is currently pending approval");

    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/accounts?pending=1");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 2);
    EU_IT_EXPECT_JSTR(&r, "0.invite_request", "let me in");
    expect_bool(&r, "0.approved", false);

    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/accounts/%s/approve", pete);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "id", pete);
    expect_bool(&r, "approved", true);
    call(&w, &r, "GET", "pete", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Approved already: Mastodon's policy refuses a second approval. */
    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/accounts/%s/approve", pete);
    expect_error_text(&r, 403, "This action is not allowed");
    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/accounts/%s/reject", pete);
    expect_error_text(&r, 403, "This action is not allowed");

    call(&w, &r, "POST", "olga", NULL, "/api/v1/admin/accounts/%s/reject", rex);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "{}");
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/accounts/%s", rex);
    expect_error_text(&r, 404, "Record not found");
    call(&w, &r, "GET", "rex", NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs WHERE"
                                          " tenant_id = %s AND action IN ('approve', 'reject')",
                                          w.tid),
                     2);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_reports)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *bob = eu_it_id(&w, "bob"), *mona = eu_it_id(&w, "mona");

    call(&w, &r, "POST", "bob", "{\"status\":\"buy now\"}", "/api/v1/statuses");
    char *status = strdup(eu_it_json_str(&r, "id"));
    char body[256];
    snprintf(body, sizeof(body),
             "{\"account_id\":\"%s\",\"status_ids\":[\"%s\"],\"comment\":\"spam\"}", bob, status);
    call(&w, &r, "POST", "rita", body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *report = strdup(eu_it_json_str(&r, "id"));

    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    EU_IT_EXPECT_JSTR(&r, "0.id", report);
    EU_IT_EXPECT_JSTR(&r, "0.comment", "spam");
    EU_IT_EXPECT_JSTR(&r, "0.account.id", eu_it_id(&w, "rita"));
    EU_IT_EXPECT_JSTR(&r, "0.account.account.acct", "rita");
    EU_IT_EXPECT_JSTR(&r, "0.target_account.id", bob);
    EU_IT_EXPECT_JSTR(&r, "0.statuses.0.id", status);
    ck_assert(json_is_null(eu_it_jpath(r.json, "0.assigned_account")));
    expect_bool(&r, "0.action_taken", false);
    /* Deleted since, the reported status still shows to the moderator. */
    call(&w, &r, "DELETE", "bob", NULL, "/api/v1/statuses/%s", status);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports/%s", report);
    EU_IT_EXPECT_JSTR(&r, "statuses.0.id", status);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports?target_account_id=%s",
         eu_it_id(&w, "rita"));
    ck_assert_int_eq(json_array_size(r.json), 0);

    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/reports/%s/assign_to_self", report);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "assigned_account.id", mona);
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/reports/%s/unassign", report);
    ck_assert(json_is_null(eu_it_jpath(r.json, "assigned_account")));
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/reports/%s/resolve", report);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bool(&r, "action_taken", true);
    EU_IT_EXPECT_JSTR(&r, "action_taken_by_account.id", mona);
    ck_assert(json_is_string(eu_it_jpath(r.json, "action_taken_at")));
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports");
    ck_assert_int_eq(json_array_size(r.json), 0);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports?resolved=true");
    ck_assert_int_eq(json_array_size(r.json), 1);
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/reports/%s/reopen", report);
    expect_bool(&r, "action_taken", false);
    ck_assert(json_is_null(eu_it_jpath(r.json, "action_taken_by_account")));
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports/%s", report);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "target_account.username", "bob");
    call(&w, &r, "POST", "mona", NULL, "/api/v1/admin/reports/4242/resolve");
    expect_error_text(&r, 404, "Record not found");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM admin_action_logs WHERE"
                                          " tenant_id = %s AND target_type = 'Report'"
                                          " AND target_id = %s",
                                          w.tid, report),
                     4);

    /* An action naming the report resolves it with a strike. */
    snprintf(body, sizeof(body), "{\"type\":\"none\",\"report_id\":\"%s\",\"text\":\"stop\"}",
             report);
    call(&w, &r, "POST", "mona", body, "/api/v1/admin/accounts/%s/action", bob);
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "GET", "mona", NULL, "/api/v1/admin/reports/%s", report);
    expect_bool(&r, "action_taken", true);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM account_warnings WHERE"
                                          " tenant_id = %s AND report_id = %s AND action = 'none'",
                                          w.tid, report),
                     1);
    free(status);
    free(report);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

/* Every route of the staff's API, with :id standing for the target. */
static const struct {
    const char *method, *path;
} staff_routes[] = {
    {"GET", "/api/v1/admin/accounts"},
    {"GET", "/api/v2/admin/accounts"},
    {"GET", "/api/v1/admin/accounts/%s"},
    {"POST", "/api/v1/admin/accounts/%s/approve"},
    {"POST", "/api/v1/admin/accounts/%s/reject"},
    {"POST", "/api/v1/admin/accounts/%s/action"},
    {"POST", "/api/v1/admin/accounts/%s/enable"},
    {"POST", "/api/v1/admin/accounts/%s/unsilence"},
    {"POST", "/api/v1/admin/accounts/%s/unsuspend"},
    {"POST", "/api/v1/admin/accounts/%s/unsensitive"},
    {"DELETE", "/api/v1/admin/accounts/%s"},
    {"GET", "/api/v1/admin/reports"},
    {"GET", "/api/v1/admin/reports/%s"},
    {"POST", "/api/v1/admin/reports/%s/assign_to_self"},
    {"POST", "/api/v1/admin/reports/%s/unassign"},
    {"POST", "/api/v1/admin/reports/%s/resolve"},
    {"POST", "/api/v1/admin/reports/%s/reopen"},
};

/* The decoy's rows a staff member of the host could change. */
static char *
decoy_state(struct world *w)
{
    return eu_it_world_sql(
        w,
        "SELECT (SELECT string_agg(concat_ws(',', a.id, a.suspended_at, a.silenced_at,"
        " a.sensitized_at, u.disabled, u.approved, u.role_id), ';' ORDER BY a.id)"
        " FROM accounts a LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.account_id = a.id"
        " WHERE a.tenant_id = %s) || '|' || (SELECT coalesce(string_agg(concat_ws(',', id,"
        " action_taken_at, assigned_account_id), ';'), '') FROM reports WHERE tenant_id = %s)"
        " || '|' || (SELECT count(*) FROM admin_action_logs WHERE tenant_id = %s)"
        " || '|' || (SELECT count(*) FROM account_warnings WHERE tenant_id = %s)",
        w->decoy_tid, w->decoy_tid, w->decoy_tid, w->decoy_tid);
}

START_TEST(test_cross_tenant)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    appoint(&w);
    const char *dan = eu_it_id(&w, "dan");
    /* A report on the decoy, and a pending sign-up there. */
    eu_it_callf(w.s, &r, DECOY, "POST", eu_it_tok(&w, "dora"), "{\"status\":\"x\"}",
                "/api/v1/statuses");
    char body[128];
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\"}", dan);
    eu_it_callf(w.s, &r, DECOY, "POST", eu_it_tok(&w, "dora"), body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *report = strdup(eu_it_json_str(&r, "id"));
    free(eu_it_world_sql(&w,
                         "UPDATE users SET approved = false WHERE tenant_id = %s"
                         " AND account_id = %s",
                         w.decoy_tid, dan));
    char *before = decoy_state(&w);

    /* The host's owner on the decoy's host, and the decoy's owner's token
     * naming the decoy's rows on the host's: no token of one tenant is
     * known to the other. */
    const char *who[] = {"olga", "mona"};
    for (size_t k = 0; k < sizeof(who) / sizeof(who[0]); k++)
        for (size_t i = 0; i < sizeof(staff_routes) / sizeof(staff_routes[0]); i++) {
            const char *id = strstr(staff_routes[i].path, "reports/") ? report : dan;
            eu_it_callf(w.s, &r, DECOY, staff_routes[i].method, eu_it_tok(&w, who[k]),
                        "{\"type\":\"suspend\"}", staff_routes[i].path, id);
            ck_assert_msg(r.status == 401, "%s %s on the decoy: %ld %s", staff_routes[i].method,
                          staff_routes[i].path, r.status, r.body);
        }
    /* The decoy's ids through the host, with the host's owner: not found. */
    for (size_t i = 0; i < sizeof(staff_routes) / sizeof(staff_routes[0]); i++) {
        if (!strstr(staff_routes[i].path, "%s"))
            continue;
        const char *id = strstr(staff_routes[i].path, "reports/") ? report : dan;
        eu_it_callf(w.s, &r, HOST, staff_routes[i].method, eu_it_tok(&w, "olga"),
                    "{\"type\":\"suspend\"}", staff_routes[i].path, id);
        ck_assert_msg(r.status == 404, "%s %s with a decoy id: %ld %s", staff_routes[i].method,
                      staff_routes[i].path, r.status, r.body);
    }
    /* And the host's lists hold nothing of the decoy's. */
    call(&w, &r, "GET", "olga", NULL, "/api/v2/admin/accounts?limit=200");
    ck_assert_ptr_null(eu_it_find(r.json, "id", dan));
    call(&w, &r, "GET", "olga", NULL, "/api/v1/admin/reports");
    ck_assert_int_eq(json_array_size(r.json), 0);

    char *after = decoy_state(&w);
    ck_assert_str_eq(before, after);
    /* The decoy's own owner still can. */
    eu_it_callf(w.s, &r, DECOY, "GET", eu_it_tok(&w, "dora"), NULL, "/api/v1/admin/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_array_size(r.json), 1);
    free(before);
    free(after);
    free(report);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("staff");
    EU_IT_ADD_TCASE(s, test_roles_in_credentials, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_refusals, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_account_actions, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_signup_approval, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_reports, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_cross_tenant, TIMEOUT);
    return eu_it_run_suite(s);
}
