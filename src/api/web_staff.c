/*
 * The moderation pages of a tenant's staff, on the tenant's own host
 * under /admin/ as Mastodon's: the reports queue and a report (assign,
 * resolve, reopen, act on the account), the sign-ups awaiting approval
 * (approve, reject), an account's page with its actions, and the
 * instance's rules (add, edit, remove), its custom emoji (upload,
 * enable, disable) and its domain blocks (web_staff_blocks.c). Each is a thin page over the admin
 * API's own code (staff_internal.h): the same statements, the same policies, the same audit rows
 * and mails, rendered from the same Admin::Report and Admin::Account entities.
 *
 * A browser signs in with the web session (websession_internal.h); its
 * role's permission bits decide which pages it sees, as the API decides
 * with the token's: a page the role may not use answers 403 with a page,
 * and the navigation lists only the pages it may use. Every form carries
 * the session's CSRF token, and a post without it changes nothing. A
 * change answers 303 back to the page it was made from, so reloading it
 * repeats nothing.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/router.h"
#include "eunha/sql.h"
#include "staff_internal.h"
#include "web_internal.h"
#include "web_settings_internal.h"
#include "web_staff_internal.h"
#include "web_text.h"
#include "websession_internal.h"

enum {
    WEB_STAFF_PERMISSIONS,
};

const struct eu_sql eu_web_staff_sql[] = {
    /* $2 the signed-in user: its role's permission bits, as a token's
     * (src/http/auth.c), none for a disabled login. */
    [WEB_STAFF_PERMISSIONS] = {"web_staff.permissions",
                               "SELECT r.permissions FROM users u"
                               " CROSS JOIN LATERAL eunha_role($1, u.role_id) r"
                               " WHERE u.tenant_id = $1 AND u.id = $2 AND NOT u.disabled"},
    {0},
};

/* ------------------------------------------------------------ the frame */

/* The moderation pages, each with the permission its API asks for. */
static const struct {
    const char *path, *name;
    int64_t perm;
} NAV[] = {
    {"/admin/reports", "Reports", EU_PERM_MANAGE_REPORTS},
    {"/admin/accounts", "Pending sign-ups", EU_PERM_MANAGE_USERS},
    {"/admin/rules", "Rules", EU_PERM_MANAGE_RULES},
    {"/admin/custom_emojis", "Custom emoji", EU_PERM_MANAGE_CUSTOM_EMOJIS},
    {"/admin/domain_blocks", "Domain blocks", EU_PERM_MANAGE_FEDERATION},
};

/* The staff's navigation: the pages the role may use, current marked. */
static const char *
staff_nav(struct eu_req *req, const char *current)
{
    const char *items = "";
    for (size_t i = 0; i < sizeof(NAV) / sizeof(NAV[0]); i++) {
        if (!(req->auth.permissions & NAV[i].perm))
            continue;
        items =
            eu_arena_sprintf(req->arena, "%s<li><a href=\"%s\"%s>%s</a></li>", items, NAV[i].path,
                             strcmp(NAV[i].path, current) == 0 ? " aria-current=\"page\"" : "",
                             eu_html_escape(req, eu_web_t(req, NAV[i].name)));
    }
    return eu_arena_sprintf(req->arena, "<nav class=\"subnav\" aria-label=\"%s\"><ul>%s</ul></nav>",
                            eu_html_escape(req, eu_web_t(req, "Moderation")), items);
}

void
eu_web_staff_reply(struct eu_req *req, int status, const char *nav_current, const char *title,
                   const char *body)
{
    eu_web_reply_page(req, status, title,
                      eu_arena_sprintf(req->arena, "%s<h1>%s</h1>%s", staff_nav(req, nav_current),
                                       eu_html_escape(req, title), body));
}

void
eu_web_staff_refused(struct eu_req *req, int status)
{
    const char *title = eu_web_t(req, status == 404 ? "Not found" : "Not allowed");
    const char *text = eu_web_t(req, status == 404 ? "There is nothing here."
                                                   : "Your role does not allow this page.");
    eu_web_reply_page(req, status, title,
                      eu_arena_sprintf(req->arena, "<h1>%s</h1><p>%s</p>",
                                       eu_html_escape(req, title), eu_html_escape(req, text)));
}

void
eu_web_staff_redirect(struct eu_req *req, const char *location)
{
    eu_req_add_header(req, "Location", location);
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 303, "text/html; charset=utf-8", "", 0);
}

static const char *
t(struct eu_req *req, const char *english)
{
    return eu_html_escape(req, eu_web_t(req, english));
}

static const char *
jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* ------------------------------------------------- session and role */

struct staff_req {
    const struct eu_web_session *s;
    json_t *params;
    int64_t need; /* any of these permission bits */
    eu_web_staff_cb cb;
    void *arg;
};

