/*
 * Direct-message conversations (being written).
 */
#include <jansson.h>

#include "eunha/http.h"
#include "social_internal.h"

void
eu_conversations_index(struct eu_req *req)
{
    eu_req_reply_json(req, 200, json_array());
}

void
eu_conversations_destroy(struct eu_req *req)
{
    eu_req_reply_json(req, 200, json_object());
}

void
eu_conversations_read(struct eu_req *req)
{
    eu_req_reply_error(req, 404, "Record not found");
}
