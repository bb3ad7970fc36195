/*
 * The streaming API's rendering: what one listener gets of an event that
 * src/social/stream_events.c published. It runs the REST handler of the
 * timeline in question on a detached request (eu_req_new_detached())
 * bounded to the one id, so the listener gets exactly what a REST page
 * would hold for that viewer, or nothing: the public timeline's shunning,
 * the render's visibility rule, the viewer's filters in the stream's
 * context ("hide" drops, others add "filtered") and the viewer's flags.
 * The hub (src/http/streaming.c) calls it for every listener, through
 * the callback the wiring gave eu_stream_start(): the hub stands below
 * the REST handlers and includes none of them.
 */
#include "eunha/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announcements_internal.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/streaming.h"
#include "eunha/tenant.h"
#include "social_internal.h"
#include "statuses_internal.h"

/* -------------------------------------------------------------- rendering */

struct render {
    eu_stream_rendered_cb cb;
    void *arg;
    bool array; /* the handler answers a list: take its one element */
};

static void
on_sink(int status, const char *body, size_t len, void *arg)
{
    struct render *r = arg;
    eu_stream_rendered_cb cb = r->cb;
    void *cb_arg = r->arg;
    bool array = r->array;
    free(r);
    if (status != 200 || len < 2) {
        /* 404 and 403 say this viewer must not see it; a 5xx or 429 that
         * the event could not be rendered now. */
        cb(NULL, 0, status >= 500 || status == 429, cb_arg);
        return;
    }
    if (array) {
        /* "[{...}]": one element at most, as the page was bounded to one id. */
        if (len <= 2 || body[0] != '[' || body[len - 1] != ']') {
            cb(NULL, 0, false, cb_arg);
            return;
        }
        body++;
        len -= 2;
    }
    cb(body, len, false, cb_arg);
}

/* The announcement as GET /api/v1/announcements shows it to this viewer
 * (read, reactions' me), or nothing once it is no longer shown. */
static void
render_announcement(struct eu_req *req, const char *id)
{
    req->params.n = 1;
    req->params.p[0].name = "id";
    req->params.p[0].value = eu_arena_strdup(req->arena, id);
    eu_announcements_show_one(req);
}

void
eu_stream_render(struct eu_app *app, struct eu_tenant *t, const struct eu_stream_viewer *v,
                 const char *stream, const char *param, const char *event, const char *id,
                 eu_stream_rendered_cb cb, void *arg)
{
    struct render *r = eu_xcalloc(1, sizeof(*r));
    r->cb = cb;
    r->arg = arg;
    long long n = strtoll(id, NULL, 10);
    char qs[200];
    /* The page holds this id alone: since_id and max_id are exclusive. */
    int is_local = strcmp(stream, "public:local") == 0 || strcmp(stream, "hashtag:local") == 0;
    int is_remote = strcmp(stream, "public:remote") == 0;
    snprintf(qs, sizeof(qs), "since_id=%lld&max_id=%lld&limit=1%s%s", n - 1, n + 1,
             is_local ? "&local=true" : "", is_remote ? "&remote=true" : "");
    struct eu_req *req = eu_req_new_detached(app, t, qs, on_sink, r);
    req->auth.present = v->account_id != 0;
    req->auth.token_id = v->token_id;
    req->auth.app_id = v->app_id;
    req->auth.user_id = v->user_id;
    req->auth.account_id = v->account_id;
    req->auth.scopes = v->scopes ? eu_arena_strdup(req->arena, v->scopes) : "";
    eu_req_enter(req);
    if (strcmp(event, "announcement") == 0) {
        render_announcement(req, id);
    } else if (strcmp(event, "notification") == 0) {
        req->params.n = 1;
        req->params.p[0].name = "id";
        req->params.p[0].value = eu_arena_strdup(req->arena, id);
        eu_notifications_show(req);
    } else if (strcmp(stream, "direct") == 0) {
        /* The viewer's conversation holding the status, as GET
         * /api/v1/conversations renders it; 404 (nothing sent) when the
         * viewer has none or must not hear of this status. */
        req->params.n = 1;
        req->params.p[0].name = "id";
        req->params.p[0].value = eu_arena_strdup(req->arena, id);
        eu_conversations_stream(req);
    } else if (strncmp(stream, "public", 6) == 0) {
        r->array = true;
        eu_timelines_public(req);
    } else if (strcmp(stream, "list") == 0) {
        /* The list timeline: 404 (nothing sent) unless the viewer owns it. */
        r->array = true;
        req->params.n = 1;
        req->params.p[0].name = "id";
        req->params.p[0].value = eu_arena_strdup(req->arena, param ? param : "0");
        eu_timelines_list(req);
    } else if (strncmp(stream, "hashtag", 7) == 0) {
        r->array = true;
        req->params.n = 1;
        req->params.p[0].name = "hashtag";
        req->params.p[0].value = eu_arena_strdup(req->arena, param ? param : "");
        eu_timelines_tag(req);
    } else {
        /* user: the recipients were chosen by the home rules already; the
         * render adds visibility, filters ("home") and flags. */
        r->array = true;
        const char *ids[] = {id};
        eu_statuses_reply_list(req, ids, 1, NULL, NULL, "home");
    }
    eu_log_set_context(NULL, NULL);
}