static void
on_permissions(struct eu_req *req, PGresult *res, void *arg)
{
    struct staff_req *sr = arg;
    /* The page acts as the signed-in user, as a token would: the staff
     * code reads the moderator and the role from req->auth. */
    req->auth.user_id = sr->s->user_id;
    req->auth.account_id = sr->s->account_id;
    req->auth.permissions = PQntuples(res) == 1 ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : 0;
    if (!(req->auth.permissions & sr->need)) {
        eu_web_staff_refused(req, 403);
        return;
    }
    if (req->method == EU_HTTP_POST && !eu_web_session_csrf_ok(sr->s, sr->params)) {
        eu_web_reply_page(
            req, 422, eu_web_t(req, "Invalid authenticity token"),
            eu_arena_sprintf(req->arena, "<h1>%s</h1><p>%s</p>",
                             t(req, "Invalid authenticity token"),
                             t(req, "The page was open too long or came from elsewhere; "
                                    "nothing was changed. Go back, reload and try again.")));
        return;
    }
    sr->cb(req, sr->s, sr->params, sr->arg);
}

static void
on_session(struct eu_req *req, const struct eu_web_session *s, void *arg)
{
    struct staff_req *sr = arg;
    sr->s = s;
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)s->user_id);
    const char *p[] = {uid};
    eu_req_stmt(req, &eu_web_staff_sql[WEB_STAFF_PERMISSIONS], 1, p, on_permissions, sr);
}

void
eu_web_staff_require(struct eu_req *req, int64_t any_of, eu_web_staff_cb cb, void *arg)
{
    struct eu_error err = {0};
    json_t *params = eu_req_params(req, &err);
    if (!params) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    struct staff_req *sr = eu_arena_calloc(req->arena, sizeof(*sr));
    sr->params = params;
    sr->need = any_of;
    sr->cb = cb;
    sr->arg = arg;
    eu_web_session_require(req, on_session, sr);
}

/* ------------------------------------------------------------ accounts */

/* "@name" or "@name@domain" of an Admin::Account or an Account. */
static const char *
acct_of(struct eu_req *req, json_t *a)
{
    json_t *inner = json_object_get(a, "account");
    const char *acct = jstr(inner ? inner : a, "acct");
    if (!*acct)
        acct = jstr(a, "username");
    return eu_arena_sprintf(req->arena, "@%s", acct);
}

/* A link to an Admin::Account's page, or a dash for none. */
static const char *
account_link(struct eu_req *req, json_t *a)
{
    if (!json_is_object(a))
        return "&mdash;";
    return eu_arena_sprintf(req->arena, "<a href=\"/admin/accounts/%s\">%s</a>",
                            eu_html_escape(req, jstr(a, "id")),
                            eu_html_escape(req, acct_of(req, a)));
}

/* The states a moderator acts on, in words. */
static const char *
account_states(struct eu_req *req, json_t *a)
{
    static const char *const keys[] = {"suspended", "silenced", "sensitized", "disabled"};
    static const char *const words[] = {"Suspended", "Limited", "Media marked sensitive",
                                        "Login disabled"};
    const char *out = "";
    for (size_t i = 0; i < 4; i++)
        if (json_is_true(json_object_get(a, keys[i])))
            out = eu_arena_sprintf(req->arena, "%s<li>%s</li>", out, t(req, words[i]));
    if (!json_is_true(json_object_get(a, "approved")) &&
        json_is_string(json_object_get(a, "email")))
        out = eu_arena_sprintf(req->arena, "%s<li>%s</li>", out, t(req, "Awaiting approval"));
    if (!*out)
        return eu_arena_sprintf(req->arena, "<p>%s</p>", t(req, "No restrictions."));
    return eu_arena_sprintf(req->arena, "<ul class=\"tags\">%s</ul>", out);
}

/* The form that acts on account id: a warning or a restriction with a
 * text the user is sent, answering report_id when not NULL. */
static const char *
action_form(struct eu_req *req, const struct eu_web_session *s, const char *id,
            const char *report_id)
{
    static const char *const types[] = {"none", "sensitive", "disable", "silence", "suspend"};
    static const char *const words[] = {"Warn", "Mark media as sensitive", "Disable login", "Limit",
                                        "Suspend"};
    const char *options = "";
    for (size_t i = 0; i < 5; i++)
        options = eu_arena_sprintf(req->arena, "%s<option value=\"%s\">%s</option>", options,
                                   types[i], t(req, words[i]));
    return eu_arena_sprintf(
        req->arena,
        "<form method=\"post\" action=\"/admin/accounts/%s\" class=\"card\">%s%s"
        "<h2>%s</h2><label for=\"do\">%s</label><select id=\"do\" name=\"do\">%s</select>"
        "<label for=\"text\">%s</label><textarea id=\"text\" name=\"text\" maxlength=\"5000\">"
        "</textarea><p class=\"hint\">%s</p><button type=\"submit\" class=\"danger\">%s</button>"
        "</form>",
        eu_html_escape(req, id), eu_web_csrf_field(req, s),
        report_id ? eu_arena_sprintf(req->arena,
                                     "<input type=\"hidden\" name=\"report_id\" value=\"%s\">",
                                     eu_html_escape(req, report_id))
                  : "",
        t(req, "Act on the account"), t(req, "Action"), options, t(req, "Text sent to the user"),
        t(req, "The user is sent this text. Any action other than a warning resolves every open "
               "report on the account."),
        t(req, "Perform action"));
}

