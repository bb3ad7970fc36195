/*
 * Reading the browser's session for the settings pages (see
 * websession_internal.h). One statement per page: the session by the
 * SHA-256 of its cookie, as oauth.c stores it, with its user's account.
 */
#include "websession_internal.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/http.h"
#include "eunha/params.h"
#include "eunha/sql.h"
#include "oauth_internal.h"

enum {
    WEBSESSION_LOAD,
};

const struct eu_sql eu_websession_sql[] = {
    /* $2 the session's hash: its user, account and CSRF token, when it
     * has signed in a user who may still use the tenant. */
    [WEBSESSION_LOAD] = {"websession.load",
                         "SELECT u.id, u.account_id, a.username, w.csrf_token FROM web_sessions w"
                         " JOIN users u ON u.tenant_id = $1 AND u.id = w.user_id"
                         " JOIN accounts a ON a.tenant_id = $1 AND a.id = u.account_id"
                         " WHERE w.tenant_id = $1 AND w.session_hash = $2 AND w.expires_at > now()"
                         " AND a.suspended_at IS NULL AND u.approved"},
    {0},
};

struct load {
    eu_web_session_cb cb;
    void *arg;
};

const char *
eu_web_session_cookie(struct eu_req *req)
{
    const char *h = eu_req_header(req, "Cookie");
    size_t nlen = strlen(EU_WEB_SESSION_COOKIE);
    for (const char *p = h; p && *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        if (strncmp(p, EU_WEB_SESSION_COOKIE, nlen) == 0 && p[nlen] == '=') {
            const char *v = p + nlen + 1;
            return eu_arena_strndup(req->arena, v, strcspn(v, ";"));
        }
        p += strcspn(p, ";");
    }
    return "";
}

/* The sign-in page, coming back to this page's path afterwards. */
static void
redirect_to_sign_in(struct eu_req *req)
{
    const char *back = req->path ? req->path : "/";
    eu_req_add_header(req, "Location",
                      eu_arena_sprintf(req->arena, "/auth/sign_in?return_to=%s",
                                       eu_oauth_url_encode(req->arena, back)));
    eu_req_add_header(req, "Cache-Control", "no-store");
    eu_req_reply_raw(req, 302, "text/html; charset=utf-8", "", 0);
}

static void
on_loaded(struct eu_req *req, PGresult *res, void *arg)
{
    struct load *l = arg;
    if (PQntuples(res) != 1) {
        redirect_to_sign_in(req);
        return;
    }
    struct eu_web_session *s = eu_arena_calloc(req->arena, sizeof(*s));
    s->user_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    s->account_id = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    s->username = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 2));
    s->csrf = eu_arena_strdup(req->arena, PQgetvalue(res, 0, 3));
    l->cb(req, s, l->arg);
}

void
eu_web_session_require(struct eu_req *req, eu_web_session_cb cb, void *arg)
{
    const char *cookie = eu_web_session_cookie(req);
    if (!*cookie) {
        redirect_to_sign_in(req);
        return;
    }
    struct load *l = eu_arena_calloc(req->arena, sizeof(*l));
    l->cb = cb;
    l->arg = arg;
    char hash[65];
    eu_auth_token_hash(cookie, hash);
    const char *p[] = {hash};
    eu_req_stmt(req, &eu_websession_sql[WEBSESSION_LOAD], 1, p, on_loaded, l);
}

bool
eu_web_session_csrf_ok(const struct eu_web_session *s, json_t *params)
{
    return s && s->csrf &&
           eu_oauth_secret_equal(eu_param_str(params, "authenticity_token"), s->csrf);
}
