/*
 * Route table of this resource group (filled in as the endpoints land).
 */
#include "eunha/routes.h"

const struct eu_route eu_oauth_routes[] = {
    {0},
};