const char *
eu_web_staff_button(struct eu_req *req, const struct eu_web_session *s, const char *action,
                    const char *what, const char *label, bool danger)
{
    return eu_arena_sprintf(req->arena,
                            "<form method=\"post\" action=\"%s\" class=\"inline\">%s"
                            "<input type=\"hidden\" name=\"do\" value=\"%s\">"
                            "<button type=\"submit\"%s>%s</button></form>",
                            eu_html_escape(req, action), eu_web_csrf_field(req, s), what,
                            danger ? " class=\"danger\"" : " class=\"secondary\"", t(req, label));
}

struct acct_page {
    const struct eu_web_session *s;
    const char *id;
};

static void
on_account(struct eu_req *req, json_t *by_id, void *arg)
{
    struct acct_page *ap = arg;
    json_t *a = json_object_get(by_id, ap->id);
    if (!a) {
        json_decref(by_id);
        eu_web_staff_refused(req, 404);
        return;
    }
    json_t *inner = json_object_get(a, "account");
    const char *action = eu_arena_sprintf(req->arena, "/admin/accounts/%s", ap->id);
    const char *undo = "";
    if (json_is_true(json_object_get(a, "suspended")))
        undo = eu_web_staff_button(req, ap->s, action, "unsuspend", "Undo suspension", false);
    if (json_is_true(json_object_get(a, "silenced")))
        undo = eu_arena_sprintf(
            req->arena, "%s%s", undo,
            eu_web_staff_button(req, ap->s, action, "unsilence", "Undo limit", false));
    if (json_is_true(json_object_get(a, "disabled")))
        undo = eu_arena_sprintf(
            req->arena, "%s%s", undo,
            eu_web_staff_button(req, ap->s, action, "enable", "Enable login", false));
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><p><strong>%s</strong> <span class=\"muted\">%s</span></p>"
        "<dl class=\"fields\"><dt>%s</dt><dd>%s</dd><dt>%s</dt><dd>%s</dd></dl>%s"
        "<div class=\"actions\">%s</div></div>%s<p><a href=\"/admin/reports\">%s</a></p>",
        eu_html_escape(req, jstr(inner, "display_name")), eu_html_escape(req, acct_of(req, a)),
        t(req, "Joined"), eu_html_escape(req, jstr(a, "created_at")), t(req, "E-mail"),
        eu_html_escape(req, jstr(a, "email")), account_states(req, a), undo,
        json_is_true(json_object_get(a, "suspended")) ? "" : action_form(req, ap->s, ap->id, NULL),
        t(req, "Back to the reports"));
    const char *title =
        eu_arena_sprintf(req->arena, "%s %s", eu_web_t(req, "Account"), acct_of(req, a));
    json_decref(by_id);
    eu_web_staff_reply(req, 200, "", title, body);
}

static void
account_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)params;
    (void)arg;
    struct acct_page *ap = eu_arena_calloc(req->arena, sizeof(*ap));
    ap->s = s;
    ap->id = eu_req_param(req, "id");
    if (!ap->id || !eu_id_is_valid(ap->id)) {
        eu_web_staff_refused(req, 404);
        return;
    }
    const char *ids[] = {ap->id};
    eu_staff_accounts_load(req, ids, 1, on_account, ap);
}

static void
get_account(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_USERS, account_page, NULL);
}

/* ------------------------------------------------- pending sign-ups */

