/*
 * Reading request parameters into one JSON object (see params.h). The
 * bracket rules follow Rack's nested query parser closely enough for what
 * Mastodon clients send; keys nest at most 8 deep. How many values one
 * request may carry is capped (http.h) while reading, so a body of tiny
 * fields costs at most that many jansson values on the loop thread.
 */
#include "eunha/params.h"

#include <event2/http.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/arena.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/mem.h"

#define MAX_KEY_DEPTH 8

static char *
decode(const char *s, size_t n, size_t *outlen)
{
    char *tmp = eu_xstrndup(s, n);
    char *d = evhttp_uridecode(tmp, 1, outlen);
    free(tmp);
    return d; /* NULL on malformed escapes */
}

/* Whether obj may take one more member named key. */
static bool
has_room(json_t *obj, const char *key)
{
    return json_object_size(obj) < EU_PARAMS_MAX_ENTRIES || json_object_get(obj, key);
}

/* Whether obj holds a value at the key path parts[0..n-1] (object keys;
 * an "[]" part stops the walk: an array always takes one more). */
static bool
has_path(json_t *obj, char *const *parts, int n)
{
    for (int i = 0; i < n; i++) {
        if (parts[i][0] == '\0' || !json_is_object(obj))
            return false;
        obj = json_object_get(obj, parts[i]);
        if (!obj)
            return false;
    }
    return true;
}

/* Sets value at the bracketed key inside obj. Steals value. Returns 0; -1
 * for a malformed key, which callers drop; -2 with err set (400) when an
 * object or array would pass EU_PARAMS_MAX_ENTRIES. */
static int
set_nested(json_t *obj, const char *key, json_t *value, struct eu_error *err)
{
    const char *p = strchr(key, '[');
    char *parts[MAX_KEY_DEPTH + 1];
    int n = 0;
    size_t headlen = p ? (size_t)(p - key) : strlen(key);
    if (headlen == 0) {
        json_decref(value);
        return -1;
    }
    parts[n++] = eu_xstrndup(key, headlen);
    while (p && *p == '[') {
        const char *close = strchr(p, ']');
        if (!close || n >= MAX_KEY_DEPTH) {
            for (int i = 0; i < n; i++)
                free(parts[i]);
            json_decref(value);
            return -1;
        }
        parts[n++] = eu_xstrndup(p + 1, (size_t)(close - p - 1));
        p = close + 1;
    }
    json_t *cur = obj;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        bool last = i == n - 1;
        bool next_is_append = !last && parts[i + 1][0] == '\0';
        if (parts[i][0] == '\0' && !last) {
            /* "a[][k]=": an array of objects, as Rack reads it: into the
             * last object while it lacks the rest of the key, else into a
             * new one ("a[][id]=1&a[][d]=x&a[][id]=2" is two objects). */
            json_t *tail =
                json_array_size(cur) ? json_array_get(cur, json_array_size(cur) - 1) : NULL;
            if (!json_is_array(cur) || parts[i + 1][0] == '\0') {
                rc = -1;
                break;
            }
            if (!json_is_object(tail) || has_path(tail, parts + i + 1, n - i - 1)) {
                if (json_array_size(cur) >= EU_PARAMS_MAX_ENTRIES) {
                    rc = -2;
                    break;
                }
                tail = json_object();
                json_array_append_new(cur, tail);
            }
            cur = tail;
            continue;
        }
        if (parts[i][0] == '\0') {
            /* "[]" at the end: append. */
            if (!json_is_array(cur)) {
                rc = -1;
                break;
            }
            if (json_array_size(cur) >= EU_PARAMS_MAX_ENTRIES) {
                rc = -2;
                break;
            }
            json_array_append(cur, value);
            break;
        }
        if (!json_is_object(cur)) {
            rc = -1;
            break;
        }
        if (!has_room(cur, parts[i])) {
            rc = -2;
            break;
        }
        if (last) {
            json_object_set(cur, parts[i], value);
            break;
        }
        json_t *child = json_object_get(cur, parts[i]);
        bool made = false;
        if (next_is_append) {
            if (!json_is_array(child)) {
                child = json_array();
                made = true;
            }
        } else if (!json_is_object(child)) {
            child = json_object();
            made = true;
        }
        /* jansson refuses a key that is not UTF-8 and frees child then:
         * the parameter is dropped, as a bad value's would be. */
        if (made && json_object_set_new(cur, parts[i], child) < 0) {
            rc = -1;
            break;
        }
        cur = child;
    }
    if (rc == -2)
        eu_error_set(err, 400, "Too many parameters in '%s' (at most %d)", parts[0],
                     EU_PARAMS_MAX_ENTRIES);
    json_decref(value);
    for (int i = 0; i < n; i++)
        free(parts[i]);
    return rc;
}

