/*
 * The MediaAttachment entity as statuses carry it (status entities, edit
 * history, scheduled statuses) and as ActivityPub Notes describe it. The
 * rows come from SQL as eunha_media_json() objects, a page's worth in the one
 * render statement, so nothing here touches the database.
 */
#include "eunha/entities.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/mediastore.h"
#include "eunha/mem.h"

/* The public URL of a stored file. The local store answers base_url +
 * "/system/" + key (mediastore.h), which is also where a front proxy serves
 * the same folder from. Heap memory the caller frees. */
static char *
file_url(struct eu_app *app, const char *base_url, const char *key)
{
    if (app && app->store)
        return eu_store_url(app->store, base_url, key);
    return eu_xasprintf("%s/system/%s", base_url, key);
}

char *
eu_profile_image_url(struct eu_app *app, const char *base_url, const char *stored)
{
    if (strstr(stored, "://"))
        return eu_xstrdup(stored);
    return file_url(app, base_url, stored);
}

static json_t *
url_or_null(struct eu_app *app, const char *base_url, const char *key)
{
    if (!key || !*key)
        return json_null();
    char *u = file_url(app, base_url, key);
    json_t *v = json_string(u);
    free(u);
    return v;
}

json_t *
eu_media_attachment_json(struct eu_app *app, const char *base_url, json_t *row)
{
    const char *type = json_string_value(json_object_get(row, "type"));
    const char *state = json_string_value(json_object_get(row, "state"));
    const char *remote = json_string_value(json_object_get(row, "remote"));
    const char *file = json_string_value(json_object_get(row, "file"));
    const char *preview = json_string_value(json_object_get(row, "preview"));
    bool ready = state && strcmp(state, "ready") == 0;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(json_string_value(json_object_get(row, "id"))));
    json_object_set_new(o, "type", json_string(type ? type : "unknown"));
    if (remote && !file && (!type || strcmp(type, "unknown") == 0)) {
        /* Not something a client can show, or its domain's media are
         * rejected (migration 0033): Mastodon then has no file either, and
         * clients link to remote_url. */
        json_object_set_new(o, "url", json_null());
        json_object_set_new(o, "preview_url", json_null());
    } else if (remote && !file) {
        /* Not cached: clients load the remote server's file. */
        json_object_set_new(o, "url", json_string(remote));
        bool visual = type && (strcmp(type, "image") == 0 || strcmp(type, "gifv") == 0);
        json_object_set_new(o, "preview_url", visual ? json_string(remote) : json_null());
    } else {
        /* Mastodon: no url until processing is done, a preview once there is one. */
        json_object_set_new(o, "url", ready ? url_or_null(app, base_url, file) : json_null());
        json_object_set_new(o, "preview_url", url_or_null(app, base_url, preview));
    }
    json_object_set_new(o, "remote_url", remote ? json_string(remote) : json_null());
    json_object_set_new(o, "preview_remote_url", json_null());
    json_object_set_new(o, "text_url", json_null());
    json_t *meta = json_object_get(row, "meta");
    meta = json_is_object(meta) ? json_deep_copy(meta) : json_object();
    if (type && (strcmp(type, "image") == 0 || strcmp(type, "gifv") == 0)) {
        json_t *fx = json_object_get(row, "fx"), *fy = json_object_get(row, "fy");
        json_object_set_new(
            meta, "focus",
            json_pack("{s:f, s:f}", "x", json_number_value(fx), "y", json_number_value(fy)));
    }
    json_object_set_new(o, "meta", meta);
    const char *desc = json_string_value(json_object_get(row, "description"));
    const char *blur = json_string_value(json_object_get(row, "blurhash"));
    json_object_set_new(o, "description", desc ? json_string(desc) : json_null());
    json_object_set_new(o, "blurhash", blur ? json_string(blur) : json_null());
    return o;
}

json_t *
eu_media_attachments_json(struct eu_app *app, const char *base_url, const char *rows_text)
{
    json_t *rows = rows_text ? json_loads(rows_text, 0, NULL) : NULL;
    json_t *out = json_array(), *m;
    size_t i;
    json_array_foreach(rows, i, m)
    {
        json_array_append_new(out, eu_media_attachment_json(app, base_url, m));
    }
    json_decref(rows);
    return out;
}