static void
on_pending(struct eu_req *req, json_t *accounts, void *arg)
{
    const struct eu_web_session *s = arg;
    const char *rows = "";
    size_t i;
    json_t *a;
    json_array_foreach(accounts, i, a)
    {
        const char *id = jstr(a, "id");
        const char *action = eu_arena_sprintf(req->arena, "/admin/accounts/%s", id);
        const char *reason = jstr(a, "invite_request");
        rows =
            eu_arena_sprintf(req->arena,
                             "%s<li class=\"card\" data-account=\"%s\"><p><strong>%s</strong> "
                             "<span class=\"muted\">%s</span></p>%s<p class=\"muted\">%s %s</p>"
                             "<div class=\"actions\">%s%s</div></li>",
                             rows, eu_html_escape(req, id), eu_html_escape(req, acct_of(req, a)),
                             eu_html_escape(req, jstr(a, "email")),
                             *reason ? eu_arena_sprintf(req->arena, "<blockquote>%s</blockquote>",
                                                        eu_html_escape(req, reason))
                                     : "",
                             t(req, "Signed up"), eu_html_escape(req, jstr(a, "created_at")),
                             eu_web_staff_button(req, s, action, "approve", "Approve", false),
                             eu_web_staff_button(req, s, action, "reject", "Reject", true));
    }
    const char *body = *rows ? eu_arena_sprintf(req->arena, "<ul class=\"plain\">%s</ul>", rows)
                             : eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                                t(req, "No sign-up is waiting for approval."));
    eu_web_staff_reply(req, 200, "/admin/accounts", eu_web_t(req, "Pending sign-ups"), body);
}

static void
pending_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)params;
    (void)arg;
    eu_staff_accounts_pending(req, on_pending, (void *)s);
}

static void
get_accounts(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_USERS, pending_page, NULL);
}

/* POST /admin/accounts/:id: do (approve, reject, enable, unsilence,
 * unsuspend, or an action with text and report_id). */
struct acct_change {
    const char *id, *what, *report_id;
};

static void
on_account_changed(struct eu_req *req, int status, void *arg)
{
    struct acct_change *c = arg;
    if (status == 422) {
        eu_web_reply_page(
            req, 422, eu_web_t(req, "Act on the account"),
            eu_arena_sprintf(req->arena, "<h1>%s</h1><p class=\"error\" role=\"alert\">%s</p>",
                             t(req, "Act on the account"),
                             t(req, "The text is too long: at most 5000 bytes. Nothing was "
                                    "changed; go back and shorten it.")));
        return;
    }
    if (status != 200) {
        eu_web_staff_refused(req, status);
        return;
    }
    if (c->report_id)
        eu_web_staff_redirect(req, eu_arena_sprintf(req->arena, "/admin/reports/%s", c->report_id));
    else if (strcmp(c->what, "approve") == 0 || strcmp(c->what, "reject") == 0)
        eu_web_staff_redirect(req, "/admin/accounts");
    else
        eu_web_staff_redirect(req, eu_arena_sprintf(req->arena, "/admin/accounts/%s", c->id));
}

static void
account_change(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)s;
    (void)arg;
    struct acct_change *c = eu_arena_calloc(req->arena, sizeof(*c));
    c->id = eu_req_param(req, "id");
    c->what = eu_param_str(params, "do");
    const char *report = eu_param_str(params, "report_id");
    c->report_id = report && *report && eu_id_is_valid(report) ? report : NULL;
    if (!c->id || !eu_id_is_valid(c->id) || !c->what || !*c->what) {
        eu_web_staff_refused(req, 404);
        return;
    }
    eu_staff_account_change(req, c->id, c->what, eu_param_str(params, "text"), c->report_id,
                            on_account_changed, c);
}

static void
post_account(struct eu_req *req)
{
    /* The change asks for its own permission (the API's); any staff role
     * that may see an account page gets that far. */
    eu_web_staff_require(req, EU_PERM_MANAGE_USERS | EU_PERM_DELETE_USER_DATA, account_change,
                         NULL);
}

/* ------------------------------------------------------------ reports */

static const char *
category_word(struct eu_req *req, const char *c)
{
    if (strcmp(c, "spam") == 0)
        return t(req, "Spam");
    if (strcmp(c, "legal") == 0)
        return t(req, "Legal");
    if (strcmp(c, "violation") == 0)
        return t(req, "Rule violation");
    return t(req, "Other");
}

/* The first max bytes of s, cut between characters, with an ellipsis
 * when cut. */
static const char *
excerpt(struct eu_req *req, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return s;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return eu_arena_sprintf(req->arena, "%.*s\xe2\x80\xa6", (int)max, s);
}

struct reports_page {
    const struct eu_web_session *s;
    bool resolved;
    const char *id;
};

