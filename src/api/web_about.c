/*
 * The instance's own pages for visitors: /about (its description, who runs
 * it and how to reach them, whether it takes sign-ups, its rules, its long
 * description and, when the staff publish them, the servers it moderates),
 * /privacy-policy and /terms-of-service. They show what /api/v2/instance
 * and the instance endpoints under /api/v1/instance serve (instance.c,
 * instance_info.c), from the same rows, one statement a page.
 *
 * The staff's HTML texts (extended description, privacy policy) go through
 * the same sanitizer as remote content: they are the tenant's, not the
 * host's, and the page must stay what the frame promises.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/entities.h"
#include "eunha/http.h"
#include "eunha/sanitize.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"
#include "instance_internal.h"
#include "web_internal.h"
#include "web_text.h"

enum {
    ABOUT_PAGE,
    ABOUT_PRIVACY,
    ABOUT_TERMS,
};

const struct eu_sql eu_web_about_sql[] = {
    /* The settings, the sign-up mode, the rules, the blocks when shown to
     * everyone (a visitor is signed out) and the contact account's name. */
    [ABOUT_PAGE] =
        {"web_about.page",
         "SELECT coalesce(st.value::text, '{}'),"
         " coalesce((SELECT value #>> '{}' FROM settings WHERE tenant_id = $1"
         "  AND key = 'registrations_mode'), 'open'),"
         " (SELECT coalesce(json_agg(json_build_object('text', r.text, 'hint', r.hint)"
         "  ORDER BY r.priority, r.id), '[]') FROM instance_rules r"
         "  WHERE r.tenant_id = $1 AND r.deleted_at IS NULL)::text,"
         " (SELECT coalesce(json_agg(json_build_object('domain', " EU_SQL_BLOCK_PUBLIC_DOMAIN ","
         "  'severity', b.severity, 'comment', coalesce(b.public_comment, ''))"
         "  ORDER BY b.severity = 'suspend', b.domain), '[]') FROM domain_blocks b"
         "  WHERE b.tenant_id = $1 AND b.severity IN ('silence', 'suspend')"
         "  AND st.value ->> 'show_domain_blocks' = 'all')::text,"
         " a.username"
         " FROM (SELECT 1) one"
         " LEFT JOIN settings st ON st.tenant_id = $1 AND st.key = 'instance'"
         " LEFT JOIN accounts a ON a.tenant_id = $1 AND coalesce(lower(a.domain), '') = ''"
         "  AND lower(a.username) = lower(st.value ->> 'contact_username')"
         "  AND a.suspended_at IS NULL"},
    [ABOUT_PRIVACY] = {"web_about.privacy", "SELECT value ->> 'privacy_policy' FROM settings"
                                            " WHERE tenant_id = $1 AND key = 'instance'"},
    /* The version in force, else the latest announced (instance_info.c). */
    [ABOUT_TERMS] = {"web_about.terms",
                     "SELECT t.text, to_char(t.effective_date, 'YYYY-MM-DD'),"
                     " t.effective_date <= current_date FROM terms_of_service t"
                     " WHERE t.tenant_id = $1"
                     " ORDER BY t.effective_date <= current_date DESC, t.effective_date DESC"
                     " LIMIT 1"},
    {0},
};

/* The staff's HTML, sanitized onto the arena; NULL when there is none or it
 * cannot be parsed within the sanitizer's caps. */
static const char *
staff_html(struct eu_req *req, const char *html)
{
    if (!html || !*html)
        return NULL;
    char *out = NULL;
    if (eu_sanitize_html(html, strlen(html), &out, NULL) < 0)
        return NULL;
    const char *kept = eu_arena_strdup(req->arena, out);
    free(out);
    return kept;
}

static const char *
setting(json_t *settings, const char *key)
{
    const char *v = json_string_value(json_object_get(settings, key));
    return v && *v ? v : NULL;
}