/* Counts one more value; -1 with err set once there are too many. */
static int
count_value(size_t *nvalues, struct eu_error *err)
{
    if (++*nvalues <= EU_PARAMS_MAX_VALUES)
        return 0;
    eu_error_set(err, 400, "Too many parameters (at most %d)", EU_PARAMS_MAX_VALUES);
    return -1;
}

int
eu_params_parse_urlencoded(json_t *obj, const char *s, size_t len, size_t *nvalues,
                           struct eu_error *err)
{
    const char *end = s + len;
    while (s < end) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        const char *pe = amp ? amp : end;
        const char *eq = memchr(s, '=', (size_t)(pe - s));
        if (pe > s) {
            if (count_value(nvalues, err) < 0)
                return -1;
            size_t klen, vlen;
            char *k = decode(s, (size_t)((eq ? eq : pe) - s), &klen);
            char *v = eq ? decode(eq + 1, (size_t)(pe - eq - 1), &vlen) : eu_xstrdup("");
            if (!k || !v) {
                free(k);
                free(v);
                eu_error_set(err, 400, "Malformed form parameters");
                return -1;
            }
            json_t *jv = json_string(v);
            if (!jv)
                jv = json_string(""); /* not UTF-8: an empty value, like a bad escape */
            int rc = 0;
            if (*k)
                rc = set_nested(obj, k, jv, err);
            else
                json_decref(jv);
            free(k);
            free(v);
            if (rc == -2)
                return -1;
        }
        s = pe + 1;
    }
    return 0;
}

static const char *
memmem_str(const char *hay, size_t haylen, const char *needle, size_t nlen)
{
    return memmem(hay, haylen, needle, nlen);
}

/* Reads one header's parameter (name="value") from a part's headers. */
static char *
header_param(const char *hdrs, size_t len, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "%s=\"", name);
    const char *p = memmem_str(hdrs, len, pat, strlen(pat));
    if (!p)
        return NULL;
    p += strlen(pat);
    const char *q = memchr(p, '"', (size_t)(hdrs + len - p));
    return q ? eu_xstrndup(p, (size_t)(q - p)) : NULL;
}

int
eu_params_parse_multipart(json_t *obj, const char *ctype, const char *body, size_t len,
                          size_t *nvalues, struct eu_error *err)
{
    const char *b = strcasestr(ctype, "boundary=");
    if (!b)
        return -1;
    b += 9;
    char boundary[200];
    size_t bl = strcspn(b, "; ");
    if (*b == '"') {
        b++;
        bl = strcspn(b, "\"");
    }
    if (bl == 0 || bl + 4 >= sizeof(boundary))
        return -1;
    boundary[0] = '-';
    boundary[1] = '-';
    memcpy(boundary + 2, b, bl);
    boundary[bl + 2] = '\0';
    size_t blen = bl + 2;
    const char *end = body + len;
    const char *p = memmem_str(body, len, boundary, blen);
    while (p) {
        p += blen;
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return 0; /* closing boundary */
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
            p += 2;
        const char *hend = memmem_str(p, (size_t)(end - p), "\r\n\r\n", 4);
        if (!hend)
            return -1;
        const char *data = hend + 4;
        const char *next = memmem_str(data, (size_t)(end - data), boundary, blen);
        if (!next)
            return -1;
        if (count_value(nvalues, err) < 0)
            return -2;
        size_t dlen = (size_t)(next - data);
        if (dlen >= 2 && data[dlen - 2] == '\r' && data[dlen - 1] == '\n')
            dlen -= 2;
        size_t hlen = (size_t)(hend - p);
        char *name = header_param(p, hlen, "name");
        char *filename = header_param(p, hlen, "filename");
        int rc = 0;
        if (name) {
            json_t *v;
            if (filename) {
                const char *ct = memmem_str(p, hlen, "Content-Type:", 13);
                if (!ct)
                    ct = memmem_str(p, hlen, "content-type:", 13);
                char *ctv = NULL;
                if (ct) {
                    ct += 13;
                    while (*ct == ' ')
                        ct++;
                    ctv = eu_xstrndup(ct, strcspn(ct, "\r\n"));
                }
                v = json_pack("{s:s, s:s, s:o}", "filename", filename, "content_type",
                              ctv ? ctv : "application/octet-stream", "data",
                              json_stringn_nocheck(data, dlen));
                free(ctv);
            } else {
                v = json_stringn(data, dlen);
                if (!v)
                    v = json_string("");
            }
            rc = set_nested(obj, name, v, err);
        }
        free(name);
        free(filename);
        if (rc == -2)
            return -2;
        p = next;
    }
    return -1;
}