static void
on_reports(struct eu_req *req, json_t *reports, void *arg)
{
    struct reports_page *rp = arg;
    const char *rows = "";
    size_t i;
    json_t *r;
    json_array_foreach(reports, i, r)
    {
        const char *comment = jstr(r, "comment");
        rows = eu_arena_sprintf(
            req->arena,
            "%s<tr data-report=\"%s\"><td><a href=\"/admin/reports/%s\">#%s</a></td>"
            "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
            rows, eu_html_escape(req, jstr(r, "id")), eu_html_escape(req, jstr(r, "id")),
            eu_html_escape(req, jstr(r, "id")),
            account_link(req, json_object_get(r, "target_account")),
            account_link(req, json_object_get(r, "account")),
            category_word(req, jstr(r, "category")),
            eu_html_escape(req, excerpt(req, comment, 140)),
            account_link(req, json_object_get(r, "assigned_account")));
    }
    const char *tabs = eu_arena_sprintf(
        req->arena,
        "<nav class=\"tabs\" aria-label=\"%s\"><a href=\"/admin/reports\"%s>%s</a>"
        "<a href=\"/admin/reports?resolved=1\"%s>%s</a></nav>",
        t(req, "Report state"), rp->resolved ? "" : " aria-current=\"page\"", t(req, "Open"),
        rp->resolved ? " aria-current=\"page\"" : "", t(req, "Resolved"));
    const char *body =
        *rows ? eu_arena_sprintf(req->arena,
                                 "%s<div class=\"table-wrap\"><table><caption "
                                 "class=\"visually-hidden\">%s</caption><thead><tr>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th></tr>"
                                 "</thead><tbody>%s</tbody></table></div>",
                                 tabs, t(req, "Reports"), t(req, "Report"), t(req, "Reported"),
                                 t(req, "By"), t(req, "Category"), t(req, "Comment"),
                                 t(req, "Assigned to"), rows)
              : eu_arena_sprintf(req->arena, "%s<p class=\"muted\">%s</p>", tabs,
                                 t(req, rp->resolved ? "No resolved report."
                                                     : "No open report: nothing to do."));
    eu_web_staff_reply(req, 200, "/admin/reports", eu_web_t(req, "Reports"), body);
}

static void
reports_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)arg;
    struct reports_page *rp = eu_arena_calloc(req->arena, sizeof(*rp));
    rp->s = s;
    const char *resolved = eu_param_str(params, "resolved");
    rp->resolved = resolved && *resolved && strcmp(resolved, "0") != 0;
    eu_staff_reports_load(req, rp->resolved, NULL, on_reports, rp);
}

static void
get_reports(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_REPORTS, reports_page, NULL);
}

/* The statuses a report names, as the API renders them (sanitized). */
static const char *
report_statuses(struct eu_req *req, json_t *statuses)
{
    const char *out = "";
    size_t i;
    json_t *st;
    json_array_foreach(statuses, i, st)
    {
        const char *cw = jstr(st, "spoiler_text");
        out = eu_arena_sprintf(
            req->arena,
            "%s<article class=\"status\"><p class=\"meta\">%s &middot; %s</p>%s"
            "<div class=\"content\">%s</div></article>",
            out, eu_html_escape(req, acct_of(req, json_object_get(st, "account"))),
            eu_html_escape(req, jstr(st, "created_at")),
            *cw ? eu_arena_sprintf(req->arena, "<p><strong>%s</strong> %s</p>",
                                   t(req, "Content warning:"), eu_html_escape(req, cw))
                : "",
            jstr(st, "content"));
    }
    if (!*out)
        return eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                t(req, "The report names no post."));
    return out;
}

static void
on_report(struct eu_req *req, json_t *r, void *arg)
{
    struct reports_page *rp = arg;
    if (!r) {
        eu_web_staff_refused(req, 404);
        return;
    }
    const char *id = jstr(r, "id");
    const char *action = eu_arena_sprintf(req->arena, "/admin/reports/%s", id);
    json_t *assigned = json_object_get(r, "assigned_account");
    bool mine =
        json_is_object(assigned) && strtoll(jstr(assigned, "id"), NULL, 10) == rp->s->account_id;
    bool resolved = json_is_true(json_object_get(r, "action_taken"));
    json_t *target = json_object_get(r, "target_account");
    const char *rules = "";
    size_t i;
    json_t *rule;
    json_array_foreach(json_object_get(r, "rules"), i, rule) rules = eu_arena_sprintf(
        req->arena, "%s<li>%s</li>", rules, eu_html_escape(req, jstr(rule, "text")));
    const char *comment = jstr(r, "comment");
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><dl class=\"fields\"><dt>%s</dt><dd>%s</dd><dt>%s</dt><dd>%s</dd>"
        "<dt>%s</dt><dd>%s</dd><dt>%s</dt><dd>%s</dd><dt>%s</dt><dd>%s</dd><dt>%s</dt><dd>%s</dd>"
        "</dl>%s%s<div class=\"actions\">%s%s</div></div>"
        "<h2>%s</h2><div class=\"card\">%s</div>%s",
        t(req, "Reported"), account_link(req, target), t(req, "By"),
        account_link(req, json_object_get(r, "account")), t(req, "Category"),
        category_word(req, jstr(r, "category")), t(req, "Received"),
        eu_html_escape(req, jstr(r, "created_at")), t(req, "Assigned to"),
        account_link(req, assigned), t(req, "State"),
        resolved ? t(req, "Resolved") : t(req, "Open"),
        *comment ? eu_arena_sprintf(req->arena, "<h2>%s</h2><blockquote>%s</blockquote>",
                                    t(req, "Comment"), eu_html_escape(req, comment))
                 : "",
        *rules
            ? eu_arena_sprintf(req->arena, "<h2>%s</h2><ul>%s</ul>", t(req, "Rules broken"), rules)
            : "",
        mine ? eu_web_staff_button(req, rp->s, action, "unassign", "Unassign", false)
             : eu_web_staff_button(req, rp->s, action, "assign", "Assign to me", false),
        resolved ? eu_web_staff_button(req, rp->s, action, "reopen", "Reopen", false)
                 : eu_web_staff_button(req, rp->s, action, "resolve", "Resolve", false),
        t(req, "Reported posts"), report_statuses(req, json_object_get(r, "statuses")),
        json_is_object(target) && !json_is_true(json_object_get(target, "suspended")) &&
                (req->auth.permissions & EU_PERM_MANAGE_USERS)
            ? action_form(req, rp->s, jstr(target, "id"), id)
            : "");
    eu_web_staff_reply(req, 200, "/admin/reports",
                       eu_arena_sprintf(req->arena, "%s #%s", eu_web_t(req, "Report"), id), body);
}

