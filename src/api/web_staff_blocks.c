/*
 * The staff's domain blocks page, /admin/domain_blocks: the tenant's
 * blocks of other servers (Mastodon's admin DomainBlock) listed, one made
 * from a form, one lifted with a button, for roles with manage_federation.
 * It is a thin page over the code of /api/v1/admin/domain_blocks
 * (src/social/domain_blocks.c): the same input rules, statements, account
 * marks and audit rows, ending in a callback instead of a JSON answer. A
 * refused block (a bad domain, one already blocked as strictly) shows
 * Mastodon's text, and changes nothing.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "eunha/api.h"
#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/domainblock.h"
#include "eunha/entities.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/router.h"
#include "web_internal.h"
#include "web_settings_internal.h"
#include "web_staff_internal.h"
#include "web_text.h"
#include "websession_internal.h"

#define BLOCKS_PATH "/admin/domain_blocks"
/* A page lists this many, newest first; Mastodon's admin API pages by 100. */
#define BLOCKS_SHOWN 200

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

/* The severity in the words of Mastodon's admin pages. */
static const char *
severity_word(struct eu_req *req, const char *severity)
{
    if (strcmp(severity, "suspend") == 0)
        return t(req, "Suspend");
    if (strcmp(severity, "silence") == 0)
        return t(req, "Limit");
    return t(req, "No restriction");
}

static const char *
yes_no(struct eu_req *req, json_t *b, const char *key)
{
    return json_is_true(json_object_get(b, key)) ? t(req, "Yes") : t(req, "No");
}

static const char *
checkbox(struct eu_req *req, const char *name, const char *label)
{
    return eu_arena_sprintf(req->arena,
                            "<label class=\"check\"><input type=\"checkbox\" name=\"%s\" "
                            "value=\"true\"> %s</label>",
                            name, t(req, label));
}

/* The form that blocks a domain. */
static const char *
new_block_form(struct eu_req *req, const struct eu_web_session *s)
{
    return eu_arena_sprintf(
        req->arena,
        "<h2>%s</h2><form method=\"post\" action=\"" BLOCKS_PATH "\" class=\"card\">%s"
        "<label for=\"domain\">%s</label><input type=\"text\" id=\"domain\" name=\"domain\" "
        "required maxlength=\"253\" autocapitalize=\"none\" spellcheck=\"false\">"
        "<label for=\"severity\">%s</label><select id=\"severity\" name=\"severity\">"
        "<option value=\"silence\">%s</option><option value=\"suspend\">%s</option>"
        "<option value=\"noop\">%s</option></select><p class=\"hint\">%s</p>%s%s%s"
        "<label for=\"public_comment\">%s</label><input type=\"text\" id=\"public_comment\" "
        "name=\"public_comment\" maxlength=\"1000\"><label for=\"private_comment\">%s</label>"
        "<input type=\"text\" id=\"private_comment\" name=\"private_comment\" "
        "maxlength=\"1000\"><button type=\"submit\" class=\"danger\">%s</button></form>",
        t(req, "Block a server"), eu_web_csrf_field(req, s), t(req, "Domain"), t(req, "Severity"),
        t(req, "Limit"), t(req, "Suspend"), t(req, "No restriction"),
        t(req, "Limit hides the server's posts from people who do not follow its accounts; "
               "suspend removes its accounts and refuses all its activity."),
        checkbox(req, "reject_media", "Reject media files"),
        checkbox(req, "reject_reports", "Reject reports"),
        checkbox(req, "obfuscate", "Obfuscate the domain in the public list"),
        t(req, "Comment shown publicly"), t(req, "Comment for the staff only"), t(req, "Block"));
}

struct blocks_page {
    const struct eu_web_session *s;
    const char *error; /* a refused change's text, shown above the list */
};

