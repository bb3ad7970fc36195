/*
 * Shared inside src/admin/: the JSON form of a tenant.
 */
#ifndef EUNHA_ADMIN_INTERNAL_H
#define EUNHA_ADMIN_INTERNAL_H

#include <stdbool.h>

struct eu_registry;
struct eu_tenant;
struct json_t;

/* Returns a new JSON object (caller owns the reference) describing t; with
 * pool figures when with_pool is set. */
struct json_t *eu_admin_tenant_json(struct eu_registry *reg, const struct eu_tenant *t,
                                    bool with_pool);

#endif
