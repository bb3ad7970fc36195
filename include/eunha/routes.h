/*
 * The process's route table (src/http/routes.c): every route of the public
 * and admin listeners in one place.
 */
#ifndef EUNHA_ROUTES_H
#define EUNHA_ROUTES_H

#include <stddef.h>

#include "eunha/router.h"

extern const struct eu_route eu_routes[];
extern const size_t eu_routes_count;

#endif
