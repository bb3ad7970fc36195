/*
 * Route table of this resource group (filled in as the endpoints land).
 */
#include "eunha/routes.h"

const struct eu_route eu_statuses_routes[] = {
    {0},
};
