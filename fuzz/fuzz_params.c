/*
 * Fuzz target: request parameters (src/api/params.c, with eu_req_json() in
 * src/http/server.c). The input is a Content-Type line, then the body,
 * given to eu_req_params() as a request would carry them; the query-string
 * reader sees the body too, since clients put the same keys there. The
 * eu_param_* readers then run over every key, as handlers do.
 */
#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/app.h"
#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"

static void
read_all(json_t *params)
{
    const char *k;
    json_t *v;
    void *tmp;
    /* eu_param_str() may replace the value it reads (an integer becomes its
     * text), so walk with the _safe iterator. */
    json_object_foreach_safe(params, tmp, k, v)
    {
        bool b;
        long long n;
        eu_param_bool(params, k, &b);
        eu_param_int(params, k, &n);
        json_t *arr = eu_param_array(params, k);
        json_decref(arr);
        eu_param_object(params, k);
        eu_param_str(params, k);
    }
}

/* eu_req_params() over a request carrying body and Content-Type ctype, as
 * a handler calls it; the merged parameters are then read back. */
static void
read_request(const char *ctype, const char *body, size_t len)
{
    struct eu_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.json_max_depth = 32;
    struct eu_app app;
    memset(&app, 0, sizeof(app));
    app.cfg = &cfg;
    struct eu_req req;
    memset(&req, 0, sizeof(req));
    req.app = &app;
    req.arena = eu_arena_new();
    req.ev = evhttp_request_new(NULL, NULL);
    if (*ctype)
        evhttp_add_header(evhttp_request_get_input_headers(req.ev), "Content-Type", ctype);
    req.body = body;
    req.body_len = len;
    struct eu_error err;
    json_t *params = eu_req_params(&req, &err);
    if (params)
        read_all(params);
    evhttp_request_free(req.ev);
    eu_arena_free(req.arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *nl = memchr(in, '\n', size);
    if (!nl)
        return 0;
    /* Header values never hold a NUL; bodies may. The body ends in NUL as
     * eu_req_body()'s copy does, and nothing past len may be read. */
    char *ctype = strndup(in, (size_t)(nl - in));
    size_t len = size - (size_t)(nl + 1 - in);
    char *body = malloc(len + 1);
    memcpy(body, nl + 1, len);
    body[len] = '\0';

    /* The body as a query string too: clients put the same keys there. */
    json_t *obj = json_object();
    size_t nvalues = 0;
    struct eu_error err;
    eu_params_parse_urlencoded(obj, body, len, &nvalues, &err);
    read_all(obj);
    json_decref(obj);
    read_request(ctype, body, len);
    free(body);
    free(ctype);
    return 0;
}