static void
on_blocks(struct eu_req *req, int status, json_t *blocks, void *arg)
{
    struct blocks_page *bp = arg;
    (void)status;
    const char *rows = "";
    size_t i;
    json_t *b;
    json_array_foreach(blocks, i, b)
    {
        const char *id = jstr(b, "id");
        const char *domain = eu_html_escape(req, jstr(b, "domain"));
        const char *comment = jstr(b, "public_comment");
        rows = eu_arena_sprintf(
            req->arena,
            "%s<tr data-block=\"%s\"><th scope=\"row\">%s</th><td>%s</td><td>%s</td><td>%s</td>"
            "<td>%s</td><td>%s</td></tr>",
            rows, eu_html_escape(req, id), domain, severity_word(req, jstr(b, "severity")),
            yes_no(req, b, "reject_media"), yes_no(req, b, "reject_reports"),
            eu_html_escape(req, comment),
            eu_web_staff_button(req, bp->s, eu_arena_sprintf(req->arena, BLOCKS_PATH "/%s", id),
                                "destroy", "Lift", true));
    }
    const char *list =
        *rows ? eu_arena_sprintf(req->arena,
                                 "<div class=\"table-wrap\"><table><caption "
                                 "class=\"visually-hidden\">%s</caption><thead><tr>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th>"
                                 "<th scope=\"col\">%s</th><th scope=\"col\">%s</th></tr>"
                                 "</thead><tbody>%s</tbody></table></div>",
                                 t(req, "Domain blocks"), t(req, "Domain"), t(req, "Severity"),
                                 t(req, "Media rejected"), t(req, "Reports rejected"),
                                 t(req, "Public comment"), t(req, "Action"), rows)
              : eu_arena_sprintf(req->arena, "<p class=\"muted\">%s</p>",
                                 t(req, "No server is blocked."));
    const char *error =
        bp->error ? eu_arena_sprintf(req->arena, "<p class=\"error\" role=\"alert\">%s</p>",
                                     eu_html_escape(req, bp->error))
                  : "";
    eu_web_staff_reply(req, bp->error ? 422 : 200, BLOCKS_PATH, eu_web_t(req, "Domain blocks"),
                       eu_arena_sprintf(req->arena, "%s<p>%s</p>%s%s", error,
                                        t(req, "Servers this instance limits or refuses."), list,
                                        new_block_form(req, bp->s)));
}

/* The list, with error (or NULL) above it. */
static void
show(struct eu_req *req, const struct eu_web_session *s, const char *error)
{
    struct blocks_page *bp = eu_arena_calloc(req->arena, sizeof(*bp));
    bp->s = s;
    bp->error = error;
    struct eu_page page = {0};
    page.limit = BLOCKS_SHOWN;
    snprintf(page.limit_s, sizeof(page.limit_s), "%d", BLOCKS_SHOWN);
    eu_domain_block_list_to(req, &page, on_blocks, bp);
}

static void
blocks_page(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)params;
    (void)arg;
    show(req, s, NULL);
}

static void
get_blocks(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_FEDERATION, blocks_page, NULL);
}

static void
on_changed(struct eu_req *req, int status, json_t *entity, void *arg)
{
    const struct eu_web_session *s = arg;
    if (status == 422) {
        show(req, s, json_string_value(json_object_get(entity, "error")));
        return;
    }
    if (status != 200) {
        eu_web_staff_refused(req, status);
        return;
    }
    eu_web_staff_redirect(req, BLOCKS_PATH);
}

/* POST /admin/domain_blocks (a new block) and /admin/domain_blocks/:id
 * (do = destroy). */
static void
block_change(struct eu_req *req, const struct eu_web_session *s, json_t *params, void *arg)
{
    (void)arg;
    const char *id = eu_req_param(req, "id");
    if (id) {
        const char *what = eu_param_str(params, "do");
        if (!eu_id_is_valid(id) || !what || strcmp(what, "destroy") != 0) {
            eu_web_staff_refused(req, 404);
            return;
        }
        eu_domain_block_delete_to(req, id, eu_req_viewer(req), on_changed, (void *)s);
        return;
    }
    /* A form leaves its empty fields in: an empty comment is no comment. */
    static const char *const optional[] = {"public_comment", "private_comment"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = eu_param_str(params, optional[i]);
        if (v && !*v)
            json_object_del(params, optional[i]);
    }
    struct eu_domain_block_input in;
    struct eu_error err = {0};
    if (eu_domain_block_input_read(req, params, true, &in, &err) < 0) {
        show(req, s, eu_arena_strdup(req->arena, err.message));
        return;
    }
    eu_domain_block_create_to(req, &in, eu_req_viewer(req), on_changed, (void *)s);
}

static void
post_blocks(struct eu_req *req)
{
    eu_web_staff_require(req, EU_PERM_MANAGE_FEDERATION, block_change, NULL);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_web_staff_blocks_routes[] = {
    {EU_HTTP_GET, BLOCKS_PATH, get_blocks, NULL, 0},
    {EU_HTTP_POST, BLOCKS_PATH, post_blocks, NULL, 0},
    {EU_HTTP_POST, BLOCKS_PATH "/:id", post_blocks, NULL, 0},
    {0},
};
