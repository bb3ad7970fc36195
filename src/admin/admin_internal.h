/*
 * Shared inside src/admin/: the JSON form of a tenant, and the background
 * removal of a deleted tenant's rows.
 */
#ifndef EUNHA_ADMIN_INTERNAL_H
#define EUNHA_ADMIN_INTERNAL_H

#include <stdbool.h>

struct eu_app;
struct eu_registry;
struct eu_tenant;
struct json_t;

/* Returns a new JSON object (caller owns the reference) describing t; with
 * pool figures when with_pool is set. */
struct json_t *eu_admin_tenant_json(struct eu_registry *reg, const struct eu_tenant *t,
                                    bool with_pool);

/*
 * Removes t's rows from its placement in the background (a dedicated
 * placement's database is dropped instead), then its control row, then
 * the tenant from the registry. t must be in state EU_TENANT_DELETING;
 * a second call for a tenant already being purged does nothing. Failures
 * are retried after a pause, so a PostgreSQL restart delays it only.
 */
void eu_admin_purge_start(struct eu_app *app, struct eu_tenant *t);
/* {"rows_deleted", "tables_left"} of t's purge, a new reference, or NULL
 * when none runs in this process. */
struct json_t *eu_admin_purge_json(const struct eu_tenant *t);

#endif