static void
report_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)params;
    (void)arg;
    struct reports_page *rp = eu_arena_calloc(req->arena, sizeof(*rp));
    rp->s = s;
    rp->id = eu_req_param(req, "id");
    if (!rp->id || !eu_id_is_valid(rp->id)) {
        eu_web_staff_refused(req, 404);
        return;
    }
    eu_staff_reports_load(req, false, rp->id, on_report, rp);
}

static void
get_report(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_REPORTS, report_page, NULL);
}

static void
on_report_changed(struct eu_req *req, int status, void *arg)
{
    if (status != 200) {
        eu_web_staff_refused(req, status);
        return;
    }
    eu_web_staff_redirect(req,
                          eu_arena_sprintf(req->arena, "/admin/reports/%s", (const char *)arg));
}

/* POST /admin/reports/:id: do = assign, unassign, resolve or reopen. */
static void
report_change(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)s;
    (void)arg;
    static const char *const known[] = {"assign", "unassign", "resolve", "reopen"};
    const char *id = eu_req_param(req, "id");
    const char *what = eu_param_str(params, "do");
    bool ok = false;
    for (size_t i = 0; what && i < 4; i++)
        ok = ok || strcmp(what, known[i]) == 0;
    if (!id || !eu_id_is_valid(id) || !ok) {
        eu_web_staff_refused(req, 404);
        return;
    }
    eu_staff_report_change(req, id, what, on_report_changed, (void *)id);
}

static void
post_report(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_REPORTS, report_change, NULL);
}

/* ------------------------------------------------------------ rules */

#define RULES_PATH "/admin/rules"

/* The text and hint fields of a rule's form; prefix keeps ids unique. */
static const char *
rule_fields(struct eu_req *req, const char *prefix, const char *text, const char *hint)
{
    return eu_arena_sprintf(
        req->arena,
        "<label for=\"%s-text\">%s</label><input type=\"text\" id=\"%s-text\" name=\"text\" "
        "value=\"%s\" required maxlength=\"1000\"><label for=\"%s-hint\">%s</label>"
        "<input type=\"text\" id=\"%s-hint\" name=\"hint\" value=\"%s\" maxlength=\"1000\">",
        prefix, t(req, "Rule"), prefix, eu_html_escape(req, text), prefix, t(req, "Explanation"),
        prefix, eu_html_escape(req, hint));
}

static void
on_rules(struct eu_req *req, json_t *rules, void *arg)
{
    const struct eu_web_session *s = arg;
    const char *rows = "";
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        const char *id = eu_html_escape(req, jstr(r, "id"));
        const char *prefix = eu_arena_sprintf(req->arena, "rule-%s", id);
        rows = eu_arena_sprintf(
            req->arena,
            "%s<li class=\"card\" data-rule=\"%s\"><form method=\"post\" action=\"" RULES_PATH
            "/%s\">%s%s<div class=\"actions\"><button type=\"submit\" name=\"do\" "
            "value=\"update\">%s</button><button type=\"submit\" name=\"do\" value=\"destroy\" "
            "class=\"danger\">%s</button></div></form></li>",
            rows, id, id, eu_web_csrf_field(req, s),
            rule_fields(req, prefix, jstr(r, "text"), jstr(r, "hint")), t(req, "Save"),
            t(req, "Delete"));
    }
    const char *body = eu_arena_sprintf(
        req->arena,
        "<p>%s</p>%s<h2>%s</h2><form method=\"post\" action=\"" RULES_PATH "\" class=\"card\">"
        "%s%s<button type=\"submit\">%s</button></form>",
        t(req, "The rules people agree to when they sign up, shown on the about page."),
        *rows ? eu_arena_sprintf(req->arena, "<ol class=\"plain\">%s</ol>", rows)
              : eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>", t(req, "No rules yet.")),
        t(req, "Add a rule"), eu_web_csrf_field(req, s), rule_fields(req, "new", "", ""),
        t(req, "Add"));
    eu_web_staff_reply(req, 200, RULES_PATH, eu_web_t(req, "Rules"), body);
}

