/*
 * Request parameters as Mastodon clients send them: in the query string, as
 * an urlencoded or multipart form, or as JSON, often mixed. They are read
 * once into one JSON object, query first and body over it. Form keys use
 * Rails' bracket syntax: "a[]" appends to an array, "a[b]" nests, so
 * "poll[options][]" and {"poll": {"options": [...]}} read the same.
 * Form and query values are strings; JSON values keep their types, so use
 * the eu_param_* readers, which accept both.
 */
#ifndef EUNHA_PARAMS_H
#define EUNHA_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

struct eu_req;
struct eu_error;
struct json_t;

/*
 * Returns the merged parameters, parsed on first call and owned by the
 * request (never NULL on success). NULL with err set (400/415/422) when the
 * body is malformed, or 400 when the query and body together pass
 * EU_PARAMS_MAX_VALUES or one object or array passes EU_PARAMS_MAX_ENTRIES
 * (http.h). A multipart file part becomes an object
 * {"filename", "content_type", "data"} where data is a binary-safe string
 * (read it with json_string_length).
 */
struct json_t *eu_req_params(struct eu_req *req, struct eu_error *err);

/* A string parameter (numbers and booleans are given as text); NULL when
 * absent or null. Borrowed from params. */
const char *eu_param_str(struct json_t *params, const char *key);
/* 0 when absent, 1 when set (*out filled), -1 when not a boolean. Accepts
 * true/false, "true"/"false", "1"/"0", "on"/"off". */
int eu_param_bool(struct json_t *params, const char *key, bool *out);
/* 0 when absent, 1 when set, -1 when not an integer. A number past long
 * long's range reads as LLONG_MIN or LLONG_MAX (as Mastodon clamps a huge
 * limit), so callers bound what they read before it reaches SQL. */
int eu_param_int(struct json_t *params, const char *key, long long *out);
/* An array parameter: key as a JSON array, or "key[]" from a form, or a
 * single value wrapped. Returns a new reference (caller decrefs), or NULL
 * when absent. */
struct json_t *eu_param_array(struct json_t *params, const char *key);
/* A nested object parameter ("source" for source[privacy]); borrowed. */
struct json_t *eu_param_object(struct json_t *params, const char *key);

/*
 * Parses an urlencoded string into obj with the bracket rules ('+' is a
 * space); a malformed key is dropped. Adds the fields read to *nvalues, so
 * a query and a body can share one count. Returns 0, or -1 with err set
 * (400) once *nvalues passes EU_PARAMS_MAX_VALUES or an object or array
 * would pass EU_PARAMS_MAX_ENTRIES; obj then holds what was read before.
 * Exposed for tests.
 */
int eu_params_parse_urlencoded(struct json_t *obj, const char *s, size_t len, size_t *nvalues,
                               struct eu_error *err);
/* Parses a multipart/form-data body into obj, the boundary taken from ctype
 * (the Content-Type value), with the same bracket rules and caps. Exposed
 * for tests and fuzzing. Returns 0; -1 when malformed; -2 with err set
 * (400) when past a cap. */
int eu_params_parse_multipart(struct json_t *obj, const char *ctype, const char *body, size_t len,
                              size_t *nvalues, struct eu_error *err);

#endif
