/*
 * Polls in Mastodon's REST API: the poll[...] parameters of a new status,
 * GET /api/v1/polls/:id and POST /api/v1/polls/:id/votes. What a poll may
 * hold and whether a vote counts are the social core's rules
 * (include/eunha/polls.h), shared with inbox processing; this file reads
 * the parameters, words the refusals as Mastodon does, tells other
 * servers through ap/, and renders the Poll entity.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/params.h"
#include "eunha/polls.h"
#include "eunha/statuses.h"
#include "statuses_internal.h"

/* ------------------------------------------------------------- creation */

int
eu_poll_params_read(struct eu_req *req, json_t *poll, const char **draft)
{
    *draft = NULL;
    if (!poll)
        return 0;
    json_t *options = eu_param_array(poll, "options");
    const char *why = eu_poll_options_refusal(options);
    long long expires_in = 0;
    bool multiple = false, hide_totals = false;
    if (!why && eu_param_int(poll, "expires_in", &expires_in) <= 0)
        why = "Poll expires at can't be blank";
    else if (!why)
        why = eu_poll_expiry_refusal(expires_in, req->app->cfg->poll_min_expires_s);
    if (!why && (eu_param_bool(poll, "multiple", &multiple) < 0 ||
                 eu_param_bool(poll, "hide_totals", &hide_totals) < 0))
        why = "Poll multiple and hide_totals must be booleans";
    if (why) {
        json_decref(options);
        eu_req_reply_error(req, 422, "Validation failed: %s", why);
        return -1;
    }
    json_t *o = json_pack("{s:o, s:I, s:b, s:b}", "options", options, "expires_in",
                          (json_int_t)expires_in, "multiple", multiple, "hide_totals", hide_totals);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    *draft = eu_arena_strdup(req->arena, text);
    free(text);
    return 0;
}

/* ------------------------------------------------------------ the entity */

/* eu_poll_json_finish(), the Poll entity for a viewer, is the social core's
 * (src/social/status_render.c): every status render uses it. */

static void
on_poll_shown(struct eu_req *req, PGresult *res, void *arg)
{
    json_t *poll = PQntuples(res) ? eu_poll_json_finish(req, PQgetvalue(res, 0, 0)) : NULL;
    if (!poll) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    eu_req_reply_json(req, 200, poll);
}

static void
reply_poll(struct eu_req *req, const char *id)
{
    const char *params[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_polls_sql[EU_POLLS_SHOW], 2, params, on_poll_shown, NULL);
}

void
eu_polls_show(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    reply_poll(req, id);
}

/* ----------------------------------------------------------------- votes */

/* Mastodon's words for a vote that does not count; NULL for one that does. */
static const char *
vote_refusal(enum eu_poll_vote v)
{
    switch (v) {
    case EU_POLL_ENDED:
        return "The poll has already ended";
    case EU_POLL_NO_OPTION:
        return "The chosen vote option does not exist";
    case EU_POLL_OWN:
        return "You cannot vote in your own polls";
    case EU_POLL_VOTED_BEFORE:
        /* also several choices on a single-choice poll, which Mastodon
         * answers the same way */
        return "You have already voted on this poll";
    case EU_POLL_VOTED:
    case EU_POLL_NOT_FOUND:
        break;
    }
    return NULL;
}

struct vote {
    const char *id;
};

static void
on_voted(struct eu_req *req, PGresult *res, void *arg)
{
    struct vote *v = arg;
    bool remote;
    enum eu_poll_vote r = eu_poll_vote_read(res, &remote);
    if (r == EU_POLL_NOT_FOUND) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    if (r != EU_POLL_VOTED) {
        eu_req_reply_error(req, 422, "Validation failed: %s", vote_refusal(r));
        return;
    }
    /* A vote on a remote poll goes to its author; one on a local poll
     * changes counts its remote audience sees (Mastodon's VoteService). */
    if (remote)
        eu_ap_outbox_poll_vote(req->app, req->tenant, req->auth.account_id, v->id);
    else
        eu_ap_poll_update_later(req->app, req->tenant, v->id);
    reply_poll(req, v->id);
}

/* A choice as the client sent it ("1" or 1), or -1 for one that is not an
 * option's number. */
static long
choice_of(json_t *c)
{
    const char *s = json_string_value(c);
    char *end = NULL;
    long v = json_is_integer(c) ? (long)json_integer_value(c) : s && *s ? strtol(s, &end, 10) : -1;
    return end && *end ? -1 : v;
}

void
eu_polls_vote(struct eu_req *req)
{
    const char *id = eu_req_param(req, "id");
    if (!eu_id_is_valid(id)) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    struct eu_error err = {0};
    json_t *p = eu_req_params(req, &err);
    if (!p) {
        eu_req_reply_eu_error(req, &err);
        return;
    }
    json_t *choices = eu_param_array(p, "choices");
    size_t n = json_array_size(choices);
    long *c = eu_arena_alloc(req->arena, (n ? n : 1) * sizeof(*c));
    for (size_t i = 0; i < n; i++)
        c[i] = choice_of(json_array_get(choices, i));
    json_decref(choices);
    enum eu_poll_vote r = eu_poll_choices_check(c, n);
    if (r != EU_POLL_VOTED) {
        eu_req_reply_error(req, 422, "Validation failed: %s", vote_refusal(r));
        return;
    }
    /* "{0,2}": the checked choices, as the statement's int[]. */
    char *list = eu_arena_alloc(req->arena, n * 12 + 3), *o = list;
    *o++ = '{';
    for (size_t i = 0; i < n; i++)
        o += sprintf(o, "%s%ld", i ? "," : "", c[i]);
    *o++ = '}';
    *o = '\0';
    struct vote *vt = eu_arena_calloc(req->arena, sizeof(*vt));
    vt->id = id;
    const char *params[] = {id, eu_req_viewer(req), list};
    eu_req_stmt(req, &eu_polls_sql[EU_POLLS_VOTE], 3, params, on_voted, vt);
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_polls_routes[] = {
    {EU_HTTP_GET, "/api/v1/polls/:id", eu_polls_show, "read:statuses",
     EU_ROUTE_AUTH_OPT | EU_ROUTE_API},
    {EU_HTTP_POST, "/api/v1/polls/:id/votes", eu_polls_vote, "write:statuses",
     EU_ROUTE_AUTH | EU_ROUTE_API},
    {0},
};
