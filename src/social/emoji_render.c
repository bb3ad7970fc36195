/*
 * Mastodon's CustomEmoji entity, from the rows the SQL side gives: a JSON
 * array of objects as eunha_emojis_in() (tenant migration 0054) and the
 * custom emoji statements build them (shortcode, image, static_image,
 * visible_in_picker, category). One renderer, so a status's emojis, an
 * account's and /api/v1/custom_emojis cannot disagree on the shape.
 */
#include "eunha/entities.h"

#include <jansson.h>
#include <stdlib.h>

#include "eunha/http.h"

/* The URL of a stored image column: a local emoji's store key as the
 * store's URL, a remote one's URL as its server gave it. */
static json_t *
image_url(struct eu_req *req, json_t *stored)
{
    const char *s = json_string_value(stored);
    if (!s || !*s)
        return json_null();
    char *url = eu_profile_image_url(req->app, eu_req_base_url(req), s);
    json_t *v = json_string(url);
    free(url);
    return v;
}

json_t *
eu_custom_emoji_json(struct eu_req *req, json_t *row)
{
    json_t *category = json_object_get(row, "category");
    return json_pack("{s:O, s:o, s:o, s:b, s:O}", "shortcode", json_object_get(row, "shortcode"),
                     "url", image_url(req, json_object_get(row, "image")), "static_url",
                     image_url(req, json_object_get(row, "static_image")), "visible_in_picker",
                     json_is_true(json_object_get(row, "visible_in_picker")), "category",
                     category ? category : json_null());
}

json_t *
eu_custom_emojis_json(struct eu_req *req, const char *rows_text)
{
    json_t *out = json_array();
    if (!rows_text)
        return out;
    json_t *rows = json_loads(rows_text, 0, NULL);
    size_t i;
    json_t *row;
    if (json_is_array(rows)) {
        json_array_foreach(rows, i, row)
        {
            if (json_is_string(json_object_get(row, "shortcode")))
                json_array_append_new(out, eu_custom_emoji_json(req, row));
        }
    }
    json_decref(rows);
    return out;
}
