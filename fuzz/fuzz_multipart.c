/*
 * Fuzz target: the multipart/form-data reader (src/api/params.c), which
 * media uploads and profile edits go through. The input is the
 * Content-Type value (where the boundary comes from), a newline, then the
 * body. The parsed parameters are read back with the eu_param_* readers,
 * as the handlers read them.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/error.h"
#include "eunha/params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *nl = memchr(in, '\n', size);
    if (!nl)
        return 0;
    char *ctype = strndup(in, (size_t)(nl - in));
    size_t len = size - (size_t)(nl + 1 - in);
    /* eu_req_body() ends its copy with a NUL; nothing may read past len. */
    char *body = malloc(len + 1);
    memcpy(body, nl + 1, len);
    body[len] = '\0';

    json_t *obj = json_object();
    size_t nvalues = 0;
    struct eu_error err;
    if (eu_params_parse_multipart(obj, ctype, body, len, &nvalues, &err) == 0) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(obj, tmp, k, v)
        {
            bool b;
            long long n;
            eu_param_bool(obj, k, &b);
            eu_param_int(obj, k, &n);
            json_decref(eu_param_array(obj, k));
            eu_param_str(obj, k);
        }
    }
    json_decref(obj);
    free(body);
    free(ctype);
    return 0;
}