static void
rules_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)params;
    (void)arg;
    eu_staff_rules_load(req, on_rules, (void *)s);
}

static void
get_rules(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_RULES, rules_page, NULL);
}

static void
on_rule_changed(struct eu_req *req, int status, void *arg)
{
    (void)arg;
    if (status == 422) {
        eu_web_reply_page(
            req, 422, eu_web_t(req, "Rules"),
            eu_arena_sprintf(req->arena,
                             "<h1>%s</h1><p class=\"error\" role=\"alert\">%s</p><p><a "
                             "href=\"" RULES_PATH "\">%s</a></p>",
                             t(req, "Rules"),
                             t(req, "A rule needs a text, and text and explanation are at most "
                                    "1000 characters."),
                             t(req, "Back to the rules")));
        return;
    }
    if (status != 200) {
        eu_web_staff_refused(req, status);
        return;
    }
    eu_web_staff_redirect(req, RULES_PATH);
}

/* POST /admin/rules (a new rule) and /admin/rules/:id (do = update or
 * destroy). */
static void
rule_change(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)s;
    (void)arg;
    const char *id = eu_req_param(req, "id");
    const char *what = id ? eu_param_str(params, "do") : "create";
    if ((id && !eu_id_is_valid(id)) || !what ||
        (id && strcmp(what, "update") != 0 && strcmp(what, "destroy") != 0)) {
        eu_web_staff_refused(req, 404);
        return;
    }
    bool destroy = strcmp(what, "destroy") == 0;
    eu_staff_rules_change(req, what, id, destroy ? NULL : eu_param_str(params, "text"),
                          destroy ? NULL : eu_param_str(params, "hint"), on_rule_changed, NULL);
}

static void
post_rules(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_RULES, rule_change, NULL);
}

/* ------------------------------------------------------ custom emoji */

#define EMOJIS_PATH "/admin/custom_emojis"

struct emojis_page {
    const struct eu_web_session *s;
    const char *error; /* a refused or failed upload's text */
    int status;        /* the page's answer: 200, or the upload's error */
};

/* The form that adds an emoji: a shortcode, a category and the image. */
static const char *
emoji_form(struct eu_req *req, const struct eu_web_session *s)
{
    return eu_arena_sprintf(
        req->arena,
        "<h2>%s</h2><form method=\"post\" action=\"" EMOJIS_PATH "\" class=\"card\" "
        "enctype=\"multipart/form-data\">%s<label for=\"shortcode\">%s</label><input "
        "type=\"text\" id=\"shortcode\" name=\"shortcode\" required minlength=\"2\" "
        "maxlength=\"128\" pattern=\"[A-Za-z0-9_]+\" aria-describedby=\"shortcode-hint\">"
        "<p class=\"hint\" id=\"shortcode-hint\">%s</p><label for=\"category\">%s</label>"
        "<input type=\"text\" id=\"category\" name=\"category\" maxlength=\"64\">"
        "<label for=\"image\">%s</label><input type=\"file\" id=\"image\" name=\"image\" "
        "required accept=\"image/png,image/gif,image/webp\" aria-describedby=\"image-hint\">"
        "<p class=\"hint\" id=\"image-hint\">%s</p><button type=\"submit\">%s</button></form>",
        t(req, "Add an emoji"), eu_web_csrf_field(req, s), t(req, "Shortcode"),
        t(req, "Letters, digits and underscores; used as :shortcode: in posts."),
        t(req, "Category"), t(req, "Image"), t(req, "PNG, GIF or WebP, at most 256 KB."),
        t(req, "Upload"));
}

