/*
 * Shared inside src/admin/: the JSON form of a tenant, making a tenant and
 * its placement (tenants.c, also used by import and move in lifecycle.c),
 * and the background removal of a deleted tenant's rows.
 */
#ifndef EUNHA_ADMIN_INTERNAL_H
#define EUNHA_ADMIN_INTERNAL_H

#include <stdbool.h>

struct eu_app;
struct eu_arena;
struct eu_registry;
struct eu_req;
struct eu_tenant;
struct json_t;

/* Returns a new JSON object (caller owns the reference) describing t; with
 * pool figures when with_pool is set. */
struct json_t *eu_admin_tenant_json(struct eu_registry *reg, const struct eu_tenant *t,
                                    bool with_pool);

/* Double-quotes an identifier for SQL. Owned by the arena. */
const char *eu_admin_quote_ident(struct eu_arena *a, const char *s);

/* Returns a lower-cased copy of in, owned by the request's arena, when it is
 * a valid host name; otherwise replies 422 and returns NULL. */
const char *eu_admin_domain_check(struct eu_req *req, const char *in);

/* Returns 0 when t may be changed now; when it is being moved or imported
 * replies 409 (with Retry-After) and returns -1: its rows are being copied,
 * and a write meanwhile would be lost. */
int eu_admin_tenant_check_idle(struct eu_req *req, const struct eu_tenant *t);

/* The tenant named by :domain for an admin write to its rows, referenced by
 * the request (req->tenant, released with it); NULL after replying 404 (no
 * such tenant, or one being deleted) or 409 (being moved). */
struct eu_tenant *eu_admin_tenant_writable(struct eu_req *req);

/* The /metrics lines of tenant moves (src/admin/lifecycle_move.c), as a
 * string the caller frees. */
char *eu_admin_move_metrics(void);

/* t is the new tenant, in the registry (borrowed). */
typedef void (*eu_admin_tenant_made_cb)(struct eu_req *req, struct eu_tenant *t, void *arg);
/*
 * Makes tenant domain (normalised, not yet in the registry) with title in
 * placement: NULL for the pooled placement with the fewest tenants,
 * "dedicated" for a new database copied from the template, else a
 * placement's name. Adds it to the registry and calls done later. On
 * failure it replies to req itself (409 for a taken domain, 422 for an
 * unknown or full placement, 5xx) and done is never called. The strings must
 * live as long as req.
 */
void eu_admin_tenant_make(struct eu_req *req, const char *domain, const char *title,
                          const char *placement, eu_admin_tenant_made_cb done, void *arg);

/* name and database are owned by req's arena. */
typedef void (*eu_admin_placement_made_cb)(struct eu_req *req, const char *name,
                                           const char *database, void *arg);
/*
 * Makes the dedicated placement "dedicated-<domain>": its row, then its
 * database copied from the template, holding no tenant yet. Calls done
 * later; on failure replies to req itself (409 when the name is taken, 5xx)
 * and done is never called. Undo with eu_admin_placement_drop().
 */
void eu_admin_placement_make_dedicated(struct eu_req *req, const char *domain,
                                       eu_admin_placement_made_cb done, void *arg);
/* rc is 0, or -1 after the failure was logged. */
typedef void (*eu_admin_done_cb)(int rc, void *arg);
/* Drops the database of dedicated placement name, then its row if no tenant
 * is in it, and calls done (which may be NULL) later. A failure leaves an
 * empty leftover that the placements table shows. The strings are copied. */
void eu_admin_placement_drop(struct eu_app *app, const char *name, const char *database,
                             eu_admin_done_cb done, void *arg);

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

/*
 * Reads an admin list's max_id and limit (default 40, 1 to max) from req's
 * query. On a bad value replies 422 naming what the ids are ("job",
 * "report") and returns -1: the admin API refuses rather than clamps, so a
 * script's typo shows. *limit is owned by req's arena. (In jobs.c.)
 */
int eu_admin_list_page(struct eu_req *req, const char *what, long max, const char **max_id,
                       const char **limit);

#endif
