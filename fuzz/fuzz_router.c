/*
 * Fuzz target: the router's path handling (src/http/router.c), matching and
 * the flags of a path, over the process's real route table, built the way
 * src/app/app.c builds it. The first byte picks the method and the size of
 * the Allow buffer (a short one must truncate cleanly); the rest is the raw
 * path as evhttp hands it over, percent escapes and all.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/router.h"
#include "eunha/routes.h"

static struct eu_router *router;

static struct eu_router *
build_router(void)
{
    char err[256];
    struct eu_router *r = eu_routes_router_new(err, sizeof(err));
    if (!r)
        abort();
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!router)
        router = build_router();
    unsigned method = 1u << (data[0] % 7);
    size_t allowlen = (size_t)(data[0] >> 3) + 1; /* 1..32 */
    char *path = strndup((const char *)data + 1, size - 1);
    struct eu_arena *arena = eu_arena_new();
    const struct eu_route *route = NULL;
    struct eu_route_params params;
    char allow[32];
    memset(allow, 'x', sizeof(allow));
    enum eu_route_match m =
        eu_router_match(router, method, path, arena, &route, &params, allow, allowlen);
    if (m == EU_ROUTE_FOUND) {
        if (!route || !(route->methods & method) || params.n > EU_ROUTE_MAX_PARAMS)
            abort();
        for (size_t i = 0; i < params.n; i++) {
            /* Every value must be a string of its own the handler can read. */
            if (eu_route_params_get(&params, params.p[i].name) == NULL)
                abort();
            (void)strlen(params.p[i].value);
        }
    } else if (m == EU_ROUTE_METHOD_NOT_ALLOWED) {
        if (memchr(allow, '\0', allowlen) == NULL)
            abort();
    }
    /* Walked for ASan's sake: the server asks it of every path before a
     * route is matched, and of every path no route takes. */
    (void)eu_router_path_flags(router, path);
    eu_arena_free(arena);
    free(path);
    return 0;
}