static const char *
rules_html(struct eu_req *req, json_t *rules)
{
    if (json_array_size(rules) == 0)
        return "";
    const char *items = "";
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        const char *hint = json_string_value(json_object_get(r, "hint"));
        items = eu_arena_sprintf(req->arena, "%s<li>%s%s</li>", items,
                                 eu_html_escape(req, json_string_value(json_object_get(r, "text"))),
                                 hint && *hint
                                     ? eu_arena_sprintf(req->arena, "<p class=\"hint\">%s</p>",
                                                        eu_html_escape(req, hint))
                                     : "");
    }
    return eu_arena_sprintf(req->arena,
                            "<section class=\"card\" aria-labelledby=\"rules\">"
                            "<h2 id=\"rules\">%s</h2><ol class=\"rules\">%s</ol></section>",
                            eu_web_th(req, "Rules"), items);
}

/* Mastodon's about page words for the two severities it lists. */
static const char *
blocks_html(struct eu_req *req, json_t *settings, json_t *blocks)
{
    if (json_array_size(blocks) == 0)
        return "";
    const char *why = setting(settings, "show_domain_blocks_rationale");
    bool reasons = why && strcmp(why, "all") == 0;
    const char *rows = "";
    size_t i;
    json_t *b;
    json_array_foreach(blocks, i, b)
    {
        const char *sev = json_string_value(json_object_get(b, "severity"));
        rows = eu_arena_sprintf(
            req->arena, "%s<tr><td>%s</td><td>%s</td>%s</tr>", rows,
            eu_html_escape(req, json_string_value(json_object_get(b, "domain"))),
            eu_web_th(req, strcmp(sev, "suspend") == 0 ? "Suspended" : "Limited"),
            reasons ? eu_arena_sprintf(
                          req->arena, "<td>%s</td>",
                          eu_html_escape(req, json_string_value(json_object_get(b, "comment"))))
                    : "");
    }
    return eu_arena_sprintf(req->arena,
                            "<section class=\"card\" aria-labelledby=\"moderated\">"
                            "<h2 id=\"moderated\">%s</h2>"
                            "<p class=\"muted\">%s</p><table><thead><tr><th scope=\"col\">%s</th>"
                            "<th scope=\"col\">%s</th>%s</tr></thead><tbody>%s</tbody>"
                            "</table></section>",
                            eu_web_th(req, "Moderated servers"),
                            eu_web_th(req, "Content from these servers is limited or not "
                                           "accepted here."),
                            eu_web_th(req, "Server"), eu_web_th(req, "Severity"),
                            reasons ? eu_arena_sprintf(req->arena, "<th scope=\"col\">%s</th>",
                                                       eu_web_th(req, "Reason"))
                                    : "",
                            rows);
}

static void
on_about(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    json_t *settings = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
    json_t *rules = json_loads(PQgetvalue(res, 0, 2), 0, NULL);
    json_t *blocks = json_loads(PQgetvalue(res, 0, 3), 0, NULL);
    const char *mode = PQgetvalue(res, 0, 1);
    const char *domain = eu_html_escape(req, req->tenant->domain);
    const char *title = eu_html_escape(req, req->tenant->title);

    const char *desc = setting(settings, "description");
    const char *facts = "";
    if (!PQgetisnull(res, 0, 4)) {
        const char *u = eu_html_escape(req, PQgetvalue(res, 0, 4));
        facts = eu_arena_sprintf(req->arena, "<dt>%s</dt><dd><a href=\"/@%s\">@%s@%s</a></dd>",
                                 eu_web_th(req, "Administered by"), u, u, domain);
    }
    const char *email = setting(settings, "contact_email");
    if (email) {
        const char *e = eu_html_escape(req, email);
        facts = eu_arena_sprintf(req->arena, "%s<dt>%s</dt><dd><a href=\"mailto:%s\">%s</a></dd>",
                                 facts, eu_web_th(req, "Contact"), e, e);
    }
    const char *signup = strcmp(mode, "closed") == 0     ? "Closed"
                         : strcmp(mode, "approval") == 0 ? "Open, with approval by the staff"
                                                         : "Open";
    facts = eu_arena_sprintf(req->arena, "%s<dt>%s</dt><dd>%s</dd>", facts,
                             eu_web_th(req, "Sign-ups"), eu_web_th(req, signup));
    const char *closed_msg = setting(settings, "registrations_message");
    const char *extended = staff_html(req, setting(settings, "extended_description"));

    const char *body = eu_arena_sprintf(
        req->arena, "<div class=\"card\"><h1>%s</h1>%s<dl class=\"fields\">%s</dl>%s</div>%s%s%s",
        eu_arena_sprintf(req->arena, eu_web_th(req, "About %s"), title),
        desc ? eu_text_to_simple_html(req, desc) : "", facts,
        strcmp(mode, "closed") == 0 && closed_msg ? eu_text_to_simple_html(req, closed_msg) : "",
        rules_html(req, rules),
        extended ? eu_arena_sprintf(req->arena,
                                    "<section class=\"card\" aria-labelledby=\"more\">"
                                    "<h2 id=\"more\">%s</h2>%s</section>",
                                    eu_web_th(req, "More about this server"), extended)
                 : "",
        blocks_html(req, settings, blocks));
    json_decref(settings);
    json_decref(rules);
    json_decref(blocks);
    eu_web_reply_page(req, 200, eu_web_t(req, "About"), body);
}