static void
decref_json(void *p)
{
    json_decref(p);
}

json_t *
eu_req_params(struct eu_req *req, struct eu_error *err)
{
    if (req->params_json)
        return req->params_json;
    json_t *obj = json_object();
    size_t nvalues = 0; /* the query's and the body's together */
    const char *q = eu_req_query_string(req);
    if (q && eu_params_parse_urlencoded(obj, q, strlen(q), &nvalues, err) < 0) {
        json_decref(obj);
        return NULL;
    }
    size_t len;
    const char *body = eu_req_body(req, &len);
    const char *ctype = eu_req_header(req, "Content-Type");
    if (len > 0) {
        if (!ctype || strncasecmp(ctype, "application/x-www-form-urlencoded", 33) == 0) {
            if (eu_params_parse_urlencoded(obj, body, len, &nvalues, err) < 0) {
                json_decref(obj);
                return NULL;
            }
        } else if (strncasecmp(ctype, "application/json", 16) == 0) {
            /* Measured on its own in eu_req_json; only the merge is left. */
            json_t *j = eu_req_json(req, err);
            if (!j) {
                json_decref(obj);
                return NULL;
            }
            json_object_update(obj, j);
            if (json_object_size(obj) > EU_PARAMS_MAX_ENTRIES) {
                json_decref(obj);
                eu_error_set(err, 400, "Too many parameters (at most %d)", EU_PARAMS_MAX_ENTRIES);
                return NULL;
            }
        } else if (strncasecmp(ctype, "multipart/form-data", 19) == 0) {
            int rc = eu_params_parse_multipart(obj, ctype, body, len, &nvalues, err);
            if (rc < 0) {
                json_decref(obj);
                if (rc == -1)
                    eu_error_set(err, 400, "Malformed multipart body");
                return NULL;
            }
        } else {
            json_decref(obj);
            eu_error_set(err, 415, "Unsupported content type '%s'", ctype);
            return NULL;
        }
    }
    eu_arena_on_free(req->arena, decref_json, obj);
    req->params_json = obj;
    return obj;
}

const char *
eu_param_str(json_t *params, const char *key)
{
    json_t *v = json_object_get(params, key);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_true(v))
        return "true";
    if (json_is_false(v))
        return "false";
    if (json_is_integer(v)) {
        /* Keep the text form on the object so the pointer stays valid. */
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        json_object_set_new(params, key, json_string(buf));
        return json_string_value(json_object_get(params, key));
    }
    return NULL;
}

int
eu_param_bool(json_t *params, const char *key, bool *out)
{
    json_t *v = json_object_get(params, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 1;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v) != 0;
        return 1;
    }
    const char *s = json_string_value(v);
    if (!s)
        return -1;
    if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "on")) {
        *out = true;
        return 1;
    }
    if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "off") || !*s) {
        *out = false;
        return 1;
    }
    return -1;
}

int
eu_param_int(json_t *params, const char *key, long long *out)
{
    json_t *v = json_object_get(params, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 1;
    }
    const char *s = json_string_value(v);
    if (!s || !*s)
        return s ? 0 : -1;
    char *end;
    long long n = strtoll(s, &end, 10);
    if (*end)
        return -1;
    *out = n;
    return 1;
}

json_t *
eu_param_array(json_t *params, const char *key)
{
    json_t *v = json_object_get(params, key);
    if (!v || json_is_null(v))
        return NULL;
    if (json_is_array(v))
        return json_incref(v);
    if (json_is_object(v)) {
        /* "a[0]=x&a[1]=y": an object keyed by index, in key order. */
        json_t *arr = json_array();
        const char *k;
        json_t *item;
        json_object_foreach(v, k, item)
        {
            json_array_append(arr, item);
        }
        return arr;
    }
    json_t *arr = json_array();
    json_array_append(arr, v);
    return arr;
}

json_t *
eu_param_object(json_t *params, const char *key)
{
    json_t *v = json_object_get(params, key);
    return json_is_object(v) ? v : NULL;
}
