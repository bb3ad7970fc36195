/*
 * Discovery documents: NodeInfo 2.0 and 2.1, and host-meta. Clients and crawlers use
 * NodeInfo's software name to decide which API they speak, so it reports
 * Mastodon's, and names Eunha in metadata.
 */
#include "eunha/api.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/sql.h"
#include "eunha/tenant.h"

enum {
    NODEINFO_COUNTS,
};

const struct eu_sql eu_nodeinfo_sql[] = {
    /* Users, local posts, the users who signed in in the last 4 and 24
     * weeks (Mastodon's active_user_count(4) and (24); tenant migration
     * 0050), whether sign-up is open, and the instance's description. */
    [NODEINFO_COUNTS] =
        {"nodeinfo.counts",
         "SELECT coalesce(c.user_count, 0), (SELECT greatest(coalesce(sum(sc.n),"
         " 0), 0) FROM instance_status_counts sc WHERE sc.tenant_id = $1),"
         " (SELECT count(DISTINCT d.user_id) FROM user_sign_in_days d WHERE d.tenant_id = $1"
         "  AND d.day > current_date - 28),"
         " (SELECT count(DISTINCT d.user_id) FROM user_sign_in_days d WHERE d.tenant_id = $1"
         "  AND d.day > current_date - 168),"
         " coalesce((SELECT s.value #>> '{}' FROM settings s WHERE s.tenant_id = $1"
         "  AND s.key = 'registrations_mode'), 'open') <> 'closed',"
         " coalesce((SELECT s.value ->> 'description' FROM settings s WHERE s.tenant_id = $1"
         "  AND s.key = 'instance'), '')"
         " FROM (SELECT 1) one LEFT JOIN instance_counters c ON c.tenant_id = $1"},
    {0},
};

/* 2.0 first: crawlers that read only the first link know it best. */
void
eu_api_nodeinfo_links(struct eu_req *req)
{
    const char *base = eu_req_base_url(req);
    eu_req_reply_json(req, 200,
                      json_pack("{s:[{s:s,s:s},{s:s,s:s}]}", "links", "rel",
                                "http://nodeinfo.diaspora.software/ns/schema/2.0", "href",
                                eu_arena_sprintf(req->arena, "%s/nodeinfo/2.0", base), "rel",
                                "http://nodeinfo.diaspora.software/ns/schema/2.1", "href",
                                eu_arena_sprintf(req->arena, "%s/nodeinfo/2.1", base)));
}

/* arg is the version asked, "2.0" or "2.1"; 2.1 adds the software's
 * repository and homepage. */
static void
on_counts(struct eu_req *req, PGresult *res, void *arg)
{
    const char *version = arg;
    json_int_t users = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    json_int_t posts = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    json_int_t month = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
    json_int_t halfyear = strtoll(PQgetvalue(res, 0, 3), NULL, 10);
    json_t *body = json_pack(
        "{s:s, s:{s:s,s:s}, s:[s], s:{s:[],s:[]}, s:{s:{s:I,s:I,s:I}, s:I}, s:b,"
        " s:{s:s, s:s, s:s}}",
        "version", version, "software", "name", "mastodon", "version", "4.3.0", "protocols",
        "activitypub", "services", "outbound", "inbound", "usage", "users", "total", users,
        "activeMonth", month, "activeHalfyear", halfyear, "localPosts", posts, "openRegistrations",
        PQgetvalue(res, 0, 4)[0] == 't', "metadata", "nodeName", req->tenant->title,
        "nodeDescription", PQgetvalue(res, 0, 5), "software", "eunha " EUNHA_VERSION);
    if (strcmp(version, "2.1") == 0) {
        json_t *sw = json_object_get(body, "software");
        json_object_set_new(sw, "repository", json_string("https://github.com/mastodon/mastodon"));
        json_object_set_new(sw, "homepage", json_string("https://joinmastodon.org"));
    }
    const char *type = eu_arena_sprintf(
        req->arena, "application/json; profile=\"http://nodeinfo.diaspora.software/ns/schema/%s#\"",
        version);
    eu_req_reply_json_typed(req, 200, type, body);
}

void
eu_api_nodeinfo(struct eu_req *req)
{
    eu_req_stmt(req, &eu_nodeinfo_sql[NODEINFO_COUNTS], 0, NULL, on_counts, (void *)"2.0");
}

void
eu_api_nodeinfo_2_1(struct eu_req *req)
{
    eu_req_stmt(req, &eu_nodeinfo_sql[NODEINFO_COUNTS], 0, NULL, on_counts, (void *)"2.1");
}

void
eu_api_host_meta(struct eu_req *req)
{
    const char *xml = eu_arena_sprintf(
        req->arena,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<XRD xmlns=\"http://docs.oasis-open.org/ns/xri/xrd-1.0\">\n"
        "  <Link rel=\"lrdd\" template=\"%s/.well-known/webfinger?resource={uri}\"/>\n"
        "</XRD>\n",
        eu_req_base_url(req));
    eu_req_reply_raw(req, 200, "application/xrd+xml; charset=utf-8", xml, strlen(xml));
}

/* ------------------------------------------------------------ route table */

/* Flags: include/eunha/router.h; src/app/routes.c lists the tables. */
const struct eu_route eu_nodeinfo_routes[] = {
    {EU_HTTP_GET, "/.well-known/nodeinfo", eu_api_nodeinfo_links, NULL, EU_ROUTE_CORS},
    {EU_HTTP_GET, "/.well-known/host-meta", eu_api_host_meta, NULL, EU_ROUTE_CORS},
    {EU_HTTP_GET, "/nodeinfo/2.0", eu_api_nodeinfo, NULL, EU_ROUTE_CORS},
    {EU_HTTP_GET, "/nodeinfo/2.1", eu_api_nodeinfo_2_1, NULL, EU_ROUTE_CORS},
    {0},
};
