/*
 * Domain blocks: an account's own (/api/v1/domain_blocks, src/api/
 * domain_blocks.c) and its tenant's (the operator's, /admin/v1/tenants/
 * {domain}/domain_blocks, src/admin/domain_blocks.c). Both are rows of the
 * tenant (tenant migration 0029); what they change is applied where the
 * rows are read: the timeline and render statements, notify.c, the inbox
 * and authorized fetch (src/ap/authfetch.c) and delivery (src/ap/
 * deliver.c). The last two ask EU_DOMAIN_REFUSED below, which also keeps
 * to the tenant's domain allows (tenant migration 0055, src/api/
 * staff_blocks.c) in limited-federation mode.
 */
#ifndef EUNHA_DOMAINBLOCK_H
#define EUNHA_DOMAINBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/sql.h"

struct eu_req;

/*
 * An SQL condition: does the tenant ($1) refuse to federate with host (an
 * SQL expression of a host as eu_fetch_host_of() writes it)? When it
 * suspended the host or a domain above it, or when its 'instance' setting
 * has limited_federation_mode true and it allowed neither. One probe of a
 * unique index per label. Pasted into statements rather than an SQL
 * function: PostgreSQL inlines no scalar function with a subquery, and an
 * opaque call hides the probes from the plan.
 */
#define EU_DOMAIN_REFUSED(host)                                                                    \
    "(EXISTS (SELECT 1 FROM domain_blocks rb WHERE rb.tenant_id = $1"                              \
    " AND rb.domain = ANY(eunha_domain_suffixes(" host ")) AND rb.severity = 'suspend')"           \
    " OR (EXISTS (SELECT 1 FROM settings rs WHERE rs.tenant_id = $1 AND rs.key = 'instance'"       \
    " AND rs.value -> 'limited_federation_mode' = 'true'::jsonb)"                                  \
    " AND NOT EXISTS (SELECT 1 FROM domain_allows ra WHERE ra.tenant_id = $1"                      \
    " AND ra.domain = ANY(eunha_domain_suffixes(" host ")))))"

/*
 * What EU_DOMAIN_REFUSED answers may be kept for a few seconds (delivery
 * keeps it per host, src/ap/deliver.c) while this number stays the same:
 * it goes up when this process has changed a tenant's domain blocks or
 * domain allows (eu_domain_policy_changed(), once the change is
 * committed). Other processes' changes wait out the keeping. Event loop
 * only.
 */
unsigned eu_domain_policy_generation(void);
void eu_domain_policy_changed(void);

/* Longest domain kept: a DNS name and a port. */
#define EU_DOMAIN_BLOCK_MAX 260

/*
 * Writes the form a domain block is kept under into out (outlen at least
 * EU_DOMAIN_BLOCK_MAX + 1): surrounding blanks and one trailing dot
 * dropped, lower-cased, with its ":PORT" when one is named (remote
 * accounts' domains carry the port of a non-default one, as
 * eu_fetch_host_of() writes hosts). The name must be a DNS name of
 * [a-z0-9-_] labels or an IPv4 address; internationalised names must come
 * as punycode ("xn--..."). Returns 0, or -1 when in is no such domain.
 */
int eu_domain_block_normalize(const char *in, char *out, size_t outlen);

/* User-level blocks (src/api/domain_blocks.c, routed by its table
 * eu_domain_blocks_routes): GET, POST and DELETE /api/v1/domain_blocks as
 * Mastodon's. */
void eu_domain_blocks_index(struct eu_req *req);
void eu_domain_blocks_create(struct eu_req *req);
void eu_domain_blocks_destroy(struct eu_req *req);

/*
 * An account's block of a domain, for whoever makes one (the API above,
 * the domain-blocks import of src/api/takeout_import.c): the statement
 * (params: the account, the domain as eu_domain_block_normalize() writes
 * it) makes the block and ends, in the same statement, what Mastodon's
 * AfterBlockDomainFromAccountService ends; eu_domain_blocks_after_create()
 * then tells the servers of the ended follows (Undo, Reject) and has the
 * account's home feed remade. One path, so an import blocks exactly as
 * the API does.
 */