static void
on_emojis(struct eu_req *req, json_t *emojis, void *arg)
{
    const struct emojis_page *ep = arg;
    const struct eu_web_session *s = ep->s;
    const char *rows = "";
    size_t i;
    json_t *e;
    json_array_foreach(emojis, i, e)
    {
        bool disabled = json_is_true(json_object_get(e, "disabled"));
        const char *id = jstr(e, "id");
        const char *code = eu_html_escape(req, jstr(e, "shortcode"));
        rows = eu_arena_sprintf(
            req->arena,
            "%s<tr data-emoji=\"%s\"><td><img class=\"emojo\" src=\"%s\" alt=\":%s:\"></td>"
            "<td><code>:%s:</code></td><td>%s</td><td>%s</td></tr>",
            rows, eu_html_escape(req, id), eu_html_escape(req, jstr(e, "static_url")), code, code,
            disabled ? t(req, "Disabled") : t(req, "Enabled"),
            eu_web_staff_button(req, s, eu_arena_sprintf(req->arena, EMOJIS_PATH "/%s", id),
                                disabled ? "enable" : "disable", disabled ? "Enable" : "Disable",
                                false));
    }
    const char *list =
        *rows ? eu_arena_sprintf(req->arena,
                                 "<div class=\"table-wrap\"><table><caption "
                                 "class=\"visually-hidden\">%s</caption><thead><tr>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th></tr>"
                                 "</thead><tbody>%s</tbody></table></div>",
                                 t(req, "Custom emoji"), t(req, "Image"), t(req, "Shortcode"),
                                 t(req, "State"), t(req, "Action"), rows)
              : eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                 t(req, "No custom emoji yet."));
    const char *error =
        ep->error ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                     eu_html_escape(req, ep->error))
                  : "";
    eu_web_staff_reply(req, ep->status, EMOJIS_PATH, eu_web_t(req, "Custom emoji"),
                       eu_arena_sprintf(req->arena, "%s%s%s", error, list, emoji_form(req, s)));
}

static void
emojis_show(struct eu_req *req, const struct eu_web_session *s, int status, const char *error)
{
    struct emojis_page *ep = eu_arena_calloc(req->arena, sizeof(*ep));
    ep->s = s;
    ep->error = error;
    ep->status = status;
    eu_staff_emojis_load(req, on_emojis, ep);
}

static void
emojis_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)params;
    (void)arg;
    emojis_show(req, s, 200, NULL);
}

static void
get_emojis(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_CUSTOM_EMOJIS, emojis_page, NULL);
}

static void
on_emoji_changed(struct eu_req *req, int status, void *arg)
{
    (void)arg;
    if (status != 200) {
        eu_web_staff_refused(req, status);
        return;
    }
    eu_web_staff_redirect(req, EMOJIS_PATH);
}

/* A refusal (422) or a failure to store (500, 503) shows its text on the
 * page with its status; only a role without the permission gets the 403
 * page, which says so. */
static void
on_emoji_made(struct eu_req *req, int status, const char *error, void *arg)
{
    if (status != 200 && status != 403) {
        emojis_show(req, arg, status, error);
        return;
    }
    on_emoji_changed(req, status, NULL);
}

/* POST /admin/custom_emojis (an upload) and /admin/custom_emojis/:id
 * (do = enable or disable). */
static void
emoji_change(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)arg;
    const char *id = eu_req_param(req, "id");
    if (!id) {
        eu_staff_emoji_create(req, params, on_emoji_made, (void *)s);
        return;
    }
    const char *what = eu_param_str(params, "do");
    if (!eu_id_is_valid(id) || !what ||
        (strcmp(what, "enable") != 0 && strcmp(what, "disable") != 0)) {
        eu_web_staff_refused(req, 404);
        return;
    }
    eu_staff_emoji_set_disabled(req, id, strcmp(what, "disable") == 0, on_emoji_changed, NULL);
}

static void
post_emoji(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_CUSTOM_EMOJIS, emoji_change, NULL);
}

/* GET /admin: the first page the role may use. */
static void
home_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)s;
    (void)params;
    (void)arg;
    for (size_t i = 0; i < sizeof(NAV) / sizeof(NAV[0]); i++)
        if (req->auth.permissions & NAV[i].perm) {
            eu_web_staff_redirect(req, NAV[i].path);
            return;
        }
    eu_web_staff_refused(req, 403);
}

static void
get_home(struct eu_req *req)
{
    int64_t any = 0;
    for (size_t i = 0; i < sizeof(NAV) / sizeof(NAV[0]); i++)
        any |= NAV[i].perm;
    eu_web_staff_require(req, any, home_page, NULL);
}

#define GET EU_HTTP_GET
#define POST EU_HTTP_POST

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_web_staff_routes[] = {
    {GET, "/admin", get_home, NULL, 0},
    {GET, "/admin/reports", get_reports, NULL, 0},
    {GET, "/admin/reports/:id", get_report, NULL, 0},
    {POST, "/admin/reports/:id", post_report, NULL, 0},
    {GET, "/admin/accounts", get_accounts, NULL, 0},
    {GET, "/admin/accounts/:id", get_account, NULL, 0},
    {POST, "/admin/accounts/:id", post_account, NULL, 0},
    {GET, RULES_PATH, get_rules, NULL, 0},
    {POST, RULES_PATH, post_rules, NULL, 0},
    {POST, RULES_PATH "/:id", post_rules, NULL, 0},
    {GET, EMOJIS_PATH, get_emojis, NULL, 0},
    {POST, EMOJIS_PATH, post_emoji, NULL, 0},
    {POST, EMOJIS_PATH "/:id", post_emoji, NULL, 0},
    {0},
};
