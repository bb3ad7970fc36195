/*
 * GET /api/v2/search (being written).
 */
#include <jansson.h>

#include "eunha/http.h"
#include "social_internal.h"

void
eu_search_v2(struct eu_req *req)
{
    eu_req_reply_json(req, 200,
                      json_pack("{s:[], s:[], s:[]}", "accounts", "statuses", "hashtags"));
}