struct eu_app;
struct eu_tenant;
struct pg_result;
extern const struct eu_sql *const eu_domain_blocks_create_sql;
void eu_domain_blocks_after_create(struct eu_app *app, struct eu_tenant *t, int64_t account,
                                   const struct pg_result *res);

/* Their statements, and those of the tenant's blocks below, for the
 * registry. */
extern const struct eu_sql eu_domain_blocks_sql[];
extern const struct eu_sql eu_tenant_domain_blocks_sql[];
extern const struct eu_sql eu_admin_domain_blocks_sql[];

/*
 * A tenant's blocks (src/social/domain_blocks.c), shared by its staff's
 * /api/v1/admin/domain_blocks and the operator's /admin/v1/tenants/
 * {domain}/domain_blocks. Each answers the request itself, with Mastodon's
 * Admin::DomainBlock entity (a list, one, {} for a delete) or its error.
 * moderator is the staff account (decimal text) whose audit row the change
 * writes in admin_action_logs, or NULL for the operator (no row).
 */
struct json_t;
struct eu_page;

/* What a create or update says. Strings are borrowed from the request;
 * booleans are "true"/"false". NULL members of an update keep what the
 * block has; a create gets Mastodon's defaults for them. */
struct eu_domain_block_input {
    const char *domain; /* normalised (create only) */
    const char *severity;
    const char *reject_media, *reject_reports, *obfuscate;
    const char *private_comment, *public_comment; /* "" clears one (update) */
};

/* Reads a create's (creating) or update's parameters from params (strings
 * in req's arena); -1 with err's 422 for a bad one, the caller answers. */
struct eu_error;
int eu_domain_block_input_read(struct eu_req *req, struct json_t *params, bool creating,
                               struct eu_domain_block_input *in, struct eu_error *err);
/* The page of blocks, newest first; with a Link header when link. */
void eu_domain_block_list(struct eu_req *req, const struct eu_page *page, bool link);
/* id: a valid decimal id (eu_req_id_param()); 404 when there is none. */
void eu_domain_block_show(struct eu_req *req, const char *id);
/* 422 with the block in existing_domain_block when one on the domain, or
 * on a domain above it that the new one is not stricter than, exists. */
void eu_domain_block_create(struct eu_req *req, const struct eu_domain_block_input *in,
                            const char *moderator);
void eu_domain_block_update(struct eu_req *req, const char *id,
                            const struct eu_domain_block_input *in, const char *moderator);
void eu_domain_block_delete(struct eu_req *req, const char *id, const char *moderator);

/* For the moderation pages (src/api/web_staff_blocks.c): the list, a create
 * and a lift ending in cb instead of an answer. status is 200 (entities:
 * the array of blocks, the block made, or {}), 404, or 422 (entities:
 * {"error": Mastodon's text}); the request's arena frees entities. */
typedef void (*eu_domain_block_cb)(struct eu_req *req, int status, struct json_t *entities,
                                   void *arg);
void eu_domain_block_list_to(struct eu_req *req, const struct eu_page *page, eu_domain_block_cb cb,
                             void *arg);
void eu_domain_block_create_to(struct eu_req *req, const struct eu_domain_block_input *in,
                               const char *moderator, eu_domain_block_cb cb, void *arg);
void eu_domain_block_delete_to(struct eu_req *req, const char *id, const char *moderator,
                               eu_domain_block_cb cb, void *arg);

/* The operator's API (src/admin/domain_blocks.c, eu_admin_domain_blocks_routes):
 * domain blocks and the delivery refusals deliver.c keeps. */
void eu_admin_domain_blocks_list(struct eu_req *req);
void eu_admin_domain_blocks_create(struct eu_req *req);
void eu_admin_domain_blocks_show(struct eu_req *req);
void eu_admin_domain_blocks_update(struct eu_req *req);
void eu_admin_domain_blocks_delete(struct eu_req *req);
void eu_admin_delivery_refusals_list(struct eu_req *req);
void eu_admin_delivery_refusals_delete(struct eu_req *req);

#endif
