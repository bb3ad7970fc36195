/*
 * The process's routes (src/app/routes.c): the list of every route table,
 * one per handler file, that the router is built from at start. The tables
 * themselves live beside their handlers and are declared in their rooms'
 * headers (api.h, admin.h, ap.h, ...).
 */
#ifndef EUNHA_ROUTES_H
#define EUNHA_ROUTES_H

#include <stddef.h>

#include "eunha/router.h"

/* Every route table of the process, NULL-terminated; each table ends with
 * an all-zero entry. */
extern const struct eu_route *const eu_route_tables[];

/*
 * Builds the process's router from eu_route_tables. Returns NULL with a
 * message in err when a table is malformed or two routes collide. The
 * caller frees the router with eu_router_free(); the tables are static.
 */
struct eu_router *eu_routes_router_new(char *err, size_t errlen);

#endif
