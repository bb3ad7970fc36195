/*
 * GET /api/v1/statuses/:id/card: a status's preview card (include/eunha/
 * cards.h), as Mastodon still answers it for old clients: the PreviewCard,
 * or {} when the status has none (yet), and 404 for a status the viewer
 * may not see, by the same audience rule as the status itself. Newer
 * clients read `card` in the Status entity (src/social/status_render.c).
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>

#include "eunha/cards.h"
#include "eunha/http.h"
#include "eunha/page.h"
#include "eunha/sql.h"

static void
on_card(struct eu_req *req, PGresult *res, void *arg)
{
    (void)arg;
    if (PQntuples(res) == 0) {
        eu_req_reply_error(req, 404, "Record not found");
        return;
    }
    json_t *card = PQgetisnull(res, 0, 0)
                       ? NULL
                       : eu_card_json(req->app, eu_req_base_url(req), PQgetvalue(res, 0, 0));
    eu_req_reply_json(req, 200, card ? card : json_object());
}

static void
status_card(struct eu_req *req)
{
    const char *id = eu_req_id_param(req, "id");
    if (!id)
        return;
    /* eu_req_stmt passes the tenant as $1. */
    const char *p[] = {id, eu_req_viewer(req)};
    eu_req_stmt(req, &eu_cards_sql[EU_CARDS_STATUS_CARD], 2, p, on_card, NULL);
}

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_cards_routes[] = {
    {EU_HTTP_GET, "/api/v1/statuses/:id/card", status_card, "read:statuses",
     EU_ROUTE_API | EU_ROUTE_AUTH_OPT},
    {0},
};