void
eu_web_about(struct eu_req *req)
{
    eu_req_stmt(req, &eu_web_about_sql[ABOUT_PAGE], 0, NULL, on_about, NULL);
}

static void
on_privacy(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    const char *policy = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0)
                             ? staff_html(req, PQgetvalue(res, 0, 0))
                             : NULL;
    if (!policy)
        policy = eu_arena_sprintf(
            req->arena, "<p>%s</p><p>%s</p>",
            eu_arena_sprintf(
                req->arena,
                eu_web_th(req, "This server has not published a privacy policy of "
                               "its own. Ask its staff (see %s) what it keeps about "
                               "you and for how long."),
                eu_arena_sprintf(req->arena, "<a href=\"/about\">%s</a>", eu_web_th(req, "About"))),
            eu_web_th(req, "What you post publicly is sent to the servers of the people who "
                           "follow you and may be kept there; you can export your data and "
                           "delete your account from your settings."));
    const char *body = eu_arena_sprintf(req->arena, "<div class=\"card\"><h1>%s</h1>%s</div>",
                                        eu_web_th(req, "Privacy policy"), policy);
    eu_web_reply_page(req, 200, eu_web_t(req, "Privacy policy"), body);
}

void
eu_web_privacy(struct eu_req *req)
{
    eu_req_stmt(req, &eu_web_about_sql[ABOUT_PRIVACY], 0, NULL, on_privacy, NULL);
}

static void
on_terms(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_web_reply_page(
            req, 404, eu_web_t(req, "Terms of service"),
            eu_arena_sprintf(req->arena, "<div class=\"card\"><h1>%s</h1><p>%s</p></div>",
                             eu_web_th(req, "Terms of service"),
                             eu_web_th(req, "This server has not published terms of service.")));
        return;
    }
    bool effective = PQgetvalue(res, 0, 2)[0] == 't';
    const char *text = eu_instance_terms_text(req, PQgetvalue(res, 0, 0));
    const char *body = eu_arena_sprintf(
        req->arena,
        "<div class=\"card\"><h1>%s</h1><p class=\"muted\">%s <time "
        "datetime=\"%s\">%s</time></p>%s</div>",
        eu_web_th(req, "Terms of service"),
        eu_web_th(req, effective ? "In effect since" : "Taking effect on"), PQgetvalue(res, 0, 1),
        PQgetvalue(res, 0, 1), eu_text_to_simple_html(req, text));
    eu_web_reply_page(req, 200, eu_web_t(req, "Terms of service"), body);
}

void
eu_web_terms(struct eu_req *req)
{
    eu_req_stmt(req, &eu_web_about_sql[ABOUT_TERMS], 0, NULL, on_terms, NULL);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
/* The pages read their frame (the tenant's language) first (web_page.c). */
EU_WEB_PAGE(about_page, eu_web_about)
EU_WEB_PAGE(privacy_page, eu_web_privacy)
EU_WEB_PAGE(terms_page, eu_web_terms)

const struct eu_route eu_web_about_routes[] = {
    {EU_HTTP_GET, "/about", about_page, NULL, 0},
    {EU_HTTP_GET, "/privacy-policy", privacy_page, NULL, 0},
    {EU_HTTP_GET, "/terms-of-service", terms_page, NULL, 0},
    {0},
};
